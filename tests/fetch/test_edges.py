"""The ends of an extracted result: the article's standfirst, labels that label nothing."""

from __future__ import annotations

import pytest

from rypsok.fetch.edges import with_lede, without_dangling_end
from rypsok.fetch.parse import parse_html
from tests.fetch.jobs import job_result

SENTENCE = "A sentence of the article body, long enough to count as its content. "
BODY = "".join(f"<p>{SENTENCE * 4}Paragraph {n}.</p>" for n in range(8))
TITLE = "How the harbour was rebuilt after the storm"
LEDE = "The town spent three years and most of its savings on a new harbour wall."


def _root(page: str):  # type: ignore[no-untyped-def]
    parsed = parse_html(page)
    assert parsed.root is not None
    return parsed.root


def _header_page(header: str, h1: str = TITLE, more: str = "") -> str:
    # The shape of a news site's article: its header, then the div of its paragraphs, whose
    # id trafilatura takes for the article's body.
    return (
        f"<html><body><article><div id='articleHead'><header><h1>{h1}</h1>{header}</header>"
        f"</div><div id='articleContent'>{BODY}{more}</div></article></body></html>"
    )


def _content(page: str, title: str) -> str:
    html = f"<html><head><title>{title}</title></head>{page[len('<html>') :]}"
    return job_result(html, "https://e.org/a").content


@pytest.mark.req("REQ-FETCH-002")
def test_the_standfirst_under_the_title_comes_first_when_the_body_was_taken_alone() -> None:
    # trafilatura takes the div of paragraphs and leaves the article's header above it; the
    # lede goes back in front, the byline does not.
    page = _header_page(
        f"<p>{LEDE}</p><span class='byline'>by <a href='/kim'>Kim Lee</a> on "
        "<time>3 May 2024</time></span>"
    )
    content = _content(page, f"{TITLE} - Harbour News")
    assert content.startswith(f"{LEDE}\n\n{SENTENCE.strip()}")
    assert "Kim Lee" not in content and content.count(LEDE) == 1


@pytest.mark.req("REQ-FETCH-002")
def test_a_subtitle_is_the_standfirst_written_as_a_paragraph() -> None:
    root = _root(
        "<body><section><div class='wrap'><h1>" + TITLE + "</h1></div>"
        "<h2 class='subtitle'>Three years, one wall and a town's savings</h2></section>"
        "<div>" + BODY + "</div></body>"
    )
    markdown = "Body text."
    assert (
        with_lede(markdown, root, f"Harbour News | {TITLE}")
        == "Three years, one wall and a town's savings\n\nBody text."
    )


@pytest.mark.parametrize(
    ("page", "title", "markdown"),
    [
        # the result starts at the header: it holds the title already
        (_header_page(f"<p>{LEDE}</p>"), TITLE, f"# {TITLE}\n\nBody text."),
        # the lede is in the result already
        (_header_page(f"<p>{LEDE}</p>"), TITLE, f"{LEDE}\n\nBody text."),
        # the <h1> is not the page's title
        (_header_page(f"<p>{LEDE}</p>"), "Something else entirely", "Body text."),
        # the <h1> is the site's name, the smaller part of the title
        (_header_page(f"<p>{LEDE}</p>", h1="Harbour News"), f"{TITLE} | Harbour News", "Body."),
        # the <h1> is a link: a logo
        (
            _header_page(f"<p>{LEDE}</p>", h1=f"<a href='/'>{TITLE}</a>"),
            TITLE,
            "Body text.",
        ),
        # two <h1> with text: which one is the article's is not plain
        (_header_page(f"<p>{LEDE}</p>", more="<h1>Another title here</h1>"), TITLE, "Body."),
        # a line of the header's metadata, a line of links, a paragraph that is no sentence
        (_header_page(f"<p class='post-meta'>{LEDE}</p>"), TITLE, "Body text."),
        (
            _header_page(f"<p><a href='/a'>{LEDE}</a> and more words in it.</p>"),
            TITLE,
            "Body text.",
        ),
        (_header_page("<p>Filed under harbours, storms and the town council</p>"), TITLE, "Body."),
    ],
)
def test_no_standfirst_is_added_unless_the_header_is_plainly_the_articles(
    page: str, title: str, markdown: str
) -> None:
    assert with_lede(markdown, _root(page), title) == markdown


@pytest.mark.req("REQ-FETCH-002")
def test_a_label_left_at_the_end_with_nothing_to_label_goes() -> None:
    # trafilatura kept the line that introduced the related posts, and the head of a box of
    # links, but not the posts or the links.
    page = (
        "<body><article>" + BODY + "<p>You may also like:</p><ul><li><a href='/x'>Other post"
        "</a></li></ul><div class='box'><div class='head'>Further reading<br></div>"
        "<div class='inner'><a href='/y'>Personal Leadership</a></div></div></article></body>"
    )
    root = _root(page)
    assert without_dangling_end("Body.\n\n**You may also like:**", root) == "Body."
    assert without_dangling_end("Body.\n\nFurther reading", root) == "Body."
    assert without_dangling_end("Body.\n\n**Further reading**", root) == "Body."  # bold
    assert without_dangling_end("Body.\n\nYou may also like:\n\nFurther reading", root) == "Body."


