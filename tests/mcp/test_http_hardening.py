"""The listener's protections added after the HTTP security review, against the real process.

F4 refusals close a connection whose body is unread; F5 the metrics port checks Host and
refuses Origin; F6 no session id in the SDK's log lines; F1 the per-caller session quota;
F2 the bound on requests in flight; F3 the connection cap and the request-head timeout.
REQ-SEC-018, REQ-SEC-019, REQ-SEC-022, REQ-SEC-024, REQ-OBS-006.
"""

from __future__ import annotations

import contextlib
import select
import socket
import threading
import time
from collections.abc import Iterator

import httpx2
import pytest

from tests.mcp.test_http_support import (
    ACCEPT,
    INITIALIZE,
    RypsokHTTP,
    http_config,
    legacy_headers,
    modern_body,
    modern_headers,
    open_session,
    rypsok_http,
)

FULL = "full-token-0123456789abcdef"
SEARCH = "search-token-0123456789abcdef"
ENV = {"RYPSOK_TEST_FULL": FULL, "RYPSOK_TEST_SEARCH": SEARCH}
CALLERS = """
[[http.callers]]
name = "alpha"
token_env = "RYPSOK_TEST_FULL"
[[http.callers]]
name = "beta"
token_env = "RYPSOK_TEST_SEARCH"
tools = ["web_search"]
"""
MAX_BODY = 65536
# "Closed soon": far below LIM-H5 (30 s, the request ceiling of these servers, which is when
# uvicorn stopped draining an unread body before), yet generous for a loaded machine.
CLOSED_S = 5.0
CAP = 8  # the connection cap of the cap server
HEAD_TIMEOUT_MS = 3000


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RypsokHTTP]:
    """Two callers; a small body bound; 6 sessions, 2 per caller; 3 POSTs in flight, 2 per
    caller; the metrics port on; the default request ceiling (LIM-H5, 30 s)."""
    http = f"""
metrics_port = {_free_port()}
max_body_bytes = {MAX_BODY}
max_sessions = 6
max_sessions_per_caller = 2
max_requests_in_flight = 3
max_requests_in_flight_per_caller = 2
{CALLERS}
"""
    with rypsok_http(http_config(tmp_path_factory.mktemp("hardening"), http=http), ENV) as running:
        yield running


@pytest.fixture(scope="module")
def cap_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RypsokHTTP]:
    """A connection cap of CAP and a request-head timeout of HEAD_TIMEOUT_MS; no callers."""
    http = f"max_connections = {CAP}\nhead_timeout_ms = {HEAD_TIMEOUT_MS}"
    with rypsok_http(http_config(tmp_path_factory.mktemp("cap"), http=http)) as running:
        yield running


# --- F4: refusals close the connection when the body is unread ----------------------------


def _head(
    port: int,
    *,
    path: str = "/mcp",
    host: str | None = None,
    origin: str | None = None,
    token: str | None = None,
    length: int | None = None,
) -> bytes:
    lines = [
        f"POST {path} HTTP/1.1",
        f"Host: {host or f'127.0.0.1:{port}'}",
        "Content-Type: application/json",
        f"Accept: {ACCEPT}",
    ]
    if origin is not None:
        lines.append(f"Origin: {origin}")
    if token is not None:
        lines.append(f"Authorization: Bearer {token}")
    lines.append(f"Content-Length: {length}" if length else "Transfer-Encoding: chunked")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def _refused_then_closed(port: int, head: bytes, *, chunked: bool) -> tuple[int, float]:
    """Send ``head`` and then an endless body; return the status and the seconds until the
    server ended the connection (EOF or reset; infinity if not within 2 × CLOSED_S)."""
    piece = b"a" * 65536
    if chunked:
        piece = b"%x\r\n%s\r\n" % (len(piece), piece)
    sock = socket.create_connection(("127.0.0.1", port), timeout=2 * CLOSED_S)
    stop = threading.Event()

    def push() -> None:
        with contextlib.suppress(OSError):  # the server closed: what is being tested
            while not stop.is_set():
                sock.sendall(piece)

    sender = threading.Thread(target=push, daemon=True)
    received = b""
    ended = float("inf")
    try:
        sock.sendall(head)
        started = time.monotonic()
        sender.start()
        with contextlib.suppress(TimeoutError):
            try:
                while chunk := sock.recv(65536):
                    received += chunk
            except ConnectionResetError:
                pass
            ended = time.monotonic() - started
    finally:
        stop.set()
        sock.close()
        sender.join(5)
    status = int(received.split(b" ", 2)[1]) if received.startswith(b"HTTP/1.1 ") else 0
    return status, ended


