"""Pinned connections: the address that passed the policy is the address connected to (REQ-SEC-007).

httpcore2 asks its network backend to ``connect_tcp(host, port)``. :class:`PinnedBackend`
never resolves that host: it takes the :class:`Pin` of the current request from a context
variable (set by :func:`pinned` around the request, in the same task), obtains the pin's checked
answer set (resolved once and judged by the policy as a whole) and connects only to those
addresses, then checks that the socket's peer is the address it meant. No pin, or a pin for
another host or port, refuses the connection: nothing unpinned ever connects. TLS is then
started by httpcore2 with the ORIGINAL host name as SNI and for the certificate check, and
TLS failures are reported as ``tls_failure``.

No proxy is ever used: the pools are built without one and httpcore2 reads no environment.
"""

from __future__ import annotations

import ipaddress
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
    """

    def __init__(self, host: str, port: int, source: AddressSource) -> None:
        self.host = host
        self.port = port
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


class _TLSGuardStream(httpcore2.AsyncNetworkStream):
    """A connected TCP stream whose TLS failures are reported as ``tls_failure``."""

    def __init__(self, inner: httpcore2.AsyncNetworkStream) -> None:
        self._inner = inner

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
            return await self._inner.start_tls(ssl_context, server_hostname, timeout)
        except httpcore2.ConnectTimeout:
            raise EgressError(EgressReason.TIMEOUT) from None
        except (httpcore2.ConnectError, ssl.SSLError, OSError):
            raise EgressError(EgressReason.TLS_FAILURE) from None

    def get_extra_info(self, info: str) -> Any:
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
            return _TLSGuardStream(stream)
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
