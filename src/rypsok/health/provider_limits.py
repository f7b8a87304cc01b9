"""Provider limits: each engine's admitted rate and concurrency, and the process-wide cap.

REQ-CMP-002 (never exceed the admission record's rate, LIM-C9, and concurrency, LIM-C2) and
REQ-AGG-005 (never more than LIM-C1 engine requests in flight in the process).

A request takes, in this order, a slot of its engine (at most min(``max_in_flight``, LIM-C2)),
a slot of the process (LIM-C1) and a start in the engine's rate window. The fixed order rules
out deadlock; holding the concurrency slots while waiting for the rate keeps the number of rate
waiters per engine at its concurrency cap, and the start is recorded by the same step that
checks the window (:meth:`RateWindow.reserve`), so the rate holds whatever the waits did.

**Rate: a sliding-window log.** The last ``requests`` start times of each engine are kept; a
request may start at ``t`` only when fewer than ``requests`` starts lie in ``(t - per_seconds,
t]``. No window of length ``per_seconds`` thus ever holds more than ``requests`` starts (a
token bucket would allow a burst of twice that across a refill boundary). Memory per engine is
``requests`` floats.

**Shared rate.** ``shared_rate`` wraps each engine's in-process window in one shared by several
replicas (:mod:`rypsok.health.shared_window`, Redis); the in-process window stays its fallback.
Concurrency caps are per process in either case.

**Deadlines.** ``deadline`` is a reading of the injected clock: the latest moment the request
may *start*. A caller whose deadline has passed, or whom the rate window cannot serve before
it, is told to skip at once, without waiting; a caller waiting for a concurrency slot waits at
most until its deadline (a slot may free at any moment, so waiting is worth it) and is then
told to skip. That wait is an anyio timeout of ``deadline - clock.monotonic()`` seconds, so it
runs on the event loop's timer, which in production is the same monotonic clock. Freed slots go
to waiters in arrival order. The search pipeline turns a skip into a notice.

**Cancellation.** Every wait is cancellation-safe: a cancelled waiter holds nothing (anyio's
semaphores hand a slot back if cancellation races the grant, and every slot this module took
is released on any exception). A granted :class:`ProviderSlot` must be released, which
``async with`` does.
"""

from __future__ import annotations

from collections import deque
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from enum import StrEnum
from types import TracebackType
from typing import Protocol, Self

import anyio

from rypsok.config.limits import limit
from rypsok.engines.base import AdmissionRecord, RateLimit
from rypsok.health.clock import Clock, Sleep


class SlotRefusal(StrEnum):
    """Why a request may not start before its deadline."""

    RATE_LIMIT = "rate_limit"
    ENGINE_CONCURRENCY = "engine_concurrency"
    PROCESS_CONCURRENCY = "process_concurrency"
    DEADLINE_PASSED = "deadline_passed"


@dataclass(frozen=True, slots=True)
class ProviderSkip:
    """The answer to a caller that must skip the engine instead of waiting."""

    engine: str
    reason: SlotRefusal


class ProviderLimitSkippedError(Exception):
    """Raised by :meth:`ProviderLimits.slot` when the caller must skip the engine."""

    def __init__(self, skip: ProviderSkip) -> None:
        super().__init__(skip.reason.value)
        self.skip = skip


@dataclass(frozen=True, slots=True)
class EngineLimit:
    """What an admission record permits: a rate and a number of requests in flight."""

    rate: RateLimit
    max_in_flight: int

    def __post_init__(self) -> None:
        if self.rate.requests < 1 or not self.rate.per_seconds > 0:
            raise ValueError("a rate needs at least one request per positive period")
        if self.max_in_flight < 1:
            raise ValueError("max_in_flight must be at least 1")

    @classmethod
    def from_admission(cls, record: AdmissionRecord) -> EngineLimit:
        """The limits of an admission record (REQ-CMP-001)."""
        return cls(rate=record.rate, max_in_flight=record.max_in_flight)


