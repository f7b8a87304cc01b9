"""Main content and title (REQ-FETCH-002/004, REQ-PAGE-002)."""

from __future__ import annotations

import re

import pytest
import trafilatura
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from rypsok.fetch import extract, trafilatura_markdown
from rypsok.fetch.extract import bound_title, main_markdown, page_title
from rypsok.fetch.markdown import to_markdown
from rypsok.fetch.parse import parse_html
from rypsok.fetch.pipeline import run
from tests.fetch.jobs import job_result

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
    content = main_markdown(_root(page)).markdown
    assert "Literal &lt;b&gt; and AT&T and &sect; text" in content
    assert "(https://e.org/w?title=A&section=1&copy=2)" in content


def _code_page(block: str) -> str:
    return f"<main><h1>Code</h1>{ARTICLE}{block}{ARTICLE}</main>"


@pytest.mark.req("REQ-FETCH-002")
def test_preformatted_text_is_a_fenced_block_however_it_is_highlighted() -> None:
    # Python-Markdown's "codehilite" class: trafilatura alone renders this as prose, with the
    # underscore escaped (override\_settings) and the blank line lost.
    block = (
        "<div class='codehilite'><pre><span class='kn'>from</span> <span class='nn'>django"
        "</span> <span class='kn'>import</span> <span class='n'>override_settings</span>\n\n"
        "<span class='nd'>@override_settings</span>(DEBUG=<span class='kc'>True</span>)\n"
        "<span class='k'>def</span> <span class='nf'>test_a</span>(*args):\n"
        "    <span class='k'>pass</span>\n</pre></div>"
    )
    content = main_markdown(_root(_code_page(block))).markdown
    assert (
        "```\nfrom django import override_settings\n\n"
        "@override_settings(DEBUG=True)\ndef test_a(*args):\n    pass\n```"
    ) in content


@pytest.mark.req("REQ-FETCH-002")
def test_a_code_block_keeps_its_blank_lines_and_its_br_lines() -> None:
    block = (
        "<pre><code class='language-c'><span>// add.c</span><br><br>int add(int x)<br>"
        "{<br>  return x;<br>}</code></pre><pre>first\n\n\nsecond\n   \nthird</pre>"
    )
    content = main_markdown(_root(_code_page(block))).markdown
    assert "```\n// add.c\n\nint add(int x)\n{\n  return x;\n}\n```" in content
    assert "```\nfirst\n\n\nsecond\n\nthird\n```" in content


@pytest.mark.req("REQ-FETCH-002")
def test_the_text_after_a_code_block_is_kept() -> None:
    # trafilatura drops the text that follows a code block in the same parent.
    for block in (
        "<div><pre>make</pre> and then the tail sentence.</div>",
        "<pre>make</pre> and then the tail sentence.",
        "<div class='highlight'><pre>make</pre></div> and then the tail sentence.",
    ):
        content = main_markdown(_root(_code_page(block))).markdown
        assert "```\nmake\n```\n\nand then the tail sentence." in content, block


@pytest.mark.req("REQ-FETCH-004")
def test_an_empty_pre_is_no_code_block() -> None:
    # Nothing to fence: trafilatura would write an empty fence. The text after it stays.
    content = main_markdown(_root(_code_page("<pre>  \n\n </pre> and the tail text."))).markdown
    assert "```" not in content
    assert "and the tail text." in content


@pytest.mark.req("REQ-FETCH-004")
def test_a_code_block_is_set_apart_from_what_follows_by_a_blank_line() -> None:
    # trafilatura writes the next block on the line right after the closing fence; a blank
    # line inside the block is not taken for the end of it.
    block = "<pre>first\n\nsecond</pre><h2>Next</h2><p>After the block.</p>"
    content = main_markdown(_root(_code_page(block))).markdown
    assert "```\nfirst\n\nsecond\n```\n\n## Next\n\n" in content
    assert trafilatura_markdown._spaced_blocks("```py\na\n\n\n```\nb\n\n\n\nc\n```\nd\n```") == (
        "```py\na\n\n\n```\n\nb\n\nc\n```\nd\n```"
    )
    assert trafilatura_markdown._spaced_blocks("a\n\n \n\nb\n\nc") == "a\n\nb\n\nc"


@pytest.mark.req("REQ-FETCH-002")
def test_a_figure_of_code_or_text_is_kept_and_one_of_images_is_not() -> None:
    # trafilatura deletes every <figure> but one holding a table: Jekyll writes each code
    # block as <figure class="highlight">, so all the code of such a blog post vanished.
    body = (
        "<figure class='highlight'><pre><code class='language-ruby' data-lang='ruby'>"
        "<span class='k'>def</span> foo\n  puts 1\n<span class='k'>end</span></code></pre>"
        "</figure><figure><pre>make all</pre><figcaption>Listing 2: the build</figcaption>"
        "</figure><figure class='wp-block-pullquote'><blockquote><p>Ports are cities."
        "</p><cite>A harbour master</cite></blockquote></figure>"
        "<figure><img src='chart.png' alt='chart'><figcaption>IMAGE-CAPTION</figcaption>"
        "</figure>"
    )
    content = _article_content(ARTICLE + body + ARTICLE)
    assert "```\ndef foo\n  puts 1\nend\n```" in content
    assert "```\nmake all\n```\n\nListing 2: the build" in content
    assert "Ports are cities." in content and "A harbour master" in content
    assert "IMAGE-CAPTION" not in content  # an illustration's caption stays out, as before


@pytest.mark.req("REQ-FETCH-004")
def test_a_link_without_a_target_is_its_text() -> None:
    # mailto:, tel: and javascript: targets are removed (clean.absolutize_links); trafilatura
    # wrote what was left as "[text]", brackets around nothing to follow.
    body = (
        "<p>Write to <a href='mailto:desk@example.org'>desk@example.org</a>, call <a "
        "href='tel:+4930123'>030 123</a>, <a href='javascript:void(0)'>open the form</a> or "
        "read <a name='x'>the notes</a> and <a href='/faq'>the FAQ</a> today.</p>"
    )
    content = _article_content(ARTICLE + body + ARTICLE)
    assert (
        "Write to desk@example.org, call 030 123, open the form or read the notes and "
        "[the FAQ](https://e.org/faq) today."
    ) in content


