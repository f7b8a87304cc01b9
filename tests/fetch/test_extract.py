"""Main content and title (REQ-FETCH-002/004, REQ-PAGE-002)."""

from __future__ import annotations

import pytest

from rypsok.fetch import extract
from rypsok.fetch.extract import bound_title, main_markdown, page_title
from rypsok.fetch.markdown import to_markdown
from rypsok.fetch.parse import parse_html
from rypsok.fetch.pipeline import run
from rypsok.fetch.protocol import WireResult

ARTICLE = "<p>" + "A sentence of the article, long enough to count as content. " * 10 + "</p>"


def _root(page: str):  # type: ignore[no-untyped-def]
    parsed = parse_html(page)
    assert parsed.root is not None
    return parsed.root


@pytest.mark.parametrize(
    ("page", "title"),
    [
        (
            "<title> The  title </title><meta property='og:title' content='OG'><h1>H1</h1>",
            "The title",
        ),
        ("<meta property='og:title' content='OG title'><h1>H1</h1>", "OG title"),
        ("<h1>Only <b>h1</b></h1>", "Only h1"),
        ("<p>nothing</p>", None),
    ],
)
def test_the_title_comes_from_title_og_title_or_h1(page: str, title: str | None) -> None:
    assert page_title(_root(page)) == title


def test_a_long_title_is_bounded_at_a_word() -> None:
    title, cut = bound_title("word " * 100)
    assert cut and title is not None and len(title) <= 200 and not title.endswith(" ")
    assert bound_title("short") == ("short", False)


@pytest.mark.req("REQ-FETCH-004")
def test_trafilatura_output_keeps_ampersands_as_written() -> None:
    page = (
        "<main><h1>Entities</h1>"
        + ARTICLE
        + "<p>Literal &amp;lt;b&amp;gt; and AT&amp;T and &amp;sect; text, "
        + "<a href='https://e.org/w?title=A&amp;section=1&amp;copy=2'>edit</a>.</p></main>"
    )
    content = main_markdown(_root(page), "https://e.org/").markdown
    assert "Literal &lt;b&gt; and AT&T and &sect; text" in content
    assert "(https://e.org/w?title=A&section=1&copy=2)" in content


def test_a_big_tree_skips_trafilatura(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(extract, "TRAFILATURA_MAX_ELEMENTS", 5)

    def forbidden(*args: object, **kwargs: object) -> str:
        raise AssertionError("trafilatura must not run on a tree beyond the bound")

    monkeypatch.setattr(extract.trafilatura, "extract", forbidden)
    found = main_markdown(_root("<main><h1>Big</h1>" + ARTICLE * 3 + "</main>"), "https://e.org/")
    assert found.method == "fallback"
    assert found.markdown.startswith("# Big")


def test_the_fallback_reads_pages_trafilatura_returns_nothing_for(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(extract.trafilatura, "extract", lambda *a, **k: None)
    page = "<div id='nav'><a href='/'>Home</a></div><div class='content'><h1>T</h1>" + ARTICLE
    found = main_markdown(_root(page + "</div>"), "https://e.org/")
    assert found.method == "fallback"
    assert "A sentence of the article" in found.markdown
    assert "Home" not in found.markdown


def test_the_fallback_keeps_all_posts_of_a_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(extract.trafilatura, "extract", lambda *a, **k: None)
    posts = "".join(
        f"<div class='post'><div class='postbody'><p>Post number {n}, with its own text, "
        "long enough to be a paragraph of the thread.</p></div></div>"
        for n in range(5)
    )
    found = main_markdown(_root(f"<div id='page-body'>{posts}</div>"), "https://e.org/")
    for n in range(5):
        assert f"Post number {n}" in found.markdown


@pytest.mark.req("REQ-FETCH-004")
def test_the_markdown_renderer_keeps_the_structure() -> None:
    page = (
        "<div><h2>Head</h2><p>Para with <a href='https://e.org/'>a link</a>, <b>bold</b>, "
        "<i>italic</i> and <code>code</code>.</p><ul><li>one<ul><li>nested</li></ul></li>"
        "<li>two</li></ul><ol><li>first</li></ol><pre>x = 1\ny = 2</pre>"
        "<blockquote><p>quoted</p></blockquote><table><tr><th>a</th><th>b|c</th></tr>"
        "<tr><td>1</td><td>2</td></tr></table><p># not a heading</p></div>"
    )
    parsed = parse_html(page)
    assert parsed.root is not None
    body = parsed.root.find("body")
    assert to_markdown(body) == (
        "## Head\n\n"
        "Para with [a link](https://e.org/), **bold**, *italic* and `code`.\n\n"
        "- one\n  - nested\n- two\n\n"
        "1. first\n\n"
        "```\nx = 1\ny = 2\n```\n\n"
        "> quoted\n\n"
        "| a | b\\|c |\n|---|---|\n| 1 | 2 |\n\n"
        "\\# not a heading"
    )


@pytest.mark.req("REQ-PAGE-006")
def test_a_page_with_nothing_to_extract_fails() -> None:
    for page in (
        b"",
        b"<html><body></body></html>",
        b"<script>only()</script>",
        b"<div hidden>all hidden</div>",
    ):
        result = run({"content_type": "text/html", "url": "https://e.org/"}, page)
        assert result.status == "error"
        assert result.reason == "extraction_failed"


def test_the_pipeline_reports_its_method() -> None:
    result = run(
        {"content_type": "text/html", "url": "https://e.org/"},
        f"<main><h1>T</h1>{ARTICLE}</main>".encode(),
    )
    assert isinstance(result, WireResult)
    assert result.method == "trafilatura"
