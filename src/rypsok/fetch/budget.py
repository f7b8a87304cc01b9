"""Selection and projection-first budget (ADR-0006/0007; REQ-FETCH-003/005, REQ-CTX-007).

:func:`select_and_budget` turns an :class:`~rypsok.fetch.model.Extraction` into the part of it
a response carries (:class:`PageView`):

* it starts at the section the fragment or focus selects (:mod:`rypsok.fetch.focus`) unless
  the caller gave ``start_char``;
* ``max_chars`` bounds every external character that is serialized: the content, the outline's
  headings and the feed items' texts (title, link, summary, date), counted in Unicode scalar
  values (LIM-U1). The title is bounded separately (LIM-S9) and not counted;
* the content has priority; the outline gets what the content leaves, but at least a fifth of
  the budget when it needs it, filled by level (top-level headings first) and returned in
  document order;
* when it fits, the selected heading and its first paragraph, list, table or code block are
  kept whole, shrinking the outline if needed (INV-8);
* the content is cut at a paragraph boundary when one lies in the last quarter of the window,
  else at a line boundary, else between words, else between characters (never before a
  combining mark or inside CRLF); a window cut at a line boundary never ends on a heading,
  which opens the next part instead;
* ``truncated`` is true when anything external was left out for the budget (content, outline
  entries, feed items); ``next_start_char`` is where the next call continues the content, or
  ``None`` when the content is complete.

A ``start_char`` at or beyond the end (other than 0 of an empty content) raises
:class:`~rypsok.fetch.errors.StartCharBeyondEnd`. Feed items are returned with the first page
of a feed (``start_char`` 0) only. Pure and linear in the content.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

import anyio

from rypsok.contract.notices import Notice, notice
from rypsok.contract.responses import FeedItem, OutlineEntry
from rypsok.contract.vocabulary import NoticeCode
from rypsok.fetch.errors import StartCharBeyondEnd
from rypsok.fetch.focus import choose
from rypsok.fetch.model import Extraction
from rypsok.fetch.sections import Section

OFF_LOOP_CHARS = 100_000  # select_and_budget_async runs larger contents in a thread
OUTLINE_SHARE = 5  # the outline may claim up to 1/OUTLINE_SHARE of the budget
_NEAR = 4  # a boundary is "near" within the last 1/_NEAR of the window
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r"^ {0,3}#{1,6}(?:\s|$)")
_LIST_OR_TABLE = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])\s|^\s*\|")


@dataclass(frozen=True, slots=True)
class PageView:
    """The part of an extraction a response carries; fields as in FetchResponse."""

    content: str
    outline: tuple[OutlineEntry, ...]
    start_char: int
    next_start_char: int | None
    truncated: bool
    total_chars: int
    items: tuple[FeedItem, ...] | None
    notices: tuple[Notice, ...]
    section: Section | None

    def external_chars(self) -> int:
        """The external characters this view serializes, as ``max_chars`` counts them."""
        return (
            len(self.content)
            + sum(len(e.heading) for e in self.outline)
            + sum(item_chars(i) for i in self.items or ())
        )


def item_chars(item: FeedItem) -> int:
    """The external characters of one feed item."""
    return len(item.title) + len(item.summary) + len(item.link or "") + len(item.date or "")


def answer_unit_end(content: str, section: Section) -> int:
    """Where the selected heading's first block (paragraph, list, table, code) ends."""
    lines = content[section.body_start : section.end_char].splitlines(keepends=True)
    position = section.body_start
    index = 0
    while index < len(lines) and (not lines[index].strip() or _HEADING.match(lines[index])):
        position += len(lines[index])
        index += 1
    if index == len(lines):
        return section.body_start if section.body_start <= len(content) else len(content)
    first = lines[index]
    fence = _FENCE.match(first)
    if fence:
        marker = fence.group(1)
        position += len(first)
        for line in lines[index + 1 :]:
            position += len(line)
            if line.strip().startswith(marker[0] * len(marker)):
                break
        return position
    block_kind = bool(_LIST_OR_TABLE.match(first))
    for line in lines[index:]:
        if not line.strip():
            break
        if block_kind and not (_LIST_OR_TABLE.match(line) or line.startswith((" ", "\t"))):
            break
        position += len(line)
    return position


def _last(content: str, needle: str, low: int, high: int) -> int:
    return content.rfind(needle, low, high)


def _before_trailing_headings(content: str, cut: int, floor: int) -> int:
    """Move a line-boundary ``cut`` back before the headings that would end the window.

    A part that ends on a heading shows a title without its text; the heading opens the next
    part instead. The cut stays at or above ``floor`` and never leaves an empty window.
    """
    while True:
        end = cut
        while end > floor and content[end - 1] in "\r\n":
            end -= 1
        line_start = content.rfind("\n", floor, end) + 1
        if line_start <= floor or not _HEADING.match(content[line_start:end]):
            return cut
        cut = line_start


