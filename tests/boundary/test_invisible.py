"""The invisible-character step alone (REQ-SEC-015).

The expectations are computed from the Unicode database here, independently of the
table the implementation builds, so a gap in that table fails these tests.
"""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rypsok.boundary import remove_invisible

PROPERTY = settings(deadline=None, database=None, max_examples=300)

ZWNJ, ZWJ = "\u200c", "\u200d"
# Prepended concatenation marks: format characters that print visibly (kept by design).
VISIBLE_FORMAT = set(
    "\u0600\u0601\u0602\u0603\u0604\u0605\u06dd\u070f\u0890\u0891\u08e2\U000110bd\U000110cd"
)
SELECTORS = [chr(c) for c in (*range(0xFE00, 0xFE10), *range(0xE0100, 0xE01F0))]


def _must_go() -> list[str]:
    chars = []
    for code in range(0x110000):
        char = chr(code)
        category = unicodedata.category(char)
        control = category == "Cc" and char not in "\t\n"
        invisible_format = category == "Cf" and char not in (ZWNJ, ZWJ, *VISIBLE_FORMAT)
        tag = 0xE0000 <= code <= 0xE007F
        noncharacter = 0xFDD0 <= code <= 0xFDEF or code & 0xFFFE == 0xFFFE
        if control or invisible_format or tag or noncharacter or category == "Cs":
            chars.append(char)
    return chars


def test_req_sec_015_every_control_format_tag_surrogate_and_noncharacter_is_removed() -> None:
    """REQ-SEC-015: every Cc (but tab and LF), Cf, tag, surrogate and noncharacter goes."""
    must_go = _must_go()
    assert len(must_go) > 2000  # the surrogates alone are 2048: the scan really ran
    text = "a" + "a".join(must_go) + "a"
    assert remove_invisible(text) == ("a" * (len(must_go) + 1), True)


@pytest.mark.parametrize(
    "char",
    [
        "\u200b",  # zero-width space
        "\u2060",  # word joiner
        "\ufeff",  # byte order mark
        "\u00ad",  # soft hyphen
        "\u202e",  # right-to-left override
        "\u2066",  # left-to-right isolate
        "\u200e",  # left-to-right mark
        "\u061c",  # Arabic letter mark
        "\U000e0041",  # tag latin capital A
        "\x00",
        "\x1b",
        "\x7f",
        "\x85",
        "\r",
        "\ud800",  # lone surrogate
        "\ufffe",  # noncharacter
        "\u034f",  # combining grapheme joiner
        "\u3164",  # Hangul filler
    ],
)
def test_req_sec_015_named_invisible_characters_are_removed(char: str) -> None:
    """REQ-SEC-015: zero-width, bidi, tag and control characters are removed and reported."""
    assert remove_invisible(f"ig{char}nore") == ("ignore", True)


def test_req_sec_015_tab_and_newline_are_kept() -> None:
    """REQ-SEC-015: fetched Markdown keeps its tabs and line feeds."""
    assert remove_invisible("a\tb\nc") == ("a\tb\nc", False)


def test_req_sec_015_visible_format_characters_are_kept() -> None:
    """REQ-SEC-015: the Arabic number sign and end-of-ayah print visibly and stay."""
    text = "\u0600١٢ \u06dd٣"
    assert remove_invisible(text) == (text, False)


