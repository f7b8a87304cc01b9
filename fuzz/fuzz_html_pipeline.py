"""Fuzz target: the document pipeline an extraction worker runs (REQ-PAGE-001/006; THR-18).

``rypsok.fetch.pipeline.run`` in-process, exactly as a worker calls it, on any body under any
Content-Type (HTML, XHTML, plain text, Markdown, feeds, XML, fuzzed values). Invariants: it
returns a ``WireResult`` or ``WireFailure`` (an exception would cost a worker and the call);
the reply serializes (the worker protocol's JSON, no lone surrogate); the content is within
``MAX_CONTENT_CHARS``; every section lies inside the content; feed items are at most 100.
"""

from __future__ import annotations

from _harness import Input, check, instrumented, main

with instrumented():
    from rypsok.fetch import pipeline
    from rypsok.fetch.protocol import MAX_CONTENT_CHARS, WireFailure, WireResult

_TYPES = (
    "text/html",
    "text/html; charset=utf-8",
    "text/html; charset=shift_jis",
    "application/xhtml+xml",
    "text/plain",
    "text/markdown",
    "application/rss+xml",
    "application/atom+xml",
    "application/xml",
    "image/png",
    None,
)
_URLS = ("https://example.org/a/b?c=d", "https://[2001:db8::1]/", "http://xn--bcher-kva.example/")


def test_one_input(data: bytes) -> None:
    """Run the worker's job on the input and check the reply."""
    source = Input(data)
    content_type = source.pick(_TYPES) if source.byte() < 230 else source.sized_text(120)
    job = {"content_type": content_type, "url": source.pick(_URLS)}
    result = pipeline.run(job, source.raw())
    check(isinstance(result, WireResult | WireFailure), "no wire reply")
    result.model_dump_json().encode("utf-8")  # the worker's reply must serialize
    if isinstance(result, WireFailure):
        return
    check(len(result.content) <= MAX_CONTENT_CHARS, "content beyond MAX_CONTENT_CHARS")
    for section in result.sections:
        check(0 <= section.start_char <= len(result.content), "section starts outside content")
        check(section.start_char <= section.end_char <= len(result.content), "section end")
    check(result.items is None or len(result.items) <= 100, "more than 100 feed items")


if __name__ == "__main__":
    main(test_one_input)
