"""The composition root: configuration -> egress -> engines -> pipelines -> services -> adapter.

The only place where long-lived objects are created and wired; no module keeps global state.
"""

from __future__ import annotations

import gc
import importlib
import logging
import ssl
from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from rypsok import PROJECT_URL, __version__
from rypsok.config.limits import limit
from rypsok.config.load import ConfigError, load_settings
from rypsok.config.schema import Settings
from rypsok.contract.context import CallContext
from rypsok.contract.responses import FetchResponse, SearchResponse, StatusResponse
from rypsok.contract.tools import ContractSettings
from rypsok.contract.vocabulary import Category, Outcome, ToolName
from rypsok.engines.catalog import ConfiguredEngine, EngineConfigError, resolve_engines
from rypsok.health.circuits import Transition
from rypsok.health.clock import SystemClock
from rypsok.health.invocation import InvocationLimits
from rypsok.health.metrics import Metrics
from rypsok.health.monitor import EngineMonitor
from rypsok.health.provider_limits import ProviderLimits
from rypsok.logs import configure_logging, log_event
from rypsok.services.calls import FetchHandler, SearchHandler, Services

if TYPE_CHECKING:
    from rypsok.cache import ResultCache
    from rypsok.contract.arguments import FetchArguments, SearchArguments

# The modules of the core that open sockets and spawn workers. They are imported after the
# server answers its first messages (in a worker thread, or at the first call), so a host that
# starts rypsok gets its tool list without waiting for them (REQ-PERF-005).
CORE_MODULES = (
    "rypsok.egress.gateway",
    "rypsok.search.pipeline",
    "rypsok.fetch",
    "rypsok.fetch.retrieve",
    "rypsok.services.search",
    "rypsok.services.fetch",
)


class ConfigurationError(Exception):
    """Start-up cannot proceed; the message names the key or file (exit code 1)."""


def load(cli_value: str | None) -> tuple[Settings, Path | None]:
    """Read and validate the configuration, engines included."""
    try:
        settings, path = load_settings(cli_value)
        resolve_engines(settings)
        from rypsok.egress.addresses import check_rules

        for key in ("allow", "deny"):
            try:
                check_rules(getattr(settings.egress, key))
            except ValueError as exc:
                raise ConfigError(f"invalid value for egress.{key}: {exc}") from None
        from rypsok.egress.proxy import check_engine_proxy, resolve_proxy_credentials

        try:
            # Judged at start (metadata, deny rules), not at the first search.
            check_engine_proxy(
                settings.egress.engine_proxy, allow=settings.egress.allow, deny=settings.egress.deny
            )
        except ValueError as exc:
            raise ConfigError(f"invalid value for egress.engine_proxy: {exc}") from None
        try:
            # Resolved at start too: the message names the key, never the value.
            resolve_proxy_credentials(settings.egress)
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
    except (ConfigError, EngineConfigError) as exc:
        raise ConfigurationError(str(exc)) from None
    return settings, path


def user_agent(settings: Settings) -> str:
    """The one identifying User-Agent (REQ-CMP-004)."""
    contact = f"; {settings.service.contact}" if settings.service.contact else ""
    return f"rypsok/{__version__} (+{PROJECT_URL}{contact})"


def contract_settings(settings: Settings, engines: list[ConfiguredEngine]) -> ContractSettings:
    """What the published schemas state: only categories some active engine serves."""
    served = {c for e in engines if e.active for c in e.driver.admission.categories}
    categories = tuple(c for c in Category if c in served) or (Category.GENERAL,)
    return ContractSettings(
        categories=categories,
        languages=tuple(settings.service.languages),
        default_language=settings.service.default_language,
        max_results_default=settings.search.max_results_default,
        max_results_ceiling=settings.search.max_results_ceiling,
        query_max_chars=settings.search.query_max_chars,
        max_chars_default=settings.fetch.max_chars_default,
        max_chars_ceiling=settings.fetch.max_chars_ceiling,
        url_max_chars=2048,
        engine_status_enabled=settings.service.engine_status,
    )


def check_report(settings: Settings, path: Path | None) -> str:
    """What ``rypsok check`` prints: the configuration source and what would run."""
    engines = resolve_engines(settings)
    lines = [
        f"rypsok {__version__}: configuration is valid",
        f"source: {path if path else 'none (zero configuration: built-in defaults)'}",
        f"user agent: {user_agent(settings)}",
        "engines:",
    ]
    for e in engines:
        categories = ",".join(c.value for c in e.driver.admission.categories)
        state = "active" if e.active else f"inactive ({e.inactive_reason})"
        lines.append(f"  {e.engine_id:<16} {categories:<26} {state}")
    tools = ["web_search", "web_fetch"] + (
        ["engine_status"] if settings.service.engine_status else []
    )
    lines.append(f"tools: {', '.join(tools)}")
    lines.append(f"credential check: {settings.privacy.credential_check}")
    return "\n".join(lines) + "\n"


