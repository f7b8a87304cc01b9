"""The first tutorial, end to end (REQ-DOC-002, REQ-DOC-001).

docs/tutorials/first-search.md tells a new user to point an MCP host at ``rypsok serve`` with
no configuration, list the tools, call ``web_search`` with examples/calls/first-search.json and
``engine_status`` with examples/calls/engine-status.json, and shows the responses committed in
examples/responses/. This test does exactly that against a real ``rypsok serve`` process over
stdio, driven by the MCP SDK's client as a host would. The only difference from the tutorial:
the two general-category engines (Wikipedia and Wikidata) are pointed at simulated engines on
127.0.0.1 with ``[engines.<id>] endpoint``, so the test needs no network; they answer with the
recorded API responses in tests/docs/fixtures/.

The responses shown in the tutorial are checked for their shape (the same keys at every level,
the same types), their outcome, their notice codes and their number of results. With
RYPSOK_DOCS_REGENERATE=1 the test writes the responses it got to examples/responses/ instead.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from rypsok.config.schema import Settings
from rypsok.contract.vocabulary import Category
from rypsok.engines.catalog import resolve_engines
from rypsok.engines.registry import DRIVER_MODULES, load_driver
from tests.fakes.http_server import Reply, fake_http_server
from tests.support import ROOT, rypsok_client, write_config

pytestmark = pytest.mark.anyio
EXAMPLES = ROOT / "examples"
FIXTURES = Path(__file__).resolve().parent / "fixtures"
REGENERATE = os.environ.get("RYPSOK_DOCS_REGENERATE") == "1"
ACTIVE = {e.engine_id for e in resolve_engines(Settings()) if e.active}


def call_file(name: str) -> tuple[str, dict[str, Any]]:
    data = json.loads((EXAMPLES / "calls" / name).read_text(encoding="utf-8"))
    return data["tool"], data["arguments"]


def shape(value: Any) -> Any:
    """The structure of a JSON value: keys and types, not values; lists by their items."""
    if isinstance(value, dict):
        return {key: shape(item) for key, item in sorted(value.items())}
    if isinstance(value, list):
        shapes: list[Any] = []
        for item in value:
            if shape(item) not in shapes:
                shapes.append(shape(item))
        return sorted(shapes, key=lambda s: json.dumps(s, sort_keys=True))
    if value is None:
        return "null"
    return type(value).__name__


def check_or_write(name: str, got: dict[str, Any]) -> dict[str, Any]:
    path = EXAMPLES / "responses" / name
    if REGENERATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(got, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    shown: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    assert shape(got) == shape(shown), f"the response shape differs from {path.name}"
    return shown


async def test_req_doc_002_first_tutorial_runs_end_to_end(tmp_path: Path) -> None:
    """REQ-DOC-002, REQ-DOC-001: the first tutorial's calls against a real rypsok serve over
    stdio give the responses the tutorial shows (shape, outcome, notices, result count)."""
    with fake_http_server() as server:
        server.replies["/wp/en/api.php"] = Reply(
            body=(FIXTURES / "wikipedia-tide.json").read_bytes()
        )
        server.replies["/wd/api.php"] = Reply(body=(FIXTURES / "wikidata-tide.json").read_bytes())
        # Any other general-category engine that would run with zero configuration (none
        # today) is switched off, so the test can never reach the network.
        others = "".join(
            f"[engines.{e}]\nenabled = false\n"
            for e in DRIVER_MODULES
            if e not in ("wikipedia", "wikidata")
            and Category.GENERAL in load_driver(e).admission.categories
            and e in ACTIVE
        )
        config = write_config(
            tmp_path,
            f'[engines.wikipedia]\nendpoint = "{server.url("/wp/{language}/api.php")}"\n'
            f'[engines.wikidata]\nendpoint = "{server.url("/wd/api.php")}"\n' + others,
        )
        async with rypsok_client(config) as client:
            tools = (await client.list_tools()).tools
            search_tool, search_args = call_file("first-search.json")
            search = await client.call_tool(search_tool, search_args)
            status_tool, status_args = call_file("engine-status.json")
            status = await client.call_tool(status_tool, status_args)

    # Step 2 of the tutorial: the host lists three tools.
    assert [t.name for t in tools] == ["web_search", "web_fetch", "engine_status"]
    schemas = {t.name: t.output_schema for t in tools}

    # Step 3: web_search answers with structured content and the same JSON as text.
    assert search.is_error is False
    found = search.structured_content
    assert found is not None
    assert json.loads(search.content[0].text) == found
    jsonschema.validate(found, schemas["web_search"])
    shown = check_or_write("first-search.json", found)
    assert found["outcome"] == shown["outcome"] == "ok"
    assert [n["code"] for n in found["notices"]] == [n["code"] for n in shown["notices"]]
    assert len(found["results"]) == len(shown["results"]) > 0
    assert {r["url"] for r in found["results"]} == {r["url"] for r in shown["results"]}
    # Only the simulated engines were asked: the test reached nothing else.
    assert {r.path for r in server.requests} == {"/wp/en/api.php", "/wd/api.php"}

    # Step 4: engine_status lists every configured engine with its state.
    assert status.is_error is False
    health = status.structured_content
    assert health is not None
    jsonschema.validate(health, schemas["engine_status"])
    shown_health = check_or_write("engine-status.json", health)
    states = {e["engine"]: e["state"] for e in health["engines"]}
    assert states["wikipedia"] == states["wikidata"] == "closed"
    shown_states = {e["engine"]: e["state"] for e in shown_health["engines"]}
    assert shown_states["wikipedia"] == "closed"
    latency = {e["engine"]: e["median_latency_ms"] for e in health["engines"]}
    assert isinstance(latency["wikipedia"], int)