@pytest.mark.parametrize(
    ("case", "status"),
    [
        ("no token", 401),
        ("foreign host", 421),
        ("foreign origin", 403),
        ("body over the bound, streamed", 413),
        ("body over the bound, declared", 413),
        ("another path", 404),
    ],
)
def test_f4_refusal_with_the_body_unread_closes_the_connection(
    server: RypsokHTTP, case: str, status: int
) -> None:
    """REQ-SEC-022: a request refused before its body was read (401, 421, 403, the SDK's 413,
    a 404 off /mcp) is answered with Connection: close, and the server ends the connection
    at once instead of reading an endless body until LIM-H5.

    Proves THR-26.
    """
    port = server.port
    heads = {
        "no token": _head(port),
        "foreign host": _head(port, host="evil.example", token=FULL),
        "foreign origin": _head(port, origin="http://evil.example", token=FULL),
        "body over the bound, streamed": _head(port, token=FULL),
        "body over the bound, declared": _head(port, token=FULL, length=10**15),
        "another path": _head(port, path="/elsewhere", token=FULL),
    }
    got, ended = _refused_then_closed(port, heads[case], chunked="declared" not in case)
    assert got == status
    assert ended < CLOSED_S, f"the connection stayed open after {status}"


def test_f4_connection_kept_when_the_body_was_read(server: RypsokHTTP) -> None:
    """A request served after its whole body keeps its connection (keep-alive is not lost)."""
    with httpx2.Client(timeout=10) as client:
        response = client.post(
            server.url,
            content=modern_body("tools/list"),
            headers=modern_headers("tools/list", token=FULL),
        )
    assert response.status_code == 200
    assert response.headers.get("connection", "").lower() != "close"


# --- F5: the metrics port checks Host and refuses Origin ---------------------------------


@pytest.mark.parametrize(
    ("host", "origin", "status"),
    [
        ("127.0.0.1:{port}", None, 200),
        ("localhost:{port}", None, 200),
        ("evil.example:{port}", None, 421),  # DNS rebinding to the loopback metrics port
        ("127.0.0.1:{port}", "http://evil.example", 403),
        ("127.0.0.1:{port}", "http://127.0.0.1:{port}", 403),  # any Origin
    ],
)
def test_f5_metrics_port_checks_host_and_refuses_origin(
    server: RypsokHTTP, host: str, origin: str | None, status: int
) -> None:
    """REQ-SEC-018: the metrics port accepts the Host values of its bind address and port
    only, and no request carrying an Origin: a rebinding page cannot read the metrics.

    Proves THR-28.
    """
    port = server.metrics_port
    assert port is not None
    headers = {"Host": host.format(port=port)}
    if origin is not None:
        headers["Origin"] = origin.format(port=port)
    with httpx2.Client(timeout=10) as client:
        response = client.get(f"http://127.0.0.1:{port}/metrics", headers=headers)
    assert response.status_code == status
    assert ("rypsok_http_" in response.text) is (status == 200)


# --- F6: no session id in the SDK's log lines --------------------------------------------


def test_f6_a_foreign_session_id_is_not_logged(server: RypsokHTTP) -> None:
    """REQ-OBS-006: when a caller presents another caller's session id the SDK logs the
    rejection; the id itself (a credential of the session) is masked in that line.

    Proves THR-34.
    """
    with httpx2.Client(timeout=10) as client:
        opened = open_session(client, server.url, FULL)
        session = opened.headers["mcp-session-id"]
        foreign = client.post(
            server.url, content=INITIALIZE, headers=legacy_headers(session, SEARCH)
        )
        client.delete(server.url, headers=legacy_headers(session, FULL))
    assert opened.status_code == 200 and foreign.status_code == 404
    deadline = time.monotonic() + 5
    while not any("Rejecting request for session" in line for line in server.lines):
        assert time.monotonic() < deadline, server.stderr_text()
        time.sleep(0.05)
    assert session not in server.stderr_text()
    assert any("session <session id>" in line for line in server.lines)


# --- F1: the per-caller session quota ----------------------------------------------------


def test_f1_one_caller_cannot_hold_every_session(server: RypsokHTTP) -> None:
    """REQ-SEC-024, REQ-SEC-019: beta fills its quota of 2 sessions (of 6) and gets 503 with
    Retry-After and no session; alpha still opens one; a session beta ends frees its place.

    Proves THR-27. Proves THR-29.
    """
    with httpx2.Client(timeout=10) as client:
        beta = [open_session(client, server.url, SEARCH) for _ in range(3)]
        alpha = open_session(client, server.url, FULL)
        first = beta[0].headers["mcp-session-id"]
        client.delete(server.url, headers=legacy_headers(first, SEARCH))
        again = open_session(client, server.url, SEARCH)
        for response, token in ((beta[1], SEARCH), (again, SEARCH), (alpha, FULL)):
            if "mcp-session-id" in response.headers:
                ended = legacy_headers(response.headers["mcp-session-id"], token)
                client.delete(server.url, headers=ended)
    assert [r.status_code for r in beta] == [200, 200, 503]
    assert int(beta[2].headers["retry-after"]) > 0
    assert "mcp-session-id" not in beta[2].headers
    assert alpha.status_code == 200
    assert again.status_code == 200
    refused = server.events("http_session_refused")
    assert refused and refused[-1]["bound"] == "caller"
    assert refused[-1]["max_sessions_per_caller"] == 2


