"""The Brave news-search driver against hand-written fixtures in the API's documented shape.

Fixture shape: https://api-dashboard.search.brave.com/api-reference/news/news_search/get and
https://api.search.brave.com/app/documentation/news-search/responses (``type`` ``news``,
``query``, ``results[]`` of ``news_result`` with ``title``, ``url``, ``description``, ``age``,
``page_age``, ``page_fetched``, ``breaking``, ``thumbnail``, ``meta_url``), the headers page
https://api.search.brave.com/app/documentation/web-search/response-headers
(``X-RateLimit-*`` comma lists, seconds) and Brave's ``ErrorResponse`` objects
(``error.code`` ``RATE_LIMITED``, ``SUBSCRIPTION_TOKEN_INVALID``, ``VALIDATION``).
REQ-TEST-002, REQ-ENG-005/006/009/010/011/012, REQ-RES-002, REQ-CFG-004, REQ-CMP-001.
"""

from __future__ import annotations

from typing import Any

import pytest

from rypsok.contract.vocabulary import Category, FailureClass, SafeSearch, TimeRange
from rypsok.engines import brave_news
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
    params_of,
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
    json_response,
    keyed_query,
    retry_after_headers,
)

ENGINE = "brave_news"


def query(**changes: Any) -> EngineQuery:
    """A keyed query on Brave's news-search endpoint."""
    changes.setdefault("text", "open source search engine")
    return keyed_query(brave_news.ADMISSION.endpoint, **changes)


# --- admission record ---------------------------------------------------------------------


def test_req_eng_010_admission_record() -> None:
    """REQ-ENG-010, REQ-CMP-001, REQ-CFG-004: keyed, 1 request/s, not cacheable."""
    record = brave_news.ADMISSION
    assert_keyed_record(record, ENGINE)
    assert record.categories == (Category.NEWS,)
    assert record.endpoint == "https://api.search.brave.com/res/v1/news/search"
    assert (record.rate.requests, record.rate.per_seconds) == (1, 1.0)
    assert record.max_in_flight == 1
    assert record.cacheable is False  # storage rights come with paid plans only
    assert record.attribution_required is False
    assert record.time_ranges == frozenset(TimeRange)
    assert record.max_query_chars == 400
    assert record.max_results == 50
    assert record.languages is not None
    assert {"en", "de", "ja", "zh", "pt", "nb"} <= record.languages
    assert "xx" not in record.languages


def test_req_cmp_001_admission_page_exists() -> None:
    """REQ-CMP-001: the admission page names the endpoint, the header and the limits."""
    page = admission_page(ENGINE)
    assert brave_news.ADMISSION.endpoint in page
    assert "X-Subscription-Token" in page
    assert "X-RateLimit-Reset" in page
    assert "cacheable = false" in page
    assert "brave" in page


# --- request ------------------------------------------------------------------------------


def test_req_eng_011_request_parameters() -> None:
    """REQ-ENG-011: one GET for LIM-S3 results, worldwide, moderate safe search, English."""
    request = brave_news.build_request(query())
    assert request.method == "GET"
    assert request.body is None
    assert origin_of(request.url) == ("https", "api.search.brave.com")
    assert request.url.startswith(brave_news.ADMISSION.endpoint + "?")
    assert params_of(request) == {
        "q": "open source search engine",
        "count": "10",
        "country": "ALL",
        "safesearch": "moderate",
        "search_lang": "en",
    }
    assert header(request, "Accept") == "application/json"


def test_req_cfg_004_key_only_in_the_subscription_header() -> None:
    """REQ-CFG-004, REQ-SEC-017: the key travels in X-Subscription-Token, which is listed."""
    request = brave_news.build_request(query())
    assert header(request, "X-Subscription-Token") == KEY
    assert request.credential_headers == frozenset({"X-Subscription-Token"})
    assert_key_only_in(request, "X-Subscription-Token")


def test_req_eng_011_count_capped_at_provider_maximum() -> None:
    """REQ-ENG-011: count follows the query, capped at the news endpoint's 50."""
    assert params_of(brave_news.build_request(query(count=3)))["count"] == "3"
    assert params_of(brave_news.build_request(query(count=80)))["count"] == "50"


