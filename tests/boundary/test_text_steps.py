"""Entity decoding, whitespace collapsing and the bound, each alone (REQ-CTX-004/007)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rypsok.boundary.text_steps import bounded, collapse_whitespace, decode_entities

PROPERTY = settings(deadline=None, database=None, max_examples=300)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Tom &amp; Jerry", "Tom & Jerry"),
        ("&lt;b&gt;", "<b>"),
        ("&#x41;&#66;", "AB"),
        ("caf&eacute;", "café"),
        ("&amp;lt;", "&lt;"),  # decoded once: never "<"
    ],
)
def test_req_ctx_004_entities_are_decoded_once(raw: str, expected: str) -> None:
    """REQ-CTX-004: character references are decoded exactly once."""
    assert decode_entities(raw) == (expected, True)


def test_req_ctx_004_entity_step_reports_no_change_without_references() -> None:
    """REQ-CTX-004: a text without "&" passes unchanged and unflagged."""
    assert decode_entities("fish & chips") == ("fish & chips", False)
    assert decode_entities("no ampersand") == ("no ampersand", False)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("  a \t b\n\nc  ", "a b c"),
        ("a\u00a0\u2003b", "a b"),  # no-break and em space are whitespace too
        ("a\r\nb\u2028c", "a b c"),
        ("\u3000全角\u3000", "全角"),
    ],
)
def test_req_ctx_004_whitespace_is_collapsed(raw: str, expected: str) -> None:
    """REQ-CTX-004: runs of whitespace, tabs and newlines become one space; ends trimmed."""
    assert collapse_whitespace(raw) == (expected, True)


def test_req_ctx_004_c0_separators_are_left_to_the_invisible_step() -> None:
    """REQ-CTX-004: U+001C..U+001F are controls, not whitespace, so their removal is reported."""
    assert collapse_whitespace("a\x1fb") == ("a\x1fb", False)


def test_req_ctx_007_bound_reports_the_cut() -> None:
    """REQ-CTX-007: a text longer than the bound is cut and the cut is reported."""
    assert bounded(5)("abcdefgh") == ("abcde", True)
    assert bounded(5)("abcde") == ("abcde", False)
    assert bounded(0)("a") == ("", True)


def test_req_ctx_010_bound_counts_unicode_scalar_values() -> None:
    """REQ-CTX-010 (LIM-U1): the budget counts code points, not bytes or UTF-16 units."""
    text = "日本語のテキスト😀😀"
    assert bounded(9)(text) == ("日本語のテキスト😀", True)
    assert bounded(10)(text) == (text, False)


@pytest.mark.parametrize(
    ("raw", "bound", "expected"),
    [
        ("hello world", 6, "hello"),  # no trailing space
        ("क्\u200dष", 3, "क्"),  # no dangling joiner
        ("👨\u200d👩", 2, "👨"),
        ("ab\ud83d\ude00", 3, "ab"),  # no first half of a surrogate pair
    ],
)
def test_req_ctx_007_cut_leaves_nothing_dangling(raw: str, bound: int, expected: str) -> None:
    """REQ-CTX-007, REQ-SEC-015: a cut never ends in a space, a joiner or a lone surrogate."""
    assert bounded(bound)(raw) == (expected, True)


def test_req_ctx_007_negative_bound_is_refused() -> None:
    """REQ-CTX-007: a negative bound is a programming error, not an empty text."""
    with pytest.raises(ValueError, match="negative"):
        bounded(-1)


@PROPERTY
@given(st.text(), st.integers(min_value=0, max_value=50))
def test_req_ctx_007_bound_is_always_respected(text: str, bound: int) -> None:
    """REQ-CTX-007: the result is a prefix within the bound; the flag says whether it cut."""
    result, cut = bounded(bound)(text)
    assert len(result) <= bound
    assert text.startswith(result)
    assert cut == (len(text) > bound)
    if not cut:
        assert result == text


@PROPERTY
@given(st.text())
def test_req_ctx_004_whitespace_collapse_is_idempotent(text: str) -> None:
    """REQ-CTX-004: collapsing twice changes nothing the first pass did not."""
    once, _ = collapse_whitespace(text)
    assert collapse_whitespace(once) == (once, False)
    assert "  " not in once
