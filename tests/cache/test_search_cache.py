"""web_search with the in-process result cache, end to end over simulated engines on loopback.

REQ-CACHE-001 (off by default, not needed for correctness), REQ-CACHE-002 (fetched content is
never cached), REQ-CACHE-003 and REQ-CMP-007 (eligibility: only cacheable engines, only the
same parameters), REQ-CACHE-004 (callers isolated), REQ-CACHE-006 (a failing cache costs
speed only), REQ-TEST-010. A hit answers for its engine without contacting it: it spends none
of the engine's rate, ignores its circuit and is no request in its metrics.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from rypsok.config.load import parse_settings
from rypsok.contract.arguments import SearchArguments
from rypsok.contract.context import CallContext
from rypsok.contract.vocabulary import Category, TimeRange
from rypsok.engines import hackernews
from rypsok.engines.base import EngineResponse
from rypsok.engines.catalog import resolve_engines
from rypsok.engines.registry import DRIVER_MODULES
from rypsok.health.clock import ManualClock
from rypsok.health.metrics import Metrics
from rypsok.health.monitor import EngineMonitor
from rypsok.health.provider_limits import ProviderLimits
from rypsok.search.pipeline import SearchPipeline
from tests.cache.support import (
    FIXTURES,
    GDELT,
    HN,
    capture_logger,
    engine_reply,
    hits,
    search,
    search_settings,
    services_for,
)
from tests.fakes.http_server import Reply, fake_http_server

pytestmark = pytest.mark.anyio
MEMORY = {"enabled": True, "backend": "memory"}


def dump(data: dict[str, Any]) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


async def test_req_cache_001_off_by_default_every_search_asks_the_engine() -> None:
    """REQ-CACHE-001: without a [cache] table nothing is cached: the same search twice asks
    the engine twice and gets the same answer."""
    with fake_http_server() as server:
        server.replies[HN] = engine_reply("hackernews")
        settings = search_settings(server, ["hackernews"])
        assert settings.cache.enabled is False
        async with services_for(settings) as (services, logs):
            first = await search(services, query="rust")
            second = await search(services, query="rust")
    assert first["outcome"] == "ok" and dump(first) == dump(second)
    assert hits(server, HN) == 2
    assert logs.events("engine_cache_hit") == []


async def test_req_cache_001_a_hit_gives_the_same_answer_without_a_request() -> None:
    """REQ-CACHE-001, REQ-TEST-010: a cached answer is byte for byte the answer without a
    cache; the engine is asked once."""
    with fake_http_server() as server:
        server.replies[HN] = engine_reply("hackernews")
        async with services_for(search_settings(server, ["hackernews"])) as (services, _):
            uncached = await search(services, query="rust")
        async with services_for(search_settings(server, ["hackernews"], MEMORY)) as (
            services,
            logs,
        ):
            first = await search(services, query="rust")
            second = await search(services, query="rust")
    assert dump(uncached) == dump(first) == dump(second)
    assert hits(server, HN) == 2  # one without the cache, one to fill it
    assert len(logs.events("engine_cache_hit")) == 1
    assert all("rust" not in line for line in logs.lines)  # no query text in the log


async def test_req_cache_003_other_parameters_miss() -> None:
    """REQ-CACHE-003: an entry serves only the request parameters it was produced for: another
    query text or time range asks the engine; max_results, applied after fusion, does not.

    Proves THR-44.
    """
    with fake_http_server() as server:
        server.replies[HN] = engine_reply("hackernews")
        async with services_for(search_settings(server, ["hackernews"], MEMORY)) as (services, _):
            await search(services, query="rust")
            await search(services, query="rust lang")
            await search(services, query="rust", time_range="week")
            assert hits(server, HN) == 3
            await search(services, query="rust", time_range="week")
            await search(services, query="rust lang")
            await search(services, query="rust", max_results=3)
            assert hits(server, HN) == 3


async def test_req_cache_004_callers_are_isolated() -> None:
    """REQ-CACHE-004: one caller's entries never answer another caller."""
    with fake_http_server() as server:
        server.replies[HN] = engine_reply("hackernews")
        async with services_for(search_settings(server, ["hackernews"], MEMORY)) as (services, _):
            await search(services, caller="alice", query="rust")
            await search(services, caller="bob", query="rust")
            await search(services, query="rust")  # the local caller
            assert hits(server, HN) == 3
            await search(services, caller="alice", query="rust")
            await search(services, caller="bob", query="rust")
            assert hits(server, HN) == 3


