"""The listener's protections added after the HTTP security review, in process: closing a
connection answered before its body was read (F4), the metrics port's Host values (F5), the
session id mask of the SDK's log lines (F6), the per-caller session quota and the SDK
internals it relies on (F1), the bounded body prefix of CancelOnClosedStream (F2), the new
[http] keys, the open-file limit (F3) and the load balancer's matching bounds."""

from __future__ import annotations

import importlib.metadata
import inspect
import json
import logging
import re
import subprocess
import sys
import tomllib
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from mcp.server import Server
from mcp.server.auth.middleware.bearer_auth import AuthorizationContext
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

from rypsok.config.load import ConfigError, parse_settings
from rypsok.config.schema import HttpSettings
from rypsok.mcp import http_guard
from rypsok.mcp.http import metrics_hosts
from rypsok.mcp.http_guard import (
    RECORDED_BODY_BYTES,
    CancelOnClosedStream,
    CloseUnreadBody,
    SessionIdMask,
    install_session_quota,
    mask_sdk_session_ids,
)

pytestmark = pytest.mark.anyio
LOGGER = logging.getLogger("rypsok.test.hardening")
ROOT = Path(__file__).resolve().parents[2]
SESSION = "0123456789abcdef0123456789abcdef"


def _http(**values: Any) -> HttpSettings:
    return parse_settings({"schema_version": 1, "http": values}).http


def _scope(headers: list[tuple[bytes, bytes]], method: str = "POST") -> dict[str, Any]:
    return {"type": "http", "method": method, "path": "/mcp", "headers": headers}


async def _run(app: Any, scope: dict[str, Any], body: list[bytes]) -> list[dict[str, Any]]:
    """Run ``app`` with ``body`` as the request's chunks; the messages it sent."""
    pending = [
        {"type": "http.request", "body": chunk, "more_body": i < len(body) - 1}
        for i, chunk in enumerate(body)
    ]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return pending.pop(0) if pending else {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(scope, receive, send)
    return sent


# --- F4 ----------------------------------------------------------------------------------


def _answering(read_body: bool) -> Any:
    async def app(scope: Any, receive: Any, send: Any) -> None:
        if read_body:
            while (await receive()).get("more_body"):
                pass
        headers = [(b"content-length", b"2"), (b"Connection", b"keep-alive")]
        await send({"type": "http.response.start", "status": 401, "headers": headers})
        await send({"type": "http.response.body", "body": b"no"})

    return app


@pytest.mark.parametrize(
    ("headers", "read_body", "closes"),
    [
        ([(b"content-length", b"10")], False, True),
        ([(b"transfer-encoding", b"chunked")], False, True),
        ([(b"content-length", b"10")], True, False),
        ([], False, False),  # no body to be left unread
        ([(b"content-length", b"0")], False, False),
    ],
)
async def test_f4_close_only_when_the_body_is_unread(
    headers: list[tuple[bytes, bytes]], read_body: bool, closes: bool
) -> None:
    """REQ-SEC-022: a response sent before the request body was read carries Connection: close
    (replacing any other Connection value); otherwise the connection is left alone.

    Proves THR-26.
    """
    sent = await _run(CloseUnreadBody(_answering(read_body)), _scope(headers), [b"x" * 5] * 2)
    connection = [v for k, v in sent[0]["headers"] if k.lower() == b"connection"]
    assert connection == ([b"close"] if closes else [b"keep-alive"])


# --- F5 ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "hosts"),
    [
        ({}, ("127.0.0.1:9100", "localhost:9100")),
        ({"bind": "::1"}, ("[::1]:9100", "localhost:9100")),
        (
            {"bind": "0.0.0.0", "allowed_hosts": ["svc.example:443"], "callers": []},
            ("127.0.0.1:9100", "localhost:9100", "[::1]:9100"),
        ),
        ({"metrics_allowed_hosts": ["rypsok-1:9100", "mon.example:*"]}, None),
    ],
)
def test_f5_metrics_hosts_derive_from_bind_and_metrics_port(
    values: dict[str, Any], hosts: tuple[str, ...] | None
) -> None:
    """REQ-SEC-018: the metrics port's Host values: the bind address's names with the metrics
    port (a wildcard: the loopback names), or metrics_allowed_hosts as given.

    Proves THR-28.
    """
    http = _http(**values)
    expected = hosts if hosts is not None else tuple(values["metrics_allowed_hosts"])
    assert metrics_hosts(http, 9100) == expected


def test_f5_metrics_allowed_hosts_validated() -> None:
    """metrics_allowed_hosts takes Host values, like allowed_hosts."""
    with pytest.raises(ConfigError, match="metrics_allowed_hosts"):
        _http(metrics_allowed_hosts=["http://x"])


# --- F6 ----------------------------------------------------------------------------------


