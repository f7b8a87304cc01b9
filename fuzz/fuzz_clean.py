"""Fuzz target: the text cleaner of the content boundary (REQ-SEC-015, REQ-CTX-004; THR-09).

``clean_field`` (titles, snippets) and ``clean_content`` (fetched Markdown) on any text.
Invariants: no exception; a field is at most ``max_chars`` long, has no control character, no
removed invisible character, no joiner at either end or next to another joiner, no doubled or
edge space; content keeps only tab and line feed of the controls and has no CR; cleaning
content is idempotent, and so is cleaning a field that holds no markup or entity.
"""

from __future__ import annotations

import bisect
import itertools
import unicodedata

from _harness import Input, check, instrumented, main

with instrumented():
    from rypsok.boundary import clean_content, clean_field
    from rypsok.boundary.contextual import JOINERS
    from rypsok.boundary.invisible import REMOVED_RANGES

_STARTS = [first for first, _ in REMOVED_RANGES]


def removed(ch: str) -> bool:
    """Whether the invisible-character step always removes ``ch``."""
    code = ord(ch)
    index = bisect.bisect_right(_STARTS, code) - 1
    return index >= 0 and REMOVED_RANGES[index][0] <= code <= REMOVED_RANGES[index][1]


def check_joiners(text: str, what: str) -> None:
    """Joiners never at an end and never two in a row (REQ-SEC-015)."""
    if not text:
        return
    check(text[0] not in JOINERS and text[-1] not in JOINERS, f"{what}: joiner at an end")
    for left, right in itertools.pairwise(text):
        check(not (left in JOINERS and right in JOINERS), f"{what}: two joiners in a row")


def test_one_input(data: bytes) -> None:
    """Clean the input as a field and as content and check the invariants."""
    source = Input(data)
    max_chars = source.integer(0, 600)
    text = source.text()

    field = clean_field(text, max_chars)
    out = field.text
    check(len(out) <= max_chars, "field longer than its bound")
    check(not any(removed(ch) for ch in out), "field keeps an invisible character")
    check(not any(unicodedata.category(ch) == "Cc" for ch in out), "field keeps a control")
    check("  " not in out and out == out.strip(" "), "field has a doubled or edge space")
    check_joiners(out, "field")
    if "<" not in text and "&" not in text:
        check(clean_field(out, max_chars).text == out, "field cleaning is not idempotent")

    content = clean_content(text)
    body = content.text
    check("\r" not in body, "content keeps a carriage return")
    check(not any(removed(ch) for ch in body), "content keeps an invisible character")
    check(not content.markup_removed and not content.truncated, "content reports a cut")
    check_joiners(body, "content")
    check(clean_content(body).text == body, "content cleaning is not idempotent")


if __name__ == "__main__":
    main(test_one_input)
