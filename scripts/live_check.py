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
* ``skipped``      not checked: the reason is printed, with what would check it.

Never part of CI: it runs in the release gate (``--require``) and on demand, never on a timer.
When the network is unreachable (checked first: one DNS lookup and one TCP connection, 3 s
each) it prints ``SKIPPED: no network`` and exits 0, or 1 with ``--require``.

Every driver is meant to be checked (REQ-TEST-003). Keyless drivers that are off by default
(Semantic Scholar, PubMed) are switched on for the check. A driver that cannot be checked here
is listed as "not checked" with the variable that would check it; with ``--require`` each such
driver fails the run unless the operator stated why it is skipped:

* ``--skip ENGINE=REASON`` (repeatable), or the variable ``RYPSOK_LIVE_SKIP`` holding
  ``ENGINE=REASON`` entries separated by ``;`` or new lines (release.yml passes it from the
  repository variable of that name). A stated skip is not queried.
* ``duckduckgo`` is skipped by design, with a fixed reason: DuckDuckGo grants no automated use of
  its results page (docs/engines/duckduckgo.md), so the check never queries it.

Keys: a keyed engine is checked only when its key is available, either through ``--config``
(the operator's ``[engines.<id>] api_key_env`` / ``api_key_file``) or through the variable
``RYPSOK_LIVE_<ID>_API_KEY`` (for example ``RYPSOK_LIVE_GITHUB_API_KEY``). SearXNG runs on the
operator's own instance: its URL comes from ``RYPSOK_LIVE_SEARXNG_URL`` (or ``--config``), a
token for an instance behind an authenticating proxy from ``RYPSOK_LIVE_SEARXNG_API_KEY``.

usage: python scripts/live_check.py [--config FILE] [--engine ID ...] [--skip ID=REASON ...]
                                    [--require] [--json]
exit: 0 all checked engines ok (or no network without --require); 1 drift or unreachable
(or no network, or a driver not checked without a stated reason, with --require); 2 bad usage
or configuration.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import time
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, replace
from typing import Any
from urllib.parse import urlsplit

import anyio

from rypsok.app import user_agent
from rypsok.config.load import ConfigError, load_settings, parse_settings
from rypsok.config.schema import EngineSettings, Settings
from rypsok.contract.vocabulary import Category, FailureClass
from rypsok.egress import Egress, EgressError
from rypsok.engines.base import EngineFailure, EngineQuery, EngineRequest, EngineResponse
from rypsok.engines.catalog import ConfiguredEngine, EngineConfigError, resolve_engines
from rypsok.engines.registry import DRIVER_MODULES, load_driver

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

SKIP_VARIABLE = "RYPSOK_LIVE_SKIP"
SEARXNG_URL_VARIABLE = "RYPSOK_LIVE_SEARXNG_URL"

# Drivers the live check never queries, whatever the configuration, with the fixed reason it
# prints. Their drift is caught by their fixtures only.
BY_DESIGN: dict[str, str] = {
    "duckduckgo": (
        "by design: a scraping driver; DuckDuckGo grants no automated use of its results page "
        "(docs/engines/duckduckgo.md), so the live check never queries it"
    ),
}

# Keyless drivers that are off by default only to keep the zero-configuration set small: the
# live check switches them on, since every driver is to be checked (REQ-TEST-003).
ENABLED_FOR_CHECK = ("semanticscholar", "pubmed")


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
    """The settings of the check: the operator's (``--config``), or defaults with keys from
    ``RYPSOK_LIVE_<ID>_API_KEY`` and SearXNG's instance from ``RYPSOK_LIVE_SEARXNG_URL``.

    Either way the keyless drivers of ``ENABLED_FOR_CHECK`` are switched on, unless the
    operator's configuration switched one off explicitly (then it is reported unchecked).
    Keys are read from the environment when the engines are resolved, so only the variables'
    presence is looked at here.
    """
    if base is not None:
        engines_of_base = dict(base.engines)
        for engine_id in ENABLED_FOR_CHECK:
            entry = engines_of_base.get(engine_id) or EngineSettings()
            if entry.enabled is None:
                engines_of_base[engine_id] = entry.model_copy(update={"enabled": True})
        return base.model_copy(update={"engines": engines_of_base})
    engines: dict[str, Any] = {engine_id: {"enabled": True} for engine_id in ENABLED_FOR_CHECK}
    for engine_id in DRIVER_MODULES:
        variable = key_variable(engine_id)
        if os.environ.get(variable, "").strip():
            engines[engine_id] = {"api_key_env": variable, "enabled": True}
    searxng_url = os.environ.get(SEARXNG_URL_VARIABLE, "").strip()
    if searxng_url:
        engines["searxng"] = {**engines.get("searxng", {}), "enabled": True}
        engines["searxng"]["endpoint"] = searxng_url
    return parse_settings({"schema_version": 1, "engines": engines}, source="live check")


def parse_skips(entries: Iterable[str]) -> dict[str, str]:
    """The skips the operator stated: ``ENGINE=REASON`` entries -> {engine: reason}.

    Raises ValueError for an entry without ``=``, an unknown engine or an empty reason: a skip
    is accepted only with its reason, and a typo must not leave the meant engine unchecked.
    """
    skips: dict[str, str] = {}
    for entry in entries:
        if not entry.strip():
            continue
        engine_id, sep, reason = entry.partition("=")
        engine_id, reason = engine_id.strip(), " ".join(reason.split())
        if not sep or not reason:
            raise ValueError(f"skip {entry.strip()!r}: give ENGINE=REASON, the reason stated")
        if engine_id not in DRIVER_MODULES:
            raise ValueError(f"skip {entry.strip()!r}: no engine has the identifier {engine_id}")
        skips[engine_id] = reason
    return skips


def stated_skips(arguments: Iterable[str], environ: Mapping[str, str]) -> dict[str, str]:
    """The operator's skips from ``RYPSOK_LIVE_SKIP`` and ``--skip`` (which wins per engine)."""
    listed = environ.get(SKIP_VARIABLE, "").replace(";", "\n").splitlines()
    return parse_skips(listed) | parse_skips(arguments)


def what_checks(engine_id: str, *, from_config: bool = False) -> str:
    """What would get ``engine_id`` checked: the variable its key or instance comes from
    (``RYPSOK_LIVE_...``), or, with ``--config``, the operator's configuration key."""
    if engine_id in BY_DESIGN:
        return "never checked live (by design)"
    table = f"[engines.{engine_id}]"
    if engine_id == "searxng":
        if from_config:
            return f"needs {table} enabled = true and endpoint = <the operator's instance>"
        return (
            f"needs {SEARXNG_URL_VARIABLE} (the operator's instance; "
            f"{key_variable(engine_id)} if it needs a token)"
        )
    if load_driver(engine_id).admission.key == "required":
        return f"needs {table} api_key_env" if from_config else f"needs {key_variable(engine_id)}"
    return f"needs {table} enabled = true"


@dataclass(frozen=True, slots=True)
class Coverage:
    """Which drivers a run checked, and why the others were not."""

    checked: list[str]
    stated: dict[str, str]  # engine -> the stated or by-design reason it was skipped
    unexplained: list[Verdict]  # skipped with no reason stated: --require fails on these

    @property
    def complete(self) -> bool:
        """Every driver checked or skipped for a stated reason, and at least one checked."""
        return bool(self.checked) and not self.unexplained


def coverage(verdicts: Iterable[Verdict], skips: Mapping[str, str]) -> Coverage:
    """Split the verdicts of every driver into checked, skipped for a reason, and unexplained.

    A driver without a verdict (``main`` gives each one one) would count as unexplained.
    """
    by_engine = {v.engine: v for v in verdicts}
    checked: list[str] = []
    stated: dict[str, str] = {}
    unexplained: list[Verdict] = []
    for engine_id in DRIVER_MODULES:
        verdict = by_engine.get(engine_id) or Verdict(engine_id, "skipped", "no verdict", 0, 0)
        if verdict.verdict != "skipped":
            checked.append(engine_id)
        elif engine_id in skips or engine_id in BY_DESIGN:
            stated[engine_id] = skips.get(engine_id) or BY_DESIGN[engine_id]
        else:
            unexplained.append(verdict)
    return Coverage(checked, stated, unexplained)


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


def report(
    verdicts: list[Verdict],
    cover: Coverage,
    *,
    require: bool,
    as_json: bool,
    from_config: bool = False,
) -> int:
    """Print the verdicts, the unchecked drivers and the summary line; return the exit status."""
    if as_json:
        print(json.dumps([asdict(v) for v in verdicts], indent=2))
    else:
        for v in verdicts:
            print(
                f"{v.engine:<16} {v.verdict:<12} {v.results:>3} results "
                f"{v.duration_ms:>6} ms  {v.detail}"
            )
    if cover.unexplained:
        print("not checked, no reason stated (--require fails; or --skip ENGINE=REASON):")
        for v in cover.unexplained:
            print(f"  {v.engine:<16} {what_checks(v.engine, from_config=from_config)}")
    failed = [v for v in verdicts if v.verdict in ("drift", "unreachable")]
    passed = not failed and (cover.complete or not require)
    print(
        f"LIVE CHECK: {'PASSED' if passed else 'FAILED'} "
        f"({len(cover.checked) - len(failed)} ok, {len(failed)} failed, "
        f"{len(cover.stated)} skipped for a stated reason, "
        f"{len(cover.unexplained)} not checked"
        + (", each a failure under --require)" if require and cover.unexplained else ")")
    )
    return 0 if passed else 1


def main(argv: list[str] | None = None) -> int:
    """Run the live checks and print one line per engine."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", help="the operator's configuration file (keys, endpoints)")
    parser.add_argument("--engine", action="append", default=[], help="check only this engine")
    parser.add_argument(
        "--skip",
        action="append",
        default=[],
        metavar="ENGINE=REASON",
        help="do not check ENGINE, for the reason stated (repeatable; also RYPSOK_LIVE_SKIP)",
    )
    parser.add_argument(
        "--require",
        action="store_true",
        help="no network, or a driver not checked without a stated reason, is a failure",
    )
    parser.add_argument("--json", action="store_true", help="print the verdicts as JSON")
    args = parser.parse_args(argv)

    try:
        skips = stated_skips(args.skip, os.environ)
    except ValueError as error:
        print(f"live check: {error}", file=sys.stderr)
        return 2
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

    # Drivers not queried, each with its verdict: a stated skip, the fixed by-design reason,
    # or not selected by --engine (under --require that one is unexplained: the run did not
    # cover it).
    held: dict[str, Verdict] = {}
    for engine in engines:
        reason = skips.get(engine.engine_id) or BY_DESIGN.get(engine.engine_id)
        if engine.engine_id in skips:
            reason = f"operator: {reason}"
        elif args.engine and engine.engine_id not in args.engine:
            reason = "not selected (--engine)"
        if reason is not None:
            held[engine.engine_id] = Verdict(engine.engine_id, "skipped", reason, 0, 0)
    to_check = [e for e in engines if e.engine_id not in held]

    probe = next((e for e in to_check if e.active), None)
    if probe is not None:
        host = urlsplit(probe.endpoint.replace("{language}", "en")).hostname
        if not host or not network_available(host):
            print(f"SKIPPED: no network (no DNS answer or connection for {host} within 3 s)")
            return 1 if args.require else 0

    found = {v.engine: v for v in anyio.run(run_checks, settings, to_check)} if to_check else {}
    missing = Verdict("", "skipped", "no verdict", 0, 0)
    verdicts = [
        held.get(e.engine_id) or found.get(e.engine_id) or replace(missing, engine=e.engine_id)
        for e in engines
    ]
    cover = coverage(verdicts, skips)
    return report(
        verdicts, cover, require=args.require, as_json=args.json, from_config=base is not None
    )


if __name__ == "__main__":
    sys.exit(main())
