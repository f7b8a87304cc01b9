"""A page's controls read as a reader reads them (REQ-FETCH-002, REQ-FETCH-004)."""

from __future__ import annotations

import pytest
from lxml import etree

from rypsok.fetch.controls import settle_controls, unwrap
from rypsok.fetch.parse import parse_html
from tests.fetch.jobs import job_result

PAGE = "https://docs.e.org/api/page.html"
ARTICLE = "<p>" + "The module's documentation, long enough to be the article. " * 6 + "</p>"


def _settled(body: str) -> etree._Element:
    parsed = parse_html(f"<html><body>{body}</body></html>")
    assert parsed.root is not None
    settle_controls(parsed.root, PAGE)
    body_element = parsed.root.find("body")
    assert body_element is not None
    return body_element


def _markup(element: etree._Element) -> str:
    return etree.tostring(element, encoding="unicode", with_tail=False)


@pytest.mark.req("REQ-FETCH-004")
def test_a_button_inside_a_code_block_is_not_code() -> None:
    # Node.js: <button class="copy-button">copy</button> ends every <pre>.
    body = _settled("<pre><code>let a = 1;</code><button>copy</button>\n</pre>")
    assert _markup(body) == "<body><pre><code>let a = 1;</code>\n</pre></body>"
    content = job_result(
        f"<main><h1>Buffers</h1>{ARTICLE}<pre><code>let a = 1;</code>"
        "<button class='copy-button'>copy</button></pre>" + ARTICLE + "</main>"
    ).content
    assert "```\nlet a = 1;\n```" in content
    assert "copy" not in content


@pytest.mark.req("REQ-FETCH-004")
def test_a_code_block_of_several_programs_becomes_one_block_each() -> None:
    # Node.js: the ES module and the CommonJS example in one <pre>, one shown at a time.
    body = _settled(
        "<pre class='x'><input type='checkbox'><code class='mjs'>import a from 'a';</code>"
        "<code class='cjs'>const a = require('a');</code><button>copy</button></pre>after"
    )
    assert _markup(body) == (
        '<body><pre class="x"><input type="checkbox"/><code class="mjs">import a from'
        " 'a';</code></pre><pre class=\"x\"><code class=\"cjs\">const a = require('a');</code>"
        "</pre>after</body>"
    )
    content = job_result(
        f"<main><h1>Modules</h1>{ARTICLE}<pre><code>import a from 'a';</code>"
        f"<code>const a = require('a');</code></pre>{ARTICLE}</main>"
    ).content
    assert "```\nimport a from 'a';\n```\n\n```\nconst a = require('a');\n```" in content


@pytest.mark.parametrize(
    "pre",
    [
        "<pre><code>a</code> and <code>b</code></pre>",  # text between: inline code in prose
        "<pre>lead <code>a</code><code>b</code></pre>",
        "<pre><code>a</code><b>bold</b><code>b</code></pre>",
        "<pre><code>only one</code></pre>",
    ],
)
def test_other_code_blocks_stay_whole(pre: str) -> None:
    body = _settled(pre)
    assert len(body.findall("pre")) == 1
    assert _markup(body) == f"<body>{pre}</body>"


@pytest.mark.req("REQ-FETCH-002")
def test_an_accordions_questions_are_kept_as_headings() -> None:
    # The WAI-ARIA accordion (Bootstrap's): each question is a button in a heading, and
    # trafilatura drops every button.
    items = "".join(
        f"<div class='accordion-item'><h2 class='accordion-header'><button type='button' "
        f"aria-expanded='false'>How do I reset setting {i}?</button></h2><div class='collapse'>"
        f"<div>Answer {i}: press the button on the back and wait for a while.</div></div></div>"
        for i in range(4)
    )
    content = job_result(f"<main><h1>Questions</h1>{ARTICLE}{items}</main>").content
    for i in range(4):
        assert f"## How do I reset setting {i}?\n\nAnswer {i}: press the button" in content


@pytest.mark.req("REQ-FETCH-004")
def test_a_button_beside_a_headings_text_is_a_control() -> None:
    # rustdoc: "Copy item path" beside the title.
    body = _settled("<h1>Function <span>read</span> <button>Copy item path</button></h1>")
    assert _markup(body) == "<body><h1>Function <span>read</span> </h1></body>"
    body = _settled("<h2><button><b>Why</b> this?</button></h2><h3><button></button></h3>")
    assert _markup(body) == "<body><h2><b>Why</b> this?</h2><h3/></body>"


