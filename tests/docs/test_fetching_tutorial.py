"""The second tutorial, end to end (REQ-DOC-002, REQ-DOC-001).

docs/tutorials/fetching-pages.md sends the calls in examples/calls/fetch-*.json and shows the
responses in examples/responses/fetch-*.json. This test sends exactly those calls to a real
``rypsok serve`` over stdio. The page is a stand-in served on 127.0.0.1
(tests/docs/fixtures/tide.html): the calls' origin is replaced by the local server's, which
the configuration lets rypsok reach (``[egress] allow``, ``[fetch] allow_http`` and ``ports``),
and replaced back in the responses shown. RYPSOK_DOCS_REGENERATE=1 rewrites the responses.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tests.docs.test_first_tutorial import EXAMPLES, FIXTURES, check_or_write
from tests.fakes.http_server import Reply, fake_http_server
from tests.support import rypsok_client, write_config

pytestmark = pytest.mark.anyio
ORIGIN = "https://en.wikipedia.org"
CALLS = ["fetch-page.json", "fetch-continue.json", "fetch-focus.json", "fetch-fragment.json"]


def localize(value: Any, old: str, new: str) -> Any:
    """``value`` with every string's ``old`` origin replaced by ``new``."""
    return json.loads(json.dumps(value).replace(old, new))


async def test_req_doc_002_fetching_tutorial_runs_end_to_end(tmp_path: Path) -> None:
    """REQ-DOC-002, REQ-DOC-001: the fetching tutorial's four calls (a first part, its
    continuation, focus and a #fragment) give the responses the tutorial shows."""
    html = (FIXTURES / "tide.html").read_bytes()
    got: dict[str, dict[str, Any]] = {}
    with fake_http_server() as server:
        server.replies["/wiki/Tide"] = Reply(
            body=html, headers=(("Content-Type", "text/html; charset=utf-8"),)
        )
        local = server.url("")
        config = write_config(
            tmp_path,
            f'[egress]\nallow = ["127.0.0.0/8"]\n'
            f"[fetch]\nallow_http = true\nports = [{server.port}]\n",
        )
        async with rypsok_client(config) as client:
            schema = next(t for t in (await client.list_tools()).tools if t.name == "web_fetch")
            for name in CALLS:
                call = json.loads((EXAMPLES / "calls" / name).read_text(encoding="utf-8"))
                assert call["tool"] == "web_fetch"
                result = await client.call_tool(
                    "web_fetch", localize(call["arguments"], ORIGIN, local)
                )
                assert result.is_error is False, result.structured_content
                assert result.structured_content is not None
                jsonschema.validate(result.structured_content, schema.output_schema)
                got[name] = localize(result.structured_content, local, ORIGIN)

    shown = {name: check_or_write(name, got[name]) for name in CALLS}
    first, more = got["fetch-page.json"], got["fetch-continue.json"]
    # The first part is cut to the budget and says where to continue...
    assert first["truncated"] is True and first["start_char"] == 0
    assert first["next_start_char"] == shown["fetch-page.json"]["next_start_char"]
    # ...and the continuation call is exactly the one the tutorial shows: it starts there.
    continue_call = json.loads((EXAMPLES / "calls" / "fetch-continue.json").read_text())
    assert continue_call["arguments"]["start_char"] == first["next_start_char"]
    assert more["start_char"] == first["next_start_char"]
    assert more["total_chars"] == first["total_chars"]
    # focus and the fragment both start the content at the section they name.
    for name in ("fetch-focus.json", "fetch-fragment.json"):
        assert got[name]["content"].lstrip("# ").startswith("Tidal constituents"), name
        assert not any(n["code"] == "focus_not_found" for n in got[name]["notices"])
    for name in CALLS:
        assert got[name]["outcome"] == shown[name]["outcome"] == "ok"
        assert got[name]["start_char"] == shown[name]["start_char"]
