"""The Wikidata driver against hand-written fixtures in ``wbsearchentities``' documented shape.

Fixture shape: https://www.wikidata.org/w/api.php?action=help&modules=wbsearchentities
(``search[]`` with ``id``, ``url``, ``concepturi``, ``label``, ``description``, ``display``,
``match``; ``search-continue``, ``success``), https://www.mediawiki.org/wiki/API:Errors_and_warnings
(``error`` object with HTTP 200), and SearXNG ``searx/engines/wikidata.py``.
REQ-TEST-002, REQ-ENG-005/006/009/010/011/012, REQ-RES-002, REQ-CMP-001.
"""

from __future__ import annotations

from typing import Any

import pytest

from rypsok.contract.vocabulary import Category, FailureClass
from rypsok.engines import wikidata
from rypsok.engines.base import EngineResponse
from tests.engines.helpers_a import (
    DOCS,
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

ENGINE = "wikidata"


def query(**changes: Any) -> Any:
    """A query on Wikidata's endpoint."""
    changes.setdefault("text", "python")
    return make_query(wikidata.ADMISSION.endpoint, **changes)


# --- admission record ---------------------------------------------------------------------


def test_req_eng_010_admission_record() -> None:
    """REQ-ENG-010, REQ-CMP-001: the record carries the provider's obligations."""
    record = wikidata.ADMISSION
    assert record.engine_id == ENGINE
    assert record.categories == (Category.GENERAL,)
    assert record.endpoint == "https://www.wikidata.org/w/api.php"
    assert record.attribution_required is False
    assert "CC0" in record.license
    assert record.cacheable is True
    assert "contact" in record.user_agent_note
    assert record.languages is None
    assert record.time_ranges == frozenset()
    assert record.max_query_chars == 250
    assert record.max_in_flight == 1
    assert record.max_results == 50
    assert record.key == "none"


def test_req_cmp_001_admission_page_exists() -> None:
    """REQ-CMP-001: the admission record page exists and names the endpoint and the terms."""
    page = (DOCS / "wikidata.md").read_text(encoding="utf-8")
    assert "https://www.wikidata.org/w/api.php" in page
    assert "CC0" in page
    assert "User-Agent" in page


# --- request ------------------------------------------------------------------------------


def test_req_eng_011_request_parameters() -> None:
    """REQ-ENG-011: one GET on Wikidata asking for LIM-S3 items in the asked language."""
    request = wikidata.build_request(query())
    assert request.method == "GET"
    assert request.body is None
    assert origin_of(request.url) == ("https", "www.wikidata.org")
    assert request.url.startswith("https://www.wikidata.org/w/api.php?")
    assert params_of(request) == {
        "action": "wbsearchentities",
        "search": "python",
        "language": "en",
        "uselang": "en",
        "type": "item",
        "limit": "10",
        "format": "json",
        "formatversion": "2",
    }
    assert ("Accept", "application/json") in request.headers
    assert request.credential_headers == frozenset()


def test_req_eng_011_count_capped_at_provider_maximum() -> None:
    """REQ-ENG-011: wbsearchentities returns at most 50 entities."""
    assert params_of(wikidata.build_request(query(count=7)))["limit"] == "7"
    assert params_of(wikidata.build_request(query(count=500)))["limit"] == "50"


@pytest.mark.parametrize(
    ("language", "sent"), [("de", "de"), ("pt-BR", "pt-br"), ("zh-Hans", "zh-hans")]
)
def test_req_eng_010_language_is_a_parameter(language: str, sent: str) -> None:
    """REQ-ENG-010: the language is a parameter in MediaWiki's lower-case form; same origin."""
    request = wikidata.build_request(query(language=language))
    assert params_of(request)["language"] == sent
    assert params_of(request)["uselang"] == sent
    assert origin_of(request.url) == ("https", "www.wikidata.org")


def test_build_request_is_pure() -> None:
    """REQ-ENG-001: the same query builds the same request."""
    assert wikidata.build_request(query()) == wikidata.build_request(query())


# --- success and empty --------------------------------------------------------------------


def test_req_test_002_success() -> None:
    """REQ-TEST-002, REQ-ENG-005: entities in order, titled by label, linked to their page."""
    results = wikidata.parse(respond(fixture(ENGINE, "success.json")))
    assert [(r.title, r.url) for r in results] == [
        ("Python", "https://www.wikidata.org/wiki/Q28865"),
        ("Python", "https://www.wikidata.org/wiki/Q271218"),
        ("Monty Python", "https://www.wikidata.org/wiki/Q16402"),
        # No label in the asked language: the display label (language fallback).
        ("Pythonidae", "https://www.wikidata.org/wiki/Q130631500"),
        # No label and no page URL: the entity id and its concept URI.
        ("Q110010343", "http://www.wikidata.org/entity/Q110010343"),
    ]
    assert [r.snippet for r in results][:2] == [
        "general-purpose programming language",
        "genus of reptiles",
    ]
    assert results[3].snippet == ""
    assert all(r.date is None for r in results)
    assert_ranks(results)


def test_req_eng_012_snippets_stay_raw() -> None:
    """REQ-ENG-012: descriptions are passed on as given, entities and markup included."""
    results = wikidata.parse(respond(fixture(ENGINE, "success.json")))
    assert results[2].snippet == "British comedy group &amp; <i>Flying Circus</i> creators"


def test_req_test_002_empty() -> None:
    """REQ-TEST-002: an answer with no entities is an empty list, not a failure."""
    assert wikidata.parse(respond(fixture(ENGINE, "empty.json"))) == []


def test_malformed_items_are_skipped() -> None:
    """Items without a usable title or web URL are skipped; the rest keep ranks 1..n."""
    results = wikidata.parse(respond(fixture(ENGINE, "malformed_items.json")))
    assert [(r.title, r.url, r.snippet, r.rank) for r in results] == [
        ("Python", "https://www.wikidata.org/wiki/Q28865", "", 1)
    ]


# --- failures -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("response", "expected"),
    [pytest.param(r, c, id=i) for i, r, c in common_failures(ENGINE)],
)
def test_req_eng_006_error_classes(response: EngineResponse, expected: FailureClass) -> None:
    """REQ-ENG-006, REQ-ENG-009, REQ-RES-002: each failure has one class and no provider text."""
    expect_failure(wikidata.parse, response, expected)


