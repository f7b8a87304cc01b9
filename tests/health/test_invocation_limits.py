"""Invocation limit tests: calls per tool per minute, per caller (REQ-TEST-016).

REQ-MCP-010 (LIM-C6/C7/C8 calls per tool per minute; a refused call learns when to retry) and
REQ-SEC-019 (in HTTP mode the limits apply per authenticated caller).
"""

from __future__ import annotations

import pytest

from rypsok.config.limits import limit
from rypsok.contract.vocabulary import ToolName
from rypsok.health.clock import ManualClock
from rypsok.health.invocation import (
    LOCAL_CALLER,
    WINDOW_S,
    InvocationDecision,
    InvocationLimits,
    default_calls_per_minute,
)

SEARCH = ToolName.WEB_SEARCH


def test_req_mcp_010_defaults_are_lim_c6_c7_c8() -> None:
    """REQ-MCP-010: the limits of the three tools come from the limits table."""
    assert default_calls_per_minute() == {
        ToolName.WEB_SEARCH: limit("LIM-C6"),
        ToolName.WEB_FETCH: limit("LIM-C7"),
        ToolName.ENGINE_STATUS: limit("LIM-C8"),
    }


def test_req_mcp_010_refuses_the_call_past_the_limit_with_retry_after(
    clock: ManualClock,
) -> None:
    """REQ-MCP-010, REQ-TEST-016: the 61st call in a minute is refused with retry_after_ms.

    Proves THR-06.
    """
    limits = InvocationLimits(clock=clock)
    n = limits.limit_of(SEARCH)
    t0 = clock.monotonic()
    for _ in range(n):
        assert limits.admit(SEARCH) == InvocationDecision(admitted=True)
        clock.advance(0.5)
    # The first call was at t0; it leaves the window at t0 + 60 s.
    refused = limits.admit(SEARCH)
    assert not refused.admitted
    expected_ms = round((t0 + WINDOW_S - clock.monotonic()) * 1000)
    assert refused.retry_after_ms == expected_ms
    clock.advance(expected_ms / 1000 - 0.25)  # binary-exact steps: no rounding at the edge
    assert not limits.admit(SEARCH).admitted
    clock.advance(0.25)
    assert limits.admit(SEARCH).admitted
    assert not limits.admit(SEARCH).admitted  # the second call of the first minute is still in


def test_req_mcp_010_admits_again_after_the_window(clock: ManualClock) -> None:
    """REQ-MCP-010: a full minute later the whole allowance is back."""
    limits = InvocationLimits({SEARCH: 3}, clock=clock)
    for _ in range(3):
        assert limits.admit(SEARCH).admitted
    assert limits.admit(SEARCH).retry_after_ms == WINDOW_S * 1000
    clock.advance(WINDOW_S)
    for _ in range(3):
        assert limits.admit(SEARCH).admitted
    assert not limits.admit(SEARCH).admitted


def test_req_mcp_010_refused_calls_do_not_extend_the_wait(clock: ManualClock) -> None:
    """REQ-MCP-010: knocking while refused does not push the retry time back."""
    limits = InvocationLimits({SEARCH: 1}, clock=clock)
    assert limits.admit(SEARCH).admitted
    for _ in range(50):
        clock.advance(1.0)
        assert not limits.admit(SEARCH).admitted
    clock.advance(WINDOW_S - 50.0)
    assert limits.admit(SEARCH).admitted


def test_req_mcp_010_limits_are_per_tool(clock: ManualClock) -> None:
    """REQ-MCP-010: each tool has its own allowance."""
    limits = InvocationLimits({SEARCH: 1, ToolName.WEB_FETCH: 1}, clock=clock)
    assert limits.admit(SEARCH).admitted
    assert not limits.admit(SEARCH).admitted
    assert limits.admit(ToolName.WEB_FETCH).admitted
    assert limits.limit_of(ToolName.ENGINE_STATUS) == limit("LIM-C8")


def test_req_sec_019_limits_are_per_caller(clock: ManualClock) -> None:
    """REQ-SEC-019: one caller's exhausted allowance does not touch another's."""
    limits = InvocationLimits({SEARCH: 2}, clock=clock)
    for _ in range(2):
        assert limits.admit(SEARCH, "alice").admitted
    assert not limits.admit(SEARCH, "alice").admitted
    assert limits.admit(SEARCH, "bob").admitted
    assert limits.admit(SEARCH, LOCAL_CALLER).admitted
    assert limits.admit(SEARCH).admitted  # stdio's one caller is LOCAL_CALLER
    assert not limits.admit(SEARCH, LOCAL_CALLER).admitted


def test_req_sec_019_idle_callers_are_forgotten(clock: ManualClock) -> None:
    """REQ-SEC-019: memory follows the active callers, not every caller ever seen."""
    limits = InvocationLimits(clock=clock)
    for i in range(1000):
        limits.admit(SEARCH, f"caller-{i}")
    clock.advance(WINDOW_S)
    for i in range(1000):
        limits.admit(SEARCH, f"later-{i}")
    assert limits.tracked() < 1500


def test_invalid_limit_is_refused(clock: ManualClock) -> None:
    """A tool allowed zero calls would be a disabled tool, which is configured elsewhere."""
    with pytest.raises(ValueError):
        InvocationLimits({SEARCH: 0}, clock=clock)
