"""The Wikipedia driver against hand-written fixtures in the Action API's documented shape.

Fixture shape: https://www.mediawiki.org/wiki/API:Search (``query.search[]`` with ``title``,
``snippet``, ``timestamp``), https://www.mediawiki.org/wiki/API:Siteinfo (``query.general``),
https://www.mediawiki.org/wiki/API:Errors_and_warnings and Manual:Maxlag_parameter (``error``
object with HTTP 200), and SearXNG ``searx/engines/mediawiki.py``.
REQ-TEST-002, REQ-ENG-005/006/009/010/011/012, REQ-RES-002, REQ-CMP-001.
"""

from __future__ import annotations

from typing import Any

import pytest

from rypsok.contract.vocabulary import Category, FailureClass
from rypsok.engines import wikipedia
from rypsok.engines.base import EngineResponse
from tests.engines.helpers_a import (
    DOCS,
    TEXT,
    assert_ranks,
    assert_retry_after,
    common_failures,
    expect_failure,
    fixture,
    fixture_json,
    make_query,
    origin_of,
    params_of,
    respond,
    retry_after_cases,
)

ENGINE = "wikipedia"
ENDPOINT_EN = wikipedia.ADMISSION.endpoint.format(language="en")


def query(**changes: Any) -> Any:
    """A query on the English wiki unless the test says otherwise."""
    return make_query(ENDPOINT_EN, **changes)


# --- admission record ---------------------------------------------------------------------


def test_req_eng_010_admission_record() -> None:
    """REQ-ENG-010, REQ-CMP-001: the record carries the provider's obligations."""
    record = wikipedia.ADMISSION
    assert record.engine_id == ENGINE
    assert record.categories == (Category.GENERAL,)
    assert record.endpoint == "https://{language}.wikipedia.org/w/api.php"
    assert record.documentation.startswith("https://www.mediawiki.org/")
    assert record.attribution_required is True
    assert "CC BY-SA" in record.license
    assert record.cacheable is True
    assert "contact" in record.user_agent_note
    assert record.languages is None
    assert record.time_ranges == frozenset()
    assert record.max_query_chars == 300
    assert record.max_in_flight == 1
    assert record.rate.requests >= 1 and record.rate.per_seconds > 0
    assert record.key == "none"


def test_req_cmp_001_admission_page_exists() -> None:
    """REQ-CMP-001: the admission record page exists and names the endpoint and the terms."""
    page = (DOCS / "wikipedia.md").read_text(encoding="utf-8")
    assert "https://{language}.wikipedia.org/w/api.php" in page
    assert "CC BY-SA" in page
    assert "User-Agent" in page


# --- request ------------------------------------------------------------------------------


def test_req_eng_011_request_parameters() -> None:
    """REQ-ENG-011: one GET on the language's endpoint asking for LIM-S3 results."""
    request = wikipedia.build_request(query())
    assert request.method == "GET"
    assert request.body is None
    assert origin_of(request.url) == ("https", "en.wikipedia.org")
    assert request.url.startswith("https://en.wikipedia.org/w/api.php?")
    assert params_of(request) == {
        "action": "query",
        "list": "search",
        "srsearch": "relativity",
        "srlimit": "10",
        "srnamespace": "0",
        "srprop": "snippet|timestamp",
        "meta": "siteinfo",
        "siprop": "general",
        "format": "json",
        "formatversion": "2",
    }
    assert ("Accept", "application/json") in request.headers
    assert request.credential_headers == frozenset()


def test_req_eng_011_count_capped_at_provider_maximum() -> None:
    """REQ-ENG-011: a count above the provider's maximum asks for the maximum."""
    assert params_of(wikipedia.build_request(query(count=3)))["srlimit"] == "3"
    assert params_of(wikipedia.build_request(query(count=10_000)))["srlimit"] == "500"


def test_req_eng_010_language_is_the_endpoint() -> None:
    """REQ-ENG-010: the language selects the wiki; the request stays on that origin."""
    endpoint = wikipedia.ADMISSION.endpoint.format(language="de")
    request = wikipedia.build_request(
        make_query(endpoint, language="de", text="Relativitätstheorie")
    )
    assert origin_of(request.url) == ("https", "de.wikipedia.org")
    assert params_of(request)["srsearch"] == "Relativitätstheorie"


