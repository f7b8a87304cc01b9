"""The overall search deadline (LIM-S4) and the hard ceiling of a web_search call (LIM-S7).

Every engine request already ends by its own timeout (LIM-S5, tested in test_pipeline.py), so
the engine phase's cut at LIM-S4 - LIM-S6 and the ceiling are backstops: they end a call whose
work does not end by itself. The tests make such work with the configurable limits set short:
a request that ignores its own timeout (a stub sender, driving the pipeline as in
test_two_step.py), a result cache that hangs on lookup (inside the engine phase) or on store
(after it). REQ-AGG-003, REQ-AGG-004, REQ-AGG-006, REQ-CACHE-006.
"""

from __future__ import annotations

import json
import logging
import time
from contextlib import AbstractAsyncContextManager
from typing import Any
from urllib.parse import urlsplit

import anyio
import pytest

from rypsok.cache.memory import MemoryCache
from rypsok.config.load import parse_settings
from rypsok.contract.arguments import SearchArguments
from rypsok.contract.context import CallContext
from rypsok.contract.vocabulary import Category
from rypsok.engines.base import EngineRequest, EngineResponse
from rypsok.engines.catalog import resolve_engines
from rypsok.engines.registry import DRIVER_MODULES
from rypsok.health.clock import ManualClock
from rypsok.health.metrics import Metrics
from rypsok.health.monitor import EngineMonitor
from rypsok.health.provider_limits import ProviderLimits
from rypsok.search.pipeline import SearchPipeline
from rypsok.services.calls import Services
from tests.fakes.http_server import FakeHTTPServer, fake_http_server
from tests.search.test_pipeline import PATHS, LogCapture, json_reply, search, search_services

pytestmark = pytest.mark.anyio

GUARD_S = 30.0  # an outer bound, so a broken deadline fails the test instead of hanging it


class Hang:
    """An awaitable step that never ends by itself; it records when it is cancelled."""

    def __init__(self) -> None:
        self.started = 0
        self.cancelled = 0

    async def __call__(self) -> None:
        self.started += 1
        try:
            await anyio.sleep_forever()
        finally:
            self.cancelled += 1


# --- LIM-S4: engines still running at the deadline (the pipeline, a stub sender) ------------


def news_settings(search: dict[str, int]) -> Any:
    entries: dict[str, Any] = {e: {"enabled": False} for e in DRIVER_MODULES}
    entries["hackernews"] = {"enabled": True}  # at their public endpoints: the sender is a stub
    entries["gdelt"] = {"enabled": True}
    return parse_settings({"schema_version": 1, "engines": entries, "search": search})


@pytest.mark.req("REQ-AGG-003")
async def test_req_agg_003_engine_still_running_at_the_deadline_is_cut() -> None:
    """REQ-AGG-003, REQ-AGG-004, REQ-AGG-006: a request that outlives its own timeout (the
    sender ignores it) is cut when the engine phase ends (deadline_ms - reserve_ms from the
    start of the call); its engine gets the engine_failed notice with class timeout, the
    engine that answered keeps its results, the outcome is partial, the stuck request was
    cancelled (not left running) and its provider-limit slots are free again."""
    settings = news_settings({"deadline_ms": 900, "engine_timeout_ms": 600, "reserve_ms": 300})
    engines = resolve_engines(settings)
    hang = Hang()
    timeouts: dict[str, float] = {}

    async def send(request: EngineRequest, **options: Any) -> EngineResponse:
        host = urlsplit(request.url).hostname or ""
        timeouts[host] = options["total_timeout_s"]
        if "gdeltproject" in host:
            await hang()
        body = json_reply("hackernews").body
        return EngineResponse(200, {"content-type": "application/json"}, body)

    clock = ManualClock()
    limits = ProviderLimits.from_admissions(
        [e.driver.admission for e in engines if e.active], clock=clock
    )
    logs = LogCapture()
    logger = logging.getLogger("rypsok.test.deadlines.cut")
    logger.setLevel(logging.DEBUG)
    logger.addHandler(logs)
    monitor = EngineMonitor(clock=clock, metrics=Metrics())
    pipeline = SearchPipeline(
        settings=settings,
        engines=engines,
        send=send,
        monitor=monitor,
        limits=limits,
        logger=logger,
    )
    args = SearchArguments("rust", Category.NEWS, 10, "en", None)
    started = time.monotonic()
    with anyio.fail_after(GUARD_S):
        response = await pipeline.search(args, CallContext(request_id="r1", caller="local"))
    elapsed = time.monotonic() - started
    assert response.outcome.value == "partial"
    assert len(response.results) == 3
    failed = [n for n in response.notices if n.code.value == "engine_failed"]
    assert [(n.engine, n.message) for n in failed] == [
        ("gdelt", "Engine gdelt failed (timeout); its results are missing.")
    ]
    assert (hang.started, hang.cancelled) == (1, 1)  # aborted, not detached
    assert limits.in_flight("gdelt") == 0 and limits.in_flight() == 0
    # Each request was given at most the engine phase (0.6 s) as its own timeout ...
    assert all(0 < t <= 0.6 for t in timeouts.values()), timeouts
    # ... and the search ended at the phase's end, not later (generous upper bound).
    assert 0.55 <= elapsed < 3.0


