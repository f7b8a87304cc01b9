"""The GitHub driver against hand-written fixtures in the REST API's documented shape.

Fixture shape: https://docs.github.com/en/rest/search/search#search-repositories
(``total_count``, ``incomplete_results``, ``items[]`` with ``full_name``, ``html_url``,
``description``, ``pushed_at``, ``updated_at``, ``owner``, ``license``, ``topics``),
https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api (403/429 with
``x-ratelimit-*`` or ``retry-after``; ``message`` bodies) and
https://docs.github.com/en/rest/using-the-rest-api/troubleshooting-the-rest-api (401, 422),
and SearXNG ``searx/engines/github.py``.
REQ-TEST-002, REQ-ENG-005/006/009/010/011/012, REQ-RES-002, REQ-CMP-001, REQ-TEST-015.
"""

from __future__ import annotations

from typing import Any

import pytest

from rypsok.config.secrets import Secret
from rypsok.contract.vocabulary import Category, FailureClass, TimeRange
from rypsok.engines import github
from rypsok.engines.base import EngineResponse
from tests.engines.helpers_a import (
    DOCS,
    NOW,
    TEXT,
    assert_ranks,
    common_failures,
    expect_failure,
    fixture,
    http_date,
    make_query,
    origin_of,
    params_of,
    respond,
)

ENGINE = "github"
TOKEN = "ghp_handwrittenfixturetoken0000000000"


def query(**changes: Any) -> Any:
    """A query on GitHub's repository search endpoint."""
    changes.setdefault("text", "metasearch")
    return make_query(github.ADMISSION.endpoint, **changes)


# --- admission record ---------------------------------------------------------------------


def test_req_eng_010_admission_record() -> None:
    """REQ-ENG-010, REQ-CMP-001: the record carries the provider's obligations."""
    record = github.ADMISSION
    assert record.engine_id == ENGINE
    assert record.categories == (Category.CODE,)
    assert record.endpoint == "https://api.github.com/search/repositories"
    # The keyless search limit: 10 requests a minute.
    assert (record.rate.requests, record.rate.per_seconds) == (10, 60.0)
    assert record.key == "optional"
    assert record.languages == frozenset()
    assert record.time_ranges == frozenset(TimeRange)
    assert record.max_query_chars == 256
    assert record.max_results == 100
    assert "User-Agent" in record.user_agent_note


def test_req_cmp_001_admission_page_exists() -> None:
    """REQ-CMP-001: the admission record page exists and names the endpoint and the limits."""
    page = (DOCS / "github.md").read_text(encoding="utf-8")
    assert "https://api.github.com/search/repositories" in page
    assert "10 requests" in page
    assert "x-ratelimit-remaining" in page


# --- request ------------------------------------------------------------------------------


def test_req_eng_011_request_parameters() -> None:
    """REQ-ENG-011: one keyless GET for LIM-S3 repositories with GitHub's headers."""
    request = github.build_request(query())
    assert request.method == "GET"
    assert request.body is None
    assert origin_of(request.url) == ("https", "api.github.com")
    assert request.url.startswith("https://api.github.com/search/repositories?")
    assert params_of(request) == {"q": "metasearch", "per_page": "10"}
    headers = dict(request.headers)
    assert headers["Accept"] == "application/vnd.github+json"
    assert headers["X-GitHub-Api-Version"] == github.API_VERSION
    assert "Authorization" not in headers
    assert request.credential_headers == frozenset()


def test_req_eng_011_count_capped_at_provider_maximum() -> None:
    """REQ-ENG-011: per_page follows the count, capped at GitHub's 100."""
    assert params_of(github.build_request(query(count=3)))["per_page"] == "3"
    assert params_of(github.build_request(query(count=1000)))["per_page"] == "100"


def test_req_test_015_token_is_a_listed_credential_header() -> None:
    """REQ-TEST-015, REQ-SEC-017: the token travels in Authorization, which is listed."""
    request = github.build_request(query(credential=Secret(TOKEN)))
    assert ("Authorization", f"Bearer {TOKEN}") in request.headers
    assert request.credential_headers == frozenset({"Authorization"})
    assert TOKEN not in request.url
    assert origin_of(request.url) == ("https", "api.github.com")