def test_req_eng_010_query_text_is_encoded() -> None:
    """Query text with URL syntax stays one parameter value."""
    text = "C++ & Java?#frag=1 100%"
    request = wikipedia.build_request(query(text=text))
    assert params_of(request)["srsearch"] == text
    assert "#" not in request.url


def test_build_request_is_pure() -> None:
    """REQ-ENG-001: the same query builds the same request."""
    assert wikipedia.build_request(query()) == wikipedia.build_request(query())


# --- success and empty --------------------------------------------------------------------


def test_req_test_002_success() -> None:
    """REQ-TEST-002, REQ-ENG-005: results in provider order with article URLs and dates."""
    results = wikipedia.parse(respond(fixture(ENGINE, "success.json")))
    assert [r.title for r in results] == [
        "Theory of relativity",
        "General relativity",
        "Relativity: The Special and the General Theory",
        "Relativity (M. C. Escher)",
        "Einstein–Cartan theory",
    ]
    assert [r.url for r in results] == [
        "https://en.wikipedia.org/wiki/Theory_of_relativity",
        "https://en.wikipedia.org/wiki/General_relativity",
        "https://en.wikipedia.org/wiki/Relativity:_The_Special_and_the_General_Theory",
        "https://en.wikipedia.org/wiki/Relativity_(M._C._Escher)",
        "https://en.wikipedia.org/wiki/Einstein%E2%80%93Cartan_theory",
    ]
    assert [r.date for r in results] == [
        "2026-11-28",
        "2026-11-30",
        "2026-06-03",
        "2025-12-19",
        "2026-09-14",
    ]
    assert_ranks(results)


def test_req_eng_012_snippets_stay_raw() -> None:
    """REQ-ENG-012: markup and entities are left for the pipeline to clean."""
    results = wikipedia.parse(respond(fixture(ENGINE, "success.json")))
    assert results[0].snippet.startswith(
        'The theory of <span class="searchmatch">relativity</span>'
    )
    assert "&quot;Einstein&#039;s theory of gravity&quot;" in results[1].snippet
    assert "The Special &amp; the General Theory" in results[2].snippet


def test_req_eng_005_urls_follow_the_wiki_answering() -> None:
    """REQ-ENG-005: article URLs use the answering wiki's server and article path."""
    body = fixture_json(ENGINE, "success.json")
    body["query"]["general"].update(
        {"server": "//de.wikipedia.org", "articlepath": "/wiki/$1", "lang": "de"}
    )
    body["query"]["search"] = [{"ns": 0, "title": "Spezielle Relativitätstheorie", "snippet": ""}]
    (result,) = wikipedia.parse(respond(body))
    assert result.url == "https://de.wikipedia.org/wiki/Spezielle_Relativit%C3%A4tstheorie"
    assert result.date is None


def test_req_eng_005_title_characters_are_encoded() -> None:
    """Titles with reserved characters give URLs that keep the title whole."""
    body = fixture_json(ENGINE, "success.json")
    body["query"]["search"] = [
        {"ns": 0, "title": "C++", "snippet": ""},
        {"ns": 0, "title": "Who Framed Roger Rabbit?", "snippet": ""},
        {"ns": 0, "title": "AC/DC", "snippet": ""},
        {"ns": 0, "title": "Tom & Jerry #1", "snippet": ""},
    ]
    urls = [r.url for r in wikipedia.parse(respond(body))]
    assert urls == [
        "https://en.wikipedia.org/wiki/C%2B%2B",
        "https://en.wikipedia.org/wiki/Who_Framed_Roger_Rabbit%3F",
        "https://en.wikipedia.org/wiki/AC/DC",
        "https://en.wikipedia.org/wiki/Tom_%26_Jerry_%231",
    ]


def test_req_test_002_empty() -> None:
    """REQ-TEST-002: an answer with no hits is an empty list, not a failure."""
    assert wikipedia.parse(respond(fixture(ENGINE, "empty.json"))) == []


def test_malformed_items_are_skipped() -> None:
    """One malformed item is skipped; the rest of the answer is kept and ranked 1..n."""
    results = wikipedia.parse(respond(fixture(ENGINE, "malformed_items.json")))
    assert [(r.title, r.url, r.snippet, r.date, r.rank) for r in results] == [
        ("Special relativity", "https://en.wikipedia.org/wiki/Special_relativity", "", None, 1)
    ]


