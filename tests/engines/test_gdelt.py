"""The GDELT driver against hand-written fixtures in the DOC 2.0 API's documented shape.

Fixture shape: https://blog.gdeltproject.org/gdelt-doc-2-0-api-debuts/ (``mode=artlist``,
``format=json``: ``articles[]`` with ``url``, ``url_mobile``, ``title``, ``seendate``,
``socialimage``, ``domain``, ``language``, ``sourcecountry``; ``{}`` when nothing matches),
alex9smith/gdelt-doc-api (``gdeltdoc/api_client.py``: errors come back as text/html, not JSON)
and the plain-text rate-limit notice recorded in providers.md section 1.12.
REQ-TEST-002, REQ-ENG-005/006/009/010/011/012, REQ-RES-002, REQ-CMP-001.
"""

from __future__ import annotations

from typing import Any

import pytest

from rypsok.contract.vocabulary import Category, FailureClass, TimeRange
from rypsok.engines import gdelt
from rypsok.engines.base import EngineResponse
from tests.engines.helpers_a import (
    DOCS,
    HTML,
    TEXT,
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

ENGINE = "gdelt"


def query(**changes: Any) -> Any:
    """A query on the GDELT DOC endpoint."""
    changes.setdefault("text", "climate summit")
    return make_query(gdelt.ADMISSION.endpoint, **changes)


# --- admission record ---------------------------------------------------------------------


def test_req_eng_010_admission_record() -> None:
    """REQ-ENG-010, REQ-CMP-001: the record carries the provider's obligations."""
    record = gdelt.ADMISSION
    assert record.engine_id == ENGINE
    assert record.categories == (Category.NEWS,)
    assert record.endpoint == "https://api.gdeltproject.org/api/v2/doc/doc"
    # At most one request every 5 seconds, one at a time.
    assert record.rate.requests == 1 and record.rate.per_seconds >= 5.0
    assert record.max_in_flight == 1
    assert record.attribution_required is True
    assert "GDELT" in record.license
    assert record.time_ranges == frozenset(TimeRange)
    assert record.languages is not None and {"en", "de", "es", "fr", "zh"} <= record.languages
    assert record.max_results == 250


def test_req_cmp_001_admission_page_exists() -> None:
    """REQ-CMP-001: the admission record page exists and names the endpoint and the limit."""
    page = (DOCS / "gdelt.md").read_text(encoding="utf-8")
    assert "https://api.gdeltproject.org/api/v2/doc/doc" in page
    assert "5 s" in page or "5 seconds" in page


# --- request ------------------------------------------------------------------------------


def test_req_eng_011_request_parameters() -> None:
    """REQ-ENG-011: one article-list request for LIM-S3 articles in the asked language."""
    request = gdelt.build_request(query())
    assert request.method == "GET"
    assert request.body is None
    assert origin_of(request.url) == ("https", "api.gdeltproject.org")
    assert request.url.startswith("https://api.gdeltproject.org/api/v2/doc/doc?")
    assert params_of(request) == {
        "query": "climate summit sourcelang:english",
        "mode": "artlist",
        "format": "json",
        "maxrecords": "10",
        "sort": "hybridrel",
    }
    assert ("Accept", "application/json") in request.headers
    assert request.credential_headers == frozenset()


def test_req_eng_011_count_capped_at_provider_maximum() -> None:
    """REQ-ENG-011: maxrecords follows the count, capped at GDELT's 250."""
    assert params_of(gdelt.build_request(query(count=5)))["maxrecords"] == "5"
    assert params_of(gdelt.build_request(query(count=1000)))["maxrecords"] == "250"


@pytest.mark.parametrize(
    ("language", "operator"),
    [("en", "english"), ("de", "german"), ("pt-BR", "portuguese"), ("zh", "chinese")],
)
def test_req_eng_010_language_is_sourcelang(language: str, operator: str) -> None:
    """REQ-ENG-010: the language becomes GDELT's ``sourcelang:`` operator."""
    request = gdelt.build_request(query(language=language))
    assert params_of(request)["query"] == f"climate summit sourcelang:{operator}"


def test_req_eng_010_unlisted_language_adds_no_filter() -> None:
    """A language outside the record is never sent as an operator (the pipeline skips it)."""
    assert "xx" not in (gdelt.ADMISSION.languages or frozenset())
    assert params_of(gdelt.build_request(query(language="xx")))["query"] == "climate summit"


@pytest.mark.parametrize(
    ("time_range", "timespan"),
    [(TimeRange.DAY, "1d"), (TimeRange.WEEK, "7d"), (TimeRange.MONTH, "31d")],
)
def test_req_eng_010_time_range_is_timespan(time_range: TimeRange, timespan: str) -> None:
    """REQ-ENG-010: day, week and month are GDELT ``timespan`` values."""
    params = params_of(gdelt.build_request(query(time_range=time_range)))
    assert params["timespan"] == timespan
    assert "startdatetime" not in params


def test_req_eng_010_year_is_an_explicit_window_from_query_now() -> None:
    """REQ-ENG-010: a year (beyond GDELT's 3-month default) is a start and end from query.now."""
    params = params_of(gdelt.build_request(query(time_range=TimeRange.YEAR)))
    assert params["startdatetime"] == "20251130000000"  # 366 days before 2026-12-01
    assert params["enddatetime"] == "20261201000000"
    assert "timespan" not in params


def test_build_request_is_pure() -> None:
    """REQ-ENG-001: the same query builds the same request."""
    assert gdelt.build_request(query()) == gdelt.build_request(query())


# --- success and empty --------------------------------------------------------------------


def test_req_test_002_success() -> None:
    """REQ-TEST-002, REQ-ENG-005: articles in order with GDELT's first-seen date."""
    results = gdelt.parse(respond(fixture(ENGINE, "success.json")))
    assert [(r.url, r.date) for r in results] == [
        ("https://www.example-news.com/world/2026/11/30/climate-summit-agreement", "2026-11-30"),
        ("https://www.diario-ejemplo.es/internacional/cumbre-clima", "2026-11-30"),
        ("http://www.regional-paper.example/2026/11/29/local-reaction", "2026-11-29"),
    ]
    assert all(r.snippet == "" for r in results)
    assert_ranks(results)


def test_req_eng_012_titles_stay_raw() -> None:
    """REQ-ENG-012: titles keep their entities and GDELT's odd spacing."""
    results = gdelt.parse(respond(fixture(ENGINE, "success.json")))
    assert results[0].title == "Climate summit ends with agreement on methane &amp; coal"
    assert results[1].title == 'La cumbre del clima cierra con un acuerdo "histórico"'
    assert results[2].title == "Local reaction to the climate summit : farmers worried"


def test_raw_control_characters_in_titles_are_tolerated() -> None:
    """GDELT titles sometimes hold raw control characters; the answer is still read."""
    (result,) = gdelt.parse(respond(fixture(ENGINE, "control_characters.json")))
    assert result.title == "A title with a raw\ttab and\nnewline"


@pytest.mark.parametrize("name", ["empty.json", "empty_list.json"])
def test_req_test_002_empty(name: str) -> None:
    """REQ-TEST-002: ``{}`` (GDELT's no-match answer) and an empty list are no results."""
    assert gdelt.parse(respond(fixture(ENGINE, name))) == []


def test_malformed_items_are_skipped() -> None:
    """Articles without a title or an http(s) URL are skipped; an odd date is dropped."""
    results = gdelt.parse(respond(fixture(ENGINE, "malformed_items.json")))
    assert [(r.title, r.url, r.date, r.rank) for r in results] == [
        ("The one well-formed article", "https://www.example-news.com/kept", None, 1)
    ]


# --- failures -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("response", "expected"),
    [pytest.param(r, c, id=i) for i, r, c in common_failures(ENGINE)],
)
def test_req_eng_006_error_classes(response: EngineResponse, expected: FailureClass) -> None:
    """REQ-ENG-006, REQ-ENG-009, REQ-RES-002: each failure has one class and no provider text."""
    expect_failure(gdelt.parse, response, expected)


