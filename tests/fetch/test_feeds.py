"""RSS 2.0 and Atom feeds (spec 002 "Feeds"; README section 3)."""

from __future__ import annotations

import pytest

from rypsok.contract.vocabulary import NoticeCode, Reason
from rypsok.fetch import ExtractionError, Extractor, select_and_budget
from rypsok.fetch.feeds import MAX_ITEMS, FeedRefused, iso_date, parse_feed, refuses
from rypsok.fetch.media import MediaKind

URL = "https://blog.example.org/feed.xml"

RSS = """<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:dc="http://purl.org/dc/elements/1.1/">
<channel>
  <title>Example &amp; Co blog</title>
  <link>https://blog.example.org/</link>
  <description>Notes about &lt;b&gt;things&lt;/b&gt;.</description>
  <item>
    <title>First post</title>
    <link>https://blog.example.org/first</link>
    <description><![CDATA[<p>Hello <b>world</b>.<span style="display:none">HIDDEN</span>
      </p><?php no ?>]]></description>
    <pubDate>Tue, 14 Oct 2026 09:30:00 +0200</pubDate>
  </item>
  <item>
    <title>Second post</title>
    <guid>https://blog.example.org/second</guid>
    <description>Plain summary.</description>
    <dc:date>2026-10-15T08:00:00Z</dc:date>
  </item>
  <item>
    <title>Third post</title>
    <link>javascript:alert(1)</link>
    <description>Unsafe link.</description>
    <pubDate>not a date</pubDate>
  </item>
</channel>
</rss>
"""

ATOM = """<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <title>Atom example</title>
  <subtitle type="html">A &lt;em&gt;small&lt;/em&gt; feed</subtitle>
  <link rel="self" href="https://atom.example.org/feed"/>
  <link rel="alternate" href="https://atom.example.org/"/>
  <entry>
    <title type="html">Entry &lt;b&gt;one&lt;/b&gt;</title>
    <link rel="alternate" href="/posts/1"/>
    <updated>2026-10-01T12:00:00Z</updated>
    <summary type="html">&lt;p&gt;Summary &lt;i&gt;one&lt;/i&gt;&lt;/p&gt;</summary>
  </entry>
  <entry>
    <title>Entry two</title>
    <link href="https://atom.example.org/posts/2"/>
    <published>2026-10-02T12:00:00+02:00</published>
    <content type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml"><p>XHTML content</p></div>
    </content>
  </entry>
</feed>
"""


def test_rss_channel_and_items() -> None:
    feed = parse_feed(RSS, URL)
    assert (feed.title, feed.link, feed.summary) == (
        "Example & Co blog",
        "https://blog.example.org/",
        "Notes about things.",
    )
    first, second, third = feed.items
    assert (first.title, first.link, first.summary, first.date) == (
        "First post",
        "https://blog.example.org/first",
        "Hello world.",
        "2026-10-14T09:30:00+02:00",
    )
    assert (second.link, second.date) == (
        "https://blog.example.org/second",
        "2026-10-15T08:00:00+00:00",
    )
    assert (third.link, third.date) == (None, None)
    assert feed.total_items == 3 and not feed.partial


def test_atom_feed_and_entries() -> None:
    feed = parse_feed(ATOM, URL)
    assert (feed.title, feed.link, feed.summary) == (
        "Atom example",
        "https://atom.example.org/",
        "A small feed",
    )
    one, two = feed.items
    assert (one.title, one.link, one.summary, one.date) == (
        "Entry one",
        "https://blog.example.org/posts/1",
        "Summary one",
        "2026-10-01T12:00:00+00:00",
    )
    assert (two.link, two.summary, two.date) == (
        "https://atom.example.org/posts/2",
        "XHTML content",
        "2026-10-02T12:00:00+02:00",
    )


def test_at_most_100_items() -> None:
    items = "".join(f"<item><title>Item {n}</title></item>" for n in range(250))
    feed = parse_feed(f"<rss version='2.0'><channel><title>t</title>{items}</channel></rss>", URL)
    assert len(feed.items) == MAX_ITEMS == 100
    assert feed.total_items == 250
    assert feed.items[-1].title == "Item 99"


