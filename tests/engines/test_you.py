"""The You.com driver against hand-written fixtures in the Search API v1's documented shape.

Fixture shape: https://you.com/docs/api-reference/search/v1-search (``results.web[]`` with
``url``, ``title``, ``description``, ``snippets``, ``page_age``, ``authors``,
``thumbnail_url``, ``favicon_url``; ``results.news[]``; ``metadata``), the request enums of
youdotcom-oss/youdotcom-python-sdk ``docs/models/country.md`` and ``language.md``, and
https://you.com/docs/error-handling/error-code-reference (401, 402, 403, 422, 429, 500;
``detail`` or ``status``/``code``/``title``/``detail`` bodies).
REQ-TEST-002, REQ-ENG-005/006/009/010/011/012, REQ-RES-002, REQ-CFG-004, REQ-CMP-001.
"""

from __future__ import annotations

from typing import Any

import pytest

from rypsok.contract.vocabulary import Category, FailureClass, SafeSearch, TimeRange
from rypsok.engines import you
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

ENGINE = "you"


def query(**changes: Any) -> EngineQuery:
    """A keyed query on You.com's v1 search endpoint."""
    changes.setdefault("text", "metasearch engine")
    return keyed_query(you.ADMISSION.endpoint, **changes)


# --- admission record ---------------------------------------------------------------------


def test_req_eng_010_admission_record() -> None:
    """REQ-ENG-010, REQ-CMP-001, REQ-CFG-004: keyed, general, not cacheable."""
    record = you.ADMISSION
    assert_keyed_record(record, ENGINE)
    assert record.categories == (Category.GENERAL,)
    assert record.endpoint == "https://ydc-index.io/v1/search"
    assert (record.rate.requests, record.rate.per_seconds) == (1, 1.0)
    assert record.cacheable is False
    assert record.time_ranges == frozenset(TimeRange)
    assert record.max_results == 100
    assert record.languages is not None
    assert {"en", "de", "ja", "zh", "pt"} <= record.languages


def test_req_cmp_001_admission_page_exists() -> None:
    """REQ-CMP-001: the admission page names the endpoint, the header and the 402 signal."""
    page = admission_page(ENGINE)
    assert you.ADMISSION.endpoint in page
    assert "X-API-Key" in page
    assert "402" in page


# --- request ------------------------------------------------------------------------------


def test_req_eng_011_request_parameters() -> None:
    """REQ-ENG-011: one GET for LIM-S3 results with safesearch and language."""
    request = you.build_request(query())
    assert request.method == "GET"
    assert request.body is None
    assert origin_of(request.url) == ("https", "ydc-index.io")
    assert request.url.startswith(you.ADMISSION.endpoint + "?")
    assert params_of(request) == {
        "query": "metasearch engine",
        "count": "10",
        "safesearch": "moderate",
        "language": "EN",
    }
    assert header(request, "Accept") == "application/json"


def test_req_cfg_004_key_only_in_the_api_key_header() -> None:
    """REQ-CFG-004, REQ-SEC-017: the key travels in X-API-Key, which is listed."""
    request = you.build_request(query())
    assert header(request, "X-API-Key") == KEY
    assert request.credential_headers == frozenset({"X-API-Key"})
    assert_key_only_in(request, "X-API-Key")


def test_req_eng_011_count_capped_at_provider_maximum() -> None:
    """REQ-ENG-011: count follows the query, capped at You.com's 100."""
    assert params_of(you.build_request(query(count=6)))["count"] == "6"
    assert params_of(you.build_request(query(count=400)))["count"] == "100"


@pytest.mark.parametrize("time_range", list(TimeRange))
def test_req_eng_010_time_range_is_freshness(time_range: TimeRange) -> None:
    """REQ-ENG-010: a time range is ``freshness`` (day, week, month, year)."""
    params = params_of(you.build_request(query(time_range=time_range)))
    assert params["freshness"] == time_range.value


@pytest.mark.parametrize(
    ("language", "code"),
    [
        ("en", "EN"),
        ("en-GB", "EN-GB"),
        ("ja", "JA"),
        ("zh", "ZH-HANS"),
        ("zh-TW", "ZH-HANT"),
        ("pt", "PT-BR"),
        ("pt-PT", "PT-PT"),
        ("no", "NB"),
    ],
)
def test_req_eng_010_language(language: str, code: str) -> None:
    """REQ-ENG-010: the language is You.com's ``language`` enum value."""
    assert params_of(you.build_request(query(language=language)))["language"] == code


def test_req_eng_010_every_admitted_language_maps() -> None:
    """REQ-ENG-010: every language the record admits has a You.com code."""
    assert you.ADMISSION.languages is not None
    for language in you.ADMISSION.languages:
        assert you.language_code(language) is not None, language


def test_unknown_language_sends_no_language() -> None:
    """A language You.com does not know is left out rather than sent (it would be a 422)."""
    assert "language" not in params_of(you.build_request(query(language="xx")))


@pytest.mark.parametrize(("region", "country"), [("de", "DE"), ("US", "US")])
def test_region_is_country(region: str, country: str) -> None:
    """The operator's region is You.com's ``country`` when its enum has it."""
    assert params_of(you.build_request(query(region=region)))["country"] == country


@pytest.mark.parametrize("region", ["", "EE"])
def test_unsupported_region_sends_no_country(region: str) -> None:
    """No region, or one outside You.com's enum, sends no ``country``."""
    assert "country" not in params_of(you.build_request(query(region=region)))


