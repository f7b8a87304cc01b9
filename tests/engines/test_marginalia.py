"""The Marginalia driver against hand-written fixtures in the API's documented shape.

Fixture shape: https://about.marginalia-search.com/article/api/ (updated 2025-12-08: the
``api2.marginalia-search.com`` API, key in the ``API-Key`` header, parameters ``count``,
``dc``, ``page``, ``nsfw``, ``timeout``; response ``license``, ``query``, ``results[]`` with
``url``, ``title``, ``description``, ``quality``, ``format``, ``details``), and the server's
error signals (MarginaliaSearch ``ApiV2.java``: missing key 400, unknown key 401, rate
limit 503 without Retry-After, query timeout 504).
REQ-TEST-002, REQ-ENG-005/006/009/010/011/012, REQ-RES-002, REQ-CFG-004, REQ-CMP-001/003.
"""

from __future__ import annotations

from typing import Any

import pytest

from rypsok.config.secrets import Secret
from rypsok.contract.vocabulary import Category, FailureClass, SafeSearch
from rypsok.engines import marginalia
from rypsok.engines.base import EngineFailure, EngineQuery, EngineResponse
from tests.engines.helpers_a import (
    HTML,
    TEXT,
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
    keyed_query,
)

ENGINE = "marginalia"


def query(**changes: Any) -> EngineQuery:
    """A query on Marginalia's API with the operator's own key."""
    changes.setdefault("text", "linear b")
    return keyed_query(marginalia.ADMISSION.endpoint, **changes)


# --- admission record ---------------------------------------------------------------------


def test_req_eng_010_admission_record() -> None:
    """REQ-ENG-010, REQ-CMP-001/003, REQ-CFG-004: own key, attribution, cacheable."""
    record = marginalia.ADMISSION
    assert_keyed_record(record, ENGINE)
    assert record.categories == (Category.GENERAL,)
    assert record.endpoint == "https://api2.marginalia-search.com/search"
    assert (record.rate.requests, record.rate.per_seconds) == (1, 1.0)
    assert record.max_in_flight == 1
    assert record.attribution_required is True  # CC-BY-NC-SA 4.0 for non-commercial keys
    assert "CC-BY-NC-SA 4.0" in record.license
    assert record.cacheable is True
    assert record.languages == frozenset()
    assert record.time_ranges == frozenset()  # no time filter
    assert record.max_results == 100


def test_req_cmp_001_admission_page_exists() -> None:
    """REQ-CMP-001: the admission page names the endpoint, the header and the licence."""
    page = admission_page(ENGINE)
    assert marginalia.ADMISSION.endpoint in page
    assert "API-Key" in page
    assert "CC-BY-NC-SA 4.0" in page
    assert "public" in page


# --- request ------------------------------------------------------------------------------


def test_req_eng_011_request_parameters() -> None:
    """REQ-ENG-011: one GET for LIM-S3 results with the extreme-content filter on."""
    request = marginalia.build_request(query())
    assert request.method == "GET"
    assert request.body is None
    assert origin_of(request.url) == ("https", "api2.marginalia-search.com")
    assert request.url.startswith(marginalia.ADMISSION.endpoint + "?")
    assert params_of(request) == {"query": "linear b", "count": "10", "nsfw": "1"}
    assert header(request, "Accept") == "application/json"


def test_req_cfg_004_key_only_in_the_api_key_header() -> None:
    """REQ-CFG-004, REQ-SEC-017: the key is in the API-Key header, never in the path."""
    request = marginalia.build_request(query())
    assert header(request, "API-Key") == KEY
    assert request.credential_headers == frozenset({"API-Key"})
    assert_key_only_in(request, "API-Key")


@pytest.mark.parametrize("key", ["public", "PUBLIC", " public "])
def test_req_cfg_004_shared_public_key_is_refused(key: str) -> None:
    """REQ-CFG-004: the shared development key is refused before any request is built."""
    with pytest.raises(EngineFailure) as caught:
        marginalia.build_request(query(credential=Secret(key)))
    assert caught.value.failure_class is FailureClass.AUTH_FAILURE
    assert caught.value.args == (FailureClass.AUTH_FAILURE.value,)


def test_req_eng_011_count_capped_at_provider_maximum() -> None:
    """REQ-ENG-011: count follows the query, capped at Marginalia's 100."""
    assert params_of(marginalia.build_request(query(count=3)))["count"] == "3"
    assert params_of(marginalia.build_request(query(count=250)))["count"] == "100"


