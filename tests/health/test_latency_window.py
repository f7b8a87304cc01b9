"""Latency window tests: the median of the last LIM-S11 requests (REQ-STATUS-001, REQ-OBS-002)."""

from __future__ import annotations

from rypsok.config.limits import limit
from rypsok.health.latency import LatencyWindows


def test_req_status_001_none_when_nothing_completed() -> None:
    """REQ-STATUS-001: null when an engine has no completed request."""
    assert LatencyWindows().median("wikipedia") is None


def test_req_status_001_window_is_lim_s11() -> None:
    """REQ-STATUS-001: the window holds the last LIM-S11 requests."""
    assert LatencyWindows().size == limit("LIM-S11")


def test_req_obs_002_median_odd_and_even() -> None:
    """REQ-OBS-002: the median in whole milliseconds; halves round up."""
    w = LatencyWindows()
    for ms in (300, 100, 200):
        w.record("e", ms)
    assert w.median("e") == 200
    w.record("e", 251)
    assert w.median("e") == 226  # (200 + 251) / 2 = 225.5
    w.record("f", 10.4)
    assert w.median("f") == 10


def test_req_status_001_only_the_last_requests_count() -> None:
    """REQ-STATUS-001: older requests fall out of the window."""
    size = limit("LIM-S11")
    w = LatencyWindows()
    for _ in range(size):
        w.record("e", 5000)
    assert w.median("e") == 5000
    for _ in range(size // 2 + 1):
        w.record("e", 100)
    assert w.median("e") == 100
    for _ in range(size):
        w.record("e", 40)
    assert w.median("e") == 40


def test_engines_are_independent_and_negative_is_zero() -> None:
    """REQ-OBS-002: one window per engine; a clock hiccup never gives negative latency."""
    w = LatencyWindows(size=3)
    w.record("a", -5)
    w.record("b", 70)
    assert (w.median("a"), w.median("b")) == (0, 70)
