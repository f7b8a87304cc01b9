"""The in-process result cache: least recently used entries go first, every entry expires.

Bounds (REQ-CACHE-005): at most ``max_entries`` entries (LIM-K3), each value at most
:data:`~rypsok.cache.base.MAX_VALUE_BYTES`, all values together at most ``max_total_bytes``.
Time is the injected clock's monotonic reading, so tests drive expiry by hand.

An expired entry is not only hidden but removed at the next operation: a query cache is
retention of queries (REQ-CACHE-007), and it must not retain them past their lifetime. Expiry
times sit in a heap beside the LRU order; a heap item outlived by its entry (replaced or
evicted) is skipped, and the heap is rebuilt when such items outnumber the live ones, so its
size stays proportional to the entries.
"""

from __future__ import annotations

import heapq
from collections import OrderedDict
from dataclasses import dataclass
from itertools import count
from typing import Final

from rypsok.cache.base import MAX_VALUE_BYTES
from rypsok.health.clock import Clock

MAX_TOTAL_BYTES: Final = 64 * 1024 * 1024
"""All values together: LIM-K3 entries of a few KiB each fit many times over."""


@dataclass(frozen=True, slots=True)
class _Entry:
    value: bytes
    expires_at: float
    serial: int


class MemoryCache:
    """A bounded LRU of values with a lifetime each; all state belongs to the instance."""

    def __init__(
        self,
        *,
        clock: Clock,
        max_entries: int,
        max_value_bytes: int = MAX_VALUE_BYTES,
        max_total_bytes: int = MAX_TOTAL_BYTES,
    ) -> None:
        if max_entries < 1 or max_value_bytes < 1 or max_total_bytes < max_value_bytes:
            raise ValueError("cache bounds must be positive, the total at least one value")
        self._clock = clock
        self._max_entries = max_entries
        self._max_value_bytes = max_value_bytes
        self._max_total_bytes = max_total_bytes
        self._entries: OrderedDict[str, _Entry] = OrderedDict()  # least recently used first
        self._expiry: list[tuple[float, int, str]] = []  # heap of (expires_at, serial, key)
        self._serials = count()
        self._bytes = 0

    def __len__(self) -> int:
        """Entries held, expired ones not yet removed included (for tests of the bounds)."""
        return len(self._entries)

    @property
    def total_bytes(self) -> int:
        """Bytes of all values held."""
        return self._bytes

    async def get(self, key: str) -> bytes | None:
        """The live value of ``key``; a hit makes the entry the most recently used."""
        self._expire(self._clock.monotonic())
        entry = self._entries.get(key)
        if entry is None:
            return None
        self._entries.move_to_end(key)
        return entry.value

    async def put(self, key: str, value: bytes, ttl_s: float) -> None:
        """Store ``value`` for ``ttl_s`` seconds, evicting the least recently used as needed."""
        now = self._clock.monotonic()
        self._expire(now)
        if len(value) > self._max_value_bytes or not ttl_s > 0:
            return
        self._remove(key)
        entry = _Entry(value=value, expires_at=now + ttl_s, serial=next(self._serials))
        self._entries[key] = entry
        self._bytes += len(value)
        heapq.heappush(self._expiry, (entry.expires_at, entry.serial, key))
        while len(self._entries) > self._max_entries or self._bytes > self._max_total_bytes:
            oldest = next(iter(self._entries))
            self._remove(oldest)
        if len(self._expiry) > 2 * len(self._entries) + 64:
            self._expiry = [(e.expires_at, e.serial, k) for k, e in self._entries.items()]
            heapq.heapify(self._expiry)

    async def aclose(self) -> None:
        """Drop every entry."""
        self._entries.clear()
        self._expiry.clear()
        self._bytes = 0

    def _expire(self, now: float) -> None:
        while self._expiry and self._expiry[0][0] <= now:
            _, serial, key = heapq.heappop(self._expiry)
            entry = self._entries.get(key)
            if entry is not None and entry.serial == serial:
                self._remove(key)

    def _remove(self, key: str) -> None:
        entry = self._entries.pop(key, None)
        if entry is not None:
            self._bytes -= len(entry.value)
