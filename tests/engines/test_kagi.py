"""The Kagi driver against hand-written fixtures in the Search API v1's documented shape.

Fixture shape: Kagi's OpenAPI reference (https://kagi.com/api/docs/openapi, as generated in
kagisearch/kagi-openapi-python ``docs/SearchApi.md``, ``SearchRequest.md``,
``SearchRequestFilters.md``, ``Search200ResponseData.md``, ``SearchResult.md``, ``Meta.md``,
``ErrorEnvelope.md``, ``ErrorDetail.md``: ``meta``, ``data.search[]`` with ``url``, ``title``,
``snippet``, ``time``, ``image``, ``props``; a result key is absent when empty; errors
``{meta, data: [], error: [{code, url, message}]}`` with 400, 401, 403, 429, 500),
https://help.kagi.com/kagi/api/intro/auth.html (``Authorization: Bot <token>``) and
SearXNG ``searx/engines/kagi.py``.
REQ-TEST-002, REQ-ENG-005/006/009/010/011/012, REQ-RES-002, REQ-CFG-004, REQ-CMP-001.
"""

from __future__ import annotations

from typing import Any

import pytest

from rypsok.contract.vocabulary import Category, FailureClass, SafeSearch, TimeRange
from rypsok.engines import kagi
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

ENGINE = "kagi"


def query(**changes: Any) -> EngineQuery:
    """A keyed query on Kagi's v1 search endpoint."""
    changes.setdefault("text", "metasearch engine")
    return keyed_query(kagi.ADMISSION.endpoint, **changes)


# --- admission record ---------------------------------------------------------------------


def test_req_eng_010_admission_record() -> None:
    """REQ-ENG-010, REQ-CMP-001, REQ-CFG-004: keyed, general, not cacheable."""
    record = kagi.ADMISSION
    assert_keyed_record(record, ENGINE)
    assert record.categories == (Category.GENERAL,)
    assert record.endpoint == "https://kagi.com/api/v1/search"
    assert (record.rate.requests, record.rate.per_seconds) == (1, 1.0)
    assert record.cacheable is False
    assert record.languages == frozenset()  # results follow the account's settings
    assert record.time_ranges == frozenset(TimeRange)
    assert record.max_results == 1024


def test_req_cmp_001_admission_page_exists() -> None:
    """REQ-CMP-001: the admission page names the endpoint and the authorization scheme."""
    page = admission_page(ENGINE)
    assert kagi.ADMISSION.endpoint in page
    assert "Authorization: Bot" in page
    assert "no_region" in page


# --- request ------------------------------------------------------------------------------


def test_req_eng_011_request_body() -> None:
    """REQ-ENG-011: one JSON POST of the search workflow for LIM-S3 results."""
    request = kagi.build_request(query())
    assert request.method == "POST"
    assert request.url == "https://kagi.com/api/v1/search"
    assert origin_of(request.url) == ("https", "kagi.com")
    assert json_body(request) == {
        "query": "metasearch engine",
        "workflow": "search",
        "limit": 10,
        "safe_search": True,
        "filters": {"region": "no_region"},
    }
    assert header(request, "Accept") == "application/json"


def test_req_cfg_004_key_only_in_the_authorization_header() -> None:
    """REQ-CFG-004, REQ-SEC-017: ``Authorization: Bot <token>``, listed as a credential."""
    request = kagi.build_request(query())
    assert header(request, "Authorization") == f"Bot {KEY}"
    assert request.credential_headers == frozenset({"Authorization"})
    assert_key_only_in(request, "Authorization")


def test_req_eng_011_count_capped_at_provider_maximum() -> None:
    """REQ-ENG-011: limit follows the count, capped at Kagi's 1024."""
    assert json_body(kagi.build_request(query(count=5)))["limit"] == 5
    assert json_body(kagi.build_request(query(count=5000)))["limit"] == 1024


@pytest.mark.parametrize(
    ("time_range", "after"),
    [
        (TimeRange.DAY, "2026-11-30"),
        (TimeRange.WEEK, "2026-11-24"),
        (TimeRange.MONTH, "2026-10-31"),
        (TimeRange.YEAR, "2025-11-30"),
    ],
)
def test_req_eng_010_time_range_is_an_after_filter(time_range: TimeRange, after: str) -> None:
    """REQ-ENG-010: a time range is ``filters.after`` (a date), from query.now."""
    body = json_body(kagi.build_request(query(time_range=time_range, now=NOW)))
    assert body["filters"] == {"region": "no_region", "after": after}


@pytest.mark.parametrize(("region", "value"), [("DE", "de"), ("us", "us"), ("", "no_region")])
def test_region_filter(region: str, value: str) -> None:
    """The operator's region is ``filters.region``; none is Kagi's ``no_region``."""
    assert json_body(kagi.build_request(query(region=region)))["filters"]["region"] == value


@pytest.mark.parametrize(
    ("level", "safe"),
    [(SafeSearch.OFF, False), (SafeSearch.MODERATE, True), (SafeSearch.STRICT, True)],
)
def test_safe_search(level: SafeSearch, safe: bool) -> None:
    """Kagi's safe search is on unless the operator turned it off."""
    assert json_body(kagi.build_request(query(safe_search=level)))["safe_search"] is safe


