"""The Hacker News driver against hand-written fixtures in the Algolia HN API's documented shape.

Fixture shape: https://hn.algolia.com/api (``hits[]`` with ``title``, ``url``, ``story_text``,
``objectID``, ``created_at``, ``created_at_i``, ``_tags``, ``_highlightResult``; top level
``nbHits``, ``page``, ``hitsPerPage``, ``params``), Algolia's error envelope
``{"message", "status"}``, and SearXNG ``searx/engines/hackernews.py``.
REQ-TEST-002, REQ-ENG-005/006/009/010/011/012, REQ-RES-002, REQ-CMP-001.
"""

from __future__ import annotations

from typing import Any

import pytest

from rypsok.contract.vocabulary import Category, FailureClass, TimeRange
from rypsok.engines import hackernews
from rypsok.engines.base import EngineResponse
from tests.engines.helpers_a import (
    DOCS,
    NOW,
    assert_ranks,
    assert_retry_after,
    common_failures,
    expect_failure,
    fixture,
    make_query,
    origin_of,
    params_of,
    respond,
    retry_after_cases,
)

ENGINE = "hackernews"


def query(**changes: Any) -> Any:
    """A query on the Algolia HN endpoint."""
    changes.setdefault("text", "rust")
    return make_query(hackernews.ADMISSION.endpoint, **changes)


# --- admission record ---------------------------------------------------------------------


def test_req_eng_010_admission_record() -> None:
    """REQ-ENG-010, REQ-CMP-001: the record carries the provider's obligations."""
    record = hackernews.ADMISSION
    assert record.engine_id == ENGINE
    assert record.categories == (Category.NEWS,)
    assert record.endpoint == "https://hn.algolia.com/api/v1/search"
    assert record.documentation == "https://hn.algolia.com/api"
    assert (record.rate.requests, record.rate.per_seconds) == (10_000, 3600.0)
    assert record.languages == frozenset()
    assert record.time_ranges == frozenset(TimeRange)
    assert record.max_query_chars * 4 <= 512
    assert record.key == "none"


def test_req_cmp_001_admission_page_exists() -> None:
    """REQ-CMP-001: the admission record page exists and names the endpoint and the limit."""
    page = (DOCS / "hackernews.md").read_text(encoding="utf-8")
    assert "https://hn.algolia.com/api/v1/search" in page
    assert "10,000" in page


# --- request ------------------------------------------------------------------------------


def test_req_eng_011_request_parameters() -> None:
    """REQ-ENG-011: one GET on the search endpoint for LIM-S3 stories."""
    request = hackernews.build_request(query())
    assert request.method == "GET"
    assert request.body is None
    assert origin_of(request.url) == ("https", "hn.algolia.com")
    assert request.url.startswith("https://hn.algolia.com/api/v1/search?")
    assert params_of(request) == {"query": "rust", "tags": "story", "hitsPerPage": "10"}
    assert ("Accept", "application/json") in request.headers
    assert request.credential_headers == frozenset()


def test_req_eng_011_count_capped_at_provider_maximum() -> None:
    """REQ-ENG-011: hitsPerPage follows the count, capped at Algolia's maximum."""
    assert params_of(hackernews.build_request(query(count=4)))["hitsPerPage"] == "4"
    assert params_of(hackernews.build_request(query(count=5000)))["hitsPerPage"] == "1000"


@pytest.mark.parametrize(
    ("time_range", "since"),
    [
        (TimeRange.DAY, 1_795_996_800),  # 2026-11-30T00:00:00Z
        (TimeRange.WEEK, 1_795_478_400),  # 2026-11-24
        (TimeRange.MONTH, 1_793_404_800),  # 2026-10-31 (31 days)
        (TimeRange.YEAR, 1_764_460_800),  # 2025-11-30 (366 days)
    ],
)
def test_req_eng_010_time_range_is_a_created_at_bound(time_range: TimeRange, since: int) -> None:
    """REQ-ENG-010: a time range is ``numericFilters=created_at_i>…`` from the query's clock."""
    request = hackernews.build_request(query(time_range=time_range))
    assert params_of(request)["numericFilters"] == f"created_at_i>{since}"
    assert origin_of(request.url) == ("https", "hn.algolia.com")


