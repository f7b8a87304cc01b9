"""Fetch concurrency bounds (REQ-SEC-012)."""

from __future__ import annotations

import anyio
import pytest

from rypsok.fetch.hosts import FetchSlots

pytestmark = pytest.mark.anyio


async def test_req_sec_012_process_and_host_bounds_never_exceeded() -> None:
    """REQ-SEC-012: fetches in flight never exceed LIM-C3 in the process nor LIM-C4 per host;
    a fetch that cannot get a slot in time is told so instead of waiting past it.

    Proves THR-40.
    """
    slots = FetchSlots(process=3, per_host=2)
    peak_total = 0
    peak_host: dict[str, int] = {}
    now: dict[str, int] = {}
    refused = 0

    async def fetch(host: str) -> None:
        nonlocal peak_total, refused
        async with slots.slot(host, timeout_s=2.0) as got:
            if not got:
                refused += 1
                return
            now[host] = now.get(host, 0) + 1
            peak_host[host] = max(peak_host.get(host, 0), now[host])
            peak_total = max(peak_total, slots.in_flight())
            await anyio.sleep(0.01)
            now[host] -= 1

    async with anyio.create_task_group() as group:
        for i in range(40):
            group.start_soon(fetch, f"host{i % 4}.example")
    assert peak_total == 3
    assert max(peak_host.values()) <= 2
    assert refused == 0
    async with slots.slot("a.example", 5) as first, slots.slot("a.example", 5) as second:
        assert first and second
        async with slots.slot("a.example", 0.05) as third:
            assert third is False  # the host's two slots are taken: refused at its deadline
    assert slots.in_flight() == 0
