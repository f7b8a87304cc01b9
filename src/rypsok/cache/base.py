"""What every result cache offers, whatever holds it (REQ-CACHE-001..006).

A cache maps a key (:func:`rypsok.cache.keys.result_key`) to the encoded results of one engine
(:mod:`rypsok.cache.codec`). A backend never raises for a failure of its store: a value it
cannot read is a miss and a value it cannot write is dropped, because a cache failure may cost
speed only (REQ-CACHE-006). It holds web_search results only; nothing in this package stores
fetched content (REQ-CACHE-002).
"""

from __future__ import annotations

from typing import Final, Protocol

MAX_VALUE_BYTES: Final = 256 * 1024
"""The largest encoded value a backend stores or returns; larger ones are dropped or a miss.

One engine's results are at most a few dozen raw titles, snippets and URLs (tens of KiB); the
bound keeps one odd answer from taking a large share of the memory or of a shared Redis."""


class CacheConfigError(ValueError):
    """``[cache]`` cannot be used as configured; the message names the key, never a value."""


class ResultCache(Protocol):
    """An asynchronous key-value store of encoded results with a lifetime per entry."""

    async def get(self, key: str) -> bytes | None:
        """The live value stored under ``key``, or None (absent, expired, unreadable)."""
        ...

    async def put(self, key: str, value: bytes, ttl_s: float) -> None:
        """Store ``value`` under ``key`` for ``ttl_s`` seconds; may drop it, never raises."""
        ...

    async def aclose(self) -> None:
        """Release what this process holds (its entries, or its share of a connection)."""
        ...
