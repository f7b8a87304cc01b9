"""Fetch concurrency: at most LIM-C3 fetches in the process and LIM-C4 per host (REQ-SEC-012).

A fetch that cannot get its slots before its deadline ends with ``unavailable``/``capacity``
instead of waiting past it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio


class FetchSlots:
    """Process-wide and per-host capacity for fetches."""

    def __init__(self, *, process: int, per_host: int) -> None:
        self._process_cap = process
        self._process = anyio.Semaphore(process)
        self._per_host = per_host
        self._hosts: dict[str, tuple[anyio.Semaphore, int]] = {}

    def in_flight(self) -> int:
        """Fetches holding a process slot now."""
        return self._process_cap - self._process.value

    @asynccontextmanager
    async def slot(self, host: str, timeout_s: float) -> AsyncIterator[bool]:
        """Yield True with both slots held, or False when they could not be had in time."""
        limiter, users = self._hosts.get(host, (anyio.Semaphore(self._per_host), 0))
        self._hosts[host] = (limiter, users + 1)
        got_host = got_process = False
        try:
            # Only the waiting is bounded; the fetch itself runs outside this scope.
            with anyio.move_on_after(max(0.0, timeout_s)):
                await limiter.acquire()
                got_host = True
                await self._process.acquire()
                got_process = True
            yield got_process
        finally:
            if got_process:
                self._process.release()
            if got_host:
                limiter.release()
            limiter, users = self._hosts[host]
            if users <= 1:
                del self._hosts[host]  # bounded memory: only hosts in use are kept
            else:
                self._hosts[host] = (limiter, users - 1)
