"""The extractor: the one async entry point of web_fetch after the bytes arrived.

Usage by the service (created once at start, closed at shutdown)::

    extractor = Extractor(workers=settings.workers, sandbox=settings.sandbox)
    log.info("extraction containment: %s", extractor.containment())
    await extractor.start()                      # optional: start the workers now
    extraction = await extractor.extract(body, content_type, url, status=200, headers=h)
    extraction = extraction.map_text(boundary_clean)          # optional, REQ-PAGE-001 order
    view = await select_and_budget_async(extraction, fragment=f, focus=q, start_char=s,
                                         max_chars=m)
    response = fetch_response(extraction, view, url=url)     # or build FetchResponse itself
    await extractor.aclose()

``extract`` raises :class:`~rypsok.fetch.errors.ExtractionError` (``media_type``,
``extraction_failed``, ``capacity`` when the queue for a worker outlasts the call's time, or,
when no worker can start, ``internal``); ``select_and_budget`` (and its
off-loop twin ``select_and_budget_async``) raises
:class:`~rypsok.fetch.errors.StartCharBeyondEnd`. Both have ``to_tool_failure()``.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Mapping, Sequence
from types import TracebackType

import anyio

from rypsok.config.limits import limit
from rypsok.contract.responses import FeedItem
from rypsok.contract.vocabulary import Reason
from rypsok.fetch.access import AccessSignals, classify_access
from rypsok.fetch.body import Body
from rypsok.fetch.errors import ExtractionError
from rypsok.fetch.memory import release_large_blocks
from rypsok.fetch.model import Extraction
from rypsok.fetch.pool import WorkerFailure, WorkerPool
from rypsok.fetch.protocol import WireFailure, WireResult, decode_reply
from rypsok.fetch.sandbox import (
    BWRAP,
    PROCESS,
    WORKER_ENV,
    SandboxMode,
    WorkerLimits,
    bwrap_command,
    bwrap_path,
    wants_bwrap,
    worker_command,
)
from rypsok.fetch.sections import Section

_log = logging.getLogger(__name__)

DEFAULT_WORKERS = limit("LIM-C5")
DEFAULT_TIMEOUT_S = 8.0
DEFAULT_MEMORY_BYTES = 1024 * 1024 * 1024
_START_TIMEOUT_S = 30.0
_OFF_LOOP_BYTES = 64 * 1024
_MIN_RETRY_MS = 1000


class Extractor:
    """Owns the worker pool; see the module docstring.

    ``workers`` bounds extraction jobs at once (LIM-C5); ``sandbox`` is ``[fetch] sandbox``;
    ``timeout_s`` bounds one job's wall-clock time (a call may pass a shorter one);
    ``memory_bytes`` is each worker's address-space limit. ``program`` replaces the worker
    program; the limit arguments are appended to it (tests start workers with a hostile job
    handler this way, see :func:`rypsok.fetch.worker.main`). ``parse_limiter`` is the process's
    limiter of LIM-C5 parsing tasks when web_search's parses share it (REQ-SEC-012); it must
    have ``workers`` tokens.
    """

    def __init__(
        self,
        workers: int = DEFAULT_WORKERS,
        sandbox: SandboxMode = "auto",
        timeout_s: float = DEFAULT_TIMEOUT_S,
        memory_bytes: int = DEFAULT_MEMORY_BYTES,
        *,
        program: Sequence[str] | None = None,
        parse_limiter: anyio.CapacityLimiter | None = None,
    ) -> None:
        if timeout_s <= 0:
            raise ValueError("timeout_s must be positive")
        # Bodies of several MiB must leave this process's memory when freed (REQ-PERF-003).
        release_large_blocks()
        cpu_seconds = max(int(timeout_s) + 1, 2)
        limits = WorkerLimits(
            memory_bytes=memory_bytes,
            cpu_seconds=cpu_seconds,
            cpu_lifetime=max(cpu_seconds * 20, 120),
        )
        inner = worker_command(limits, program) if program is not None else worker_command(limits)
        self._timeout_s = timeout_s
        self._bwrap = wants_bwrap(sandbox)
        bwrap = bwrap_path()
        primary = bwrap_command(bwrap, inner) if self._bwrap and bwrap else inner
        self._pool = WorkerPool(
            size=workers,
            command=lambda: primary,
            env=WORKER_ENV,
            start_timeout_s=_START_TIMEOUT_S,
            # "auto" tries bubblewrap and falls back for good when it cannot start a worker;
            # "bwrap" never falls back.
            fallback=(lambda: inner) if self._bwrap and sandbox == "auto" else None,
            limiter=parse_limiter,
        )

    @property
    def pool(self) -> WorkerPool:
        """The worker pool (for statistics and tests)."""
        return self._pool

    def containment(self) -> str:
        """The containment in force: ``process+rlimits`` or ``process+rlimits+bwrap``."""
        return BWRAP if self._bwrap and not self._pool.fell_back else PROCESS

    async def start(self) -> None:
        """Start the workers now rather than at the first calls."""
        try:
            await self._pool.start()
        except WorkerFailure:
            raise ExtractionError(Reason.INTERNAL) from None

    async def extract(
        self,
        body: bytes | Body,
        content_type: str | None,
        url: str,
        *,
        status: int = 200,
        headers: Mapping[str, str] | None = None,
        redirected: bool = False,
        timeout_s: float | None = None,
    ) -> Extraction:
        """Extract ``body`` (decoded from its transfer encoding, at most LIM-F3 bytes).

        A :class:`~rypsok.fetch.body.Body` is released as soon as a worker has read it.

        ``content_type`` is the response's header value (``None`` when missing), ``url`` the
        URL fetched (links are resolved against it), ``status`` and ``headers`` the response's
        status and headers and ``redirected`` whether a redirect was followed (all three for
        access classification only). ``timeout_s`` is what is left of the call: the job's
        timeout is shortened to it, and a job that cannot get a worker in time because of the
        work queued ahead of it ends at once with ``unavailable``/``capacity`` and
        ``retry_after_ms`` instead of waiting out the call. Raises :class:`ExtractionError`.
        """
        job = json.dumps({"content_type": content_type, "url": url}).encode("utf-8")
        timeout = min(timeout_s, self._timeout_s) if timeout_s is not None else self._timeout_s
        try:
            payload = await self._pool.run(
                job, body, timeout_s=max(timeout, 0.001), budget_s=timeout_s
            )
        except WorkerFailure as failure:
            _log.info("extraction worker failure: %s", failure.cause)
            if failure.cause in ("start_failed", "closed"):
                raise ExtractionError(Reason.INTERNAL) from None
            if failure.cause == "deadline":
                # The call's time ran out while its page was being read: not the page's fault.
                raise ExtractionError(Reason.TIMEOUT) from None
            if failure.cause == "capacity":
                wait = failure.retry_after_s or 0.0
                raise ExtractionError(
                    Reason.CAPACITY, retry_after_ms=max(_MIN_RETRY_MS, math.ceil(wait * 1000))
                ) from None
            raise ExtractionError(Reason.EXTRACTION_FAILED) from None
        try:
            if len(payload) > _OFF_LOOP_BYTES:
                reply = await anyio.to_thread.run_sync(decode_reply, payload)
            else:
                reply = decode_reply(payload)
        except ValueError:
            _log.warning("extraction worker sent a malformed reply")
            raise ExtractionError(Reason.EXTRACTION_FAILED) from None
        finally:
            del payload  # the reply's bytes go before its objects are used (REQ-PERF-003)
        if isinstance(reply, WireFailure):
            if reply.reason == "media_type":
                raise ExtractionError(Reason.MEDIA_TYPE, media_type=reply.media_type)
            if reply.reason == "javascript_required":
                raise ExtractionError(Reason.JAVASCRIPT_REQUIRED)
            raise ExtractionError(Reason.EXTRACTION_FAILED)
        return _extraction(
            reply, status=status, headers=headers or {}, url=url, redirected=redirected
        )

    async def aclose(self) -> None:
        """Stop every worker."""
        await self._pool.aclose()

    async def __aenter__(self) -> Extractor:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()


def _extraction(
    reply: WireResult, *, status: int, headers: Mapping[str, str], url: str, redirected: bool
) -> Extraction:
    total = len(reply.content)
    sections = tuple(
        Section(
            heading=s.heading,
            level=s.level,
            start_char=s.start_char,
            body_start=s.body_start,
            end_char=s.end_char,
            anchors=tuple(s.anchors),
            slug=s.slug,
            toc=s.toc,
        )
        for s in reply.sections
        # A section must lie inside the content; a worker that says otherwise is ignored there.
        if s.start_char <= s.body_start <= s.end_char <= total
    )
    signals = (
        AccessSignals(
            password_control=reply.signals.password_control,
            identity_form=reply.signals.identity_form,
            form_in_main=reply.signals.form_in_main,
            usable_content=reply.signals.usable_content,
        )
        if reply.signals is not None
        else None
    )
    if signals is None and reply.content.strip():
        # Text, Markdown and feeds have no DOM: non-empty content is usable content.
        signals = AccessSignals(usable_content=True)
    verdict = classify_access(
        status=status, headers=headers, url=url, redirected=redirected, signals=signals
    )
    items = (
        tuple(
            FeedItem(title=i.title, link=i.link, summary=i.summary, date=i.date)
            for i in reply.items
        )
        if reply.items is not None
        else None
    )
    return Extraction(
        media_type=reply.media_type,
        kind=reply.kind,
        title=reply.title,
        content=reply.content,
        sections=sections,
        heading_ids=tuple((key, tuple(ids)) for key, ids in reply.heading_ids),
        items=items,
        feed_items_total=reply.items_total,
        sha256=reply.sha256,
        charset=reply.charset,
        partial=reply.partial,
        charset_replaced=reply.charset_replaced,
        title_truncated=reply.title_truncated,
        access=verdict,
        method=reply.method,
        javascript_may_be_required=reply.javascript_may_be_required,
    )
