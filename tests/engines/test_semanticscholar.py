"""The Semantic Scholar driver against hand-written fixtures in the Graph API's documented shape.

Fixture shape: https://api.semanticscholar.org/api-docs/graph (``/paper/search``: ``total``,
``offset``, ``next``, ``data[]`` with ``paperId``, ``url``, ``title``, ``abstract``, ``year``,
``publicationDate``, ``externalIds``; 400 ``{"error": ...}``; 429), the API overview and
tutorial (``x-api-key``, 401/403) and allenai/s2-folks ``API_RELEASE_NOTES.md``.
REQ-TEST-002, REQ-ENG-005/006/009/010/011/012, REQ-RES-002, REQ-CMP-001, REQ-TEST-015.
"""

from __future__ import annotations

from typing import Any

import pytest

from rypsok.config.secrets import Secret
from rypsok.contract.vocabulary import Category, FailureClass, TimeRange
from rypsok.engines import semanticscholar
from rypsok.engines.base import EngineResponse
from tests.engines.helpers_a import (
    DOCS,
    NOW,
    assert_ranks,
    common_failures,
    expect_failure,
    fixture,
    make_query,
    origin_of,
    params_of,
    respond,
)
from tests.engines.helpers_d import expect_refusal

ENGINE = "semanticscholar"
KEY = "s2-handwritten-fixture-key-0000"


def query(**changes: Any) -> Any:
    """A query on the paper relevance search."""
    changes.setdefault("text", "literature graph")
    return make_query(semanticscholar.ADMISSION.endpoint, **changes)


# --- admission record ---------------------------------------------------------------------


def test_req_eng_010_admission_record() -> None:
    """REQ-ENG-010, REQ-CMP-001: the record carries the provider's obligations."""
    record = semanticscholar.ADMISSION
    assert record.engine_id == ENGINE
    assert record.categories == (Category.SCIENCE,)
    assert record.endpoint == "https://api.semanticscholar.org/graph/v1/paper/search"
    assert (record.rate.requests, record.rate.per_seconds) == (1, 1.0)
    assert record.max_in_flight == 1
    # Keyless is best-effort: the key is optional and the engine is off by default.
    assert record.key == "optional"
    assert record.enabled_by_default is False
    assert record.attribution_required is True
    assert record.languages == frozenset()
    assert record.time_ranges == frozenset(TimeRange)


def test_req_cmp_001_admission_page_exists() -> None:
    """REQ-CMP-001: the admission record page names the endpoint, the key and the decision."""
    page = (DOCS / "semanticscholar.md").read_text(encoding="utf-8")
    assert "https://api.semanticscholar.org/graph/v1/paper/search" in page
    assert "x-api-key" in page
    assert "optional" in page


# --- request ------------------------------------------------------------------------------


def test_req_eng_011_request_parameters() -> None:
    """REQ-ENG-011: one keyless GET for LIM-S3 papers with the fields rypsok reads."""
    request = semanticscholar.build_request(query())
    assert request.method == "GET"
    assert request.body is None
    assert origin_of(request.url) == ("https", "api.semanticscholar.org")
    assert request.url.startswith("https://api.semanticscholar.org/graph/v1/paper/search?")
    params = params_of(request)
    assert params["query"] == "literature graph"
    assert params["limit"] == "10"
    assert params["offset"] == "0"
    assert set(params["fields"].split(",")) >= {"title", "url", "abstract", "publicationDate"}
    assert "tldr" not in params["fields"]
    assert "publicationDateOrYear" not in params
    assert dict(request.headers) == {"Accept": "application/json"}
    assert request.credential_headers == frozenset()


def test_req_eng_011_count_capped_at_provider_maximum() -> None:
    """REQ-ENG-011: limit follows the count, capped at the API's 100."""
    assert params_of(semanticscholar.build_request(query(count=3)))["limit"] == "3"
    assert params_of(semanticscholar.build_request(query(count=1000)))["limit"] == "100"


def test_req_test_015_key_is_a_listed_credential_header() -> None:
    """REQ-TEST-015, REQ-SEC-017: the key travels in x-api-key, which is listed."""
    request = semanticscholar.build_request(query(credential=Secret(KEY)))
    assert (semanticscholar.KEY_HEADER, KEY) in request.headers
    assert request.credential_headers == frozenset({"x-api-key"})
    assert KEY not in request.url
    assert KEY not in repr(request)
    assert origin_of(request.url) == ("https", "api.semanticscholar.org")


@pytest.mark.parametrize(
    ("time_range", "window"),
    [
        (TimeRange.DAY, "2026-11-30:2026-12-01"),
        (TimeRange.WEEK, "2026-11-24:2026-12-01"),
        (TimeRange.MONTH, "2026-10-31:2026-12-01"),
        (TimeRange.YEAR, "2025-11-30:2026-12-01"),
    ],
)
def test_req_eng_010_time_range_is_a_publication_date_window(
    time_range: TimeRange, window: str
) -> None:
    """REQ-ENG-010: a time range is ``publicationDateOrYear=<start>:<end>`` from query.now."""
    params = params_of(semanticscholar.build_request(query(time_range=time_range, now=NOW)))
    assert params["publicationDateOrYear"] == window