def _list_shape(markdown: str) -> list[tuple[int, str]]:
    """Each list item of ``markdown`` as a CommonMark reader nests it: (depth, its first text)."""
    shape: list[tuple[int, str]] = []
    depth = 0
    tokens = MarkdownIt("commonmark").parse(markdown)
    for index, token in enumerate(tokens):
        if token.type in ("bullet_list_open", "ordered_list_open"):
            depth += 1
        elif token.type in ("bullet_list_close", "ordered_list_close"):
            depth -= 1
        elif token.type == "list_item_open":
            text = next(t.content for t in tokens[index:] if t.type == "inline")
            shape.append((depth, text.split()[0]))
    return shape


@pytest.mark.req("REQ-FETCH-004")
def test_a_nested_list_stays_nested_under_a_numbered_item() -> None:
    # trafilatura indents a nested item by two spaces per level: under "1. " or "10. " a
    # CommonMark reader takes it for an item of the outer list.
    ten = "".join(f"<li>step{number} of the list</li>" for number in range(1, 10))
    body = (
        f"<ol>{ten}<li>step10 with parts<ol><li>part1 first<ul><li>bullet under part1</li></ul>"
        "after1 the bullets</li><li>part2 second</li></ol>after10 the parts</li>"
        "<li>step11 last</li></ol><ul><li>bullet with<ol><li>numbered under bullet</li></ol>"
        "</li></ul><ol><li>alpha<br>beta on the next line<ol><li>gamma</li></ol></li></ol>"
        "<pre>  1. a code line\n    2. stays as it is</pre>"
    )
    content = _article_content(ARTICLE + body + ARTICLE)
    assert _list_shape(content) == [
        *((1, f"step{number}") for number in range(1, 11)),
        (2, "part1"),
        (3, "bullet"),
        (2, "part2"),
        (1, "step11"),
        (1, "bullet"),
        (2, "numbered"),
        (1, "alpha"),
        (2, "gamma"),
    ]
    # The text after a nested list stays in the item it belongs to.
    assert "\n       after1 the bullets\n" in content
    assert "\n    after10 the parts\n" in content
    assert "  1. a code line\n    2. stays as it is" in content


@pytest.mark.req("REQ-FETCH-002")
def test_a_div_that_starts_with_inline_markup_keeps_its_spaces() -> None:
    # trafilatura wrote such a div's children one by one, without the space after each
    # (between two <p> the div is a paragraph already: _paragraph_divs).
    body = (
        "<div><b>Figure 1:</b> the chart of the tides.</div>"
        "<div><a href='/t'>Tide tables</a> for the <em>whole</em> year.</div>"
    )
    content = _article_content(ARTICLE + body)
    assert "**Figure 1:** the chart of the tides." in content
    assert "[Tide tables](https://e.org/t) for the *whole* year." in content
    assert "\u2420" not in content


@pytest.mark.req("REQ-FETCH-002")
def test_text_between_the_blocks_of_a_div_is_kept_whole() -> None:
    # Paragraphs written with <br> in a div that also holds a heading: trafilatura wrote the
    # div's children one by one and lost the text after a link (a page of its own evaluation
    # set lost most of a paragraph), and glued a word to the emphasis before it.
    filler = "The review goes through the book chapter by chapter, as readers expect. " * 3
    body = (
        f"<div class='entry'>{filler}<br><h2>Contents</h2><br>"
        "A look at the table of contents (<a href='/toc.pdf'>PDF</a>) shows that few "
        f"questions stay open. {filler}<br><br>"
        f"The <em>actual </em>end of the book is a list of rulings. {filler}<br><br>"
        "<div class='date'>On <time>6 November</time></div>"
        f"{filler}</div>"
    )
    content = _article_content(body)
    assert (
        "A look at the table of contents ([PDF](https://e.org/toc.pdf)) shows that few "
        "questions stay open." in content
    )
    assert "The *actual* end of the book is a list of rulings." in content
    assert "## Contents" in content
    # Without the step: trafilatura's own output of the same page (the reason for it).
    page = f"<html><body><article><h1>Title</h1>{body}</article></body></html>"
    plain = trafilatura.extract(page, **trafilatura_markdown.TRAFILATURA_OPTIONS) or ""
    assert "shows that few questions stay open" not in plain


@pytest.mark.req("REQ-FETCH-002")
def test_a_list_without_items_is_an_indented_paragraph() -> None:
    # Old pages indent a paragraph with <ul> and no <li>; trafilatura made it a bullet cut at
    # the first inline element (the rest lost, or glued to the emphasis before it).
    body = (
        ARTICLE + "<ul> (My eventual goal is to <i>create</i> video, but I figured I would "
        "start with <i>playback</i> first.) </ul>" + ARTICLE + "<ol><li>one</li><li>two</li></ol>"
    )
    content = _article_content(body)
    assert (
        "\n(My eventual goal is to *create* video, but I figured I would start with *playback* "
        "first.)\n" in content
    )
    assert "1. one\n2. two" in content


@pytest.mark.req("REQ-FETCH-002")
def test_a_bar_of_links_is_navigation_and_a_sentence_of_links_is_not() -> None:
    # A news site's footer bars, which trafilatura's recall setting kept inside the block it
    # took (CNN's pages of newspaper4k's set); the pass over its Markdown output. The page the
    # bar is on may stand in it unlinked (CNN Arabic's "Latest news" services).
    markdown = (
        "The story.\n\n[Home](https://e.org/) | [Video](https://e.org/v) | "
        "[U.S.](<https://e.org/u s>)\n\n[RSS](https://e.org/r) \u00b7 [Blogs](https://e.org/b)"
        " \u2022 [Shop](https://e.org/s)\n\nLatest news | [Email](https://e.org/e) | "
        "[RSS](https://e.org/r) | [Mobile](https://e.org/m)\u00a0|\u00a0[Twitter](https://e.org/t)\n\n"
        "See [Alpha](https://e.org/a), [Beta](https://e.org/b)"
        " and [Gamma](https://e.org/c).\n\n[One](https://e.org/1) | [Two](https://e.org/2)\n\n"
        "| [a](https://e.org/a) | [b](https://e.org/b) | [c](https://e.org/c) |\n\nThe end."
    )
    assert trafilatura_markdown._without_link_bars(markdown) == (
        "The story.\n\n\n\n\nSee [Alpha](https://e.org/a), [Beta](https://e.org/b) and "
        "[Gamma](https://e.org/c).\n\n[One](https://e.org/1) | [Two](https://e.org/2)\n\n"
        "| [a](https://e.org/a) | [b](https://e.org/b) | [c](https://e.org/c) |\n\nThe end."
    )


