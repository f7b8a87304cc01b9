"""The web_search pipeline: engine selection, concurrent fan-out, cleaning, fusion, outcome.

Deadlines (REQ-AGG-002/003): every engine request is cut at the per-engine timeout (LIM-S5),
and the whole engine phase at the search deadline minus the reserve (LIM-S4 - LIM-S6), both
measured from the start of the call; the caller wraps the call in the hard ceiling (LIM-S7).
Requests run concurrently inside one task group, so cancellation or the deadline aborts them,
never detaches them (REQ-AGG-006), and the search completes as soon as the last engine is done
(REQ-AGG-009). A failed request is not retried (REQ-AGG-008); an exception in a driver is
contained to its engine (REQ-AGG-007). The output depends only on the engines' answers, not
on the order they arrive in (REQ-ARCH-004).

With a result cache (REQ-CACHE-001..006), an engine whose admission record allows storage
(REQ-CMP-007) is first looked up under the caller's key for this exact request; a hit answers
for that engine before its circuit and its provider limits are asked, so it sends nothing,
spends none of the engine's rate and is no request in its health. Fresh answers are stored once
the engine phase is over, so a slow cache can never cost an engine's answer.

A failed engine may come with operator hints (:class:`OperatorHint`), fixed words of rypsok's:
the driver's own (a SearXNG 403: JSON output disabled) and the pipeline's, which names the key
setting to check when an engine that takes a key fails with ``auth_failure``. They end the
``engine_failed`` notice and make the ``engine_failed`` log line a warning with a ``hint``.

Driver functions that parse a scraped page, or any body above :data:`THREAD_PARSE_BYTES`, run in
a worker thread under the process's parse limiter of LIM-C5 tasks (``[fetch] workers``), which
web_fetch's extraction jobs hold too: the event loop never parses a page, and parses of both
tools together never exceed LIM-C5 (REQ-ENG-015, REQ-SEC-012).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Literal, TypeVar

import anyio

from rypsok.cache import KeyScope, ResultCache, decode_results, encode_results
from rypsok.config.schema import MIN_REQUEST_MS, Settings
from rypsok.contract.arguments import SearchArguments
from rypsok.contract.context import CallContext
from rypsok.contract.errors import ToolFailure
from rypsok.contract.notices import Notice, hint_message, notice
from rypsok.contract.responses import SearchResponse, SearchResult
from rypsok.contract.vocabulary import (
    ErrorKind,
    FailureClass,
    NoticeCode,
    OperatorHint,
    Outcome,
    Reason,
)
from rypsok.egress.errors import EgressError, EgressReason
from rypsok.engines.base import (
    EngineFailure,
    EngineQuery,
    EngineRequest,
    EngineResponse,
    RawResult,
    is_bot_challenge,
)
from rypsok.engines.catalog import ConfiguredEngine
from rypsok.health.circuits import Admission
from rypsok.health.monitor import EngineMonitor
from rypsok.health.provider_limits import ProviderLimits, ProviderSkip, ProviderSlot
from rypsok.logs import log_event
from rypsok.search.fuse import EngineResult, fuse
from rypsok.search.results import CleaningTally, clean_results

URL_MAX_CHARS = 2048  # LIM-F9
# A request that could not get this much of the engine phase is not worth starting; the
# configuration refuses an engine phase shorter than this.
MIN_REQUEST_S = MIN_REQUEST_MS / 1000
# Bodies above this are parsed in a worker thread (under LIM-C5), so a large answer never stalls
# the loop; a scraped page always is.
THREAD_PARSE_BYTES = 256 * 1024

Sender = Callable[..., Awaitable[EngineResponse]]
"""``send(request, *, endpoint, explicit_endpoint, connect_timeout_s, total_timeout_s,
max_bytes)``: :meth:`rypsok.egress.gateway.Egress.engine_request` in production."""

_TIMEOUT_REASONS = frozenset({EgressReason.TIMEOUT})
_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class EngineOutcome:
    """How one engine's part of a search ended."""

    engine: str
    status: Literal["answered", "failed", "skipped_health", "skipped_limit"]
    results: tuple[RawResult, ...] = ()
    failure: FailureClass | None = None
    unresponsive_sources: int = 0  # an engine's own sources that did not answer (SearXNG)
    cache_key: str | None = None  # set on a fresh answer that may be stored under this key
    hints: tuple[OperatorHint, ...] = ()  # what the operator should check after a failure