class _Core:
    """The search and fetch pipelines, assembled once, at the first call or the warm-up.

    Everything here opens sockets, spawns worker processes or compiles large tables; what
    it opens is closed with the runtime's exit stack.
    """

    def __init__(
        self,
        *,
        settings: Settings,
        logger: logging.Logger,
        engines: list[ConfiguredEngine],
        clock: SystemClock,
        monitor: EngineMonitor,
        limits: ProviderLimits,
        cache: ResultCache | None,
        extra_allow: Sequence[str],
        ssl_context: ssl.SSLContext | None,
        stack: AsyncExitStack,
    ) -> None:
        self._settings = settings
        self._logger = logger
        self._engines = engines
        self._clock = clock
        self._monitor = monitor
        self._limits = limits
        self._cache = cache
        self._extra_allow = extra_allow
        self._ssl_context = ssl_context
        self._stack = stack
        self._lock = anyio.Lock()
        self._handlers: tuple[SearchHandler, FetchHandler] | None = None
        self._extractor: Any = None  # rypsok.fetch.Extractor, once assembled

    def _keepalive_per_origin(self) -> int:
        # As many idle connections as two engines sharing an origin run at once (brave and
        # brave_news do): fewer would open a connection per request under load.
        caps = [self._limits.engine_cap_of(e.engine_id) for e in self._engines if e.active]
        return 2 * max(caps, default=1)

    async def warm_up(self) -> None:
        """Import the core in a worker thread, then assemble it; for the time after start."""
        for name in CORE_MODULES:
            await anyio.to_thread.run_sync(importlib.import_module, name)
        await self.handlers()
        # The extraction workers boot now (about 2 s), not inside the first fetches' deadlines.
        await self._extractor.start()
        # Everything loaded so far lives as long as the process: move it out of the cyclic
        # garbage collector's view, so that a full collection (which otherwise walks every
        # module, table and model class, tens of milliseconds) never stalls a call.
        gc.collect()
        gc.freeze()

    async def handlers(self) -> tuple[SearchHandler, FetchHandler]:
        """The web_search and web_fetch services, assembled on first use."""
        async with self._lock:
            if self._handlers is None:
                self._handlers = await self._assemble()
            return self._handlers

    async def search(self, args: SearchArguments, context: CallContext) -> SearchResponse:
        """web_search through the assembled core."""
        search, _ = await self.handlers()
        return await search(args, context)

    async def fetch(self, args: FetchArguments, context: CallContext) -> FetchResponse:
        """web_fetch through the assembled core."""
        _, fetch = await self.handlers()
        return await fetch(args, context)

    async def _assemble(self) -> tuple[SearchHandler, FetchHandler]:
        from rypsok.egress.gateway import Egress
        from rypsok.fetch import Extractor
        from rypsok.fetch.hosts import FetchSlots
        from rypsok.fetch.retrieve import Retriever
        from rypsok.fetch.robots import RobotsPolicy
        from rypsok.fetch.strict import ReturnedURLs
        from rypsok.search.pipeline import SearchPipeline
        from rypsok.services.fetch import FetchService
        from rypsok.services.search import SearchService

        settings, logger = self._settings, self._logger
        egress = await self._stack.enter_async_context(
            Egress(
                settings,
                user_agent(settings),
                extra_allow=self._extra_allow,
                ssl_context=self._ssl_context,
                keepalive_per_origin=self._keepalive_per_origin(),
                logger=logger,
            )
        )
        # Parsing tasks of the whole process, web_search's and web_fetch's together, never
        # exceed LIM-C5 (REQ-SEC-012): one limiter for both.
        parse_limiter = anyio.CapacityLimiter(settings.fetch.workers)
        pipeline = SearchPipeline(
            settings=settings,
            engines=self._engines,
            send=egress.engine_request,
            monitor=self._monitor,
            limits=self._limits,
            logger=logger,
            cache=self._cache,
            parse_limiter=parse_limiter,
        )
        returned = ReturnedURLs()
        fetch_settings = settings.fetch
        robots = (
            RobotsPolicy(
                get=egress.get,
                check=lambda url: egress.check_url(url, allow_http=True),
                clock=self._clock,
                lifetime_s=limit("LIM-F12"),
                max_bytes=limit("LIM-F13"),
                logger=logger,
            )
            if fetch_settings.robots
            else None
        )
        retriever = Retriever(
            egress=egress,
            robots=robots,
            slots=FetchSlots(
                process=fetch_settings.fetches_in_flight, per_host=fetch_settings.fetches_per_host
            ),
            returned=returned,
            settings=fetch_settings,
            logger=logger,
        )
        extractor = Extractor(
            workers=fetch_settings.workers,
            sandbox=fetch_settings.sandbox,
            parse_limiter=parse_limiter,
        )
        self._stack.push_async_callback(_close_shielded, extractor)
        self._extractor = extractor
        log_event(
            logger, logging.INFO, "extraction_containment", containment=extractor.containment()
        )
        return (
            SearchService(settings, pipeline, returned),
            FetchService(settings, retriever, extractor),
        )