@pytest.mark.req("REQ-FETCH-002")
def test_a_short_label_between_blocks_is_not_made_a_paragraph() -> None:
    # "Le" before a date (a div of one word and a block): a paragraph of its own would be noise.
    body = ARTICLE + "<div class='when'>Le <div><time>6 Nov</time> 2019</div></div>" + ARTICLE
    content = _article_content(body)
    assert not re.search(r"^Le$", content, re.MULTILINE)


@pytest.mark.req("REQ-FETCH-002")
def test_a_paragraph_shown_twice_in_a_row_is_kept_twice() -> None:
    # trafilatura deletes a block that repeats the one before it (its guard against its own
    # overlapping candidates): a page that shows a paragraph twice lost the second.
    twice = "The tide tables for the harbour are published every morning at six o'clock."
    body = f"<p>{twice}</p><p>{twice}</p><div>{twice} Once.</div><div>{twice} Once.</div>"
    content = _article_content(ARTICLE + body + ARTICLE)
    assert content.count(twice) == 4
    assert "\u241f" not in content


def test_the_same_text_in_two_classes_is_shown_once() -> None:
    # One text written for two screen sizes, of which a browser shows one: trafilatura's guard
    # still applies to it.
    twice = "The tide tables for the harbour are published every morning at six o'clock."
    body = f"<p class='md:hidden'>{twice}</p><p class='hidden md:block'>{twice}</p>"
    content = _article_content(ARTICLE + body + ARTICLE)
    assert content.count(twice) == 1


@pytest.mark.req("REQ-FETCH-004")
def test_a_quote_is_marked_as_a_quote() -> None:
    # trafilatura writes a <blockquote> as plain paragraphs: a quoted person's words read as
    # the page's own. It also takes an inline <q> for a block and breaks the sentence there.
    body = (
        "<blockquote><p>Ports are cities.</p><p>Cities are ports.</p>"
        "<blockquote><p>Inner quote.</p></blockquote><ul><li>listed</li></ul>"
        "<p>One line<br>and the next</p><h3>Quoted heading</h3><p># not a heading</p>"
        "</blockquote><p>She said <q>tides <em>turn</em></q> and left.</p>"
        "<blockquote>Quoted run <b>in bold</b> without a paragraph.</blockquote>"
        "<blockquote><div><strong>Said:</strong> words in a div.</div><div><p>A paragraph in "
        "a div.</p></div></blockquote>"
    )
    content = _article_content(ARTICLE + body + ARTICLE)
    assert (
        "> Ports are cities.\n>\n> Cities are ports.\n>\n> > Inner quote.\n>\n> - listed\n>\n"
        "> One line\n>\n> and the next\n>\n> ### Quoted heading\n>\n> \\# not a heading"
    ) in content
    assert "She said \u201ctides *turn*\u201d and left." in content
    assert "> Quoted run **in bold** without a paragraph." in content
    assert "> **Said:** words in a div.\n> A paragraph in a div." in content


@pytest.mark.req("REQ-FETCH-004")
def test_a_code_block_in_a_quote_stands_between_its_parts() -> None:
    # Inside a quote trafilatura runs the code into the quote's text; split there, the code is
    # a fenced block and the quote goes on after it.
    body = (
        "<blockquote><p>Run this:</p><pre>make all\nmake test</pre><p>Then done.</p></blockquote>"
    )
    content = _article_content(ARTICLE + body + ARTICLE)
    assert "> Run this:" in content
    assert "```\nmake all\nmake test\n```\n\n> Then done." in content


@pytest.mark.req("REQ-FETCH-004")
def test_the_text_after_a_linked_picture_is_not_made_part_of_the_link() -> None:
    # trafilatura gave an empty link (a picture, which the content leaves out) the text after
    # it: the whole paragraph became one link to the picture.
    body = (
        "<p><a href='/big.jpg'><img src='/small.jpg' alt=''></a>Conflicts are everywhere, "
        "and here is how to talk them through.</p>"
        "<p>Licensed <a href='/cc'><img src='/cc.png' alt='CC'></a> under <a href='/by'>CC BY"
        "</a> (<a href='/x)y'><img src='/i.png'></a>see notes).</p>"
    )
    content = _article_content(ARTICLE + body + ARTICLE)
    assert "\nConflicts are everywhere, and here is how to talk them through." in "\n" + content
    assert "Licensed under [CC BY](https://e.org/by) (see notes)." in content
    assert "big.jpg" not in content and "x)y" not in content and "\u2421" not in content


@pytest.mark.req("REQ-FETCH-004")
def test_a_page_cannot_forge_a_quote_or_twin_mark() -> None:
    # rypsok's own marks (a quoted paragraph, a paragraph shown twice, a div's start) are taken
    # out of the page's text first.
    body = (
        "<p>\u241eNot a quote, \u241e\u241eeither, \u241fnor a \u241ftwin, \u2420nor a start, "
        "<a href='/a'>\u2421</a> nor [\u2421](/b) an empty link.</p>"
        "<ul><li><code>a</code> \u24220\u2422no\u2423 <a href='/t'>type</a></li>"
        "<li><code>b</code> <a href='/u'>kind</a> \u24221\u2422link\u2423</li></ul>"
        "<p>\u24250\u2425 not a list</p>"
    )
    content = _article_content(ARTICLE + body + ARTICLE)
    assert "Not a quote, either, nor a twin, nor a start, nor \\[\\](/b) an empty link." in content
    assert "- `a` 0no [type](https://e.org/t)\n- `b` [kind](https://e.org/u) 1link" in content
    assert not {">", "\u241e", "\u241f", "\u2420", "\u2421", "\u2422", "\u2423", "\u2425"} & set(
        content
    )


