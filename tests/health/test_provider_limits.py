"""Provider limit tests: rate, concurrency, deadlines, cancellation (REQ-TEST-016).

REQ-CMP-002 (an engine's admitted rate and concurrency are never exceeded) and REQ-AGG-005
(LIM-C1 requests in flight per process, LIM-C2 per engine). Time is a ManualClock whose sleep
jumps forward, so waits for the rate window take no real time.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

import anyio
import anyio.lowlevel
import pytest

from rypsok.config.limits import limit
from rypsok.contract.vocabulary import Category
from rypsok.engines.base import AdmissionRecord, RateLimit
from rypsok.health.clock import ManualClock
from rypsok.health.provider_limits import (
    EngineLimit,
    ProviderLimits,
    ProviderLimitSkippedError,
    ProviderSkip,
    ProviderSlot,
    SlotRefusal,
)

pytestmark = pytest.mark.anyio

FAR = 10_000.0  # a deadline no test reaches


def make(
    clock: ManualClock,
    engines: dict[str, tuple[int, float, int]],
    *,
    process_cap: int | None = None,
) -> ProviderLimits:
    """Limits for ``engine -> (requests, per_seconds, max_in_flight)``."""
    return ProviderLimits(
        {e: EngineLimit(RateLimit(r, p), m) for e, (r, p, m) in engines.items()},
        clock=clock,
        process_cap=process_cap,
        sleep=clock.sleep,
    )


class Observed:
    """What the requests themselves saw: their starts and the most in flight at once."""

    def __init__(self) -> None:
        self.starts: dict[str, list[float]] = defaultdict(list)
        self.now: dict[str, int] = defaultdict(int)
        self.max: dict[str, int] = defaultdict(int)
        self.total = 0
        self.max_total = 0


async def hammer(
    limits: ProviderLimits,
    clock: ManualClock,
    engines: Sequence[str],
    n: int = 100,
    work_s: float = 0.3,
) -> Observed:
    """``n`` concurrent callers, spread over ``engines``, each holding its slot ``work_s``."""
    seen = Observed()

    async def one(engine: str) -> None:
        grant = await limits.acquire(engine, clock.monotonic() + FAR)
        assert isinstance(grant, ProviderSlot)
        async with grant:
            assert grant.started_at == clock.monotonic()
            seen.starts[engine].append(grant.started_at)
            seen.now[engine] += 1
            seen.total += 1
            seen.max[engine] = max(seen.max[engine], seen.now[engine])
            seen.max_total = max(seen.max_total, seen.total)
            try:
                await clock.sleep(work_s)
            finally:
                seen.now[engine] -= 1
                seen.total -= 1

    async with anyio.create_task_group() as tg:
        for i in range(n):
            tg.start_soon(one, engines[i % len(engines)])
    assert limits.in_flight() == 0
    return seen


def max_starts_in_any_window(starts: list[float], per_seconds: float) -> int:
    """The most starts in any half-open window [t, t + per_seconds)."""
    ordered = sorted(starts)
    best = 0
    for i, t in enumerate(ordered):
        best = max(best, sum(1 for s in ordered[i:] if s < t + per_seconds))
    return best


async def test_req_cmp_002_rate_and_concurrency_hold_under_100_callers(
    clock: ManualClock,
) -> None:
    """REQ-CMP-002, REQ-TEST-016: 100 callers never exceed the rate or the engine's cap.

    Proves THR-16.
    """
    limits = make(clock, {"e": (5, 2.0, 3)})
    seen = await hammer(limits, clock, ["e"])
    assert len(seen.starts["e"]) == 100
    assert seen.max["e"] == 3
    assert max_starts_in_any_window(seen.starts["e"], 2.0) == 5


async def test_req_agg_005_engine_cap_is_lim_c2_at_most(clock: ManualClock) -> None:
    """REQ-AGG-005: an admission record allowing more than LIM-C2 is held to LIM-C2."""
    c2 = limit("LIM-C2")
    limits = make(clock, {"generous": (1000, 1.0, c2 * 10), "strict": (1000, 1.0, 1)})
    assert limits.engine_cap_of("generous") == c2
    assert limits.engine_cap_of("strict") == 1
    seen = await hammer(limits, clock, ["generous", "strict"])
    assert seen.max["generous"] == c2
    assert seen.max["strict"] == 1


async def test_req_agg_005_process_cap_holds_across_engines(clock: ManualClock) -> None:
    """REQ-AGG-005, REQ-TEST-016: the process cap holds over every engine together."""
    engines = {f"e{i}": (1000, 1.0, 4) for i in range(10)}
    limits = make(clock, engines, process_cap=7)
    seen = await hammer(limits, clock, list(engines))
    assert seen.max_total == 7
    assert all(m <= 4 for m in seen.max.values())


async def test_req_agg_005_default_process_cap_is_never_exceeded(clock: ManualClock) -> None:
    """REQ-AGG-005, REQ-TEST-016: with the defaults, at most LIM-C1 requests are in flight."""
    c1, c2 = limit("LIM-C1"), limit("LIM-C2")
    engines = [f"e{i}" for i in range(c1 // c2 + 4)]  # enough engines to exceed LIM-C1
    limits = ProviderLimits(
        {e: EngineLimit(RateLimit(1000, 1.0), c2) for e in engines}, clock=clock, sleep=clock.sleep
    )
    seen = await hammer(limits, clock, engines, n=3 * c1)
    assert seen.max_total == c1
    assert max(seen.max.values()) <= c2


def test_req_agg_005_defaults_are_lim_c1_and_lim_c2(clock: ManualClock) -> None:
    """REQ-AGG-005: the caps default to the limits table."""
    limits = ProviderLimits({}, clock=clock)
    assert limits.process_cap == limit("LIM-C1")
    assert limits.engine_cap == limit("LIM-C2")


async def test_req_test_016_rate_window_is_sliding(clock: ManualClock) -> None:
    """REQ-CMP-002: a start is allowed exactly when the oldest of the window leaves it."""
    limits = make(clock, {"e": (2, 10.0, 4)})
    t0 = clock.monotonic()
    for _ in range(2):
        grant = await limits.acquire("e", t0)
        assert isinstance(grant, ProviderSlot)
        grant.release()
    clock.advance(4.0)
    grant = await limits.acquire("e", t0 + FAR)
    assert isinstance(grant, ProviderSlot)
    assert grant.started_at == t0 + 10.0
    grant.release()


async def test_req_test_016_waiter_past_its_deadline_is_skipped_at_once(
    clock: ManualClock,
) -> None:
    """REQ-CMP-002, REQ-TEST-016: a caller the rate cannot serve in time skips, not waits."""
    slept: list[float] = []

    async def spy_sleep(seconds: float) -> None:
        slept.append(seconds)
        await clock.sleep(seconds)

    limits = ProviderLimits({"e": EngineLimit(RateLimit(1, 10.0), 4)}, clock=clock, sleep=spy_sleep)
    t0 = clock.monotonic()
    first = await limits.acquire("e", t0)
    assert isinstance(first, ProviderSlot)
    skip = await limits.acquire("e", t0 + 9.0)
    assert skip == ProviderSkip("e", SlotRefusal.RATE_LIMIT)
    assert slept == []
    assert clock.monotonic() == t0
    assert limits.in_flight("e") == 1
    first.release()


async def test_req_test_016_waiter_within_its_deadline_waits(clock: ManualClock) -> None:
    """REQ-CMP-002: a slot the rate frees before the deadline is worth waiting for."""
    limits = make(clock, {"e": (1, 10.0, 4)})
    t0 = clock.monotonic()
    (await limits.acquire("e", t0)).release()  # type: ignore[union-attr]
    grant = await limits.acquire("e", t0 + 10.0)
    assert isinstance(grant, ProviderSlot)
    assert grant.started_at == t0 + 10.0
    grant.release()


async def test_req_agg_005_full_engine_with_deadline_now_skips(clock: ManualClock) -> None:
    """REQ-AGG-005: with the engine's slots taken and no time left, the caller skips."""
    limits = make(clock, {"e": (100, 1.0, 1), "f": (100, 1.0, 1)}, process_cap=1)
    held = await limits.acquire("e", clock.monotonic())
    assert isinstance(held, ProviderSlot)
    now = clock.monotonic()
    assert await limits.acquire("e", now) == ProviderSkip("e", SlotRefusal.ENGINE_CONCURRENCY)
    assert await limits.acquire("f", now) == ProviderSkip("f", SlotRefusal.PROCESS_CONCURRENCY)
    held.release()
    assert limits.in_flight() == 0


