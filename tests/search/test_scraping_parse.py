"""Scraping parses run off the event loop, at most LIM-C5 at once (REQ-ENG-015, REQ-SEC-012).

The pipeline drives the DuckDuckGo scraping driver with a stub sender (below the network
boundary) and the driver's ``parse`` replaced by one that blocks its thread for a while and
records how many parses run at once, on which thread, and how far the event loop got meanwhile.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from dataclasses import replace
from typing import Any

import anyio
import pytest

from rypsok.app import runtime
from rypsok.config.load import parse_settings
from rypsok.contract.arguments import SearchArguments
from rypsok.contract.context import CallContext
from rypsok.contract.errors import ToolFailure
from rypsok.contract.vocabulary import Category
from rypsok.engines.base import EngineRequest, EngineResponse, RateLimit, RawResult
from rypsok.engines.catalog import ConfiguredEngine, resolve_engines
from rypsok.engines.registry import DRIVER_MODULES
from rypsok.fetch import Extractor
from rypsok.health.clock import ManualClock
from rypsok.health.metrics import Metrics
from rypsok.health.monitor import EngineMonitor
from rypsok.health.provider_limits import EngineLimit, ProviderLimits
from rypsok.search.pipeline import SearchPipeline
from tests.fetch.conftest import HOSTILE_PROGRAM
from tests.search.test_pipeline import LogCapture

pytestmark = pytest.mark.anyio

GUARD_S = 30.0  # an outer bound, so a broken limiter fails the test instead of hanging it
PAGE = b"<html><body><div class='no-results'>handwritten page</div></body></html>"


class RecordingParse:
    """A parse that holds its thread for ``hold_s`` and records what happened meanwhile."""

    def __init__(self, hold_s: float) -> None:
        self.hold_s = hold_s
        self.lock = threading.Lock()
        self.running = 0
        self.most = 0
        self.calls = 0
        self.threads: set[int] = set()
        self.ticks = 0  # advanced by a task on the event loop
        self.ticks_during: list[int] = []
        self.started: list[float] = []  # time.monotonic() at the start of each parse

    def __call__(self, response: EngineResponse) -> list[RawResult]:
        with self.lock:
            self.started.append(time.monotonic())
            self.calls += 1
            self.running += 1
            self.most = max(self.most, self.running)
            self.threads.add(threading.get_ident())
        before = self.ticks
        time.sleep(self.hold_s)  # a parse that occupies its thread, as lxml does
        with self.lock:
            self.ticks_during.append(self.ticks - before)
            self.running -= 1
        return []


def pipeline_with(
    parse: RecordingParse,
    workers: int,
    search: dict[str, int] | None = None,
    logs: LogCapture | None = None,
    parse_limiter: anyio.CapacityLimiter | None = None,
) -> SearchPipeline:
    """The pipeline with only DuckDuckGo on (``[scraping]`` on), its parse replaced."""
    entries: dict[str, Any] = {e: {"enabled": False} for e in DRIVER_MODULES}
    entries["duckduckgo"] = {"enabled": True}
    data: dict[str, Any] = {
        "schema_version": 1,
        "engines": entries,
        "scraping": {"enabled": True},
        "fetch": {"workers": workers},  # LIM-C5 as configured
    }
    if search:
        data["search"] = search
    settings = parse_settings(data)
    engines: list[ConfiguredEngine] = []
    for engine in resolve_engines(settings):
        if engine.engine_id == "duckduckgo":
            assert engine.driver.scraping and engine.active
            engine = replace(engine, driver=replace(engine.driver, parse=parse))
        engines.append(engine)

    async def send(request: EngineRequest, **options: Any) -> EngineResponse:
        return EngineResponse(200, {"content-type": "text/html; charset=utf-8"}, PAGE)

    clock = ManualClock()
    # Generous provider limits: only the parse limiter may hold the searches back here.
    limits = ProviderLimits({"duckduckgo": EngineLimit(RateLimit(100, 1.0), 10)}, clock=clock)
    logger = logging.getLogger(f"rypsok.test.scraping_parse.{id(parse)}")
    logger.setLevel(logging.DEBUG)
    logger.handlers[:] = [logs or LogCapture()]
    return SearchPipeline(
        settings=settings,
        engines=engines,
        send=send,
        monitor=EngineMonitor(clock=clock, metrics=Metrics()),
        limits=limits,
        logger=logger,
        parse_limiter=parse_limiter,
    )


async def run_searches(pipeline: SearchPipeline, parse: RecordingParse, count: int) -> list[Any]:
    """``count`` searches at once, with a ticker on the loop; their responses or failures."""
    outcomes: list[Any] = []
    done = anyio.Event()

    async def ticker() -> None:
        while not done.is_set():
            parse.ticks += 1
            await anyio.sleep(0.01)

    async def one(index: int) -> None:
        args = SearchArguments(f"rust {index}", Category.GENERAL, 10, "en", None)
        try:
            outcomes.append(await pipeline.search(args, CallContext(f"r{index}", "local")))
        except ToolFailure as failure:
            outcomes.append(failure)

    with anyio.fail_after(GUARD_S):
        async with anyio.create_task_group() as group:
            group.start_soon(ticker)
            async with anyio.create_task_group() as searches:
                for index in range(count):
                    searches.start_soon(one, index)
            done.set()
    return outcomes


@pytest.mark.parametrize("workers", [2, 1])
async def test_req_eng_015_scraping_parses_never_exceed_lim_c5(workers: int) -> None:
    """REQ-ENG-015, REQ-SEC-012: with LIM-C5 = ``workers``, three concurrent searches of the
    scraping engine parse at most that many pages at once (and do reach it: the bound is the
    limiter, not an accident of timing); every page is parsed, none on the event loop's
    thread."""
    parse = RecordingParse(hold_s=0.3)
    pipeline = pipeline_with(parse, workers)
    outcomes = await run_searches(pipeline, parse, 3)
    assert parse.calls == 3
    assert parse.most == workers
    assert threading.get_ident() not in parse.threads
    assert [o.outcome.value for o in outcomes] == ["empty"] * 3


async def test_req_eng_015_event_loop_stays_responsive_during_a_scraping_parse() -> None:
    """REQ-ENG-015, REQ-PAGE-008: while a scraped page is parsed, the event loop keeps
    running other tasks: a 10 ms ticker advances many times during each 0.3 s parse (it could
    not advance at all if the parse ran on the loop)."""
    parse = RecordingParse(hold_s=0.3)
    await run_searches(pipeline_with(parse, 2), parse, 1)
    assert parse.calls == 1
    assert parse.ticks_during[0] >= 5, parse.ticks_during


async def test_req_eng_015_waiting_for_a_parse_permit_ends_at_the_engine_timeout() -> None:
    """REQ-SEC-012 ("further work waits or, when the deadline would be missed, ends"),
    REQ-ENG-015: with LIM-C5 = 1 and one long parse holding the permit, a second search's page
    waits only until its engine timeout (1 s) and then fails as timeout, unparsed; the first
    parse still completes."""
    parse = RecordingParse(hold_s=1.6)
    search = {"deadline_ms": 3000, "engine_timeout_ms": 1000, "reserve_ms": 500}
    logs = LogCapture()
    pipeline = pipeline_with(parse, 1, search, logs)
    outcomes = await run_searches(pipeline, parse, 2)
    assert parse.calls == 1
    failed = [json.loads(line) for line in logs.lines if '"engine_failed"' in line]
    assert [line["failure"] for line in failed] == ["timeout"]
    failures = [o for o in outcomes if isinstance(o, ToolFailure)]
    answers = [o for o in outcomes if not isinstance(o, ToolFailure)]
    assert [f.reason.value for f in failures] == ["no_engine_answered"]
    assert [a.outcome.value for a in answers] == ["empty"]


async def test_req_sec_012_search_parses_and_fetch_extraction_share_lim_c5() -> None:
    """REQ-SEC-012 ("parsing tasks shall never exceed LIM-C5"), REQ-ENG-015: web_search's
    parses and web_fetch's extraction jobs hold one limiter of LIM-C5 tokens, as the service
    wires them (rypsok.app): with LIM-C5 = 1 and a page being extracted, a scraped page waits
    for the extraction to end before it is parsed, and then is."""
    limiter = anyio.CapacityLimiter(1)
    parse = RecordingParse(hold_s=0.05)
    pipeline = pipeline_with(parse, 1, parse_limiter=limiter)
    extraction_ended: list[float] = []
    async with Extractor(
        workers=1, sandbox="none", timeout_s=8.0, program=HOSTILE_PROGRAM, parse_limiter=limiter
    ) as extractor:
        await extractor.start()

        async def extract() -> None:
            await extractor.extract(b"HOSTILE:sleep:1.0", "text/plain", "https://x.invalid/")
            extraction_ended.append(time.monotonic())

        with anyio.fail_after(GUARD_S):
            async with anyio.create_task_group() as group:
                group.start_soon(extract)
                while limiter.borrowed_tokens == 0:  # the extraction holds the token
                    await anyio.sleep(0.005)
                outcomes = await run_searches(pipeline, parse, 1)
    assert [o.outcome.value for o in outcomes] == ["empty"]
    assert parse.calls == 1
    assert parse.started[0] >= extraction_ended[0]


def test_req_sec_012_a_shared_parse_limiter_matches_the_worker_count() -> None:
    """A pool sharing the process's parse limiter has exactly as many workers as tokens, so
    that every job holding a token finds a worker."""
    with pytest.raises(ValueError, match="as many tokens as the pool workers"):
        Extractor(workers=2, sandbox="none", parse_limiter=anyio.CapacityLimiter(1))


async def test_req_sec_012_the_service_wires_one_parse_limiter_for_both_tools() -> None:
    """The composition root gives web_search's pipeline and web_fetch's worker pool the same
    limiter of LIM-C5 tokens (``[fetch] workers``)."""
    settings = parse_settings({"schema_version": 1, "fetch": {"workers": 3, "sandbox": "none"}})
    async with runtime(settings, logging.getLogger("rypsok.test.parse_limiter")) as services:
        search_handler, fetch_handler = await services._fetch.__self__.handlers()
        search_limiter = search_handler._pipeline._parse_limiter
        fetch_limiter = fetch_handler._extractor.pool._limiter
        assert search_limiter is fetch_limiter
        assert search_limiter.total_tokens == 3
