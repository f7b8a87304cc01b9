"""One bounded HTTP exchange over httpcore2 (REQ-SEC-010, REQ-SEC-011, REQ-SEC-013).

:func:`exchange` sends one request, reads the status and headers (bounded in count and size),
streams the raw body, decodes it with :class:`~rypsok.egress.decoding.BoundedDecoder` and
counts both the raw and the decoded bytes as they arrive; Content-Length is never trusted.
Beyond either bound the response is refused (``too_large``), or, with
``on_excess="truncate"`` (robots.txt, RFC 9309 section 2.5), reading stops there and the first
``max_bytes`` decoded bytes are returned with ``truncated`` set. The body is held once: chunks
go into one buffer whose bytes are handed on without a final copy. It follows no redirect,
keeps no cookie and never retries. Every httpcore2 failure becomes an :class:`EgressError`;
cancellation is never caught, and the response is closed (its connection closed unless the
body was read to the end) whatever happens.

The total deadline is the caller's: it wraps :func:`exchange` in ``anyio.fail_after``.
"""

from __future__ import annotations

import contextlib
import io
import ssl
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final, Literal, Protocol

import anyio
import httpcore2

from rypsok.egress.addresses import IPAddress
from rypsok.egress.decoding import BoundedDecoder
from rypsok.egress.errors import EgressError, EgressReason
from rypsok.egress.transport import peer_address

MAX_HEADER_COUNT: Final = 128
MAX_HEADER_BYTES: Final = 64 * 1024
_CLOSE_GRACE_S: Final = 2.0  # closing a socket never waits longer than this
_DROPPED_HEADERS: Final = frozenset({"set-cookie", "set-cookie2"})  # no cookies are kept

Excess = Literal["refuse", "truncate"]
"""What a body beyond its bound gets: ``too_large``, or cut to its first ``max_bytes`` bytes."""


class Sender(Protocol):
    """An httpcore2 connection or pool."""

    async def handle_async_request(self, request: httpcore2.Request) -> httpcore2.Response:
        """Send a request and return its streaming response."""
        ...


@dataclass(frozen=True, slots=True)
class Exchange:
    """What one request brought back: decoded, bounded, with the peer connected to.

    ``truncated``: the body went on beyond the bound and only its first bytes were read
    (``on_excess="truncate"`` only).
    """

    status: int
    headers: Mapping[str, str]
    body: bytes
    peer: IPAddress | None
    truncated: bool = False


def wire_limit(max_bytes: int) -> int:
    """The raw bytes read for a decoded bound: room for incompressible data plus framing."""
    return max_bytes + max_bytes // 8 + 64 * 1024


@contextlib.contextmanager
def mapped_errors() -> Iterator[None]:
    """Turn httpcore2 and socket failures into :class:`EgressError`; let cancellation pass."""
    try:
        yield
    except EgressError:
        raise
    except httpcore2.TimeoutException:
        raise EgressError(EgressReason.TIMEOUT) from None
    except httpcore2.ConnectError:
        raise EgressError(EgressReason.CONNECT_FAILED) from None
    except httpcore2.NetworkError:
        raise EgressError(EgressReason.CONNECT_FAILED) from None
    except httpcore2.UnsupportedProtocol:
        raise EgressError(EgressReason.INVALID_URL) from None
    except httpcore2.ProxyError:
        # Raised only by the engine proxy's tunnel when it answers CONNECT with a non-2xx
        # status; its text holds the proxy's reason phrase, which is dropped here.
        raise EgressError(EgressReason.PROXY_FAILURE) from None
    except httpcore2.ProtocolError:
        raise EgressError(EgressReason.PROTOCOL_ERROR) from None
    except ssl.SSLError:
        raise EgressError(EgressReason.TLS_FAILURE) from None
    except TimeoutError:
        raise EgressError(EgressReason.TIMEOUT) from None
    except (OSError, anyio.BrokenResourceError, anyio.ClosedResourceError, anyio.EndOfStream):
        raise EgressError(EgressReason.CONNECT_FAILED) from None