@pytest.mark.parametrize(
    ("time_range", "freshness"),
    [
        (TimeRange.DAY, "pd"),
        (TimeRange.WEEK, "pw"),
        (TimeRange.MONTH, "pm"),
        (TimeRange.YEAR, "py"),
    ],
)
def test_req_eng_010_time_range_is_freshness(time_range: TimeRange, freshness: str) -> None:
    """REQ-ENG-010: a time range is Brave's ``freshness`` (never SearXNG's ``time_range``)."""
    params = params_of(brave_news.build_request(query(time_range=time_range)))
    assert params["freshness"] == freshness
    assert "time_range" not in params


@pytest.mark.parametrize(
    ("language", "search_lang"),
    [
        ("en", "en"),
        ("de", "de"),
        ("ja", "jp"),
        ("zh", "zh-hans"),
        ("zh-TW", "zh-hant"),
        ("zh-Hant", "zh-hant"),
        ("pt", "pt-br"),
        ("pt-PT", "pt-pt"),
        ("en-GB", "en-gb"),
        ("en-US", "en"),
        ("no", "nb"),
    ],
)
def test_req_eng_010_language_is_search_lang(language: str, search_lang: str) -> None:
    """REQ-ENG-010: the language maps to Brave's own codes (``jp``, ``zh-hans``, ...)."""
    assert (
        params_of(brave_news.build_request(query(language=language)))["search_lang"] == search_lang
    )


def test_req_eng_010_every_admitted_language_maps() -> None:
    """REQ-ENG-010: every language the record admits has a Brave code."""
    assert brave_news.ADMISSION.languages is not None
    for language in brave_news.ADMISSION.languages:
        assert brave_news.search_lang(language) is not None, language


def test_unknown_language_sends_no_search_lang() -> None:
    """A language Brave does not know is left out rather than sent (it would be a 422)."""
    assert "search_lang" not in params_of(brave_news.build_request(query(language="xx")))


@pytest.mark.parametrize(
    ("region", "country"), [("de", "DE"), ("GB", "GB"), ("", "ALL"), ("EE", "ALL")]
)
def test_region_is_country(region: str, country: str) -> None:
    """The operator's region is Brave's country when Brave supports it, else worldwide."""
    assert params_of(brave_news.build_request(query(region=region)))["country"] == country


@pytest.mark.parametrize("level", list(SafeSearch))
def test_safe_search_passes_through(level: SafeSearch) -> None:
    """Brave's safesearch takes rypsok's three levels as they are."""
    assert (
        params_of(brave_news.build_request(query(safe_search=level)))["safesearch"] == level.value
    )


def test_build_request_reads_no_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """REQ-ENG-001: the request is a pure function of the query."""
    assert_reads_no_clock(brave_news.build_request, query(time_range=TimeRange.WEEK), monkeypatch)


# --- success and empty --------------------------------------------------------------------


def test_req_test_002_success() -> None:
    """REQ-TEST-002, REQ-ENG-005: news articles in order, dates from ``page_age`` only."""
    results = brave_news.parse(respond(fixture(ENGINE, "success.json")))
    assert [(r.url, r.date) for r in results] == [
        ("https://news.example.com/2026/11/30/independent-search-engines", "2026-11-30"),
        # No page_age: "age" ("2 days ago") is a display string and is not read.
        ("https://www.example.org/tech/volunteer-index", None),
        ("https://press.example.net/search-api-prices", "2026-11-23"),
    ]
    assert results[1].snippet == "The project crawls the small web."
    assert results[2].snippet == ""
    assert_ranks(results)


def test_req_eng_012_titles_and_snippets_stay_raw() -> None:
    """REQ-ENG-012: ``<strong>`` and entities are left for the pipeline."""
    first = brave_news.parse(respond(fixture(ENGINE, "success.json")))[0]
    assert first.title == "Independent <strong>search engines</strong> gain ground in Europe"
    assert first.snippet == (
        "Several <strong>open source</strong> projects reported growth &amp; new funding "
        "this quarter."
    )


def test_req_test_002_empty() -> None:
    """REQ-TEST-002: an empty ``results`` list is an empty list, not a failure."""
    assert brave_news.parse(respond(fixture(ENGINE, "empty.json"))) == []


def test_malformed_items_are_skipped() -> None:
    """Items without a title or an absolute http(s) URL are skipped; odd fields dropped."""
    results = brave_news.parse(respond(fixture(ENGINE, "malformed_items.json")))
    assert [(r.title, r.url, r.snippet, r.date, r.rank) for r in results] == [
        ("Kept", "https://kept.example.com/story", "", None, 1)
    ]


