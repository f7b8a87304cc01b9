"""The call runner: one place where every tool call is limited, validated, run, measured and logged.

Order for every call (REQ-LIFE-001, REQ-SEARCH-006): invocation limit, argument validation, then
the tool's service, which runs the privacy check before any outbound request. Every call ends in
exactly one outcome (REQ-ERR-001); an unexpected exception becomes ``unavailable``/``internal``
and is logged by class only, never with its message (REQ-ERR-004, REQ-SEC-014).
"""

from __future__ import annotations

import logging
import time
import urllib.parse
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from rypsok.contract.arguments import (
    FetchArguments,
    SearchArguments,
    parse_fetch,
    parse_search,
    parse_status,
)
from rypsok.contract.context import CallContext
from rypsok.contract.errors import ErrorDetail, ToolFailure
from rypsok.contract.responses import (
    ErrorResponse,
    FetchResponse,
    Response,
    SearchResponse,
    StatusResponse,
    to_structured,
)
from rypsok.contract.tools import ContractSettings, ToolDefinition, tool_definitions
from rypsok.contract.vocabulary import ErrorKind, Outcome, Reason, ToolName
from rypsok.health.invocation import InvocationLimits
from rypsok.health.metrics import Metrics
from rypsok.logs import log_event

SearchHandler = Callable[[SearchArguments, CallContext], Awaitable[SearchResponse]]
FetchHandler = Callable[[FetchArguments, CallContext], Awaitable[FetchResponse]]
StatusHandler = Callable[[], StatusResponse]


@dataclass(frozen=True, slots=True)
class CallResult:
    """What the adapter sends back: structured content and whether it is an error."""

    structured: dict[str, Any]
    is_error: bool
    outcome: Outcome


_REFUSALS = frozenset({ErrorKind.INVALID_REQUEST, ErrorKind.DENIED})