def response_headers(raw: list[tuple[bytes, bytes]]) -> Mapping[str, str]:
    """Lower-cased, bounded headers; repeated fields joined with ", "; cookies dropped."""
    if len(raw) > MAX_HEADER_COUNT:
        raise EgressError(EgressReason.PROTOCOL_ERROR)
    if sum(len(name) + len(value) for name, value in raw) > MAX_HEADER_BYTES:
        raise EgressError(EgressReason.PROTOCOL_ERROR)
    headers: dict[str, str] = {}
    for raw_name, raw_value in raw:
        name = raw_name.decode("latin-1").lower()
        if name in _DROPPED_HEADERS:
            continue
        value = raw_value.decode("latin-1").strip()
        headers[name] = f"{headers[name]}, {value}" if name in headers else value
    return MappingProxyType(headers)


class _BodyBuffer:
    """The decoded body, held once.

    The first chunk is kept as it is (a body that arrives, or inflates, in one piece is never
    copied); later ones are written into one ``io.BytesIO``, whose ``getvalue`` hands over its
    own buffer as ``bytes`` without copying it (CPython, while nothing else shares it). Joining
    a list of chunks instead holds the body twice at the end, chunks and joined copy.
    """

    __slots__ = ("_first", "_rest")

    def __init__(self) -> None:
        self._first = b""
        self._rest: io.BytesIO | None = None

    def add(self, data: bytes) -> None:
        if not data:
            return
        if self._rest is None:
            if not self._first:
                self._first = data
                return
            self._rest = io.BytesIO()
            self._rest.write(self._first)
            self._first = b""
        self._rest.write(data)

    def value(self) -> bytes:
        """The body; the buffer is let go of, so the bytes returned are shared with nothing."""
        rest, self._rest = self._rest, None
        if rest is None:
            return self._first
        with rest:
            return rest.getvalue()


async def _close(response: httpcore2.Response) -> None:
    # Shielded so that a cancelled request still closes its connection, and bounded so that
    # closing never hangs on a peer.
    with anyio.move_on_after(_CLOSE_GRACE_S, shield=True), contextlib.suppress(Exception):
        await response.aclose()


async def exchange(
    sender: Sender,
    request: httpcore2.Request,
    *,
    max_bytes: int,
    on_excess: Excess = "refuse",
) -> Exchange:
    """Send ``request`` once and read its response within ``max_bytes`` decoded bytes.

    Beyond ``max_bytes`` decoded bytes (or :func:`wire_limit` raw ones) the response is
    refused with ``too_large``; with ``on_excess="truncate"`` reading stops there instead and
    the bytes decoded so far (at most ``max_bytes``) are returned with ``truncated`` set. The
    rest of the body is never read, so the response's connection is closed, never reused.
    """
    truncate = on_excess == "truncate"
    with mapped_errors():
        response = await sender.handle_async_request(request)
    try:
        with mapped_errors():
            if response.status < 200:
                raise EgressError(EgressReason.PROTOCOL_ERROR)  # 101: we never ask to upgrade
            headers = response_headers(response.headers)
            if "transfer-encoding" in headers and "content-length" in headers:
                # Ambiguous framing (RFC 9112, 6.3): a sign of response splitting; refused.
                raise EgressError(EgressReason.PROTOCOL_ERROR)
            stream = response.extensions.get("network_stream")
            peer = peer_address(stream) if stream is not None else None
            decoder = BoundedDecoder(
                headers.get("content-encoding", ""), max_bytes, truncate=truncate
            )
            limit = wire_limit(max_bytes)
            received = 0
            truncated = False
            body = _BodyBuffer()
            async with contextlib.aclosing(response.aiter_stream()) as chunks:
                async for chunk in chunks:
                    received += len(chunk)
                    if received > limit:
                        if not truncate:
                            raise EgressError(EgressReason.TOO_LARGE)
                        # Raw bytes that decode to little (empty gzip members, say): the
                        # prefix ends at the wire bound too.
                        body.add(decoder.feed(chunk[: len(chunk) - (received - limit)]))
                        truncated = True
                        break
                    body.add(decoder.feed(chunk))
                    if decoder.cut:
                        truncated = True
                        break
            if not truncated:
                body.add(decoder.finish())
                truncated = decoder.cut  # output held inside the decoder to the end
    finally:
        await _close(response)  # an unread rest closes the connection (httpcore2)
    return Exchange(
        status=response.status,
        headers=headers,
        body=body.value(),
        peer=peer,
        truncated=truncated,
    )