@pytest.mark.parametrize(
    ("time_range", "since"),
    [
        (TimeRange.DAY, "2026-11-30"),
        (TimeRange.WEEK, "2026-11-24"),
        (TimeRange.MONTH, "2026-10-31"),
        (TimeRange.YEAR, "2025-11-30"),
    ],
)
def test_req_eng_010_time_range_is_a_pushed_qualifier(time_range: TimeRange, since: str) -> None:
    """REQ-ENG-010: a time range is a ``pushed:>=YYYY-MM-DD`` qualifier from query.now."""
    request = github.build_request(query(time_range=time_range, now=NOW))
    assert params_of(request)["q"] == f"metasearch pushed:>={since}"


def test_build_request_is_pure() -> None:
    """REQ-ENG-001: the same query builds the same request."""
    assert github.build_request(query()) == github.build_request(query())


# --- success and empty --------------------------------------------------------------------


def test_req_test_002_success() -> None:
    """REQ-TEST-002, REQ-ENG-005: repositories in order with their last push date."""
    results = github.parse(respond(fixture(ENGINE, "success.json")))
    assert [(r.title, r.url, r.date) for r in results] == [
        ("searxng/searxng", "https://github.com/searxng/searxng", "2026-11-30"),
        # pushed_at is null: the last update date instead.
        (
            "example-user/meta-search-tool",
            "https://github.com/example-user/meta-search-tool",
            "2026-10-02",
        ),
        ("acme-org/metasearch", "https://github.com/acme-org/metasearch", "2025-03-01"),
    ]
    assert results[1].snippet == ""
    assert_ranks(results)


def test_req_eng_012_snippets_stay_raw() -> None:
    """REQ-ENG-012: descriptions keep their entities and markup."""
    results = github.parse(respond(fixture(ENGINE, "success.json")))
    assert "aggregates results from various search services &amp; databases" in results[0].snippet
    assert results[2].snippet == "A <b>fast</b> meta-search library"


def test_req_test_002_empty() -> None:
    """REQ-TEST-002: an answer with no items is an empty list, not a failure."""
    assert github.parse(respond(fixture(ENGINE, "empty.json"))) == []


def test_incomplete_results_are_used() -> None:
    """``incomplete_results: true`` (GitHub's own timeout) still carries valid items."""
    (result,) = github.parse(respond(fixture(ENGINE, "incomplete.json")))
    assert result.url == "https://github.com/searxng/searxng"


def test_malformed_items_are_skipped() -> None:
    """Items without a name or an absolute URL are skipped; odd fields are dropped."""
    results = github.parse(respond(fixture(ENGINE, "malformed_items.json")))
    assert [(r.title, r.url, r.snippet, r.date, r.rank) for r in results] == [
        ("kept/repo", "https://github.com/kept/repo", "", None, 1)
    ]


# --- failures -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("response", "expected"),
    [pytest.param(r, c, id=i) for i, r, c in common_failures(ENGINE)],
)
def test_req_eng_006_error_classes(response: EngineResponse, expected: FailureClass) -> None:
    """REQ-ENG-006, REQ-ENG-009, REQ-RES-002: each failure has one class and no provider text."""
    expect_failure(github.parse, response, expected)


SERVER_NOW = 1_796_083_200.0  # the response's Date header: 2026-12-01T00:00:00Z


@pytest.mark.parametrize("status", [403, 429])
def test_req_res_002_primary_limit_waits_until_reset(status: int) -> None:
    """REQ-RES-002: 403/429 with ``x-ratelimit-remaining: 0`` is rate_limited until the reset."""
    headers = {
        "Date": http_date(SERVER_NOW),
        "X-RateLimit-Limit": "10",
        "X-RateLimit-Remaining": "0",
        "X-RateLimit-Used": "10",
        "X-RateLimit-Reset": str(int(SERVER_NOW) + 42),
        "X-RateLimit-Resource": "search",
    }
    response = respond(fixture(ENGINE, "primary_rate_limit.json"), status, headers=headers)
    failure = expect_failure(github.parse, response, FailureClass.RATE_LIMITED)
    assert failure.retry_after_s == 42.0


