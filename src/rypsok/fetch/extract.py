"""Main content and title of a cleaned HTML tree (REQ-FETCH-002/004, REQ-PAGE-002).

:func:`main_markdown` asks trafilatura for the main content as Markdown with links, tables and
inline formatting; the settings were chosen by measurement (``docs/extraction.md``). When
trafilatura finds nothing, or the tree is too big for it (its time grows faster than linearly),
a readability-like fallback picks the element that holds the most
paragraph text (``main``, ``article`` or the best-scoring block) and renders it with
:mod:`rypsok.fetch.markdown`; when even that is empty, the whole cleaned body is rendered.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

import lxml.html
import trafilatura
from lxml import etree

from rypsok.fetch.markdown import to_markdown
from rypsok.fetch.parse import text_of
from rypsok.fetch.readability import main_elements

Method = Literal["trafilatura", "fallback", "body"]

TITLE_MAX_CHARS = 200  # LIM-S9
# trafilatura's time grows faster than linearly with the tree (measured: 3.7k elements 0.3 s,
# 14k 2-4 s, 36k 12-38 s); bigger trees go to the linear fallback. docs/extraction.md.
TRAFILATURA_MAX_ELEMENTS = 8000
# Chosen by measurement (bench/extraction_quality.py, docs/extraction.md).
TRAFILATURA_OPTIONS: dict[str, Any] = {
    "output_format": "markdown",
    "include_links": True,
    "include_tables": True,
    "include_formatting": True,
    "include_images": False,
    "include_comments": True,
    "favor_precision": False,
    "favor_recall": True,
    "deduplicate": False,
    "with_metadata": False,
}
# trafilatura's result is kept unless the fallback holds this many times more text.
TRAFILATURA_MIN_SHARE = 0.5
_MIN_MAIN_CHARS = 40
_NON_WORD = re.compile(r"\W+")


@dataclass(frozen=True, slots=True)
class MainContent:
    """The Markdown of the main content and how it was found."""

    markdown: str
    method: Method


def _word_chars(markdown: str) -> int:
    """Letters and digits of a Markdown text: a cheap, markup-blind measure of its content."""
    return len(_NON_WORD.sub("", markdown))


def _collapse(text: str) -> str:
    return " ".join(text.split())


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
        text = _collapse(candidate)
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


def _escape_ampersands(root: etree._Element) -> None:
    """Write every '&' as '&amp;': trafilatura HTML-unescapes its whole output, which would
    turn page text like "&lt;b&gt;" into markup and "&section=1" in a link into "§ion=1"."""
    for el in root.iter():
        if el.text and "&" in el.text:
            el.text = el.text.replace("&", "&amp;")
        if el.tail and "&" in el.tail:
            el.tail = el.tail.replace("&", "&amp;")
        href = el.get("href")
        if href and "&" in href:
            el.set("href", href.replace("&", "&amp;"))


def _trafilatura(root: etree._Element, url: str) -> str:
    # trafilatura wants lxml.html elements and edits the tree it gets; the fallback needs the
    # original. Serializing the bounded tree and reading it back gives both, and the copy can be
    # no larger or deeper than the bounded tree.
    copy = lxml.html.document_fromstring(etree.tostring(root, encoding="unicode"))
    _escape_ampersands(copy)
    result = trafilatura.extract(copy, url=url or None, **TRAFILATURA_OPTIONS)
    return result.strip() if isinstance(result, str) else ""


def fallback_markdown(root: etree._Element) -> str:
    """The readability-like choice of :mod:`rypsok.fetch.readability`, as Markdown."""
    return "\n\n".join(md for md in (to_markdown(el) for el in main_elements(root)) if md)


def main_markdown(root: etree._Element, url: str) -> MainContent:
    """The main content of the cleaned tree as Markdown (see the module docstring)."""
    found = ""
    if int(root.xpath("count(//*)")) <= TRAFILATURA_MAX_ELEMENTS:
        try:
            found = _trafilatura(root, url)
        except (RecursionError, ValueError, TypeError, AttributeError, IndexError, KeyError):
            # A page that makes the extractor fail falls back to rypsok's own rendering.
            found = ""
    fallback = fallback_markdown(root)
    found_chars, fallback_chars = _word_chars(found), _word_chars(fallback)
    # trafilatura keeps the first of several similar blocks (forum posts, FAQ entries) on some
    # pages; when the fallback holds far more text, it found the rest (docs/extraction.md).
    if found_chars >= _MIN_MAIN_CHARS and found_chars >= TRAFILATURA_MIN_SHARE * fallback_chars:
        return MainContent(found, "trafilatura")
    if fallback_chars > found_chars:
        return MainContent(fallback, "fallback")
    if found:
        return MainContent(found, "trafilatura")
    body = root.find("body")
    return MainContent(to_markdown(body if body is not None else root), "body")
