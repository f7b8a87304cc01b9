"""Bounded content decoding: decompressed bytes are counted as they are produced (REQ-SEC-013).

The body is decoded here, not by an HTTP client, so that a decompression bomb stops at the
byte bound with memory bounded by it: every ``zlib`` call gets ``max_length`` equal to the room
left, and one probe byte beyond the bound ends the response with ``too_large``. Supported
codings are identity, gzip (one or more members), deflate (zlib-wrapped, or raw as some servers
send it) and br (brotli is a dependency; an installation whose brotli cannot bound its output
per call, before 1.2, neither offers nor accepts br). A stacked or
unknown coding, a truncated stream or data after the end of the stream is a protocol error.

With ``truncate=True`` (a bounded prefix, as robots.txt is read) the output beyond the bound is
dropped instead of refused: the decoder hands out exactly the first ``max_bytes`` bytes, sets
``cut`` and decodes nothing more; the caller stops reading. The bound and the memory bound are
the same in both modes.
"""

from __future__ import annotations

import importlib
import zlib
from types import ModuleType
from typing import Any, Final

from rypsok.egress.errors import EgressError, EgressReason


def _load_brotli() -> ModuleType | None:
    # Only a brotli whose Decompressor can bound its output (brotli >= 1.2) is usable:
    # without it one call could inflate a bomb without limit.
    try:
        module = importlib.import_module("brotli")
    except ImportError:
        return None
    decompressor = getattr(module, "Decompressor", None)
    if decompressor is None or not hasattr(decompressor, "can_accept_more_data"):
        return None
    return module


_BROTLI: Final = _load_brotli()

ACCEPT_ENCODING: Final = "gzip, deflate, br" if _BROTLI is not None else "gzip, deflate"

_GZIP_WBITS: Final = 16 + zlib.MAX_WBITS
_ZLIB_WBITS: Final = zlib.MAX_WBITS
_RAW_WBITS: Final = -zlib.MAX_WBITS


def _coding(content_encoding: str) -> str:
    codings = [c.strip().lower() for c in content_encoding.split(",")]
    codings = [c for c in codings if c and c != "identity"]
    if not codings:
        return "identity"
    if len(codings) > 1:
        raise EgressError(EgressReason.PROTOCOL_ERROR)  # stacked codings are refused
    coding = codings[0]
    if coding == "x-gzip":
        coding = "gzip"
    if coding in ("gzip", "deflate") or (coding == "br" and _BROTLI is not None):
        return coding
    raise EgressError(EgressReason.PROTOCOL_ERROR)


