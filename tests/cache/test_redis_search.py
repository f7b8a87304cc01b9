"""web_search and the limits of several replicas sharing one real Redis, end to end.

Two runtimes in one test are two replicas behind a load balancer. REQ-CACHE-004 (entries per
authenticated caller, shared by replicas; the local caller's are its process's), REQ-CMP-002
(the replicas together keep an engine's admitted rate), REQ-CACHE-006 (Redis stopped mid-run:
searches still succeed), REQ-CACHE-001 (shared limits without caching), REQ-TEST-010.
"""

from __future__ import annotations

import sys
import time

import pytest

from rypsok.app import ConfigurationError
from tests.cache.conftest import RedisServer
from tests.cache.support import (
    GDELT,
    HN,
    REDIS_URL_ENV,
    engine_reply,
    hits,
    redis_cache_table,
    search,
    search_settings,
    services_for,
)
from tests.fakes.http_server import fake_http_server

pytestmark = pytest.mark.anyio


async def test_req_cache_004_replicas_share_entries_per_caller(
    redis_server: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """REQ-CACHE-004: an authenticated caller's entry written by one replica answers it on
    another; another caller, and the local caller of another process, ask the engine.

    Proves THR-44.
    """
    monkeypatch.setenv(REDIS_URL_ENV, redis_server.url)
    with fake_http_server() as server:
        server.replies[HN] = engine_reply("hackernews")
        settings = search_settings(server, ["hackernews"], redis_cache_table())
        async with (
            services_for(settings, "one") as (one, _),
            services_for(settings, "two") as (two, logs_two),
        ):
            first = await search(one, caller="alice", query="rust")
            shared = await search(two, caller="alice", query="rust")
            assert hits(server, HN) == 1
            assert len(logs_two.events("engine_cache_hit")) == 1
            await search(two, caller="bob", query="rust")
            await search(one, query="rust")
            await search(two, query="rust")
            assert hits(server, HN) == 4
    assert first["outcome"] == "ok" and first == shared


async def test_req_cmp_002_replicas_keep_an_engine_rate_together(
    redis_server: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """REQ-CMP-002, REQ-CACHE-001: GDELT admits one request per 6 s. With backend = redis and
    the cache off, a second replica does not send a second request within the 6 s: the rate is
    shared, and no query is retained."""
    monkeypatch.setenv(REDIS_URL_ENV, redis_server.url)
    with fake_http_server() as server:
        server.replies[GDELT] = engine_reply("gdelt")
        settings = search_settings(server, ["gdelt"], redis_cache_table(enabled=False))
        async with (
            services_for(settings, "one") as (one, _),
            services_for(settings, "two") as (two, _),
        ):
            first = await search(one, caller="alice", query="rust")
            second = await search(two, caller="alice", query="golang")
            third = await search(two, caller="alice", query="rust")  # no cache: not a hit
    assert first["outcome"] == "ok"
    assert second["outcome"] == third["outcome"] == "error"
    assert second["error"]["reason"] == "no_engine_answered"
    assert hits(server, GDELT) == 1
    assert redis_server.client().keys("*{cache}*") == []  # nothing of a query was stored


async def test_req_cache_006_redis_stopped_mid_run_searches_still_succeed(
    own_redis: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """REQ-CACHE-006: Redis stops between two searches: the next ones are answered by the
    engine, in time; the outage is logged once, by class, without the URL.

    Proves THR-46.
    """
    monkeypatch.setenv(REDIS_URL_ENV, own_redis.url)
    with fake_http_server() as server:
        server.replies[HN] = engine_reply("hackernews")
        settings = search_settings(server, ["hackernews"], redis_cache_table())
        async with services_for(settings) as (services, logs):
            before = await search(services, caller="alice", query="rust")
            own_redis.stop()
            started = time.monotonic()
            during = [await search(services, caller="alice", query=q) for q in ("rust", "go")]
            elapsed = time.monotonic() - started
            status = await services.call("engine_status", {}, caller="alice")
    assert before["outcome"] == "ok"
    assert [d["outcome"] for d in during] == ["ok", "ok"]
    assert during[0] == before
    assert hits(server, HN) == 3
    assert elapsed < 2.0  # one bounded timeout at most, not one per operation
    assert not status.is_error
    outages = logs.events("shared_store_unavailable")
    assert len(outages) == 1 and outages[0]["exception"]
    assert all(str(own_redis.port) not in line for line in logs.lines)


async def test_req_cache_006_a_refused_password_degrades_and_never_shows(
    own_redis: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """REQ-CACHE-006: a Redis that refuses the credentials is a Redis that fails: searches
    succeed without it; with the right password the cache works. No password is ever logged.

    Proves THR-45.
    """
    own_redis.client().config_set("requirepass", "pw-r1ght-one")
    with fake_http_server() as server:
        server.replies[HN] = engine_reply("hackernews")
        settings = search_settings(server, ["hackernews"], redis_cache_table())
        monkeypatch.setenv(REDIS_URL_ENV, f"redis://:pw-n0t-shown@127.0.0.1:{own_redis.port}/0")
        async with services_for(settings, "wrong") as (services, wrong_logs):
            refused = [await search(services, caller="alice", query="rust") for _ in range(2)]
        monkeypatch.setenv(REDIS_URL_ENV, f"redis://:pw-r1ght-one@127.0.0.1:{own_redis.port}/0")
        async with services_for(settings, "right") as (services, right_logs):
            accepted = [await search(services, caller="alice", query="rust") for _ in range(2)]
    assert [r["outcome"] for r in refused + accepted] == ["ok"] * 4
    assert hits(server, HN) == 3  # twice without the cache, once to fill it
    assert wrong_logs.events("shared_store_unavailable")
    assert len(right_logs.events("engine_cache_hit")) == 1
    logged = "\n".join(wrong_logs.lines + right_logs.lines)
    assert "pw-n0t-shown" not in logged and "pw-r1ght-one" not in logged


async def test_redis_backend_without_the_package_is_a_configuration_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """backend = "redis" while the redis package is missing stops the start with an error
    that names [cache] backend."""
    monkeypatch.setenv(REDIS_URL_ENV, "redis://127.0.0.1:1/0")
    monkeypatch.setitem(sys.modules, "redis.asyncio", None)
    with fake_http_server() as server:
        settings = search_settings(server, ["hackernews"], redis_cache_table())
        with pytest.raises(ConfigurationError, match=r'\[cache\] backend = "redis"'):
            async with services_for(settings):
                pass
