"""ASGI middleware around the SDK's Streamable HTTP app: the listener's protections and bounds.

From the outside in, every HTTP request passes:

1. :class:`CloseUnreadBody`: a response sent before the request body was read closes the
   connection, so that uvicorn does not go on reading and discarding that body.
2. :class:`RequestCeiling` (REQ-SEC-022): the whole exchange — body, handler, response — ends
   after LIM-H5; with 408 if nothing was sent yet, otherwise the response is ended.
3. :class:`HostOriginGuard` (REQ-SEC-018): Host and Origin checked against the allow lists
   (421 / 403), before authentication, on every path.
4. ``BearerAuthMiddleware`` (:mod:`rypsok.mcp.http_auth`): 401 without a valid token.
5. :class:`RequestBound`: POST requests in flight, in total and per caller; beyond, 503.
6. :class:`SessionBound` (REQ-SEC-024): the SDK refuses a handshake-era session beyond
   ``max_sessions``, or beyond the caller's quota (:func:`install_session_quota`), with a
   bare 503; this adds the Retry-After hint, logs and counts it.
7. :class:`CancelOnClosedStream` (REQ-MCP-007): a handshake-era request whose response
   stream closes before its answer is cancelled in its session, as the 2026-07-28 path of
   the SDK already does for its requests.

Each passes ``lifespan`` scopes through untouched. :func:`mask_sdk_session_ids` keeps
session ids out of the SDK's log lines.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Final

import anyio
from mcp.server.auth.middleware.bearer_auth import AuthorizationContext
from mcp.server.streamable_http import StreamableHTTPServerTransport
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from rypsok.health.prometheus import MetricFamily, Sample, render
from rypsok.logs import log_event
from rypsok.mcp.http_auth import CALLER_SCOPE_KEY, Caller

SESSION_HEADER: Final = b"mcp-session-id"
VERSION_HEADER: Final = b"mcp-protocol-version"
SESSION_RETRY_AFTER_S: Final = 10
"""The Retry-After hint of a refused session: sessions free up on DELETE or when idle."""
REQUEST_RETRY_AFTER_S: Final = 1
"""The Retry-After hint of a request refused at the in-flight bound: calls end within seconds."""
RECORDED_BODY_BYTES: Final = 32 * 1024
"""How much of a handshake-era request body :class:`CancelOnClosedStream` keeps to learn its id.