async def test_req_agg_005_concurrency_wait_ends_at_the_deadline(clock: ManualClock) -> None:
    """REQ-AGG-005: a slot that does not free before the deadline means a skip."""
    limits = make(clock, {"e": (100, 1.0, 1)})
    held = await limits.acquire("e", clock.monotonic())
    assert isinstance(held, ProviderSlot)
    skip = await limits.acquire("e", clock.monotonic() + 0.01)
    assert skip == ProviderSkip("e", SlotRefusal.ENGINE_CONCURRENCY)
    held.release()


async def test_req_agg_005_slot_freed_before_the_deadline_is_granted(clock: ManualClock) -> None:
    """REQ-AGG-005: a waiter gets the slot another request frees in time."""
    limits = make(clock, {"e": (100, 1.0, 1)})
    held = await limits.acquire("e", clock.monotonic())
    assert isinstance(held, ProviderSlot)
    got: list[ProviderSlot | ProviderSkip] = []

    async def wait() -> None:
        got.append(await limits.acquire("e", clock.monotonic() + FAR))

    async with anyio.create_task_group() as tg:
        tg.start_soon(wait)
        await anyio.wait_all_tasks_blocked()
        assert got == []
        held.release()
    assert isinstance(got[0], ProviderSlot)
    assert limits.in_flight("e") == 1
    got[0].release()


