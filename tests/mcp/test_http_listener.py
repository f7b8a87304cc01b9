"""The HTTP listener: the transport itself, Host and Origin, the loopback default, start-up
refusals and the body bound, against the real ``rypsok serve --transport http`` process.

REQ-MCP-003, REQ-SEC-018, REQ-TEST-014, REQ-SEC-022.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path

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
    run_to_exit,
    rypsok_http,
)

pytestmark = pytest.mark.anyio
ERAS = ["legacy", MODERN]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RypsokHTTP]:
    """One loopback server with the defaults, a small body bound, no callers, no engines."""
    config = http_config(tmp_path_factory.mktemp("listener"), http="max_body_bytes = 65536")
    with rypsok_http(config) as running:
        yield running


@pytest.mark.parametrize("mode", ERAS)
async def test_req_mcp_003_both_eras_over_streamable_http(server: RypsokHTTP, mode: str) -> None:
    """REQ-MCP-003, REQ-MCP-006: the SDK client lists and calls tools over Streamable HTTP in
    the handshake era and the sessionless 2026-07-28 revision, on one endpoint."""
    async with mcp_client(server.url, mode=mode) as client:
        tools = (await client.list_tools()).tools
        result = await client.call_tool("engine_status", {})
        version = client.protocol_version
    assert [t.name for t in tools] == ["web_search", "web_fetch", "engine_status"]
    assert result.is_error is False
    assert version == ("2025-11-25" if mode == "legacy" else MODERN)


def test_req_mcp_003_no_http_sse_transport(server: RypsokHTTP) -> None:
    """REQ-MCP-003: the HTTP+SSE transport of 2024-11-05 is not offered."""
    with httpx2.Client(timeout=10) as client:
        assert (
            client.get(server.base + "/sse", headers={"Accept": "text/event-stream"}).status_code
            == 404
        )
        assert client.post(server.base + "/messages/", content="{}").status_code == 404


def test_req_sec_018_loopback_by_default(server: RypsokHTTP) -> None:
    """REQ-SEC-018, REQ-TEST-014: without [http] bind the listener is on 127.0.0.1 only.

    Proves THR-28.
    """
    listening = server.events("listening")[0]
    assert listening["bind"] == "127.0.0.1"
    assert listening["authentication"] is False
    other = _non_loopback_address()
    if other is None:
        pytest.skip("this machine has no non-loopback address to try")
    with pytest.raises(OSError), socket.create_connection((other, server.port), timeout=3):
        pass


def _non_loopback_address() -> str | None:
    # A UDP "connection" sends nothing; it only asks the kernel which source address it would use.
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))
        except OSError:
            return None
        address = str(probe.getsockname()[0])
    return None if address.startswith("127.") or address == "0.0.0.0" else address


@pytest.mark.parametrize("era", ["legacy", MODERN])
@pytest.mark.parametrize(
    ("host", "origin", "status"),
    [
        ("evil.example:{port}", None, 421),  # DNS rebinding: a foreign name for our address
        ("127.0.0.1:{port}", "http://evil.example", 403),
        ("127.0.0.1:{port}", "http://127.0.0.1:{port}", 200),
        ("localhost:{port}", "http://localhost:{port}", 200),
        ("127.0.0.1:{port}", None, 200),  # non-browser clients send no Origin
        ("127.0.0.1", None, 421),  # the port is part of the allowed value
        ("127.0.0.1:1", None, 421),
    ],
)
def test_req_sec_018_host_and_origin_validated(
    server: RypsokHTTP, era: str, host: str, origin: str | None, status: int
) -> None:
    """REQ-SEC-018, REQ-TEST-014: a bad Host is 421 and a bad Origin 403, in both eras, before
    the request reaches the MCP server; the allowed values derive from bind and port.

    Proves THR-28.
    """
    if era == MODERN:
        headers = modern_headers("tools/list")
        body = modern_body("tools/list")
    else:
        headers = legacy_headers()
        body = INITIALIZE
    headers["Host"] = host.format(port=server.port)
    if origin is not None:
        headers["Origin"] = origin.format(port=server.port)
    with httpx2.Client(timeout=10) as client:
        response = client.post(server.url, content=body, headers=headers)
    assert response.status_code == status, response.text
    if status != 200:
        assert "mcp-session-id" not in response.headers


def test_req_sec_018_host_checked_on_every_path(server: RypsokHTTP) -> None:
    """REQ-SEC-018: Host is validated before routing, so no path answers a rebinding page."""
    with httpx2.Client(timeout=10) as client:
        response = client.get(server.base + "/anything", headers={"Host": "evil.example"})
    assert response.status_code == 421


def test_req_sec_022_request_body_bounded(server: RypsokHTTP) -> None:
    """REQ-SEC-022: a body beyond [http] max_body_bytes is refused with 413 before parsing.

    Proves THR-26.
    """
    big = json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"x": "y" * 70_000}}
    )
    with httpx2.Client(timeout=10) as client:
        legacy = client.post(server.url, content=big, headers=legacy_headers())
        modern = client.post(server.url, content=big, headers=modern_headers("tools/list"))
    assert legacy.status_code == 413
    assert modern.status_code == 413


def test_req_mcp_003_post_must_accept_json_and_sse(server: RypsokHTTP) -> None:
    """REQ-MCP-003: the endpoint speaks Streamable HTTP in SSE mode (the mode in which a closed
    stream cancels, REQ-MCP-007): a POST that does not accept both JSON and SSE is refused."""
    with httpx2.Client(timeout=10) as client:
        response = client.post(
            server.url,
            content=INITIALIZE,
            headers={"Content-Type": "application/json", "Accept": "application/json"},
        )
    assert response.status_code == 406


@pytest.mark.parametrize(
    ("http", "expected"),
    [
        ('bind = "0.0.0.0"', ("[http] bind", "[[http.callers]]")),
        ('bind = "::"', ("[http] bind", "[[http.callers]]")),
        (
            'bind = "0.0.0.0"\n[[http.callers]]\nname = "a"\ntoken_env = "RYPSOK_T_A"',
            ("[http] allowed_hosts",),
        ),
        (
            '[[http.callers]]\nname = "agent-1"\ntoken_env = "RYPSOK_T_UNSET"',
            ("[[http.callers]] agent-1", "RYPSOK_T_UNSET"),
        ),
        (
            '[[http.callers]]\nname = "agent-2"\ntoken_env = "RYPSOK_T_SHORT"',
            ("[[http.callers]] agent-2", "16 characters"),
        ),
        (
            '[[http.callers]]\nname = "agent-3"\ntoken_file = "/nonexistent/token"',
            ("[[http.callers]] agent-3", "/nonexistent/token"),
        ),
    ],
)
def test_req_sec_018_unsafe_listener_refused_at_start(
    tmp_path: Path, http: str, expected: tuple[str, ...]
) -> None:
    """REQ-SEC-018, REQ-TEST-014: a non-loopback bind without callers, a wildcard bind without
    allowed hosts and a caller without a usable token end start-up with exit code 1 and a
    message naming the key; nothing listens.

    Proves THR-28.
    """
    config = http_config(tmp_path, http=http)
    env = {"RYPSOK_T_A": "a" * 32, "RYPSOK_T_SHORT": "short"}
    done = run_to_exit(config, env)
    assert done.returncode == 1, done.stderr
    for text in expected:
        assert text in done.stderr
    assert '"event":"listening"' not in done.stderr
    assert "a" * 32 not in done.stderr  # a token never appears in messages
