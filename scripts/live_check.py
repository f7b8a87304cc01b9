"""Live checks of every engine driver against its real provider (REQ-TEST-003).

One fixed, harmless query per engine, one request per engine (two for a two-step engine such
as PubMed: its ``follow_up`` request, paced by its admitted rate), sent one engine at a time
through rypsok's real egress component (engine profile, identifying User-Agent, bounds) and
parsed by the driver's own ``parse``. Per engine the verdict is:

* ``ok``           results came back;
* ``drift``        the provider answered but the driver found no results for a query that
                   always has some, or could not parse the answer (``parse_failure``): the
                   provider's format has probably changed;
* ``unreachable``  no usable answer (DNS, connection, TLS, timeout, HTTP error, rate limit,
                   blocked, key refused); the failure class is printed;
* ``skipped``      not checked: off by default, needs a key that is not set, or a scraping
                   driver the configuration does not enable.

Never part of CI: it runs in the release gate (``--require``) and on demand, never on a timer.
When the network is unreachable (checked first: one DNS lookup and one TCP connection, 3 s
each) it prints ``SKIPPED: no network`` and exits 0, or 1 with ``--require``.

Keys: a keyed engine is checked only when its key is available, either through ``--config``
(the operator's ``[engines.<id>] api_key_env`` / ``api_key_file``) or through the variable
``RYPSOK_LIVE_<ID>_API_KEY`` (for example ``RYPSOK_LIVE_GITHUB_API_KEY``).

usage: python scripts/live_check.py [--config FILE] [--engine ID ...] [--require] [--json]
exit: 0 all checked engines ok (or no network without --require); 1 drift or unreachable
(or no network with --require); 2 bad usage or configuration.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import time
from dataclasses import asdict, dataclass
from typing import Any
from urllib.parse import urlsplit

import anyio

from rypsok.app import user_agent
from rypsok.config.load import ConfigError, load_settings, parse_settings
from rypsok.config.schema import Settings
from rypsok.contract.vocabulary import Category, FailureClass
from rypsok.egress import Egress, EgressError
from rypsok.engines.base import EngineFailure, EngineQuery, EngineRequest, EngineResponse
from rypsok.engines.catalog import ConfiguredEngine, EngineConfigError, resolve_engines
from rypsok.engines.registry import DRIVER_MODULES

NETWORK_PROBE_TIMEOUT_S = 3.0
CONNECT_TIMEOUT_S = 3.0
TOTAL_TIMEOUT_S = 15.0
PAUSE_BETWEEN_ENGINES_S = 1.0

# A query per category that every engine of the category answers with results.
QUERIES: dict[str, str] = {
    "general": "Python programming language",
    "news": "climate",
    "science": "protein folding",
    "it": "python list comprehension",
    "code": "json parser",
}
DEFAULT_QUERY = "Python programming language"


@dataclass(frozen=True, slots=True)
class Verdict:
    """The live check of one engine."""

    engine: str
    verdict: str  # ok | drift | unreachable | skipped
    detail: str
    results: int
    duration_ms: int


def key_variable(engine_id: str) -> str:
    """The environment variable the live check reads an engine's key from."""
    return f"RYPSOK_LIVE_{engine_id.upper()}_API_KEY"


def live_settings(base: Settings | None) -> Settings:
    """The operator's settings, or defaults with keys from ``RYPSOK_LIVE_<ID>_API_KEY``."""
    if base is not None:
        return base
    engines: dict[str, Any] = {}
    for engine_id in DRIVER_MODULES:
        variable = key_variable(engine_id)
        if os.environ.get(variable, "").strip():
            engines[engine_id] = {"api_key_env": variable, "enabled": True}
    return parse_settings({"schema_version": 1, "engines": engines}, source="live check")


def network_available(host: str) -> bool:
    """One DNS lookup and one TCP connection to ``host``:443, each within 3 s."""
    socket.setdefaulttimeout(NETWORK_PROBE_TIMEOUT_S)
    try:
        started = time.monotonic()
        infos = socket.getaddrinfo(host, 443, type=socket.SOCK_STREAM)
        if time.monotonic() - started > NETWORK_PROBE_TIMEOUT_S or not infos:
            return False
        family, kind, proto, _, address = infos[0]
        with socket.socket(family, kind, proto) as probe:
            probe.settimeout(NETWORK_PROBE_TIMEOUT_S)
            probe.connect(address)
    except OSError:
        return False
    finally:
        socket.setdefaulttimeout(None)
    return True


def _query(engine: ConfiguredEngine, settings: Settings) -> EngineQuery:
    record = engine.driver.admission
    category: Category = record.categories[0] if record.categories else Category.GENERAL
    language = settings.service.default_language
    return EngineQuery(
        text=QUERIES.get(category.value, DEFAULT_QUERY),
        endpoint=engine.endpoint.replace("{language}", language.split("-")[0].lower()),
        count=min(10, record.max_results),
        language=language,
        time_range=None,
        region=settings.service.region,
        safe_search=settings.service.safe_search,
        credential=engine.credential,
        contact=settings.service.contact,
        category=category,
    )


