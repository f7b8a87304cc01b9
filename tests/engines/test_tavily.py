"""The Tavily driver against hand-written fixtures in the Search API's documented shape.

Fixture shape: https://docs.tavily.com/documentation/api-reference/endpoint/search (``query``,
``answer``, ``images``, ``results[]`` with ``title``, ``url``, ``content``, ``score``,
``raw_content``, ``published_date`` for the news topic, ``response_time``, ``request_id``),
https://docs.tavily.com/documentation/rate-limits (429 with ``retry-after``) and
https://help.tavily.com/articles/8645538886-understanding-http-errors (401, 432 plan limit,
433 pay-as-you-go limit, 429, 400 ``Query is too long``; bodies ``{"detail": {"error": ...}}``).
REQ-TEST-002, REQ-ENG-005/006/009/010/011/012, REQ-RES-002, REQ-CFG-004, REQ-CMP-001.
"""

from __future__ import annotations

from typing import Any

import pytest

from rypsok.contract.vocabulary import Category, FailureClass, SafeSearch, TimeRange
from rypsok.engines import tavily
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

ENGINE = "tavily"


def query(**changes: Any) -> EngineQuery:
    """A keyed query on Tavily's search endpoint."""
    changes.setdefault("text", "metasearch engine")
    return keyed_query(tavily.ADMISSION.endpoint, **changes)


# --- admission record ---------------------------------------------------------------------


def test_req_eng_010_admission_record() -> None:
    """REQ-ENG-010, REQ-CMP-001, REQ-CFG-004: keyed, 100 requests/min, not cacheable."""
    record = tavily.ADMISSION
    assert_keyed_record(record, ENGINE)
    assert record.endpoint == "https://api.tavily.com/search"
    assert (record.rate.requests, record.rate.per_seconds) == (100, 60.0)
    assert record.cacheable is False
    assert record.languages == frozenset()  # no language parameter
    assert record.time_ranges == frozenset(TimeRange)
    assert record.max_query_chars == 400
    assert record.max_results == 20


def test_categories_are_tavilys_topics() -> None:
    """REQ-ENG-007: one driver serves Tavily's two topics, general and news."""
    assert tavily.ADMISSION.categories == (Category.GENERAL, Category.NEWS)


def test_req_cmp_001_admission_page_exists() -> None:
    """REQ-CMP-001: the admission page names the endpoint, the header and the quota codes."""
    page = admission_page(ENGINE)
    assert tavily.ADMISSION.endpoint in page
    assert "Authorization: Bearer" in page
    assert "432" in page
    assert "433" in page


# --- request ------------------------------------------------------------------------------


def test_req_eng_011_request_body() -> None:
    """REQ-ENG-011: one JSON POST, basic depth, LIM-S3 results, no answer or raw content."""
    request = tavily.build_request(query())
    assert request.method == "POST"
    assert request.url == "https://api.tavily.com/search"
    assert origin_of(request.url) == ("https", "api.tavily.com")
    assert json_body(request) == {
        "query": "metasearch engine",
        "topic": "general",
        "search_depth": "basic",
        "max_results": 10,
        "include_answer": False,
        "include_raw_content": False,
        "include_images": False,
    }
    assert header(request, "Accept") == "application/json"


def test_req_cfg_004_key_only_in_the_bearer_header() -> None:
    """REQ-CFG-004, REQ-SEC-017: the key is a bearer token, never in the body or the URL."""
    request = tavily.build_request(query())
    assert header(request, "Authorization") == f"Bearer {KEY}"
    assert request.credential_headers == frozenset({"Authorization"})
    assert "api_key" not in json_body(request)
    assert_key_only_in(request, "Authorization")


def test_req_eng_011_count_capped_at_provider_maximum() -> None:
    """REQ-ENG-011: max_results follows the count, capped at Tavily's 20."""
    assert json_body(tavily.build_request(query(count=4)))["max_results"] == 4
    assert json_body(tavily.build_request(query(count=40)))["max_results"] == 20


@pytest.mark.parametrize("time_range", list(TimeRange))
def test_req_eng_010_time_range(time_range: TimeRange) -> None:
    """REQ-ENG-010: a time range is Tavily's ``time_range`` (day, week, month, year)."""
    body = json_body(tavily.build_request(query(time_range=time_range)))
    assert body["time_range"] == time_range.value


@pytest.mark.parametrize(
    ("region", "country"), [("us", "united states"), ("GB", "united kingdom"), ("de", "germany")]
)
def test_region_boosts_a_country(region: str, country: str) -> None:
    """The operator's region is Tavily's ``country`` boost (general topic only)."""
    assert json_body(tavily.build_request(query(region=region)))["country"] == country


@pytest.mark.parametrize("region", ["", "EE", "zz"])
def test_unmapped_region_sends_no_country(region: str) -> None:
    """A region without a known Tavily name sends no ``country`` (a wrong one is a 400)."""
    assert "country" not in json_body(tavily.build_request(query(region=region)))


@pytest.mark.parametrize("level", list(SafeSearch))
def test_safe_search_has_no_parameter(level: SafeSearch) -> None:
    """Tavily has no safe-search parameter: the request is the same at every level."""
    assert json_body(tavily.build_request(query(safe_search=level))) == json_body(
        tavily.build_request(query())
    )


@pytest.mark.parametrize(
    ("category", "topic"),
    [(Category.GENERAL, "general"), (Category.NEWS, "news"), (Category.CODE, "general")],
)
def test_topic_for_category(category: Category, topic: str) -> None:
    """The requested category picks Tavily's topic; other categories search general."""
    assert tavily.topic_for(category) == topic


