"""Request time and session bounds of the HTTP service, against the real process.

REQ-SEC-022 (every request ends with 408 after LIM-H5 whatever its state), REQ-SEC-024 (at most
LIM-H6 handshake-era sessions; beyond, 503 with Retry-After, logged and counted; the sessionless
revision unaffected).
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator

import httpx2
import pytest

from tests.mcp.test_http_support import (
    LONG_SEARCH,
    MODERN,
    Engine,
    RypsokHTTP,
    engine,
    http_config,
    legacy_headers,
    mcp_client,
    modern_body,
    modern_headers,
    open_session,
    rypsok_http,
    search_params,
)

pytestmark = pytest.mark.anyio
CEILING_MS = 1500
# "It ended": the ceiling plus generous room for a loaded machine; no finer timing is asserted.
ENDED_S = 15


@pytest.fixture(scope="module")
def hanging_engine() -> Iterator[Engine]:
    """A Wikipedia that never answers."""
    with engine(hang=True) as running:
        yield running


@pytest.fixture(scope="module")
def server(
    tmp_path_factory: pytest.TempPathFactory, hanging_engine: Engine
) -> Iterator[RypsokHTTP]:
    """A small request ceiling and two sessions at most; the search deadline is long, so only
    the request ceiling can end a call to the hanging engine."""
    config = http_config(
        tmp_path_factory.mktemp("bounds"),
        http=f"request_ceiling_ms = {CEILING_MS}\nmax_sessions = 2",
        engine_url=hanging_engine.endpoint,
        extra=LONG_SEARCH,
    )
    with rypsok_http(config) as running:
        yield running


def test_req_sec_022_handler_ended_with_408(server: RypsokHTTP, hanging_engine: Engine) -> None:
    """REQ-SEC-022: a call whose handler does not finish is answered 408 at the ceiling, and
    its outbound request is aborted with it.

    Proves THR-26.
    """
    started = time.monotonic()
    with httpx2.Client(timeout=ENDED_S) as client:
        response = client.post(
            server.url,
            content=modern_body("tools/call", search_params()),
            headers=modern_headers("tools/call", "web_search"),
        )
    assert response.status_code == 408
    assert time.monotonic() - started < ENDED_S
    assert hanging_engine.received.is_set()
    assert hanging_engine.closed.wait(ENDED_S), "the engine request was not aborted"


def test_req_sec_022_slow_body_ended_with_408(server: RypsokHTTP) -> None:
    """REQ-SEC-022: a request whose body never completes is answered 408 at the ceiling.

    Proves THR-26.
    """
    head = (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
        "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
        'Content-Length: 1000\r\n\r\n{"jsonrpc":'
    )
    assert _raw_status(server.port, head.encode()) == 408


def test_req_sec_022_slow_head_ended_with_408(server: RypsokHTTP) -> None:
    """REQ-SEC-022: a request head that never completes (which uvicorn does not time) is
    answered 408 and closed at the ceiling; so is a connection that sends nothing.

    Proves THR-26.
    """
    partial = f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nContent-Ty".encode()
    assert _raw_status(server.port, partial) == 408
    assert _raw_status(server.port, b"") == 408


def _raw_status(port: int, data: bytes) -> int:
    with socket.create_connection(("127.0.0.1", port), timeout=ENDED_S) as sock:
        if data:
            sock.sendall(data)
        received = b""
        while b"\r\n" not in received:
            chunk = sock.recv(4096)
            if not chunk:
                break
            received += chunk
    return int(received.split(b" ", 2)[1])


async def test_req_sec_022_started_stream_is_ended(server: RypsokHTTP) -> None:
    """REQ-SEC-022: once a response has started (a handshake-era SSE stream), the ceiling
    ends the stream; the client sees no answer and the server keeps serving."""
    with httpx2.Client(timeout=ENDED_S) as client:
        opened = open_session(client, server.url)
        session = opened.headers["mcp-session-id"]
        body = json.dumps(
            {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": search_params()}
        )
        started = time.monotonic()
        response = client.post(server.url, content=body, headers=legacy_headers(session))
        client.delete(server.url, headers=legacy_headers(session))
    assert response.status_code == 200
    assert time.monotonic() - started < ENDED_S
    assert '"id":7' not in response.text.replace(" ", "")
    async with mcp_client(server.url, mode=MODERN) as client:
        assert len((await client.list_tools()).tools) == 3


def test_req_sec_024_sessions_bounded(server: RypsokHTTP) -> None:
    """REQ-SEC-024: with max_sessions = 2 a third handshake is 503 with Retry-After and no
    session, logged and counted; 2026-07-28 requests are unaffected; a closed session frees
    its place.

    Proves THR-27.
    """
    with httpx2.Client(timeout=ENDED_S) as client:
        first = open_session(client, server.url)
        second = open_session(client, server.url)
        third = open_session(client, server.url)
        modern = client.post(
            server.url,
            content=modern_body("tools/list"),
            headers=modern_headers("tools/list"),
        )
        sessions = [r.headers["mcp-session-id"] for r in (first, second)]
        client.delete(server.url, headers=legacy_headers(sessions[0]))
        fourth = open_session(client, server.url)
        for response in (second, fourth):
            client.delete(server.url, headers=legacy_headers(response.headers["mcp-session-id"]))
    assert first.status_code == second.status_code == 200
    assert third.status_code == 503
    assert int(third.headers["retry-after"]) > 0
    assert "mcp-session-id" not in third.headers
    assert modern.status_code == 200 and "web_search" in modern.text
    assert fourth.status_code == 200
    refused = server.events("http_session_refused")
    assert refused and refused[0]["max_sessions"] == 2
