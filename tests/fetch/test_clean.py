"""Noise removal: what a browser would not render, and site chrome (REQ-CTX-005)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rypsok.fetch import clean
from rypsok.fetch.parse import parse_html
from tests.fetch.jobs import job_result

ARTICLE_TEXT = "<p>" + "The article's own text. " * 20 + "</p>"


def _cleaned_in_article(block: str) -> str:
    """The cleaned text of an article of one titled paragraph followed by ``block``."""
    return _cleaned(f"<main><article><h1>Title</h1>{ARTICLE_TEXT}{block}</article></main>")


def _cleaned(page: str, url: str = "https://example.org/dir/page") -> str:
    parsed = parse_html(page)
    assert parsed.root is not None
    noise = clean.find_noise(parsed.root, parsed.style_text)
    clean.remove_invisible(noise)
    clean.drop_head(parsed.root)
    clean.absolutize_links(parsed.root, url)
    clean.remove_chrome(parsed.root, noise)
    return " ".join(" ".join(parsed.root.itertext()).split())


@pytest.mark.req("REQ-CTX-005")
@pytest.mark.parametrize(
    "hidden",
    [
        "<div hidden>SECRET</div>",
        "<div HIDDEN='hidden'>SECRET</div>",
        "<span aria-hidden='true'>SECRET</span>",
        "<p style='display:none'>SECRET</p>",
        "<p style='DISPLAY: None !important'>SECRET</p>",
        "<p style='visibility:hidden'>SECRET</p>",
        "<p style='opacity:0'>SECRET</p>",
        "<p style='font-size: 0px'>SECRET</p>",
        "<p style='position:absolute;left:-9999px'>SECRET</p>",
        "<p style='clip: rect(0 0 0 0)'>SECRET</p>",
        "<p class='sr-only'>SECRET</p>",
        "<p class='x hidden'>SECRET</p>",
        "<dialog>SECRET</dialog>",
        "<input type='hidden' value='SECRET'>",
        "<style>.gone{display:none}</style><p class='gone'>SECRET</p>",
        "<style>#gone, .other { visibility: hidden }</style><p id='gone'>SECRET</p>",
        "<template>SECRET</template>",
        "<noscript>SECRET</noscript>",
        "<!-- SECRET -->",
        "<script>var SECRET = 1;</script>",
        "<style>p::after { content: 'SECRET' }</style>",
    ],
)
def test_what_a_browser_would_not_render_is_removed(hidden: str) -> None:
    text = _cleaned(f"<main><p>before</p>{hidden}<p>after</p></main>")
    assert "SECRET" not in text
    assert text == "before after"


@pytest.mark.req("REQ-CTX-005")
@pytest.mark.parametrize(
    "shown",
    [
        "<style>@media print { .np { display: none } }</style><p class='np'>SHOWN</p>",
        "<p class='hidden md:block'>SHOWN</p>",
        "<dialog open>SHOWN</dialog>",
        "<p style='display:block'>SHOWN</p>",
        "<span aria-hidden='false'>SHOWN</span>",
    ],
)
def test_what_a_browser_renders_is_kept(shown: str) -> None:
    assert "SHOWN" in _cleaned(f"<main><p>x</p>{shown}</main>")


def test_the_tail_of_a_removed_element_stays() -> None:
    assert _cleaned("<p>one <span hidden>two</span> three</p>") == "one three"


@pytest.mark.req("REQ-CTX-005")
@pytest.mark.req("REQ-FETCH-002")
def test_chrome_outside_the_article_is_removed() -> None:
    page = (
        "<header>SITE HEADER</header><nav>NAV LINKS</nav>"
        "<div role='navigation'>ROLE NAV</div><div id='sidebar'>SIDEBAR</div>"
        "<main><article><header><h1>Title</h1></header><p>Body text.</p>"
        "<aside>Article aside</aside><footer>Article footer</footer></article></main>"
        "<aside>SITE ASIDE</aside><footer>SITE FOOTER</footer>"
        "<div id='cookie-banner'>COOKIES</div><div role='dialog'>DIALOG</div>"
        "<form><input type='search'> SEARCH FORM</form>"
    )
    text = _cleaned(page)
    assert text == "Title Body text. Article aside Article footer"


@pytest.mark.req("REQ-FETCH-002")
@pytest.mark.parametrize(
    "block",
    [
        # China Daily's footer of licence numbers and its copyright notice (newspaper4k's set).
        "<div class='foot'><div class='foot-right'><ul><li>LICENCE 10120170006</li></ul>"
        "<p>COPYRIGHT NOTICE</p></div></div>",
        # Nikkei's line under every page.
        "<div class='l-copyright'><span class='l-copyright_text'>COPYRIGHT NOTICE</span></div>",
    ],
)
def test_a_block_named_foot_or_copyright_is_chrome(block: str) -> None:
    text = _cleaned(f"<div><h1>Title</h1>{ARTICLE_TEXT}</div>{block}")
    assert "COPYRIGHT" not in text and "LICENCE" not in text
    assert text.startswith("Title The article's own text.")


@pytest.mark.req("REQ-FETCH-002")
@pytest.mark.parametrize(
    "section",
    [
        # WordPress: the thread and the form, inside the post's <article> in many themes.
        "<div id='comments' class='comments-area'><ol class='comment-list'><li>READER"
        "</li></ol></div>",
        "<div id='respond' class='comment-respond'><form id='commentform'>READER</form></div>",
        # Última Hora (newspaper4k's set): the readers' comments inside <article>.
        "<div id='sf_comment_list' class='box clearfix'><p>READER</p></div>",
        "<div id='disqus_thread'>READER</div>",
        # Named after what they follow: a content word in the name does not keep them.
        "<section class='article-comments'><p>READER</p></section>",
        "<div class='entry-comments' id='comments'><p>READER</p></div>",
        "<div class='box post_formulario' id='sf_comment_form_container_1'><h2>READER</h2>"
        "<ul><li>READER</li></ul></div>",
    ],
)
def test_a_section_of_readers_comments_is_chrome_even_in_the_article(section: str) -> None:
    text = _cleaned_in_article(section)
    assert "READER" not in text
    assert text.startswith("Title The article's own text.")


@pytest.mark.req("REQ-FETCH-002")
def test_code_comments_and_a_thread_that_is_the_page_stay() -> None:
    # highlight.js and Prism mark a code comment with the class "comment".
    code = (
        "<pre><code><span class='hljs-comment'># HLJS NOTE</span>\nx = 1\n"
        "<span class='token comment'>// PRISM NOTE</span></code></pre>"
        "<p class='comment'>A PARAGRAPH CLASSED COMMENT.</p>"
    )
    assert all(
        word in _cleaned(f"<div><p>Code.</p>{code}</div>")
        for word in "HLJS PRISM PARAGRAPH".split()
    )
    # A discussion page: the comments are most of the text, so they are the content.
    thread = "<div class='comment-list'>" + "<p>A reader's long reply. </p>" * 30 + "</div>"
    assert "A reader's long reply." in _cleaned(
        f"<article><h1>Ask: a question</h1>{thread}</article>"
    )


def test_a_header_with_the_page_title_stays_when_there_is_no_article() -> None:
    assert "Page title" in _cleaned("<header><h1>Page title</h1></header><div><p>x</p></div>")


@pytest.mark.req("REQ-FETCH-002")
@pytest.mark.parametrize(
    "widget",
    [
        "<div id='jp-relatedposts' class='jp-relatedposts'><h3>Similar posts</h3></div>",
        "<div class='yarpp-related'><h3>Similar posts</h3><ol><li>Other</li></ol></div>",
        "<section class='related-posts'><h3>Similar posts</h3></section>",
        "<div id='relatedArticles'><a href='/o'>Similar posts</a></div>",
        # TIME (newspaper4k's set): a content word beside "recirc" does not keep the module.
        "<div class='inline-article-recirc'><h2>Similar posts</h2><a href='/o'>Other</a></div>",
    ],
)
def test_related_posts_widgets_inside_the_article_are_removed(widget: str) -> None:
    # Jetpack and YARPP put their widgets into the post's own content, inside <article>.
    text = _cleaned_in_article(widget)
    assert "Similar posts" not in text
    assert text.startswith("Title The article's own text.")


@pytest.mark.req("REQ-FETCH-002")
@pytest.mark.parametrize(
    "navigation",
    [
        # rustdoc's trail above the title; npm's "Table of contents" section inside the content
        "<div class='rustdoc-breadcrumbs'><a href='/std'>std</a>::<a href='/fs'>Trail fs</a></div>",
        "<section id='table_of_contents'><h2>Trail contents</h2><ul><li><a href='#a'>A</a>"
        "</li></ul></section>",
        "<nav class='toc'><a href='#a'>Trail A</a></nav>",
        "<div class='md-toc'><a href='#a'>Trail A</a></div>",
    ],
)
def test_breadcrumbs_and_tables_of_contents_inside_the_article_are_removed(
    navigation: str,
) -> None:
    text = _cleaned_in_article(navigation)
    assert "Trail" not in text
    assert text.startswith("Title The article's own text.")


@pytest.mark.req("REQ-FETCH-002")
@pytest.mark.parametrize(
    ("section", "kept"),
    [
        # Sphinx: a section's id is the slug of its heading, with an anchor before it.
        (
            "<section id='editing-and-navigation'><span id='x'></span><h2>Editing and "
            "Navigation</h2><p>Keys that move the cursor.</p></section>",
            True,
        ),
        (
            "<div class='section' id='file-menu-shell-and-editor'><h3>File menu (Shell and "
            "Editor)</h3><p>Keys that move the cursor.</p></div>",
            True,
        ),
        # A heading of chrome's words only is chrome's name; another id is the block's own.
        (
            "<section id='table-of-contents'><h2>Table of contents</h2><p>Keys that move the "
            "cursor.</p></section>",
            False,
        ),
        ("<div id='comments'><h3>Comments</h3><p>Keys that move the cursor.</p></div>", False),
        ("<div id='sidebar'><h3>Editing</h3><p>Keys that move the cursor.</p></div>", False),
        (
            "<div id='navigation'><p>Text first.</p><h3>Navigation keys</h3><p>Keys that move "
            "the cursor.</p></div>",
            False,
        ),
    ],
)
def test_a_sections_id_made_of_its_headings_words_names_its_subject(
    section: str, kept: bool
) -> None:
    page = f"<body><div><h1>Title</h1>{ARTICLE_TEXT * 12}{section}</div></body>"
    assert ("Keys that move the cursor." in _cleaned(page)) is kept


@pytest.mark.req("REQ-FETCH-002")
def test_a_table_of_contents_that_is_most_of_the_page_stays() -> None:
    # A book's contents page: the list is the page.
    entries = "".join(
        f"<li><a href='ch{i}.html'>Chapter {i} of the book</a></li>" for i in range(30)
    )
    text = _cleaned(f"<main><h1>Contents</h1><ol class='toc'>{entries}</ol></main>")
    assert "Chapter 29 of the book" in text


@pytest.mark.req("REQ-FETCH-002")
@pytest.mark.parametrize(
    "section",
    [
        "<section id='related-work'><h2>Related work</h2><p>Earlier studies.</p></section>",
        "<div class='related-posts entry-content'><p>Earlier studies.</p></div>",
        # a table's contents are not a table of contents
        "<div class='table-contents'><table><tr><td>Earlier studies.</td></tr></table></div>",
    ],
)
def test_content_merely_named_related_stays_inside_the_article(section: str) -> None:
    text = _cleaned_in_article(section)
    assert "Earlier studies." in text


def test_layout_table_navigation_columns_are_removed() -> None:
    page = (
        "<table><tr><td><a href='/'>Home</a><br><a href='/m'>Menu</a></td>"
        "<td><h1>Welcome</h1><p>" + "A long paragraph of real content. " * 5 + "</p></td>"
        "</tr></table>"
    )
    text = _cleaned(page)
    assert "Home" not in text and "Welcome" in text


def test_data_tables_keep_their_cells() -> None:
    page = "<main><table><tr><td><a href='/a'>Alpha</a></td><td>1</td></tr></table></main>"
    assert _cleaned(page) == "Alpha 1"


def test_links_are_resolved_and_unsafe_targets_dropped() -> None:
    parsed = parse_html(
        "<a href='../other?a=1&amp;b=2#x'>rel</a><a href='javascript:alert(1)'>js</a>"
        "<a href='data:text/html,x'>data</a><a href='//cdn.example.com/x'>proto</a>"
        "<a href='https://e.org/" + "x" * 3000 + "'>long</a><base href='https://evil.example/'>"
    )
    assert parsed.root is not None
    clean.absolutize_links(parsed.root, "https://example.org/dir/page")
    hrefs = {a.text: a.get("href") for a in parsed.root.iter("a")}
    assert hrefs == {
        "rel": "https://example.org/other?a=1&b=2#x",
        "js": None,
        "data": None,
        "proto": "https://cdn.example.com/x",
        "long": None,
    }


def test_link_targets_are_written_as_a_browser_requests_them() -> None:
    # AFPBB's search links (newspaper4k's set): a space and ">" in the query, which a browser
    # percent-encodes; written raw they needed angle brackets and escapes in Markdown.
    parsed = parse_html(
        "<a href='/search?q=Boko Haram&c=AFPBB>記事'>a</a>"
        "<a href='page two.html#a \"b\" <c>'>b</a><a href='/wiki/Foo_(bar)'>c</a>"
    )
    assert parsed.root is not None
    clean.absolutize_links(parsed.root, "https://e.org/dir/page")
    assert [a.get("href") for a in parsed.root.iter("a")] == [
        "https://e.org/search?q=Boko%20Haram&c=AFPBB%3E記事",
        "https://e.org/dir/page%20two.html#a%20%22b%22%20%3Cc%3E",
        "https://e.org/wiki/Foo_(bar)",
    ]


def test_heading_anchors_are_collected() -> None:
    parsed = parse_html(
        "<h2 id='install'>Install</h2>"
        "<h2><span class='mw-headline' id='History'>History</span></h2>"
        "<section id='usage'><h2>Usage</h2></section>"
        "<a name='faq'></a><h3>FAQ</h3><h3>No anchor</h3>"
    )
    assert parsed.root is not None
    assert clean.heading_ids(parsed.root) == [
        ("install", ("install",)),
        ("history", ("History",)),
        ("usage", ("usage",)),
        ("faq", ("faq",)),
    ]


_HREF_CHARS = [*"/.?#;:%@&=+ab-_~!$'()*,\\ \t\ré", "\x00", "\x7f", "//", "/./", "/../"]


@settings(max_examples=500, deadline=None)
@given(
    st.lists(st.sampled_from(_HREF_CHARS), max_size=16).map("".join),
    st.sampled_from(
        ["https://example.org/dir/page?x=1", "http://example.org:8080/a/b/", "https://[::1]/x"]
    ),
)
def test_root_relative_links_resolve_as_urljoin_resolves_them(href: str, base: str) -> None:
    """The shortcut for links like "/path?query" (no urljoin call) gives exactly what the
    general path gives, or defers to it; unsafe or unbounded targets are still dropped."""
    assert clean._resolve(base, href, clean._origin(base)) == clean._resolve(base, href)


@pytest.mark.req("REQ-CTX-005")
@pytest.mark.parametrize(
    "mark",
    [
        "<a href='#s'>#</a>",  # VitePress, Hugo themes
        "<a class='hash-link' href='#s' title='Direct link'>\u200b</a>",  # Docusaurus
        "<a class='anchor-link' href='#s'>\u00b6</a>",
        "<a href='#s'>\U0001f517</a>",
        "<a href='/edit/page.md'><img src='pencil.svg' alt='edit'></a>",
    ],
)
def test_a_link_in_a_heading_without_a_letter_is_a_mark_not_content(mark: str) -> None:
    """A permalink or an edit icon next to a heading, whatever its class, is dropped: kept,
    every heading of the content and of its outline ended in a link like "[#](...)". A link
    that holds words stays, and so does the heading's anchor for fragments."""
    page = (
        f"<article><h2 id='s'>Setup {mark}</h2><h3><a href='#t'>Linked title</a></h3>"
        "<p>Body text of the section.</p></article>"
    )
    parsed = parse_html(page)
    assert parsed.root is not None
    noise = clean.find_noise(parsed.root, parsed.style_text)
    clean.absolutize_links(parsed.root, "https://example.org/doc")
    ids = clean.heading_ids(parsed.root)
    clean.remove_chrome(parsed.root, noise)
    headings = list(parsed.root.iter("h2", "h3"))
    assert [h.find("a") is None for h in headings] == [True, False]
    assert " ".join(headings[0].itertext()).strip() == "Setup"
    assert ("setup", ("s",)) in ids


