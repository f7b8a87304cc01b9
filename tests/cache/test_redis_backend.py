"""The Redis result cache and its guarded link, against a real redis-server on loopback.

REQ-CACHE-005 (expiry, at most max_entries, across replicas), REQ-CACHE-006 (refused
connection, a server that never answers, a stop mid-run: misses and no-ops, logged by class
only, bounded in time), REQ-TEST-010. The URL may hold a password: it never shows.
"""

from __future__ import annotations

import json
import socket
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from rypsok.cache import CacheConfigError, RedisCache, StoreUnavailable, connect, open_backend
from rypsok.config.schema import CacheSettings
from rypsok.config.secrets import Secret
from rypsok.health.clock import ManualClock, SystemClock
from tests.cache.conftest import RedisServer
from tests.cache.support import REDIS_URL_ENV, capture_logger

pytestmark = pytest.mark.anyio


def make_cache(url: str, *, max_entries: int = 100, name: str = "redis") -> RedisCache:
    """A cache on its own link; the test process ends with the links (loopback only)."""
    logger, _ = capture_logger(name)
    link = connect(Secret(url), clock=SystemClock(), logger=logger)
    return RedisCache(link, key_prefix="test:", max_entries=max_entries)


async def test_round_trip_with_prefix_and_lifetime(redis_server: RedisServer) -> None:
    """Values are stored with SET ... EX under the configured prefix and read back exactly."""
    cache = make_cache(redis_server.url)
    await cache.put("k1", b"\x00value\xff", 300)
    assert await cache.get("k1") == b"\x00value\xff"
    assert await cache.get("absent") is None
    client = redis_server.client()
    keys = sorted(str(k) for k in client.keys("*"))
    assert keys == ["test:{cache}:index", "test:{cache}:k1"]
    assert 0 < client.ttl("test:{cache}:k1") <= 300


async def test_req_cache_005_redis_entries_expire(redis_server: RedisServer) -> None:
    """REQ-CACHE-005: with a one-second lifetime the entry is gone after it."""
    cache = make_cache(redis_server.url)
    await cache.put("short", b"v", 1)
    assert await cache.get("short") == b"v"
    await anyio.sleep(1.2)
    assert await cache.get("short") is None


async def test_req_cache_005_at_most_max_entries_across_replicas(
    redis_server: RedisServer,
) -> None:
    """REQ-CACHE-005: the bound holds for the shared cache, whichever replica writes; the
    entries that expire first go first."""
    one = make_cache(redis_server.url, max_entries=3, name="one")
    two = make_cache(redis_server.url, max_entries=3, name="two")
    for i in range(6):
        await (one if i % 2 else two).put(f"k{i}", f"v{i}".encode(), 300 + i)
    found = [await one.get(f"k{i}") for i in range(6)]
    assert found == [None, None, None, b"v3", b"v4", b"v5"]
    client = redis_server.client()
    assert client.zcard("test:{cache}:index") == 3
    assert len(client.keys("test:{cache}:k*")) == 3


async def test_oversized_values_are_neither_stored_nor_read(redis_server: RedisServer) -> None:
    """The value bound holds in both directions: a foreign large value is a miss.

    Proves THR-43.
    """
    logger, _ = capture_logger("big")
    link = connect(Secret(redis_server.url), clock=SystemClock(), logger=logger)
    cache = RedisCache(link, key_prefix="test:", max_entries=10, max_value_bytes=8)
    await cache.put("k", b"123456789", 60)
    assert redis_server.client().get("test:{cache}:k") is None
    redis_server.client().set("test:{cache}:k", b"123456789")
    assert await cache.get("k") is None


async def test_req_cache_006_refused_connection_is_a_miss_logged_by_class(
    closed_port: int,
) -> None:
    """REQ-CACHE-006: nobody listening: get is a miss, put a no-op, one warning naming the
    exception class; the password of the URL appears nowhere.

    Proves THR-45, THR-46.
    """
    logger, logs = capture_logger("refused")
    url = f"redis://:pa55-secret-word@127.0.0.1:{closed_port}/0"
    link = connect(Secret(url), clock=SystemClock(), logger=logger)
    cache = RedisCache(link, key_prefix="test:", max_entries=10)
    assert await cache.get("k") is None
    await cache.put("k", b"v", 60)
    assert await cache.get("k") is None
    warnings = logs.events("shared_store_unavailable")
    assert len(warnings) == 1
    assert warnings[0]["exception"] and warnings[0]["operation"] == "cache_get"
    everything = "\n".join(logs.lines) + repr(cache) + repr(link)
    assert "pa55-secret-word" not in everything and str(closed_port) not in everything
    await link.aclose()


