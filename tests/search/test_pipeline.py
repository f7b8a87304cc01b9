"""web_search end to end in process: real drivers, real egress, simulated engines on loopback.

REQ-AGG-001..009, REQ-ERR-001/005, REQ-TEST-004, REQ-TEST-007, REQ-ENG-009, REQ-RES-002,
REQ-CMP-004, REQ-SEARCH-006, REQ-PRIV-002, REQ-ARCH-004.
"""

from __future__ import annotations

import gzip
import io
import json
import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from rypsok import __version__
from rypsok.app import runtime
from rypsok.config.load import parse_settings
from rypsok.engines.registry import DRIVER_MODULES
from rypsok.logs import JsonLineFormatter
from rypsok.services.calls import Services
from tests.fakes.http_server import FakeHTTPServer, Reply, fake_http_server

pytestmark = pytest.mark.anyio
FIXTURES = Path(__file__).resolve().parents[1] / "engines" / "fixtures"
PATHS = {
    "hackernews": "/hn/api/v1/search",
    "searxng": "/searxng/search",
    "gdelt": "/gdelt/api/v2/doc/doc",
    "wikipedia": "/wp/{language}/api.php",
    "wikidata": "/wd/api.php",
    "pubmed": "/eutils/",  # a two-step engine: esearch.fcgi, then esummary.fcgi
    "europepmc": "/epmc/search",
}


def fixture(engine: str, name: str) -> bytes:
    return (FIXTURES / engine / name).read_bytes()


def json_reply(engine: str, name: str = "success.json", **kw: Any) -> Reply:
    return Reply(body=fixture(engine, name), **kw)


