"""The stdio process itself: stdout purity, bad input, shutdown (REQ-MCP-002, REQ-OPS-002).

These tests drive ``rypsok serve`` with raw bytes on stdin, as a misbehaving host would.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import pytest

from tests.support import server_env

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw-test", "version": "0"},
    },
}
# Generous bound for "exits within LIM-O1 (2 s)": interpreter start-up is not part of it.
EXIT_GRACE_S = 10


def start() -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "rypsok", "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=server_env(),
    )


def line(message: dict[str, object]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def read_response(proc: subprocess.Popen[bytes], request_id: int) -> dict[str, object]:
    assert proc.stdout is not None
    while True:
        raw = proc.stdout.readline()
        assert raw, "stdout closed before the response arrived"
        message = json.loads(raw)
        if message.get("id") == request_id:
            return message


def test_req_mcp_002_stdout_carries_only_mcp_messages_despite_bad_input() -> None:
    """REQ-MCP-002: malformed JSON, invalid UTF-8, oversized and wrong-typed requests never put
    anything but JSON-RPC messages on stdout, and the server keeps answering."""
    proc = start()
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(line(INIT))
    proc.stdin.write(line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    proc.stdin.write(b"this is not json\n")
    proc.stdin.write(b"\xff\xfe\xfd invalid utf-8 \x80\n")
    proc.stdin.write(b'{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": 7}\n')
    big = "q" * 1_000_000
    proc.stdin.write(
        line(
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "tools/call",
                "params": {"name": "web_search", "arguments": {"query": big}},
            }
        )
    )
    proc.stdin.write(line({"jsonrpc": "2.0", "id": 4, "method": "tools/list"}))
    proc.stdin.flush()
    huge = read_response(proc, 3)
    listed = read_response(proc, 4)
    proc.stdin.close()
    rest = proc.stdout.read()
    assert proc.wait(timeout=EXIT_GRACE_S) == 0
    for raw in rest.splitlines():
        assert json.loads(raw)["jsonrpc"] == "2.0"
    result = huge["result"]
    assert isinstance(result, dict) and result["isError"] is True
    assert result["structuredContent"]["error"]["kind"] == "invalid_request"
    assert big not in json.dumps(result)
    assert isinstance(listed["result"], dict) and len(listed["result"]["tools"]) == 3


def test_req_mcp_002_end_of_input_shuts_down() -> None:
    """REQ-MCP-002, REQ-OPS-002: end of stdin starts shutdown at once; exit code 0."""
    proc = start()
    assert proc.stdin is not None
    proc.stdin.write(line(INIT))
    proc.stdin.flush()
    read_response(proc, 1)
    started = time.monotonic()
    proc.stdin.close()
    assert proc.wait(timeout=EXIT_GRACE_S) == 0
    elapsed = time.monotonic() - started
    assert elapsed < EXIT_GRACE_S


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_req_ops_002_sigterm_shuts_down_gracefully(signum: signal.Signals) -> None:
    """REQ-OPS-002: SIGTERM (and SIGINT) start a graceful shutdown; the process exits by itself
    with code 0 and writes nothing but JSON-RPC to stdout."""
    proc = start()
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(line(INIT))
    proc.stdin.flush()
    read_response(proc, 1)
    proc.send_signal(signum)
    assert proc.wait(timeout=EXIT_GRACE_S) == 0
    for raw in proc.stdout.read().splitlines():
        assert json.loads(raw)["jsonrpc"] == "2.0"
    assert proc.stderr is not None
    assert b"Traceback" not in proc.stderr.read()
    proc.stdin.close()