class Services:
    """The three tools over the core, with the controls every call shares."""

    def __init__(
        self,
        *,
        contract: ContractSettings,
        search: SearchHandler,
        fetch: FetchHandler,
        status: StatusHandler,
        limiter: InvocationLimits,
        metrics: Metrics,
        logger: logging.Logger,
        log_arguments: bool = False,
        warm_up: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.contract = contract
        self._search = search
        self._fetch = fetch
        self._status = status
        self._limiter = limiter
        self._metrics = metrics
        self._logger = logger
        self._warm_up = warm_up
        # Query text and URLs are logged only when the operator chose it (LIM-P3) and the
        # log level is debug; credentials in them are masked even then (REQ-PRIV-004).
        self._log_arguments = log_arguments and logger.isEnabledFor(logging.DEBUG)
        self._definitions = tool_definitions(contract)
        self._names = {d.name.value for d in self._definitions}

    async def warm_up(self) -> None:
        """Prepare the core ahead of the first call; failures are left to that call."""
        if self._warm_up is not None:
            try:
                await self._warm_up()
            except Exception as exc:  # the first call will meet it again, and report it
                log_event(
                    self._logger, logging.WARNING, "warm_up_failed", exception=type(exc).__name__
                )

    def tools(self, permitted: frozenset[str] | None = None) -> list[ToolDefinition]:
        """The tool definitions in their fixed order, restricted to a caller's tools if given."""
        if permitted is None:
            return list(self._definitions)
        return [d for d in self._definitions if d.name.value in permitted]

    def knows(self, name: str) -> bool:
        """Whether a tool of this name is offered (unknown tools are protocol errors)."""
        return name in self._names

    async def call(
        self,
        name: str,
        arguments: Mapping[str, object] | None,
        *,
        caller: str = "local",
        permitted: frozenset[str] | None = None,
    ) -> CallResult:
        """Run one tool call to exactly one outcome."""
        request_id = uuid.uuid4().hex[:16]
        started = time.monotonic()
        response: Response
        try:
            if permitted is not None and name not in permitted:
                raise ToolFailure(
                    ErrorKind.DENIED,
                    Reason.TOOL_NOT_PERMITTED,
                    "This caller may not use this tool; ask the operator to add it to the "
                    "caller's tools.",
                )
            decision = await self._limiter.admit_shared(ToolName(name), caller)
            if not decision.admitted:
                raise ToolFailure(
                    ErrorKind.UNAVAILABLE,
                    Reason.RATE_LIMITED,
                    f"Too many {name} calls this minute; retry after {decision.retry_after_ms} ms.",
                    ErrorDetail(retry_after_ms=decision.retry_after_ms),
                )
            if self._log_arguments:
                self._log_call_arguments(name, arguments or {}, request_id)
            context = CallContext(request_id=request_id, caller=caller)
            response = await self._dispatch(name, arguments or {}, context)
        except ToolFailure as failure:
            response = ErrorResponse(error=failure.body)
        except Exception as exc:  # contained: one call fails, the service goes on (REQ-SEC-014)
            log_event(
                self._logger,
                logging.ERROR,
                "call_failed_internally",
                request_id=request_id,
                tool=name,
                exception=type(exc).__name__,
            )
            response = ErrorResponse(
                error=ToolFailure(
                    ErrorKind.UNAVAILABLE,
                    Reason.INTERNAL,
                    "rypsok failed while serving this call; retrying may help. The operator "
                    "finds the failure in the log as call_failed_internally.",
                ).body
            )
        # urllib.parse keeps the last URLs it split in a process-wide cache; drop them so no
        # URL of this call outlives it (REQ-LIFE-002, REQ-PRIV-003).
        urllib.parse.clear_cache()  # type: ignore[attr-defined]  # exists, untyped in typeshed
        return self._finish(name, response, request_id, started)

    def _log_call_arguments(
        self, name: str, arguments: Mapping[str, object], request_id: str
    ) -> None:
        from rypsok.privacy import redact

        shown = {
            key: redact(value) if isinstance(value, str) else value
            for key, value in arguments.items()
        }
        log_event(
            self._logger,
            logging.DEBUG,
            "call_arguments",
            request_id=request_id,
            tool=name,
            arguments=shown,
        )

    async def _dispatch(
        self, name: str, arguments: Mapping[str, object], context: CallContext
    ) -> Response:
        if name == ToolName.WEB_SEARCH:
            return await self._search(parse_search(arguments, self.contract), context)
        if name == ToolName.WEB_FETCH:
            return await self._fetch(parse_fetch(arguments, self.contract), context)
        if name == ToolName.ENGINE_STATUS and self.contract.engine_status_enabled:
            parse_status(arguments)
            return self._status()
        raise ToolFailure(
            ErrorKind.INVALID_REQUEST,
            Reason.INVALID_ARGUMENT,
            f"Unknown tool; valid tools are: {', '.join(sorted(self._names))}.",
        )

    def _finish(self, name: str, response: Response, request_id: str, started: float) -> CallResult:
        latency_ms = (time.monotonic() - started) * 1000
        structured = to_structured(response)
        tool = ToolName(name)
        error_kind: ErrorKind | None = None
        reason: Reason | None = None
        if isinstance(response, ErrorResponse):
            error_kind = response.error.kind
            reason = response.error.reason
            if error_kind in _REFUSALS or reason == Reason.RATE_LIMITED:
                self._metrics.refused_call(tool, reason)
        outcome = Outcome(structured["outcome"])
        self._metrics.call(tool, outcome, latency_ms, error_kind)
        log_event(
            self._logger,
            logging.INFO,
            "call",
            request_id=request_id,
            tool=name,
            outcome=outcome.value,
            error_kind=error_kind.value if error_kind else None,
            reason=reason.value if reason else None,
            duration_ms=round(latency_ms, 1),
        )
        return CallResult(
            structured=structured, is_error=isinstance(response, ErrorResponse), outcome=outcome
        )
