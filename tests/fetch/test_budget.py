"""Projection-first budget (ADR-0007; REQ-FETCH-003/005, REQ-CTX-007, LIM-U1)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rypsok.contract.errors import ToolFailure
from rypsok.contract.responses import FeedItem
from rypsok.contract.vocabulary import Access, ErrorKind, NoticeCode, Reason
from rypsok.fetch import (
    Extraction,
    StartCharBeyondEnd,
    fetch_response,
    select_and_budget,
    select_and_budget_async,
)
from rypsok.fetch.access import AccessVerdict
from rypsok.fetch.budget import answer_unit_end, cut_position
from rypsok.fetch.media import MediaKind
from rypsok.fetch.sections import index_sections

DOC = (
    "# Guide\n\nIntro paragraph one.\n\nIntro paragraph two is a little longer.\n\n"
    "## Install\n\nFirst install paragraph, the answer unit.\n\nSecond install paragraph.\n\n"
    "## Configure\n\n- item one\n- item two\n  continued\n- item three\n\nAfter the list.\n\n"
    "## Code\n\n```\nline 1\n\nline 3\n```\n\nAfter code.\n"
)


def extraction(
    content: str = DOC, items: tuple[FeedItem, ...] | None = None, total_items: int = 0
) -> Extraction:
    return Extraction(
        media_type="text/html",
        kind=MediaKind.HTML,
        title="T",
        content=content,
        sections=index_sections(content),
        heading_ids=(),
        items=items,
        feed_items_total=total_items,
        sha256="0" * 64,
        charset="utf-8",
        partial=False,
        charset_replaced=False,
        title_truncated=False,
        access=AccessVerdict(Access.OPEN, ()),
        method="trafilatura",
    )


@pytest.mark.req("REQ-FETCH-003")
def test_a_page_that_fits_is_complete() -> None:
    view = select_and_budget(extraction(), max_chars=10_000)
    assert view.content == DOC and not view.truncated and view.next_start_char is None
    assert view.total_chars == len(DOC)
    assert [e.heading for e in view.outline] == ["Guide", "Install", "Configure", "Code"]
    for entry in view.outline:
        assert DOC[entry.start_char :].startswith("#")


@pytest.mark.req("REQ-FETCH-003")
@pytest.mark.req("REQ-CTX-007")
def test_max_chars_bounds_content_and_outline() -> None:
    view = select_and_budget(extraction(), max_chars=60)
    assert view.truncated and view.next_start_char is not None
    assert view.external_chars() <= 60
    assert view.content == DOC[: view.next_start_char]


@pytest.mark.req("REQ-FETCH-005")
def test_continuation_reads_the_whole_content_exactly() -> None:
    pieces, start = [], None
    while True:
        view = select_and_budget(extraction(), start_char=start, max_chars=40)
        pieces.append(view.content)
        if view.next_start_char is None:
            break
        assert view.next_start_char > view.start_char
        start = view.next_start_char
    assert "".join(pieces) == DOC


@pytest.mark.req("REQ-FETCH-005")
def test_start_char_at_or_beyond_the_end_is_refused_with_the_length() -> None:
    for start in (len(DOC), len(DOC) + 10):
        with pytest.raises(StartCharBeyondEnd) as refused:
            select_and_budget(extraction(), start_char=start, max_chars=100)
        failure = refused.value.to_tool_failure()
        assert isinstance(failure, ToolFailure)
        assert (failure.kind, failure.reason) == (
            ErrorKind.INVALID_REQUEST,
            Reason.START_CHAR_BEYOND_END,
        )
        assert failure.body.detail.total_chars == len(DOC)
        assert str(len(DOC)) in failure.body.message
    empty = select_and_budget(extraction(""), start_char=0, max_chars=10)
    assert empty.content == "" and not empty.truncated


@pytest.mark.req("REQ-FETCH-003")
def test_cuts_prefer_paragraph_then_line_boundaries() -> None:
    text = "a" * 50 + "\n\n" + "b" * 20 + "\n" + "c" * 20
    assert cut_position(text, 0, 60, None) == 52
    assert cut_position(text, 0, 80, None) == 73
    assert cut_position("x" * 100, 0, 40, None) == 40
    assert cut_position("word " * 20, 0, 42, None) == 40


@pytest.mark.req("REQ-FETCH-003")
def test_a_part_never_ends_on_a_heading_without_its_text() -> None:
    """A window cut at a paragraph or line boundary that would end on headings is cut before
    them, so the next part starts with the heading and its text together."""
    body = "a" * 50 + "\n\n"
    text = body + "## Tides\n\n" + "b" * 40
    assert cut_position(text, 0, 64, None) == len(body)
    stacked = body + "## Tides\n\n### High water\n\n" + "b" * 40
    assert cut_position(stacked, 0, 80, None) == len(body)
    lines = "a" * 50 + "\n# Title\n" + "b" * 40
    assert cut_position(lines, 0, 62, None) == 51
    view = select_and_budget(extraction(text), max_chars=64)
    assert not view.content.rstrip().endswith("Tides")
    following = select_and_budget(
        extraction(text), start_char=view.next_start_char or 0, max_chars=1000
    )
    assert following.content.startswith("## Tides")
    # Only headings move the cut: a window of nothing but a heading keeps it.
    assert cut_position("# A\n\n# B\n\n" + "c" * 40, 0, 12, None) > 0
    # A heading that is the window's first line is kept: the window is never emptied.
    assert cut_position("## Only\n\n" + "d" * 40, 0, 12, None) == 9


@pytest.mark.req("REQ-CTX-010")
def test_budgets_count_unicode_scalar_values() -> None:
    text = "😀" * 30 + "東京" * 30
    view = select_and_budget(extraction(text), max_chars=25)
    assert view.content == "😀" * 25
    assert view.next_start_char == 25
    combining = "e\u0301" * 20
    cut = select_and_budget(extraction(combining), max_chars=5)
    assert not cut.content.endswith("e")  # never before its combining accent
    assert len(cut.content) <= 5


@pytest.mark.req("REQ-FETCH-003")
def test_the_selected_heading_and_its_first_block_stay_whole() -> None:
    install = next(s for s in index_sections(DOC) if s.heading == "Install")
    unit_end = answer_unit_end(DOC, install)
    assert DOC[install.start_char : unit_end] == (
        "## Install\n\nFirst install paragraph, the answer unit.\n"
    )
    view = select_and_budget(
        extraction(), fragment="install", max_chars=len(DOC[install.start_char : unit_end]) + 5
    )
    assert view.start_char == install.start_char
    assert view.content.startswith("## Install\n\nFirst install paragraph, the answer unit.")
    assert view.external_chars() <= len(DOC[install.start_char : unit_end]) + 5
    configure = next(s for s in index_sections(DOC) if s.heading == "Configure")
    assert DOC[configure.start_char : answer_unit_end(DOC, configure)].endswith("- item three\n")
    code = next(s for s in index_sections(DOC) if s.heading == "Code")
    assert DOC[code.start_char : answer_unit_end(DOC, code)].endswith("line 3\n```\n")


@pytest.mark.req("REQ-FETCH-005")
def test_a_given_start_char_wins_over_the_section() -> None:
    view = select_and_budget(extraction(), focus="configure", start_char=5, max_chars=10_000)
    assert view.start_char == 5 and view.content == DOC[5:]


def test_focus_not_found_is_reported() -> None:
    view = select_and_budget(extraction(), focus="zebra migration", max_chars=10_000)
    assert view.start_char == 0
    assert [n.code for n in view.notices] == [NoticeCode.FOCUS_NOT_FOUND]


def test_the_outline_is_shortened_by_level_first() -> None:
    headings = "".join(f"## Section number {n}\n\ntext {n}\n\n" for n in range(40))
    doc = "# Top\n\n" + headings
    view = select_and_budget(extraction(doc), max_chars=200)
    assert view.truncated
    assert view.outline[0].heading == "Top"
    assert view.external_chars() <= 200


def test_feed_items_count_against_the_budget() -> None:
    items = tuple(
        FeedItem(
            title=f"Item {n}",
            link=f"https://e.org/{n}",
            summary="s" * 30,
            date="2026-01-01T00:00:00",
        )
        for n in range(10)
    )
    feed = replace(
        extraction("[Feed](https://e.org/)"),
        kind=MediaKind.FEED,
        items=items,
        feed_items_total=10,
        sections=(),
    )
    view = select_and_budget(feed, max_chars=150)
    assert view.items is not None and 0 < len(view.items) < 10
    assert view.external_chars() <= 150 and view.truncated
    assert any(n.code is NoticeCode.FEED_ITEMS_LIMITED for n in view.notices)
    tiny = select_and_budget(feed, max_chars=70)
    assert tiny.external_chars() <= 70


def test_fetch_response_carries_the_view() -> None:
    ext = extraction()
    view = select_and_budget(ext, max_chars=50)
    response = fetch_response(ext, view, url="https://e.org/")
    assert response.content == view.content
    assert response.next_start_char == view.next_start_char
    assert response.total_chars == len(DOC) and response.truncated
    assert response.access is Access.OPEN and response.items is None


@pytest.mark.req("REQ-FETCH-003")
@pytest.mark.req("REQ-CTX-007")
@settings(max_examples=300, deadline=None)
@given(
    st.text(alphabet=st.sampled_from(list("ab #\n-`é😀\u0301")), max_size=400),
    st.integers(min_value=1, max_value=200),
    st.one_of(st.none(), st.text(alphabet="ab #", max_size=5)),
)
def test_every_view_fits_the_budget(text: str, max_chars: int, focus: str | None) -> None:
    ext = extraction(text)
    view = select_and_budget(ext, focus=focus, max_chars=max_chars)
    assert view.external_chars() <= max_chars
    assert text[view.start_char :].startswith(view.content)
    if view.next_start_char is None:
        assert view.start_char + len(view.content) == len(text)
    else:
        assert view.truncated
        assert view.next_start_char == view.start_char + len(view.content)
        assert view.next_start_char > view.start_char


@pytest.mark.anyio
@pytest.mark.req("REQ-PAGE-008")
async def test_the_async_variant_gives_the_same_view() -> None:
    big = "".join(f"## Part {n}\n\n" + "filler words here " * 40 + "\n\n" for n in range(400))
    assert len(big) > 100_000  # runs in a worker thread
    for content in (DOC, big):
        ext = extraction(content)
        same = select_and_budget(ext, focus="part 399", max_chars=500)
        assert await select_and_budget_async(ext, focus="part 399", max_chars=500) == same