@pytest.mark.req("REQ-AGG-001")
async def test_req_agg_001_engines_of_one_search_are_asked_at_once() -> None:
    """REQ-AGG-001: the requests of one search are in flight together: each engine's answer
    waits until the other engine's request has been sent, which only a concurrent fan-out
    can satisfy (one engine after the other would wait for the deadline instead)."""
    settings = news_settings({"deadline_ms": 4000, "engine_timeout_ms": 3500, "reserve_ms": 500})
    engines = resolve_engines(settings)
    both_sent = anyio.Event()
    sent: list[str] = []

    async def send(request: EngineRequest, **options: Any) -> EngineResponse:
        host = urlsplit(request.url).hostname or ""
        sent.append(host)
        if len(sent) == 2:
            both_sent.set()
        await both_sent.wait()
        engine = "gdelt" if "gdeltproject" in host else "hackernews"
        return EngineResponse(200, {"content-type": "application/json"}, json_reply(engine).body)

    clock = ManualClock()
    pipeline = SearchPipeline(
        settings=settings,
        engines=engines,
        send=send,
        monitor=EngineMonitor(clock=clock, metrics=Metrics()),
        limits=ProviderLimits.from_admissions(
            [e.driver.admission for e in engines if e.active], clock=clock
        ),
        logger=logging.getLogger("rypsok.test.deadlines.fanout"),
    )
    args = SearchArguments("rust", Category.NEWS, 10, "en", None)
    with anyio.fail_after(GUARD_S):
        response = await pipeline.search(args, CallContext(request_id="r2", caller="local"))
    assert response.outcome.value == "ok", response.notices
    assert sorted(sent) == ["api.gdeltproject.org", "hn.algolia.com"]


# --- LIM-S4 and LIM-S7 through the whole service ------------------------------------------


def cached_services(
    server: FakeHTTPServer, engines: list[str], search_limits: dict[str, int]
) -> AbstractAsyncContextManager[tuple[Services, LogCapture]]:
    """``test_pipeline.search_services`` with ``[cache]`` on (memory) and ``[search]`` set."""
    cache = {"enabled": True, "backend": "memory"}
    return search_services(server, engines, extra={"search": search_limits, "cache": cache})


@pytest.mark.req("REQ-AGG-003")
async def test_req_agg_003_deadline_cuts_an_engine_stuck_before_its_request(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """REQ-AGG-003, REQ-AGG-004, REQ-AGG-006: an engine whose cache lookup hangs (a stuck
    cache backend) is still running when the engine phase ends; the search returns at the
    deadline with that engine failed as timeout, and the engine without a cache entry
    (SearXNG, whose answers are never cached) keeps its results: outcome partial."""
    hang = Hang()

    async def stuck_get(self: MemoryCache, key: str) -> bytes | None:
        await hang()
        return None

    monkeypatch.setattr(MemoryCache, "get", stuck_get)
    limits = {"deadline_ms": 1000, "engine_timeout_ms": 700, "reserve_ms": 300}
    with fake_http_server() as server:
        server.replies[PATHS["hackernews"]] = json_reply("hackernews")
        server.replies[PATHS["searxng"]] = json_reply("searxng")
        async with cached_services(server, ["hackernews", "searxng"], limits) as (services, _):
            started = time.monotonic()
            with anyio.fail_after(GUARD_S):
                data = await search(services, query="rust", category="news")
            elapsed = time.monotonic() - started
    assert data["outcome"] == "partial" and data["results"]
    failed = [(n["engine"], n["message"]) for n in data["notices"] if n["code"] == "engine_failed"]
    assert failed == [
        ("hackernews", "Engine hackernews failed (timeout); its results are missing.")
    ]
    assert [r.path for r in server.requests] == [PATHS["searxng"]]  # hackernews never asked
    assert (hang.started, hang.cancelled) == (1, 1)
    assert 0.6 <= elapsed < 4.0  # the phase's end (0.7 s), with a generous upper bound


@pytest.mark.req("REQ-AGG-003")
async def test_req_agg_003_hard_ceiling_ends_the_call(monkeypatch: pytest.MonkeyPatch) -> None:
    """REQ-AGG-003 (LIM-S7), REQ-ERR-001: work after the engine phase that does not end (a
    cache store that hangs) cannot hold the call beyond ``ceiling_ms``: the call ends with
    the error unavailable / timeout and rypsok's fixed message, the hanging store is
    cancelled, and the service answers the next call."""
    hang = Hang()

    async def stuck_put(self: MemoryCache, key: str, value: bytes, ttl_s: float) -> None:
        await hang()

    monkeypatch.setattr(MemoryCache, "put", stuck_put)
    # The engine phase must leave a request at least 0.5 s (pipeline.MIN_REQUEST_S).
    limits = {"deadline_ms": 1000, "engine_timeout_ms": 700, "reserve_ms": 300, "ceiling_ms": 2000}
    with fake_http_server() as server:
        server.replies[PATHS["hackernews"]] = json_reply("hackernews")
        async with cached_services(server, ["hackernews"], limits) as (services, logs):
            started = time.monotonic()
            with anyio.fail_after(GUARD_S):
                data = await search(services, query="rust", category="news")
            elapsed = time.monotonic() - started
            status = await services.call("engine_status", {})
    assert data["outcome"] == "error"
    error = data["error"]
    assert (error["kind"], error["reason"]) == ("unavailable", "timeout")
    assert error["message"] == "The search exceeded its time ceiling; retry later."
    assert (hang.started, hang.cancelled) == (1, 1)
    assert 1.9 <= elapsed < 6.0  # at the ceiling (2 s), not at the engine phase's end
    assert status.is_error is False
    assert [json.loads(line)["outcome"] for line in logs.lines if '"event":"call"' in line][:1] == [
        "error"
    ]
