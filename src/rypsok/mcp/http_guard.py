"""ASGI middleware around the SDK's Streamable HTTP app: the listener's protections and bounds.

From the outside in, every HTTP request passes:

1. :class:`RequestCeiling` (REQ-SEC-022): the whole exchange — body, handler, response — ends
   after LIM-H5; with 408 if nothing was sent yet, otherwise the response is ended.
2. :class:`HostOriginGuard` (REQ-SEC-018): Host and Origin checked against the allow lists
   (421 / 403), before authentication, on every path.
3. ``BearerAuthMiddleware`` (:mod:`rypsok.mcp.http_auth`): 401 without a valid token.
4. :class:`SessionBound` (REQ-SEC-024): the SDK refuses a handshake-era session beyond
   ``max_sessions`` with a bare 503; this adds the Retry-After hint, logs and counts it.
5. :class:`CancelOnClosedStream` (REQ-MCP-007): a handshake-era request whose response
   stream closes before its answer is cancelled in its session, as the 2026-07-28 path of
   the SDK already does for its requests.

Each passes ``lifespan`` scopes through untouched.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Final

import anyio
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from rypsok.health.prometheus import MetricFamily, Sample, render
from rypsok.logs import log_event

SESSION_HEADER: Final = b"mcp-session-id"
VERSION_HEADER: Final = b"mcp-protocol-version"
SESSION_RETRY_AFTER_S: Final = 10
"""The Retry-After hint of a refused session: sessions free up on DELETE or when idle."""

# What a request refused or ended at shutdown carries: come back (to another replica) soon.
_GOING_AWAY: Final = ((b"connection", b"close"), (b"retry-after", b"1"))
# How long the last message of a request may take to leave once its ceiling is reached; a
# client that does not read gets its connection closed by the server instead.
_FINAL_SEND_S: Final = 1.0


@dataclass(slots=True)
class HttpCounters:
    """Counters of the HTTP listener, exported next to the core's metrics."""

    timed_out: int = 0
    sessions_refused: int = 0
    unauthenticated: int = 0
    header_refused: dict[str, int] = field(default_factory=lambda: {"host": 0, "origin": 0})

    def families(self) -> list[MetricFamily]:
        """The counters as Prometheus families."""
        return [
            MetricFamily(
                "rypsok_http_requests_timed_out_total",
                "HTTP requests ended at the request ceiling (LIM-H5).",
                "counter",
                (Sample("rypsok_http_requests_timed_out_total", (), self.timed_out),),
            ),
            MetricFamily(
                "rypsok_http_sessions_refused_total",
                "Handshake-era sessions refused at the session bound (LIM-H6).",
                "counter",
                (Sample("rypsok_http_sessions_refused_total", (), self.sessions_refused),),
            ),
            MetricFamily(
                "rypsok_http_unauthenticated_total",
                "HTTP requests refused for a missing or unknown bearer token.",
                "counter",
                (Sample("rypsok_http_unauthenticated_total", (), self.unauthenticated),),
            ),
            MetricFamily(
                "rypsok_http_header_refused_total",
                "HTTP requests refused for their Host or Origin header, by header.",
                "counter",
                tuple(
                    Sample("rypsok_http_header_refused_total", (("header", k),), v)
                    for k, v in sorted(self.header_refused.items())
                ),
            ),
        ]

    def render(self) -> str:
        """The Prometheus text of the counters."""
        return render(self.families())

    def count_unauthenticated(self) -> None:
        """One request refused by authentication."""
        self.unauthenticated += 1


def header(scope: Scope, name: bytes) -> bytes | None:
    """The first value of a request header (names are lower-case in ASGI)."""
    for key, value in scope["headers"]:
        if key == name:
            return bytes(value)
    return None


def is_handshake_era(scope: Scope) -> bool:
    """Whether the SDK routes this request to its handshake-era (session) transport."""
    version = header(scope, VERSION_HEADER)
    return version is None or version.decode("latin-1") in HANDSHAKE_PROTOCOL_VERSIONS


async def _plain(
    send: Send, status: int, text: bytes, extra: Sequence[tuple[bytes, bytes]] = ()
) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(text)).encode()),
                *extra,
            ],
        }
    )
    await send({"type": "http.response.body", "body": text})