@pytest.mark.req("REQ-FETCH-004")
def test_a_headings_link_to_itself_is_its_text() -> None:
    # mdBook: <h2 id="x"><a class="header" href="#x">...</a></h2>, made absolute by then.
    body = _settled(
        f"<h2 id='x'><a class='header' href='{PAGE}#x'>Hash <code>Maps</code></a> tail</h2>"
        "<h3><a href='https://docs.e.org/api/other.html#x'>Elsewhere</a></h3>"
        f"<p><a href='{PAGE}#x'>In the text</a></p>"
    )
    assert _markup(body) == (
        '<body><h2 id="x">Hash <code>Maps</code> tail</h2>'
        '<h3><a href="https://docs.e.org/api/other.html#x">Elsewhere</a></h3>'
        f'<p><a href="{PAGE}#x">In the text</a></p></body>'
    )
    content = job_result(
        f"<main><h1>Maps</h1>{ARTICLE}<h2 id='x'><a class='header' href='#x'>Creating a map</a>"
        f"</h2>{ARTICLE}<h2 id='y'><a href='#y'>Reading a map</a></h2>{ARTICLE}</main>",
        url=PAGE,
    ).content
    assert "\n## Creating a map\n" in content and "\n## Reading a map\n" in content


@pytest.mark.req("REQ-FETCH-004")
def test_marks_that_lead_around_the_page_are_removed() -> None:
    # rustdoc's "§" beside (not inside) a heading, a footnote's way back, "back to top".
    body = _settled(
        f"<section><a href='{PAGE}#impl' class='anchor'>\u00a7</a><h3>impl Clone</h3></section>"
        f"<p>Text<sup><a href='{PAGE}#fn1'>1</a></sup> end.</p>"
        f"<ol><li id='fn1'>The note. <a href='{PAGE}#r1'>\u21a9</a></li></ol>"
        f"<p><a href='{PAGE}#top'>\u2191</a> <a href='https://docs.e.org/other.html#x'>\u00b6</a></p>"
    )
    assert _markup(body) == (
        "<body><section><h3>impl Clone</h3></section>"
        f'<p>Text<sup><a href="{PAGE}#fn1">1</a></sup> end.</p>'
        '<ol><li id="fn1">The note. </li></ol>'
        '<p> <a href="https://docs.e.org/other.html#x">\u00b6</a></p></body>'
    )


@pytest.mark.req("REQ-FETCH-004")
def test_a_summary_that_holds_a_heading_is_that_heading() -> None:
    # rustdoc: each method's heading, version and "Source" link in one <summary>, which
    # trafilatura writes as a heading of its own ("## 1.0.0 · [Source](...)").
    methods = "".join(
        f"<details open><summary><section id='m{i}'><span class='rightside'><span>1.0.{i}</span>"
        f" \u00b7 <a href='https://src.e.org/{i}'>Source</a></span><h4>pub fn method_{i}"
        f"(&amp;self)</h4></section></summary><div class='docblock'><p>Method {i} returns "
        "whether the permissions describe a file nobody may write to.</p></div></details>"
        for i in range(3)
    )
    content = job_result(f"<main><h1>Struct Permissions</h1>{ARTICLE}{methods}</main>").content
    headings = [line for line in content.splitlines() if line.startswith("#")]
    assert headings == ["# Struct Permissions"] + [
        f"#### pub fn method\\_{i}(&self)" for i in range(3)
    ]
    assert "Method 2 returns whether" in content
    # A summary without a heading is still the question of its <details>.
    faq = "".join(
        f"<details><summary>Can I pay by card {i}?</summary><p>Yes, every card we know of, "
        "and by bank transfer too.</p></details>"
        for i in range(3)
    )
    content = job_result(f"<main><h1>Payment</h1>{ARTICLE}{faq}</main>").content
    assert "## Can I pay by card 2?" in content


@pytest.mark.parametrize(
    ("markup", "unwrapped"),
    [
        ("<p>a<a>b</a>c</p>", "<p>abc</p>"),
        ("<p><a>b</a>c</p>", "<p>bc</p>"),
        ("<p>x<i>i</i><a>b<b>B</b>t</a>c</p>", "<p>x<i>i</i>b<b>B</b>tc</p>"),
        ("<p><a><b>B</b></a></p>", "<p><b>B</b></p>"),
    ],
)
def test_unwrap_keeps_text_children_and_tail_in_place(markup: str, unwrapped: str) -> None:
    element = etree.fromstring(markup)
    link = element.find(".//a")
    assert link is not None
    unwrap(link)
    assert etree.tostring(element, encoding="unicode") == unwrapped