class LogCapture(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []
        self.setFormatter(JsonLineFormatter())

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


@asynccontextmanager
async def search_services(
    server: FakeHTTPServer,
    engines: list[str],
    search: str = "",
    service: dict[str, Any] | None = None,
    extra: dict[str, Any] | None = None,
) -> AsyncIterator[tuple[Services, LogCapture]]:
    """The service with ``engines`` on the fake server; ``extra`` adds configuration tables."""
    entries: dict[str, Any] = {e: {"enabled": False} for e in DRIVER_MODULES}
    for engine in engines:
        entries[engine] = {"enabled": True, "endpoint": server.url(PATHS[engine])}
    data: dict[str, Any] = {
        "schema_version": 1,
        "engines": entries,
        "service": {"contact": "ops@example.org", **(service or {})},
    }
    if search:
        data["search"] = json.loads(search)
    data.update(extra or {})
    settings = parse_settings(data)
    logger = logging.getLogger(f"rypsok.test.{id(server)}")
    logger.setLevel(logging.DEBUG)
    capture = LogCapture()
    logger.addHandler(capture)
    async with runtime(settings, logger) as services:
        yield services, capture


async def search(services: Services, **arguments: Any) -> dict[str, Any]:
    result = await services.call("web_search", arguments)
    return result.structured


async def test_req_agg_004_partial_results_with_a_notice_per_failed_engine() -> None:
    """REQ-AGG-004, REQ-AGG-007, REQ-TEST-004: one engine fails, the other's results stay;
    the outcome is partial with one engine_failed notice naming the failed engine."""
    with fake_http_server() as server:
        server.replies["/hn/api/v1/search"] = json_reply("hackernews")
        server.replies["/gdelt/api/v2/doc/doc"] = Reply(status=500, body=b"oops internal")
        async with search_services(server, ["hackernews", "gdelt"]) as (services, _):
            data = await search(services, query="rust", category="news")
    assert data["outcome"] == "partial"
    assert data["results"], "the healthy engine's results must remain"
    failed = [n for n in data["notices"] if n["code"] == "engine_failed"]
    assert [n["engine"] for n in failed] == ["gdelt"]
    assert "oops" not in json.dumps(data)


async def test_req_err_005_empty_only_when_an_engine_answered() -> None:
    """REQ-ERR-005, REQ-ERR-001: no results from answering engines is empty; no engine
    answering is the error unavailable."""
    with fake_http_server() as server:
        server.replies["/hn/api/v1/search"] = json_reply("hackernews", "empty.json")
        async with search_services(server, ["hackernews"]) as (services, _):
            empty = await search(services, query="nothing here", category="news")
        server.replies["/hn/api/v1/search"] = Reply(status=503, body=b"down")
        async with search_services(server, ["hackernews"]) as (services, _):
            failed = await search(services, query="nothing here", category="news")
    assert empty["outcome"] == "empty" and empty["results"] == []
    assert failed["outcome"] == "error"
    assert (failed["error"]["kind"], failed["error"]["reason"]) == (
        "unavailable",
        "no_engine_answered",
    )


async def test_req_agg_002_003_hanging_engine_cut_at_its_timeout() -> None:
    """REQ-AGG-002, REQ-AGG-003, REQ-AGG-006, REQ-TEST-004: a hanging engine is cut at the
    per-engine timeout; the call returns with the other engine's results as partial."""
    settings = '{"deadline_ms": 1200, "engine_timeout_ms": 800, "reserve_ms": 200}'
    with fake_http_server() as server:
        server.replies["/hn/api/v1/search"] = json_reply("hackernews")
        server.replies["/gdelt/api/v2/doc/doc"] = Reply(hang=True)
        async with search_services(server, ["hackernews", "gdelt"], settings) as (services, _):
            started = time.monotonic()
            data = await search(services, query="rust", category="news")
            elapsed = time.monotonic() - started
    assert data["outcome"] == "partial"
    notice = next(n for n in data["notices"] if n["code"] == "engine_failed")
    assert notice["engine"] == "gdelt" and "timeout" in notice["message"]
    assert elapsed < 6.0  # LIM-S7 ceiling with a wide margin: the call was not left hanging


async def test_req_agg_009_early_completion() -> None:
    """REQ-AGG-009: the search completes when every engine answered, not at the deadline."""
    settings = '{"deadline_ms": 5500, "engine_timeout_ms": 5000, "reserve_ms": 500}'
    with fake_http_server() as server:
        server.replies["/hn/api/v1/search"] = json_reply("hackernews")
        async with search_services(server, ["hackernews"], settings) as (services, _):
            started = time.monotonic()
            data = await search(services, query="rust", category="news")
            elapsed = time.monotonic() - started
    assert data["outcome"] == "ok"
    assert elapsed < 5.0  # far below the 5 s engine phase it would otherwise wait for


async def test_req_agg_008_no_retry_within_a_call() -> None:
    """REQ-AGG-008: a failed engine request is sent once and not retried."""
    with fake_http_server() as server:
        server.replies["/hn/api/v1/search"] = Reply(status=500, body=b"{}")
        async with search_services(server, ["hackernews"]) as (services, _):
            await search(services, query="rust", category="news")
    assert len([r for r in server.requests if r.path == "/hn/api/v1/search"]) == 1


@pytest.mark.parametrize(
    ("reply", "failure"),
    [
        (Reply(status=200, body=b'{"hits": [', headers=()), "parse_failure"),
        (
            Reply(
                status=200,
                body=b"<html><body>not json</body></html>",
                headers=(("Content-Type", "text/html"),),
            ),
            "parse_failure",
        ),
        (
            Reply(
                status=403,
                body=b"<html><form id='challenge-form'>captcha</form></html>",
                headers=(("Content-Type", "text/html"),),
            ),
            "blocked",
        ),
        # An anti-bot check by its vendor's documented header, whatever the status or body:
        # without the header, the first is request_failure and the second an empty answer.
        (
            Reply(
                status=503,
                body=b"<html>captcha</html>",
                headers=(("Content-Type", "text/html"), ("cf-mitigated", "challenge")),
            ),
            "blocked",
        ),
        (
            Reply(status=202, body=b'{"hits": []}', headers=(("x-amzn-waf-action", "challenge"),)),
            "blocked",
        ),
        (Reply(status=429, body=b"slow down", headers=(("Retry-After", "120"),)), "rate_limited"),
        (
            Reply(status=302, body=b"", headers=(("Location", "https://elsewhere.example/"),)),
            "request_failure",
        ),
        (Reply(status=200, body=b"\xff\xfe\xfa invalid utf-8"), "parse_failure"),
    ],
)
async def test_req_eng_006_failures_classified_without_provider_text(
    reply: Reply, failure: str
) -> None:
    """REQ-ENG-006, REQ-ENG-009, REQ-RES-002, REQ-TEST-007, REQ-SEC-016, REQ-ERR-004:
    truncated JSON, HTML instead of JSON, a CAPTCHA page, an anti-bot check marked by its
    vendor's header (Cloudflare, AWS WAF), 429, a redirect and invalid UTF-8 become one failure
    class each; no provider text reaches the response or the logs.

    Proves THR-10, THR-12.
    """
    with fake_http_server() as server:
        server.replies["/hn/api/v1/search"] = reply
        server.replies["/wd/api.php"] = json_reply("wikidata")
        async with search_services(server, ["hackernews"]) as (services, logs):
            data = await search(services, query="rust", category="news")
    assert data["outcome"] == "error"
    assert data["error"]["reason"] == "no_engine_answered"
    text = json.dumps(data) + "\n".join(logs.lines)
    for provider_text in ("captcha", "challenge-form", "slow down", "elsewhere", "not json"):
        assert provider_text not in text
    assert any(json.loads(line).get("failure") == failure for line in logs.lines), logs.lines


async def test_req_res_004_rate_limited_engine_skipped_with_notice() -> None:
    """REQ-RES-002, REQ-RES-004, REQ-CMP-002: a 429 with Retry-After opens the engine's circuit;
    the next search does not contact it, and engine_status shows it open."""
    with fake_http_server() as server:
        server.replies["/hn/api/v1/search"] = Reply(status=429, headers=(("Retry-After", "120"),))
        server.replies["/gdelt/api/v2/doc/doc"] = json_reply("gdelt")
        async with search_services(server, ["hackernews", "gdelt"]) as (services, _):
            first = await search(services, query="rust", category="news")
            # gdelt is now at its admitted rate (1 per 6 s) and hackernews cooling down:
            second = await search(services, query="rust", category="news")
            status = (await services.call("engine_status", {})).structured
    assert first["outcome"] == "partial"
    assert ("engine_failed", "hackernews") in {
        (n["code"], n.get("engine")) for n in first["notices"]
    }
    assert second["outcome"] == "error"
    assert second["error"]["reason"] == "no_engine_answered"
    states = {e["engine"]: e["state"] for e in status["engines"]}
    assert states["hackernews"] == "open"
    assert states["wikipedia"] == "disabled"
    assert sum(1 for r in server.requests if r.path == "/hn/api/v1/search") == 1
    assert sum(1 for r in server.requests if r.path == "/gdelt/api/v2/doc/doc") == 1


async def test_req_sec_013_gzip_bomb_from_an_engine_is_bounded() -> None:
    """REQ-SEC-010, REQ-SEC-013: a gzip bomb from an engine stops at the engine's byte bound
    and fails that engine only; the process keeps serving.

    Proves THR-14.
    """
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb") as bomb:
        for _ in range(64):
            bomb.write(b"\0" * (1024 * 1024))
    with fake_http_server() as server:
        server.replies["/hn/api/v1/search"] = Reply(
            body=buffer.getvalue(),
            headers=(("Content-Type", "application/json"), ("Content-Encoding", "gzip")),
        )
        async with search_services(server, ["hackernews"]) as (services, logs):
            data = await search(services, query="rust", category="news")
            again = await services.call("engine_status", {})
    assert data["outcome"] == "error"
    assert any(json.loads(line).get("failure") == "request_failure" for line in logs.lines)
    assert again.is_error is False


async def test_req_cmp_004_identifying_user_agent() -> None:
    """REQ-CMP-004: requests carry rypsok/<version> (+<project URL>; <operator contact>)."""
    with fake_http_server() as server:
        server.replies["/hn/api/v1/search"] = json_reply("hackernews")
        async with search_services(server, ["hackernews"]) as (services, _):
            await search(services, query="rust", category="news")
    agent = server.requests[0].headers["user-agent"]
    assert agent.startswith(f"rypsok/{__version__} (+https://")
    assert agent.endswith("; ops@example.org)")
    assert "cookie" not in server.requests[0].headers


async def test_req_search_006_credential_refused_before_any_request() -> None:
    """REQ-SEARCH-006, REQ-PRIV-002, REQ-LIFE-001: a query carrying a credential is denied
    naming its kind and position, never its value, and no engine is contacted.

    Proves THR-04.
    """
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    with fake_http_server() as server:
        server.replies["/hn/api/v1/search"] = json_reply("hackernews")
        async with search_services(server, ["hackernews"]) as (services, logs):
            data = await search(services, query=f"why does {token} fail", category="news")
    assert data["error"]["kind"] == "denied"
    assert data["error"]["detail"]["position"] == len("why does ")
    assert token not in json.dumps(data) and token not in "\n".join(logs.lines)
    assert server.requests == []


async def test_req_priv_004_no_query_text_in_logs() -> None:
    """REQ-PRIV-004, REQ-OBS-005, REQ-TEST-008: at the default level the logs carry the call
    and engine events but never the query text.

    Proves THR-34.
    """
    with fake_http_server() as server:
        server.replies["/hn/api/v1/search"] = json_reply("hackernews")
        async with search_services(server, ["hackernews"]) as (services, logs):
            await search(services, query="very private medical question", category="news")
    assert logs.lines
    assert all("private medical" not in line for line in logs.lines)


async def test_req_arch_004_same_answers_same_bytes_whatever_the_arrival_order() -> None:
    """REQ-ARCH-004, REQ-TEST-011: engines answering in a different order give identical
    output, byte for byte."""
    outputs = []
    for delays in ((0.0, 0.3), (0.3, 0.0)):
        with fake_http_server() as server:
            server.replies["/hn/api/v1/search"] = json_reply("hackernews", delay_s=delays[0])
            server.replies["/gdelt/api/v2/doc/doc"] = json_reply("gdelt", delay_s=delays[1])
            async with search_services(server, ["hackernews", "gdelt"]) as (services, _):
                result = await services.call("web_search", {"query": "rust", "category": "news"})
        outputs.append(json.dumps(result.structured, ensure_ascii=False, separators=(",", ":")))
    assert outputs[0] == outputs[1]
    assert json.loads(outputs[0])["outcome"] == "ok"


async def test_req_ctx_004_cleaned_text_and_notices() -> None:
    """REQ-CTX-004, REQ-SEC-015, REQ-CTX-007, REQ-TEST-007: markup, entities, invisible
    characters and overlong titles are cleaned, bounded and reported by notices.

    Proves THR-09.
    """
    hits = [
        {
            "objectID": "1",
            "title": "<b>Bold</b> &amp; \u200bhidden\u202e" + "x" * 300,
            "url": "https://example.org/a?utm_source=x&id=1",
            "created_at": "2026-01-02T00:00:00Z",
            "points": 1,
            "num_comments": 0,
            "author": "a",
            "story_text": None,
            "_highlightResult": {},
        }
    ]
    body = json.dumps({"hits": hits, "nbHits": 1, "page": 0, "nbPages": 1, "hitsPerPage": 10})
    with fake_http_server() as server:
        server.replies["/hn/api/v1/search"] = Reply(body=body.encode())
        async with search_services(server, ["hackernews"]) as (services, _):
            data = await search(services, query="rust", category="news")
    result = data["results"][0]
    assert result["title"].startswith("Bold & hidden")
    assert "\u200b" not in result["title"] and "\u202e" not in result["title"]
    assert len(result["title"]) <= 200
    assert result["url"] == "https://example.org/a?id=1"
    codes = {n["code"] for n in data["notices"]}
    assert {"title_truncated", "markup_removed", "invisible_characters_removed"} <= codes


async def test_req_agg_004_searxng_unresponsive_sources_make_a_partial_outcome() -> None:
    """REQ-AGG-004 (SearXNG engine type): results from an instance that reported some of its
    own engines unresponsive are returned as partial with a notice, never silently."""
    with fake_http_server() as server:
        server.replies["/searxng/search"] = json_reply("searxng", "unresponsive.json")
        async with search_services(server, ["searxng"]) as (services, logs):
            data = await search(services, query="tokio runtime")
    assert data["outcome"] == "partial" and data["results"]
    notice = next(n for n in data["notices"] if n["code"] == "engine_sources_unresponsive")
    assert (notice["engine"], notice["count"]) == ("searxng", 2)
    assert "SEARXNG-PROVIDER-TEXT" not in json.dumps(data) + "\n".join(logs.lines)
    sent = server.requests[0]
    assert sent.method == "POST" and "cookie" not in sent.headers


async def test_req_obs_005_engine_failure_log_names_the_egress_reason() -> None:
    """REQ-OBS-005, REQ-ENG-006: when the egress refuses or cannot reach an engine, the
    engine_failed log line carries rypsok's own reason word (connect_failed here; for a
    configured proxy, proxy_failure), so the operator knows what to check; the caller still
    sees only the failure class."""
    import socket

    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    entries: dict[str, Any] = {e: {"enabled": False} for e in DRIVER_MODULES}
    entries["hackernews"] = {"enabled": True, "endpoint": f"http://127.0.0.1:{port}/hn"}
    settings = parse_settings(
        {"schema_version": 1, "engines": entries, "service": {"contact": "ops@example.org"}}
    )
    logger = logging.getLogger("rypsok.test.egress_reason")
    logger.setLevel(logging.DEBUG)
    capture = LogCapture()
    logger.addHandler(capture)
    async with runtime(settings, logger) as services:
        data = await search(services, query="rust", category="news")
    assert data["outcome"] == "error"
    failed = [json.loads(line) for line in capture.lines if '"engine_failed"' in line]
    assert failed and failed[0]["failure"] == "request_failure"
    assert failed[0]["egress_reason"] == "connect_failed"
    assert "connect_failed" not in json.dumps(data)
