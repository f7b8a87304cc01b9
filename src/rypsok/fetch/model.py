"""The result of extraction, before selection and budget (:class:`Extraction`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from rypsok.contract.notices import Notice, notice
from rypsok.contract.responses import FeedItem
from rypsok.contract.vocabulary import NoticeCode
from rypsok.fetch.access import AccessVerdict
from rypsok.fetch.media import MediaKind
from rypsok.fetch.sections import Section, index_sections


@dataclass(frozen=True, slots=True)
class Extraction:
    """Everything extracted from one body; external data except where noted.

    ``content`` is the whole Markdown (or plain text) and ``sections`` its index; offsets count
    Unicode scalar values (LIM-U1). ``items`` is ``None`` unless the body was a feed, and
    ``feed_items_total`` counts the feed's items before the MAX_ITEMS bound. ``sha256`` is the
    digest of the decoded body (:mod:`rypsok.fetch.pipeline`). ``partial`` means a parsing
    bound cut the document (notice ``extraction_partial``); ``charset_replaced`` that
    undecodable bytes were replaced. ``access`` is rypsok's verdict (not external data);
    ``method`` says which extractor produced the content (for logs and measurement).
    ``javascript_may_be_required``: an HTML page with little visible text that runs scripts
    (notice ``javascript_may_be_required``).
    """

    media_type: str
    kind: MediaKind
    title: str | None
    content: str
    sections: tuple[Section, ...]
    heading_ids: tuple[tuple[str, tuple[str, ...]], ...]
    items: tuple[FeedItem, ...] | None
    feed_items_total: int
    sha256: str
    charset: str
    partial: bool
    charset_replaced: bool
    title_truncated: bool
    access: AccessVerdict
    method: str
    javascript_may_be_required: bool = False

    @property
    def total_chars(self) -> int:
        """Length of the content in Unicode scalar values."""
        return len(self.content)

    def notices(self) -> list[Notice]:
        """The notices extraction itself raises (selection and budget add theirs)."""
        found: list[Notice] = []
        if self.partial:
            found.append(notice(NoticeCode.EXTRACTION_PARTIAL))
        if self.charset_replaced:
            found.append(notice(NoticeCode.CHARSET_REPLACED))
        if self.javascript_may_be_required:
            found.append(notice(NoticeCode.JAVASCRIPT_MAY_BE_REQUIRED))
        if self.title_truncated:
            found.append(notice(NoticeCode.TITLE_TRUNCATED, count=1))
        return found

    def map_text(self, clean: Callable[[str], str]) -> Extraction:
        """The same extraction with ``clean`` applied to every external text, re-indexed.

        For the content boundary (invisible characters, REQ-SEC-015), which runs after
        extraction and before the budget (REQ-PAGE-001). Linear in the content: call it off the
        event loop for large pages.
        """
        content = clean(self.content)
        if content == self.content:
            sections = self.sections  # nothing moved: the worker's index still holds
        else:
            sections = (
                index_sections(content, self.heading_ids) if self.kind is not MediaKind.TEXT else ()
            )
        items = None
        if self.items is not None:
            items = tuple(
                FeedItem(title=clean(i.title), link=i.link, summary=clean(i.summary), date=i.date)
                for i in self.items
            )
        title = clean(self.title) if self.title is not None else None
        return replace(self, content=content, sections=sections, items=items, title=title)
