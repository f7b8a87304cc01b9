"""What rypsok adds to a search beyond the slowest engine (REQ-PERF-004), and its CPU per call.

Three simulated science engines (arXiv, Crossref, Europe PMC, answering the drivers' fixtures
after DELAY ms) run in a separate process on loopback. rypsok's real search pipeline (drivers,
egress, limits, circuits, cleaning, fusion, the call runner) serves web_search in this process.
The added time of a call is its latency minus DELAY.

Reference, measured in the same run against the same engines: a bare fan-out that sends the
same three requests with httpcore2, waits for all, and parses the bodies with the standard
library, and nothing else. The ratios say how much rypsok's controls cost over the least a
meta-search can do.

Provider limits are raised for the measurement (every admitted rate and concurrency cap set
to the call concurrency), so the figures show rypsok's own work and not the politeness it
imposes by design.

usage: python bench/search_overhead.py [--delay-ms 50] [--calls 400] [--json out.json]
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import logging
import resource
import statistics
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpcore2

import sim_engines
from rypsok.app import contract_settings, user_agent
from rypsok.config.load import parse_settings
from rypsok.contract.vocabulary import ToolName
from rypsok.egress.gateway import Egress
from rypsok.engines.base import RateLimit
from rypsok.engines.catalog import resolve_engines
from rypsok.engines.registry import DRIVER_MODULES
from rypsok.health.clock import SystemClock
from rypsok.health.invocation import InvocationLimits
from rypsok.health.metrics import Metrics
from rypsok.health.monitor import EngineMonitor
from rypsok.health.provider_limits import EngineLimit, ProviderLimits
from rypsok.search.pipeline import SearchPipeline
from rypsok.services.calls import Services
from rypsok.services.search import SearchService

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "engines" / "fixtures"
ENGINES = {
    "arxiv": ("/arxiv/api/query", FIXTURES / "arxiv" / "success.xml"),
    "crossref": ("/crossref/works", FIXTURES / "crossref" / "success.json"),
    "europepmc": ("/europepmc/search", FIXTURES / "europepmc" / "success.json"),
}


def cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def drive(
    call: Callable[[], Awaitable[bool]], calls: int, concurrency: int, stagger_s: float
) -> tuple[list[float], int, float, float]:
    """Run ``calls`` calls with ``concurrency`` at once: latencies, errors, CPU s, wall s.

    The callers start ``stagger_s / concurrency`` apart: started together against engines
    that all answer after exactly the same delay, they would stay in lockstep, every answer
    of a wave arriving in the same millisecond, which real engines' spread never produces.
    """
    latencies: list[float] = []
    errors = 0
    todo = iter(range(calls))

    async def worker(index: int) -> None:
        nonlocal errors
        await asyncio.sleep(index * stagger_s / concurrency)
        for _ in todo:
            started = time.perf_counter()
            ok = await call()
            latencies.append(time.perf_counter() - started)
            errors += not ok

    cpu0, wall0 = cpu_s(), time.perf_counter()
    await asyncio.gather(*(worker(n) for n in range(concurrency)))
    return latencies, errors, cpu_s() - cpu0, time.perf_counter() - wall0


def summary(name: str, delay_s: float, concurrency: int, result: tuple[Any, ...]) -> dict[str, Any]:
    latencies, errors, cpu, wall = result
    added = sorted((lat - delay_s) * 1000 for lat in latencies)
    return {
        "system": name,
        "concurrency": concurrency,
        "calls": len(latencies),
        "errors": errors,
        "added_ms_median": round(statistics.median(added), 2),
        "added_ms_p99": round(added[min(len(added) - 1, int(len(added) * 0.99))], 2),
        "cpu_ms_per_call": round(cpu * 1000 / len(latencies), 3),
        "calls_per_s": round(len(latencies) / wall, 1),
    }


async def build_rypsok(bases: dict[str, str], concurrency: int) -> tuple[Services, Egress]:
    entries: dict[str, Any] = {e: {"enabled": False} for e in DRIVER_MODULES}
    for engine, (path, _) in ENGINES.items():
        entries[engine] = {"enabled": True, "endpoint": bases[engine] + path}
    settings = parse_settings(
        {
            "schema_version": 1,
            "engines": entries,
            "service": {"calls_per_minute_web_search": 100_000, "log_level": "warning"},
            "search": {"requests_in_flight": max(64, 3 * concurrency)},
        }
    )
    logger = logging.getLogger("rypsok.bench")
    logger.setLevel(logging.WARNING)
    engines = resolve_engines(settings)
    clock = SystemClock()
    metrics = Metrics()
    active = [e for e in engines if e.active]
    limits = ProviderLimits(
        {
            e.engine_id: EngineLimit.from_admission(
                dataclasses.replace(
                    e.driver.admission, rate=RateLimit(10**9, 1.0), max_in_flight=concurrency
                )
            )
            for e in active
        },
        clock=clock,
        engine_cap=concurrency,
        process_cap=max(64, 3 * concurrency),
    )
    # Each engine has its own origin with ``concurrency`` requests at once.
    egress = Egress(settings, user_agent(settings), keepalive_per_origin=concurrency)
    pipeline = SearchPipeline(
        settings=settings,
        engines=engines,
        send=egress.engine_request,
        monitor=EngineMonitor(clock=clock, metrics=metrics),
        limits=limits,
        logger=logger,
    )
    services = Services(
        contract=contract_settings(settings, engines),
        search=SearchService(settings, pipeline),
        fetch=None,  # type: ignore[arg-type]  # web_fetch is not measured here
        status=None,  # type: ignore[arg-type]
        limiter=InvocationLimits({ToolName.WEB_SEARCH: 10**9}, clock=clock),
        metrics=metrics,
        logger=logger,
    )
    return services, egress


async def main_async(args: argparse.Namespace) -> list[dict[str, Any]]:
    sim, bases = sim_engines.start(args.delay_ms, ENGINES)
    delay_s = args.delay_ms / 1000
    rows = []
    try:
        for concurrency in (1, 50):
            calls = args.calls if concurrency > 1 else max(50, args.calls // 8)
            services, egress = await build_rypsok(bases, concurrency)

            async def rypsok_call() -> bool:
                result = await services.call(
                    "web_search", {"query": "graphene", "category": "science"}
                )
                return result.structured["outcome"] == "ok"

            # Warm-up at full concurrency: imports, and every connection the run will use.
            await drive(rypsok_call, 2 * concurrency, concurrency, delay_s)
            rows.append(
                summary(
                    "rypsok",
                    delay_s,
                    concurrency,
                    await drive(rypsok_call, calls, concurrency, delay_s),
                )
            )
            await egress.aclose()

            pool = httpcore2.AsyncConnectionPool(max_connections=3 * concurrency)

            async def bare_call() -> bool:
                async def one(engine: str, path: str) -> Any:
                    response = await pool.request("GET", bases[engine] + path + "?q=graphene")
                    body = response.content
                    return ET.fromstring(body) if engine == "arxiv" else json.loads(body)

                await asyncio.gather(*(one(e, path) for e, (path, _) in ENGINES.items()))
                return True

            await drive(bare_call, 2 * concurrency, concurrency, delay_s)
            rows.append(
                summary(
                    "bare fan-out (reference)",
                    delay_s,
                    concurrency,
                    await drive(bare_call, calls, concurrency, delay_s),
                )
            )
            await pool.aclose()
    finally:
        sim.terminate()
        sim.wait(10)
    for concurrency in (1, 50):
        ours, ref = (r for r in rows if r["concurrency"] == concurrency)
        rows.append(
            {
                "concurrency": concurrency,
                "ratio_cpu_per_call": round(ours["cpu_ms_per_call"] / ref["cpu_ms_per_call"], 2),
                "ratio_added_median": round(
                    ours["added_ms_median"] / max(ref["added_ms_median"], 0.01), 2
                ),
            }
        )
    return rows


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--delay-ms", type=int, default=50)
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    rows = asyncio.run(main_async(args))
    text = json.dumps(rows, indent=2)
    if args.json:
        args.json.write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