@pytest.mark.req("REQ-FETCH-004")
def test_a_definition_list_is_terms_and_their_definitions() -> None:
    # Sphinx's API reference and command-line option lists: trafilatura alone makes one flat
    # bullet list of terms and definitions, runs a definition's paragraphs together and
    # flattens a code block inside a definition into one line of prose.
    block = (
        "<dl class='py function'><dt class='sig sig-object py' id='json.dumps'>"
        "<span class='sig-prename descclassname'>json.</span><span class='sig-name'>dumps</span>"
        "(<em class='sig-param'>obj</em>, <em class='sig-param'>indent=None</em>)</dt>"
        "<dd><p>Serialize <em>obj</em> to a JSON formatted string.</p>"
        "<p>If <em>indent</em> is a number, the output is pretty-printed.</p>"
        "<div class='highlight-python3'><div class='highlight'><pre><span class='gp'>&gt;&gt;&gt; "
        "</span>json.dumps([1, 2])\n<span class='go'>'[1, 2]'</span>\n</pre></div></div></dd>"
        "<dt><b>--verbose</b> (repeatable)</dt><dd>Print more. Run <code>tool -v</code>: "
        "<pre>tool -vv build</pre> and read the log.</dd></dl>"
    )
    content = main_markdown(_root(_code_page(block))).markdown
    assert (
        "**json.dumps(*obj*, *indent=None*)**\n\n"
        "Serialize *obj* to a JSON formatted string.\n\n"
        "If *indent* is a number, the output is pretty-printed.\n\n"
        "```\n>>> json.dumps([1, 2])\n'[1, 2]'\n```\n\n"
    ) in content
    # A term with a bold of its own keeps it, not bold twice; a definition's own text around
    # a code block is paragraphs of its own.
    assert (
        "**--verbose** (repeatable)\n\nPrint more. Run `tool -v`:\n\n"
        "```\ntool -vv build\n```\n\nand read the log."
    ) in content
    assert "- " not in content


# E = m c^2 in presentation MathML, as LaTeXML (arXiv) and MediaWiki write it.
_EMC2 = "<mi>E</mi><mo>=</mo><mi>m</mi><msup><mi>c</mi><mn>2</mn></msup>"


@pytest.mark.req("REQ-FETCH-004")
def test_a_formula_is_its_tex_source_in_markdown_math() -> None:
    # <math> is not text, so it was removed with script and style: every formula of an arXiv
    # HTML paper (LaTeXML), a KaTeX page or a Wikipedia article vanished from the sentence.
    body = (
        f"<p>Energy <math alttext='E=mc^{{2}}' display='inline'><semantics><mrow>{_EMC2}</mrow>"
        "<annotation encoding='application/x-tex'>E=mc^{2}</annotation></semantics></math>"
        " holds for <math alttext='x_i'><msub><mi>x</mi><mi>i</mi></msub></math> as well.</p>"
        "<p>The sum is</p><math display='block' alttext='\\sum_{i=1}^{n} a_i'><munderover>"
        "<mo>&#8721;</mo><mrow><mi>i</mi><mo>=</mo><mn>1</mn></mrow><mi>n</mi></munderover>"
        "<msub><mi>a</mi><mi>i</mi></msub></math>"
        "<p>Area <span class='mwe-math-element'><span class='mwe-math-mathml-inline' style=''>"
        "<math alttext='{\\displaystyle A=\\pi r^{2}}'><mi>A</mi><mo>=</mo><mi>&#960;</mi>"
        "<msup><mi>r</mi><mn>2</mn></msup></math></span><img src='a.svg' aria-hidden='true'"
        " alt='{\\displaystyle A=\\pi r^{2}}'></span> of a circle.</p>"
        "<p>Plain <math><mi>x</mi><mo>+</mo><mn>1</mn></math> without TeX.</p>"
    )
    content = _article_content(ARTICLE + body + ARTICLE)
    assert "Energy $E=mc^{2}$ holds for $x_i$ as well." in content  # no escaped "_"
    assert "$$\n\\sum_{i=1}^{n} a_i\n$$" in content
    assert "Area $A=\\pi r^{2}$ of a circle." in content  # MediaWiki's wrapper dropped
    assert "Plain x+1 without TeX." in content


@pytest.mark.req("REQ-CTX-005")
def test_a_formula_never_carries_text_it_does_not_show() -> None:
    """A browser renders the MathML, never the annotation or alttext: a TeX source holding
    words the formula does not show is not used (it would be text no reader sees); the
    formula is then what it shows. A hidden formula is not returned at all.

    Proves THR-19.
    """
    body = (
        "<p>Forged <math><semantics><mi>x</mi><annotation encoding='application/x-tex'>"
        "x \\text{FORGED-TEX}</annotation></semantics></math> and "
        f"<math alttext='E=mc^2 FORGED-ALT'>{_EMC2}</math> end.</p>"
        "<p>Visible <span style='display: none'><math alttext='HIDDEN'><mi>HIDDEN</mi></math>"
        "</span><math hidden><mi>HIDDEN</mi></math> done.</p>"
    )
    content = _article_content(ARTICLE + body + ARTICLE)
    assert "Forged x and E=mc2 end." in content
    assert "Visible done." in content
    assert "FORGED" not in content and "HIDDEN" not in content


@pytest.mark.req("REQ-FETCH-004")
def test_the_fallback_writes_a_definition_list_the_same_way() -> None:
    parsed = parse_html(
        "<dl><dt>Latency</dt><dd>The time a request takes.</dd>"
        "<dt><b>Bold</b> term</dt><dd><p>Print more.</p><pre>a\nb</pre></dd></dl>"
    )
    assert parsed.root is not None
    assert to_markdown(parse_html("<p>She said <q>tides</q>.</p>").root) == (  # type: ignore[arg-type]
        "She said \u201ctides\u201d."
    )
    assert to_markdown(parsed.root) == (
        "**Latency**\n\nThe time a request takes.\n\n**Bold** term\n\nPrint more.\n\n```\na\nb\n```"
    )


@pytest.mark.req("REQ-FETCH-002")
def test_a_pre_in_a_table_cell_stays_inline_and_in_a_list_item_is_its_code_block() -> None:
    # A fenced block cannot sit in a Markdown table row; in a list item it is one of the
    # item's blocks (the list is rendered by rypsok, _block_lists).
    page = _code_page(
        "<ul><li>Run <pre>make</pre> then done.</li></ul>"
        "<table><tr><td><pre>x = 1</pre></td><td>value</td></tr></table>"
    )
    content = main_markdown(_root(page)).markdown
    assert "- Run\n\n  ```\n  make\n  ```\n\n  then done.\n" in content
    assert "| x = 1 | value |" in content


def _article_content(body: str, container: str = "article") -> str:
    """The content web_fetch's job returns for a page of one ``container`` with ``body``."""
    page = f"<html><body><{container}><h1>Title</h1>{body}</{container}></body></html>"
    return job_result(page).content


@pytest.mark.req("REQ-FETCH-002")
def test_the_sources_indentation_is_not_returned_as_text() -> None:
    # trafilatura collapses spacing inside <p> only; a div's own text and inline markup across
    # source lines kept the page source's indentation, paid for out of max_chars.
    content = _article_content(
        "<div>A block of text about white-space written\n        over three lines\n"
        "        of the source.</div>"
        "<p>Some <b>bold\n            words</b> here.</p>"
        "<pre>  code\n    indented</pre><p>Inline <code>a\n    b</code>.</p>"
    )
    # (The words "white-space" in the text are not a style.)
    assert "A block of text about white-space written\nover three lines\nof the source." in content
    assert "**bold\nwords** here." in content
    assert "```\n  code\n    indented\n```" in content
    assert "a\n    b" in content