@pytest.mark.parametrize(
    ("level", "nsfw"), [(SafeSearch.OFF, "0"), (SafeSearch.MODERATE, "1"), (SafeSearch.STRICT, "1")]
)
def test_safe_search_is_nsfw_filter(level: SafeSearch, nsfw: str) -> None:
    """``nsfw=1`` (reduce extreme results) unless the operator turned safe search off."""
    assert params_of(marginalia.build_request(query(safe_search=level)))["nsfw"] == nsfw


def test_build_request_reads_no_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """REQ-ENG-001: the request is a pure function of the query."""
    assert_reads_no_clock(marginalia.build_request, query(), monkeypatch)


# --- success and empty --------------------------------------------------------------------


def test_req_test_002_success() -> None:
    """REQ-TEST-002, REQ-ENG-005: results in Marginalia's order; Marginalia gives no date."""
    results = marginalia.parse(respond(fixture(ENGINE, "success.json")))
    assert [(r.url, r.date) for r in results] == [
        ("https://www.example.edu/~scribe/linear-b/", None),
        ("http://oldweb.example.org/scripts/aegean.html", None),
        ("https://blog.example.net/2019/ventris", None),
    ]
    assert results[1].snippet == ""
    assert results[2].snippet == ""
    assert_ranks(results)


def test_req_eng_012_titles_and_snippets_stay_raw() -> None:
    """REQ-ENG-012: entities and markup are left for the pipeline."""
    first = marginalia.parse(respond(fixture(ENGINE, "success.json")))[0]
    assert first.title == "Linear B &amp; the Mycenaean tablets"
    assert "<em>Linear B</em>" in first.snippet


def test_req_test_002_empty() -> None:
    """REQ-TEST-002: an empty ``results`` list is an empty list, not a failure."""
    assert marginalia.parse(respond(fixture(ENGINE, "empty.json"))) == []


def test_malformed_items_are_skipped() -> None:
    """Items without a title or an absolute http(s) URL are skipped; odd fields dropped."""
    results = marginalia.parse(respond(fixture(ENGINE, "malformed_items.json")))
    assert [(r.title, r.url, r.snippet, r.date, r.rank) for r in results] == [
        ("Kept", "https://kept.example.com/lb", "", None, 1)
    ]


# --- failures -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("response", "expected"),
    [pytest.param(r, c, id=i) for i, r, c in common_failures(ENGINE)],
)
def test_req_eng_006_error_classes(response: EngineResponse, expected: FailureClass) -> None:
    """REQ-ENG-006, REQ-ENG-009, REQ-RES-002: each failure has one class, no provider text."""
    expect_failure(marginalia.parse, response, expected)


def test_req_res_002_503_is_marginalias_rate_limit() -> None:
    """REQ-RES-002: Marginalia's rate limit is a 503 without Retry-After: rate_limited."""
    response = respond(fixture(ENGINE, "rate_limited.html"), 503, HTML)
    failure = expect_failure(marginalia.parse, response, FailureClass.RATE_LIMITED)
    assert failure.retry_after_s is None


@pytest.mark.parametrize(("name", "headers", "expected"), retry_after_cases())
@pytest.mark.parametrize("status", [429, 503])
def test_req_res_002_retry_after(
    status: int, name: str, headers: dict[str, str], expected: tuple[float, float] | None
) -> None:
    """REQ-RES-002: a Retry-After, in seconds or as an HTTP date, is honoured (LIM-B4)."""
    response = respond(fixture(ENGINE, "rate_limited.html"), status, HTML, headers)
    failure = expect_failure(marginalia.parse, response, FailureClass.RATE_LIMITED)
    assert_retry_after(failure, expected)


def test_req_eng_006_unknown_key_is_auth_failure() -> None:
    """REQ-ENG-006: 401 (unknown key) is auth_failure."""
    response = respond(fixture(ENGINE, "unknown_key.txt"), 401, TEXT)
    expect_failure(marginalia.parse, response, FailureClass.AUTH_FAILURE)


def test_req_eng_006_forbidden_json_is_auth_failure() -> None:
    """REQ-ENG-006: a JSON 403 is the key's fault: auth_failure."""
    response = respond(b'{"error": "forbidden"}', 403)
    expect_failure(marginalia.parse, response, FailureClass.AUTH_FAILURE)


@pytest.mark.parametrize(("name", "status"), [("missing_key.txt", 400), ("error_page.html", 504)])
def test_req_eng_006_other_statuses_are_request_failure(name: str, status: int) -> None:
    """REQ-ENG-006: 400 (missing key header) and 504 (query timeout) are request_failure."""
    response = respond(fixture(ENGINE, name), status, TEXT)
    expect_failure(marginalia.parse, response, FailureClass.REQUEST_FAILURE)