@pytest.mark.parametrize(
    "document",
    [
        '<?xml version="1.0"?><!DOCTYPE rss SYSTEM "http://evil.example/rss.dtd"><rss/>',
        '<!DOCTYPE rss [<!ENTITY x "y">]><rss><channel><title>&x;</title></channel></rss>',
        '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>'
        "<rss><channel><title>&xxe;</title></channel></rss>",
        '<?xml version="1.0"?><?xml-stylesheet href="style.xsl"?><rss><channel/></rss>',
        "<rss><channel><?php system('x') ?><title>t</title></channel></rss>",
        "<rss><channel><title>t</title></channel></rss><!ELEMENT x ANY>",
    ],
)
def test_declarations_and_processing_instructions_refuse_the_document(document: str) -> None:
    assert refuses(document)
    with pytest.raises(FeedRefused):
        parse_feed(document, URL)


BILLION_LAUGHS = """<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol9 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
]>
<rss version="2.0"><channel><title>&lol9;</title></channel></rss>
"""


def test_billion_laughs_is_refused() -> None:
    with pytest.raises(FeedRefused):
        parse_feed(BILLION_LAUGHS, URL)


def test_the_parser_target_refuses_what_the_prescan_would_miss() -> None:
    # Even if the prescan were bypassed, the parser target refuses a doctype.
    from rypsok.fetch import feeds

    original = feeds.refuses
    try:
        feeds.refuses = lambda text: False  # type: ignore[assignment]
        with pytest.raises(FeedRefused):
            parse_feed(BILLION_LAUGHS, URL)
    finally:
        feeds.refuses = original


def test_cdata_and_comments_may_mention_markup() -> None:
    document = (
        "<rss><channel><title>t</title><!-- <?x ?> <!DOCTYPE --><item><title>i</title>"
        "<description><![CDATA[<?php echo 1; ?> <!DOCTYPE html>]]></description>"
        "</item></channel></rss>"
    )
    assert not refuses(document)
    assert parse_feed(document, URL).items[0].title == "i"


def test_other_roots_are_refused() -> None:
    with pytest.raises(FeedRefused):
        parse_feed("<rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'/>", URL)


def test_dates() -> None:
    assert iso_date("Mon, 01 Jan 2024 00:00:00 GMT") == "2024-01-01T00:00:00+00:00"
    assert iso_date("2024-01-01") == "2024-01-01T00:00:00"
    assert iso_date("yesterday") is None


def test_feed_bounds_while_parsing() -> None:
    items = "<item><title>x</title></item>" * 500
    feed = parse_feed(f"<rss><channel><title>t</title>{items}</channel></rss>", URL, max_nodes=100)
    assert feed.partial
    assert len(feed.items) < 50


@pytest.mark.anyio
async def test_a_feed_through_the_extractor(extractor: Extractor) -> None:
    extraction = await extractor.extract(RSS.encode(), "application/rss+xml", URL)
    assert extraction.kind is MediaKind.FEED
    assert extraction.title == "Example & Co blog"
    assert extraction.content == (
        "[Example & Co blog](https://blog.example.org/)\n\nNotes about things."
    )
    assert extraction.items is not None and len(extraction.items) == 3
    assert "HIDDEN" not in str(extraction.items)
    generic = await extractor.extract(ATOM.encode(), "text/xml", URL)
    assert generic.items is not None and generic.items[0].title == "Entry one"


@pytest.mark.anyio
async def test_feed_items_limited_notice(extractor: Extractor) -> None:
    items = "".join(
        f"<item><title>Item {n}</title><description>Summary {n}</description></item>"
        for n in range(150)
    )
    body = f"<rss version='2.0'><channel><title>t</title>{items}</channel></rss>".encode()
    extraction = await extractor.extract(body, "application/rss+xml", URL)
    view = select_and_budget(extraction, max_chars=100_000)
    assert view.items is not None and len(view.items) == 100
    limited = [n for n in view.notices if n.code is NoticeCode.FEED_ITEMS_LIMITED]
    assert limited and limited[0].count == 100
    small = select_and_budget(extraction, max_chars=100)
    assert small.items is not None and len(small.items) < 10 and small.truncated
    assert small.external_chars() <= 100


@pytest.mark.anyio
async def test_hostile_feeds_end_their_call_only(extractor: Extractor) -> None:
    for document in (
        BILLION_LAUGHS,
        '<!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><rss/>',
    ):
        with pytest.raises(ExtractionError) as refused:
            await extractor.extract(document.encode(), "application/rss+xml", URL)
        assert refused.value.reason is Reason.EXTRACTION_FAILED
    extraction = await extractor.extract(RSS.encode(), "application/rss+xml", URL)
    assert extraction.items is not None
