"""The markup step alone (REQ-CTX-004): tags go, plain text with angle brackets stays."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rypsok.boundary.markup import remove_markup

PROPERTY = settings(deadline=None, database=None, max_examples=300)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("<b>bold</b> text", "bold text"),
        ("<em>a</em><strong>b</strong>", "ab"),
        ('<a href="https://x.example/?a=1&b=2" class=c>link</a>', "link"),
        ('<a title="x>y">link</a>', "link"),  # ">" inside a quoted value
        ("<B>old</B> <BR> style", "old   style"),
        ("a<br/>b", "a b"),
        ("<p>one</p><p>two</p>", " one  two "),  # block tags separate words
        ("<my-widget foo>t</my-widget>", "t"),  # custom element
        ("<o:p></o:p>x", "x"),  # namespaced (pasted office HTML)
        ("<!DOCTYPE html>t", "t"),
        ('<?xml version="1.0"?>t', "t"),
        ("<![CDATA[x]]>t", "t"),  # outside SVG and MathML, a bogus comment
    ],
)
def test_req_ctx_004_tags_are_removed(raw: str, expected: str) -> None:
    """REQ-CTX-004: HTML tags are removed; block-level tags leave a word break."""
    assert remove_markup(raw) == (expected, True)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("x<script>alert(1)</script>y", "xy"),
        ('x<SCRIPT type="a">z</SCRIPT >y', "xy"),
        ("x<style>.a{color:red}</style>y", "xy"),
        ("x<template><p>never shown</p></template>y", "xy"),
        ("x<noscript>enable js</noscript>y", "xy"),
        ("x<script>no end in sight", "x"),  # unclosed: a browser shows nothing after it
        ("a<!-- hidden -->b", "ab"),
        ("a<!-- never closed", "a"),
        ("a<!-->b", "ab"),
        ("a<!-- x --!>b", "ab"),
    ],
)
def test_req_ctx_004_script_style_and_comment_contents_are_removed(raw: str, expected: str) -> None:
    """REQ-CTX-004: comments and the contents of script and style never reach the text."""
    assert remove_markup(raw) == (expected, True)


@pytest.mark.parametrize(
    "text",
    [
        "a < b and c > d",
        "x<y",
        "for (i = 0; i<n; i++)",
        "List<String> and Map<K, V>",
        "Vec<Image> or Option<Template> stays",  # mixed case: a type, not an element
        "std::vector<int> v;",
        "<https://example.com/path>",  # Markdown autolink
        "a <- b, c -> d, <=, >=, <>",
        "3 < 4 > 2",
        "<scripts> and <styles> are not elements",
    ],
)
def test_req_ctx_004_plain_text_with_angle_brackets_is_kept(text: str) -> None:
    """REQ-CTX-004: comparison signs, generics and autolinks are text, not markup."""
    assert remove_markup(text) == (text, False)


def test_req_ctx_004_entities_are_not_touched_by_the_markup_step() -> None:
    """REQ-CTX-004: escaped markup is text for this step; decoding is the next step's job."""
    assert remove_markup("&lt;b&gt;bold&lt;/b&gt;") == ("&lt;b&gt;bold&lt;/b&gt;", False)


def test_req_ctx_004_markup_step_reports_no_change_without_markup() -> None:
    """REQ-CTX-004: the flag is False when nothing was removed, so no notice is raised."""
    assert remove_markup("plain text") == ("plain text", False)


@PROPERTY
@given(st.text(alphabet=st.characters(exclude_characters="<")))
def test_req_ctx_004_text_without_a_less_than_sign_is_never_changed(text: str) -> None:
    """REQ-CTX-004: without "<" there is no markup, whatever else the text holds."""
    assert remove_markup(text) == (text, False)


@PROPERTY
@given(
    st.lists(
        st.sampled_from(["<", ">", "a", "b", " ", "=", '"', "'", "/", "!", "-", "script", "p"]),
        max_size=60,
    ).map("".join)
)
def test_req_ctx_004_markup_removal_never_adds_characters(text: str) -> None:
    """REQ-CTX-004: removal only deletes or replaces a tag by one space; it never grows."""
    cleaned, changed = remove_markup(text)
    assert len(cleaned) <= len(text)
    assert changed == (cleaned != text)
