"""The composition root: configuration -> egress -> engines -> pipelines -> services -> adapter.

The only place where long-lived objects are created and wired; no module keeps global state.
"""

from __future__ import annotations

import logging
from pathlib import Path

import anyio

from rypsok import PROJECT_URL, __version__
from rypsok.config.load import ConfigError, load_settings
from rypsok.config.schema import Settings
from rypsok.contract.errors import ToolFailure
from rypsok.contract.responses import EngineHealth, FetchResponse, StatusResponse
from rypsok.contract.tools import ContractSettings
from rypsok.contract.arguments import FetchArguments, SearchArguments
from rypsok.contract.responses import SearchResponse
from rypsok.contract.vocabulary import Category, ErrorKind, Outcome, Reason, ToolName
from rypsok.engines.catalog import ConfiguredEngine, EngineConfigError, resolve_engines
from rypsok.health.clock import SystemClock
from rypsok.health.invocation import InvocationLimits
from rypsok.health.metrics import Metrics
from rypsok.logs import configure_logging, log_event
from rypsok.services.calls import Services


class ConfigurationError(Exception):
    """Start-up cannot proceed; the message names the key or file (exit code 1)."""


def load(cli_value: str | None) -> tuple[Settings, Path | None]:
    """Read and validate the configuration, engines included."""
    try:
        settings, path = load_settings(cli_value)
        resolve_engines(settings)
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
        lines.append(f"  {e.engine_id:<14} {categories:<8} {state}")
    tools = ["web_search", "web_fetch"] + (["engine_status"] if settings.service.engine_status else [])
    lines.append(f"tools: {', '.join(tools)}")
    lines.append(f"credential check: {settings.privacy.credential_check}")
    return "\n".join(lines) + "\n"


def build_services(settings: Settings, logger: logging.Logger) -> Services:
    """Wire the core for one process."""
    engines = resolve_engines(settings)
    contract = contract_settings(settings, engines)
    metrics = Metrics()
    clock = SystemClock()
    limiter = InvocationLimits(
        {
            ToolName.WEB_SEARCH: settings.service.calls_per_minute_web_search,
            ToolName.WEB_FETCH: settings.service.calls_per_minute_web_fetch,
            ToolName.ENGINE_STATUS: settings.service.calls_per_minute_engine_status,
        },
        clock=clock,
    )

    async def search(args: SearchArguments, request_id: str) -> SearchResponse:
        raise ToolFailure(
            ErrorKind.UNAVAILABLE, Reason.NOT_YET_AVAILABLE,
            "web_search is not available in this build yet.",
        )

    async def fetch(args: FetchArguments, request_id: str) -> FetchResponse:
        raise ToolFailure(
            ErrorKind.UNAVAILABLE, Reason.NOT_YET_AVAILABLE,
            "web_fetch is not available in this build yet.",
        )

    def status() -> StatusResponse:
        return StatusResponse(
            outcome=Outcome.OK,
            engines=[
                EngineHealth(
                    engine=e.engine_id,
                    state="closed" if e.active else "disabled",
                    median_latency_ms=None,
                )
                for e in engines
            ],
        )

    for e in engines:
        if not e.active:
            log_event(logger, logging.INFO, "engine_inactive", engine=e.engine_id,
                      reason=e.inactive_reason)
    return Services(
        contract=contract, search=search, fetch=fetch, status=status,
        limiter=limiter, metrics=metrics, logger=logger,
    )


def serve(settings: Settings, path: Path | None, *, transport: str) -> int:
    """Start serving; returns the exit code."""
    logger = configure_logging(settings.service.log_level)
    if settings.service.log_queries:
        log_event(logger, logging.WARNING, "query_logging_enabled",
                  detail="queries and URLs are logged at debug level (service.log_queries)")
    log_event(logger, logging.INFO, "start", version=__version__, transport=transport,
              config=str(path) if path else None)
    services = build_services(settings, logger)
    if transport == "http":
        raise ConfigurationError("the http transport is not available in this build yet")
    from rypsok.mcp.server import build_server
    from rypsok.mcp.stdio import serve_stdio

    server = build_server(services, structured_content=settings.service.structured_content)
    anyio.run(serve_stdio, server, logger)
    return 0
