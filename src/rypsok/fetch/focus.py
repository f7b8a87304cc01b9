"""Choosing the section a response starts at (ADR-0006; INV-4, INV-5, INV-6).

Ranking, highest first:

1. the URL fragment, exactly: an HTML anchor, the heading's slug, or the heading's text;
2. the fragment's normalized identity (case-folded, ``_`` read as a space);
3. for ``focus``: a heading equal to the focus, then heading-term coverage;
4. term coverage of the nearby body (the first characters after the heading);
5. whether the section has a body at all (answer-bearing);
6. document order.

Table-of-contents sections rank below every other section with evidence, and list entries that
only name other headings never count as body evidence, so a table of contents cannot outrank
the section it points to. Terms are case-folded words with a light suffix strip; scripts written
without spaces (CJK) are split into character bigrams. No embeddings, no language models. The
cost is linear in the content: at most :data:`NEARBY_CHARS` per section and
:data:`MAX_FOCUS_SECTIONS` sections.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import unquote

from rypsok.fetch.sections import Section, heading_key, slugify, toc_lines_removed

NEARBY_CHARS = 1500
_WORD = re.compile(r"\w+")
_NO_SPACE_SCRIPTS = re.compile(
    r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\u0e00-\u0e7f]"
)
_STOPWORDS = frozenset(
    {
        "a",
        "an",
        "the",
        "of",
        "to",
        "in",
        "on",
        "for",
        "and",
        "or",
        "is",
        "are",
        "how",
        "what",
        "with",
        "by",
        "at",
        "from",
        "about",
        "der",
        "die",
        "das",
        "und",
        "von",
        "zu",
        "mit",
        "für",
        "ein",
        "eine",
        "wie",
        "le",
        "la",
        "les",
        "de",
        "des",
        "et",
        "du",
        "un",
        "une",
    }
)
_STEM_MIN = 5
_STEM_KEEP = 4
_SUFFIXES = (
    "ations",
    "ation",
    "ings",
    "ing",
    "ungen",
    "ung",
    "ers",
    "er",
    "ed",
    "es",
    "en",
    "s",
    "e",
)
# Focus ranks at most this many sections (in document order); fragments match every section.
MAX_FOCUS_SECTIONS = 5000
_LINK_TARGET = re.compile(r"\]\([^)\s]{0,2100}\)")


@dataclass(frozen=True, slots=True)
class Choice:
    """The chosen section, or ``None`` with ``not_found`` when something was asked and missed."""

    section: Section | None
    not_found: bool


@functools.lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    """A light, language-blind suffix strip so that "install", "installing" and
    "installation" meet; never applied to short words."""
    if len(word) >= _STEM_MIN:
        for suffix in _SUFFIXES:
            if word.endswith(suffix) and len(word) - len(suffix) >= _STEM_KEEP:
                return word[: -len(suffix)]
    return word


def terms(text: str) -> list[str]:
    """The terms of ``text``: case-folded, lightly stemmed words; CJK runs as bigrams."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    words = _WORD.findall(folded)
    if not _NO_SPACE_SCRIPTS.search(folded):
        return [_stem(word) for word in words]
    found: list[str] = []
    for word in words:
        if _NO_SPACE_SCRIPTS.search(word) and len(word) > 1:
            found.extend(word[i : i + 2] for i in range(len(word) - 1))
        else:
            found.append(_stem(word))
    return found


def term_set(text: str) -> set[str]:
    """The distinct terms of ``text`` (stems computed once per distinct word)."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    if _NO_SPACE_SCRIPTS.search(folded):
        return set(terms(folded))
    return {_stem(word) for word in set(_WORD.findall(folded))}


def _coverage(wanted: Sequence[str], present: set[str]) -> float:
    if not wanted:
        return 0.0
    return sum(1 for term in wanted if term in present) / len(wanted)


def by_fragment(sections: Sequence[Section], fragment: str) -> Section | None:
    """The section a URL fragment names exactly, then by normalized identity (INV-5)."""
    decoded = unquote(fragment).strip()
    if not decoded:
        return None
    for s in sections:
        if decoded in s.anchors or decoded in (s.slug, s.heading):
            return s
    wanted_key = heading_key(decoded.replace("_", " "))
    wanted_slug = slugify(decoded.replace("_", " "))
    for s in sections:
        if heading_key(s.heading) == wanted_key or (wanted_slug and s.slug == wanted_slug):
            return s
    return None


def by_focus(content: str, sections: Sequence[Section], focus: str) -> Section | None:
    """The section whose heading and nearby text best match ``focus`` (see module docstring)."""
    all_terms = list(dict.fromkeys(terms(focus)))
    wanted = [t for t in all_terms if t not in _STOPWORDS] or all_terms
    if not wanted:
        return None
    focus_key = heading_key(focus)
    keys = {heading_key(s.heading) for s in sections}
    best: tuple[tuple[int, int, float, float, int], Section] | None = None
    for s in sections[:MAX_FOCUS_SECTIONS]:
        nearby = toc_lines_removed(content[s.body_start : s.end_char][:NEARBY_CHARS], keys)
        exact = int(heading_key(s.heading) == focus_key)
        heading_cover = _coverage(wanted, set(terms(s.heading)))
        body_cover = _coverage(wanted, term_set(_LINK_TARGET.sub("]", nearby)))
        if not exact and heading_cover == 0 and body_cover == 0:
            continue
        rank = (
            int(not s.toc),
            exact,
            heading_cover * 2 + body_cover,
            body_cover,
            int(bool(nearby.strip())),
        )
        # Strictly greater keeps the earliest section on ties (document order).
        if best is None or rank > best[0]:
            best = (rank, s)
    return best[1] if best else None


def choose(
    content: str, sections: Sequence[Section], *, fragment: str | None, focus: str | None
) -> Choice:
    """Apply the fragment, then the focus; report ``not_found`` when both were given in vain."""
    if not fragment and not focus:
        return Choice(None, not_found=False)
    if fragment:
        chosen = by_fragment(sections, fragment)
        if chosen is not None:
            return Choice(chosen, not_found=False)
    if focus:
        chosen = by_focus(content, sections, focus)
        if chosen is not None:
            return Choice(chosen, not_found=False)
    return Choice(None, not_found=True)