@pytest.mark.parametrize(
    ("headers", "expected"),
    [pytest.param(h, e, id=i) for i, h, e in retry_after_cases()],
)
def test_req_res_002_http_429_retry_after(
    headers: dict[str, str], expected: tuple[float, float] | None
) -> None:
    """REQ-RES-002: HTTP 429 is rate_limited; Retry-After in seconds or as a date, within LIM-B4."""
    response = respond(b"Too many requests", 429, TEXT, headers)
    failure = expect_failure(wikidata.parse, response, FailureClass.RATE_LIMITED)
    assert_retry_after(failure, expected)


def test_req_res_002_in_body_ratelimited() -> None:
    """REQ-RES-002: MediaWiki's ``ratelimited`` error, sent with HTTP 200, is rate_limited."""
    response = respond(fixture(ENGINE, "error_ratelimited.json"))
    expect_failure(wikidata.parse, response, FailureClass.RATE_LIMITED)


def test_req_res_002_in_body_maxlag_with_retry_after() -> None:
    """REQ-RES-002: MediaWiki's ``maxlag`` error (HTTP 200, Retry-After) is rate_limited."""
    response = respond(fixture(ENGINE, "error_maxlag.json"), headers={"Retry-After": "6"})
    failure = expect_failure(wikidata.parse, response, FailureClass.RATE_LIMITED)
    assert failure.retry_after_s == 6.0


def test_req_eng_006_other_api_errors_are_request_failures() -> None:
    """REQ-ENG-006: an unknown language or any other error code is a request_failure."""
    response = respond(fixture(ENGINE, "error_badvalue.json"))
    expect_failure(wikidata.parse, response, FailureClass.REQUEST_FAILURE)


def test_req_eng_009_user_agent_block_is_blocked() -> None:
    """REQ-ENG-009: Wikimedia's 403 for a refused User-Agent is blocked (no key exists)."""
    response = respond(fixture(ENGINE, "blocked_user_agent.txt"), 403, TEXT)
    expect_failure(wikidata.parse, response, FailureClass.BLOCKED)