async def test_req_agg_005_cancelled_concurrency_waiter_leaks_nothing(clock: ManualClock) -> None:
    """REQ-AGG-005: a waiter cancelled while queued for a slot never holds one."""
    limits = make(clock, {"e": (100, 1.0, 1)}, process_cap=1)
    held = await limits.acquire("e", clock.monotonic())
    assert isinstance(held, ProviderSlot)
    async with anyio.create_task_group() as tg:
        for _ in range(5):
            tg.start_soon(limits.acquire, "e", clock.monotonic() + FAR)
        await anyio.wait_all_tasks_blocked()
        tg.cancel_scope.cancel()
    held.release()
    assert limits.in_flight() == 0
    again = await limits.acquire("e", clock.monotonic())  # no time to wait: must be free now
    assert isinstance(again, ProviderSlot)
    again.release()


async def test_req_cmp_002_cancelled_rate_waiter_leaks_nothing(clock: ManualClock) -> None:
    """REQ-CMP-002: a waiter cancelled while waiting for the rate frees both its slots."""

    async def forever(seconds: float) -> None:
        await anyio.sleep_forever()

    limits = ProviderLimits(
        {"e": EngineLimit(RateLimit(1, 10.0), 1)}, clock=clock, process_cap=1, sleep=forever
    )
    (await limits.acquire("e", clock.monotonic())).release()  # type: ignore[union-attr]
    async with anyio.create_task_group() as tg:
        tg.start_soon(limits.acquire, "e", clock.monotonic() + FAR)
        await anyio.wait_all_tasks_blocked()
        tg.cancel_scope.cancel()
    assert limits.in_flight() == 0
    clock.advance(10.0)
    again = await limits.acquire("e", clock.monotonic())
    assert isinstance(again, ProviderSlot)
    again.release()