class InFlight:
    """The requests being served, so that shutdown can end them (REQ-OPS-002)."""

    def __init__(self) -> None:
        self._scopes: set[anyio.CancelScope] = set()
        self._idle: anyio.Event | None = None
        self._closing = False

    def __len__(self) -> int:
        return len(self._scopes)

    def add(self, scope: anyio.CancelScope) -> None:
        """Track one request's scope while it runs."""
        self._scopes.add(scope)

    def discard(self, scope: anyio.CancelScope) -> None:
        """Stop tracking a finished request."""
        self._scopes.discard(scope)
        if not self._scopes and self._idle is not None:
            self._idle.set()

    async def wait_idle(self) -> None:
        """Return once no request is in flight."""
        while self._scopes:
            self._idle = anyio.Event()
            await self._idle.wait()

    def close(self) -> None:
        """Refuse new requests from now on."""
        self._closing = True

    def closing(self) -> bool:
        """Whether shutdown has begun."""
        return self._closing

    def cancel_all(self) -> None:
        """End every request still in flight; each answers as at its ceiling."""
        self._closing = True
        for scope in list(self._scopes):
            scope.cancel()


class RequestCeiling:
    """Ends every request after ``ceiling_s`` whatever its state (REQ-SEC-022), or at shutdown.

    Cancelling the inner app cancels the request's handler (2026-07-28) or, through
    :class:`CancelOnClosedStream`, the session's handler of it (handshake era). A request
    ended before anything was sent gets 408 at the ceiling and 503 at shutdown; a started
    response is ended where it is.
    """

    def __init__(
        self,
        app: ASGIApp,
        ceiling_s: float,
        counters: HttpCounters,
        logger: logging.Logger,
        in_flight: InFlight,
    ) -> None:
        self.app = app
        self._ceiling_s = ceiling_s
        self._counters = counters
        self._logger = logger
        self._in_flight = in_flight

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Run one request under the ceiling."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if self._in_flight.closing():
            await _plain(send, 503, b"Shutting down\n", _GOING_AWAY)
            return
        started = completed = False

        async def tracked(message: Message) -> None:
            nonlocal started, completed
            if message["type"] == "http.response.start":
                started = True
            elif message["type"] == "http.response.body" and not message.get("more_body"):
                completed = True
            await send(message)

        with anyio.move_on_after(self._ceiling_s) as ceiling:
            self._in_flight.add(ceiling)
            try:
                await self.app(scope, receive, tracked)
            finally:
                self._in_flight.discard(ceiling)
        if not ceiling.cancelled_caught or completed:
            return
        shutdown = self._in_flight.closing()
        if started and scope["method"] == "GET":
            # A session's standalone GET stream: ending it at the ceiling is its normal life,
            # the client opens a new one; not a timed-out request.
            log_event(self._logger, logging.DEBUG, "http_stream_renewed")
        elif not shutdown:
            self._counters.timed_out += 1
            log_event(self._logger, logging.WARNING, "http_request_ceiling", started=started)
        with anyio.move_on_after(_FINAL_SEND_S):
            if started:
                # The status is already on the wire: end the body, the stream is over.
                await send({"type": "http.response.body", "body": b"", "more_body": False})
            elif shutdown:
                await _plain(send, 503, b"Shutting down\n", _GOING_AWAY)
            else:
                await _plain(send, 408, b"Request Timeout\n", [(b"connection", b"close")])


def _host_allowed(value: str, allowed: Sequence[str]) -> bool:
    for entry in allowed:
        if entry.endswith(":*"):
            base, _, port = value.rpartition(":")
            if base == entry[:-2] and port.isdigit():
                return True
        elif value == entry:
            return True
    return False


class HostOriginGuard:
    """Validates Host and Origin before anything else sees the request (REQ-SEC-018).

    Values match exactly, or ``name:*`` matches ``name`` with any numeric port; the SDK is
    given the same lists and checks again on its path. A request without Origin is allowed
    (non-browser clients send none); a browser always sends one on cross-origin requests.
    """

    def __init__(
        self,
        app: ASGIApp,
        hosts: Sequence[str],
        origins: Sequence[str],
        counters: HttpCounters,
        logger: logging.Logger,
    ) -> None:
        self.app = app
        self._hosts = tuple(hosts)
        self._origins = tuple(origins)
        self._counters = counters
        self._logger = logger

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Refuse a request with a Host or Origin outside the lists."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        host = header(scope, b"host")
        if host is None or not _host_allowed(host.decode("latin-1"), self._hosts):
            self._refuse("host")
            await _plain(send, 421, b"Invalid Host header\n")
            return
        origin = header(scope, b"origin")
        if origin is not None and not _host_allowed(origin.decode("latin-1"), self._origins):
            self._refuse("origin")
            await _plain(send, 403, b"Invalid Origin header\n")
            return
        await self.app(scope, receive, send)

    def _refuse(self, which: str) -> None:
        self._counters.header_refused[which] += 1
        # The value itself is not logged: it is whatever the client sent.
        log_event(self._logger, logging.INFO, "http_header_refused", header=which)