def test_build_request_reads_no_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """REQ-ENG-001: the request is a pure function of the query."""
    assert_reads_no_clock(kagi.build_request, query(time_range=TimeRange.YEAR), monkeypatch)


# --- success and empty --------------------------------------------------------------------


def test_req_test_002_success() -> None:
    """REQ-TEST-002, REQ-ENG-005: ``data.search`` in order; news and related are not read."""
    results = kagi.parse(respond(fixture(ENGINE, "success.json")))
    assert [(r.title, r.url, r.date) for r in results] == [
        ("Welcome to SearXNG — SearXNG Documentation", "https://docs.searxng.org/", "2026-11-28"),
        ("Metasearch engine - Wikipedia", "https://en.wikipedia.org/wiki/Metasearch_engine", None),
        ("Meta-search, compared", "https://blog.example.net/2025/meta-search", "2025-03-01"),
    ]
    assert results[2].snippet == ""
    assert_ranks(results)


def test_req_eng_012_snippets_stay_raw() -> None:
    """REQ-ENG-012: snippets keep their markup and entities."""
    first = kagi.parse(respond(fixture(ENGINE, "success.json")))[0]
    assert "<b>metasearch engine</b>" in first.snippet
    assert "search services &amp; databases." in first.snippet


@pytest.mark.parametrize("name", ["empty.json", "empty_list.json"])
def test_req_test_002_empty(name: str) -> None:
    """REQ-TEST-002: no ``search`` key (Kagi leaves it out) or an empty one: no results."""
    assert kagi.parse(respond(fixture(ENGINE, name))) == []


def test_malformed_items_are_skipped() -> None:
    """Items without a title or an absolute http(s) URL are skipped; odd fields dropped."""
    results = kagi.parse(respond(fixture(ENGINE, "malformed_items.json")))
    assert [(r.title, r.url, r.snippet, r.date, r.rank) for r in results] == [
        ("Kept", "https://kept.example.com/k", "", None, 1)
    ]


# --- failures -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("response", "expected"),
    [pytest.param(r, c, id=i) for i, r, c in common_failures(ENGINE)],
)
def test_req_eng_006_error_classes(response: EngineResponse, expected: FailureClass) -> None:
    """REQ-ENG-006, REQ-ENG-009, REQ-RES-002: each failure has one class, no provider text."""
    expect_failure(kagi.parse, response, expected)


def test_req_eng_006_search_not_a_list_is_parse_failure() -> None:
    """REQ-ENG-006: ``data.search`` that is not a list is a parse_failure."""
    response = respond(fixture(ENGINE, "search_not_list.json"))
    expect_failure(kagi.parse, response, FailureClass.PARSE_FAILURE)


@pytest.mark.parametrize(
    ("name", "headers", "expected"),
    [pytest.param(n, h, e, id=n) for n, h, e in retry_after_headers(NOW)],
)
def test_req_res_002_rate_limit_honours_retry_after(
    name: str, headers: dict[str, str], expected: float
) -> None:
    """REQ-RES-002: a 429 waits for ``retry-after``, seconds or an HTTP date (LIM-B4 bound)."""
    response = json_response(ENGINE, "rate_limited.json", 429, headers)
    failure = expect_failure(kagi.parse, response, FailureClass.RATE_LIMITED)
    assert failure.retry_after_s == expected


@pytest.mark.parametrize(("name", "headers", "expected"), retry_after_cases())
def test_req_res_002_retry_after_without_date_header(
    name: str, headers: dict[str, str], expected: tuple[float, float] | None
) -> None:
    """REQ-RES-002: Retry-After alone, against the local clock when no Date came."""
    response = respond(fixture(ENGINE, "error_page.html"), 429, HTML, headers)
    failure = expect_failure(kagi.parse, response, FailureClass.RATE_LIMITED)
    assert_retry_after(failure, expected)


def test_req_res_002_payment_refusal_is_rate_limited() -> None:
    """REQ-RES-002: a 402 (balance exhausted) is rate_limited, without a wait."""
    response = json_response(ENGINE, "rate_limited.json", 402)
    failure = expect_failure(kagi.parse, response, FailureClass.RATE_LIMITED)
    assert failure.retry_after_s is None


@pytest.mark.parametrize(
    ("name", "status"), [("unauthorized.json", 401), ("ip_not_allowed.json", 403)]
)
def test_req_eng_006_key_errors_are_auth_failure(name: str, status: int) -> None:
    """REQ-ENG-006: 401 and 403 (IP not on the token's allow-list) are auth_failure."""
    expect_failure(kagi.parse, json_response(ENGINE, name, status), FailureClass.AUTH_FAILURE)


def test_req_eng_006_bad_request_is_request_failure() -> None:
    """REQ-ENG-006: 400 (invalid parameters) is a request_failure."""
    response = json_response(ENGINE, "bad_request.json", 400)
    expect_failure(kagi.parse, response, FailureClass.REQUEST_FAILURE)