async def test_req_agg_005_cancelled_holder_releases_through_async_with(
    clock: ManualClock,
) -> None:
    """REQ-AGG-005: the slot of a cancelled request goes back when ``async with`` unwinds."""
    limits = make(clock, {"e": (100, 1.0, 2)})

    async def request() -> None:
        async with limits.slot("e", clock.monotonic()):
            await anyio.sleep_forever()

    async with anyio.create_task_group() as tg:
        tg.start_soon(request)
        tg.start_soon(request)
        await anyio.wait_all_tasks_blocked()
        assert limits.in_flight("e") == 2
        tg.cancel_scope.cancel()
    assert limits.in_flight() == 0


async def test_slot_raises_when_the_caller_must_skip(clock: ManualClock) -> None:
    """The ``async with`` form turns a skip into ProviderLimitSkippedError."""
    limits = make(clock, {"e": (1, 60.0, 1)})
    async with limits.slot("e", clock.monotonic()) as slot:
        assert slot.engine == "e"
    with pytest.raises(ProviderLimitSkippedError) as info:
        async with limits.slot("e", clock.monotonic()):
            pass
    assert info.value.skip.reason is SlotRefusal.RATE_LIMIT


async def test_release_is_idempotent(clock: ManualClock) -> None:
    """Releasing twice must not free somebody else's slot."""
    limits = make(clock, {"e": (100, 1.0, 2)})
    a = await limits.acquire("e", clock.monotonic())
    b = await limits.acquire("e", clock.monotonic())
    assert isinstance(a, ProviderSlot) and isinstance(b, ProviderSlot)
    a.release()
    a.release()
    assert limits.in_flight("e") == 1
    b.release()
    assert limits.in_flight("e") == 0


def test_req_cmp_002_limits_come_from_admission_records(clock: ManualClock) -> None:
    """REQ-CMP-002, LIM-C9: rate and concurrency are read from the admission record."""
    record = AdmissionRecord(
        engine_id="example",
        provider="Example",
        categories=(Category.GENERAL,),
        endpoint="https://api.example.org/search",
        documentation="https://example.org/docs",
        permitted_use="test",
        rate=RateLimit(3, 1.0),
        max_in_flight=2,
        attribution_required=False,
        license="test",
        cacheable=False,
        user_agent_note="",
        languages=None,
        time_ranges=frozenset(),
        max_query_chars=100,
    )
    limits = ProviderLimits.from_admissions([record], clock=clock)
    assert limits.engine_cap_of("example") == 2
    with pytest.raises(KeyError):
        limits.in_flight("other")


def test_invalid_engine_limits_are_refused() -> None:
    """A rate of zero requests or a cap of zero is an admission record error."""
    with pytest.raises(ValueError):
        EngineLimit(RateLimit(0, 1.0), 1)
    with pytest.raises(ValueError):
        EngineLimit(RateLimit(1, 0.0), 1)
    with pytest.raises(ValueError):
        EngineLimit(RateLimit(1, 1.0), 0)


async def test_past_deadline_is_its_own_reason(clock: ManualClock) -> None:
    """A caller whose deadline has passed skips, and is not told the provider was the cause."""
    limits = make(clock, {"e": (100, 1.0, 4)})
    skip = await limits.acquire("e", clock.monotonic() - 0.5)
    assert skip == ProviderSkip("e", SlotRefusal.DEADLINE_PASSED)
    assert limits.in_flight() == 0


async def test_req_agg_005_waiters_are_served_in_arrival_order(clock: ManualClock) -> None:
    """REQ-AGG-005: a freed slot goes to the longest waiter, never to a newcomer."""
    limits = make(clock, {"e": (100, 1.0, 1)})
    held = await limits.acquire("e", clock.monotonic())
    assert isinstance(held, ProviderSlot)
    order: list[int] = []

    async def wait(i: int) -> None:
        async with limits.slot("e", clock.monotonic() + FAR):
            order.append(i)
            await anyio.lowlevel.checkpoint()

    async with anyio.create_task_group() as tg:
        for i in range(3):
            tg.start_soon(wait, i)
            await anyio.wait_all_tasks_blocked()
        held.release()
        newcomer = await limits.acquire("e", clock.monotonic())
        assert newcomer == ProviderSkip("e", SlotRefusal.ENGINE_CONCURRENCY)
    assert order == [0, 1, 2]
