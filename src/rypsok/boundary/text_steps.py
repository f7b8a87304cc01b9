"""The small text steps of title and snippet cleaning: entities, whitespace, the bound.

Each step takes a text and returns it with a flag saying whether it changed anything; the
order in which they run is set in :mod:`rypsok.boundary.pipeline`, not here.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from functools import lru_cache
from typing import Final

Step = Callable[[str], tuple[str, bool]]
"""One cleaning step: the text in, the text out and whether the step changed it."""

# Unicode White_Space, not str.isspace(): the latter also counts the C0 separators
# U+001C..U+001F, which are controls and go to the invisible-character step (and its notice).
_WHITESPACE_RUN: Final = re.compile(
    "[\t\n\x0b\x0c\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+"
)

# Whitespace that collapsing would change: any whitespace but the plain space, or two spaces.
_NEEDS_COLLAPSE: Final = re.compile(
    "[\t\n\x0b\x0c\r\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]|  "
)

# What a cut may leave dangling at the end: a space, a joiner whose right-hand partner was
# cut away, or the first half of a surrogate pair.
_DANGLING_END: Final = re.compile("[ \u200c\u200d\ud800-\udbff]+\\Z")


def decode_entities(text: str) -> tuple[str, bool]:
    """Decode HTML character references once (``&amp;`` to ``&``, ``&#x41;`` to ``A``).

    Runs after markup removal, exactly once: ``&lt;b&gt;`` becomes the text ``<b>`` and
    stays text, and ``&amp;lt;`` becomes ``&lt;``, never ``<``.
    """
    if "&" not in text:
        return text, False
    decoded = html.unescape(text)
    return decoded, decoded != text


def collapse_whitespace(text: str) -> tuple[str, bool]:
    """Turn every run of whitespace (tabs and newlines included) into one space; trim ends."""
    if _NEEDS_COLLAPSE.search(text) is None:  # the common case: single spaces only
        collapsed = text.strip(" ")
        return collapsed, collapsed != text
    collapsed = _WHITESPACE_RUN.sub(" ", text).strip(" ")
    return collapsed, collapsed != text


@lru_cache(maxsize=32)
def bounded(max_chars: int) -> Step:
    """The bounding step for ``max_chars`` Unicode scalar values (LIM-U1).

    A text longer than the bound is cut to it; a space, joiner or half surrogate pair left
    dangling at the cut is dropped too, so the result may be a little shorter than the bound
    and never longer. The flag reports the cut (REQ-CTX-007).
    """
    if max_chars < 0:
        raise ValueError("max_chars must not be negative")

    def bound(text: str) -> tuple[str, bool]:
        if len(text) <= max_chars:
            return text, False
        return _DANGLING_END.sub("", text[:max_chars]), True

    bound.__name__ = f"bound_{max_chars}"
    return bound
