"""The Exa driver against hand-written fixtures in the Search API's documented shape.

Fixture shape: https://exa.ai/docs/reference/search (``requestId``, ``resolvedSearchType``,
``results[]`` with ``id``, ``title``, ``url``, ``publishedDate``, ``author``, ``score``,
``image``, ``favicon``, ``highlights``, ``highlightScores``, ``summary``; ``costDollars``),
https://exa.ai/docs/reference/error-codes (400, 401, 402 credits or key budget, 403, 429;
bodies with ``requestId``, ``error`` and ``tag``) and SearXNG ``searx/engines/exaapi.py``.
REQ-TEST-002, REQ-ENG-005/006/009/010/011/012, REQ-RES-002, REQ-CFG-004, REQ-CMP-001.
"""

from __future__ import annotations

from typing import Any

import pytest

from rypsok.contract.vocabulary import Category, FailureClass, SafeSearch, TimeRange
from rypsok.engines import exa
from rypsok.engines.base import EngineQuery, EngineResponse
from tests.engines.helpers_a import (
    HTML,
    NOW,
    assert_ranks,
    assert_retry_after,
    common_failures,
    expect_failure,
    fixture,
    origin_of,
    respond,
    retry_after_cases,
)
from tests.engines.helpers_c import (
    KEY,
    admission_page,
    assert_key_only_in,
    assert_keyed_record,
    assert_reads_no_clock,
    header,
    json_body,
    json_response,
    keyed_query,
    retry_after_headers,
)

ENGINE = "exa"


def query(**changes: Any) -> EngineQuery:
    """A keyed query on Exa's search endpoint."""
    changes.setdefault("text", "metasearch engine")
    return keyed_query(exa.ADMISSION.endpoint, **changes)


# --- admission record ---------------------------------------------------------------------


def test_req_eng_010_admission_record() -> None:
    """REQ-ENG-010, REQ-CMP-001, REQ-CFG-004: keyed, 5 requests/s, not cacheable."""
    record = exa.ADMISSION
    assert_keyed_record(record, ENGINE)
    assert record.endpoint == "https://api.exa.ai/search"
    assert (record.rate.requests, record.rate.per_seconds) == (5, 1.0)
    assert record.cacheable is False
    assert record.languages == frozenset()  # no language parameter
    assert record.time_ranges == frozenset(TimeRange)
    assert record.max_results == 100


def test_categories_are_all_four() -> None:
    """REQ-ENG-007: one driver serves general, news, science and code through Exa's category."""
    assert exa.ADMISSION.categories == (
        Category.GENERAL,
        Category.NEWS,
        Category.SCIENCE,
        Category.CODE,
    )


def test_req_cmp_001_admission_page_exists() -> None:
    """REQ-CMP-001: the admission page names the endpoint, the header and the categories."""
    page = admission_page(ENGINE)
    assert exa.ADMISSION.endpoint in page
    assert "x-api-key" in page
    assert "research paper" in page
    assert "402" in page


# --- request ------------------------------------------------------------------------------


def test_req_eng_011_request_body() -> None:
    """REQ-ENG-011: one JSON POST for LIM-S3 results with highlights only, moderated."""
    request = exa.build_request(query())
    assert request.method == "POST"
    assert request.url == "https://api.exa.ai/search"
    assert origin_of(request.url) == ("https", "api.exa.ai")
    assert json_body(request) == {
        "query": "metasearch engine",
        "type": "auto",
        "numResults": 10,
        "contents": {"highlights": {"maxCharacters": 500}},
        "moderation": True,
    }
    assert header(request, "Accept") == "application/json"


def test_req_cfg_004_key_only_in_the_api_key_header() -> None:
    """REQ-CFG-004, REQ-SEC-017: the key travels in x-api-key, which is listed."""
    request = exa.build_request(query())
    assert header(request, "x-api-key") == KEY
    assert request.credential_headers == frozenset({"x-api-key"})
    assert_key_only_in(request, "x-api-key")


def test_req_eng_011_count_capped_at_provider_maximum() -> None:
    """REQ-ENG-011: numResults follows the count, capped at Exa's 100."""
    assert json_body(exa.build_request(query(count=7)))["numResults"] == 7
    assert json_body(exa.build_request(query(count=500)))["numResults"] == 100


@pytest.mark.parametrize(
    ("time_range", "since"),
    [
        (TimeRange.DAY, "2026-11-30T00:00:00.000Z"),
        (TimeRange.WEEK, "2026-11-24T00:00:00.000Z"),
        (TimeRange.MONTH, "2026-10-31T00:00:00.000Z"),
        (TimeRange.YEAR, "2025-11-30T00:00:00.000Z"),
    ],
)
def test_req_eng_010_time_range_is_start_published_date(time_range: TimeRange, since: str) -> None:
    """REQ-ENG-010: a time range is ``startPublishedDate``, from query.now (UTC)."""
    body = json_body(exa.build_request(query(time_range=time_range, now=NOW)))
    assert body["startPublishedDate"] == since


@pytest.mark.parametrize(("region", "location"), [("de", "DE"), ("US", "US")])
def test_region_is_user_location(region: str, location: str) -> None:
    """The operator's region is Exa's ``userLocation`` (two-letter, upper case)."""
    assert json_body(exa.build_request(query(region=region)))["userLocation"] == location


def test_no_region_sends_no_user_location() -> None:
    """Without a region Exa is not told a location."""
    assert "userLocation" not in json_body(exa.build_request(query(region="")))