# --- failures -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("response", "expected"),
    [pytest.param(r, c, id=i) for i, r, c in common_failures(ENGINE)],
)
def test_req_eng_006_error_classes(response: EngineResponse, expected: FailureClass) -> None:
    """REQ-ENG-006, REQ-ENG-009, REQ-RES-002: each failure has one class, no provider text."""
    expect_failure(brave_news.parse, response, expected)


def test_req_eng_006_web_answer_is_parse_failure() -> None:
    """REQ-ENG-006: a web answer (``type`` ``search``) is not a news answer."""
    response = respond(fixture(ENGINE, "web_answer.json"))
    expect_failure(brave_news.parse, response, FailureClass.PARSE_FAILURE)


@pytest.mark.parametrize(
    ("reset", "remaining", "expected"),
    [
        pytest.param("1, 1419704", "0, 1000", 1.0, id="per-second-window"),
        pytest.param("1, 1419704", "1, 0", 3600.0, id="monthly-window-bounded-by-lim-b4"),
        pytest.param("3, 86400", "", 3.0, id="no-remaining-smallest-window"),
        pytest.param("7", "0", 7.0, id="single-window"),
    ],
)
def test_req_res_002_rate_limit_waits_for_the_exhausted_window(
    reset: str, remaining: str, expected: float
) -> None:
    """REQ-RES-002: a 429 waits until ``X-RateLimit-Reset`` of the window that ran out."""
    headers = {
        "X-RateLimit-Limit": "1, 15000",
        "X-RateLimit-Policy": "1;w=1, 15000;w=2592000",
        "X-RateLimit-Reset": reset,
    }
    if remaining:
        headers["X-RateLimit-Remaining"] = remaining
    response = json_response(ENGINE, "rate_limited.json", 429, headers)
    failure = expect_failure(brave_news.parse, response, FailureClass.RATE_LIMITED)
    assert failure.retry_after_s == expected


@pytest.mark.parametrize(
    ("name", "headers", "expected"),
    [pytest.param(n, h, e, id=n) for n, h, e in retry_after_headers(NOW)],
)
def test_req_res_002_retry_after_wins_over_reset(
    name: str, headers: dict[str, str], expected: float
) -> None:
    """REQ-RES-002: Retry-After, in seconds or as an HTTP date, comes first (LIM-B4 bound)."""
    headers = {**headers, "X-RateLimit-Reset": "1, 1419704"}
    response = json_response(ENGINE, "rate_limited.json", 429, headers)
    failure = expect_failure(brave_news.parse, response, FailureClass.RATE_LIMITED)
    assert failure.retry_after_s == expected


@pytest.mark.parametrize(("name", "headers", "expected"), retry_after_cases())
def test_req_res_002_retry_after_without_date_header(
    name: str, headers: dict[str, str], expected: tuple[float, float] | None
) -> None:
    """REQ-RES-002: Retry-After alone, against the local clock when no Date came."""
    response = respond(fixture(ENGINE, "error_page.html"), 429, HTML, headers)
    failure = expect_failure(brave_news.parse, response, FailureClass.RATE_LIMITED)
    assert_retry_after(failure, expected)


def test_req_res_002_rate_limited_code_is_rate_limited() -> None:
    """REQ-RES-002: ``error.code`` RATE_LIMITED is rate_limited whatever the status."""
    response = json_response(ENGINE, "rate_limited.json", 403, {"X-RateLimit-Reset": "1"})
    failure = expect_failure(brave_news.parse, response, FailureClass.RATE_LIMITED)
    assert failure.retry_after_s == 1.0


@pytest.mark.parametrize(
    ("name", "status"),
    [("token_invalid.json", 422), ("unauthorized.json", 401), ("unauthorized.json", 403)],
)
def test_req_eng_006_key_errors_are_auth_failure(name: str, status: int) -> None:
    """REQ-ENG-006: 401, a JSON 403 and 422 SUBSCRIPTION_TOKEN_INVALID are auth_failure."""
    expect_failure(brave_news.parse, json_response(ENGINE, name, status), FailureClass.AUTH_FAILURE)


def test_req_eng_006_validation_error_is_request_failure() -> None:
    """REQ-ENG-006: 422 VALIDATION (e.g. more than 50 words) is a request_failure."""
    response = json_response(ENGINE, "validation.json", 422)
    expect_failure(brave_news.parse, response, FailureClass.REQUEST_FAILURE)
