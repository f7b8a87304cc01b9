"""The section index of extracted Markdown (ADR-0006, INV-4, INV-6).

:func:`index_sections` finds the ATX (``## Heading``) and setext headings outside fenced code,
gives each section its plain heading text, level, offsets (in Unicode scalar values, LIM-U1),
the HTML anchors collected before extraction (:func:`rypsok.fetch.clean.heading_ids`), a
GitHub-style slug, and whether it is a table of contents: a heading named like one, or a body
that is almost only a list of the document's other headings. At most :data:`MAX_SECTIONS`
sections are indexed; later headings stay in the content.
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])\s+(.*)$")
_IMAGE = re.compile(r"!\[([^\]]{0,500})\]\([^)]{0,2100}\)")
_LINK = re.compile(r"\[([^\]]{0,500})\]\([^)]{0,2100}\)")
_EMPHASIS = re.compile(r"\*\*|__|`|(?<!\w)[*_]|[*_](?!\w)")
_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|>~])")
_SLUG_DROP = re.compile(r"[^\w\- ]")

TOC_HEADINGS = frozenset(
    {
        "contents",
        "table of contents",
        "on this page",
        "in this article",
        "in this section",
        "page contents",
        "toc",
        "inhalt",
        "inhaltsverzeichnis",
        "auf dieser seite",
        "sommaire",
        "table des matières",
        "índice",
        "contenido",
        "contenidos",
        "indice",
        "sommario",
        "inhoud",
        "inhoudsopgave",
        "spis treści",
        "содержание",
        "目次",
        "目录",
        "目錄",
        "목차",
    }
)
HEADING_MAX_CHARS = 500  # a heading longer than this is cut in the index and the outline
MAX_SECTIONS = 10_000  # headings beyond are content, not sections: bounds index and outline
_TOC_MIN_ITEMS = 3
# First characters of a line that only prose can start with (see _headings): not a space,
# "#", "=", "-", "`", "~", a list marker, a digit, ">" or "|".
_PROSE_START = frozenset(string.ascii_letters + "\"'([{!?,.;:@$%&/\\^_")
_TOC_SHARE = 0.8


@dataclass(frozen=True, slots=True)
class Section:
    """One heading of the content and the text up to the next heading.

    ``start_char`` is where the heading line starts, ``body_start`` where its body starts and
    ``end_char`` where the next heading (of any level) starts, all offsets into the content.
    """

    heading: str
    level: int
    start_char: int
    body_start: int
    end_char: int
    anchors: tuple[str, ...]
    slug: str
    toc: bool


def heading_key(text: str) -> str:
    """The normalized identity of a heading: NFKC, case-folded, whitespace collapsed, bounded."""
    return " ".join(unicodedata.normalize("NFKC", text[:HEADING_MAX_CHARS]).casefold().split())


def slugify(text: str) -> str:
    """The GitHub-style anchor of a heading: lower case, punctuation dropped, spaces to '-'."""
    return _SLUG_DROP.sub("", text.strip().lower()).replace(" ", "-")


def plain_text(markdown: str) -> str:
    """Inline Markdown reduced to its text: links and images to their text, emphasis dropped."""
    text = _IMAGE.sub(r"\1", markdown)
    text = _LINK.sub(r"\1", text)
    text = _EMPHASIS.sub("", text)
    text = _ESCAPE.sub(r"\1", text)
    return " ".join(text.split())


@dataclass(frozen=True, slots=True)
class _Heading:
    text: str
    level: int
    start: int
    body_start: int


def _headings(markdown: str) -> list[_Heading]:
    found: list[_Heading] = []
    fence: str | None = None
    offset = 0
    previous: tuple[int, str] | None = None  # (offset, line) of a paragraph line
    for line in markdown.splitlines(keepends=True):
        stripped = line.rstrip("\r\n")
        start, offset = offset, offset + len(line)
        if fence is None and stripped[:1] in _PROSE_START:
            # Most lines are prose: no fence, heading, setext underline, list, quote or table
            # can start with a letter, so the patterns below need not be tried (same result).
            previous = (start, stripped) if previous is None else None
            continue
        fence_match = _FENCE.match(stripped)
        if fence is not None:
            if (
                fence_match
                and fence_match.group(1)[0] == fence[0]
                and len(fence_match.group(1)) >= len(fence)
            ):
                fence = None
            previous = None
            continue
        if fence_match:
            fence = fence_match.group(1)
            previous = None
            continue
        atx = _ATX.match(stripped)
        if atx:
            text = plain_text(atx.group(2) or "")[:HEADING_MAX_CHARS]
            if text:
                found.append(_Heading(text, len(atx.group(1)), start, offset))
                if len(found) > MAX_SECTIONS:
                    break
            previous = None
            continue
        setext = _SETEXT.match(stripped)
        if setext and previous is not None:
            text = plain_text(previous[1])[:HEADING_MAX_CHARS]
            if text:
                level = 1 if setext.group(1)[0] == "=" else 2
                found.append(_Heading(text, level, previous[0], offset))
                if len(found) > MAX_SECTIONS:
                    break
            previous = None
            continue
        is_paragraph = (
            bool(stripped.strip())
            and not _LIST_ITEM.match(stripped)
            and not (stripped.lstrip().startswith((">", "|")))
        )
        previous = (start, stripped) if is_paragraph and previous is None else None
    return found


def _is_toc(key: str, body: str, heading_keys: set[str]) -> bool:
    if key in TOC_HEADINGS:
        return True
    lines = [line for line in body.splitlines() if line.strip()]
    listed = [line for line in lines if _LIST_ITEM.match(line)]
    if len(listed) < _TOC_MIN_ITEMS or len(listed) < _TOC_SHARE * len(lines):
        # Only list items can name other headings: too few of them decides without reading
        # any (the heading keys of list items are the costly part).
        return False
    items = sum(1 for line in listed if _is_toc_line(line, heading_keys, own=key))
    return items >= _TOC_MIN_ITEMS and items >= _TOC_SHARE * len(lines)


def _is_toc_line(line: str, heading_keys: set[str], own: str | None = None) -> bool:
    """A list item whose text is another heading of the document: a table-of-contents entry."""
    item = _LIST_ITEM.match(line)
    if item is None:
        return False
    key = heading_key(plain_text(item.group(1)))
    return key in heading_keys and key != own


def toc_lines_removed(body: str, heading_keys: set[str]) -> str:
    """``body`` without its table-of-contents entries (they must not count as evidence)."""
    return "\n".join(line for line in body.splitlines() if not _is_toc_line(line, heading_keys))


def index_sections(
    markdown: str, heading_ids: Sequence[tuple[str, Sequence[str]]] = ()
) -> tuple[Section, ...]:
    """Index ``markdown`` into sections; ``heading_ids`` maps heading keys to HTML anchors."""
    headings = _headings(markdown)
    # Each heading takes the first unused anchors collected for the same heading text.
    unused: dict[str, deque[tuple[str, ...]]] = {}
    for key, ids in heading_ids:
        unused.setdefault(key, deque()).append(tuple(ids))
    keys = {heading_key(h.text) for h in headings}
    sections: list[Section] = []
    for i, h in enumerate(headings[:MAX_SECTIONS]):
        end = headings[i + 1].start if i + 1 < len(headings) else len(markdown)
        key = heading_key(h.text)
        waiting = unused.get(key)
        anchors: tuple[str, ...] = waiting.popleft() if waiting else ()
        body = markdown[h.body_start : end]
        sections.append(
            Section(
                heading=h.text,
                level=h.level,
                start_char=h.start,
                body_start=h.body_start,
                end_char=end,
                anchors=anchors,
                slug=slugify(h.text),
                toc=_is_toc(key, body, keys),
            )
        )
    return tuple(sections)