def cut_position(content: str, start: int, limit: int, keep_until: int | None) -> int:
    """Where to end a window ``[start, limit)`` of ``content`` (see the module docstring)."""
    if limit >= len(content):
        return len(content)
    floor = start + 1
    if keep_until is not None and start < keep_until <= limit:
        floor = keep_until
    near = max(floor, limit - max((limit - start) // _NEAR, 1))
    paragraph = _last(content, "\n\n", near - 1, limit)
    if paragraph >= 0 and paragraph + 2 <= limit and paragraph + 2 >= floor:
        return _before_trailing_headings(content, paragraph + 2, floor)
    line = _last(content, "\n", near - 1, limit)
    if line >= 0 and line + 1 >= floor:
        return _before_trailing_headings(content, line + 1, floor)
    space = _last(content, " ", near - 1, limit)
    if space >= 0 and space + 1 >= floor:
        return space + 1
    cut = limit
    while cut > floor and (
        unicodedata.category(content[cut])[0] == "M"
        or content[cut] in "\u200c\u200d\ufe0f"
        or (content[cut] == "\n" and content[cut - 1] == "\r")
    ):
        cut -= 1
    return cut


def _outline(sections: Sequence[Section], budget: int) -> tuple[list[OutlineEntry], bool]:
    order = sorted(range(len(sections)), key=lambda i: (sections[i].level, i))
    chosen: set[int] = set()
    used = 0
    for i in order:
        cost = len(sections[i].heading)
        if used + cost <= budget:
            chosen.add(i)
            used += cost
    entries = [
        OutlineEntry(heading=s.heading, level=s.level, start_char=s.start_char)
        for i, s in enumerate(sections)
        if i in chosen
    ]
    return entries, len(chosen) < len(sections)


def _items(items: Sequence[FeedItem], budget: int) -> tuple[list[FeedItem], bool]:
    kept: list[FeedItem] = []
    left = budget
    for item in items:
        cost = item_chars(item)
        if cost <= left:
            kept.append(item)
            left -= cost
            continue
        fixed = cost - len(item.summary)
        if not kept and fixed <= left:
            # The first item always shows when its fixed fields fit, its summary cut.
            kept.append(item.model_copy(update={"summary": item.summary[: left - fixed]}))
        return kept, True
    return kept, False


def select_and_budget(
    extraction: Extraction,
    *,
    fragment: str | None = None,
    focus: str | None = None,
    start_char: int | None = None,
    max_chars: int,
) -> PageView:
    """Select the starting section and fit the response into ``max_chars``.

    ``start_char`` is ``None`` when the caller did not give one; then the response starts at
    the selected section, or at 0. Raises :class:`StartCharBeyondEnd`.
    """
    if max_chars < 1:
        raise ValueError("max_chars must be positive")
    content = extraction.content
    total = len(content)
    choice = choose(content, extraction.sections, fragment=fragment, focus=focus)
    section = choice.section
    if start_char is not None:
        start = start_char
    else:
        start = section.start_char if section is not None else 0
    if start < 0:
        raise ValueError("start_char must not be negative")
    if start > 0 and start >= total:
        raise StartCharBeyondEnd(total)
    notices = extraction.notices()
    if choice.not_found:
        notices.append(notice(NoticeCode.FOCUS_NOT_FOUND))

    remaining = total - start
    outline_cost = sum(len(s.heading) for s in extraction.sections)
    items_all = extraction.items if start == 0 else None
    items_cost = sum(item_chars(i) for i in items_all or ())

    if remaining + outline_cost + items_cost <= max_chars:
        outline = [
            OutlineEntry(heading=s.heading, level=s.level, start_char=s.start_char)
            for s in extraction.sections
        ]
        return _view(
            extraction,
            content[start:],
            outline,
            start,
            None,
            False,
            items_all,
            notices,
            section,
        )

    keep_until = None
    # The section the response starts at: the selected one, or the one a caller jumped to.
    opening = next((s for s in extraction.sections if s.start_char == start), None)
    if opening is not None:
        end = answer_unit_end(content, opening)
        if end - start <= max_chars:
            keep_until = end
    outline_budget = max(max_chars - remaining, min(outline_cost, max_chars // OUTLINE_SHARE))
    if keep_until is not None:
        outline_budget = min(outline_budget, max_chars - (keep_until - start))
    outline, outline_cut = _outline(extraction.sections, max(outline_budget, 0))
    content_budget = max_chars - sum(len(e.heading) for e in outline)
    cut = cut_position(content, start, start + content_budget, keep_until)
    shown = content[start:cut]

    items: list[FeedItem] | None = None
    items_cut = False
    if items_all is not None:
        items, items_cut = _items(
            items_all, max_chars - len(shown) - sum(len(e.heading) for e in outline)
        )
    next_start = cut if cut < total else None
    return _view(
        extraction,
        shown,
        outline,
        start,
        next_start,
        next_start is not None or outline_cut or items_cut,
        items,
        notices,
        section,
    )


async def select_and_budget_async(
    extraction: Extraction,
    *,
    fragment: str | None = None,
    focus: str | None = None,
    start_char: int | None = None,
    max_chars: int,
) -> PageView:
    """:func:`select_and_budget` off the event loop when the content is large.

    Selection is linear in the content (focus reads up to NEARBY_CHARS per section); for the
    biggest pages that is tenths of a second, which must not stall the loop (REQ-PAGE-008).
    """
    call = functools.partial(
        select_and_budget,
        extraction,
        fragment=fragment,
        focus=focus,
        start_char=start_char,
        max_chars=max_chars,
    )
    if len(extraction.content) <= OFF_LOOP_CHARS:
        return call()
    return await anyio.to_thread.run_sync(call)


def _view(
    extraction: Extraction,
    shown: str,
    outline: list[OutlineEntry],
    start: int,
    next_start: int | None,
    truncated: bool,
    items: Sequence[FeedItem] | None,
    notices: list[Notice],
    section: Section | None,
) -> PageView:
    if items is not None and len(items) < extraction.feed_items_total:
        notices.append(notice(NoticeCode.FEED_ITEMS_LIMITED, count=len(items)))
    return PageView(
        content=shown,
        outline=tuple(outline),
        start_char=start,
        next_start_char=next_start,
        truncated=truncated,
        total_chars=len(extraction.content),
        items=tuple(items) if items is not None else None,
        notices=tuple(notices),
        section=section,
    )
