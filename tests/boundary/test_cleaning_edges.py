"""Edges of title and snippet cleaning that mutation testing showed untested (REQ-CTX-004).

Each test kills surviving mutants of the mutation run of ``boundary/`` (docs/security.md
section 5): the plain-text shortcut of ``clean_field`` must not skip a double or edge space,
and collapsing whitespace trims spaces only, leaving the C0 separators U+001C..U+001F (which
``str.strip`` would eat) to the invisible-character step and its notice.
"""

from __future__ import annotations

import pytest

from rypsok.boundary import clean_field
from rypsok.boundary.text_steps import collapse_whitespace

pytestmark = pytest.mark.req("REQ-CTX-004")


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("two  spaces", "two spaces"),
        ("many     spaces here", "many spaces here"),
        ("A  B  C", "A B C"),
    ],
)
def test_a_double_space_in_plain_ascii_is_collapsed(raw: str, expected: str) -> None:
    """Printable ASCII with a double space is not "plain": the space run becomes one space."""
    cleaned = clean_field(raw, 100)
    assert cleaned.text == expected
    assert not cleaned.truncated and not cleaned.markup_removed


def test_plain_ascii_at_the_bound_is_returned_whole() -> None:
    """Plain text of exactly max_chars is neither cut nor reported as cut."""
    cleaned = clean_field("x" * 40, 40)
    assert (cleaned.text, cleaned.truncated) == ("x" * 40, False)


@pytest.mark.req("REQ-SEC-015")
@pytest.mark.parametrize("separator", ["\x1c", "\x1d", "\x1e", "\x1f"])
def test_c0_separators_at_the_edges_are_removed_with_their_notice(separator: str) -> None:
    """U+001C..U+001F are controls, not whitespace: collapsing keeps them (``str.strip``
    would not), and the invisible-character step removes them and reports it.

    Proves THR-09.
    """
    # Without other whitespace (the fast path) and with it, the separators stay.
    assert collapse_whitespace(f"{separator}title{separator}") == (
        f"{separator}title{separator}",
        False,
    )
    assert collapse_whitespace(f"{separator}title\t") == (f"{separator}title", True)
    assert clean_field(f"{separator}title", 100).invisible_removed is True
    cleaned = clean_field(f"{separator}title\tend{separator}", 100)
    assert cleaned.text == "title end"
    assert cleaned.invisible_removed is True


def test_collapsing_trims_spaces_and_nothing_else() -> None:
    """Only spaces are trimmed at the ends: letters there stay, whatever they are."""
    assert collapse_whitespace("X\tmarks the spot X") == ("X marks the spot X", True)
    assert collapse_whitespace("\txXx\n") == ("xXx", True)


@pytest.mark.parametrize("raw", ["title ", " title", " title ", "title\t"])
def test_an_edge_space_in_plain_ascii_is_trimmed(raw: str) -> None:
    """Printable ASCII with a space at either end is not "plain": the space goes."""
    cleaned = clean_field(raw, 100)
    assert cleaned.text == "title"
    assert not cleaned.truncated and not cleaned.markup_removed
