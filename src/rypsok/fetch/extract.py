"""Main content and title of a cleaned HTML tree (REQ-FETCH-002/004, REQ-PAGE-002).

:func:`main_markdown` asks trafilatura for the main content as Markdown with links, tables and
inline formatting (:mod:`rypsok.fetch.trafilatura_markdown`, with the settings chosen by
measurement and the fixes of what trafilatura gets wrong; ``docs/extraction.md``). When
trafilatura finds nothing, or the tree is too big for it (its time grows faster than linearly),
a readability-like fallback picks the element that holds the most
paragraph text (``main``, ``article`` or the best-scoring block) and renders it with
:mod:`rypsok.fetch.markdown`; when even that is empty, the whole cleaned body is rendered. The
fallback also replaces a result of trafilatura's that holds far less text, but only where it
found several similar blocks (forum posts, FAQ entries), of which trafilatura keeps the first,
or where trafilatura's result lost most headings and the fallback holds about the same text
with them (trafilatura gathers a page's paragraphs without their headings when it finds no main
block). Where the fallback does not, trafilatura reads the body once more as its main block,
and that result is taken when it holds the same text with the headings.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from lxml import etree

from rypsok.fetch.edges import with_lede, without_dangling_end
from rypsok.fetch.markdown import to_markdown
from rypsok.fetch.parse import single_spaced, text_of
from rypsok.fetch.readability import MainChoice, main_choice
from rypsok.fetch.trafilatura_markdown import trafilatura_markdown

Method = Literal["trafilatura", "fallback", "body"]

TITLE_MAX_CHARS = 200  # LIM-S9
# trafilatura's time grows faster than linearly with the tree (measured: 3.7k elements 0.3 s,
# 14k 2-4 s, 36k 12-38 s); bigger trees go to the linear fallback. docs/extraction.md.
TRAFILATURA_MAX_ELEMENTS = 8000
# trafilatura's result is kept unless the fallback holds this many times more text.
TRAFILATURA_MIN_SHARE = 0.5
_MIN_MAIN_CHARS = 40
_MARKDOWN_HEADING = re.compile(r"^#{1,6} ", re.MULTILINE)
_SUBHEADINGS = etree.XPath("count(//h2 | //h3 | //h4 | //h5 | //h6)")
# A result of trafilatura's that lost its headings gives way to a fallback with at least this
# many headings, more than twice as many, and at most this much more text: more text than that
# is other blocks, with their headings (measured on both public sets, docs/extraction.md).
_STRUCTURE_HEADINGS = 2
_SAME_TEXT_SHARE = 1.15
_NON_WORD = re.compile(r"\W+")
# The ASCII characters that are not "\w": deleting them from UTF-8 bytes is one C-speed pass
# and leaves multi-byte sequences (all bytes >= 0x80) intact.
_ASCII_NON_WORD = bytes(c for c in range(128) if not (chr(c).isalnum() or chr(c) == "_"))
_WORD_SLICE = 256 * 1024
_HREFS = etree.XPath(".//a/@href", smart_strings=False)
_LIST_ITEMS = etree.XPath("count(.//li)")


@dataclass(frozen=True, slots=True)
class MainContent:
    """The Markdown of the main content and how it was found."""

    markdown: str
    method: Method


def _word_chars(markdown: str) -> int:
    """Letters and digits of a Markdown text: a cheap, markup-blind measure of its content.

    The number of ``\\w`` characters. A regular expression over the whole text costs a match
    per run of spaces and punctuation (a tenth of a 200 KB job); the ASCII ones go first, in C.
    The count adds up over pieces, so a big text is counted in slices that are copied one at a
    time (a whole copy would sit beside the tree at the worker's high-water mark).
    """
    count = 0
    for start in range(0, len(markdown), _WORD_SLICE):
        piece = markdown[start : start + _WORD_SLICE]
        kept = piece.encode("utf-8", "surrogatepass").translate(None, _ASCII_NON_WORD)
        if piece.isascii():
            count += len(kept)
        else:
            count += len(_NON_WORD.sub("", kept.decode("utf-8", "surrogatepass")))
    return count


def page_title(root: etree._Element) -> str | None:
    """The page's title: ``<title>``, else ``og:title``, else the first ``<h1>``."""
    candidates: list[str] = []
    title = root.find(".//title")
    if title is not None:
        candidates.append(text_of(title))
    for meta in root.iter("meta"):
        if (meta.get("property") or meta.get("name") or "").strip().lower() == "og:title":
            candidates.append(meta.get("content") or "")
            break
    h1 = next(root.iter("h1"), None)
    if h1 is not None:
        candidates.append(text_of(h1))
    for candidate in candidates:
        text = single_spaced(candidate)
        if text:
            return text
    return None


def bound_title(title: str | None) -> tuple[str | None, bool]:
    """Bound a title to LIM-S9 at a word boundary when one is near; report whether it was cut."""
    if title is None or len(title) <= TITLE_MAX_CHARS:
        return title, False
    cut = title[:TITLE_MAX_CHARS]
    space = cut.rfind(" ")
    if space >= TITLE_MAX_CHARS * 3 // 4:
        cut = cut[:space]
    return cut.rstrip(), True


def _fallback_ceiling(root: etree._Element) -> int | None:
    """An upper bound of ``_word_chars(fallback_markdown(root))``, or None when none is cheap.

    The fallback renders each text node of the elements it picks once, the target of each link,
    and the numbers of ordered lists; its other markup has no letters or digits. Only nested
    tables render text twice (a cell's text and the rows of the table inside it).
    """
    if root.find(".//table//table") is not None:
        return None
    items = int(_LIST_ITEMS(root))
    return _word_chars(text_of(root)) + _word_chars("".join(_HREFS(root))) + items * len(str(items))


def fallback_markdown(root: etree._Element, choice: MainChoice | None = None) -> str:
    """The readability-like choice of :mod:`rypsok.fetch.readability`, as Markdown."""
    elements = (choice or main_choice(root)).elements
    return "\n\n".join(md for md in (to_markdown(el) for el in elements) if md)


def _headings_lost(kept: int, there: float) -> bool:
    """Whether a result that kept ``kept`` headings lost most of the ``there`` it could have:
    at least ``_STRUCTURE_HEADINGS`` of them, and more than twice what it kept."""
    return there >= _STRUCTURE_HEADINGS and there > 2 * kept


def main_markdown(root: etree._Element, title: str | None = None) -> MainContent:
    """The main content of the cleaned tree as Markdown (see the module docstring), its ends
    checked against the page (:mod:`rypsok.fetch.edges`; the standfirst needs the page's
    ``title``)."""
    main = _main_markdown(root)
    if main.method == "body":
        return main
    markdown = main.markdown
    if main.method == "trafilatura":
        markdown = with_lede(markdown, root, title)
    return MainContent(without_dangling_end(markdown, root), main.method)


def _trafilatura(root: etree._Element, *, framed: bool = False) -> str:
    try:
        return trafilatura_markdown(root, framed=framed)
    except (RecursionError, ValueError, TypeError, AttributeError, IndexError, KeyError):
        # A page that makes the extractor fail falls back to rypsok's own rendering.
        return ""


def _same_text_with_headings(found_chars: int, found_headings: int, other: str) -> bool:
    """Whether ``other`` holds about the text of a headless result, with its headings."""
    return _headings_lost(found_headings, len(_MARKDOWN_HEADING.findall(other))) and (
        found_chars <= _word_chars(other) <= _SAME_TEXT_SHARE * found_chars
    )


def _main_markdown(root: etree._Element) -> MainContent:
    found = ""
    if int(root.xpath("count(//*)")) <= TRAFILATURA_MAX_ELEMENTS:
        found = _trafilatura(root)
    found_chars = _word_chars(found)
    # trafilatura drops headings when it finds no main block and gathers the page's paragraphs
    # one by one instead; the fallback may hold the same text with its headings.
    found_headings = len(_MARKDOWN_HEADING.findall(found)) if found_chars >= _MIN_MAIN_CHARS else 0
    headless = found_chars >= _MIN_MAIN_CHARS and _headings_lost(found_headings, _SUBHEADINGS(root))
    if found_chars >= _MIN_MAIN_CHARS and not headless:
        ceiling = _fallback_ceiling(root)
        if ceiling is not None and found_chars >= TRAFILATURA_MIN_SHARE * ceiling:
            # The fallback cannot hold enough more text to be chosen: the decision below would
            # keep trafilatura's result, so the fallback is not rendered at all.
            return MainContent(found, "trafilatura")
    choice = main_choice(root)
    fallback: str | None = None
    if headless:
        fallback = fallback_markdown(root, choice)
        if _same_text_with_headings(found_chars, found_headings, fallback):
            return MainContent(fallback, "fallback")
        # The fallback picks one block; where the page's sections are sibling blocks (a
        # manual's chapters), trafilatura reading the whole cleaned body finds them all.
        framed = _trafilatura(root, framed=True)
        if _same_text_with_headings(found_chars, found_headings, framed):
            return MainContent(framed, "trafilatura")
    if found_chars >= _MIN_MAIN_CHARS and not choice.similar_blocks:
        # More text alone is no reason to leave trafilatura: on blogs and articles the
        # fallback's extra text is the post's metadata, related posts and comment forms
        # (measured on trafilatura's public evaluation set, docs/extraction.md).
        return MainContent(found, "trafilatura")
    if fallback is None:
        fallback = fallback_markdown(root, choice)
    fallback_chars = _word_chars(fallback)
    # trafilatura keeps the first of several similar blocks (forum posts, FAQ entries) on some
    # pages; when the fallback found such blocks and holds far more text, it found the rest.
    if found_chars >= _MIN_MAIN_CHARS and found_chars >= TRAFILATURA_MIN_SHARE * fallback_chars:
        return MainContent(found, "trafilatura")
    if fallback_chars > found_chars:
        return MainContent(fallback, "fallback")
    if found:
        return MainContent(found, "trafilatura")
    body = root.find("body")
    return MainContent(to_markdown(body if body is not None else root), "body")