def operator_hints(
    engine: ConfiguredEngine, failure_class: FailureClass, driver_hint: OperatorHint | None
) -> tuple[OperatorHint, ...]:
    """The hints of a failure: the driver's own, then the key check where it applies.

    An ``auth_failure`` of an engine that takes a key points at its key setting, unless the
    driver named another cause and no key was sent (a SearXNG 403 without a credential points
    at the instance's formats, not at a key); with a key sent, the key stays a suspect.
    """
    hints = [driver_hint] if driver_hint is not None else []
    if (
        failure_class is FailureClass.AUTH_FAILURE
        and engine.key_setting is not None
        and (driver_hint is None or engine.credential is not None)
        and OperatorHint.CHECK_KEY not in hints
    ):
        hints.append(OperatorHint.CHECK_KEY)
    return tuple(hints)


def _classify_egress(error: EgressError) -> FailureClass:
    return (
        FailureClass.TIMEOUT if error.reason in _TIMEOUT_REASONS else FailureClass.REQUEST_FAILURE
    )


class SearchPipeline:
    """web_search over the configured engines."""

    def __init__(
        self,
        *,
        settings: Settings,
        engines: Sequence[ConfiguredEngine],
        send: Sender,
        monitor: EngineMonitor,
        limits: ProviderLimits,
        logger: logging.Logger,
        cache: ResultCache | None = None,
        parse_limiter: anyio.CapacityLimiter | None = None,
    ) -> None:
        """``cache`` is the result cache, None when ``[cache]`` is off (REQ-CACHE-001).

        ``parse_limiter`` is the process's limiter of LIM-C5 parsing tasks, shared with
        web_fetch's extraction (REQ-SEC-012); without one the pipeline has its own.
        """
        self._settings = settings
        self._engines = [e for e in engines if e.active]
        self._preference = {e.engine_id: e.preference for e in engines}
        self._send = send
        self._monitor = monitor
        self._limits = limits
        self._logger = logger
        self._cache = cache
        self._keys = KeyScope(settings) if cache is not None else None
        # One limiter for every off-loop parse, sized by LIM-C5 as configured (``[fetch]
        # workers``): the default thread limiter would allow 40 parses at once.
        self._parse_limiter = (
            parse_limiter
            if parse_limiter is not None
            else anyio.CapacityLimiter(settings.fetch.workers)
        )

    def _select(self, args: SearchArguments) -> tuple[list[ConfiguredEngine], list[Notice]]:
        """The engines to query, in preference order, and a notice per engine left out."""
        chosen: list[ConfiguredEngine] = []
        notices: list[Notice] = []
        default_language = self._settings.service.default_language
        for engine in self._engines:
            record = engine.driver.admission
            if args.category not in record.categories:
                continue
            language = args.language.split("-")[0].lower()
            if record.languages is not None and not (
                # A language-neutral engine (empty set) honours only the operator's default.
                language in record.languages
                if record.languages
                else args.language == default_language
            ):
                notices.append(notice(NoticeCode.ENGINE_SKIPPED_LANGUAGE, engine=engine.engine_id))
                continue
            if args.time_range is not None and args.time_range not in record.time_ranges:
                notices.append(
                    notice(NoticeCode.ENGINE_SKIPPED_TIME_RANGE, engine=engine.engine_id)
                )
                continue
            if len(args.query) > record.max_query_chars:
                notices.append(
                    notice(NoticeCode.ENGINE_SKIPPED_QUERY_LENGTH, engine=engine.engine_id)
                )
                continue
            chosen.append(engine)
        cap = self._settings.search.engines_per_search
        if len(chosen) > cap:
            notices.append(notice(NoticeCode.ENGINES_NOT_QUERIED, count=len(chosen) - cap))
            chosen = chosen[:cap]
        return chosen, notices

    def _query(self, engine: ConfiguredEngine, args: SearchArguments) -> EngineQuery:
        service = self._settings.service
        language = args.language.split("-")[0].lower()
        return EngineQuery(
            text=args.query,
            endpoint=engine.endpoint.replace("{language}", language),
            count=min(
                self._settings.search.results_per_engine, engine.driver.admission.max_results
            ),
            language=args.language,
            time_range=args.time_range,
            region=service.region,
            safe_search=service.safe_search,
            credential=engine.credential,
            contact=service.contact,
            now=time.time(),
            category=args.category,
        )

    async def _run_engine(
        self,
        engine: ConfiguredEngine,
        args: SearchArguments,
        phase_end: float,
        context: CallContext,
    ) -> EngineOutcome:
        """One engine's part: from the cache when it holds the answer, else from the engine."""
        query = self._query(engine, args)
        key = self._cache_key(engine, query, context)
        if key is not None:
            cached = await self._cached(engine.engine_id, key, context)
            if cached is not None:
                return cached
        outcome = await self._contact(engine, query, phase_end, context)
        if key is not None and outcome.status == "answered" and not outcome.unresponsive_sources:
            return replace(outcome, cache_key=key)  # a complete answer: worth storing
        return outcome

    async def _contact(
        self,
        engine: ConfiguredEngine,
        query: EngineQuery,
        phase_end: float,
        context: CallContext,
    ) -> EngineOutcome:
        """Ask the engine, under its circuit and its provider limits."""
        engine_id = engine.engine_id
        admission = self._monitor.admit(engine_id)
        if not admission.allowed:
            return EngineOutcome(engine_id, "skipped_health")
        slot = await self._limits.acquire(engine_id, phase_end - MIN_REQUEST_S)
        if isinstance(slot, ProviderSkip):
            self._monitor.release(admission)
            return EngineOutcome(engine_id, "skipped_limit")
        started = time.monotonic()
        slots = [slot]  # a two-step driver's second request adds its own
        recorded = False
        try:
            outcome = await self._request(
                engine, query, phase_end, admission, started, context, slots
            )
            recorded = True
            return outcome
        finally:
            for held in slots:
                held.release()  # a second release does nothing
            if not recorded:  # cancelled: no verdict on the engine (REQ-AGG-006)
                self._monitor.release(admission)
            log_event(
                self._logger,
                logging.DEBUG,
                "engine_request",
                request_id=context.request_id,
                engine=engine_id,
                duration_ms=round((time.monotonic() - started) * 1000, 1),
            )

    async def _request(
        self,
        engine: ConfiguredEngine,
        query: EngineQuery,
        phase_end: float,
        admission: Admission,
        started: float,
        context: CallContext,
        slots: list[ProviderSlot],
    ) -> EngineOutcome:
        engine_id = engine.engine_id
        driver = engine.driver
        retry_after: float | None = None
        driver_hint: OperatorHint | None = None
        # The egress's own reason (e.g. proxy_failure, tls_failure): a fixed word of rypsok's,
        # never provider text, and what tells the operator which setting to check.
        egress_reason: str | None = None
        # Both requests of a two-step driver end by the one per-engine timeout (LIM-S5).
        engine_end = min(
            time.monotonic() + self._settings.search.engine_timeout_ms / 1000, phase_end
        )
        try:
            request: EngineRequest = driver.build_request(query)
            response = await self._exchange(engine, query, request, engine_end)
            if driver.follow_up is None:
                results = await self._read(engine, driver.parse, response, engine_end)
            else:
                step = await self._read(
                    engine, partial(driver.follow_up, query), response, engine_end
                )
                if isinstance(step, EngineRequest):  # the second and last request
                    slots[0].release()  # the engine's concurrency cap may be one
                    if engine_end - time.monotonic() < MIN_REQUEST_S:
                        raise EngineFailure(FailureClass.TIMEOUT)
                    second = await self._limits.acquire(engine_id, engine_end - MIN_REQUEST_S)
                    if isinstance(second, ProviderSkip):
                        self._monitor.release(admission)
                        return EngineOutcome(engine_id, "skipped_limit")
                    slots.append(second)
                    response = await self._exchange(engine, query, step, engine_end)
                    step = await self._read(engine, driver.parse, response, engine_end)
                results = step
        except EngineFailure as failure:
            failure_class, retry_after = failure.failure_class, failure.retry_after_s
            driver_hint = failure.hint
        except EgressError as error:
            failure_class = _classify_egress(error)
            egress_reason = error.reason.value
        except Exception as exc:  # a driver bug is contained to its engine (REQ-AGG-007)
            log_event(
                self._logger,
                logging.WARNING,
                "driver_exception",
                engine=engine_id,
                exception=type(exc).__name__,
            )
            failure_class = FailureClass.PARSE_FAILURE
        else:
            latency_ms = (time.monotonic() - started) * 1000
            self._monitor.record_success(engine_id, latency_ms, admission, requests=len(slots))
            return EngineOutcome(
                engine_id,
                "answered",
                tuple(results),
                unresponsive_sources=getattr(results, "unresponsive_sources", 0),
            )
        latency_ms = (time.monotonic() - started) * 1000
        self._monitor.record_failure(
            engine_id, failure_class, latency_ms, retry_after, admission, requests=len(slots)
        )
        hints = operator_hints(engine, failure_class, driver_hint)
        hint = " ".join(
            hint_message(h, engine=engine_id, setting=engine.key_setting) for h in hints
        )
        log_event(
            self._logger,
            # Something only the operator can fix (a key, the instance's settings): a warning.
            logging.WARNING if hint else logging.INFO,
            "engine_failed",
            request_id=context.request_id,
            engine=engine_id,
            failure=failure_class.value,
            egress_reason=egress_reason,
            hint=hint or None,
            duration_ms=round(latency_ms, 1),
        )
        return EngineOutcome(engine_id, "failed", failure=failure_class, hints=hints)

    async def _exchange(
        self, engine: ConfiguredEngine, query: EngineQuery, request: EngineRequest, end: float
    ) -> EngineResponse:
        """Send one engine request under the engine profile; it must end by ``end``."""
        search = self._settings.search
        total_s = end - time.monotonic()
        return await self._send(
            request,
            endpoint=query.endpoint,
            explicit_endpoint=engine.explicit_endpoint,
            connect_timeout_s=min(search.connect_timeout_ms / 1000, total_s),
            total_timeout_s=total_s,
            max_bytes=engine.driver.admission.max_response_bytes,
        )

    async def _read(
        self,
        engine: ConfiguredEngine,
        read: Callable[[EngineResponse], _T],
        response: EngineResponse,
        end: float,
    ) -> _T:
        """A driver function on an answer; scraping drivers' and large bodies off the loop.

        Off the loop, the function runs in a worker thread once one of the LIM-C5 parse
        permits is free (REQ-ENG-015, REQ-SEC-012). A wait for a permit that outlasts the
        engine's request time (``end``) ends as ``timeout``; a parse that has started runs to
        its end (a thread cannot be stopped), bounded by the driver's own node and depth
        limits.
        """
        if is_bot_challenge(response.headers):
            # An anti-bot check in place of the answer, whatever its status (REQ-ENG-006):
            # no driver reads it.
            raise EngineFailure(FailureClass.BLOCKED)
        # Scraping drivers parse HTML pages: always off the event loop (REQ-ENG-015).
        if not engine.driver.scraping and len(response.body) <= THREAD_PARSE_BYTES:
            return read(response)
        with anyio.move_on_after(max(0.0, end - time.monotonic())):
            return await anyio.to_thread.run_sync(read, response, limiter=self._parse_limiter)
        raise EngineFailure(FailureClass.TIMEOUT)

    async def search(self, args: SearchArguments, context: CallContext) -> SearchResponse:
        """Run one search to its response, or raise the call's :class:`ToolFailure`."""
        started = time.monotonic()
        search = self._settings.search
        engines, notices = self._select(args)
        if not engines:
            raise ToolFailure(
                ErrorKind.UNAVAILABLE,
                Reason.NO_ENGINE_AVAILABLE,
                "No enabled engine serves this category with this language and time_range; "
                "change them or ask the operator to enable more engines.",
            )
        phase_end = started + (search.deadline_ms - search.reserve_ms) / 1000
        outcomes: dict[str, EngineOutcome] = {}

        async def run(engine: ConfiguredEngine) -> None:
            outcomes[engine.engine_id] = await self._run_engine(engine, args, phase_end, context)

        with anyio.move_on_after(max(0.0, phase_end - time.monotonic())):
            async with anyio.create_task_group() as group:
                for engine in engines:
                    group.start_soon(run, engine)
        await self._store(outcomes.values())
        return self._respond(args, engines, outcomes, notices)

    # --- the result cache (REQ-CACHE-001..006, REQ-CMP-007) -------------------------------

    def _cache_key(
        self, engine: ConfiguredEngine, query: EngineQuery, context: CallContext
    ) -> str | None:
        """The key of this request's entry; None without a cache or when the engine's admission
        record forbids storage (REQ-CMP-007)."""
        if self._keys is None or not engine.driver.admission.cacheable:
            return None
        return self._keys.key(caller=context.caller, engine_id=engine.engine_id, query=query)

    async def _cached(self, engine_id: str, key: str, context: CallContext) -> EngineOutcome | None:
        """The engine's answer from the cache, or None; a failing cache is a miss."""
        if self._cache is None:
            return None
        try:
            value = await self._cache.get(key)
            results = None if value is None else decode_results(engine_id, value)
        except Exception as exc:  # a cache failure may cost speed only (REQ-CACHE-006)
            self._cache_failed("cache_get", exc)
            return None
        if results is None:
            return None
        log_event(
            self._logger,
            logging.DEBUG,
            "engine_cache_hit",
            request_id=context.request_id,
            engine=engine_id,
        )
        return EngineOutcome(engine_id, "answered", results)

    async def _store(self, outcomes: Iterable[EngineOutcome]) -> None:
        """Store the fresh answers of cacheable engines for ``[cache] ttl_s``; never raises."""
        if self._cache is None:
            return
        ttl_s = self._settings.cache.ttl_s
        for outcome in outcomes:
            if outcome.cache_key is None:
                continue
            value = encode_results(outcome.engine, outcome.results)
            if value is None:
                continue
            try:
                await self._cache.put(outcome.cache_key, value, ttl_s)
            except Exception as exc:  # a cache failure may cost speed only (REQ-CACHE-006)
                self._cache_failed("cache_put", exc)

    def _cache_failed(self, operation: str, exc: Exception) -> None:
        log_event(
            self._logger,
            logging.WARNING,
            "cache_failed",
            operation=operation,
            exception=type(exc).__name__,
        )

    def _respond(
        self,
        args: SearchArguments,
        engines: Sequence[ConfiguredEngine],
        outcomes: dict[str, EngineOutcome],
        notices: list[Notice],
    ) -> SearchResponse:
        search = self._settings.search
        tally = CleaningTally()
        by_engine: dict[str, list[EngineResult]] = {}
        degraded = False
        for engine in engines:  # preference order: notices in a fixed order
            outcome = outcomes.get(engine.engine_id)
            if outcome is None:  # still running at the deadline
                outcome = EngineOutcome(engine.engine_id, "failed", failure=FailureClass.TIMEOUT)
            if outcome.status == "answered" and outcome.unresponsive_sources:
                degraded = True
                notices.append(
                    notice(
                        NoticeCode.ENGINE_SOURCES_UNRESPONSIVE,
                        engine=engine.engine_id,
                        count=outcome.unresponsive_sources,
                    )
                )
            if outcome.status == "answered":
                by_engine[engine.engine_id] = clean_results(
                    outcome.results,
                    title_max_chars=search.title_max_chars,
                    snippet_max_chars=search.snippet_max_chars,
                    url_max_chars=URL_MAX_CHARS,
                    drop_instruction_like=search.instruction_like == "drop",
                    tally=tally,
                )
                continue
            degraded = True
            if outcome.status == "failed":
                notices.append(
                    notice(
                        NoticeCode.ENGINE_FAILED,
                        engine=engine.engine_id,
                        failure=outcome.failure,
                        hints=outcome.hints,
                        setting=engine.key_setting,
                    )
                )
            elif outcome.status == "skipped_health":
                notices.append(
                    notice(NoticeCode.ENGINE_SKIPPED_CIRCUIT_OPEN, engine=engine.engine_id)
                )
            else:
                notices.append(
                    notice(NoticeCode.ENGINE_SKIPPED_RATE_LIMIT, engine=engine.engine_id)
                )
        if not by_engine:
            raise ToolFailure(
                ErrorKind.UNAVAILABLE,
                Reason.NO_ENGINE_ANSWERED,
                "No search engine answered in time; retry later or use another category.",
            )
        fused = fuse(by_engine, self._preference, args.max_results)
        attribution = self._settings.service.attribution
        required = {e.engine_id for e in engines if e.driver.admission.attribution_required}
        results = []
        for item in fused:
            observed = [o.engine for o in item.observations]
            show = attribution or any(e in required for e in observed)
            results.append(
                SearchResult(
                    title=item.title,
                    url=item.url,
                    snippet=item.snippet,
                    date=item.date,
                    engines=sorted(observed, key=lambda e: self._preference.get(e, 0))
                    if show
                    else None,
                )
            )
        notices.extend(tally.notices())
        verdict: Literal[Outcome.OK, Outcome.PARTIAL, Outcome.EMPTY] = (
            Outcome.EMPTY if not results else Outcome.PARTIAL if degraded else Outcome.OK
        )
        return SearchResponse(outcome=verdict, notices=notices, results=results)
