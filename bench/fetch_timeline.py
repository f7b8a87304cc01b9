"""web_fetch: where the time of one call goes, stage by stage (20 KB pages by default).

bench/fetch_speed.py gives the whole call against trafilatura; this script splits the call into
the stages ``FetchService`` runs, in the order it runs them, to show which of them could still
shrink:

* ``retrieve``: ``Retriever.retrieve`` (egress policy, robots.txt verdict from its cache, one
  GET over loopback with the byte limits, headers and body);
* ``extract``: ``Extractor.extract``: the job sent to a worker process, run there, the reply
  read and decoded (``job`` is the same job run right after in this process, and ``round
  trip`` the difference: what the worker process costs beyond the work itself);
* ``boundary``: the content boundary on the extracted text (``services.fetch._clean``);
* ``budget``: focus, selection and budget (``select_and_budget_async``) and the response model
  (``fetch_response``);
* ``rest``: the whole ``services.call("web_fetch", ...)`` minus the stages above: the call
  runner, argument validation, the credential check, limits and the metrics line.

The stages are timed by wrapping the service's own objects and functions in this process (the
wrappers add well under a microsecond each). The page server runs in its own process; rypsok
runs as bench/fetch_speed.py runs it (``runtime()`` with an explicit allow rule for loopback).
Each page is a distinct URL, built by the server before the measured calls. trafilatura
(``extract(html, output_format="markdown")``) runs on the same page right after each call, as
the reference of the target (the whole call within 1.3x of it).

usage: python bench/fetch_timeline.py [--pages 300] [--size 20000] [--sandbox auto|none]
                                      [--json out.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import trafilatura

import rypsok.services.fetch as fetch_service
from fetch_common import load_average, machine, page_server, page_url, rypsok, warm
from fetch_pages import article
from rypsok.fetch import pipeline

WARM_CALLS = 30
WARM_SEED = 10_000


class Timings:
    """Seconds per stage, one list per stage, appended call after call."""

    def __init__(self) -> None:
        self.stages: dict[str, list[float]] = defaultdict(list)

    def timed(self, stage: str, call: Callable[..., Awaitable[Any]]) -> Callable[..., Any]:
        async def wrapper(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return await call(*args, **kwargs)
            finally:
                self.stages[stage].append(time.perf_counter() - started)

        return wrapper

    def timed_sync(self, stage: str, call: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return call(*args, **kwargs)
            finally:
                self.stages[stage].append(time.perf_counter() - started)

        return wrapper


def median_ms(values: list[float]) -> float:
    return round(statistics.median(values) * 1000, 3)


async def fetch_handler(services: Any) -> Any:
    """The FetchService behind web_fetch (private attributes, read-only, as fetch_common does)."""
    handler = services._fetch
    if not hasattr(handler, "_retriever"):
        _, handler = await handler.__self__.handlers()
    return handler


async def measure(args: argparse.Namespace) -> dict[str, Any]:
    with page_server() as (port, _server):
        urls = [page_url(port, args.size, seed) for seed in range(args.pages)]
        warm_urls = [page_url(port, args.size, WARM_SEED + i) for i in range(WARM_CALLS)]
        warm(*urls, *warm_urls)
        async with rypsok(port, sandbox=args.sandbox) as (services, extractor):
            for url in warm_urls:
                await services.call("web_fetch", {"url": url})
            handler = await fetch_handler(services)
            timings = Timings()
            # Wrap the service's stages where FetchService looks them up.
            retriever, extractor_ = handler._retriever, handler._extractor
            retriever.retrieve = timings.timed("retrieve", retriever.retrieve)
            extractor_.extract = timings.timed("extract", extractor_.extract)
            fetch_service._clean = timings.timed("boundary", fetch_service._clean)
            fetch_service.select_and_budget_async = timings.timed(
                "budget", fetch_service.select_and_budget_async
            )
            fetch_service.fetch_response = timings.timed_sync(
                "response", fetch_service.fetch_response
            )
            job = {"content_type": "text/html; charset=utf-8", "url": urls[0]}
            load_before = load_average()
            for seed, url in enumerate(urls):
                started = time.perf_counter()
                answer = await services.call("web_fetch", {"url": url})
                timings.stages["call"].append(time.perf_counter() - started)
                if answer.is_error:
                    raise SystemExit(f"web_fetch failed on {url}")
                page = article(args.size, seed)
                started = time.perf_counter()
                pipeline.run(job, page)
                timings.stages["job"].append(time.perf_counter() - started)
                started = time.perf_counter()
                trafilatura.extract(page.decode("utf-8"), output_format="markdown")
                timings.stages["trafilatura"].append(time.perf_counter() - started)
            load_after = load_average()
            containment = extractor.containment()
    stages = timings.stages
    calls = len(stages["call"])
    budget = [b + r for b, r in zip(stages["budget"], stages["response"], strict=True)]
    parts = ("retrieve", "extract", "boundary")
    rest = [c - sum(stages[p][i] for p in parts) - budget[i] for i, c in enumerate(stages["call"])]
    round_trip = [e - j for e, j in zip(stages["extract"], stages["job"], strict=True)]
    return {
        "machine": machine(),
        "load_average": {"before": load_before, "after": load_after},
        "containment": containment,
        "page_bytes": args.size,
        "calls": calls,
        "median_ms": {
            "call": median_ms(stages["call"]),
            "retrieve": median_ms(stages["retrieve"]),
            "extract": median_ms(stages["extract"]),
            "job (in this process)": median_ms(stages["job"]),
            "worker round trip (extract - job)": median_ms(round_trip),
            "boundary": median_ms(stages["boundary"]),
            "budget and response": median_ms(budget),
            "rest of the call": median_ms(rest),
            "trafilatura": median_ms(stages["trafilatura"]),
        },
        "ratio_call_to_trafilatura": round(
            statistics.median(stages["call"]) / statistics.median(stages["trafilatura"]), 2
        ),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=300)
    parser.add_argument("--size", type=int, default=20_000)
    parser.add_argument("--sandbox", default="auto", choices=("auto", "none", "bwrap"))
    parser.add_argument("--json", help="also write the result to this file")
    args = parser.parse_args()
    result = asyncio.run(measure(args))
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        Path(args.json).write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