class RateWindow(Protocol):
    """Where an engine's recent starts are counted: in this process, or shared by replicas."""

    def earliest(self, now: float) -> float:
        """The first moment from ``now`` on at which a start may be allowed, without recording.

        Exact in process; for a shared window a lower bound (other replicas' starts count too).
        """
        ...

    async def reserve(self, now: float) -> float:
        """Record a start at ``now`` and return ``now`` if the window allows one; otherwise
        record nothing and return the first moment it may."""
        ...


SharedRate = Callable[[str, RateLimit, RateWindow], RateWindow]
"""``shared_rate(engine, rate, in_process_window)``: the window an engine's starts go to."""


class _RateWindow:
    """The sliding-window log of one engine's recent starts."""

    __slots__ = ("_per_seconds", "_requests", "_starts")

    def __init__(self, rate: RateLimit) -> None:
        self._requests = rate.requests
        self._per_seconds = float(rate.per_seconds)
        # Only the last `requests` starts can block a new one; older ones fall off the left.
        self._starts: deque[float] = deque(maxlen=rate.requests)

    def earliest(self, now: float) -> float:
        """The first moment from ``now`` on at which one more request may start."""
        if len(self._starts) < self._requests:
            return now
        return max(now, self._starts[0] + self._per_seconds)

    async def reserve(self, now: float) -> float:
        """See :meth:`RateWindow.reserve`; never awaits, so check and record are one step."""
        earliest = self.earliest(now)
        if earliest <= now:
            self._starts.append(now)
        return earliest


class _EngineState:
    __slots__ = ("cap", "in_flight", "semaphore", "window")

    def __init__(self, engine_limit: EngineLimit, engine_cap: int, window: RateWindow) -> None:
        self.cap = min(engine_limit.max_in_flight, engine_cap)
        self.semaphore = anyio.Semaphore(self.cap)
        self.window = window
        self.in_flight = 0


class ProviderSlot:
    """Permission for one request in flight; release it when the request ends."""

    __slots__ = ("_owner", "_released", "engine", "started_at")

    def __init__(self, owner: ProviderLimits, engine: str, started_at: float) -> None:
        self._owner = owner
        self._released = False
        self.engine = engine
        self.started_at = started_at

    def release(self) -> None:
        """Free the engine's and the process's slot; a second call does nothing."""
        if not self._released:
            self._released = True
            self._owner._release(self.engine)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()