def test_f6_sdk_log_lines_carry_no_session_id(caplog: pytest.LogCaptureFixture) -> None:
    """REQ-OBS-006: on the SDK's session loggers a session id is masked, whatever the line;
    the SDK's own session refusal line is dropped (rypsok logs http_session_refused).

    Proves THR-34.
    """
    manager_logger = logging.getLogger("mcp.server.streamable_http_manager")
    before = list(manager_logger.filters)
    mask_sdk_session_ids()
    mask_sdk_session_ids()  # once is enough: no second filter
    try:
        assert sum(isinstance(f, SessionIdMask) for f in manager_logger.filters) == 1
        with caplog.at_level(logging.INFO, logger="mcp.server"):
            manager_logger.warning(
                "Rejecting request for session %s: credential does not match the one that "
                "created the session",
                SESSION,
            )
            manager_logger.info(f"Session {SESSION} idle timeout")
            manager_logger.warning("Refusing to open a new session: %d sessions are open", 3)
        messages = [r.getMessage() for r in caplog.records]
    finally:
        manager_logger.filters[:] = before
        transport_logger = logging.getLogger("mcp.server.streamable_http")
        transport_logger.filters[:] = [
            f for f in transport_logger.filters if not isinstance(f, SessionIdMask)
        ]
    assert messages == [
        "Rejecting request for session <session id>: credential does not match the one "
        "that created the session",
        "Session <session id> idle timeout",
    ]


# --- F1 ----------------------------------------------------------------------------------


def test_f1_sdk_internals_of_the_session_quota_are_unchanged() -> None:
    """The quota hooks SDK internals of the pinned mcp==2.3.0: the session admission
    (``_admit_session(requestor)``, under the creation lock) and the owners of the live
    sessions (``_session_owners``, pruned in ``_discard_session`` however a session ends).
    This fails on an SDK upgrade until the hook is checked against the new code."""
    assert importlib.metadata.version("mcp") == "2.3.0"
    admit = StreamableHTTPSessionManager._admit_session
    assert list(inspect.signature(admit).parameters) == ["self", "requestor"]
    stateful = inspect.getsource(StreamableHTTPSessionManager._handle_stateful_request)
    assert "self._admit_session(requestor)" in stateful
    assert "_session_creation_lock" in stateful
    discard = inspect.getsource(StreamableHTTPSessionManager._discard_session)
    assert "self._session_owners.pop(session_id" in discard
    assert StreamableHTTPSessionManager(app=Server("t"))._session_owners == {}


def _who(name: str) -> AuthorizationContext:
    return AuthorizationContext(client_id=name, issuer=None, subject=None)


def test_f1_quota_counts_the_callers_live_sessions() -> None:
    """REQ-SEC-024: at its quota a caller is refused a session (the SDK then answers 503)
    while another caller is admitted; a session that ends frees its place.

    Proves THR-27. Proves THR-29.
    """
    manager = StreamableHTTPSessionManager(app=Server("t"), max_sessions=10)
    install_session_quota(manager, 2)
    beta = [manager._admit_session(_who("beta")) for _ in range(3)]
    alpha = manager._admit_session(_who("alpha"))
    assert beta[0] is not None and beta[1] is not None and beta[2] is None
    assert alpha is not None
    ended = beta[0].mcp_session_id
    assert ended is not None
    del manager._session_owners[ended]  # what _discard_session does
    del manager._server_instances[ended]
    assert manager._admit_session(_who("beta")) is not None


def test_f1_quota_refuses_to_start_on_a_changed_sdk() -> None:
    """Without the internals it needs, installing the quota is an error, not a silent no-op."""

    class Changed:
        pass

    with pytest.raises(RuntimeError, match="session manager changed"):
        install_session_quota(Changed(), 2)  # type: ignore[arg-type]


def test_f1_settings_of_the_quota() -> None:
    """max_sessions_per_caller: unset is a quarter of max_sessions (at least 1); above
    max_sessions is refused. The in-flight bound per caller follows the same rule."""
    assert _http().sessions_per_caller == 25
    assert _http(max_sessions=3).sessions_per_caller == 1
    assert _http(max_sessions=10, max_sessions_per_caller=10).sessions_per_caller == 10
    with pytest.raises(ConfigError, match="max_sessions_per_caller"):
        _http(max_sessions=10, max_sessions_per_caller=11)
    assert _http().requests_in_flight_per_caller == 32
    with pytest.raises(ConfigError, match="max_requests_in_flight_per_caller"):
        _http(max_requests_in_flight=4, max_requests_in_flight_per_caller=5)


# --- F2 ----------------------------------------------------------------------------------


def _cancellable(calls: list[dict[str, Any]]) -> Any:
    """An SDK stand-in: reads the whole body, records what it got, never answers."""

    async def app(scope: Any, receive: Any, send: Any) -> None:
        received = b""
        while True:
            message = await receive()
            received += message.get("body", b"")
            if not message.get("more_body"):
                break
        snapshot = tracemalloc.take_snapshot() if tracemalloc.is_tracing() else None
        calls.append({"body": received, "snapshot": snapshot})

    return app