@pytest.fixture(scope="module")
def idle_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RypsokHTTP]:
    """Callers with one session each, expiring after the shortest idle time (10 s)."""
    http = f"max_sessions_per_caller = 1\nsession_idle_s = 10\n{CALLERS}"
    with rypsok_http(http_config(tmp_path_factory.mktemp("idle"), http=http), ENV) as running:
        yield running


def test_f1_an_expired_session_frees_its_place_in_the_quota(idle_server: RypsokHTTP) -> None:
    """REQ-SEC-024: the quota counts live sessions only: once beta's session expired idle,
    beta opens a new one (the count is the SDK's own set of live sessions).

    Proves THR-27.
    """
    with httpx2.Client(timeout=10) as client:
        first = open_session(client, idle_server.url, SEARCH)
        second = open_session(client, idle_server.url, SEARCH)
        opened_at = time.monotonic()
        later = second
        while later.status_code == 503 and time.monotonic() - opened_at < 30:
            time.sleep(1)
            later = open_session(client, idle_server.url, SEARCH)
        gone = client.post(
            idle_server.url,
            content=modern_body("tools/list"),
            headers=legacy_headers(first.headers["mcp-session-id"], SEARCH),
        )
    assert first.status_code == 200
    assert second.status_code == 503
    assert later.status_code == 200
    assert time.monotonic() - opened_at >= 8  # it was the idle expiry that freed the place
    assert gone.status_code == 404


# --- F2: requests in flight --------------------------------------------------------------


def _stalled_post(port: int, token: str) -> socket.socket:
    """A POST whose body stops after a few bytes (it stays in flight until closed)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall(_head(port, token=token, length=1000) + b'{"jsonrpc":')
    return sock


def _tools_list(client: httpx2.Client, server: RypsokHTTP, token: str) -> httpx2.Response:
    return client.post(
        server.url,
        content=modern_body("tools/list"),
        headers=modern_headers("tools/list", token=token),
    )


def test_f2_requests_in_flight_bounded_per_caller_and_in_total(server: RypsokHTTP) -> None:
    """Stalled uploads hold memory: beta may have 2 POSTs in flight, a third is 503 with
    Retry-After while alpha is still served; at 3 in flight in all, alpha is refused too.
    Once the uploads end, requests are served again.

    Proves THR-26. Proves THR-29.
    """
    stalled = [_stalled_post(server.port, SEARCH) for _ in range(2)]
    try:
        time.sleep(0.5)  # the heads are in: the requests are in flight
        with httpx2.Client(timeout=10) as client:
            beta_third = _tools_list(client, server, SEARCH)
            alpha_first = _tools_list(client, server, FULL)
            stalled.append(_stalled_post(server.port, FULL))
            time.sleep(0.5)
            alpha_over_total = _tools_list(client, server, FULL)
    finally:
        for sock in stalled:
            sock.close()
    assert beta_third.status_code == 503 and int(beta_third.headers["retry-after"]) >= 1
    assert alpha_first.status_code == 200
    assert alpha_over_total.status_code == 503
    bounds = [e["bound"] for e in server.events("http_request_refused")]
    assert bounds[-2:] == ["caller", "total"]
    deadline = time.monotonic() + 10
    with httpx2.Client(timeout=10) as client:
        while (served := _tools_list(client, server, SEARCH)).status_code == 503:
            assert time.monotonic() < deadline, "the bound was not released"
            time.sleep(0.1)
    assert served.status_code == 200


# --- F3: connection cap and request-head timeout -----------------------------------------


def test_f3_idle_sockets_over_the_cap_leave_a_client_served(cap_server: RypsokHTTP) -> None:
    """With max_connections = 8, 8 + 24 idle sockets opened before a legitimate request:
    the server keeps at most 8 (the oldest idle ones are closed) and the request is served.

    Proves THR-26. Proves THR-28.
    """
    idle = [socket.create_connection(("127.0.0.1", cap_server.port)) for _ in range(CAP + 24)]
    try:
        time.sleep(0.3)
        with httpx2.Client(timeout=10) as client:
            response = client.post(
                cap_server.url,
                content=modern_body("tools/list"),
                headers=modern_headers("tools/list"),
            )
        readable, _, _ = select.select(idle, [], [], 0.5)
        closed = 0
        for sock in readable:
            try:
                closed += sock.recv(1) == b""
            except ConnectionResetError:
                closed += 1
    finally:
        for sock in idle:
            sock.close()
    assert response.status_code == 200
    assert closed >= 24 + 1  # over the cap, and one more to make room for the client
    assert cap_server.events("http_connections_shed")


def test_f3_request_head_bounded_sooner_than_the_ceiling(cap_server: RypsokHTTP) -> None:
    """REQ-SEC-022: a connection that sends nothing gets 408 at head_timeout_ms (3 s here),
    long before the request ceiling LIM-H5 (30 s).

    Proves THR-26.
    """
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", cap_server.port), timeout=40) as sock:
        received = sock.recv(4096)
    elapsed = time.monotonic() - started
    assert received.startswith(b"HTTP/1.1 408")
    assert HEAD_TIMEOUT_MS / 1000 - 0.5 <= elapsed < 10
