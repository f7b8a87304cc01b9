"""Shutdown of the HTTP service: SIGTERM (and SIGINT) stop accepting, end the calls in flight
and exit 0 within LIM-O1 (REQ-OPS-002)."""

from __future__ import annotations

import json
import signal
import socket
import time
from pathlib import Path

import httpx2
import pytest

from tests.mcp.test_http_support import (
    EXIT_GRACE_S,
    LONG_SEARCH,
    RypsokHTTP,
    engine,
    http_config,
    legacy_headers,
    modern_body,
    modern_headers,
    open_session,
    search_params,
)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_req_ops_002_signal_ends_calls_in_flight_and_exits_0(
    tmp_path: Path, signum: signal.Signals
) -> None:
    """REQ-OPS-002: with a call in flight in each era (both waiting on a hanging engine), a
    signal makes the process abort them (the engine sees its connections closed), stop
    listening and exit 0 by itself, without a traceback."""
    with engine(hang=True) as hanging:
        config = http_config(tmp_path, engine_url=hanging.endpoint, extra=LONG_SEARCH)
        server = RypsokHTTP(config).wait_listening()
        try:
            modern = _send_raw(
                server.port,
                modern_body("tools/call", search_params()).encode(),
                modern_headers("tools/call", "web_search"),
            )
            assert hanging.received.wait(EXIT_GRACE_S), "rypsok never called the engine"
            with httpx2.Client(timeout=EXIT_GRACE_S) as client:
                session = open_session(client, server.url).headers["mcp-session-id"]
            body = json.dumps(
                {"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": search_params("b")}
            )
            legacy = _send_raw(server.port, body.encode(), legacy_headers(session))
            # Its stream has started: the call is in its session (waiting for the engine's one
            # slot, Wikipedia admits one request at a time).
            assert legacy.recv(64).startswith(b"HTTP/1.1 200")
            started = time.monotonic()
            code = server.stop(signum)
            elapsed = time.monotonic() - started
        finally:
            server.stop()
        assert code == 0, server.stderr_text()
        assert elapsed < EXIT_GRACE_S
        assert hanging.closed.wait(EXIT_GRACE_S), "the engine request was not aborted"
        for sock in (modern, legacy):
            _read_to_end(sock)  # the server ended both exchanges
            sock.close()
    text = server.stderr_text()
    assert "Traceback" not in text
    shutdown = server.events("shutdown")
    assert shutdown and shutdown[0]["cause"] == signal.Signals(signum).name
    with pytest.raises(OSError), socket.create_connection(("127.0.0.1", server.port), timeout=2):
        pass


def test_req_ops_002_idle_sigterm_exits_0(tmp_path: Path) -> None:
    """REQ-OPS-002: an idle service exits 0 on SIGTERM (uvicorn's own handling would re-raise
    the signal and end with -15)."""
    server = RypsokHTTP(http_config(tmp_path)).wait_listening()
    assert server.stop(signal.SIGTERM) == 0
    assert server.events("stopped")


def _send_raw(port: int, body: bytes, headers: dict[str, str]) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=EXIT_GRACE_S)
    head = f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
    head += "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    head += f"Content-Length: {len(body)}\r\n\r\n"
    sock.sendall(head.encode() + body)
    return sock


def _read_to_end(sock: socket.socket) -> None:
    while sock.recv(65536):
        pass