@pytest.mark.req("REQ-FETCH-002")
def test_a_page_with_an_inline_white_space_style_keeps_its_spacing() -> None:
    content = _article_content(
        "<div style='white-space: pre-wrap'>kept\n    as written</div>"
        "<div>A block of text written\n        over two lines.</div>"
    )
    assert "kept\n    as written" in content


@pytest.mark.req("REQ-FETCH-002")
@pytest.mark.parametrize("container", ["article", "main"])
def test_a_paragraph_written_as_a_div_between_paragraphs_is_kept(container: str) -> None:
    # trafilatura drops a div of text that has a <p> before and after it in its parent.
    first = "<p>" + "The first paragraph of the story, long enough to count. " * 10 + "</p>"
    last = "<p>" + "The last paragraph of the story, different from the first. " * 10 + "</p>"
    content = _article_content(
        f"{first}<div>A paragraph written as a div, with no p element around it at all.</div>"
        "<div>Another such div with <b>bold</b> words and a <a href='/x'>link</a>.</div>"
        f"{last}",
        container,
    )
    assert "A paragraph written as a div, with no p element around it at all." in content
    assert "Another such div with **bold** words" in content


@pytest.mark.req("REQ-FETCH-002")
def test_a_one_line_pre_is_a_block_not_an_inline_span() -> None:
    content = main_markdown(_root(_code_page("<pre><code>make install</code></pre>"))).markdown
    assert "\n```\nmake install\n```\n" in content


