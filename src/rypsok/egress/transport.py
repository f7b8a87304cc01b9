"""Pinned connections: the address that passed the policy is the address connected to (REQ-SEC-007).

httpcore2 asks its network backend to ``connect_tcp(host, port)``. :class:`PinnedBackend`
never resolves that host: it takes the :class:`Pin` of the current request from a context
variable (set by :func:`pinned` around the request, in the same task), obtains the pin's checked
answer set (resolved once and judged by the policy as a whole) and connects only to those
addresses, then checks that the socket's peer is the address it meant. No pin, or a pin for
another host or port, refuses the connection: nothing unpinned ever connects. TLS is then
started by httpcore2 with the ORIGINAL host name as SNI and for the certificate check, and
TLS failures are reported as ``tls_failure``.

httpcore2 reads no environment, so proxy variables are never used. The one proxy rypsok knows
is ``[egress] engine_proxy`` (REQ-RES-008), used by the engine profile only: its connection is
pinned like any other, to the proxy's checked addresses, with a :class:`Pin` whose ``failure``
reason (``proxy_failure``) replaces the reasons of failing to reach it. The TLS session to the
engine is then started through the tunnel, verified against the engine's host name; a tunnel
the peer closes during that handshake is also ``proxy_failure`` (the proxy hung up after
accepting CONNECT), while a certificate the engine presents and fails stays ``tls_failure``.
"""

from __future__ import annotations

import ipaddress
import select
import socket
import ssl
from collections.abc import Awaitable, Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Final

import anyio
import httpcore2

from rypsok.egress.addresses import IPAddress
from rypsok.egress.errors import EgressError, EgressReason

AddressSource = Callable[[float], Awaitable[tuple[IPAddress, ...]]]


class Pin:
    """The destination of one request: origin host and port, and its checked answer set.

    ``source(timeout_s)`` resolves the host and judges the complete answer set; it runs at
    most once per pin, when the first connection of the request is opened.

    ``failure``, when set, is the one reason reported for every failure to reach this
    destination that is not a policy refusal (lookup, connect, connect timeout, and the first
    TLS handshake when ``own_tls``): the engine proxy's pin sets ``proxy_failure`` so that the
    operator is pointed at ``[egress] engine_proxy`` rather than at an engine. ``own_tls``
    says that the first TLS handshake on the connection is with this destination itself (an
    https proxy); a later one (the engine's, through the tunnel) keeps its own reasons.
    """

    def __init__(
        self,
        host: str,
        port: int,
        source: AddressSource,
        *,
        failure: EgressReason | None = None,
        own_tls: bool = False,
    ) -> None:
        self.host = host
        self.port = port
        self.failure = failure
        self.own_tls = own_tls
        self._source = source
        self._addresses: tuple[IPAddress, ...] | None = None

    async def addresses(self, timeout_s: float) -> tuple[IPAddress, ...]:
        """The checked addresses, resolved on first use."""
        if self._addresses is None:
            self._addresses = await self._source(timeout_s)
        return self._addresses


_CURRENT_PIN: ContextVar[Pin | None] = ContextVar("rypsok_egress_pin", default=None)

# A lookup or connection without a caller timeout still ends (the total deadline bounds it
# too); this only keeps the backend's own arithmetic finite.
_FALLBACK_CONNECT_S: Final = 30.0


@contextmanager
def pinned(pin: Pin) -> Iterator[None]:
    """Make ``pin`` the destination of every connection opened by this task inside the block."""
    token = _CURRENT_PIN.set(pin)
    try:
        yield
    finally:
        _CURRENT_PIN.reset(token)


def peer_address(stream: httpcore2.AsyncNetworkStream) -> IPAddress | None:
    """The remote address a network stream is connected to, or None when unknown."""
    try:
        info = stream.get_extra_info("server_addr")
        return ipaddress.ip_address(str(info[0]).split("%", 1)[0])
    except (TypeError, ValueError, IndexError, KeyError):
        return None


def _is_readable(sock: socket.socket | None) -> bool:
    """Whether a pooled connection has something to read: at rest, that means closed by the peer."""
    if sock is None or sock.fileno() == -1:
        return True
    poller = select.poll()
    poller.register(sock, select.POLLIN)
    return bool(poller.poll(0))


def _peer_closed(error: BaseException) -> bool:
    """Whether a failed handshake ended because the peer closed or reset the connection."""
    cause = error.__cause__ or error.__context__
    return isinstance(
        error if cause is None else cause,
        (
            anyio.EndOfStream,
            anyio.BrokenResourceError,
            ssl.SSLEOFError,
            ssl.SSLZeroReturnError,
            ConnectionError,
        ),
    )


