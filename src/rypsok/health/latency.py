"""Latency windows: the median of each engine's last LIM-S11 completed requests (REQ-STATUS-001).

Which requests count as completed is the caller's decision (see :mod:`rypsok.health.monitor`);
this module only keeps the window and computes the median.
"""

from __future__ import annotations

import math
from collections import deque

from rypsok.config.limits import limit


class LatencyWindows:
    """A bounded window of latencies per engine."""

    def __init__(self, size: int | None = None) -> None:
        """``size`` defaults to LIM-S11."""
        self.size = limit("LIM-S11") if size is None else size
        if self.size < 1:
            raise ValueError("a latency window holds at least one request")
        self._windows: dict[str, deque[float]] = {}

    def record(self, engine: str, latency_ms: float) -> None:
        """Add one request's latency; the oldest falls out when the window is full."""
        window = self._windows.get(engine)
        if window is None:
            window = deque(maxlen=self.size)
            self._windows[engine] = window
        window.append(max(0.0, float(latency_ms)))

    def median(self, engine: str) -> int | None:
        """The median in whole milliseconds (halves round up), or None when nothing completed."""
        window = self._windows.get(engine)
        if not window:
            return None
        ordered = sorted(window)
        middle = len(ordered) // 2
        odd = len(ordered) % 2 == 1
        value = ordered[middle] if odd else (ordered[middle - 1] + ordered[middle]) / 2
        # Round half up rather than Python's round-half-even: 12.5 ms reads as 13 ms.
        return math.floor(value + 0.5)