@pytest.mark.parametrize("level", list(SafeSearch))
def test_safe_search_passes_through(level: SafeSearch) -> None:
    """You.com's safesearch takes rypsok's three levels as they are."""
    assert params_of(you.build_request(query(safe_search=level)))["safesearch"] == level.value


def test_build_request_reads_no_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """REQ-ENG-001: the request is a pure function of the query."""
    assert_reads_no_clock(you.build_request, query(time_range=TimeRange.WEEK), monkeypatch)


# --- success and empty --------------------------------------------------------------------


def test_req_test_002_success() -> None:
    """REQ-TEST-002, REQ-ENG-005: ``results.web`` in order; the news section is not read."""
    results = you.parse(respond(fixture(ENGINE, "success.json")))
    assert [(r.title, r.url, r.date) for r in results] == [
        ("Welcome to SearXNG — SearXNG Documentation", "https://docs.searxng.org/", "2026-11-28"),
        ("Metasearch engine - Wikipedia", "https://en.wikipedia.org/wiki/Metasearch_engine", None),
        ("Meta-search, compared", "https://blog.example.net/2025/meta-search", "2025-03-01"),
    ]
    assert_ranks(results)


def test_req_eng_012_snippet_choice_stays_raw() -> None:
    """REQ-ENG-012: the first snippet, else the description, raw; else empty."""
    results = you.parse(respond(fixture(ENGINE, "success.json")))
    assert results[0].snippet == (
        "SearXNG is a free internet metasearch engine which aggregates results from up to 243 "
        "search services &amp; databases."
    )
    assert results[1].snippet == (
        "A <b>metasearch engine</b> (or search aggregator) is an online information retrieval tool."
    )
    assert results[2].snippet == ""


@pytest.mark.parametrize("name", ["empty.json", "news_only.json"])
def test_req_test_002_empty(name: str) -> None:
    """REQ-TEST-002: an empty or absent web section is an empty list, not a failure."""
    assert you.parse(respond(fixture(ENGINE, name))) == []


def test_malformed_items_are_skipped() -> None:
    """Items without a title or an absolute http(s) URL are skipped; odd fields dropped."""
    results = you.parse(respond(fixture(ENGINE, "malformed_items.json")))
    assert [(r.title, r.url, r.snippet, r.date, r.rank) for r in results] == [
        ("Kept", "https://kept.example.com/y", "", None, 1)
    ]


# --- failures -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("response", "expected"),
    [pytest.param(r, c, id=i) for i, r, c in common_failures(ENGINE)],
)
def test_req_eng_006_error_classes(response: EngineResponse, expected: FailureClass) -> None:
    """REQ-ENG-006, REQ-ENG-009, REQ-RES-002: each failure has one class, no provider text."""
    expect_failure(you.parse, response, expected)


def test_req_eng_006_web_not_a_list_is_parse_failure() -> None:
    """REQ-ENG-006: ``results.web`` that is not a list is a parse_failure."""
    response = respond(fixture(ENGINE, "web_not_list.json"))
    expect_failure(you.parse, response, FailureClass.PARSE_FAILURE)


@pytest.mark.parametrize(
    ("name", "headers", "expected"),
    [pytest.param(n, h, e, id=n) for n, h, e in retry_after_headers(NOW)],
)
def test_req_res_002_rate_limit_honours_retry_after(
    name: str, headers: dict[str, str], expected: float
) -> None:
    """REQ-RES-002: a 429 waits for ``retry-after``, seconds or an HTTP date (LIM-B4 bound)."""
    response = json_response(ENGINE, "rate_limited.json", 429, headers)
    failure = expect_failure(you.parse, response, FailureClass.RATE_LIMITED)
    assert failure.retry_after_s == expected


@pytest.mark.parametrize(("name", "headers", "expected"), retry_after_cases())
def test_req_res_002_retry_after_without_date_header(
    name: str, headers: dict[str, str], expected: tuple[float, float] | None
) -> None:
    """REQ-RES-002: Retry-After alone, against the local clock when no Date came."""
    response = respond(fixture(ENGINE, "error_page.html"), 429, HTML, headers)
    failure = expect_failure(you.parse, response, FailureClass.RATE_LIMITED)
    assert_retry_after(failure, expected)


def test_req_res_002_exhausted_credits_are_rate_limited() -> None:
    """REQ-RES-002: 402 (add credits) is rate_limited, without a wait."""
    response = json_response(ENGINE, "payment_required.json", 402)
    failure = expect_failure(you.parse, response, FailureClass.RATE_LIMITED)
    assert failure.retry_after_s is None


@pytest.mark.parametrize(
    ("name", "status"), [("unauthorized.json", 401), ("missing_scopes.json", 403)]
)
def test_req_eng_006_key_errors_are_auth_failure(name: str, status: int) -> None:
    """REQ-ENG-006: 401 and 403 (key lacks the scope) are auth_failure."""
    expect_failure(you.parse, json_response(ENGINE, name, status), FailureClass.AUTH_FAILURE)


def test_req_eng_006_unprocessable_is_request_failure() -> None:
    """REQ-ENG-006: 422 (a parameter out of range) is a request_failure."""
    response = json_response(ENGINE, "unprocessable.json", 422)
    expect_failure(you.parse, response, FailureClass.REQUEST_FAILURE)