@pytest.mark.parametrize(
    ("headers", "expected"),
    [pytest.param(h, e, id=i) for i, h, e in retry_after_cases()],
)
def test_req_res_002_http_429_retry_after(
    headers: dict[str, str], expected: tuple[float, float] | None
) -> None:
    """REQ-RES-002: HTTP 429 is rate_limited; Retry-After in seconds or as a date."""
    response = respond(fixture(ENGINE, "rate_limited.txt"), 429, TEXT, headers)
    failure = expect_failure(gdelt.parse, response, FailureClass.RATE_LIMITED)
    assert_retry_after(failure, expected)


@pytest.mark.parametrize("content_type", [TEXT, HTML])
def test_req_res_002_plain_text_notice_with_200_is_rate_limited(content_type: str) -> None:
    """REQ-RES-002: GDELT's "Please limit requests…" notice with HTTP 200 is rate_limited."""
    response = respond(fixture(ENGINE, "rate_limited.txt"), 200, content_type)
    expect_failure(gdelt.parse, response, FailureClass.RATE_LIMITED)


@pytest.mark.parametrize("name", ["query_error.txt", "timespan_error.txt"])
def test_req_eng_006_refused_query_is_request_failure(name: str) -> None:
    """REQ-ENG-006: GDELT's one-line refusal of a query (text/html, 200) is request_failure."""
    response = respond(fixture(ENGINE, name), 200, HTML)
    expect_failure(gdelt.parse, response, FailureClass.REQUEST_FAILURE)


@pytest.mark.parametrize("content_type", [TEXT, HTML])
def test_req_eng_006_truncated_json_under_any_label_is_parse_failure(content_type: str) -> None:
    """REQ-ENG-006: JSON cut short is a parse_failure, whatever the media type says."""
    response = respond(fixture(ENGINE, "truncated.json"), 200, content_type)
    expect_failure(gdelt.parse, response, FailureClass.PARSE_FAILURE)


def test_req_eng_006_empty_body_is_parse_failure() -> None:
    """REQ-ENG-006: an empty 200 is a parse_failure."""
    expect_failure(gdelt.parse, respond(b"", 200, TEXT), FailureClass.PARSE_FAILURE)


def test_req_eng_009_json_403_is_blocked() -> None:
    """REQ-ENG-009: GDELT takes no key, so any 403 is a block of this client."""
    response = respond(b'{"error": "forbidden"}', 403)
    expect_failure(gdelt.parse, response, FailureClass.BLOCKED)
