"""Fuzz target: the Content-Type header and its charset value (REQ-PAGE-005/007; THR-15, THR-20).

``parse_content_type``, ``codec_for_label`` and ``decide`` on any header value and body.
Invariants: no exception but ``UnsupportedMedia``; the essence is a valid media type or None;
the charset parameter is at most 40 characters; a label maps to a known codec or to None;
a refused media type is reported only when it is valid (it is external text that reaches the
caller, REQ-SEC-001).
"""

from __future__ import annotations

from _harness import Input, check, instrumented, main

with instrumented():
    from rypsok.fetch import charset
    from rypsok.fetch.media import UnsupportedMedia, decide, parse_content_type, valid_media_type


def test_one_input(data: bytes) -> None:
    """Parse the header value and decide the media, checking the invariants."""
    source = Input(data)
    value = source.sized_text(300) if source.flag() else None
    body = source.raw()
    parsed = parse_content_type(value)
    check(parsed.essence is None or valid_media_type(parsed.essence), "invalid essence kept")
    check(parsed.charset is None or len(parsed.charset) <= 42, "charset parameter unbounded")
    if parsed.charset is not None:
        codec = charset.codec_for_label(parsed.charset)
        check(codec is None or codec in charset._ALLOWED, f"label maps to {codec!r}")
    try:
        media = decide(value, body)
    except UnsupportedMedia as refused:
        check(
            refused.media_type is None or valid_media_type(refused.media_type),
            "an invalid media type would reach the caller",
        )
        return
    check(valid_media_type(media.media_type), "decided an invalid media type")


if __name__ == "__main__":
    main(test_one_input)