The largest call rypsok accepts is a few KiB (a query of LIM-S1, a URL of LIM-F9, a focus of
200 characters, even all JSON-escaped); a longer body is not a call that could run long, and
keeping all of it would double the memory of every stalled upload.
"""

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
    connections_shed: int = 0
    header_refused: dict[str, int] = field(default_factory=lambda: {"host": 0, "origin": 0})
    requests_refused: dict[str, int] = field(default_factory=lambda: {"caller": 0, "total": 0})

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
                "Handshake-era sessions refused at the session bounds (LIM-H6, per caller).",
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
            MetricFamily(
                "rypsok_http_requests_refused_total",
                "HTTP requests refused at the in-flight bound, by bound (caller or total).",
                "counter",
                tuple(
                    Sample("rypsok_http_requests_refused_total", (("bound", k),), v)
                    for k, v in sorted(self.requests_refused.items())
                ),
            ),
            MetricFamily(
                "rypsok_http_connections_shed_total",
                "Connections closed at the connection cap (max_connections).",
                "counter",
                (Sample("rypsok_http_connections_shed_total", (), self.connections_shed),),
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


def has_body(scope: Scope) -> bool:
    """Whether the request announces a body (HTTP/1.1: Content-Length or Transfer-Encoding)."""
    length = header(scope, b"content-length")
    if length is not None:
        return length.strip() not in (b"", b"0")
    return header(scope, b"transfer-encoding") is not None


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


class CloseUnreadBody:
    """Closes the connection after a response sent before the request body was read.

    uvicorn reads and discards the unread body of a request answered early (401, 421, 403,
    the SDK's 413, a 503, a 404 off ``/mcp``) to keep the connection for the next request: a
    client sending an endless body kept one connection busy, and the server reading, until
    LIM-H5. ``Connection: close`` on such a response makes uvicorn close the connection once
    the response is out instead. A response after the whole body keeps the connection.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on; close the connection if it is answered with its body unread."""
        if scope["type"] != "http" or not has_body(scope):
            await self.app(scope, receive, send)
            return
        read = False

        async def watched() -> Message:
            nonlocal read
            message = await receive()
            if message["type"] != "http.request" or not message.get("more_body", False):
                read = True  # the whole body, or the client is gone
            return message

        async def closing(message: Message) -> None:
            if message["type"] == "http.response.start" and not read:
                kept = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"connection"]
                message = {**message, "headers": [*kept, (b"connection", b"close")]}
            await send(message)

        await self.app(scope, watched, closing)


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


class RequestBound:
    """Bounds the POST requests in flight, in total and per authenticated caller.

    A POST holds its body while it arrives (the SDK buffers it whole, up to
    ``max_body_bytes``) and then its call: without a bound, stalled uploads grow memory
    without limit, and one caller can take the whole service. Beyond either bound the request
    is answered 503 with Retry-After before its body is read. GET streams and DELETE carry no
    body; the session quota bounds those. ``per_caller`` None: no per-caller bound (without
    ``[[http.callers]]`` everyone is the one caller ``local``).
    """

    def __init__(
        self,
        app: ASGIApp,
        total: int,
        per_caller: int | None,
        counters: HttpCounters,
        logger: logging.Logger,
    ) -> None:
        self.app = app
        self._total = total
        self._per_caller = per_caller
        self._counters = counters
        self._logger = logger
        self._in_flight = 0
        self._by_caller: dict[str, int] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve the request within the bounds, or refuse it with 503."""
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        caller = scope.get(CALLER_SCOPE_KEY)
        name = caller.name if isinstance(caller, Caller) else ""
        held = self._by_caller.get(name, 0)
        bound = None
        if self._per_caller is not None and held >= self._per_caller:
            bound = "caller"
        elif self._in_flight >= self._total:
            bound = "total"
        if bound is not None:
            self._counters.requests_refused[bound] += 1
            log_event(self._logger, logging.WARNING, "http_request_refused", bound=bound)
            retry = str(REQUEST_RETRY_AFTER_S).encode()
            await _plain(send, 503, b"Too many requests in flight\n", [(b"retry-after", retry)])
            return
        self._in_flight += 1
        self._by_caller[name] = held + 1
        try:
            await self.app(scope, receive, send)
        finally:
            self._in_flight -= 1
            left = self._by_caller[name] - 1
            if left:
                self._by_caller[name] = left
            else:
                del self._by_caller[name]


@dataclass(slots=True)
class _Admission:
    """What the session quota decided for the request being admitted (see SessionBound)."""

    refused_by_caller: bool = False


# Set by SessionBound around the SDK's handling of a request that may open a session; the
# quota hook, called by the SDK in that same task, marks a refusal as the caller's.
_ADMISSION: ContextVar[_Admission | None] = ContextVar("rypsok_session_admission", default=None)


def install_session_quota(manager: StreamableHTTPSessionManager, per_caller: int) -> None:
    """Refuse a new session to a caller that already holds ``per_caller`` live sessions.

    The check sits where the SDK admits a session: ``_admit_session``, called under the SDK's
    session-creation lock, so concurrent handshakes of one caller cannot overshoot the quota.
    The held sessions are counted in the SDK's own ``_session_owners`` (the identity of the
    caller that opened each live session), which the SDK prunes however a session ends: DELETE,
    idle expiry, a crash, a refused opening request. Refusing there (returning None) makes the
    SDK answer its bare 503, which :class:`SessionBound` decorates.

    Both names are SDK internals of the pinned ``mcp==2.3.0``;
    tests/mcp/test_http_hardening.py fails if they change.
    """
    original = getattr(manager, "_admit_session", None)
    owners = getattr(manager, "_session_owners", None)
    if not callable(original) or not isinstance(owners, dict):
        raise RuntimeError(
            "the MCP SDK's session manager changed (_admit_session, _session_owners): "
            "the per-caller session quota cannot be enforced"
        )

    def admit(requestor: AuthorizationContext | None) -> StreamableHTTPServerTransport | None:
        if requestor is not None:
            held = sum(1 for owner in manager._session_owners.values() if owner == requestor)
            if held >= per_caller:
                admission = _ADMISSION.get()
                if admission is not None:
                    admission.refused_by_caller = True
                return None
        result: StreamableHTTPServerTransport | None = original(requestor)
        return result

    manager._admit_session = admit  # type: ignore[method-assign]


class SessionBound:
    """Adds Retry-After to the SDK's 503 at its session bounds, and logs and counts it.

    The SDK counts live sessions (it also expires idle ones and forgets deleted ones) and
    answers 503 without a session when a new one would exceed ``max_sessions``, or (through
    :func:`install_session_quota`) the caller's quota; only a handshake-era request without a
    session id can open one, so only those are watched. 2026-07-28 requests carry no session
    and are never refused here (REQ-SEC-024).
    """

    def __init__(
        self,
        app: ASGIApp,
        limit: int,
        counters: HttpCounters,
        logger: logging.Logger,
        per_caller: int | None = None,
    ) -> None:
        self.app = app
        self._limit = limit
        self._per_caller = per_caller
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

        admission = _Admission()
        token = _ADMISSION.set(admission)
        try:
            await self.app(scope, receive, decorated)
        finally:
            _ADMISSION.reset(token)
        if refused:
            self._counters.sessions_refused += 1
            log_event(
                self._logger,
                logging.WARNING,
                "http_session_refused",
                bound="caller" if admission.refused_by_caller else "total",
                max_sessions=self._limit,
                max_sessions_per_caller=self._per_caller,
            )


class CancelOnClosedStream:
    """Cancels a handshake-era request whose response stream closed before its answer.

    In the SDK's session mode a request runs in the session's task group, not in the HTTP
    request that carried it, so closing the stream does not reach it. rypsok keeps no event
    store, so such a stream can never be resumed and the answer would be lost: the closed
    stream is the cancellation (REQ-MCP-007), and this middleware delivers it as the
    ``notifications/cancelled`` the session understands, posted into the same session with
    the same credentials. Only a body of at most :data:`RECORDED_BODY_BYTES` is kept, to learn
    the request id; a longer one is dropped as soon as it is longer and its request is not
    cancelled this way (the request ceiling still ends it).
    """

    def __init__(self, app: ASGIApp, max_body_bytes: int, logger: logging.Logger) -> None:
        self.app = app
        self._keep = min(max_body_bytes, RECORDED_BODY_BYTES)
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
        completed = too_long = False

        async def recording() -> Message:
            nonlocal too_long
            message = await receive()
            if message["type"] == "http.request" and not too_long:
                chunk = message.get("body", b"")
                if len(body) + len(chunk) > self._keep:
                    too_long = True
                    body.clear()  # release it now: the upload may go on for a while
                else:
                    body.extend(chunk)
            return message

        async def tracked(message: Message) -> None:
            nonlocal completed
            if message["type"] == "http.response.body" and not message.get("more_body"):
                completed = True
            await send(message)

        try:
            await self.app(scope, recording, tracked)
        finally:
            if not completed and not too_long:
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


# The SDK's session ids (uuid4().hex); 16 or more hex digits also catch a truncated one.
_SESSION_ID: Final = re.compile(r"[0-9A-Fa-f]{16,}")
_SDK_SESSION_LOGGERS: Final = ("mcp.server.streamable_http_manager", "mcp.server.streamable_http")
# rypsok logs its own http_session_refused (with the bound that refused); the SDK's line
# would name max_sessions even when the caller's quota refused.
_SDK_REFUSAL_LINE: Final = "Refusing to open a new session"


class SessionIdMask(logging.Filter):
    """Masks session ids in the SDK's log lines; drops its line about a refused session.

    The SDK logs the full session id a caller presented when it belongs to another caller
    ("Rejecting request for session <id>", WARNING): whoever reads the logs could then use
    that session as its owner. A session id is a bearer credential of its session.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        """Mask the record's ids in place; False only for the SDK's session refusal."""
        if isinstance(record.msg, str) and record.msg.startswith(_SDK_REFUSAL_LINE):
            return False
        try:
            message = record.getMessage()
        except (TypeError, ValueError):
            return True
        masked = _SESSION_ID.sub("<session id>", message)
        if masked != message:
            record.msg, record.args = masked, None
        return True


def mask_sdk_session_ids() -> None:
    """Put :class:`SessionIdMask` on the SDK's session loggers (once)."""
    for name in _SDK_SESSION_LOGGERS:
        sdk_logger = logging.getLogger(name)
        if not any(isinstance(f, SessionIdMask) for f in sdk_logger.filters):
            sdk_logger.addFilter(SessionIdMask())


def wrap(app: ASGIApp, *layers: Callable[[ASGIApp], ASGIApp]) -> ASGIApp:
    """``app`` inside ``layers``, the first layer outermost."""
    for layer in reversed(layers):
        app = layer(app)
    return app
