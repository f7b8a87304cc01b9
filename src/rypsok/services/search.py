"""The web_search service: privacy check, then the search pipeline under the hard ceiling."""

from __future__ import annotations

import dataclasses

import anyio

from rypsok.config.schema import Settings
from rypsok.contract.arguments import SearchArguments
from rypsok.contract.context import CallContext
from rypsok.contract.errors import ToolFailure
from rypsok.contract.responses import SearchResponse
from rypsok.contract.vocabulary import ErrorKind, Reason
from rypsok.fetch.strict import ReturnedURLs
from rypsok.search.pipeline import SearchPipeline
from rypsok.services.privacy_gate import check_credentials


class SearchService:
    """web_search as a plain async function over the core."""

    def __init__(
        self, settings: Settings, pipeline: SearchPipeline, returned: ReturnedURLs | None = None
    ) -> None:
        self._mode = settings.privacy.credential_check
        self._ceiling_s = settings.search.ceiling_ms / 1000
        self._pipeline = pipeline
        # Strict fetch mode needs to know what was returned (REQ-SEC-021); otherwise nothing
        # of a call outlives it (REQ-PRIV-003).
        self._returned = returned if settings.fetch.strict else None

    async def __call__(self, args: SearchArguments, context: CallContext) -> SearchResponse:
        """Answer one validated web_search call (REQ-SEARCH-006: checks before any request)."""
        query, notices = check_credentials(args.query, parameter="query", mode=self._mode)
        if query != args.query:
            args = dataclasses.replace(args, query=query)
        with anyio.move_on_after(self._ceiling_s) as scope:
            response = await self._pipeline.search(args, context)
        if scope.cancelled_caught:
            raise ToolFailure(
                ErrorKind.UNAVAILABLE,
                Reason.TIMEOUT,
                "The search exceeded its time ceiling; retry later.",
            )
        if notices:
            response = response.model_copy(update={"notices": [*notices, *response.notices]})
        if self._returned is not None:
            self._returned.record(r.url for r in response.results)
        return response
