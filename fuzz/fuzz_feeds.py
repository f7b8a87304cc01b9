"""Fuzz target: the RSS and Atom reader (spec 002 "Feeds"; THR-21).

``parse_feed`` on any text. Invariants: no exception but ``FeedRefused``; a document the
declaration scan refuses (DTD, entity, PI) is never parsed; at most 100 items; links are
absolute http(s) URLs of at most 2048 characters; dates are ISO 8601.
"""

from __future__ import annotations

from datetime import date, datetime

from _harness import Input, check, instrumented, main

with instrumented():
    from rypsok.fetch.feeds import MAX_ITEMS, FeedRefused, parse_feed, refuses

_BASES = ("https://example.org/feed.xml", "http://example.org/")


def _link_ok(link: str | None) -> bool:
    # The scheme is case-insensitive and kept as given, as for search results (REQ-RANK-003).
    return link is None or (
        len(link) <= 2048 and link[:8].lower().startswith(("http://", "https://"))
    )


def _date_ok(value: str | None) -> bool:
    if value is None:
        return True
    try:
        datetime.fromisoformat(value)
    except ValueError:
        try:
            date.fromisoformat(value)
        except ValueError:
            return False
    return True


def test_one_input(data: bytes) -> None:
    """Parse the input as a feed and check the invariants."""
    source = Input(data)
    base = source.pick(_BASES)
    text = source.text()
    try:
        feed = parse_feed(text, base)
    except FeedRefused:
        return
    check(not refuses(text), "a document with a declaration was parsed")
    check(len(feed.items) <= MAX_ITEMS, "more than MAX_ITEMS items")
    check(feed.total_items >= len(feed.items), "total below the items returned")
    check(_link_ok(feed.link), "feed link not an absolute bounded http(s) URL")
    for item in feed.items:
        check(_link_ok(item.link), "item link not an absolute bounded http(s) URL")
        check(_date_ok(item.date), f"item date {item.date!r} is not ISO 8601")


if __name__ == "__main__":
    main(test_one_input)
