"""Limits shared by replicas through one Redis (REQ-CMP-002, REQ-MCP-010, REQ-SEC-019).

"Ten replicas do not send ten times an engine's admitted rate": two ProviderLimits ("replicas")
on one Redis never start more requests together than the engine's rate allows, and an
authenticated caller's calls per minute are counted across both. When Redis fails, each falls
back to its per-process limits and no call fails (REQ-CACHE-006). REQ-TEST-016.
"""

from __future__ import annotations

import time

import anyio
import pytest

from rypsok.cache import RedisLink, connect
from rypsok.config.secrets import Secret
from rypsok.contract.vocabulary import ToolName
from rypsok.engines.base import RateLimit
from rypsok.health.clock import SystemClock
from rypsok.health.invocation import InvocationLimits
from rypsok.health.provider_limits import (
    EngineLimit,
    ProviderLimits,
    ProviderSkip,
    ProviderSlot,
    SlotRefusal,
)
from rypsok.health.shared_window import SharedWindows
from tests.cache.conftest import RedisServer
from tests.cache.support import capture_logger

pytestmark = pytest.mark.anyio
SEARCH = ToolName.WEB_SEARCH


def shared(url: str, name: str = "replica") -> tuple[SharedWindows, RedisLink]:
    logger, _ = capture_logger(name)
    link = connect(Secret(url), clock=SystemClock(), logger=logger)
    return SharedWindows(link, key_prefix="test:"), link


def replica(windows: SharedWindows | None, rate: RateLimit, in_flight: int = 4) -> ProviderLimits:
    return ProviderLimits(
        {"e": EngineLimit(rate, in_flight)},
        clock=SystemClock(),
        shared_rate=windows.engine_window if windows is not None else None,
    )


async def starts_within(limits: list[ProviderLimits], callers: int, wait_s: float) -> list[float]:
    """``callers`` concurrent requests per replica, each willing to wait ``wait_s`` to start;
    the local times at which the granted ones started."""
    started: list[float] = []

    async def one(limit: ProviderLimits) -> None:
        grant = await limit.acquire("e", time.monotonic() + wait_s)
        if isinstance(grant, ProviderSlot):
            async with grant:
                started.append(time.monotonic())
        else:
            assert grant.reason is SlotRefusal.RATE_LIMIT

    async with anyio.create_task_group() as group:
        for limit in limits:
            for _ in range(callers):
                group.start_soon(one, limit)
    return sorted(started)


async def test_req_cmp_002_two_replicas_share_an_engine_rate(redis_server: RedisServer) -> None:
    """REQ-CMP-002: with 2 requests admitted per minute, two replicas hammered at once start
    exactly 2 requests together; alone, each would have started 2."""
    rate = RateLimit(2, 60.0)
    one, link_one = shared(redis_server.url, "one")
    two, link_two = shared(redis_server.url, "two")
    started = await starts_within([replica(one, rate), replica(two, rate)], 10, 0.5)
    assert len(started) == 2
    apart = await starts_within([replica(None, rate), replica(None, rate)], 10, 0.5)
    assert len(apart) == 4  # the problem the shared window solves
    await link_one.aclose()
    await link_two.aclose()


async def test_req_cmp_002_shared_window_slides(redis_server: RedisServer) -> None:
    """REQ-CMP-002: over time the replicas together keep to the rate in every window: with 2
    per 0.5 s, no 0.5 s holds more than 2 starts, and waiting callers do start as it slides."""
    rate = RateLimit(2, 0.5)
    one, link_one = shared(redis_server.url, "one")
    two, link_two = shared(redis_server.url, "two")
    started = await starts_within([replica(one, rate), replica(two, rate)], 4, 1.6)
    assert len(started) >= 6  # the window slid at least twice within the wait
    tolerance = 0.02  # local reading of a start made on the Redis clock
    for i, first in enumerate(started):
        within = [t for t in started[i:] if t < first + rate.per_seconds - tolerance]
        assert len(within) <= rate.requests, started
    await link_one.aclose()
    await link_two.aclose()