@pytest.mark.req("REQ-FETCH-002")
def test_a_heading_goes_only_when_its_section_was_left_out() -> None:
    page = (
        "<body><article>" + BODY + "<h2>Related articles</h2><ul><li><a href='/x'>Other</a></li>"
        "</ul><section><h2>Gallery</h2><img src='/a.png'></section><h2>Last words</h2>"
        "</article></body>"
    )
    root = _root(page)
    assert without_dangling_end("Body.\n\n## Related articles", root) == "Body."
    # a heading over pictures only, or over nothing, is the page's own
    assert without_dangling_end("Body.\n\n## Gallery", root) == "Body.\n\n## Gallery"
    assert without_dangling_end("Body.\n\n## Last words", root) == "Body.\n\n## Last words"


@pytest.mark.req("REQ-FETCH-002")
@pytest.mark.parametrize(
    "notice",
    [
        # CNN's wire copy and site footer, Scripps' footer (newspaper4k's test pages)
        "™ & © 2013 Cable News Network, Inc., a Time Warner Company. All rights reserved.",
        "© 2014  Cable News Network. [Turner Broadcasting System, Inc.](http://www.turner.com/)",
        "Copyright 2023 Scripps Media, Inc. All rights reserved.",
        "Copyright © 2001-2024 Example Corp",
        "*(c) 2020 The Daily Example*",
        "Todos los derechos reservados.",
    ],
)
def test_a_copyright_notice_at_the_end_goes(notice: str) -> None:
    root = _root("<body><article>" + BODY + "</article></body>")
    assert without_dangling_end(f"Body.\n\nByline\n\n{notice}", root) == "Body.\n\nByline"


_RELATED = (
    "- [Other story](https://e.org/1) (2018/6/18)\n- [Second story](https://e.org/2)\n"
    "- \n[Third story](https://e.org/3) \uff082018/6/15\uff09"
)


@pytest.mark.req("REQ-FETCH-002")
def test_a_list_of_links_nothing_introduces_at_the_end_goes() -> None:
    # Nikkei (newspaper4k's set): the related stories under a teaser, each a link and a date.
    root = _root("<body><article>" + BODY + "</article></body>")
    assert without_dangling_end(f"Body.\n\n{_RELATED}", root) == "Body."
    assert without_dangling_end(f"Body.\n\n{_RELATED}\n\n© 2018 Nikkei", root) == "Body."


@pytest.mark.req("REQ-FETCH-002")
@pytest.mark.parametrize(
    "heading",
    [
        "### 関連キーワード",
        "## Related articles",
        "## Read more",
        "#### Lesen Sie auch",
        "## À lire aussi",
    ],
)
def test_a_list_of_links_under_a_heading_that_names_other_stories_goes_with_it(
    heading: str,
) -> None:
    # Nikkei (newspaper4k's set), read with its headings: "Related keywords" over the links.
    root = _root("<body><article>" + BODY + "</article></body>")
    assert without_dangling_end(f"Body.\n\n{heading}\n\n{_RELATED}", root) == "Body."


@pytest.mark.parametrize(
    "markdown",
    [
        f"Body.\n\n## See also\n\n{_RELATED}",  # the author's: introduced by a heading
        f"Body.\n\n## Further reading\n\n{_RELATED}",
        f"Body.\n\n## Related work in this thesis, chapter by chapter\n\n{_RELATED}",  # too long
        f"Body.\n\n**References:**\n\n{_RELATED}",  # or by a label
        "Body.\n\n- [One](https://e.org/1)\n- [Two](https://e.org/2)",  # two links: a pair
        # items with more than a link and a date: the author's list
        "Body.\n\n- [One](https://e.org/1), the first parser we tried on real pages\n- [Two](https://e.org/2)"
        "\n- [Three](https://e.org/3)",
        "Body.\n\n- [One](https://e.org/1) and [Two](https://e.org/2)\n- [Three](https://e.org/3)"
        "\n- [Four](https://e.org/4)",
        f"{_RELATED}",  # the only block there is
        # an item longer than a link and a date (the search stops there, whatever it holds)
        "Body.\n\n- [One](https://e.org/1)\n- [Two](https://e.org/2)\n- [x](https://e.org/"
        + "\\[" * 2000
        + ")",
        f"Body.\n\n{_RELATED}\n\nThe end of the story",  # not at the end
    ],
)
def test_other_lists_of_links_stay(markdown: str) -> None:
    root = _root("<body><article>" + BODY + "<p>The end of the story</p></article></body>")
    assert without_dangling_end(markdown, root) == markdown


@pytest.mark.parametrize(
    "markdown",
    [
        "Body.\n\nThe end of the story",  # not the head of a box of links in the page
        "Body.\n\n- an item that ends with:",  # a list item
        "Body.\n\n```\nfor x in y:\n```",  # several lines
        "Only a label:",  # the only block there is
        "Body.\n\nSee the notes: they matter.",  # a sentence, not a label
        "Body.\n\nCopyright law changed in 2019.",  # a sentence about copyright
        "Body.\n\nThe © sign was first used in 1909.",
        "© 2014 Cable News Network.",  # the only block there is
        "Body.\n\n© 2014 Example.\n\nThe end of the story",  # not at the end
        # the section of a heading: a site's terms (Readability's getpocket-tos page)
        "Body.\n\n## COPYRIGHT NOTICE\n\nCopyright © 2012-2015 Read It Later, Inc.",
    ],
)
def test_other_last_blocks_stay(markdown: str) -> None:
    root = _root("<body><article>" + BODY + "<p>The end of the story</p></article></body>")
    assert without_dangling_end(markdown, root) == markdown