def test_news_category_selects_the_news_topic() -> None:
    """The requested category ``news`` searches Tavily's news topic, with no country boost."""
    body = json_body(tavily.build_request(query(category=Category.NEWS, region="us")))
    assert body["topic"] == "news"
    assert "country" not in body


def test_build_request_reads_no_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """REQ-ENG-001: the request is a pure function of the query."""
    assert_reads_no_clock(tavily.build_request, query(time_range=TimeRange.DAY), monkeypatch)


def test_body_is_utf8_json() -> None:
    """Non-ASCII query text is sent as UTF-8 JSON, not escaped or lost."""
    request = tavily.build_request(query(text="Suchmaschine für Übersetzungen"))
    assert request.body is not None
    assert "für Übersetzungen".encode() in request.body


# --- success and empty --------------------------------------------------------------------


def test_req_test_002_success() -> None:
    """REQ-TEST-002, REQ-ENG-005: results in Tavily's order; the general topic has no date."""
    results = tavily.parse(respond(fixture(ENGINE, "success.json")))
    assert [(r.title, r.url, r.date) for r in results] == [
        ("Welcome to SearXNG — SearXNG Documentation", "https://docs.searxng.org/", None),
        ("Metasearch engine - Wikipedia", "https://en.wikipedia.org/wiki/Metasearch_engine", None),
        (
            "A short history of meta-search",
            "http://www.example.net/articles/meta-search-history",
            None,
        ),
    ]
    assert results[2].snippet == ""
    assert_ranks(results)


def test_req_eng_012_snippets_stay_raw() -> None:
    """REQ-ENG-012: ``content`` keeps its entities and markup."""
    results = tavily.parse(respond(fixture(ENGINE, "success.json")))
    assert "70 search services &amp; databases." in results[0].snippet
    assert "<b>Metasearch engines</b>" in results[1].snippet


def test_news_dates_in_both_formats() -> None:
    """``published_date`` is read as an RFC 2822 date or ISO 8601; anything else is None."""
    results = tavily.parse(respond(fixture(ENGINE, "news.json")))
    assert [r.date for r in results] == ["2026-11-30", "2026-11-28", None]


def test_req_test_002_empty() -> None:
    """REQ-TEST-002: an empty ``results`` list is an empty list, not a failure."""
    assert tavily.parse(respond(fixture(ENGINE, "empty.json"))) == []


def test_malformed_items_are_skipped() -> None:
    """Items without a title or an absolute http(s) URL are skipped; odd fields dropped."""
    results = tavily.parse(respond(fixture(ENGINE, "malformed_items.json")))
    assert [(r.title, r.url, r.snippet, r.date, r.rank) for r in results] == [
        ("Kept", "https://kept.example.com/a", "", None, 1)
    ]


# --- failures -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("response", "expected"),
    [pytest.param(r, c, id=i) for i, r, c in common_failures(ENGINE)],
)
def test_req_eng_006_error_classes(response: EngineResponse, expected: FailureClass) -> None:
    """REQ-ENG-006, REQ-ENG-009, REQ-RES-002: each failure has one class, no provider text."""
    expect_failure(tavily.parse, response, expected)


@pytest.mark.parametrize(
    ("name", "headers", "expected"),
    [pytest.param(n, h, e, id=n) for n, h, e in retry_after_headers(NOW)],
)
def test_req_res_002_rate_limit_honours_retry_after(
    name: str, headers: dict[str, str], expected: float
) -> None:
    """REQ-RES-002: a 429 waits for ``retry-after``, seconds or an HTTP date (LIM-B4 bound)."""
    response = json_response(ENGINE, "rate_limited.json", 429, headers)
    failure = expect_failure(tavily.parse, response, FailureClass.RATE_LIMITED)
    assert failure.retry_after_s == expected


@pytest.mark.parametrize(("name", "headers", "expected"), retry_after_cases())
def test_req_res_002_retry_after_without_date_header(
    name: str, headers: dict[str, str], expected: tuple[float, float] | None
) -> None:
    """REQ-RES-002: Retry-After alone, against the local clock when no Date came."""
    response = respond(fixture(ENGINE, "error_page.html"), 429, HTML, headers)
    failure = expect_failure(tavily.parse, response, FailureClass.RATE_LIMITED)
    assert_retry_after(failure, expected)


@pytest.mark.parametrize(("name", "status"), [("plan_limit.json", 432), ("payg_limit.json", 433)])
def test_req_res_002_exhausted_quota_is_rate_limited(name: str, status: int) -> None:
    """REQ-RES-002: the plan (432) and pay-as-you-go (433) limits are rate_limited."""
    failure = expect_failure(
        tavily.parse, json_response(ENGINE, name, status), FailureClass.RATE_LIMITED
    )
    assert failure.retry_after_s is None


@pytest.mark.parametrize(("name", "status"), [("unauthorized.json", 401), ("forbidden.json", 403)])
def test_req_eng_006_key_errors_are_auth_failure(name: str, status: int) -> None:
    """REQ-ENG-006: 401 and a JSON 403 are auth_failure."""
    expect_failure(tavily.parse, json_response(ENGINE, name, status), FailureClass.AUTH_FAILURE)


def test_req_eng_006_bad_request_is_request_failure() -> None:
    """REQ-ENG-006: 400 (e.g. ``Query is too long``) is a request_failure."""
    response = json_response(ENGINE, "query_too_long.json", 400)
    expect_failure(tavily.parse, response, FailureClass.REQUEST_FAILURE)
