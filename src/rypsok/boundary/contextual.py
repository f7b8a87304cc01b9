"""Invisible characters that are kept only where they carry orthography (REQ-SEC-015).

The two joiners are kept where a writing system needs them:

* ZWNJ (U+200C) between two characters of Arabic script (Persian "می‌خواهم") or of the
  same Indic script (Devanagari "क्‌ष", which shows the virama instead of a conjunct);
* ZWJ (U+200D) in an Indic conjunct, next to a virama of the same script (Bengali
  ya-phala "ক্‍য", Sinhala "ර‍්‍ය"), or between two emoji ("👨‍👩‍👧");

never more than one in a row (a run keeps at most its first joiner), and never at the
start or end of the text.

Variation selectors are not in the requirement's list, but a run of them after one emoji
is a known way to smuggle hidden data, so a selector is kept only directly after a visible
character (``❤️``); further ones, and any at the start or after whitespace, are removed.

Everything here is a regular-expression substitution, with no Python callback per
character, so a page full of joiners costs little more than a page full of letters.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from typing import Final

ZWNJ: Final = "\u200c"
ZWJ: Final = "\u200d"
JOINERS: Final = ZWNJ + ZWJ

# Standard variation selectors, the ideographic ones, and Mongolian free variation
# selectors (orthographic in Mongolian, and subject to the same one-per-base rule).
VARIATION_SELECTORS: Final[tuple[tuple[int, int], ...]] = (
    (0x180B, 0x180D),
    (0x180F, 0x180F),
    (0xFE00, 0xFE0F),
    (0xE0100, 0xE01EF),
)

# Blocks of the scripts whose orthography uses the joiners. Vedic signs and the
# Devanagari extensions only occur inside Devanagari text, so they count as Devanagari.
_ARABIC: Final[tuple[tuple[int, int], ...]] = (
    (0x0600, 0x06FF),
    (0x0750, 0x077F),
    (0x0870, 0x08FF),
    (0xFB50, 0xFDFF),
    (0xFE70, 0xFEFE),
    (0x10EC0, 0x10EFF),
    (0x1EE00, 0x1EEFF),
)
_INDIC: Final[dict[str, tuple[tuple[int, int], ...]]] = {
    "devanagari": ((0x0900, 0x097F), (0x1CD0, 0x1CFF), (0xA8E0, 0xA8FF)),
    "bengali": ((0x0980, 0x09FF),),
    "gurmukhi": ((0x0A00, 0x0A7F),),
    "gujarati": ((0x0A80, 0x0AFF),),
    "oriya": ((0x0B00, 0x0B7F),),
    "tamil": ((0x0B80, 0x0BFF),),
    "telugu": ((0x0C00, 0x0C7F),),
    "kannada": ((0x0C80, 0x0CFF),),
    "malayalam": ((0x0D00, 0x0D7F),),
    "sinhala": ((0x0D80, 0x0DFF),),
    "tibetan": ((0x0F00, 0x0FFF),),
    "myanmar": ((0x1000, 0x109F),),
    "khmer": ((0x1780, 0x17FF),),
    "balinese": ((0x1B00, 0x1B7F),),
    "javanese": ((0xA980, 0xA9DF),),
}

# Extended_Pictographic, approximated by blocks: the standard library has no emoji data,
# and a joiner wrongly kept between two symbols costs one invisible character at most.
_PICTOGRAPHIC: Final[tuple[tuple[int, int], ...]] = (
    (0x00A9, 0x00A9),
    (0x00AE, 0x00AE),
    (0x203C, 0x203C),
    (0x2049, 0x2049),
    (0x2122, 0x2122),
    (0x2139, 0x2139),
    (0x2190, 0x21FF),
    (0x2300, 0x23FF),
    (0x24C2, 0x24C2),
    (0x25A0, 0x25FF),
    (0x2600, 0x27BF),
    (0x2900, 0x297F),
    (0x2B00, 0x2BFF),
    (0x3030, 0x3030),
    (0x303D, 0x303D),
    (0x3297, 0x3297),
    (0x3299, 0x3299),
    (0x1F000, 0x1FAFF),
    (0x1FC00, 0x1FFFD),
)
# Besides an emoji, the left side of an emoji ZWJ may be the emoji presentation selector
# ("❤️‍🔥") or the combining keycap.
_EMOJI_TAILS: Final[tuple[tuple[int, int], ...]] = ((0xFE0F, 0xFE0F), (0x20E3, 0x20E3))

_VIRAMA_COMBINING_CLASS: Final = 9


def char_class(ranges: Iterable[tuple[int, int]]) -> str:
    """A regular-expression character class for inclusive code point ranges."""
    parts = (
        f"\\U{first:08x}" if first == last else f"\\U{first:08x}-\\U{last:08x}"
        for first, last in ranges
    )
    return "[" + "".join(parts) + "]"


def _viramas(ranges: Iterable[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    return tuple(
        (code, code)
        for first, last in ranges
        for code in range(first, last + 1)
        if unicodedata.combining(chr(code)) == _VIRAMA_COMBINING_CLASS
    )


def _joiner_contexts() -> tuple[list[str], list[str]]:
    """Where each joiner may stay: regex fragments, each looking at both neighbours.

    A fragment sits right after the joiner: its lookbehind spans the left neighbour and
    the joiner, its tail is the right neighbour.
    """
    arabic = char_class(_ARABIC)
    zwnj = [f"(?<={arabic}{ZWNJ}){arabic}"]
    zwj = []
    for ranges in _INDIC.values():
        script, virama = char_class(ranges), char_class(_viramas(ranges))
        zwnj.append(f"(?<={script}{ZWNJ}){script}")
        zwj.append(f"(?<={virama}{ZWJ}){script}")
        zwj.append(f"(?<={script}{ZWJ}){virama}")
    emoji = char_class(_PICTOGRAPHIC)
    zwj.append(f"(?<={char_class(_PICTOGRAPHIC + _EMOJI_TAILS)}{ZWJ}){emoji}")
    return zwnj, zwj


_ZWNJ_CONTEXTS, _ZWJ_CONTEXTS = _joiner_contexts()
_SELECTOR: Final = char_class(VARIATION_SELECTORS)
CONTEXTUAL: Final = re.compile(f"[{JOINERS}]|{_SELECTOR}")
"""Matches any character whose fate depends on its neighbours."""

# Every pattern starts with the character it removes, so the engine skips the rest of the
# text at C speed; lookbehinds come after that character for the same reason.
_SELECTOR_RUN: Final = re.compile(f"({_SELECTOR}){_SELECTOR}+")
# A selector needs a visible base on its left: not the start, not whitespace (a trim would
# make it leading), not a joiner (it would meet another selector once the joiner goes).
_LEADING_SELECTOR: Final = re.compile(_SELECTOR)
_UNBASED_SELECTOR: Final = re.compile(f"{_SELECTOR}(?<=[\\s{JOINERS}]{_SELECTOR})")
_JOINER_RUN: Final = re.compile(f"([{JOINERS}])[{JOINERS}]+")
# At the start or the end of the text no context can match, so those joiners go too.
_STRAY_ZWNJ: Final = re.compile(f"{ZWNJ}(?!{'|'.join(_ZWNJ_CONTEXTS)})")
_STRAY_ZWJ: Final = re.compile(f"{ZWJ}(?!{'|'.join(_ZWJ_CONTEXTS)})")


def resolve_contextual(text: str) -> str:
    """Keep joiners and variation selectors only where REQ-SEC-015 allows them.

    Expects every other invisible character to be gone already: the neighbours that decide
    are the characters the reader will see.
    """
    text = _SELECTOR_RUN.sub(r"\1", text)
    if _LEADING_SELECTOR.match(text) is not None:
        text = text[1:]
    text = _UNBASED_SELECTOR.sub("", text)
    text = _JOINER_RUN.sub(r"\1", text)
    text = _STRAY_ZWNJ.sub("", text)
    return _STRAY_ZWJ.sub("", text)
