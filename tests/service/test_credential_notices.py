"""The credential check's warn and mask modes, end to end (REQ-PRIV-002, LIM-P1).

``[privacy] credential_check`` decides what happens to a query or URL that holds a credential
(the deny mode, the default, is tested in tests/search/test_pipeline.py). In ``warn`` the text
goes out as given with a ``credential_detected`` notice; in ``mask`` the credential is masked
before anything is sent, with a ``credential_masked`` notice. Either notice names the kind and
the position, never the value. A simulated engine on loopback records what reached it.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from rypsok.app import runtime
from rypsok.config.load import parse_settings
from rypsok.engines.registry import DRIVER_MODULES
from rypsok.services.calls import Services
from tests.fakes.http_server import FakeHTTPServer, fake_http_server
from tests.privacy.samples import sample
from tests.search.test_pipeline import PATHS, json_reply

pytestmark = pytest.mark.anyio

HN = PATHS["hackernews"]


@asynccontextmanager
async def services_with(server: FakeHTTPServer, mode: str) -> AsyncIterator[Services]:
    """Hacker News on the fake server only, and the credential check in ``mode``."""
    entries: dict[str, Any] = {e: {"enabled": False} for e in DRIVER_MODULES}
    entries["hackernews"] = {"enabled": True, "endpoint": server.url(HN)}
    settings = parse_settings(
        {
            "schema_version": 1,
            "engines": entries,
            "service": {"contact": "ops@example.org"},
            "privacy": {"credential_check": mode},
        }
    )
    async with runtime(settings, logging.getLogger(f"rypsok.test.cred.{mode}")) as services:
        yield services


def sent_queries(server: FakeHTTPServer) -> list[str]:
    """The ``query`` parameter of every request the engine received."""
    queries = []
    for seen in server.requests:
        values = parse_qs(urlsplit(seen.target).query).get("query", [])
        queries.extend(values)
    return queries


@pytest.mark.req("REQ-PRIV-002")
@pytest.mark.parametrize(
    ("mode", "code", "sent_as_given"),
    [("warn", "credential_detected", True), ("mask", "credential_masked", False)],
)
async def test_req_priv_002_warn_sends_and_mask_masks_with_a_notice_naming_the_kind(
    mode: str, code: str, sent_as_given: bool
) -> None:
    """REQ-PRIV-002: in warn mode the query reaches the engine unchanged and the response
    carries credential_detected; in mask mode the engine receives the query with the
    credential masked and the response carries credential_masked. The notice names the kind
    and the position; the credential itself appears nowhere in the response."""
    kind, key = sample("aws_access_key_id")
    query = f"rust deploy {key} now"
    with fake_http_server() as server:
        server.replies[HN] = json_reply("hackernews")
        async with services_with(server, mode) as services:
            result = await services.call("web_search", {"query": query, "category": "news"})
    data = result.structured
    assert data["outcome"] == "ok"
    notices = [n for n in data["notices"] if n["code"] == code]
    assert len(notices) == 1
    assert kind in notices[0]["message"]
    assert str(query.index(key)) in notices[0]["message"]
    assert key not in json.dumps(data)
    queries = sent_queries(server)
    assert queries, "the engine was asked"
    if sent_as_given:
        assert queries == [query]
    else:
        assert all(key not in q for q in queries)
        assert all(q.startswith("rust deploy ") and q.endswith(" now") for q in queries)


@pytest.mark.req("REQ-PRIV-002")
@pytest.mark.parametrize(
    ("tool", "parameter", "reason"),
    [("web_search", "query", "credential_in_query"), ("web_fetch", "url", "credentials_in_url")],
)
async def test_req_priv_002_deny_names_parameter_kind_and_position(
    tool: str, parameter: str, reason: str
) -> None:
    """REQ-PRIV-002: in deny mode (the default) a query or URL holding a credential is refused
    with ``denied`` and the reason of its parameter; the detail names the parameter, the kind
    and the position the caller must change, and nothing is sent."""
    kind, key = sample("github_token")
    text = f"rust deploy {key} now" if tool == "web_search" else f"https://example.org/?t={key}"
    arguments = {"query": text, "category": "news"} if tool == "web_search" else {"url": text}
    with fake_http_server() as server:
        server.replies[HN] = json_reply("hackernews")
        async with services_with(server, "deny") as services:
            result = await services.call(tool, arguments)
    error = result.structured["error"]
    assert (error["kind"], error["reason"]) == ("denied", reason)
    assert error["detail"]["parameter"] == parameter
    assert error["detail"]["credential_kind"] == kind
    assert error["detail"]["position"] == text.index(key)
    assert key not in json.dumps(result.structured)
    assert server.requests == []