def test_req_res_002_primary_limit_reset_is_bounded_by_lim_b4() -> None:
    """REQ-RES-002: a reset further than LIM-B4 away is cut to an hour."""
    headers = {
        "Date": http_date(SERVER_NOW),
        "X-RateLimit-Remaining": "0",
        "X-RateLimit-Reset": str(int(SERVER_NOW) + 86_400),
    }
    response = respond(fixture(ENGINE, "primary_rate_limit.json"), 403, headers=headers)
    failure = expect_failure(github.parse, response, FailureClass.RATE_LIMITED)
    assert failure.retry_after_s == 3600.0


@pytest.mark.parametrize(
    ("status", "headers", "expected"),
    [
        pytest.param(403, {"Retry-After": "60"}, 60.0, id="403-seconds"),
        pytest.param(429, {"Retry-After": "17"}, 17.0, id="429-seconds"),
        pytest.param(
            429,
            {"Date": http_date(SERVER_NOW), "Retry-After": http_date(SERVER_NOW + 90)},
            90.0,
            id="429-http-date",
        ),
        pytest.param(403, {}, 60.0, id="403-message-only"),
        pytest.param(429, {}, 60.0, id="429-no-header"),
    ],
)
def test_req_res_002_secondary_limit(status: int, headers: dict[str, str], expected: float) -> None:
    """REQ-RES-002: the secondary limit is rate_limited; without a header, wait one minute."""
    response = respond(fixture(ENGINE, "secondary_rate_limit.json"), status, headers=headers)
    failure = expect_failure(github.parse, response, FailureClass.RATE_LIMITED)
    assert failure.retry_after_s == expected


def test_req_res_002_reset_without_date_header_waits_one_minute() -> None:
    """Without the response's Date the reset epoch is not compared to any clock: one minute."""
    headers = {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(int(SERVER_NOW) + 5)}
    response = respond(fixture(ENGINE, "primary_rate_limit.json"), 403, headers=headers)
    failure = expect_failure(github.parse, response, FailureClass.RATE_LIMITED)
    assert failure.retry_after_s == 60.0


def test_req_eng_006_bad_credentials_is_auth_failure() -> None:
    """REQ-ENG-006: 401 "Bad credentials" is an auth_failure."""
    response = respond(fixture(ENGINE, "bad_credentials.json"), 401)
    expect_failure(github.parse, response, FailureClass.AUTH_FAILURE)


def test_req_eng_006_other_json_403_is_auth_failure() -> None:
    """REQ-ENG-006: a JSON 403 with quota left and no rate-limit message is the token's fault."""
    headers = {"X-RateLimit-Remaining": "4999", "X-RateLimit-Reset": str(int(SERVER_NOW) + 5)}
    response = respond(fixture(ENGINE, "forbidden.json"), 403, headers=headers)
    expect_failure(github.parse, response, FailureClass.AUTH_FAILURE)


def test_req_eng_006_validation_failed_is_request_failure() -> None:
    """REQ-ENG-006: 422 "Validation Failed" (e.g. a query too long) is a request_failure."""
    response = respond(fixture(ENGINE, "validation_failed.json"), 422)
    expect_failure(github.parse, response, FailureClass.REQUEST_FAILURE)


def test_req_eng_006_service_unavailable_without_retry_after() -> None:
    """REQ-ENG-006: 503 without Retry-After is a request_failure."""
    response = respond(fixture(ENGINE, "error_page.html"), 503, TEXT)
    expect_failure(github.parse, response, FailureClass.REQUEST_FAILURE)


def test_req_cmp_002_a_configured_key_raises_the_admitted_rate(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """REQ-CMP-002, REQ-CFG-004: with a key configured by reference the provider's keyed rate
    is in force; without one the keyless rate holds."""
    from rypsok.config.load import parse_settings
    from rypsok.engines.base import RateLimit
    from rypsok.engines.catalog import resolve_engines

    monkeypatch.setenv("RYPSOK_TEST_GITHUB_KEY", "k" * 40)

    def rate(entry: dict[str, Any]) -> RateLimit:
        settings = parse_settings({"schema_version": 1, "engines": {"github": entry}})
        engine = next(x for x in resolve_engines(settings) if x.engine_id == "github")
        return engine.driver.admission.rate

    record = github.ADMISSION
    assert record.keyed_rate is not None and record.keyed_rate != record.rate
    assert rate({}) == record.rate
    assert rate({"api_key_env": "RYPSOK_TEST_GITHUB_KEY"}) == record.keyed_rate
