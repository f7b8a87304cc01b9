"""The invisible-character step (REQ-SEC-015).

Removed from external text:

* control characters (general category Cc) except tab and line feed, which fetched
  Markdown needs (titles and snippets have theirs collapsed to spaces before this step);
* format characters (Cf): zero-width space U+200B, word joiner U+2060, BOM U+FEFF, soft
  hyphen, the bidirectional controls U+202A..U+202E, U+2066..U+2069, U+200E/U+200F,
  U+061C, invisible operators, interlinear annotation marks;
* the whole tag block U+E0000..U+E007F and the other unassigned default-ignorable code
  points of that plane (reserved for future invisible characters);
* surrogate code points (they are never Unicode scalar values, LIM-U1) and noncharacters;
* invisible letters and marks used for spoofing: the combining grapheme joiner U+034F,
  the Hangul fillers U+3164 and U+FFA0, the Khmer inherent vowels U+17B4/U+17B5.

Kept: the joiners and variation selectors where :mod:`.contextual` allows them, and the
prepended concatenation marks (Arabic number sign U+0600, end of ayah U+06DD, ...), which
are format characters by category but print visibly and cannot hide text.

The removal set is derived from the running Python's Unicode database at import (a few
tens of milliseconds, once), so a newer Python removes newly assigned format characters
without a code change. The common path is one compiled character class.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator
from typing import Final

from rypsok.boundary.contextual import CONTEXTUAL, JOINERS, char_class, resolve_contextual

# Format characters that render visibly (Prepended_Concatenation_Mark).
_VISIBLE_FORMAT: Final = frozenset(
    "\u0600\u0601\u0602\u0603\u0604\u0605\u06dd\u070f\u0890\u0891\u08e2\U000110bd\U000110cd"
)
_KEPT_CONTROLS: Final = frozenset("\t\n")
_SPOOFING_INVISIBLES: Final = (0x034F, 0x17B4, 0x17B5, 0x3164, 0xFFA0)
# Format and control characters outside these planes live only in plane 14 (tags), which
# is removed as whole ranges below.
_SCANNED_PLANES_END: Final = 0x20000


def _removed_code_points() -> Iterator[int]:
    # map() keeps the scan of 131072 code points in C; a Python loop doubles its cost.
    categories = map(unicodedata.category, map(chr, range(_SCANNED_PLANES_END)))
    for code, category in enumerate(categories):
        if category == "Cc":
            if chr(code) not in _KEPT_CONTROLS:
                yield code
        elif category == "Cf" and chr(code) not in JOINERS and chr(code) not in _VISIBLE_FORMAT:
            yield code
    yield from range(0xD800, 0xE000)  # surrogates
    yield from range(0xFDD0, 0xFDF0)  # noncharacters
    for plane in range(17):
        yield plane * 0x10000 + 0xFFFE
        yield plane * 0x10000 + 0xFFFF
    yield 0x2065  # unassigned, default-ignorable
    yield from range(0xFFF0, 0xFFF9)  # unassigned, default-ignorable
    yield from range(0xE0000, 0xE0100)  # tag characters and their reserved neighbours
    yield from range(0xE01F0, 0xE1000)  # reserved default-ignorable, after the selectors
    yield from _SPOOFING_INVISIBLES


def _as_ranges(codes: Iterable[int]) -> tuple[tuple[int, int], ...]:
    ranges: list[tuple[int, int]] = []
    for code in sorted(set(codes)):
        if ranges and ranges[-1][1] == code - 1:
            ranges[-1] = (ranges[-1][0], code)
        else:
            ranges.append((code, code))
    return tuple(ranges)


REMOVED_RANGES: Final = _as_ranges(_removed_code_points())
"""The code point ranges this step always removes (inclusive), for tests and documentation."""

_REMOVED: Final = re.compile(char_class(REMOVED_RANGES))
# The ASCII part of the removed set: most engine text is ASCII and needs no more than this.
_REMOVED_ASCII: Final = re.compile(
    char_class(tuple((low, min(high, 0x7F)) for low, high in REMOVED_RANGES if low <= 0x7F))
)


def remove_invisible(text: str) -> tuple[str, bool]:
    """Remove invisible and control characters from ``text`` (REQ-SEC-015).

    Tab and line feed are kept; joiners and variation selectors are kept only where they
    carry orthography. Returns the text and whether anything was removed.
    """
    if text.isascii():  # no joiner or selector can occur: the short class is enough
        cleaned = _REMOVED_ASCII.sub("", text)
        return cleaned, len(cleaned) != len(text)
    cleaned = _REMOVED.sub("", text)
    if CONTEXTUAL.search(cleaned) is not None:
        cleaned = resolve_contextual(cleaned)
    # The step only ever deletes, so a change shows in the length.
    return cleaned, len(cleaned) != len(text)