@pytest.fixture
def silent_server() -> Iterator[int]:
    """A TCP server that accepts connections and never answers."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.1)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except TimeoutError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        thread.join(5)
        for conn in held:
            conn.close()
        listener.close()


async def test_req_cache_006_a_server_that_never_answers_costs_one_timeout(
    silent_server: int,
) -> None:
    """REQ-CACHE-006: a hanging Redis costs the operation timeout once; then the link is down
    and operations fail at once until the retry period is over.

    Proves THR-46.
    """
    logger, logs = capture_logger("silent")
    clock = ManualClock()
    link = connect(
        Secret(f"redis://127.0.0.1:{silent_server}/0"),
        clock=clock,
        logger=logger,
        timeout_s=0.3,
        retry_after_s=5,
    )
    cache = RedisCache(link, key_prefix="test:", max_entries=10)
    started = time.monotonic()
    assert await cache.get("k") is None
    first = time.monotonic() - started
    assert 0.2 < first < 1.5
    started = time.monotonic()
    for _ in range(20):
        assert await cache.get("k") is None
    assert time.monotonic() - started < 0.1  # down: no waiting
    assert link.down
    clock.advance(5)
    with pytest.raises(StoreUnavailable):
        await link.run("probe", lambda client: client.ping())
    assert len(logs.events("shared_store_unavailable")) == 1
    await link.aclose()


async def test_req_cache_006_recovers_when_redis_comes_back(own_redis: RedisServer) -> None:
    """REQ-CACHE-006: stopped mid-run, Redis costs misses; once back (after the retry period)
    the cache works again and the recovery is logged.

    Proves THR-46.
    """
    logger, logs = capture_logger("recover")
    clock = ManualClock()
    link = connect(Secret(own_redis.url), clock=clock, logger=logger, retry_after_s=5)
    cache = RedisCache(link, key_prefix="test:", max_entries=10)
    await cache.put("k", b"v", 60)
    assert await cache.get("k") == b"v"
    own_redis.stop()
    assert await cache.get("k") is None
    await cache.put("k2", b"v", 60)
    own_redis.restart()
    assert await cache.get("k") is None  # still down: the retry period has not passed
    clock.advance(5)
    await cache.put("k", b"again", 60)
    assert await cache.get("k") == b"again"
    assert [json.loads(line)["event"] for line in logs.lines] == [
        "shared_store_unavailable",
        "shared_store_recovered",
    ]
    await link.aclose()


def test_configuration_errors_name_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """A missing package, an unset reference or a non-Redis URL is an error at start that names
    [cache] and never quotes the URL.

    Proves THR-45.
    """
    logger, _ = capture_logger("config")
    settings = CacheSettings(backend="redis", redis_url_env=REDIS_URL_ENV)
    monkeypatch.delenv(REDIS_URL_ENV, raising=False)
    with pytest.raises(CacheConfigError, match=r"\[cache\] redis_url_env"):
        open_backend(settings, clock=SystemClock(), logger=logger)
    monkeypatch.setenv(REDIS_URL_ENV, "http://user:hunter2@example.org/")
    with pytest.raises(CacheConfigError, match=r"\[cache\]") as caught:
        open_backend(settings, clock=SystemClock(), logger=logger)
    assert "hunter2" not in str(caught.value)
    monkeypatch.setenv(REDIS_URL_ENV, "redis://127.0.0.1:1/0")
    monkeypatch.setitem(sys.modules, "redis.asyncio", None)
    with pytest.raises(CacheConfigError, match=r'\[cache\] backend = "redis"'):
        open_backend(settings, clock=SystemClock(), logger=logger)


def test_url_from_a_file(tmp_path: Path) -> None:
    """redis_url_file is read at start; an unreadable file names the key."""
    logger, _ = capture_logger("file")
    path = tmp_path / "url"
    path.write_text("redis://127.0.0.1:1/0\n", encoding="utf-8")
    backend = open_backend(
        CacheSettings(backend="redis", redis_url_file=str(path), enabled=True),
        clock=SystemClock(),
        logger=logger,
    )
    assert backend.cache is not None and backend.link is not None
    assert "127.0.0.1" not in repr(backend)
    with pytest.raises(CacheConfigError, match=r"\[cache\] redis_url_file"):
        open_backend(
            CacheSettings(backend="redis", redis_url_file=str(tmp_path / "missing")),
            clock=SystemClock(),
            logger=logger,
        )