# --- failures -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("response", "expected"),
    [pytest.param(r, c, id=i) for i, r, c in common_failures(ENGINE)],
)
def test_req_eng_006_error_classes(response: EngineResponse, expected: FailureClass) -> None:
    """REQ-ENG-006, REQ-ENG-009, REQ-RES-002: each failure has one class and no provider text."""
    expect_failure(wikipedia.parse, response, expected)


@pytest.mark.parametrize(
    ("headers", "expected"),
    [pytest.param(h, e, id=i) for i, h, e in retry_after_cases()],
)
def test_req_res_002_http_429_retry_after(
    headers: dict[str, str], expected: tuple[float, float] | None
) -> None:
    """REQ-RES-002: HTTP 429 is rate_limited; Retry-After in seconds or as a date, within LIM-B4."""
    response = respond(b"Too many requests", 429, TEXT, headers)
    failure = expect_failure(wikipedia.parse, response, FailureClass.RATE_LIMITED)
    assert_retry_after(failure, expected)


def test_req_res_002_in_body_ratelimited() -> None:
    """REQ-RES-002: MediaWiki's ``ratelimited`` error, sent with HTTP 200, is rate_limited."""
    response = respond(fixture(ENGINE, "error_ratelimited.json"))
    failure = expect_failure(wikipedia.parse, response, FailureClass.RATE_LIMITED)
    assert failure.retry_after_s is None


def test_req_res_002_in_body_maxlag_with_retry_after() -> None:
    """REQ-RES-002: MediaWiki's ``maxlag`` error (HTTP 200, Retry-After) is rate_limited."""
    response = respond(
        fixture(ENGINE, "error_maxlag.json"), headers={"Retry-After": "5", "X-Database-Lag": "6"}
    )
    failure = expect_failure(wikipedia.parse, response, FailureClass.RATE_LIMITED)
    assert failure.retry_after_s == 5.0


def test_req_eng_006_other_api_errors_are_request_failures() -> None:
    """REQ-ENG-006: any other MediaWiki error code is a request_failure."""
    expect_failure(
        wikipedia.parse,
        respond(fixture(ENGINE, "error_badvalue.json")),
        FailureClass.REQUEST_FAILURE,
    )
    expect_failure(
        wikipedia.parse,
        respond(fixture(ENGINE, "error_unknown_shape.json")),
        FailureClass.REQUEST_FAILURE,
    )


def test_req_eng_006_read_denied_is_auth_failure() -> None:
    """REQ-ENG-006: ``readapidenied`` (a private wiki behind an operator endpoint) is auth."""
    response = respond(fixture(ENGINE, "error_readapidenied.json"))
    expect_failure(wikipedia.parse, response, FailureClass.AUTH_FAILURE)


def test_req_eng_009_user_agent_block_is_blocked() -> None:
    """REQ-ENG-009: Wikimedia's 403 for a refused User-Agent is blocked (no key exists)."""
    response = respond(fixture(ENGINE, "blocked_user_agent.txt"), 403, TEXT)
    expect_failure(wikipedia.parse, response, FailureClass.BLOCKED)


def test_req_eng_006_missing_siteinfo_is_parse_failure() -> None:
    """REQ-ENG-006: hits without the wiki's server cannot become URLs: parse_failure."""
    response = respond(fixture(ENGINE, "no_siteinfo.json"))
    expect_failure(wikipedia.parse, response, FailureClass.PARSE_FAILURE)


@pytest.mark.parametrize(
    "general",
    [
        {"server": "//en.wikipedia.org"},
        {"server": "javascript:alert(1)", "articlepath": "/wiki/$1"},
        {"server": "//en.wikipedia.org", "articlepath": "wiki"},
        {"server": 7, "articlepath": "/wiki/$1"},
    ],
)
def test_req_eng_006_unusable_siteinfo_is_parse_failure(general: dict[str, Any]) -> None:
    """REQ-ENG-006: a server or article path that cannot make an http(s) URL is refused."""
    body = fixture_json(ENGINE, "success.json")
    body["query"]["general"] = general
    expect_failure(wikipedia.parse, respond(body), FailureClass.PARSE_FAILURE)
