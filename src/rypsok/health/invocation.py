"""Invocation limits: calls per tool per minute, per caller (REQ-MCP-010, REQ-SEC-019).

A sliding window of :data:`WINDOW_S` seconds per (caller, tool): a call is admitted when fewer
than the tool's limit were admitted in the last minute. A refused call learns ``retry_after_ms``,
the time until the oldest admitted call leaves the window, which is exactly when the next call
would be admitted. Refused calls are not recorded, so a caller that keeps knocking gets in as
soon as the window allows.

The HTTP service passes the authenticated caller's name; stdio has one caller,
:data:`LOCAL_CALLER`, which makes the limits per process as REQ-MCP-010 states. Caller names
are only dictionary keys here: never logged, never exported as metric labels.

**Shared by replicas.** With a ``shared`` store (Redis, :mod:`rypsok.health.shared_window`),
:meth:`InvocationLimits.admit_shared` counts an authenticated caller's calls across every
replica, so a load balancer does not multiply its allowance. The local caller stays per
process (REQ-MCP-010). When the store fails, the in-process window decides: per-process limits,
never a failed call.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from rypsok.config.limits import limit
from rypsok.contract.vocabulary import ToolName
from rypsok.health.clock import Clock

WINDOW_S = 60.0
"""The window of "calls per minute"."""

LOCAL_CALLER = "local"
"""The one caller of a stdio process."""

_DEFAULT_LIMIT_IDS: dict[ToolName, str] = {
    ToolName.WEB_SEARCH: "LIM-C6",
    ToolName.WEB_FETCH: "LIM-C7",
    ToolName.ENGINE_STATUS: "LIM-C8",
}

# Idle windows are swept when the table has doubled since the last sweep (never below this),
# so the memory for callers that went quiet stays proportional to the active ones.
_MIN_SWEEP_SIZE = 64


def default_calls_per_minute() -> dict[ToolName, int]:
    """Calls per minute of every tool from the limits table (LIM-C6, LIM-C7, LIM-C8)."""
    return {tool: limit(limit_id) for tool, limit_id in _DEFAULT_LIMIT_IDS.items()}


class SharedCalls(Protocol):
    """Call windows shared by replicas (:class:`rypsok.health.shared_window.SharedWindows`)."""

    async def try_call(
        self, tool: ToolName, caller: str, limit: int, window_s: float
    ) -> float | None:
        """0.0 when the call was admitted and recorded; otherwise the seconds until one would
        be; None when the shared store is unavailable."""
        ...


@dataclass(frozen=True, slots=True)
class InvocationDecision:
    """Whether a call may run; a refused one carries when to retry."""

    admitted: bool
    retry_after_ms: int | None = None


class InvocationLimits:
    """Sliding-window call limits keyed by (caller, tool)."""

    def __init__(
        self,
        calls_per_minute: Mapping[ToolName, int] | None = None,
        *,
        clock: Clock,
        shared: SharedCalls | None = None,
    ) -> None:
        """Tools missing from ``calls_per_minute`` get their default from the limits table.

        ``shared`` makes :meth:`admit_shared` count callers' calls across replicas.
        """
        self._limits = default_calls_per_minute()
        self._limits.update(calls_per_minute or {})
        if any(n < 1 for n in self._limits.values()):
            raise ValueError("a tool's calls per minute must be at least 1")
        self._clock = clock
        self._shared = shared
        self._windows: dict[tuple[str, ToolName], deque[float]] = {}
        self._sweep_at = _MIN_SWEEP_SIZE

    def limit_of(self, tool: ToolName) -> int:
        """The calls per minute allowed for ``tool``."""
        return self._limits[tool]

    def admit(self, tool: ToolName, caller: str = LOCAL_CALLER) -> InvocationDecision:
        """Admit and record one call of ``tool`` by ``caller``, or refuse it with a retry time."""
        now = self._clock.monotonic()
        key = (caller, ToolName(tool))
        window = self._windows.get(key)
        if window is None:
            window = deque()
            self._windows[key] = window
            if len(self._windows) >= self._sweep_at:
                self._sweep(now, keep=key)
        horizon = now - WINDOW_S
        while window and window[0] <= horizon:
            window.popleft()
        if len(window) < self._limits[key[1]]:
            window.append(now)
            return InvocationDecision(admitted=True)
        wait_s = window[0] + WINDOW_S - now
        return InvocationDecision(admitted=False, retry_after_ms=max(1, math.ceil(wait_s * 1000)))

    async def admit_shared(self, tool: ToolName, caller: str = LOCAL_CALLER) -> InvocationDecision:
        """:meth:`admit` with the (caller, tool) window shared by all replicas, when configured.

        Without a shared store, and for the local caller, this is :meth:`admit`. When the store
        is unavailable the in-process window decides (fail open to per-process limits).
        """
        tool = ToolName(tool)
        if self._shared is None or caller == LOCAL_CALLER:
            return self.admit(tool, caller)
        wait_s = await self._shared.try_call(tool, caller, self._limits[tool], WINDOW_S)
        if wait_s is None:
            return self.admit(tool, caller)
        if wait_s > 0:
            return InvocationDecision(
                admitted=False, retry_after_ms=max(1, math.ceil(wait_s * 1000))
            )
        self.admit(tool, caller)  # this process's history, for a later fallback
        return InvocationDecision(admitted=True)

    def tracked(self) -> int:
        """How many (caller, tool) windows are held; for tests of the memory bound."""
        return len(self._windows)

    def _sweep(self, now: float, keep: tuple[str, ToolName]) -> None:
        horizon = now - WINDOW_S
        self._windows = {
            k: w for k, w in self._windows.items() if k == keep or (w and w[-1] > horizon)
        }
        self._sweep_at = max(_MIN_SWEEP_SIZE, 2 * len(self._windows))