class _GuardedStream(httpcore2.AsyncNetworkStream):
    """A connected stream whose TLS failures are reported as ``tls_failure``.

    ``failure`` replaces the reasons of this stream's own handshake (an https engine proxy's:
    ``proxy_failure``). The stream a handshake returns is guarded with the default reasons,
    so a second handshake through it (the engine's TLS inside the proxy's) is the engine's
    ``tls_failure``. ``closed`` (the engine proxy's ``proxy_failure``) is reported instead
    when any handshake on the connection fails because the peer closed it: through a tunnel,
    that is the proxy hanging up right after accepting CONNECT, not a certificate problem.

    It also answers httpcore2's ``get_extra_info`` from values read once: the pool asks every
    pooled connection whether it is readable for every request, and anyio builds its table
    of attributes anew for each question.
    """

    def __init__(
        self,
        inner: httpcore2.AsyncNetworkStream,
        sock: socket.socket | None,
        failure: EgressReason | None = None,
        closed: EgressReason | None = None,
    ) -> None:
        self._inner = inner
        self._socket = sock
        self._failure = failure
        self._closed = closed
        self._server_addr: Any = None

    # The timeout parameters below are httpcore2's interface, not a choice (ASYNC109).
    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:  # noqa: ASYNC109
        return await self._inner.read(max_bytes, timeout)

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:  # noqa: ASYNC109
        await self._inner.write(buffer, timeout)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,  # noqa: ASYNC109
    ) -> httpcore2.AsyncNetworkStream:
        try:
            stream = await self._inner.start_tls(ssl_context, server_hostname, timeout)
        except httpcore2.ConnectTimeout:
            raise EgressError(self._failure or EgressReason.TIMEOUT) from None
        except (httpcore2.ConnectError, ssl.SSLError, OSError) as exc:
            closed = self._closed is not None and _peer_closed(exc)
            reason = self._failure or (self._closed if closed else None)
            raise EgressError(reason or EgressReason.TLS_FAILURE) from None
        return _GuardedStream(stream, self._socket, closed=self._closed)

    def get_extra_info(self, info: str) -> Any:
        if info == "is_readable":
            return _is_readable(self._socket)
        if info == "socket":
            return self._socket
        if info == "server_addr":
            if self._server_addr is None:
                self._server_addr = self._inner.get_extra_info(info)
            return self._server_addr
        return self._inner.get_extra_info(info)


class PinnedBackend(httpcore2.AsyncNetworkBackend):
    """A network backend that connects only to the checked addresses of the current pin."""

    def __init__(self) -> None:
        self._inner = httpcore2.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        """Connect to the first reachable checked address of the pinned destination."""
        pin = _CURRENT_PIN.get()
        if pin is None or pin.host != host or pin.port != port:
            raise EgressError(EgressReason.CONNECT_FAILED)
        try:
            stream = await self._connect_pinned(pin, timeout, local_address, socket_options)
        except EgressError as error:
            if pin.failure is None or error.is_policy:
                raise
            failure = EgressError(pin.failure)
        else:
            own = pin.failure if pin.own_tls else None
            return _GuardedStream(stream, stream.get_extra_info("socket"), own, pin.failure)
        raise failure  # outside the handler: no chained context

    async def _connect_pinned(
        self,
        pin: Pin,
        timeout: float | None,  # noqa: ASYNC109
        local_address: str | None,
        socket_options: Iterable[Any] | None,
    ) -> httpcore2.AsyncNetworkStream:
        port = pin.port
        budget = timeout if timeout is not None and timeout > 0 else _FALLBACK_CONNECT_S
        addresses = await pin.addresses(budget)
        deadline = anyio.current_time() + budget
        timed_out = False
        for index, address in enumerate(addresses):
            left = deadline - anyio.current_time()
            if left <= 0:
                timed_out = True
                break
            # Share what is left between the addresses still to try, so one black hole
            # does not eat the whole connect timeout.
            attempt = left / (len(addresses) - index)
            try:
                stream = await self._inner.connect_tcp(
                    str(address),
                    port,
                    timeout=attempt,
                    local_address=local_address,
                    socket_options=socket_options,
                )
            except httpcore2.ConnectTimeout:
                timed_out = True
                continue
            except (httpcore2.ConnectError, OSError):
                continue
            if peer_address(stream) != address:
                await stream.aclose()
                raise EgressError(EgressReason.CONNECT_FAILED)
            return stream
        raise EgressError(EgressReason.TIMEOUT if timed_out else EgressReason.CONNECT_FAILED)

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,  # noqa: ASYNC109
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        """Never: egress goes to checked TCP destinations only."""
        raise EgressError(EgressReason.CONNECT_FAILED)

    async def sleep(self, seconds: float) -> None:
        """Sleep (httpcore2 uses it between retries, which are off)."""
        await anyio.sleep(seconds)


def default_ssl_context() -> ssl.SSLContext:
    """A verifying client context: system trust, TLS 1.2 or newer, no key log."""
    context = httpcore2.default_ssl_context()
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.check_hostname = True
    context.verify_mode = ssl.CERT_REQUIRED
    context.keylog_filename = None  # type: ignore[assignment]  # never honour SSLKEYLOGFILE
    return context


def require_verifying(context: ssl.SSLContext) -> ssl.SSLContext:
    """Refuse a context that would not verify the certificate against the host name."""
    if context.verify_mode != ssl.CERT_REQUIRED or not context.check_hostname:
        raise ValueError("the egress TLS context must verify certificates and host names")
    return context