@pytest.mark.parametrize(
    "text",
    [
        "می\u200cخواهم",  # Persian: ZWNJ between Arabic letters
        "क्\u200cष",  # Devanagari: ZWNJ after a virama, before a consonant
        "ক্\u200dয",  # Bengali ya-phala: ZWJ after a virama
        "ර\u200d්\u200dය",  # Sinhala: ZWJ before and after the al-lakuna
        "👨\u200d👩\u200d👧",  # emoji family
        "❤\ufe0f\u200d🔥",  # emoji after a presentation selector
    ],
)
def test_req_sec_015_joiners_that_carry_orthography_are_kept(text: str) -> None:
    """REQ-SEC-015: ZWNJ in Arabic/Indic words, ZWJ in conjuncts and emoji sequences stay."""
    assert remove_invisible(text) == (text, False)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("a\u200db", "ab"),  # Latin: no orthographic joiner
        ("a\u200cb", "ab"),
        ("क\u200da", "कa"),  # ZWJ next to a Devanagari letter but not in a conjunct
        ("क\u200dक", "कक"),  # same script, but no virama
        ("ب\u200dب", "بب"),  # ZWJ is not in the requirement for Arabic
        ("क्\u200cب", "क्ب"),  # ZWNJ between two different scripts
        ("\u200cب", "ب"),  # at the start
        ("ب\u200c", "ب"),  # at the end
        ("\u200d", ""),
        ("क्\u200c\u200c\u200cष", "क्\u200cष"),  # never more than one in a row
        ("a\u200c\u200db", "ab"),
        ("👨\u200d\u200d👩", "👨\u200d👩"),
    ],
)
def test_req_sec_015_other_joiners_are_removed(raw: str, expected: str) -> None:
    """REQ-SEC-015: joiners outside those contexts, at an end, or in a run are removed."""
    assert remove_invisible(raw) == (expected, True)


def test_req_sec_015_a_run_of_variation_selectors_keeps_only_the_first() -> None:
    """REQ-SEC-015: one selector after its base stays; a hidden run (data smuggling) goes."""
    assert remove_invisible("😀" + "\ufe0f" * 16) == ("😀\ufe0f", True)
    assert remove_invisible("❤\ufe0f") == ("❤\ufe0f", False)
    assert remove_invisible("葛\U000e0100") == ("葛\U000e0100", False)  # ideographic variant
    assert remove_invisible("\ufe0fa") == ("a", True)  # no base
    assert remove_invisible("a \ufe0f") == ("a ", True)  # whitespace is no base
    assert remove_invisible("a\u200d\ufe0f😀") == ("a😀", True)  # nor is a joiner


VISIBLE = st.characters(
    categories=["L", "M", "N", "P", "S", "Zs"],
    exclude_characters=[
        # invisible letters and marks the step removes on purpose (spoofing), and the
        # variation selectors, which follow their own rule
        *("\u034f", "\u17b4", "\u17b5", "\u3164", "\uffa0"),
        *("\u180b", "\u180c", "\u180d", "\u180f", *SELECTORS),
    ],
)


@PROPERTY
@given(st.text(alphabet=st.one_of(VISIBLE, st.sampled_from("\t\n"))))
def test_req_sec_015_visible_text_is_never_changed(text: str) -> None:
    """REQ-SEC-015: letters, marks, digits, punctuation, symbols and spaces all survive."""
    assert remove_invisible(text) == (text, False)


INVISIBLE_HEAVY = st.text(
    alphabet=st.one_of(
        st.characters(),
        st.sampled_from(
            [ZWNJ, ZWJ, "\ufe0f", "\u200b", "\u202e", "क", "्", "ب", "👨", "\U000e0041", "a"]
        ),
    )
)


@PROPERTY
@given(INVISIBLE_HEAVY)
def test_req_sec_015_removal_is_idempotent_and_leaves_no_forbidden_character(text: str) -> None:
    """REQ-SEC-015: a second pass finds nothing; no control, format or tag character, no
    joiner at an end or next to another one, survives."""
    cleaned, changed = remove_invisible(text)
    assert remove_invisible(cleaned) == (cleaned, False)
    assert changed == (cleaned != text)
    for char in cleaned:
        category = unicodedata.category(char)
        assert category not in ("Cc", "Cs") or char in "\t\n"
        assert category != "Cf" or char in (ZWNJ, ZWJ) or char in VISIBLE_FORMAT
        assert not 0xE0000 <= ord(char) <= 0xE007F
    assert not cleaned.startswith((ZWNJ, ZWJ))
    assert not cleaned.endswith((ZWNJ, ZWJ))
    for pair in (ZWNJ + ZWJ, ZWJ + ZWNJ, ZWJ + ZWJ, ZWNJ + ZWNJ):
        assert pair not in cleaned
