"""The warm-up after start (REQ-PERF-004): the core assembled, then frozen for the collector."""

from __future__ import annotations

import gc
import logging

import pytest

from rypsok.app import runtime
from rypsok.config.load import parse_settings

pytestmark = pytest.mark.anyio


async def test_req_perf_004_warm_up_takes_the_loaded_core_out_of_full_collections() -> None:
    """REQ-PERF-004: a full collection of the cyclic garbage collector walks every tracked
    object, and a loaded core holds about 100,000 of them (tens of milliseconds per walk,
    stalling every call in flight). The warm-up freezes what it loaded, so later
    collections only see what calls create."""
    gc.unfreeze()
    settings = parse_settings({"schema_version": 1, "fetch": {"workers": 1}})
    try:
        async with runtime(settings, logging.getLogger("rypsok.test.warm_up")) as services:
            before = gc.get_freeze_count()
            await services.warm_up()
            frozen = gc.get_freeze_count()
        assert before == 0
        # The core: egress, drivers, pipelines, trafilatura and lxml's Python side.
        assert frozen > 50_000
    finally:
        gc.unfreeze()
