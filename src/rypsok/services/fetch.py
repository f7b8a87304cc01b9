"""The web_fetch service: privacy check, retrieval, contained extraction, focus and budget.

The whole call is bounded by LIM-F5 (REQ-PAGE-008): retrieval by its own deadline inside it,
extraction by what remains. Stages follow REQ-PAGE-001; the stages after the bytes arrived live
in :mod:`rypsok.fetch`.
"""

from __future__ import annotations

import time

import anyio

from rypsok.boundary import clean_content
from rypsok.config.schema import Settings
from rypsok.contract.arguments import FetchArguments
from rypsok.contract.context import CallContext
from rypsok.contract.errors import ToolFailure
from rypsok.contract.notices import Notice, notice
from rypsok.contract.responses import FetchResponse
from rypsok.contract.vocabulary import ErrorKind, NoticeCode, Reason
from rypsok.fetch import (
    ExtractionError,
    Extractor,
    StartCharBeyondEnd,
    fetch_response,
    select_and_budget_async,
)
from rypsok.fetch.model import Extraction
from rypsok.fetch.retrieve import Retriever
from rypsok.services.privacy_gate import check_credentials

# Contents above this many characters are cleaned in a worker thread, off the event loop.
_THREAD_CLEAN_CHARS = 100_000


async def _clean(extraction: Extraction) -> tuple[Extraction, list[Notice]]:
    """The content boundary on extracted text, before the budget (REQ-PAGE-001, REQ-SEC-015).

    Invisible and control characters are removed from every external text; instruction-like
    wording is reported, never rewritten (REQ-SEC-003).
    """
    removed = flagged = 0

    def clean(text: str) -> str:
        nonlocal removed, flagged
        cleaned = clean_content(text)
        removed += cleaned.invisible_removed
        flagged += cleaned.instruction_like
        return cleaned.text

    if len(extraction.content) > _THREAD_CLEAN_CHARS:
        extraction = await anyio.to_thread.run_sync(extraction.map_text, clean)
    else:
        extraction = extraction.map_text(clean)
    notices = []
    if removed:
        notices.append(notice(NoticeCode.INVISIBLE_CHARACTERS_REMOVED, count=removed))
    if flagged:
        notices.append(notice(NoticeCode.INSTRUCTION_LIKE_TEXT, count=flagged))
    return extraction, notices


class FetchService:
    """web_fetch as a plain async function over the core."""

    def __init__(self, settings: Settings, retriever: Retriever, extractor: Extractor) -> None:
        self._mode = settings.privacy.credential_check
        self._ceiling_s = settings.fetch.ceiling_ms / 1000
        self._retriever = retriever
        self._extractor = extractor

    async def __call__(self, args: FetchArguments, context: CallContext) -> FetchResponse:
        """Answer one validated web_fetch call."""
        started = time.monotonic()
        deadline = started + self._ceiling_s
        url, notices = check_credentials(args.url, parameter="url", mode=self._mode)
        with anyio.move_on_after(self._ceiling_s):
            retrieved = await self._retriever.retrieve(url, deadline=deadline)
            try:
                # The body is handed over: extraction releases it once a worker has it.
                extraction = await self._extractor.extract(
                    retrieved.body,
                    retrieved.headers.get("content-type"),
                    retrieved.url,
                    status=retrieved.status,
                    headers=retrieved.headers,
                    redirected=retrieved.redirected,
                    timeout_s=max(0.1, deadline - time.monotonic()),
                )
                extraction, boundary_notices = await _clean(extraction)
                view = await select_and_budget_async(
                    extraction,
                    fragment=retrieved.fragment,
                    focus=args.focus,
                    start_char=args.start_char or None,
                    max_chars=args.max_chars,
                )
            except ExtractionError as error:
                raise error.to_tool_failure() from None
            except StartCharBeyondEnd as error:
                raise error.to_tool_failure() from None
            return fetch_response(
                extraction,
                view,
                url=retrieved.url,
                notices=[*notices, *retrieved.notices, *boundary_notices],
            )
        # Only reached when the ceiling cancelled the block (the block returns otherwise).
        raise ToolFailure(
            ErrorKind.UNAVAILABLE,
            Reason.TIMEOUT,
            "The page could not be fetched and read within the time limit; retry later or "
            "use another URL.",
        )