class BoundedDecoder:
    """Decode one response body incrementally; never produce more than ``max_bytes``.

    ``produced`` counts the decoded bytes handed out so far; it never exceeds ``max_bytes``.
    Beyond the bound it raises ``too_large``, or with ``truncate`` sets ``cut`` and stops.
    """

    def __init__(self, content_encoding: str, max_bytes: int, *, truncate: bool = False) -> None:
        if max_bytes < 1:
            raise ValueError("max_bytes must be positive")
        self.coding = _coding(content_encoding)
        self.max_bytes = max_bytes
        self.produced = 0
        self.truncate = truncate
        self.cut = False  # truncate mode: output beyond the bound existed and was dropped
        self._zlib: Any = None
        self._brotli: Any = None
        self._pending = b""  # deflate: bytes held until the wrapper can be recognised
        self._seen_input = False
        self._ended = False
        if self.coding == "gzip":
            self._zlib = zlib.decompressobj(_GZIP_WBITS)
        elif self.coding == "br" and _BROTLI is not None:
            self._brotli = _BROTLI.Decompressor()

    def _room(self) -> int:
        return self.max_bytes - self.produced

    def _excess(self) -> None:
        """Output beyond the bound: refused, or in truncate mode the end of decoding."""
        if not self.truncate:
            raise EgressError(EgressReason.TOO_LARGE)
        self.cut = True

    def _account(self, chunk: bytes) -> bytes:
        room = self._room()
        if len(chunk) > room:
            self._excess()
            chunk = chunk[:room]
        self.produced += len(chunk)
        return chunk

    def feed(self, data: bytes) -> bytes:
        """Decode the next raw chunk; raise ``too_large`` before exceeding the bound (in
        truncate mode: hand out what fits, set ``cut``, and return nothing afterwards)."""
        if not data or self.cut:
            return b""
        self._seen_input = True
        if self.coding == "identity":
            return self._account(data)
        if self.coding == "br":
            return self._feed_brotli(data)
        if self.coding == "deflate" and self._zlib is None:
            self._pending += data
            if len(self._pending) < 2:
                return b""
            data, self._pending = self._pending, b""
            self._zlib = zlib.decompressobj(_ZLIB_WBITS if _is_zlib_header(data) else _RAW_WBITS)
        return self._inflate(data)

    def finish(self) -> bytes:
        """Drain what is left; raise ``protocol_error`` when the stream was cut short.

        After a cut (truncate mode) there is nothing to drain and the rest is never checked."""
        if self.cut or self.coding == "identity" or not self._seen_input:
            return b""  # an empty body is empty whatever its declared coding
        if self.coding == "br":
            out = self._feed_brotli(b"")
            if not self.cut and not self._brotli.is_finished():
                raise EgressError(EgressReason.PROTOCOL_ERROR)
            return out
        if self._zlib is None:
            # A one-byte deflate body cannot be a valid stream.
            raise EgressError(EgressReason.PROTOCOL_ERROR)
        out = self._inflate(b"")
        if not self.cut and not self._ended:
            raise EgressError(EgressReason.PROTOCOL_ERROR)
        return out

    def _inflate(self, data: bytes) -> bytes:
        parts: list[bytes] = []
        pending = data
        while True:
            if self._ended:
                if pending:
                    pending = self._next_member(pending)
                    continue
                break
            room = self._room()
            try:
                # At the bound, one probe byte: any further output is one byte too many.
                chunk = self._zlib.decompress(pending, max(room, 1))
            except zlib.error:
                raise EgressError(EgressReason.PROTOCOL_ERROR) from None
            parts.append(self._account(chunk))
            if self.cut:
                break
            pending = self._zlib.unconsumed_tail
            if self._zlib.eof:
                self._ended = True
                pending = self._zlib.unused_data + pending
                continue
            # Output equal to the room may leave output inside zlib with no input left,
            # so only an unfilled call with no input left means "needs more input".
            if not pending and (room == 0 or len(chunk) < room):
                break
        return b"".join(parts)

    def _next_member(self, data: bytes) -> bytes:
        # gzip allows several members one after another; anything else after the end of the
        # stream is trailing data and refused.
        if self.coding != "gzip":
            raise EgressError(EgressReason.PROTOCOL_ERROR)
        self._zlib = zlib.decompressobj(_GZIP_WBITS)
        self._ended = False
        return data

    def _feed_brotli(self, data: bytes) -> bytes:
        # brotli's output limit is a buffer size, not exact: a call may return somewhat more
        # than asked, which is counted and refused like any other excess.
        decoder = self._brotli
        parts: list[bytes] = []
        try:
            chunk = decoder.process(data, output_buffer_limit=max(self._room(), 1))
            parts.append(self._account(chunk))
            while not self.cut and not decoder.can_accept_more_data() and not decoder.is_finished():
                chunk = decoder.process(b"", output_buffer_limit=max(self._room(), 1))
                parts.append(self._account(chunk))
                if not chunk:
                    break  # no progress: never spin
        except EgressError:
            raise
        except Exception:  # brotli.error has no stable import path across versions
            raise EgressError(EgressReason.PROTOCOL_ERROR) from None
        return b"".join(parts)


def _is_zlib_header(data: bytes) -> bool:
    """RFC 1950: compression method 8 and a header checksum divisible by 31."""
    cmf, flg = data[0], data[1]
    return cmf & 0x0F == 8 and cmf >> 4 <= 7 and (cmf * 256 + flg) % 31 == 0