class ProviderLimits:
    """Admission of outbound engine requests under every provider and process limit."""

    def __init__(
        self,
        engines: Mapping[str, EngineLimit],
        *,
        clock: Clock,
        process_cap: int | None = None,
        engine_cap: int | None = None,
        sleep: Sleep = anyio.sleep,
        shared_rate: SharedRate | None = None,
    ) -> None:
        """``process_cap`` defaults to LIM-C1, ``engine_cap`` to LIM-C2.

        ``sleep`` waits for the rate window; pass :meth:`ManualClock.sleep` in tests.
        ``shared_rate`` shares the rate windows between replicas (see the module docstring).
        """
        self._clock = clock
        self._sleep = sleep
        self.process_cap = limit("LIM-C1") if process_cap is None else process_cap
        self.engine_cap = limit("LIM-C2") if engine_cap is None else engine_cap
        if self.process_cap < 1 or self.engine_cap < 1:
            raise ValueError("caps must be at least 1")
        self._process = anyio.Semaphore(self.process_cap)
        self._engines = {
            e: _EngineState(lim, self.engine_cap, _window(e, lim.rate, shared_rate))
            for e, lim in engines.items()
        }
        self._in_flight = 0

    @classmethod
    def from_admissions(
        cls,
        records: Iterable[AdmissionRecord],
        *,
        clock: Clock,
        process_cap: int | None = None,
        engine_cap: int | None = None,
        sleep: Sleep = anyio.sleep,
        shared_rate: SharedRate | None = None,
    ) -> ProviderLimits:
        """Limits for the engines of these admission records, keyed by their engine id."""
        return cls(
            {r.engine_id: EngineLimit.from_admission(r) for r in records},
            clock=clock,
            process_cap=process_cap,
            engine_cap=engine_cap,
            sleep=sleep,
            shared_rate=shared_rate,
        )

    def engine_cap_of(self, engine: str) -> int:
        """The concurrency cap in force for ``engine``: min(max_in_flight, LIM-C2)."""
        return self._state(engine).cap

    def in_flight(self, engine: str | None = None) -> int:
        """Requests in flight for one engine, or in the whole process."""
        return self._in_flight if engine is None else self._state(engine).in_flight

    async def acquire(self, engine: str, deadline: float) -> ProviderSlot | ProviderSkip:
        """A slot for one request to ``engine`` starting no later than ``deadline``, or a skip.

        Cancellation-safe: a cancelled caller holds no slot afterwards.
        """
        state = self._state(engine)
        now = self._clock.monotonic()
        if now > deadline:
            return ProviderSkip(engine, SlotRefusal.DEADLINE_PASSED)
        if state.window.earliest(now) > deadline:
            return ProviderSkip(engine, SlotRefusal.RATE_LIMIT)

        engine_held = process_held = False
        try:
            if not await self._take(state.semaphore, deadline):
                return ProviderSkip(engine, SlotRefusal.ENGINE_CONCURRENCY)
            engine_held = True
            if not await self._take(self._process, deadline):
                return ProviderSkip(engine, SlotRefusal.PROCESS_CONCURRENCY)
            process_held = True
            start = await self._wait_for_rate(state.window, deadline)
            if start is None:
                return ProviderSkip(engine, SlotRefusal.RATE_LIMIT)
            # The window recorded the start as it granted it; no await from there to here.
            state.in_flight += 1
            self._in_flight += 1
            engine_held = process_held = False  # now owned by the slot
            return ProviderSlot(self, engine, start)
        finally:
            if process_held:
                self._process.release()
            if engine_held:
                state.semaphore.release()

    @asynccontextmanager
    async def slot(self, engine: str, deadline: float) -> AsyncIterator[ProviderSlot]:
        """``async with`` form of :meth:`acquire`; raises :class:`ProviderLimitSkippedError`."""
        grant = await self.acquire(engine, deadline)
        if isinstance(grant, ProviderSkip):
            raise ProviderLimitSkippedError(grant)
        try:
            yield grant
        finally:
            grant.release()

    # --- internals ------------------------------------------------------------------------

    def _state(self, engine: str) -> _EngineState:
        try:
            return self._engines[engine]
        except KeyError:
            raise KeyError(f"no provider limits for engine {engine!r}") from None

    async def _take(self, semaphore: anyio.Semaphore, deadline: float) -> bool:
        """Take a slot, waiting at most until ``deadline``; False when it did not come."""
        try:
            semaphore.acquire_nowait()
        except anyio.WouldBlock:
            pass
        else:
            return True
        remaining = deadline - self._clock.monotonic()
        if remaining <= 0:
            return False
        with anyio.move_on_after(remaining):
            await semaphore.acquire()
            return True
        return False

    async def _wait_for_rate(self, window: RateWindow, deadline: float) -> float | None:
        """Wait until the window records one more start; None if not before the deadline.

        Returns the start time, read after the last sleep.
        """
        while True:
            now = self._clock.monotonic()
            earliest = await window.reserve(now)
            if earliest <= now:
                return now
            if earliest > deadline:
                return None
            await self._sleep(earliest - now)

    def _release(self, engine: str) -> None:
        state = self._engines[engine]
        state.in_flight -= 1
        self._in_flight -= 1
        self._process.release()
        state.semaphore.release()


def _window(engine: str, rate: RateLimit, shared_rate: SharedRate | None) -> RateWindow:
    local = _RateWindow(rate)
    return local if shared_rate is None else shared_rate(engine, rate, local)
