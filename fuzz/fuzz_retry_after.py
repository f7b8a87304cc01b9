"""Fuzz target: the Retry-After header value (REQ-CMP-002, LIM-B4; THR-15).

``parse_retry_after`` on any header text (headers are decoded as Latin-1, so every code point
up to U+00FF can arrive; wider text is tried too). Invariants: no exception; the result is None
or a number of seconds from 0 to LIM-B4.
"""

from __future__ import annotations

from _harness import Input, check, instrumented, main

with instrumented():
    from rypsok.engines.base import MAX_RETRY_AFTER_S, parse_retry_after


def test_one_input(data: bytes) -> None:
    """Parse the input as a Retry-After value and check the bound."""
    source = Input(data)
    now = float(source.integer(0, 4_000_000_000))
    value = source.text()
    seconds = parse_retry_after(value, now=now)
    check(seconds is None or 0.0 <= seconds <= MAX_RETRY_AFTER_S, f"{seconds} out of bounds")


if __name__ == "__main__":
    main(test_one_input)