async def test_req_cmp_007_an_engine_that_forbids_storage_is_never_cached(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """REQ-CMP-007, REQ-CACHE-003: results of an engine whose admission record forbids storage
    are never cached, even with the cache on."""
    record = dataclasses.replace(hackernews.ADMISSION, cacheable=False)
    monkeypatch.setattr(hackernews, "ADMISSION", record)
    with fake_http_server() as server:
        server.replies[HN] = engine_reply("hackernews")
        async with services_for(search_settings(server, ["hackernews"], MEMORY)) as (
            services,
            logs,
        ):
            for _ in range(3):
                assert (await search(services, query="rust"))["outcome"] == "ok"
    assert hits(server, HN) == 3
    assert logs.events("engine_cache_hit") == []


async def test_req_cache_002_fetched_content_is_never_cached() -> None:
    """REQ-CACHE-002: with the cache on, web_fetch of the same page twice reads it twice."""
    page = b"<html><body><article><h1>Tides</h1><p>" + b"The tide rises. " * 40
    page += b"</p></article></body></html>"
    with fake_http_server() as server:
        server.replies["/page"] = Reply(body=page, headers=(("Content-Type", "text/html"),))
        settings = search_settings(
            server,
            [],
            MEMORY,
            fetch={"allow_http": True, "ports": [server.port]},
        )
        async with services_for(settings, extra_allow=("127.0.0.0/8",)) as (services, _):
            for _ in range(2):
                result = await services.call("web_fetch", {"url": server.url("/page")})
                assert result.structured["outcome"] == "ok", result.structured
    assert hits(server, "/page") == 2


async def test_a_hit_spends_no_rate_skips_no_circuit_and_is_no_request() -> None:
    """REQ-CMP-002 with REQ-CACHE-001: GDELT admits one request per 6 s. A repeated search is
    answered from the cache instead of being skipped for the rate; a new query is still held to
    the rate; the engine's request metrics count the one real request only."""
    metrics = Metrics()
    with fake_http_server() as server:
        server.replies[GDELT] = engine_reply("gdelt")
        settings = search_settings(server, ["gdelt"], MEMORY)
        async with services_for(settings, metrics=metrics) as (services, _):
            first = await search(services, query="rust")
            again = await search(services, query="rust")
            other = await search(services, query="golang")
    assert first["outcome"] == again["outcome"] == "ok"
    assert dump(first) == dump(again)
    assert other["outcome"] == "error"  # skipped for the rate: one request was spent
    assert hits(server, GDELT) == 1
    assert metrics.snapshot()["engine_requests"] == {"gdelt": 1}


async def test_a_hit_answers_while_the_circuit_is_open() -> None:
    """REQ-CACHE-001: the cache is looked up before the circuit; an engine cooling down after a
    429 still answers a repeated search from the cache, and is not contacted."""
    with fake_http_server() as server:
        server.replies[HN] = engine_reply("hackernews")
        async with services_for(search_settings(server, ["hackernews"], MEMORY)) as (services, _):
            assert (await search(services, query="rust"))["outcome"] == "ok"
            server.replies[HN] = Reply(status=429, headers=(("Retry-After", "120"),))
            assert (await search(services, query="golang"))["outcome"] == "error"
            cached = await search(services, query="rust")
            status = (await services.call("engine_status", {})).structured
    assert cached["outcome"] == "ok"
    assert {e["engine"]: e["state"] for e in status["engines"]}["hackernews"] == "open"
    assert hits(server, HN) == 2


class BrokenCache:
    """A cache whose every operation raises, as a defective backend would."""

    def __init__(self) -> None:
        self.calls = 0

    async def get(self, key: str) -> bytes | None:
        self.calls += 1
        raise RuntimeError("broken")

    async def put(self, key: str, value: bytes, ttl_s: float) -> None:
        self.calls += 1
        raise RuntimeError("broken")

    async def aclose(self) -> None:
        return None


class CorruptCache(BrokenCache):
    """A cache that answers every key with bytes rypsok never wrote."""

    async def get(self, key: str) -> bytes | None:
        self.calls += 1
        return b'{"format":1,"engine":"hackernews","results":[{"url":1}]}'

    async def put(self, key: str, value: bytes, ttl_s: float) -> None:
        self.calls += 1


@pytest.mark.parametrize("cache_type", [BrokenCache, CorruptCache])
async def test_req_cache_006_a_failing_cache_costs_speed_only(
    cache_type: type[BrokenCache],
) -> None:
    """REQ-CACHE-006: a cache that raises or returns garbage is a miss: the engine answers, the
    search is ok, and the failure is logged by class only.

    Proves THR-43, THR-46.
    """
    entries: dict[str, Any] = {e: {"enabled": False} for e in DRIVER_MODULES}
    entries["hackernews"] = {"enabled": True}  # at its public endpoint: the sender is a stub
    settings = parse_settings({"schema_version": 1, "engines": entries, "cache": MEMORY})
    engines = resolve_engines(settings)
    body = (FIXTURES / "hackernews" / "success.json").read_bytes()
    sent: list[object] = []

    async def send(request: object, **_: object) -> EngineResponse:
        sent.append(request)
        return EngineResponse(200, {"content-type": "application/json"}, body)

    clock = ManualClock()
    logger, logs = capture_logger(f"broken-{cache_type.__name__}")
    cache = cache_type()
    pipeline = SearchPipeline(
        settings=settings,
        engines=engines,
        send=send,
        monitor=EngineMonitor(clock=clock, metrics=Metrics()),
        limits=ProviderLimits.from_admissions(
            [e.driver.admission for e in engines if e.active], clock=clock
        ),
        logger=logger,
        cache=cache,
    )
    args = SearchArguments("rust", Category.NEWS, 10, "en", TimeRange.MONTH)
    response = await pipeline.search(args, CallContext(request_id="r1", caller="alice"))
    assert response.outcome.value == "ok" and response.results
    assert len(sent) == 1 and cache.calls == 2
    failures = logs.events("cache_failed")
    if cache_type is BrokenCache:
        assert [f["exception"] for f in failures] == ["RuntimeError", "RuntimeError"]
        assert all("broken" not in line for line in logs.lines)
    else:
        assert failures == []
