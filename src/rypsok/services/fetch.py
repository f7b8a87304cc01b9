"""The web_fetch service: privacy check, retrieval, contained extraction, focus and budget.

The whole call is bounded by LIM-F5 (REQ-PAGE-008): retrieval by its own deadline inside it,
extraction by what remains. Stages follow REQ-PAGE-001; the stages after the bytes arrived live
in :mod:`rypsok.fetch`.
"""

from __future__ import annotations

import time

import anyio

from rypsok.config.schema import Settings
from rypsok.contract.arguments import FetchArguments
from rypsok.contract.context import CallContext
from rypsok.contract.errors import ToolFailure
from rypsok.contract.responses import FetchResponse
from rypsok.contract.vocabulary import ErrorKind, Reason
from rypsok.fetch import (
    ExtractionError,
    Extractor,
    StartCharBeyondEnd,
    fetch_response,
    select_and_budget,
)
from rypsok.fetch.retrieve import Retriever
from rypsok.services.privacy_gate import check_credentials


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
            response = retrieved.response
            try:
                extraction = await self._extractor.extract(
                    response.body,
                    response.headers.get("content-type"),
                    response.url.url,
                    status=response.status,
                    headers=response.headers,
                    redirected=retrieved.redirected,
                    timeout_s=max(0.1, deadline - time.monotonic()),
                )
                view = select_and_budget(
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
                extraction, view, url=response.url.url, notices=[*notices, *retrieved.notices]
            )
        # Only reached when the ceiling cancelled the block (the block returns otherwise).
        raise ToolFailure(
            ErrorKind.UNAVAILABLE,
            Reason.TIMEOUT,
            "The page could not be fetched and read within the time limit; retry later or "
            "use another URL.",
        )