def test_a_big_tree_skips_trafilatura(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(extract, "TRAFILATURA_MAX_ELEMENTS", 5)

    def forbidden(*args: object, **kwargs: object) -> str:
        raise AssertionError("trafilatura must not run on a tree beyond the bound")

    monkeypatch.setattr(trafilatura, "extract", forbidden)
    found = main_markdown(_root("<main><h1>Big</h1>" + ARTICLE * 3 + "</main>"))
    assert found.method == "fallback"
    assert found.markdown.startswith("# Big")


def test_the_fallback_reads_pages_trafilatura_returns_nothing_for(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(trafilatura, "extract", lambda *a, **k: None)
    page = "<div id='nav'><a href='/'>Home</a></div><div class='content'><h1>T</h1>" + ARTICLE
    found = main_markdown(_root(page + "</div>"))
    assert found.method == "fallback"
    assert "A sentence of the article" in found.markdown
    assert "Home" not in found.markdown


def test_the_fallback_keeps_all_posts_of_a_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(trafilatura, "extract", lambda *a, **k: None)
    found = main_markdown(_root(f"<div id='page-body'>{THREAD}</div>"))
    for n in range(5):
        assert f"Post number {n}" in found.markdown


THREAD = "".join(
    f"<div class='post'><div class='postbody'><p>Post number {n}, with its own text, "
    "long enough to be a paragraph of the thread.</p></div></div>"
    for n in range(5)
)
BLOG = (
    "<main><h1>The harbour reopens</h1>" + ARTICLE + "<p class='meta'>Posted in News, Harbour, "
    "Town life by the editor. Tagged: boats, walls, market, repairs, council.</p>"
    "<h3>Related posts</h3><ul>"
    + "".join(
        f"<li><a href='/p/{n}'>Another post about the harbour and its long history, number "
        f"{n}</a> with a short teaser of its own, written for the list.</li>"
        for n in range(12)
    )
    + "</ul><h3>Leave a reply</h3><form><p>Your email address will not be published, "
    "required fields are marked, your comment will be reviewed.</p></form></main>"
)


def _first_paragraph(*args: object, **kwargs: object) -> str:
    return "A sentence of the article, long enough to count as content. " * 10


@pytest.mark.req("REQ-FETCH-002")
def test_more_text_alone_never_replaces_trafilaturas_choice(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """REQ-FETCH-002: on a blog post whose main element also holds metadata, related posts and
    a comment form, the fallback holds more than twice trafilatura's text, yet trafilatura's
    result stays: without several similar blocks the extra text is the page's furniture."""
    monkeypatch.setattr(trafilatura, "extract", _first_paragraph)
    root = _root(BLOG)
    choice = extract.main_choice(root)
    assert not choice.similar_blocks
    assert extract._word_chars(extract.fallback_markdown(root)) > 2 * extract._word_chars(
        _first_paragraph()
    )
    found = main_markdown(root)
    assert found.method == "trafilatura"
    assert "Related posts" not in found.markdown and "Leave a reply" not in found.markdown


_TERMS = (
    "<main><h2>Terms of service</h2>"
    + "".join(
        f"<h4>Section {i}</h4><p>Clause {i} binds the parties to the terms written here, "
        f"and clause {i} says how either of them may end the agreement in writing.</p>"
        for i in range(1, 6)
    )
    + "</main>"
)


def _paragraphs_only(*args: object, **kwargs: object) -> str:
    """What trafilatura returns when it finds no main block and gathers the page's
    paragraphs one by one (its wild-text recovery): the text without the headings."""
    return "\n\n".join(
        f"Clause {i} binds the parties to the terms written here, and clause {i} says how "
        "either of them may end the agreement in writing."
        for i in range(1, 6)
    )


@pytest.mark.req("REQ-FETCH-002")
def test_the_same_text_with_its_headings_replaces_a_headless_result(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """When trafilatura's result has no heading and the fallback holds about the same text
    with its headings (Readability's getpocket-tos and dev418 pages), the fallback is chosen:
    same content, and an outline and sections for fragments and focus."""
    monkeypatch.setattr(trafilatura, "extract", _paragraphs_only)
    found = main_markdown(_root(_TERMS))
    assert found.method == "fallback"
    assert "## Terms of service" in found.markdown and "#### Section 5" in found.markdown
    # One heading kept of six is still most of them lost.
    monkeypatch.setattr(
        trafilatura, "extract", lambda *a, **k: "## Terms of service\n\n" + _paragraphs_only()
    )
    assert main_markdown(_root(_TERMS)).method == "fallback"


@pytest.mark.req("REQ-FETCH-002")
def test_a_page_without_a_main_block_keeps_its_headings() -> None:
    """DocBook manuals (valgrind's, libxslt's xsltproc page): no element names the content,
    each section is a block of its own, each heading sits in wrappers of its own. trafilatura
    gathers the paragraphs without the headings; given the body as its main block, it reads
    the same text with them."""
    # Sections of unequal length, as in a manual: the fallback picks the longest one.
    sections = "".join(
        f"<div class='sect1'><div class='titlepage'><div><div><h2 class='title'>"
        f"<a name='s{i}'></a>4.{i}. Section {i}</h2></div></div></div>"
        + "".join(
            f"<p>Paragraph {i}.{j} of the manual says what option {i} does and when to use it.</p>"
            for j in range(8 if i == 2 else 1)
        )
        + "</div>"
        for i in range(1, 5)
    )
    page = (
        "<html><body><div class='chapter'><div class='titlepage'><div><div><h1 class='title'>"
        f"4. The tool</h1></div></div></div><p>{'The tool finds errors. ' * 8}</p>"
        f"{sections}</div></body></html>"
    )
    # trafilatura alone, on the same page: the text without a heading.
    alone = trafilatura.extract(page, output_format="markdown", favor_recall=True) or ""
    assert "Paragraph 2.5 of the manual" in alone and "Section" not in alone
    # The fallback's choice is the longest section alone.
    assert extract.fallback_markdown(_root(page)).count("## ") == 1
    found = main_markdown(_root(page))
    assert found.method == "trafilatura"
    for i in range(1, 5):
        assert f"## 4.{i}. Section {i}\n\nParagraph {i}.0 of the manual" in found.markdown


@pytest.mark.req("REQ-FETCH-002")
def test_a_short_list_whose_items_say_more_than_their_links_is_kept_with_them() -> None:
    """Node.js's parameter lists: each type is a short link, and trafilatura deletes a list of
    under 300 characters whose links are short as navigation (a tenth of the parameter lists
    of Node.js's API pages)."""
    parameters = (
        "<ul><li><code>value</code> <a href='https://mdn.e.org/any'>&lt;any&gt;</a></li>"
        "<li><code>message</code> <a href='https://mdn.e.org/string'>&lt;string&gt;</a> | "
        "<a href='https://mdn.e.org/error'>&lt;Error&gt;</a></li></ul>"
    )
    heading = "<h4>assert.ok(value[, message])</h4>"
    page = f"<main><h1>assert</h1>{ARTICLE}{heading}{parameters}{ARTICLE}</main>"
    alone = trafilatura.extract(page, output_format="markdown", include_links=True) or ""
    assert "- `message`" not in alone
    content = job_result(page).content
    assert (
        "- `value` [\\<any>](https://mdn.e.org/any)\n- `message` "
        "[\\<string>](https://mdn.e.org/string) | [\\<Error>](https://mdn.e.org/error)"
    ) in content
    # Targets come back as trafilatura writes them: "&" as it is, parentheses in brackets.
    parameters = (
        "<ul><li>Returns the <a href='/a?b=1&amp;c=2'>first</a> one</li>"
        "<li>Or the <a href='/w/A_(b)'>second</a> one</li></ul>"
    )
    content = job_result(f"<main><h1>List</h1>{ARTICLE}{parameters}{ARTICLE}</main>").content
    assert "- Returns the [first](https://e.org/a?b=1&c=2) one" in content
    assert "- Or the [second](<https://e.org/w/A_(b)>) one" in content


@pytest.mark.req("REQ-FETCH-002")
def test_a_section_named_after_its_heading_is_not_taken_for_chrome() -> None:
    """Sphinx (Python's documentation): each section's id is the slug of its heading, and
    trafilatura discards an element whose id holds "nav", "menu" or "shar"; half of the IDLE
    chapter went so."""
    titles = {
        "menus": "Menus",
        "editing-and-navigation": "Editing and Navigation",
        "sharing-files": "Sharing files",
        "startup": "Startup",
        "running-code": "Running code",
        "help-sources": "Help sources",
        "preferences": "Preferences",
    }
    sections = "".join(
        f"<section id='{slug}'><span id='index-{i}'></span><h2>{title}</h2>{ARTICLE}"
        f"<p>Section {i} ends here.</p></section>"
        for i, (slug, title) in enumerate(titles.items())
    )
    page = f"<html><body><div class='body' role='main'><h1>IDLE</h1>{sections}</div></body></html>"
    alone = trafilatura.extract(page, output_format="markdown") or ""
    assert [f"Section {i} ends here." in alone for i in range(3)] == [False] * 3
    content = job_result(page).content
    for i, title in enumerate(titles.values()):
        assert f"## {title}\n\n" in content and f"Section {i} ends here." in content


@pytest.mark.req("REQ-FETCH-002")
def test_a_title_block_with_an_empty_web_component_keeps_its_title() -> None:
    # rustdoc: <rustdoc-toolbar> is filled by a script; trafilatura dropped the block.
    head = (
        "<div class='main-heading'><h1>Function <span>read_to_string</span></h1>"
        "<rustdoc-toolbar></rustdoc-toolbar><span><span>1.26.0</span> \u00b7 "
        "<a href='https://src.e.org/fs.rs'>Source</a></span></div>"
    )
    page = f"<main><section id='main-content'>{head}{ARTICLE}</section></main>"
    alone = trafilatura.extract(page, output_format="markdown", favor_recall=True) or ""
    assert "Function" not in alone
    assert job_result(page).content.startswith("# Function read\\_to\\_string\n\n")
    # A web component with content is the page's, and stays.
    page = f"<main><h1>Cards</h1>{ARTICLE}<info-card><p>Inside the card.</p></info-card></main>"
    assert "Inside the card." in job_result(page).content


@pytest.mark.req("REQ-FETCH-004")
@pytest.mark.parametrize(
    ("heading", "line"),
    [
        # latex2html (Python's old manuals): anchors and a line break before the title
        ("<h2><a name='s1'></a>\n<br>\n1.1.1 Http Objects\n</h2>", "## 1.1.1 Http Objects"),
        ("<h2>Title<br>Subtitle here</h2>", "## Title Subtitle here"),
    ],
)
def test_a_heading_on_two_lines_is_one_heading(heading: str, line: str) -> None:
    content = job_result(f"<main><h1>Top</h1>{ARTICLE}{heading}{ARTICLE}</main>").content
    assert f"\n\n{line}\n\n" in content


@pytest.mark.req("REQ-FETCH-002")
def test_an_index_of_named_entries_keeps_the_names() -> None:
    # rustdoc's index of a module's items: each name a link, then what the item is.
    items = "".join(
        f"<dt><a class='struct' href='struct.{name}.html'>{name}</a></dt><dd>{what}</dd>"
        for name, what in [
            ("DirBuilder", "A builder used to create directories in various manners."),
            ("DirEntry", "Entries returned by the ReadDir iterator."),
            ("File", "An object providing access to an open file on the filesystem."),
        ]
    )
    index = f"<h2>Structs</h2><dl class='item-table'>{items}</dl>"
    page = f"<main><h1>Module fs</h1>{ARTICLE}{index}</main>"
    content = job_result(page, url="https://doc.e.org/std/fs/index.html").content
    assert (
        "## Structs\n\n**[DirBuilder](https://doc.e.org/std/fs/struct.DirBuilder.html)**\n\n"
        "A builder used to create directories in various manners.\n\n"
        "**[DirEntry](https://doc.e.org/std/fs/struct.DirEntry.html)**"
    ) in content


@pytest.mark.req("REQ-FETCH-002")
def test_a_menu_of_short_links_is_still_judged_by_trafilatura() -> None:
    # CNN's edition menu (newspaper4k's set): a label, then items that are their links.
    menu = (
        "<ul><li>EDITION: INTERNATIONAL</li><li><a href='/us'>U.S.</a></li>"
        "<li><a href='/mx'>M\u00c9XICO</a></li><li><a href='/ar'>ARABIC</a></li></ul>"
    )
    content = job_result(f"<main><h1>Weather</h1>{ARTICLE}{menu}{ARTICLE}</main>").content
    assert "EDITION" not in content and "ARABIC" not in content


@pytest.mark.req("REQ-FETCH-004")
def test_a_link_without_text_beside_a_code_block_does_not_lose_it() -> None:
    # rustdoc: every example is followed by a "Run" link without text, and trafilatura drops a
    # short block whose links have no text, the code with it.
    page = (
        f"<main><h1>read_to_string</h1>{ARTICLE}<h2>Examples</h2><div class='example-wrap'>"
        "<pre class='rust'><code>let text = fs::read_to_string(\"a.txt\")?;</code></pre>"
        "<a class='test-arrow' title='Run code' href='https://play.e.org/?code=x'></a></div>"
        f"{ARTICLE}</main>"
    )
    content = job_result(page).content
    assert '## Examples\n\n```\nlet text = fs::read_to_string("a.txt")?;\n```' in content


@pytest.mark.req("REQ-FETCH-004")
def test_a_heading_right_after_a_line_of_text_is_set_apart() -> None:
    # npm's docs: the subtitle is a <span>, and trafilatura writes the first heading on the
    # next line; a "# " line inside a code block is the code's own.
    page = (
        "<main><header><h1>npm-ping</h1><span>Ping npm registry</span></header>"
        f"<h3>Synopsis</h3>{ARTICLE}<pre>x\n# not a heading\n</pre>{ARTICLE}</main>"
    )
    content = job_result(page).content
    assert "Ping npm registry\n\n### Synopsis" in content
    assert "```\nx\n# not a heading\n```" in content


@pytest.mark.req("REQ-FETCH-002")
def test_a_headless_result_stays_when_the_fallback_holds_more_text(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Headings alone are no reason to switch: with much more text the fallback's headings are
    # those of its extra blocks (related posts, comments), measured on trafilatura's set.
    monkeypatch.setattr(trafilatura, "extract", _paragraphs_only)
    extra = "".join(
        f"<h3>Related {i}</h3><p>{'Another story entirely. ' * 12}</p>" for i in range(4)
    )
    found = main_markdown(_root(_TERMS.replace("</main>", extra + "</main>")))
    assert found.method == "trafilatura"


@pytest.mark.req("REQ-FETCH-002")
def test_a_thread_of_similar_posts_replaces_trafilaturas_first_post(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """REQ-FETCH-002: where trafilatura keeps only the first of several similar posts, the
    fallback, which found their shared container, gives every post."""
    first = "Post number 0, with its own text, long enough to be a paragraph of the thread."
    monkeypatch.setattr(trafilatura, "extract", lambda *a, **k: first)
    root = _root(f"<div id='page-body'>{THREAD}</div><div id='footer'><p>Imprint</p></div>")
    assert extract.main_choice(root).similar_blocks
    found = main_markdown(root)
    assert found.method == "fallback"
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


@pytest.mark.req("REQ-FETCH-004")
def test_the_markdown_renderer_keeps_each_block_of_a_list_item() -> None:
    page = (
        "<div><ol><li><p>Install it:</p><pre>pip install rypsok</pre></li>"
        "<li>Run <code>rypsok `serve`</code>:<ul><li>over stdio</li><li>over HTTP</li></ul>"
        "</li></ol><p><code>`a`</code> and <code>b``c</code></p></div>"
    )
    parsed = parse_html(page)
    assert parsed.root is not None
    body = parsed.root.find("body")
    assert to_markdown(body) == (
        "1. Install it:\n\n   ```\n   pip install rypsok\n   ```\n"
        "2. Run `` rypsok `serve` ``:\n   - over stdio\n   - over HTTP\n\n"
        "`` `a` `` and ```b``c```"
    )


@pytest.mark.req("REQ-FETCH-004")
def test_a_list_whose_items_hold_blocks_keeps_them() -> None:
    """trafilatura writes a list item on one line: a tutorial's code blocks lost their lines
    and an FAQ's answers ran into their questions (libxslt's FAQ)."""
    steps = (
        "<ol><li><p>Install the package:</p><pre><code>pip install rypsok\nrypsok --version"
        "</code></pre></li><li><p>Start it:</p><pre>rypsok serve</pre></li></ol>"
    )
    page = f"<main><h1>Tutorial</h1>{ARTICLE}{steps}{ARTICLE}</main>"
    alone = trafilatura.extract(page, output_format="markdown") or ""
    assert "1. Install the package:" not in alone and "```\nrypsok serve" not in alone
    content = job_result(page).content
    assert (
        "1. Install the package:\n\n   ```\n   pip install rypsok\n   rypsok --version\n"
        "   ```\n2. Start it:\n\n   ```\n   rypsok serve\n   ```"
    ) in content
    faq = (
        "<ol><li><em>Why?</em><p>First answer &amp; more.</p><p>Second answer.</p></li>"
        "<li><em>How?</em><p>Like <a href='/x?a=1&amp;b=2'>this</a>.</p></li></ol>"
    )
    content = job_result(f"<main><h1>FAQ</h1>{ARTICLE}{faq}{ARTICLE}</main>").content
    assert (
        "1. *Why?*\n\n   First answer & more.\n\n   Second answer.\n"
        "2. *How?*\n\n   Like [this](https://e.org/x?a=1&b=2)."
    ) in content
    # In a table cell, whose Markdown row cannot hold blocks, trafilatura writes the list.
    table = (
        "<table><tr><th>Tool</th><th>Steps</th></tr><tr><td>pip</td><td><ol><li>Install:"
        "<pre>pip install rypsok</pre></li><li>Start:<pre>rypsok serve</pre></li></ol></td>"
        "</tr></table>"
    )
    content = job_result(f"<main><h1>Table</h1>{ARTICLE}{table}{ARTICLE}</main>").content
    assert "| pip |" in content and "rypsok serve" in content
    assert "\u2425" not in content and "```" not in content


@pytest.mark.req("REQ-PAGE-006")
def test_a_page_with_nothing_to_extract_fails() -> None:
    for page in (
        b"",
        b"<html><body></body></html>",
        b"<div hidden>all hidden</div>",
        # Scripts that run nothing: structured data and a data block.
        b'<script type="application/ld+json">{"name": "x"}</script><div></div>',
        b'<script type="text/x-template"><p>later</p></script>',
    ):
        result = run({"content_type": "text/html", "url": "https://e.org/"}, page)
        assert (result.status, result.reason) == ("error", "extraction_failed"), page


@pytest.mark.req("REQ-PAGE-006")
@pytest.mark.parametrize(
    "page",
    [
        b"<script>only()</script>",
        # An application shell: a title, an empty mount point, a bundle and a noscript plea.
        b"<html><head><title>Dashboard</title><script src='/app.js' defer></script></head>"
        b"<body><noscript>You need to enable JavaScript to run this app.</noscript>"
        b"<div id='root'></div></body></html>",
        b"<body><div id='app'></div><script type='module' src='/main.js'></script></body>",
        b"<body><div hidden>Shown by the script</div>"
        b"<script type='text/javascript; charset=utf-8'>show()</script></body>",
    ],
)
def test_a_page_without_text_but_with_scripts_needs_javascript(page: bytes) -> None:
    """A page whose only content is scripts builds its text in the browser: the call says so
    (``javascript_required``) instead of the generic ``extraction_failed``, so that the caller
    knows no fetch of that URL will read it. The noscript plea is not returned as content."""
    result = run({"content_type": "text/html", "url": "https://e.org/"}, page)
    assert (result.status, result.reason) == ("error", "javascript_required")


@pytest.mark.req("REQ-PAGE-006")
@pytest.mark.parametrize(
    ("page", "flagged"),
    [
        # A shell with a few words of its own: returned, and flagged.
        (b"<head><script src='/app.js'></script></head><body><div id='app'>Loading...</div>", True),
        (b"<p>One short paragraph.</p><script>track()</script>", True),
        # No script that runs: a short page is just short.
        (b"<p>One short paragraph.</p>", False),
        (b"<p>One short paragraph.</p><script type='application/ld+json'>{}</script>", False),
        # Enough text of its own, scripts or not.
        (ARTICLE.encode() + b"<script>track()</script>", False),
        # A login form: access says what it is.
        (
            b"<form><input name='user'><input type='password' name='pw'><button>Go</button>"
            b"</form><script src='/login.js'></script>",
            False,
        ),
    ],
)
def test_little_text_with_scripts_is_flagged(page: bytes, flagged: bool) -> None:
    """Less visible text than counts as usable content (``signals.USABLE_CONTENT_CHARS``) and a
    script that runs: the content may be built by JavaScript (notice
    ``javascript_may_be_required``)."""
    assert job_result(page).javascript_may_be_required is flagged


def test_the_pipeline_reports_its_method() -> None:
    assert job_result(f"<main><h1>T</h1>{ARTICLE}</main>").method == "trafilatura"


@settings(max_examples=300, deadline=None)
@given(
    st.text(
        alphabet=st.one_of(
            st.characters(max_codepoint=0x7F),
            st.characters(min_codepoint=0x80, max_codepoint=0x3000),
            st.sampled_from(["\ud800", "東", "é", "_", "½", "٣"]),
        ),
        max_size=200,
    ),
    st.integers(min_value=1, max_value=64),
)
def test_word_characters_are_counted_as_the_regular_expression_counts_them(
    text: str, piece: int
) -> None:
    """The measure that decides between trafilatura and the fallback is unchanged by its
    faster count, whatever the text and however it is cut into slices."""
    expected = len(re.sub(r"\W+", "", text))
    assert extract._word_chars(text) == expected
    saved = extract._WORD_SLICE
    extract._WORD_SLICE = piece
    try:
        assert extract._word_chars(text) == expected
    finally:
        extract._WORD_SLICE = saved


@pytest.mark.req("REQ-FETCH-002")
def test_the_fallback_is_skipped_only_where_it_could_not_be_chosen() -> None:
    """The fallback is not rendered when trafilatura's text is at least half of a bound the
    fallback's text never exceeds; the bound holds on every page of the corpus and on pages
    of lists, links and nested tables, and the choice is the one made with the fallback."""
    from tests.fetch.conftest import corpus

    pages = [f.body.decode("utf-8", "replace") for f in corpus()]
    pages += [
        "<ol>" + "".join(f"<li>item {i} <a href='/l/{i}'>x</a></li>" for i in range(150)) + "</ol>",
        "<table><tr><td><table><tr><td>" + ARTICLE + "</td></tr></table></td></tr></table>",
        "<div>" + "<p>short, words.</p>" * 40 + "</div>",
    ]
    for page in pages:
        root = _root(page)
        ceiling = extract._fallback_ceiling(root)
        if ceiling is not None:
            assert extract._word_chars(extract.fallback_markdown(root)) <= ceiling
    nested = _root(pages[-2])
    assert extract._fallback_ceiling(nested) is None  # nested tables render text twice


def test_the_choice_is_the_same_with_and_without_the_fallback_shortcut(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """REQ-FETCH-002: every corpus page is extracted to the same content and method when the
    fallback is always rendered (no ceiling) as with the shortcut."""
    from tests.fetch.conftest import corpus

    pages = [
        ({"content_type": f.meta["content_type"], "url": "https://example.org/page"}, f.body)
        for f in corpus()
        if f.meta.get("content_type", "").startswith("text/html")
    ]
    assert len(pages) >= 10
    fast = [run(job, body) for job, body in pages]
    monkeypatch.setattr(extract, "_fallback_ceiling", lambda root: None)
    full = [run(job, body) for job, body in pages]
    assert fast == full