def _session_scope() -> dict[str, Any]:
    return _scope([(b"mcp-session-id", SESSION.encode()), (b"host", b"127.0.0.1:1")])


async def test_f2_a_long_body_is_not_kept_while_it_arrives() -> None:
    """Memory per stalled upload: of a 1 MiB body, CancelOnClosedStream keeps at most
    RECORDED_BODY_BYTES while it arrives (the SDK already buffers the body; a second copy
    doubled the memory of every stalled upload), and nothing once it is longer.

    Proves THR-26.
    """
    chunks = [bytes([65 + i]) * 65536 for i in range(16)]
    calls: list[dict[str, Any]] = []
    app = CancelOnClosedStream(_cancellable(calls), 1024 * 1024, LOGGER)
    tracemalloc.start()
    try:
        await _run(app, _session_scope(), chunks)
    finally:
        tracemalloc.stop()
    assert len(calls) == 1  # no request id learnt from a body that long: no cancel posted
    assert calls[0]["body"] == b"".join(chunks)  # the app itself saw every byte
    kept = calls[0]["snapshot"].filter_traces([tracemalloc.Filter(True, http_guard.__file__)])
    assert sum(stat.size for stat in kept.statistics("filename")) < RECORDED_BODY_BYTES


async def test_f2_a_call_body_still_yields_its_id_for_cancellation() -> None:
    """REQ-MCP-007: a call of ordinary size whose answer never left is still cancelled in
    its session, with its id, the body split over several chunks."""
    body = json.dumps(
        {"jsonrpc": "2.0", "id": 41, "method": "tools/call", "params": {"q": "x" * 20000}}
    ).encode()
    calls: list[dict[str, Any]] = []
    app = CancelOnClosedStream(_cancellable(calls), 1024 * 1024, LOGGER)
    await _run(app, _session_scope(), [body[:9000], body[9000:]])
    assert len(body) < RECORDED_BODY_BYTES
    assert len(calls) == 2
    cancel = json.loads(calls[1]["body"])
    assert cancel["method"] == "notifications/cancelled"
    assert cancel["params"]["requestId"] == 41


def test_f2_default_body_bound_is_small() -> None:
    """The default body bound is 256 KiB: the largest call is a few KiB (LIM-S1, LIM-F9)."""
    assert _http().max_body_bytes == 256 * 1024
    assert _http().max_requests_in_flight == 128


# --- F3 ----------------------------------------------------------------------------------


def test_f3_open_file_limit_raised_to_the_hard_limit() -> None:
    """At start the soft open-file limit is raised to the hard one, so that the connection
    cap, not the descriptor table, decides which connection is closed.

    Proves THR-26.
    """
    code = (
        "import resource\n"
        "soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)\n"
        "resource.setrlimit(resource.RLIMIT_NOFILE, (min(soft, 256), hard))\n"
        "from rypsok.mcp.http import raise_open_file_limit\n"
        "print(raise_open_file_limit(), resource.getrlimit(resource.RLIMIT_NOFILE)[0], hard)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    ).stdout.split()
    returned, soft, hard = (int(v) for v in out)
    assert returned == soft
    assert soft == (65536 if hard == -1 else hard)


def test_f3_head_timeout_and_connection_cap_defaults() -> None:
    """Defaults: 512 connections (below the usual soft limit of 1024 with room for the rest)
    and a request head within 10 s (LIM-H5 stays the ceiling of the whole request)."""
    http = _http()
    assert http.max_connections == 512 and http.head_timeout_ms == 10_000
    assert http.head_timeout_ms < http.request_ceiling_ms


def test_f3_load_balancer_caps_connections_and_times_request_heads() -> None:
    """REQ-DEP-002: the example HAProxy bounds its connections (globally and per replica,
    below the replica's max_connections), times request heads, and its health check sends a
    Host the replica's metrics port accepts."""
    text = (ROOT / "deploy" / "haproxy.cfg").read_text(encoding="utf-8")
    global_section = text.split("\ndefaults", 1)[0]
    assert re.search(r"^\s+maxconn \d+$", global_section, re.MULTILINE)
    request = re.search(r"^\s+timeout http-request (\d+)s$", text, re.MULTILINE)
    assert request is not None and int(request.group(1)) <= 10
    replica = parse_settings(
        tomllib.loads((ROOT / "deploy" / "rypsok.toml").read_text(encoding="utf-8"))
    ).http
    per_server = re.findall(r"^\s+server rypsok-\d .* maxconn (\d+)$", text, re.MULTILINE)
    assert len(per_server) == 2
    assert all(int(n) < replica.max_connections for n in per_server)
    check_host = re.search(r"^\s+http-check send hdr Host (\S+)$", text, re.MULTILINE)
    assert replica.metrics_port is not None and check_host is not None
    assert check_host.group(1) in metrics_hosts(replica, replica.metrics_port)
