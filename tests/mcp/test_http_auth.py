"""Authentication, tool scopes and per-caller limits over HTTP, and the metrics endpoint,
against the real ``rypsok serve --transport http`` process.

REQ-SEC-018, REQ-SEC-019, REQ-TEST-014, REQ-OBS-008.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest

from tests.mcp.test_http_support import (
    INITIALIZE,
    MODERN,
    RypsokHTTP,
    http_config,
    legacy_headers,
    mcp_client,
    modern_body,
    modern_headers,
    open_session,
    rypsok_http,
)

pytestmark = pytest.mark.anyio
ERAS = ["legacy", MODERN]
FULL = "full-token-0123456789abcdef"
SEARCH = "search-token-0123456789abcdef"
LIMITED = "limited-token-0123456789abcdef"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RypsokHTTP]:
    """Three callers on loopback: one with every tool, one search-only, one to exhaust; web_search
    limited to 2 calls a minute per caller; no engines; the metrics port on."""
    directory = tmp_path_factory.mktemp("auth")
    token_file = directory / "search.token"
    token_file.write_text(SEARCH + "\n", encoding="utf-8")
    http = f"""
metrics_port = {_free_port()}
[[http.callers]]
name = "alpha-full"
token_env = "RYPSOK_TEST_FULL"
[[http.callers]]
name = "beta-search"
token_file = "{token_file}"
tools = ["web_search"]
[[http.callers]]
name = "gamma-limit"
token_env = "RYPSOK_TEST_LIMITED"
"""
    config = http_config(directory, http=http, extra="[service]\ncalls_per_minute_web_search = 2\n")
    env = {"RYPSOK_TEST_FULL": FULL, "RYPSOK_TEST_LIMITED": LIMITED}
    with rypsok_http(config, env) as running:
        yield running


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("token", [None, "wrong-token-0123456789abcdef", FULL[:-1], "Basic x"])
@pytest.mark.parametrize("era", ["legacy", MODERN])
def test_req_sec_018_unauthenticated_requests_get_401(
    server: RypsokHTTP, token: str | None, era: str
) -> None:
    """REQ-SEC-018, REQ-TEST-014: no token, a wrong token or another scheme is 401 with a
    Bearer challenge, in both eras; no session is opened and nothing is served.

    Proves THR-28.
    """
    if era == MODERN:
        headers, body = modern_headers("tools/list"), modern_body("tools/list")
    else:
        headers, body = legacy_headers(), INITIALIZE
    if token == "Basic x":
        headers["Authorization"] = token
    elif token is not None:
        headers["Authorization"] = f"Bearer {token}"
    with httpx2.Client(timeout=10) as client:
        response = client.post(server.url, content=body, headers=headers)
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith('Bearer realm="rypsok"')
    assert "mcp-session-id" not in response.headers
    assert "tools" not in response.text
    assert FULL not in server.stderr_text()


@pytest.mark.parametrize("mode", ERAS)
async def test_req_sec_019_tool_scopes_per_caller(server: RypsokHTTP, mode: str) -> None:
    """REQ-SEC-019, REQ-TEST-014: a search-only caller sees only web_search and is denied
    web_fetch with tool_not_permitted; the full caller sees all three tools.

    Proves THR-29.
    """
    async with mcp_client(server.url, mode=mode, token=SEARCH) as client:
        listed = [t.name for t in (await client.list_tools()).tools]
        fetch = await client.call_tool("web_fetch", {"url": "https://example.org/"})
    assert listed == ["web_search"]
    assert fetch.is_error is True
    error = _structured(fetch)["error"]
    assert (error["kind"], error["reason"]) == ("denied", "tool_not_permitted")
    async with mcp_client(server.url, mode=mode, token=FULL) as client:
        listed = [t.name for t in (await client.list_tools()).tools]
    assert listed == ["web_search", "web_fetch", "engine_status"]


async def test_req_sec_019_limits_are_per_caller(server: RypsokHTTP) -> None:
    """REQ-SEC-019, REQ-TEST-014: one caller exhausting its web_search limit (2 a minute here)
    is refused with rate_limited, across both eras, while another caller is still served.

    Proves THR-29.
    """
    reasons: list[str | None] = []
    for mode in ("legacy", MODERN, "legacy"):
        async with mcp_client(server.url, mode=mode, token=LIMITED) as client:
            result = await client.call_tool("web_search", {"query": "relativity"})
            reasons.append(_reason(result))
    assert "rate_limited" not in reasons[:2]
    assert reasons[2] == "rate_limited"
    async with mcp_client(server.url, mode=MODERN, token=FULL) as client:
        other = await client.call_tool("web_search", {"query": "relativity"})
    assert _reason(other) != "rate_limited"


def test_req_sec_018_session_bound_to_its_caller(server: RypsokHTTP) -> None:
    """REQ-SEC-018: a handshake-era session opened by one caller cannot be used with another
    caller's token (it answers as if it did not exist).

    Proves THR-29.
    """
    with httpx2.Client(timeout=10) as client:
        opened = open_session(client, server.url, token=FULL)
        session = opened.headers["mcp-session-id"]
        body = json.dumps({"jsonrpc": "2.0", "id": 5, "method": "tools/list"})
        other = client.post(server.url, content=body, headers=legacy_headers(session, SEARCH))
        own = client.post(server.url, content=body, headers=legacy_headers(session, FULL))
        client.delete(server.url, headers=legacy_headers(session, FULL))
    assert other.status_code == 404
    assert own.status_code == 200
    assert "engine_status" in own.text


def test_req_obs_008_metrics_endpoint(server: RypsokHTTP) -> None:
    """REQ-OBS-008: in HTTP mode the operator port serves Prometheus text: the core's metrics
    and the listener's counters, with no caller names or tokens in it."""
    assert server.metrics_port is not None
    with httpx2.Client(timeout=10) as client:
        client.post(server.url, content=INITIALIZE, headers=legacy_headers())  # one 401
        response = client.get(f"http://127.0.0.1:{server.metrics_port}/metrics")
        missing = client.get(f"http://127.0.0.1:{server.metrics_port}/other")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain; version=0.0.4")
    text = response.text
    assert "# TYPE rypsok_calls_total counter" in text
    assert "# TYPE rypsok_http_sessions_refused_total counter" in text
    unauthenticated = [
        line for line in text.splitlines() if line.startswith("rypsok_http_unauthenticated_total")
    ]
    assert unauthenticated and float(unauthenticated[0].split()[-1]) >= 1
    for secret in ("alpha-full", "beta-search", "gamma-limit", FULL, SEARCH):
        assert secret not in text
    assert missing.status_code == 404


def _structured(result: Any) -> dict[str, Any]:
    data: dict[str, Any] = result.structured_content
    return data


def _reason(result: Any) -> str | None:
    error = _structured(result).get("error")
    return error.get("reason") if isinstance(error, dict) else None
