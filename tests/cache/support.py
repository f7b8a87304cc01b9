"""Helpers of the cache tests: a runtime over simulated engines, with a chosen [cache] table."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from rypsok.app import runtime
from rypsok.config.load import parse_settings
from rypsok.config.schema import Settings
from rypsok.engines.base import RawResult
from rypsok.engines.registry import DRIVER_MODULES
from rypsok.health.metrics import Metrics
from rypsok.logs import JsonLineFormatter
from rypsok.services.calls import Services
from tests.fakes.http_server import FakeHTTPServer, Reply

FIXTURES = Path(__file__).resolve().parents[1] / "engines" / "fixtures"
HN = "/hn/api/v1/search"
GDELT = "/gdelt/api/v2/doc/doc"
PATHS = {"hackernews": HN, "gdelt": GDELT}
REDIS_URL_ENV = "RYPSOK_TEST_REDIS_URL"


def engine_reply(engine: str, name: str = "success.json", **kw: Any) -> Reply:
    """A simulated engine's answer from the driver fixtures."""
    return Reply(body=(FIXTURES / engine / name).read_bytes(), **kw)


def sample_results(n: int = 3) -> list[RawResult]:
    """Raw results as a driver returns them."""
    return [
        RawResult(
            url=f"https://example.org/{i}",
            title=f"Title {i} – ünïcode",
            snippet=f"Snippet {i}",
            rank=i + 1,
            date="2026-01-02" if i % 2 else None,
        )
        for i in range(n)
    ]


class LogCapture(logging.Handler):
    """The JSON lines a logger wrote."""

    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []
        self.setFormatter(JsonLineFormatter())

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))

    def events(self, name: str) -> list[dict[str, Any]]:
        """The logged events called ``name``."""
        return [e for e in map(json.loads, self.lines) if e["event"] == name]


def capture_logger(name: str) -> tuple[logging.Logger, LogCapture]:
    """A debug-level logger of its own with a capture attached."""
    logger = logging.getLogger(f"rypsok.test.cache.{name}")
    logger.setLevel(logging.DEBUG)
    logger.handlers[:] = []
    capture = LogCapture()
    logger.addHandler(capture)
    return logger, capture


def search_settings(
    server: FakeHTTPServer,
    engines: list[str],
    cache: dict[str, Any] | None = None,
    **sections: Any,
) -> Settings:
    """Only ``engines`` enabled, at the simulated endpoints; ``cache`` is the [cache] table."""
    entries: dict[str, Any] = {e: {"enabled": False} for e in DRIVER_MODULES}
    for engine in engines:
        entries[engine] = {"enabled": True, "endpoint": server.url(PATHS[engine])}
    data: dict[str, Any] = {
        "schema_version": 1,
        "engines": entries,
        "service": {"contact": "ops@example.org"},
        **sections,
    }
    if cache is not None:
        data["cache"] = cache
    return parse_settings(data)


def redis_cache_table(enabled: bool = True, **extra: Any) -> dict[str, Any]:
    """A [cache] table for the Redis whose URL is in :data:`REDIS_URL_ENV`."""
    return {"enabled": enabled, "backend": "redis", "redis_url_env": REDIS_URL_ENV, **extra}


@asynccontextmanager
async def services_for(
    settings: Settings,
    name: str = "replica",
    *,
    metrics: Metrics | None = None,
    extra_allow: tuple[str, ...] = (),
) -> AsyncIterator[tuple[Services, LogCapture]]:
    """One runtime (one replica) over ``settings``, with its log captured."""
    logger, capture = capture_logger(name)
    async with runtime(settings, logger, metrics=metrics, extra_allow=extra_allow) as services:
        yield services, capture


async def search(services: Services, caller: str = "local", **arguments: Any) -> dict[str, Any]:
    """One web_search call's structured content."""
    arguments.setdefault("category", "news")
    result = await services.call("web_search", arguments, caller=caller)
    return result.structured


def hits(server: FakeHTTPServer, path: str) -> int:
    """Requests the simulated server received for ``path``."""
    return sum(1 for r in server.requests if r.path == path)
