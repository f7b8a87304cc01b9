"""The corpus scorer (bench/extraction_quality.py): what counts as a token."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import extraction_quality as eq  # noqa: E402


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Markdown's backslash escapes are syntax: "ttl\_seconds" reads "ttl_seconds".
        ("Set `ttl\\_seconds` to \\[0\\]", ["set", "ttl_seconds", "to", "0"]),
        ("# Function read\\_to\\_string", ["function", "read_to_string"]),
        # Link targets are not text; a backslash before a letter is the page's own.
        ("[the docs](https://e.org/a_b) say C:\\temp", ["the", "docs", "say", "c", "temp"]),
        ("東京 tower", ["東", "京", "tower"]),
    ],
)
def test_tokens_read_markdown_as_its_reader_does(text: str, expected: list[str]) -> None:
    assert eq.tokens(text) == expected


def test_scores_count_shared_tokens() -> None:
    assert eq.scores("read\\_to\\_string", "read_to_string") == (1.0, 1.0, 1.0)
    precision, recall, f1 = eq.scores("a b c d", "a b")
    assert (precision, recall) == (0.5, 1.0) and f1 == pytest.approx(2 / 3)