async def check_engine(egress: Egress, engine: ConfiguredEngine, settings: Settings) -> Verdict:
    """Send the engine its request (two for a two-step engine) and judge the answer."""
    if not engine.active:
        return Verdict(engine.engine_id, "skipped", engine.inactive_reason or "inactive", 0, 0)
    started = time.monotonic()
    query = _query(engine, settings)

    def done(verdict: str, detail: str, results: int = 0) -> Verdict:
        elapsed = int((time.monotonic() - started) * 1000)
        return Verdict(engine.engine_id, verdict, detail, results, elapsed)

    async def send(request: EngineRequest) -> EngineResponse:
        return await egress.engine_request(
            request,
            endpoint=query.endpoint,
            explicit_endpoint=engine.explicit_endpoint,
            connect_timeout_s=CONNECT_TIMEOUT_S,
            total_timeout_s=TOTAL_TIMEOUT_S,
            max_bytes=engine.driver.admission.max_response_bytes,
        )

    try:
        response = await send(engine.driver.build_request(query))
        if engine.driver.follow_up is None:
            results = engine.driver.parse(response)
        else:  # a two-step engine: its second request, after the provider's pace
            step = engine.driver.follow_up(query, response)
            if isinstance(step, EngineRequest):
                rate = engine.driver.admission.rate
                await anyio.sleep(rate.per_seconds / rate.requests)
                response = await send(step)
                step = engine.driver.parse(response)
            results = step
    except EgressError as error:
        return done("unreachable", f"egress: {error.reason.value}")
    except EngineFailure as failure:
        if failure.failure_class is FailureClass.PARSE_FAILURE:
            return done("drift", "parse_failure: the answer no longer has the expected shape")
        return done("unreachable", f"engine failure: {failure.failure_class.value}")
    except Exception as error:  # a driver bug is drift too: the answer broke the parser
        return done("drift", f"driver raised {type(error).__name__}")
    if not results:
        return done("drift", "no results for a query that always has some")
    return done("ok", f"HTTP {response.status}", len(results))


async def run_checks(settings: Settings, engines: list[ConfiguredEngine]) -> list[Verdict]:
    """Check the engines one after another (one search each, a pause in between)."""
    verdicts: list[Verdict] = []
    async with Egress(settings, user_agent(settings)) as egress:
        for index, engine in enumerate(engines):
            if index and engine.active:
                await anyio.sleep(PAUSE_BETWEEN_ENGINES_S)
            verdicts.append(await check_engine(egress, engine, settings))
    return verdicts


def main(argv: list[str] | None = None) -> int:
    """Run the live checks and print one line per engine."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", help="the operator's configuration file (keys, endpoints)")
    parser.add_argument("--engine", action="append", default=[], help="check only this engine")
    parser.add_argument("--require", action="store_true", help="no network is a failure")
    parser.add_argument("--json", action="store_true", help="print the verdicts as JSON")
    args = parser.parse_args(argv)

    try:
        base = load_settings(args.config)[0] if args.config else None
        settings = live_settings(base)
        engines = resolve_engines(settings)
    except (ConfigError, EngineConfigError) as error:
        print(f"live check: configuration: {error}", file=sys.stderr)
        return 2
    unknown = [e for e in args.engine if e not in DRIVER_MODULES]
    if unknown:
        print(f"live check: unknown engine {unknown[0]}", file=sys.stderr)
        return 2
    if args.engine:
        engines = [e for e in engines if e.engine_id in args.engine]

    probe = next((e for e in engines if e.active), None)
    host = urlsplit(probe.endpoint.replace("{language}", "en")).hostname if probe else None
    if not host or not network_available(host):
        print(f"SKIPPED: no network (no DNS answer or connection for {host} within 3 s)")
        return 1 if args.require else 0

    verdicts = anyio.run(run_checks, settings, engines)
    if args.json:
        print(json.dumps([asdict(v) for v in verdicts], indent=2))
    else:
        for v in verdicts:
            print(
                f"{v.engine:<16} {v.verdict:<12} {v.results:>3} results "
                f"{v.duration_ms:>6} ms  {v.detail}"
            )
    failed = [v for v in verdicts if v.verdict in ("drift", "unreachable")]
    checked = [v for v in verdicts if v.verdict != "skipped"]
    print(
        f"LIVE CHECK: {'FAILED' if failed else 'PASSED'} "
        f"({len(checked) - len(failed)} ok, {len(failed)} failed, "
        f"{len(verdicts) - len(checked)} skipped)"
    )
    return 1 if failed or (args.require and not checked) else 0


if __name__ == "__main__":
    sys.exit(main())