def test_hyphens_become_spaces() -> None:
    """The search has no syntax and a hyphenated term matches nothing: hyphens become spaces."""
    request = semanticscholar.build_request(query(text="  state-of-the-art   parsing "))
    assert params_of(request)["query"] == "state of the art parsing"


def test_query_of_hyphens_only_is_refused() -> None:
    """A query with no word left is a request_failure before contact."""
    expect_refusal(semanticscholar.build_request, query(text="- --"), FailureClass.REQUEST_FAILURE)


def test_build_request_is_pure() -> None:
    """REQ-ENG-001: the same query builds the same request."""
    assert semanticscholar.build_request(query()) == semanticscholar.build_request(query())


# --- success and empty --------------------------------------------------------------------


def test_req_test_002_success() -> None:
    """REQ-TEST-002, REQ-ENG-005: papers in order, linking back to Semantic Scholar."""
    results = semanticscholar.parse(respond(fixture(ENGINE, "success.json")))
    assert [(r.title, r.url, r.date) for r in results] == [
        (
            "Construction of the Literature Graph in Semantic Scholar",
            "https://www.semanticscholar.org/paper/649def34f8be52c8b66281af98ae884c09aef38b",
            "2018-06-01",
        ),
        # url is null: the page is built from the paperId; a year alone is no date.
        (
            "A literature graph for open research",
            "https://www.semanticscholar.org/paper/0f40b1f08821e22e859c6050916cec3667778613",
            None,
        ),
        (
            "Graphes de littérature scientifique",
            "https://www.semanticscholar.org/paper/a1b2c3d4e5f60718293a4b5c6d7e8f9012345678",
            None,
        ),
    ]
    assert [r.snippet for r in results[1:]] == ["", ""]
    assert_ranks(results)


def test_req_eng_012_abstract_stays_raw() -> None:
    """REQ-ENG-012: the abstract keeps its entities and markup."""
    (first, *_) = semanticscholar.parse(respond(fixture(ENGINE, "success.json")))
    assert "heterogeneous graph &amp; <b>facilitate</b> algorithmic" in first.snippet


@pytest.mark.parametrize("name", ["empty.json", "empty_without_data.json"])
def test_req_test_002_empty(name: str) -> None:
    """REQ-TEST-002: ``total: 0`` (with or without ``data``) is an empty list."""
    assert semanticscholar.parse(respond(fixture(ENGINE, name))) == []


def test_missing_data_with_results_is_parse_failure() -> None:
    """``data`` left out while ``total`` says there are papers: parse_failure."""
    response = respond(fixture(ENGINE, "wrong_shape_missing_data.json"))
    expect_failure(semanticscholar.parse, response, FailureClass.PARSE_FAILURE)


def test_malformed_items_are_skipped() -> None:
    """Papers without a title or a usable URL are skipped; odd fields are dropped."""
    results = semanticscholar.parse(respond(fixture(ENGINE, "malformed_items.json")))
    assert [(r.title, r.url, r.snippet, r.date, r.rank) for r in results] == [
        (
            "Kept paper",
            "https://www.semanticscholar.org/paper/1111111111111111111111111111111111111111",
            "",
            None,
            1,
        )
    ]


def test_long_abstract_is_clipped_raw() -> None:
    """A long abstract is cut to the raw bound, never inside an entity."""
    abstract = "a" * 1995 + " &amp; more"
    paper = {"paperId": "1" * 40, "title": "T", "abstract": abstract}
    (result,) = semanticscholar.parse(respond({"total": 1, "offset": 0, "data": [paper]}))
    assert result.snippet == "a" * 1995 + " "


# --- failures -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("response", "expected"),
    [pytest.param(r, c, id=i) for i, r, c in common_failures(ENGINE)],
)
def test_req_eng_006_error_classes(response: EngineResponse, expected: FailureClass) -> None:
    """REQ-ENG-006, REQ-ENG-009, REQ-RES-002: each failure has one class and no provider text."""
    expect_failure(semanticscholar.parse, response, expected)


def test_req_res_002_too_many_requests() -> None:
    """REQ-RES-002: the shared pool's 429 is rate_limited, with its Retry-After when given."""
    response = respond(fixture(ENGINE, "too_many_requests.json"), 429, headers={"Retry-After": "5"})
    failure = expect_failure(semanticscholar.parse, response, FailureClass.RATE_LIMITED)
    assert failure.retry_after_s == 5.0


def test_req_eng_006_bad_key_is_auth_failure() -> None:
    """REQ-ENG-006: a JSON 403 (a key Semantic Scholar refuses) is an auth_failure."""
    response = respond(fixture(ENGINE, "forbidden.json"), 403)
    expect_failure(semanticscholar.parse, response, FailureClass.AUTH_FAILURE)


def test_req_eng_006_bad_request_is_request_failure() -> None:
    """REQ-ENG-006: 400 ``{"error": ...}`` is a request_failure; the text is not kept."""
    response = respond(fixture(ENGINE, "bad_request.json"), 400)
    expect_failure(semanticscholar.parse, response, FailureClass.REQUEST_FAILURE)


def test_req_eng_006_gateway_timeout_is_request_failure() -> None:
    """REQ-ENG-006: the gateway's 504 page is a request_failure (the pipeline owns timeout)."""
    response = respond(fixture(ENGINE, "error_page.html"), 504, "text/html")
    expect_failure(semanticscholar.parse, response, FailureClass.REQUEST_FAILURE)