async def _close_shielded(extractor: Any) -> None:
    with anyio.CancelScope(shield=True):
        await extractor.aclose()


@asynccontextmanager
async def runtime(
    settings: Settings,
    logger: logging.Logger,
    *,
    extra_allow: Sequence[str] = (),
    ssl_context: ssl.SSLContext | None = None,
    metrics: Metrics | None = None,
) -> AsyncIterator[Services]:
    """Wire the core for one process and close what it opened when the process ends.

    ``extra_allow`` and ``ssl_context`` exist for tests, which reach loopback servers only
    through an explicit allow rule (REQ-TEST-005); production passes neither.
    """
    engines = resolve_engines(settings)
    contract = contract_settings(settings, engines)
    clock = SystemClock()
    # The HTTP transport passes its own instance to serve it on its metrics port.
    metrics = Metrics() if metrics is None else metrics
    async with AsyncExitStack() as stack:
        cache: ResultCache | None = None
        shared = None
        if settings.cache.enabled or settings.cache.backend == "redis":
            # The result cache, and Redis for the limits of several replicas (docs/cache.md).
            from rypsok.cache import CacheConfigError, open_backend
            from rypsok.health.shared_window import SharedWindows

            try:
                backend = open_backend(settings.cache, clock=clock, logger=logger)
            except CacheConfigError as exc:
                raise ConfigurationError(str(exc)) from None
            await stack.enter_async_context(backend)
            cache = backend.cache
            if backend.link is not None:
                shared = SharedWindows(backend.link, key_prefix=settings.cache.key_prefix)
        limiter = InvocationLimits(
            {
                ToolName.WEB_SEARCH: settings.service.calls_per_minute_web_search,
                ToolName.WEB_FETCH: settings.service.calls_per_minute_web_fetch,
                ToolName.ENGINE_STATUS: settings.service.calls_per_minute_engine_status,
            },
            clock=clock,
            shared=shared,
        )

        def on_transition(transition: Transition) -> None:
            log_event(
                logger,
                logging.WARNING,
                "circuit",
                engine=transition.engine,
                state=transition.state.value,
                previous=transition.previous.value,
                cooldown_s=transition.cooldown_s,
            )

        monitor = EngineMonitor(clock=clock, metrics=metrics, listener=on_transition)
        limits = ProviderLimits.from_admissions(
            [e.driver.admission for e in engines if e.active],
            clock=clock,
            process_cap=settings.search.requests_in_flight,
            shared_rate=shared.engine_window if shared is not None else None,
        )
        for e in engines:
            if not e.active:
                log_event(
                    logger,
                    logging.INFO,
                    "engine_inactive",
                    engine=e.engine_id,
                    reason=e.inactive_reason,
                )
        core = _Core(
            settings=settings,
            logger=logger,
            engines=engines,
            clock=clock,
            monitor=monitor,
            limits=limits,
            cache=cache,
            extra_allow=extra_allow,
            ssl_context=ssl_context,
            stack=stack,
        )
        configured = [e.engine_id for e in engines]
        disabled = {e.engine_id for e in engines if not e.active}

        def status() -> StatusResponse:
            return StatusResponse(outcome=Outcome.OK, engines=monitor.status(configured, disabled))

        yield Services(
            contract=contract,
            search=core.search,
            fetch=core.fetch,
            status=status,
            limiter=limiter,
            metrics=metrics,
            logger=logger,
            log_arguments=settings.service.log_queries,
            warm_up=core.warm_up,
        )


def serve(settings: Settings, path: Path | None, *, transport: str) -> int:
    """Start serving; returns the exit code."""
    logger = configure_logging(settings.service.log_level)
    if settings.service.log_queries:
        log_event(
            logger,
            logging.WARNING,
            "query_logging_enabled",
            detail="queries and URLs are logged at debug level (service.log_queries)",
        )
    log_event(
        logger,
        logging.INFO,
        "start",
        version=__version__,
        transport=transport,
        config=str(path) if path else None,
    )
    if transport == "http":
        from rypsok.mcp.http import serve_http

        return serve_http(settings, logger)
    anyio.run(_serve_stdio, settings, logger)
    return 0


async def _serve_stdio(settings: Settings, logger: logging.Logger) -> None:
    from rypsok.mcp.server import build_server
    from rypsok.mcp.stdio import serve_stdio

    metrics = Metrics()
    async with runtime(settings, logger, metrics=metrics) as services:
        server = build_server(services, structured_content=settings.service.structured_content)
        await serve_stdio(server, logger, warm_up=services.warm_up)
    # Over stdio the counters leave the process through this line (REQ-OBS-007/008).
    log_event(logger, logging.INFO, "metrics", **metrics.snapshot())