class SessionBound:
    """Adds Retry-After to the SDK's 503 at its session bound, and logs and counts it.

    The SDK counts live sessions (it also expires idle ones and forgets deleted ones) and
    answers 503 without a session when a new one would exceed ``max_sessions``; only a
    handshake-era request without a session id can open one, so only those are watched.
    2026-07-28 requests carry no session and are never refused here (REQ-SEC-024).
    """

    def __init__(
        self, app: ASGIApp, limit: int, counters: HttpCounters, logger: logging.Logger
    ) -> None:
        self.app = app
        self._limit = limit
        self._counters = counters
        self._logger = logger

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on; decorate a refusal of a new session."""
        if (
            scope["type"] != "http"
            or header(scope, SESSION_HEADER) is not None
            or not is_handshake_era(scope)
        ):
            await self.app(scope, receive, send)
            return
        refused = False

        async def decorated(message: Message) -> None:
            nonlocal refused
            if message["type"] == "http.response.start" and message["status"] == 503:
                refused = True
                retry = str(SESSION_RETRY_AFTER_S).encode()
                message = {
                    **message,
                    "headers": [*message.get("headers", []), (b"retry-after", retry)],
                }
            await send(message)

        await self.app(scope, receive, decorated)
        if refused:
            self._counters.sessions_refused += 1
            log_event(
                self._logger, logging.WARNING, "http_session_refused", max_sessions=self._limit
            )


class CancelOnClosedStream:
    """Cancels a handshake-era request whose response stream closed before its answer.

    In the SDK's session mode a request runs in the session's task group, not in the HTTP
    request that carried it, so closing the stream does not reach it. rypsok keeps no event
    store, so such a stream can never be resumed and the answer would be lost: the closed
    stream is the cancellation (REQ-MCP-007), and this middleware delivers it as the
    ``notifications/cancelled`` the session understands, posted into the same session with
    the same credentials. The request body is kept (bounded) only to learn the request id.
    """

    def __init__(self, app: ASGIApp, max_body_bytes: int, logger: logging.Logger) -> None:
        self.app = app
        self._max_body = max_body_bytes
        self._logger = logger

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on; cancel it in its session if its answer never left."""
        if (
            scope["type"] != "http"
            or scope["method"] != "POST"
            or header(scope, SESSION_HEADER) is None
            or not is_handshake_era(scope)
        ):
            await self.app(scope, receive, send)
            return
        body = bytearray()
        completed = False

        async def recording() -> Message:
            message = await receive()
            if message["type"] == "http.request" and len(body) <= self._max_body:
                body.extend(message.get("body", b""))
            return message

        async def tracked(message: Message) -> None:
            nonlocal completed
            if message["type"] == "http.response.body" and not message.get("more_body"):
                completed = True
            await send(message)

        try:
            await self.app(scope, recording, tracked)
        finally:
            if not completed:
                with anyio.CancelScope(shield=True), anyio.move_on_after(_FINAL_SEND_S):
                    await self._cancel_in_session(scope, bytes(body))

    async def _cancel_in_session(self, scope: Scope, body: bytes) -> None:
        request_id = _request_id(body)
        if request_id is None:
            return
        notification = json.dumps(
            {
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": request_id, "reason": "response stream closed"},
            }
        ).encode()
        keep = {b"host", SESSION_HEADER, VERSION_HEADER}
        headers = [(k, v) for k, v in scope["headers"] if k in keep]
        headers += [
            (b"content-type", b"application/json"),
            (b"accept", b"application/json, text/event-stream"),
            (b"content-length", str(len(notification)).encode()),
        ]
        synthetic: Scope = {**scope, "headers": headers}
        delivered = False

        async def receive_once() -> Message:
            nonlocal delivered
            if delivered:
                return {"type": "http.disconnect"}
            delivered = True
            return {"type": "http.request", "body": notification, "more_body": False}

        async def discard(message: Message) -> None:
            return None

        await self.app(synthetic, receive_once, discard)
        log_event(self._logger, logging.DEBUG, "http_stream_closed_cancel")


def _request_id(body: bytes) -> str | int | None:
    """The id of a JSON-RPC request (not a notification, not initialize), or None."""
    try:
        message = json.loads(body)
    except (ValueError, RecursionError):
        return None
    if not isinstance(message, dict) or not isinstance(message.get("method"), str):
        return None
    if message["method"] == "initialize":
        return None
    request_id = message.get("id")
    if isinstance(request_id, bool) or not isinstance(request_id, str | int):
        return None
    return request_id


def wrap(app: ASGIApp, *layers: Callable[[ASGIApp], ASGIApp]) -> ASGIApp:
    """``app`` inside ``layers``, the first layer outermost."""
    for layer in reversed(layers):
        app = layer(app)
    return app