async def test_req_cache_006_redis_down_falls_back_to_per_process_rate(
    own_redis: RedisServer,
) -> None:
    """REQ-CACHE-006: Redis stopped: each replica keeps its own admitted rate, no request
    fails for it, and the outage is logged once, by class.

    Proves THR-46.
    """
    logger, logs = capture_logger("down")
    link = connect(Secret(own_redis.url), clock=SystemClock(), logger=logger)
    windows = SharedWindows(link, key_prefix="test:")
    limits = replica(windows, RateLimit(2, 60.0))
    assert len(await starts_within([limits], 1, 0.5)) == 1  # one start in Redis
    own_redis.stop()
    assert len(await starts_within([limits], 5, 0.5)) == 1  # the in-process twin knew of it
    assert len(logs.events("shared_store_unavailable")) == 1
    await link.aclose()


async def test_req_sec_019_invocation_limits_are_shared_by_replicas(
    redis_server: RedisServer,
) -> None:
    """REQ-SEC-019, REQ-MCP-010: an authenticated caller's calls per minute are counted across
    replicas; another caller's are its own; the refusal says when to retry."""
    one_windows, link_one = shared(redis_server.url, "one")
    two_windows, link_two = shared(redis_server.url, "two")
    one = InvocationLimits({SEARCH: 3}, clock=SystemClock(), shared=one_windows)
    two = InvocationLimits({SEARCH: 3}, clock=SystemClock(), shared=two_windows)
    assert (await one.admit_shared(SEARCH, "alice")).admitted
    assert (await two.admit_shared(SEARCH, "alice")).admitted
    assert (await one.admit_shared(SEARCH, "alice")).admitted
    refused = await two.admit_shared(SEARCH, "alice")
    assert not refused.admitted
    assert refused.retry_after_ms is not None and 58_000 < refused.retry_after_ms <= 60_000
    assert (await two.admit_shared(SEARCH, "bob")).admitted
    assert (await two.admit_shared(ToolName.WEB_FETCH, "alice")).admitted
    keys = [str(k) for k in redis_server.client().keys("test:calls:*")]
    assert keys and not any("alice" in k or "bob" in k for k in keys)  # names stay private
    await link_one.aclose()
    await link_two.aclose()


async def test_req_mcp_010_the_local_caller_stays_per_process(redis_server: RedisServer) -> None:
    """REQ-MCP-010: the stdio caller's limits are per process, so it is never shared."""
    one_windows, link_one = shared(redis_server.url, "one")
    two_windows, link_two = shared(redis_server.url, "two")
    one = InvocationLimits({SEARCH: 2}, clock=SystemClock(), shared=one_windows)
    two = InvocationLimits({SEARCH: 2}, clock=SystemClock(), shared=two_windows)
    for limits in (one, two):
        assert (await limits.admit_shared(SEARCH)).admitted
        assert (await limits.admit_shared(SEARCH)).admitted
        assert not (await limits.admit_shared(SEARCH)).admitted
    assert redis_server.client().keys("test:calls:*") == []
    await link_one.aclose()
    await link_two.aclose()


async def test_req_cache_006_invocation_limits_fall_back_when_redis_fails(
    own_redis: RedisServer,
) -> None:
    """REQ-CACHE-006: with Redis stopped the in-process window decides, including the calls
    Redis had admitted from this replica; no call fails for the outage.

    Proves THR-46.
    """
    windows, link = shared(own_redis.url)
    limits = InvocationLimits({SEARCH: 2}, clock=SystemClock(), shared=windows)
    assert (await limits.admit_shared(SEARCH, "alice")).admitted
    own_redis.stop()
    assert (await limits.admit_shared(SEARCH, "alice")).admitted
    refused = await limits.admit_shared(SEARCH, "alice")
    assert not refused.admitted and refused.retry_after_ms is not None
    await link.aclose()


async def test_without_a_shared_store_admit_shared_is_admit() -> None:
    """Without Redis nothing changes: the in-process window decides."""
    limits = InvocationLimits({SEARCH: 1}, clock=SystemClock())
    assert (await limits.admit_shared(SEARCH, "alice")).admitted
    assert not limits.admit(SEARCH, "alice").admitted
    skip = await replica(None, RateLimit(1, 60.0)).acquire("e", time.monotonic() - 1)
    assert isinstance(skip, ProviderSkip)