@pytest.mark.parametrize(
    ("level", "moderated"),
    [(SafeSearch.OFF, False), (SafeSearch.MODERATE, True), (SafeSearch.STRICT, True)],
)
def test_safe_search_is_moderation(level: SafeSearch, moderated: bool) -> None:
    """Safe search moderate or strict turns on Exa's ``moderation``."""
    body = json_body(exa.build_request(query(safe_search=level)))
    assert body.get("moderation", False) is moderated


@pytest.mark.parametrize(
    ("category", "value"),
    [
        (Category.GENERAL, None),
        (Category.NEWS, "news"),
        (Category.SCIENCE, "research paper"),
        (Category.CODE, "github"),
    ],
)
def test_category_selects_exas_category(category: Category, value: str | None) -> None:
    """The requested category picks Exa's category; general searches the whole index."""
    assert json_body(exa.build_request(query(category=category))).get("category") == value


def test_build_request_reads_no_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """REQ-ENG-001: the request is a pure function of the query."""
    assert_reads_no_clock(exa.build_request, query(time_range=TimeRange.MONTH), monkeypatch)


# --- success and empty --------------------------------------------------------------------


def test_req_test_002_success() -> None:
    """REQ-TEST-002, REQ-ENG-005: results in Exa's order with their publication dates."""
    results = exa.parse(respond(fixture(ENGINE, "success.json")))
    assert [(r.title, r.url, r.date) for r in results] == [
        (
            "Welcome to SearXNG — SearXNG Documentation",
            "https://docs.searxng.org/",
            "2026-11-28",
        ),
        ("Rank fusion for meta-search engines", "https://arxiv.org/abs/2305.00001", "2023-05-01"),
        ("searxng/searxng", "https://github.com/searxng/searxng", None),
    ]
    assert_ranks(results)


def test_req_eng_012_highlights_joined_raw() -> None:
    """REQ-ENG-012: highlights are joined as they are; entities and markup stay."""
    results = exa.parse(respond(fixture(ENGINE, "success.json")))
    assert results[0].snippet == (
        "SearXNG is a free internet metasearch engine which aggregates results from up to 243 "
        "search services &amp; databases. … Users are neither tracked nor <em>profiled</em>."
    )
    # No highlights: the summary; only blank highlights and nothing else: empty.
    assert results[1].snippet == "A study of reciprocal rank fusion across engines."
    assert results[2].snippet == ""


def test_req_test_002_empty() -> None:
    """REQ-TEST-002: an empty ``results`` list is an empty list, not a failure."""
    assert exa.parse(respond(fixture(ENGINE, "empty.json"))) == []


def test_malformed_items_are_skipped() -> None:
    """Items without a title or an absolute http(s) URL are skipped; odd fields dropped."""
    results = exa.parse(respond(fixture(ENGINE, "malformed_items.json")))
    assert [(r.title, r.url, r.snippet, r.date, r.rank) for r in results] == [
        ("Kept", "https://kept.example.com/p", "", None, 1)
    ]


# --- failures -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("response", "expected"),
    [pytest.param(r, c, id=i) for i, r, c in common_failures(ENGINE)],
)
def test_req_eng_006_error_classes(response: EngineResponse, expected: FailureClass) -> None:
    """REQ-ENG-006, REQ-ENG-009, REQ-RES-002: each failure has one class, no provider text."""
    expect_failure(exa.parse, response, expected)


@pytest.mark.parametrize(
    ("name", "headers", "expected"),
    [pytest.param(n, h, e, id=n) for n, h, e in retry_after_headers(NOW)],
)
def test_req_res_002_rate_limit_honours_retry_after(
    name: str, headers: dict[str, str], expected: float
) -> None:
    """REQ-RES-002: a 429 waits for ``retry-after``, seconds or an HTTP date (LIM-B4 bound)."""
    response = json_response(ENGINE, "rate_limited.json", 429, headers)
    failure = expect_failure(exa.parse, response, FailureClass.RATE_LIMITED)
    assert failure.retry_after_s == expected


@pytest.mark.parametrize(("name", "headers", "expected"), retry_after_cases())
def test_req_res_002_retry_after_without_date_header(
    name: str, headers: dict[str, str], expected: tuple[float, float] | None
) -> None:
    """REQ-RES-002: Retry-After alone, against the local clock when no Date came."""
    response = respond(fixture(ENGINE, "error_page.html"), 429, HTML, headers)
    failure = expect_failure(exa.parse, response, FailureClass.RATE_LIMITED)
    assert_retry_after(failure, expected)


def test_req_res_002_exhausted_credits_are_rate_limited() -> None:
    """REQ-RES-002: 402 (credits or the key's budget exhausted) is rate_limited."""
    response = json_response(ENGINE, "no_more_credits.json", 402)
    failure = expect_failure(exa.parse, response, FailureClass.RATE_LIMITED)
    assert failure.retry_after_s is None


@pytest.mark.parametrize(("name", "status"), [("unauthorized.json", 401), ("forbidden.json", 403)])
def test_req_eng_006_key_errors_are_auth_failure(name: str, status: int) -> None:
    """REQ-ENG-006: 401 and a JSON 403 (feature not on the plan) are auth_failure."""
    expect_failure(exa.parse, json_response(ENGINE, name, status), FailureClass.AUTH_FAILURE)


def test_req_eng_006_bad_request_is_request_failure() -> None:
    """REQ-ENG-006: 400 is a request_failure."""
    response = json_response(ENGINE, "bad_request.json", 400)
    expect_failure(exa.parse, response, FailureClass.REQUEST_FAILURE)
