"""Serving MCP over Streamable HTTP (REQ-MCP-003, REQ-SEC-018/019/022/024, REQ-OPS-002).

One endpoint, ``/mcp``, serves the handshake revisions (sessions, kept in this process) and
the sessionless 2026-07-28 revision, routed per request by the SDK. The SDK app runs in SSE
mode (``json_response=False``): only there does a closed response stream cancel the call
(REQ-MCP-007); quick answers are still plain JSON. The HTTP+SSE transport of 2024-11-05 is
not offered: nothing serves its ``/sse`` and ``/messages`` endpoints.

uvicorn serves HTTP/1.1 only (h11): there is no HTTP/2, so the per-connection stream bound
LIM-H4 has nothing to bound. The request head, which uvicorn itself does not time, has its own
shorter bound (``head_timeout_ms``, at most LIM-H5): a connection whose head is not complete
by then gets 408. Open connections are capped (``max_connections``): over the cap the oldest
connection still waiting for a request is closed, so idle sockets cannot lock clients out,
and the soft open-file limit is raised to the hard one at start.

Start-up refuses, before anything listens: a non-loopback bind without ``[[http.callers]]``,
a wildcard bind without ``[http] allowed_hosts``, and a caller whose token reference gives
no usable token. SIGTERM or SIGINT stops accepting, gives calls in flight until
:data:`DRAIN_S` to finish, cancels the rest, and the process exits 0 within LIM-O1.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import os
import resource
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, ClassVar, Final

import anyio
import uvicorn
from anyio.abc import TaskStatus
from mcp.server import Server
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import ASGIApp, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

from rypsok.app import ConfigurationError, runtime
from rypsok.config.limits import limit
from rypsok.config.schema import HttpSettings, Settings
from rypsok.health.metrics import Metrics
from rypsok.health.prometheus import CONTENT_TYPE
from rypsok.logs import log_event
from rypsok.mcp.http_auth import Authenticator, BearerAuthMiddleware, CallerConfigError, caller_of
from rypsok.mcp.http_guard import (
    CancelOnClosedStream,
    CloseUnreadBody,
    HostOriginGuard,
    HttpCounters,
    InFlight,
    RequestBound,
    RequestCeiling,
    SessionBound,
    install_session_quota,
    mask_sdk_session_ids,
    wrap,
)
from rypsok.mcp.server import build_server

MCP_PATH: Final = "/mcp"
DRAIN_S: Final = 0.75
"""Seconds calls in flight get to finish after SIGTERM before they are cancelled (< LIM-O1)."""
# uvicorn's own limit on the drain, a backstop only: rypsok ends the requests itself after
# DRAIN_S, in order (408/503 or the end of the stream) rather than by uvicorn's task kill.
_UVICORN_DRAIN_S: Final = 2

# The last resort after a signal: leave by LIM-O1 even if something does not end.
_EXIT_DEADLINE_S: Final = limit("LIM-O1") / 1000 - 0.2
_KEEPALIVE_S: Final = 5
_WILDCARDS: Final = frozenset({"0.0.0.0", "::", ""})  # noqa: S104 - names, not a bind
# The operator port serves one small page to a scraper or a health check: a few connections.
_METRICS_MAX_CONNECTIONS: Final = 32
# File descriptors the process needs besides client connections: engine connections
# (LIM-C1), fetches (LIM-C3), extraction workers' pipes, Redis, the listening sockets, logs.
FD_RESERVE: Final = 256
# When the hard open-file limit is unlimited, the soft one is raised this far (the kernel's
# nr_open refuses "unlimited").
_NOFILE_TARGET: Final = 65536
# At most one log line a minute about shed connections: a flood must not flood the logs too.
_SHED_LOG_INTERVAL_S: Final = 60.0


@dataclass(frozen=True, slots=True)
class ListenerPolicy:
    """What the listener accepts: where it binds and which Host and Origin values."""

    bind: str
    port: int
    loopback: bool
    allowed_hosts: tuple[str, ...]
    allowed_origins: tuple[str, ...]


def is_loopback(bind: str) -> bool:
    """Whether ``bind`` is a loopback address (or the name ``localhost``)."""
    if bind.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(bind.strip("[]")).is_loopback
    except ValueError:
        return False


def check_listener(http: HttpSettings) -> None:
    """Refuse configurations that would expose the service unprotected (REQ-SEC-018)."""
    if not is_loopback(http.bind) and not http.callers:
        raise ConfigurationError(
            f"[http] bind = {http.bind!r} is not a loopback address: authentication is "
            "required off loopback, configure at least one [[http.callers]] with "
            "token_env or token_file"
        )
    if http.bind in _WILDCARDS and not http.allowed_hosts:
        raise ConfigurationError(
            f"[http] bind = {http.bind!r} listens on every address: list the Host values "
            'clients use in [http] allowed_hosts (e.g. "rypsok.example.org:8000")'
        )


def _host_names(bind: str) -> list[str]:
    if bind.lower() == "localhost":
        return ["127.0.0.1", "localhost", "[::1]"]
    try:
        address = ipaddress.ip_address(bind.strip("[]"))
    except ValueError:
        return [bind.lower()]
    text = f"[{address}]" if address.version == 6 else str(address)
    if address.is_loopback:
        return [text, "localhost"]
    return [text]


def listener_policy(http: HttpSettings, port: int) -> ListenerPolicy:
    """The policy for ``http`` listening on ``port`` (the actual port when 0 was asked)."""
    check_listener(http)
    hosts = list(http.allowed_hosts)
    if not hosts:
        for name in _host_names(http.bind):
            hosts.append(f"{name}:{port}")
            if port == 80:
                hosts.append(name)  # clients leave the default port out of Host
    origins = list(http.allowed_origins)
    if not origins:
        origins = [f"{scheme}://{host}" for host in hosts for scheme in ("http", "https")]
    return ListenerPolicy(
        bind=http.bind,
        port=port,
        loopback=is_loopback(http.bind),
        allowed_hosts=tuple(hosts),
        allowed_origins=tuple(origins),
    )


def metrics_hosts(http: HttpSettings, port: int) -> tuple[str, ...]:
    """The Host values the metrics port accepts (``port`` is its actual port).

    ``metrics_allowed_hosts`` when set; otherwise the names of the bind address with the
    metrics port, and for a wildcard bind the loopback names (a wildcard includes loopback;
    other names of the host are the operator's to list).
    """
    if http.metrics_allowed_hosts:
        return tuple(http.metrics_allowed_hosts)
    if http.bind in _WILDCARDS:
        names = ["127.0.0.1", "localhost", "[::1]"]
    else:
        names = _host_names(http.bind)
    return tuple(f"{name}:{port}" for name in names)


def raise_open_file_limit() -> int:
    """Raise the soft open-file limit to the hard one; return the soft limit in force.

    Every connection is a file descriptor: at the usual soft limit of 1024 a connection flood
    starves the accept loop (asyncio logs "socket.accept() out of system resource" for every
    attempt) before the connection cap can act.
    """
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = _NOFILE_TARGET if hard == resource.RLIM_INFINITY else hard
    if soft != resource.RLIM_INFINITY and soft < target:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    return sys.maxsize if soft == resource.RLIM_INFINITY else soft


def _listen(bind: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in bind else socket.AF_INET
    # IPPROTO_TCP explicitly: asyncio sets TCP_NODELAY only on sockets that say they are TCP,
    # and with Nagle on, a response written as head then body waits ~40 ms for a delayed ACK.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((bind.strip("[]"), port))
        sock.listen(2048)
        sock.set_inheritable(True)
    except OSError as exc:
        sock.close()
        raise ConfigurationError(
            f"[http] bind/port: cannot listen on {bind}:{port}: {exc.strerror or exc}"
        ) from None
    return sock


def bounded_h11(
    head_timeout_s: float,
    max_connections: int | None = None,
    on_shed: Callable[[], None] | None = None,
) -> type[H11Protocol]:
    """uvicorn's h11 protocol, with the request head bounded and the connections capped.

    uvicorn times idle keep-alive connections but not a request head that arrives slowly,
    nor a new connection that sends nothing: both are answered 408 and closed after
    ``head_timeout_s`` (REQ-SEC-022). The timer is armed when a connection opens and after
    each response, and disarmed once a request head completes.

    With ``max_connections``, a connection that would exceed it makes room by closing the
    oldest connection that is waiting for a request (no request head yet, or idle between
    requests); when every other connection is serving a request, the new one is answered 503
    and closed. Idle sockets, the cheapest flood, therefore cannot lock out a client that
    sends its request at once. ``on_shed`` is called for each connection closed so.
    """

    class BoundedH11Protocol(H11Protocol):
        head_timeout: ClassVar[float] = head_timeout_s
        cap: ClassVar[int | None] = max_connections
        # The open connections of this listener, oldest first (a dict keeps insertion order).
        open_connections: ClassVar[dict[BoundedH11Protocol, None]] = {}
        _head_timer: asyncio.TimerHandle | None = None
        _armed_for: object = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self.open_connections[self] = None
            if self.cap is not None and len(self.open_connections) > self.cap:
                self._shed_one()
                if transport.is_closing():
                    return
            self._arm()

        def _waiting(self) -> bool:
            # uvicorn's own test for "no request being served" (see H11Protocol.shutdown).
            return self.cycle is None or self.cycle.response_complete

        def _shed_one(self) -> None:
            waiting = (
                c for c in self.open_connections if c._waiting() and not c.transport.is_closing()
            )
            victim = next(waiting, self)
            self.open_connections.pop(victim, None)
            if on_shed is not None:
                on_shed()
            if victim is self:
                # Nothing else could be closed: tell this client to come back.
                self.transport.write(
                    b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\n"
                    b"retry-after: 1\r\nconnection: close\r\n\r\n"
                )
            victim.transport.close()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self._head_timer is not None and self.cycle is not self._armed_for:
                self._disarm()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if self.cycle is None or self.cycle.response_complete:
                self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self.open_connections.pop(self, None)
            self._disarm()
            super().connection_lost(exc)

        def _arm(self) -> None:
            self._disarm()
            self._armed_for = self.cycle
            self._head_timer = self.loop.call_later(self.head_timeout, self._head_timed_out)

        def _disarm(self) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None

        def _head_timed_out(self) -> None:
            self._head_timer = None
            if self.cycle is not self._armed_for or self.transport.is_closing():
                return
            self.transport.write(
                b"HTTP/1.1 408 Request Timeout\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
            )
            self.transport.close()

    return BoundedH11Protocol


class _Server(uvicorn.Server):
    """uvicorn's server without its own signal handling: rypsok's task watches the signals.

    uvicorn would re-raise a captured SIGTERM after shutdown, killing the process with
    -15 instead of exiting 0 (REQ-OPS-002).
    """

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


def _metrics_app(
    metrics: Metrics, counters: HttpCounters, hosts: tuple[str, ...], logger: logging.Logger
) -> ASGIApp:
    """The operator port: ``/metrics`` behind the same Host check as the service.

    Without it a web page could read the metrics of a loopback service by DNS rebinding
    (REQ-SEC-018). Every Origin is refused: a scraper or health check sends none, a browser
    page reading metrics cross-origin has no business there.
    """

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        if scope["path"] != "/metrics":
            status, body, kind = 404, b"not found\n", b"text/plain"
        elif scope["method"] not in ("GET", "HEAD"):
            status, body, kind = 405, b"method not allowed\n", b"text/plain"
        else:
            text = metrics.render_prometheus() + counters.render()
            status, body, kind = 200, text.encode(), CONTENT_TYPE.encode()
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [(b"content-type", kind), (b"content-length", str(len(body)).encode())],
            }
        )
        await send(
            {"type": "http.response.body", "body": b"" if scope["method"] == "HEAD" else body}
        )

    return wrap(
        app,
        CloseUnreadBody,
        lambda inner: HostOriginGuard(inner, hosts, (), counters, logger),
    )


def build_app(
    server: Server[Any],
    settings: Settings,
    policy: ListenerPolicy,
    authenticator: Authenticator,
    counters: HttpCounters,
    logger: logging.Logger,
    in_flight: InFlight,
) -> ASGIApp:
    """The ASGI app: the SDK's Streamable HTTP app inside rypsok's middleware."""
    http = settings.http
    # Per-caller bounds only when callers authenticate: otherwise everyone is ``local``.
    per_caller = authenticator.required
    sdk_app = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        json_response=False,
        # Handshake-era sessions live in this process (sticky routing across replicas, see
        # docs/http.md): they give those clients cancellation by notifications/cancelled,
        # the GET stream and session binding to the caller. 2026-07-28 is sessionless.
        stateless_http=False,
        max_request_body_size=http.max_body_bytes,
        session_idle_timeout=http.session_idle_s,
        max_sessions=http.max_sessions,
        # Always explicit: the SDK turns its own check off for non-loopback binds.
        transport_security=TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=list(policy.allowed_hosts),
            allowed_origins=list(policy.allowed_origins),
        ),
        host=policy.bind,
    )
    sessions_per_caller = http.sessions_per_caller if per_caller else None
    if sessions_per_caller is not None:
        install_session_quota(server.session_manager, sessions_per_caller)
    return wrap(
        sdk_app,
        CloseUnreadBody,
        lambda app: RequestCeiling(
            app, http.request_ceiling_ms / 1000, counters, logger, in_flight
        ),
        lambda app: HostOriginGuard(
            app, policy.allowed_hosts, policy.allowed_origins, counters, logger
        ),
        lambda app: BearerAuthMiddleware(
            app, authenticator, logger, on_refused=counters.count_unauthenticated
        ),
        lambda app: RequestBound(
            app,
            http.max_requests_in_flight,
            http.requests_in_flight_per_caller if per_caller else None,
            counters,
            logger,
        ),
        lambda app: SessionBound(
            app, http.max_sessions, counters, logger, per_caller=sessions_per_caller
        ),
        lambda app: CancelOnClosedStream(app, http.max_body_bytes, logger),
    )


def _shed_reporter(counters: HttpCounters, logger: logging.Logger) -> Callable[[], None]:
    """Counts each connection shed at the cap; logs at most once a minute, with the count."""
    last_logged = -_SHED_LOG_INTERVAL_S
    unlogged = 0

    def shed() -> None:
        nonlocal last_logged, unlogged
        counters.connections_shed += 1
        unlogged += 1
        now = time.monotonic()
        if now - last_logged >= _SHED_LOG_INTERVAL_S:
            log_event(logger, logging.WARNING, "http_connections_shed", count=unlogged)
            last_logged, unlogged = now, 0

    return shed


def _uvicorn_config(
    app: ASGIApp,
    settings: Settings,
    *,
    lifespan: bool,
    max_connections: int,
    on_shed: Callable[[], None],
) -> uvicorn.Config:
    http = settings.http
    head_timeout_s = min(http.head_timeout_ms, http.request_ceiling_ms) / 1000
    return uvicorn.Config(
        app,
        http=bounded_h11(head_timeout_s, max_connections, on_shed),
        ws="none",
        lifespan="on" if lifespan else "off",
        log_config=None,
        access_log=False,
        proxy_headers=False,
        server_header=False,
        timeout_keep_alive=_KEEPALIVE_S,
        timeout_graceful_shutdown=_UVICORN_DRAIN_S,
    )


def _exit_soon() -> None:
    """Leave at LIM-O1 even if the graceful path hangs (a thread that cannot be cancelled)."""

    def leave() -> None:
        logging.shutdown()
        sys.stderr.flush()
        os._exit(0)

    timer = threading.Timer(_EXIT_DEADLINE_S, leave)
    timer.daemon = True
    timer.start()


async def _serve(
    settings: Settings,
    logger: logging.Logger,
    sockets: tuple[socket.socket, socket.socket | None],
    policy: ListenerPolicy,
    authenticator: Authenticator,
    open_files: int,
) -> None:
    service_socket, metrics_socket = sockets
    metrics = Metrics()
    counters = HttpCounters()
    in_flight = InFlight()
    shed = _shed_reporter(counters, logger)
    http = settings.http
    async with runtime(settings, logger, metrics=metrics) as services:
        server = build_server(
            services,
            structured_content=settings.service.structured_content,
            caller_of=caller_of,
        )
        app = build_app(server, settings, policy, authenticator, counters, logger, in_flight)
        servers = [
            _Server(
                _uvicorn_config(
                    app,
                    settings,
                    lifespan=True,
                    max_connections=http.max_connections,
                    on_shed=shed,
                )
            )
        ]
        if metrics_socket is not None:
            metrics_port = metrics_socket.getsockname()[1]
            metrics_config = _uvicorn_config(
                _metrics_app(metrics, counters, metrics_hosts(http, metrics_port), logger),
                settings,
                lifespan=False,
                max_connections=_METRICS_MAX_CONNECTIONS,
                on_shed=shed,
            )
            servers.append(_Server(metrics_config))
        if http.max_connections + _METRICS_MAX_CONNECTIONS + FD_RESERVE > open_files:
            log_event(
                logger,
                logging.WARNING,
                "http_open_file_limit",
                open_files=open_files,
                max_connections=http.max_connections,
            )
        async with anyio.create_task_group() as group:
            group.start_soon(services.warm_up)  # the core loads while the listener starts

            async def drain() -> None:
                # Calls in flight get DRAIN_S to finish, then are ended, each with its
                # outbound work; uvicorn meanwhile stops accepting and closes idle connections.
                with anyio.move_on_after(DRAIN_S):
                    await in_flight.wait_idle()
                in_flight.cancel_all()
                log_event(logger, logging.INFO, "drained", ended=len(in_flight))

            async def watch_signals(*, task_status: TaskStatus[None]) -> None:
                with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
                    # Started only once the handlers are in place: "listening" is logged after
                    # this, so a signal that follows it can never meet the default handler.
                    task_status.started()
                    async for signum in signals:
                        log_event(
                            logger, logging.INFO, "shutdown", cause=signal.Signals(signum).name
                        )
                        if in_flight.closing():  # a second signal: no more waiting
                            in_flight.cancel_all()
                            continue
                        in_flight.close()
                        _exit_soon()
                        for each in servers:
                            each.should_exit = True
                        group.start_soon(drain)

            await group.start(watch_signals)
            log_event(
                logger,
                logging.INFO,
                "listening",
                transport="http",
                bind=policy.bind,
                port=policy.port,
                path=MCP_PATH,
                authentication=authenticator.required,
                metrics_port=metrics_socket.getsockname()[1] if metrics_socket else None,
                max_connections=http.max_connections,
                open_files=open_files,
            )
            async with anyio.create_task_group() as serving:
                serving.start_soon(servers[0].serve, [service_socket])
                if metrics_socket is not None:
                    serving.start_soon(servers[1].serve, [metrics_socket])
            group.cancel_scope.cancel()


def check_http(http: HttpSettings) -> Authenticator:
    """The start-up checks of the HTTP service, without listening (``rypsok check`` runs them).

    Raises :class:`ConfigurationError` for an unprotected listener or a caller whose token
    reference gives no usable token.
    """
    check_listener(http)
    try:
        return Authenticator.from_settings(http.callers)
    except CallerConfigError as exc:
        raise ConfigurationError(str(exc)) from None


def serve_http(settings: Settings, logger: logging.Logger) -> int:
    """Serve MCP over Streamable HTTP until SIGTERM or SIGINT; returns the exit code."""
    http = settings.http
    authenticator = check_http(http)
    mask_sdk_session_ids()
    open_files = raise_open_file_limit()
    service_socket = _listen(http.bind, http.port)
    metrics_socket = None
    if http.metrics_port is not None:
        try:
            metrics_socket = _listen(http.bind, http.metrics_port)
        except ConfigurationError:
            service_socket.close()
            raise
    policy = listener_policy(http, service_socket.getsockname()[1])
    anyio.run(
        _serve,
        settings,
        logger,
        (service_socket, metrics_socket),
        policy,
        authenticator,
        open_files,
    )
    log_event(logger, logging.INFO, "stopped", transport="http")
    return 0