@pytest.mark.req("REQ-FETCH-002")
def test_a_fragment_finds_a_heading_whose_marks_were_dropped() -> None:
    """A heading's anchor ids are matched to its Markdown heading by its text, which no longer
    holds the marks chrome removal drops ("¶" permalinks, MediaWiki's "[edit]"); counted
    with them, an id unlike the heading's slug (Sphinx's ``module-json``) found nothing."""
    from rypsok.fetch.focus import by_fragment
    from rypsok.fetch.sections import index_sections

    body = "<p>" + "Words of a paragraph about the module and its use. " * 8 + "</p>"
    page = (
        "<article><h1 id='module-json'>json \u2014 JSON encoder<a class='headerlink' "
        f"href='#module-json'>\u00b6</a></h1>{body}<h2><span id='Early_days' "
        "class='mw-headline'>Early days</span><span class='mw-editsection'>[<a "
        f"href='/edit'>edit</a>]</span></h2>{body}</article>"
    )
    result = job_result(page, "https://docs.example/json")
    assert "\u00b6" not in result.content and "edit" not in result.content
    sections = index_sections(result.content, result.heading_ids)
    found = by_fragment(sections, "module-json")
    assert found is not None and found.heading == "json \u2014 JSON encoder"
    found = by_fragment(sections, "Early_days")
    assert found is not None and found.heading == "Early days"
