"""The Mojeek driver against hand-written fixtures in the Search API's documented shape.

Fixture shape: https://www.mojeek.com/support/api/search/json_response.html (``response``
with ``status`` ``"OK"`` or ``"ERROR: <message>"``, e.g. ``"ERROR: Daily Limit Reached"``,
``head`` and ``results[]`` with ``url``, ``title``, ``desc``, ``size``), the date fields
``pdate``/``timestamp``/``cdatetimestamp`` (Unix seconds) as public API clients parse them,
and https://www.mojeek.com/support/api/search/request_parameters.html.
REQ-TEST-002, REQ-ENG-005/006/009/010/011/012, REQ-RES-002, REQ-CFG-004, REQ-CMP-001.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest

from rypsok.contract.vocabulary import Category, FailureClass, SafeSearch, TimeRange
from rypsok.engines import mojeek
from rypsok.engines.base import EngineQuery, EngineResponse
from tests.engines.helpers_a import (
    NOW,
    assert_ranks,
    common_failures,
    expect_failure,
    fixture,
    origin_of,
    params_of,
    respond,
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
)

ENGINE = "mojeek"


def query(**changes: Any) -> EngineQuery:
    """A keyed query on Mojeek's search endpoint."""
    changes.setdefault("text", "metasearch engine")
    return keyed_query(mojeek.ADMISSION.endpoint, **changes)


# --- admission record ---------------------------------------------------------------------


def test_req_eng_010_admission_record() -> None:
    """REQ-ENG-010, REQ-CMP-001, REQ-CFG-004: keyed, general, not cacheable."""
    record = mojeek.ADMISSION
    assert_keyed_record(record, ENGINE)
    assert record.categories == (Category.GENERAL,)
    assert record.endpoint == "https://www.mojeek.com/search"
    assert (record.rate.requests, record.rate.per_seconds) == (1, 1.0)
    assert record.cacheable is False
    assert record.languages is None  # language bias takes any ISO 639-1 code
    assert record.time_ranges == frozenset(TimeRange)
    assert record.max_results == 20


def test_req_cmp_001_admission_page_exists() -> None:
    """REQ-CMP-001: the admission page names the endpoint and the in-body error signal."""
    page = admission_page(ENGINE)
    assert mojeek.ADMISSION.endpoint in page
    assert "ERROR: Daily Limit Reached" in page
    assert "api_key" in page


# --- request ------------------------------------------------------------------------------


def test_req_eng_011_request_parameters() -> None:
    """REQ-ENG-011: one JSON GET for LIM-S3 results, safe search on, English bias."""
    request = mojeek.build_request(query())
    assert request.method == "GET"
    assert request.body is None
    assert origin_of(request.url) == ("https", "www.mojeek.com")
    assert request.url.startswith(mojeek.ADMISSION.endpoint + "?")
    assert params_of(request) == {
        "api_key": KEY,
        "q": "metasearch engine",
        "fmt": "json",
        "t": "10",
        "safe": "1",
        "lb": "en",
        "lbb": "10",
    }
    assert header(request, "Accept") == "application/json"


def test_req_cfg_004_key_only_as_the_api_key_parameter() -> None:
    """REQ-CFG-004, REQ-SEC-017: Mojeek takes the key only as ``api_key`` in the URL of the
    endpoint's origin; no header carries it and the request's repr never shows it."""
    request = mojeek.build_request(query())
    assert_key_only_in(request, "url")
    pairs = parse_qsl(urlsplit(request.url).query)
    assert [value for name, value in pairs if value == KEY] == [KEY]
    assert dict(pairs)["api_key"] == KEY
    assert origin_of(request.url) == origin_of(mojeek.ADMISSION.endpoint)


def test_req_eng_011_count_capped() -> None:
    """REQ-ENG-011: ``t`` follows the count, capped at the record's maximum."""
    assert params_of(mojeek.build_request(query(count=4)))["t"] == "4"
    assert params_of(mojeek.build_request(query(count=90)))["t"] == "20"


@pytest.mark.parametrize(
    ("time_range", "since"),
    [
        (TimeRange.DAY, "20261130"),
        (TimeRange.WEEK, "20261124"),
        (TimeRange.MONTH, "20261031"),
        (TimeRange.YEAR, "20251130"),
    ],
)
def test_req_eng_010_time_range_is_since(time_range: TimeRange, since: str) -> None:
    """REQ-ENG-010: a time range is ``since=YYYYMMDD``, from query.now (UTC)."""
    params = params_of(mojeek.build_request(query(time_range=time_range, now=NOW)))
    assert params["since"] == since


@pytest.mark.parametrize(("language", "lb"), [("de", "de"), ("pt-BR", "pt"), ("FR", "fr")])
def test_req_eng_010_language_bias(language: str, lb: str) -> None:
    """REQ-ENG-010: the language is a bias towards that ISO 639-1 language."""
    params = params_of(mojeek.build_request(query(language=language)))
    assert (params["lb"], params["lbb"]) == (lb, "10")


def test_region_bias() -> None:
    """The operator's region is a region bias (``rb`` + ``rbb``)."""
    params = params_of(mojeek.build_request(query(region="gb")))
    assert (params["rb"], params["rbb"]) == ("GB", "10")
    assert "rb" not in params_of(mojeek.build_request(query(region="")))