def test_req_eng_010_time_range_uses_query_now() -> None:
    """The bound moves with ``query.now``, never with the machine's clock."""
    later = hackernews.build_request(query(time_range=TimeRange.DAY, now=NOW + 3600))
    assert params_of(later)["numericFilters"] == f"created_at_i>{1_795_996_800 + 3600}"


def test_build_request_is_pure() -> None:
    """REQ-ENG-001: the same query builds the same request."""
    assert hackernews.build_request(query()) == hackernews.build_request(query())


# --- success and empty --------------------------------------------------------------------


def test_req_test_002_success() -> None:
    """REQ-TEST-002, REQ-ENG-005: stories in order; Ask HN links to its discussion page."""
    results = hackernews.parse(respond(fixture(ENGINE, "success.json")))
    assert [(r.title, r.url, r.date) for r in results] == [
        (
            "Why Rust for safe systems programming",
            "https://example.org/blog/why-rust",
            "2026-11-26",
        ),
        (
            "Ask HN: Is Rust worth learning in 2026?",
            "https://news.ycombinator.com/item?id=41230001",
            "2026-11-25",
        ),
        (
            "Show HN: A tiny Rust HTTP server",
            "https://github.com/example/tiny-rust-http",
            "2026-11-21",
        ),
    ]
    assert_ranks(results)


def test_req_eng_012_snippets_stay_raw() -> None:
    """REQ-ENG-012: ``story_text`` HTML and entities are passed on untouched."""
    results = hackernews.parse(respond(fixture(ENGINE, "success.json")))
    assert results[0].snippet == ""
    assert results[1].snippet == (
        "<p>I&#x27;m weighing Rust against Go &amp; Zig for a new <i>embedded</i> project."
        "<p>What did you pick?"
    )
    assert results[2].snippet == ""


def test_req_test_002_empty() -> None:
    """REQ-TEST-002: an answer with no hits is an empty list, not a failure."""
    assert hackernews.parse(respond(fixture(ENGINE, "empty.json"))) == []


def test_malformed_items_are_skipped() -> None:
    """Hits without a title or any usable URL are skipped; a bad story URL falls back to HN."""
    results = hackernews.parse(respond(fixture(ENGINE, "malformed_items.json")))
    assert [(r.title, r.url, r.date, r.rank) for r in results] == [
        (
            "A story whose URL is not a web URL",
            "https://news.ycombinator.com/item?id=41000003",
            "2026-11-01",
            1,
        )
    ]


# --- failures -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("response", "expected"),
    [pytest.param(r, c, id=i) for i, r, c in common_failures(ENGINE)],
)
def test_req_eng_006_error_classes(response: EngineResponse, expected: FailureClass) -> None:
    """REQ-ENG-006, REQ-ENG-009, REQ-RES-002: each failure has one class and no provider text."""
    expect_failure(hackernews.parse, response, expected)


@pytest.mark.parametrize(
    ("headers", "expected"),
    [pytest.param(h, e, id=i) for i, h, e in retry_after_cases()],
)
def test_req_res_002_http_429_retry_after(
    headers: dict[str, str], expected: tuple[float, float] | None
) -> None:
    """REQ-RES-002: Algolia's 429 is rate_limited; Retry-After in seconds or as a date."""
    response = respond(fixture(ENGINE, "error_429.json"), 429, headers=headers)
    failure = expect_failure(hackernews.parse, response, FailureClass.RATE_LIMITED)
    assert_retry_after(failure, expected)


def test_req_eng_006_bad_request_is_request_failure() -> None:
    """REQ-ENG-006: Algolia's 400 for a parameter it refuses is a request_failure."""
    response = respond(fixture(ENGINE, "error_400.json"), 400)
    expect_failure(hackernews.parse, response, FailureClass.REQUEST_FAILURE)


def test_req_eng_009_ip_block_is_blocked() -> None:
    """REQ-ENG-009: a 403, even in JSON, is the documented IP block: blocked, not auth."""
    response = respond(fixture(ENGINE, "error_403.json"), 403)
    expect_failure(hackernews.parse, response, FailureClass.BLOCKED)
