"""Cancellation over Streamable HTTP: a closed response stream cancels the call and aborts its
outbound request, and the server keeps serving (REQ-MCP-007, REQ-TEST-009).

The engine hangs and reports when rypsok closes its connection to it; the search deadline is
set far beyond the tests' waits, so that close can only come from the cancellation.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator

import anyio
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
# "It ended" bounds, far above LIM-O2 (100 ms): the test asserts that the abort happens, not
# how fast on a loaded machine.
WAIT_S = 10


@pytest.fixture(scope="module")
def hanging() -> Iterator[Engine]:
    """A Wikipedia that never answers and records when its connection is closed."""
    with engine(hang=True) as running:
        yield running


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, hanging: Engine) -> Iterator[RypsokHTTP]:
    """rypsok with the hanging engine and a long search deadline."""
    config = http_config(
        tmp_path_factory.mktemp("cancel"),
        engine_url=hanging.endpoint,
        extra=LONG_SEARCH + "\n[service]\ncalls_per_minute_web_search = 1000\n",
    )
    with rypsok_http(config) as running:
        yield running


@pytest.fixture
def engine_(hanging: Engine) -> Engine:
    """The shared engine with its records cleared."""
    hanging.reset()
    return hanging


def _close_when_engine_called(response: httpx2.Response, engine: Engine) -> None:
    assert engine.received.wait(WAIT_S), "rypsok never called the engine"
    response.close()


def test_req_mcp_007_closed_stream_cancels_2026(server: RypsokHTTP, engine_: Engine) -> None:
    """REQ-MCP-007: on the 2026-07-28 revision, closing the response stream of a web_search
    aborts the engine request; the server keeps serving."""
    # A raw socket: the answer's headers are deferred until the call ends, so an HTTP client
    # would still be waiting for them when the stream is to be closed.
    body = modern_body("tools/call", search_params()).encode()
    headers = {**modern_headers("tools/call", "web_search"), "Host": f"127.0.0.1:{server.port}"}
    head = "POST /mcp HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    head += f"Content-Length: {len(body)}\r\n\r\n"
    with socket.create_connection(("127.0.0.1", server.port), timeout=WAIT_S) as sock:
        sock.sendall(head.encode() + body)
        assert engine_.received.wait(WAIT_S), "rypsok never called the engine"
    assert engine_.closed.wait(WAIT_S), "the engine request was not aborted"
    _still_serving(server)


def test_req_mcp_007_closed_stream_cancels_handshake_era(
    server: RypsokHTTP, engine_: Engine
) -> None:
    """REQ-MCP-007: in a handshake-era session the call runs in the session, not in the HTTP
    request; closing its response stream still cancels it and aborts the engine request, and
    the session stays usable."""
    with httpx2.Client(timeout=WAIT_S) as client:
        session = open_session(client, server.url).headers["mcp-session-id"]
        body = json.dumps(
            {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": search_params()}
        )
        request = client.build_request(
            "POST", server.url, content=body, headers=legacy_headers(session)
        )
        response = client.send(request, stream=True)
        assert response.status_code == 200
        _close_when_engine_called(response, engine_)
        assert engine_.closed.wait(WAIT_S), "the engine request was not aborted"
        listed = client.post(
            server.url,
            content=json.dumps({"jsonrpc": "2.0", "id": 4, "method": "tools/list"}),
            headers=legacy_headers(session),
        )
        client.delete(server.url, headers=legacy_headers(session))
    assert listed.status_code == 200 and "web_search" in listed.text
    _still_serving(server)


@pytest.mark.parametrize("mode", ["legacy", MODERN])
async def test_req_mcp_007_sdk_client_cancel(
    server: RypsokHTTP, engine_: Engine, mode: str
) -> None:
    """REQ-MCP-007, REQ-TEST-009: the SDK client cancelling a call (notifications/cancelled in a
    session, the closed stream on 2026-07-28) aborts the engine request."""
    async with mcp_client(server.url, mode=mode) as client:
        async with anyio.create_task_group() as group:
            group.start_soon(client.call_tool, "web_search", {"query": "relativity"})
            received = await anyio.to_thread.run_sync(engine_.received.wait, WAIT_S)
            group.cancel_scope.cancel()
        assert received, "rypsok never called the engine"
        closed = await anyio.to_thread.run_sync(engine_.closed.wait, WAIT_S)
        assert closed, "the engine request was not aborted"
        assert len((await client.list_tools()).tools) == 3


def _still_serving(server: RypsokHTTP) -> None:
    with httpx2.Client(timeout=WAIT_S) as client:
        response = client.post(
            server.url, content=modern_body("tools/list"), headers=modern_headers("tools/list")
        )
    assert response.status_code == 200 and "web_search" in response.text
    assert server.proc.poll() is None
    assert threading.active_count() >= 1