@pytest.mark.parametrize(
    ("level", "safe"), [(SafeSearch.OFF, "0"), (SafeSearch.MODERATE, "1"), (SafeSearch.STRICT, "1")]
)
def test_safe_search(level: SafeSearch, safe: str) -> None:
    """Mojeek's safe search (``safe=1``) is on unless the operator turned it off."""
    assert params_of(mojeek.build_request(query(safe_search=level)))["safe"] == safe


def test_build_request_reads_no_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """REQ-ENG-001: the request is a pure function of the query."""
    assert_reads_no_clock(mojeek.build_request, query(time_range=TimeRange.DAY), monkeypatch)


# --- success and empty --------------------------------------------------------------------


def test_req_test_002_success() -> None:
    """REQ-TEST-002, REQ-ENG-005: results in order; date from ``pdate``, else ``timestamp``."""
    results = mojeek.parse(respond(fixture(ENGINE, "success.json")))
    assert [(r.title, r.url, r.date) for r in results] == [
        ("Welcome to SearXNG — SearXNG Documentation", "https://docs.searxng.org/", "2026-11-28"),
        (
            "Metasearch engine - Wikipedia",
            "https://en.wikipedia.org/wiki/Metasearch_engine",
            "2025-03-01",
        ),
        # Only the crawl time: not a date of the page.
        ("Meta-search notes", "http://small.example.net/meta.html", None),
    ]
    assert results[2].snippet == ""
    assert_ranks(results)


def test_req_eng_012_snippets_stay_raw() -> None:
    """REQ-ENG-012: ``desc`` keeps its markup and entities."""
    results = mojeek.parse(respond(fixture(ENGINE, "success.json")))
    assert "search services &amp; databases." in results[0].snippet
    assert "<b>metasearch engine</b>" in results[1].snippet


@pytest.mark.parametrize("name", ["empty.json", "empty_list.json"])
def test_req_test_002_empty(name: str) -> None:
    """REQ-TEST-002: status OK without results, or with an empty list: no results."""
    assert mojeek.parse(respond(fixture(ENGINE, name))) == []


def test_malformed_items_are_skipped() -> None:
    """Items without a title or an absolute http(s) URL are skipped; odd fields dropped."""
    results = mojeek.parse(respond(fixture(ENGINE, "malformed_items.json")))
    assert [(r.title, r.url, r.snippet, r.date, r.rank) for r in results] == [
        ("Kept", "https://kept.example.com/m", "", None, 1)
    ]


# --- failures -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("response", "expected"),
    [pytest.param(r, c, id=i) for i, r, c in common_failures(ENGINE)],
)
def test_req_eng_006_error_classes(response: EngineResponse, expected: FailureClass) -> None:
    """REQ-ENG-006, REQ-ENG-009, REQ-RES-002: each failure has one class, no provider text."""
    expect_failure(mojeek.parse, response, expected)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("daily_limit.json", FailureClass.RATE_LIMITED),
        ("invalid_key.json", FailureClass.AUTH_FAILURE),
        ("other_error.json", FailureClass.REQUEST_FAILURE),
    ],
)
def test_req_res_002_errors_inside_a_200_body(name: str, expected: FailureClass) -> None:
    """REQ-RES-002, REQ-ENG-006: an ``ERROR: ...`` status with HTTP 200 is classified and
    never passed through as results."""
    failure = expect_failure(mojeek.parse, json_response(ENGINE, name, 200), expected)
    assert "Daily" not in repr(failure)
    assert "keywords" not in repr(failure)


@pytest.mark.parametrize(
    ("name", "status", "expected"),
    [
        ("daily_limit.json", 403, FailureClass.RATE_LIMITED),
        ("daily_limit.json", 429, FailureClass.RATE_LIMITED),
        ("invalid_key.json", 401, FailureClass.AUTH_FAILURE),
    ],
)
def test_req_res_002_error_status_with_an_error_body(
    name: str, status: int, expected: FailureClass
) -> None:
    """REQ-RES-002: the body's status also decides when the HTTP status is an error."""
    expect_failure(mojeek.parse, json_response(ENGINE, name, status), expected)


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        ("ERROR: Daily Limit Reached", FailureClass.RATE_LIMITED),
        ("ERROR: Monthly quota exceeded", FailureClass.RATE_LIMITED),
        ("ERROR: Invalid API key", FailureClass.AUTH_FAILURE),
        ("ERROR: Access denied", FailureClass.AUTH_FAILURE),
        ("ERROR: No query keywords given", FailureClass.REQUEST_FAILURE),
        ("ERROR", FailureClass.REQUEST_FAILURE),
    ],
)
def test_classify_status(status: str, expected: FailureClass) -> None:
    """Each ``ERROR: <message>`` maps to one class; "keywords" is not a key problem."""
    assert mojeek.classify_status(status) is expected


def test_req_eng_006_missing_status_is_parse_failure() -> None:
    """REQ-ENG-006: a ``response`` without a status is a parse_failure."""
    response = respond(fixture(ENGINE, "no_status.json"))
    expect_failure(mojeek.parse, response, FailureClass.PARSE_FAILURE)


def test_req_res_002_rate_limit_status_with_retry_after() -> None:
    """REQ-RES-002: a plain 429 with Retry-After keeps its delay (LIM-B4 bound)."""
    response = respond(b"", 429, "text/plain", {"Retry-After": "45"})
    failure = expect_failure(mojeek.parse, response, FailureClass.RATE_LIMITED)
    assert failure.retry_after_s == 45.0
