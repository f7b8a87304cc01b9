"""The clock every health component reads, injected so tests can drive time by hand.

Nothing in :mod:`rypsok.health` calls :func:`time.monotonic` directly: the composition root
passes a :class:`SystemClock`, tests pass a :class:`ManualClock`. ``monotonic`` measures
intervals (cooldowns, windows, deadlines); ``time`` is the wall clock, needed only to turn an
HTTP-date ``Retry-After`` into seconds (``rypsok.engines.base.parse_retry_after(value, now)``).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Protocol

import anyio.lowlevel

Sleep = Callable[[float], Awaitable[None]]
"""An awaitable pause of some seconds; :func:`anyio.sleep` in production."""


class Clock(Protocol):
    """A source of time: a monotonic clock for intervals and a wall clock for HTTP dates."""

    def monotonic(self) -> float:
        """Seconds on a clock that never goes back; only differences are meaningful."""
        ...

    def time(self) -> float:
        """Seconds since the Unix epoch."""
        ...


class SystemClock:
    """The process clocks."""

    def monotonic(self) -> float:
        """:func:`time.monotonic`."""
        return time.monotonic()

    def time(self) -> float:
        """:func:`time.time`."""
        return time.time()


class ManualClock:
    """A clock that moves only when told to: for tests of anything that reads a :class:`Clock`.

    :meth:`sleep` is a matching :data:`Sleep` that jumps the clock forward instead of waiting,
    so rate waits complete at once in real time while the clock shows they happened.
    """

    def __init__(self, start: float = 1000.0, wall: float = 1_700_000_000.0) -> None:
        self._start = start
        self._now = start
        self._wall = wall

    def monotonic(self) -> float:
        """The current reading."""
        return self._now

    def time(self) -> float:
        """The wall clock, moving together with the monotonic reading."""
        return self._wall + (self._now - self._start)

    def advance(self, seconds: float) -> None:
        """Move the clock forward; it never goes back."""
        if seconds < 0:
            raise ValueError("a monotonic clock does not go back")
        self._now += seconds

    async def sleep(self, seconds: float) -> None:
        """Yield once, then jump to the end of the pause unless another sleeper got further.

        Sleepers that start together end together, as they would on a real clock.
        """
        target = self._now + max(0.0, seconds)
        await anyio.lowlevel.checkpoint()
        self._now = max(self._now, target)
