"""The in-process result cache: expiry and bounds (REQ-CACHE-005, REQ-CACHE-007, REQ-TEST-010).

Time is a ManualClock: expiry is checked to the instant, without waiting.
"""

from __future__ import annotations

import pytest

from rypsok.cache import MemoryCache
from rypsok.config.limits import limit
from rypsok.config.schema import CacheSettings
from rypsok.health.clock import ManualClock

pytestmark = pytest.mark.anyio


def test_req_cache_001_005_defaults_from_the_limits_table() -> None:
    """REQ-CACHE-001, REQ-CACHE-005: off by default (LIM-K1), LIM-K2 lifetime, LIM-K3 entries."""
    defaults = CacheSettings()
    assert defaults.enabled is False
    assert defaults.backend == "memory"
    assert (defaults.ttl_s, defaults.max_entries) == (limit("LIM-K2"), limit("LIM-K3"))


async def test_req_cache_005_entries_expire_after_their_lifetime() -> None:
    """REQ-CACHE-005: an entry is served until its lifetime ends and never after."""
    clock = ManualClock()
    cache = MemoryCache(clock=clock, max_entries=10)
    await cache.put("k", b"v", 300)
    clock.advance(299.5)
    assert await cache.get("k") == b"v"
    clock.advance(0.5)
    assert await cache.get("k") is None
    assert len(cache) == 0


async def test_req_cache_007_expired_entries_are_removed_not_only_hidden() -> None:
    """REQ-CACHE-007: a query cache retains queries only for the entry lifetime: an expired
    entry leaves memory at the next operation, even if nobody asks for it again."""
    clock = ManualClock()
    cache = MemoryCache(clock=clock, max_entries=10)
    for i in range(5):
        await cache.put(f"old-{i}", b"x" * 100, 60)
    clock.advance(60)
    await cache.put("new", b"y", 60)
    assert len(cache) == 1
    assert cache.total_bytes == 1


async def test_req_cache_005_at_most_max_entries_least_recently_used_first() -> None:
    """REQ-CACHE-005: the cache holds at most max_entries (LIM-K3); the least recently used
    entry is the one to go."""
    clock = ManualClock()
    cache = MemoryCache(clock=clock, max_entries=3)
    for key in ("a", "b", "c"):
        await cache.put(key, key.encode(), 300)
    assert await cache.get("a") == b"a"  # a is now the most recently used
    await cache.put("d", b"d", 300)
    assert len(cache) == 3
    assert await cache.get("b") is None
    assert [await cache.get(k) for k in ("a", "c", "d")] == [b"a", b"c", b"d"]


async def test_req_cache_005_a_replaced_entry_gets_a_new_lifetime() -> None:
    """REQ-CACHE-005: storing a key again replaces its value and its expiry."""
    clock = ManualClock()
    cache = MemoryCache(clock=clock, max_entries=3)
    await cache.put("k", b"1", 10)
    clock.advance(8)
    await cache.put("k", b"2", 10)
    clock.advance(8)
    assert await cache.get("k") == b"2"
    clock.advance(2)
    assert await cache.get("k") is None


async def test_values_are_bounded_one_by_one_and_together() -> None:
    """A value above the per-value bound is not stored; the total bound evicts the oldest."""
    clock = ManualClock()
    cache = MemoryCache(clock=clock, max_entries=100, max_value_bytes=10, max_total_bytes=25)
    await cache.put("big", b"x" * 11, 60)
    assert await cache.get("big") is None
    for key in ("a", "b", "c"):
        await cache.put(key, b"z" * 10, 60)
    assert cache.total_bytes <= 25
    assert await cache.get("a") is None
    assert await cache.get("c") == b"z" * 10


async def test_expiry_bookkeeping_stays_proportional_to_the_entries() -> None:
    """Storing the same keys over and over keeps the memory bounded by the entries."""
    clock = ManualClock()
    cache = MemoryCache(clock=clock, max_entries=4)
    for i in range(10_000):
        await cache.put(f"k{i % 4}", b"v", 300)
    assert len(cache) == 4
    assert len(cache._expiry) <= 2 * 4 + 64


async def test_aclose_drops_everything() -> None:
    """Closing the cache keeps nothing of the queries (REQ-CACHE-007)."""
    cache = MemoryCache(clock=ManualClock(), max_entries=4)
    await cache.put("k", b"v", 300)
    await cache.aclose()
    assert len(cache) == 0 and await cache.get("k") is None


def test_invalid_bounds_are_refused() -> None:
    """A cache that cannot hold one value is a programming error."""
    with pytest.raises(ValueError):
        MemoryCache(clock=ManualClock(), max_entries=0)
    with pytest.raises(ValueError):
        MemoryCache(clock=ManualClock(), max_entries=1, max_value_bytes=10, max_total_bytes=5)
