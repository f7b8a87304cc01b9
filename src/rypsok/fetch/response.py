"""Assembling the web_fetch response from an extraction and its view."""

from __future__ import annotations

from collections.abc import Sequence

from rypsok.contract.notices import Notice
from rypsok.contract.responses import FetchResponse
from rypsok.contract.vocabulary import Outcome
from rypsok.fetch.budget import PageView
from rypsok.fetch.model import Extraction


def fetch_response(
    extraction: Extraction, view: PageView, *, url: str, notices: Sequence[Notice] = ()
) -> FetchResponse:
    """The FetchResponse of one call; ``notices`` are the service's own (redirects, https).

    The outcome is ``partial`` when a parsing bound cut the document (notice
    ``extraction_partial``), ``ok`` otherwise; a response cut to ``max_chars`` is still ``ok``
    with ``truncated`` set, because the caller can read on with ``next_start_char``.
    """
    return FetchResponse(
        outcome=Outcome.PARTIAL if extraction.partial else Outcome.OK,
        notices=[*notices, *view.notices],
        url=url,
        media_type=extraction.media_type,
        access=extraction.access.access,
        title=extraction.title,
        content=view.content,
        outline=list(view.outline),
        start_char=view.start_char,
        next_start_char=view.next_start_char,
        truncated=view.truncated,
        total_chars=view.total_chars,
        sha256=extraction.sha256,
        items=list(view.items) if view.items is not None else None,
    )
