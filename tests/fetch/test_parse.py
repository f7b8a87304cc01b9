"""Bounded parsing (REQ-PAGE-006, REQ-SEC-014, LIM-F10, LIM-F11)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree

from rypsok.config.limits import limit
from rypsok.fetch.parse import MAX_DEPTH, MAX_NODES, parse_html, text_of


def _depth(root: etree._Element) -> int:
    return max(sum(1 for _ in el.iterancestors()) + 1 for el in root.iter())


def test_the_bounds_are_the_limits_table() -> None:
    assert (limit("LIM-F10"), limit("LIM-F11")) == (MAX_NODES, MAX_DEPTH)


@pytest.mark.req("REQ-PAGE-006")
def test_depth_is_bounded_while_parsing() -> None:
    page = "<html><body><p>before</p>" + "<div>" * 100_000 + "deep" + "</div>" * 100_000
    parsed = parse_html(page + "<p>after</p></body></html>")
    assert parsed.stopped == "depth" and parsed.partial
    assert parsed.root is not None
    assert _depth(parsed.root) <= MAX_DEPTH
    # Parsing stopped at the bound: it never saw the rest of the document.
    assert parsed.nodes < MAX_DEPTH + 10
    text = text_of(parsed.root)
    assert "before" in text and "deep" not in text and "after" not in text


@pytest.mark.req("REQ-PAGE-006")
def test_nodes_are_bounded_while_parsing() -> None:
    page = "<html><body>" + "<p>x</p>" * 50_000 + "<p>tail</p></body></html>"
    parsed = parse_html(page, max_nodes=1_000)
    assert parsed.stopped == "nodes"
    assert parsed.nodes == 1_001  # counting stopped at the bound, not at the 50,002nd node
    assert parsed.root is not None
    assert sum(1 for _ in parsed.root.iter()) <= 1_000
    assert "tail" not in text_of(parsed.root)


def test_a_page_within_the_bounds_is_complete() -> None:
    parsed = parse_html("<title>T</title><p>one</p><p>two <b>bold</b></p>")
    assert not parsed.partial
    assert parsed.root is not None
    assert text_of(parsed.root) == "Tonetwo bold"


@pytest.mark.req("REQ-CTX-005")
def test_unrendered_subtrees_never_reach_the_tree() -> None:
    parsed = parse_html(
        "<style>.x{display:none}</style><script>alert(1)</script><template><p>t</p></template>"
        "<noscript>ns</noscript><svg><text>svg</text></svg><iframe>if</iframe><p>kept</p>"
        "<!-- a comment --><?php echo 1 ?>"
    )
    assert parsed.root is not None
    assert text_of(parsed.root) == "kept"
    assert parsed.style_text == ".x{display:none}"


@pytest.mark.req("REQ-PAGE-006")
@pytest.mark.parametrize(
    "page",
    [
        "",
        "<",
        "</p></div></html>",
        "<html><html><body><body>",
        "<p" * 10_000,
        "<a href='",
        "\x00" * 10,
    ],
)
def test_malformed_markup_never_raises(page: str) -> None:
    parse_html(page)


@pytest.mark.req("REQ-SEC-014")
@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("<>/=\"' abcdiv!-p\n&;#x0")), max_size=400))
def test_parsing_arbitrary_text_never_raises(page: str) -> None:
    parsed = parse_html(page, max_nodes=50, max_depth=8)
    if parsed.root is not None:
        assert sum(1 for _ in parsed.root.iter()) <= 50
        assert _depth(parsed.root) <= 8
