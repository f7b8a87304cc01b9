"""The OpenAlex driver against hand-written fixtures in the works API's documented shape.

Fixture shape: https://docs.openalex.org/api-entities/works (``meta``, ``results[]`` with
``id``, ``doi``, ``display_name``, ``publication_date``, ``abstract_inverted_index``,
``primary_location.landing_page_url``), https://developers.openalex.org/api-reference/errors
(400 ``{error, message}``, 403 "rate limit exceeded; slow down", 429 daily limit),
https://developers.openalex.org/api-reference/authentication (``api_key``, the
``X-RateLimit-*-USD`` headers) and SearXNG ``searx/engines/openalex.py``.
REQ-TEST-002, REQ-ENG-005/006/009/010/011/012, REQ-RES-002, REQ-CMP-001.
"""

from __future__ import annotations

from typing import Any

import pytest

from rypsok.config.secrets import Secret
from rypsok.contract.vocabulary import Category, FailureClass, TimeRange
from rypsok.engines import openalex
from rypsok.engines.base import EngineResponse
from tests.engines.helpers_a import (
    DOCS,
    HTML,
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

ENGINE = "openalex"
KEY = "oa-handwritten-fixture-key-0000"


def query(**changes: Any) -> Any:
    """A query on OpenAlex's works endpoint, with a configured key."""
    changes.setdefault("text", "open access citation")
    changes.setdefault("credential", Secret(KEY))
    endpoint = changes.pop("endpoint", openalex.ADMISSION.endpoint)
    return make_query(endpoint, **changes)


# --- admission record ---------------------------------------------------------------------


def test_req_eng_010_admission_record() -> None:
    """REQ-ENG-010, REQ-CMP-001: the record carries the provider's obligations."""
    record = openalex.ADMISSION
    assert record.engine_id == ENGINE
    assert record.categories == (Category.SCIENCE,)
    assert record.endpoint == "https://api.openalex.org/works"
    # The free key's daily budget: about 1,000 searches a day.
    assert (record.rate.requests, record.rate.per_seconds) == (1000, 86_400.0)
    assert record.key == "required"
    assert record.enabled_by_default is True
    assert record.languages is None
    assert record.time_ranges == frozenset(TimeRange)
    assert record.cacheable is True
    assert record.attribution_required is False


def test_req_cmp_001_admission_page_exists() -> None:
    """REQ-CMP-001: the admission record page names the endpoint, the key and the budget."""
    page = (DOCS / "openalex.md").read_text(encoding="utf-8")
    assert "https://api.openalex.org/works" in page
    assert "api_key" in page
    assert "2026-02-13" in page


# --- request ------------------------------------------------------------------------------


def test_req_eng_011_request_parameters() -> None:
    """REQ-ENG-011: one GET of /works?search= for LIM-S3 works, with the key as api_key."""
    request = openalex.build_request(query())
    assert request.method == "GET"
    assert request.body is None
    assert origin_of(request.url) == ("https", "api.openalex.org")
    assert request.url.startswith("https://api.openalex.org/works?")
    params = params_of(request)
    assert params["search"] == "open access citation"
    assert params["per-page"] == "10"
    assert params["page"] == "1"
    assert params["filter"] == "language:en"
    assert params["api_key"] == KEY
    assert set(params["select"].split(",")) >= {
        "id",
        "doi",
        "display_name",
        "publication_date",
        "abstract_inverted_index",
        "primary_location",
    }
    assert dict(request.headers) == {"Accept": "application/json"}
    # The key is in the URL, which egress keeps on the endpoint's origin; no header carries it.
    assert request.credential_headers == frozenset()
    assert KEY not in repr(request)


def test_req_eng_011_count_capped_at_record_maximum() -> None:
    """REQ-ENG-011: per-page follows the count, capped at the record's maximum."""
    assert params_of(openalex.build_request(query(count=3)))["per-page"] == "3"
    assert params_of(openalex.build_request(query(count=1000)))["per-page"] == "50"


def test_req_eng_006_no_key_is_auth_failure_before_contact() -> None:
    """REQ-ENG-006: the key is required; without one nothing is built (auth_failure)."""
    expect_refusal(openalex.build_request, query(credential=None), FailureClass.AUTH_FAILURE)


@pytest.mark.parametrize(
    ("time_range", "since"),
    [
        (TimeRange.DAY, "2026-11-30"),
        (TimeRange.WEEK, "2026-11-24"),
        (TimeRange.MONTH, "2026-10-31"),
        (TimeRange.YEAR, "2025-11-30"),
    ],
)
def test_req_eng_010_time_range_is_a_publication_date_filter(
    time_range: TimeRange, since: str
) -> None:
    """REQ-ENG-010: a time range is ``from_publication_date:`` from query.now."""
    params = params_of(openalex.build_request(query(time_range=time_range, now=NOW)))
    assert params["filter"] == f"from_publication_date:{since},language:en"


@pytest.mark.parametrize(
    ("language", "expected"),
    [("de", "language:de"), ("pt-BR", "language:pt"), ("FR", "language:fr")],
)
def test_req_eng_010_language_filter(language: str, expected: str) -> None:
    """REQ-ENG-010: the primary subtag becomes OpenAlex's ISO 639-1 ``language`` filter."""
    assert params_of(openalex.build_request(query(language=language)))["filter"] == expected


def test_three_letter_language_is_not_filtered() -> None:
    """A code OpenAlex cannot filter by (not ISO 639-1) adds no filter."""
    assert "filter" not in params_of(openalex.build_request(query(language="haw")))


def test_query_text_is_kept_and_whitespace_collapsed() -> None:
    """The text goes to ``search`` as typed; runs of whitespace become one space."""
    params = params_of(openalex.build_request(query(text='  "open  access"\tAND citation ')))
    assert params["search"] == '"open access" AND citation'


def test_blank_query_is_refused() -> None:
    """Whitespace only: request_failure before contact."""
    expect_refusal(openalex.build_request, query(text=" \t "), FailureClass.REQUEST_FAILURE)


def test_endpoint_query_is_kept_and_origin_is_the_endpoints() -> None:
    """An operator endpoint keeps its origin, path and own parameters."""
    request = openalex.build_request(query(endpoint="https://oa.example.org/api/works?x=1"))
    assert request.url.startswith("https://oa.example.org/api/works?x=1&search=")


def test_build_request_is_pure() -> None:
    """REQ-ENG-001: the same query builds the same request."""
    assert openalex.build_request(query()) == openalex.build_request(query())


# --- success and empty --------------------------------------------------------------------


def test_req_test_002_success() -> None:
    """REQ-TEST-002, REQ-ENG-005: works in order; DOI link, else landing page, else work page."""
    results = openalex.parse(respond(fixture(ENGINE, "success.json")))
    assert [(r.title, r.url, r.date) for r in results] == [
        (
            "The state of OA: a large-scale analysis of the prevalence and impact of Open "
            "Access articles",
            "https://doi.org/10.7717/peerj.4375",
            "2018-02-13",
        ),
        (
            "Open access and citation impact",
            "https://example.org/articles/open-access-citation",
            "2021-06-30",
        ),
        # A year alone is no date.
        ("Métadonnées ouvertes: un état des lieux", "https://openalex.org/W4200000001", None),
    ]
    assert_ranks(results)
    assert results[1].snippet == ""
    assert results[2].snippet == ""


def test_req_eng_012_abstract_rebuilt_raw() -> None:
    """REQ-ENG-012: the abstract is rebuilt in word order; entities and markup stay raw."""
    (first, *_) = openalex.parse(respond(fixture(ENGINE, "success.json")))
    assert first.snippet == (
        "Despite growing interest in Open Access (OA) to scholarly literature, there is an "
        "unmet need for in &amp; <i>rigorous</i> data."
    )


def test_abstract_reconstruction_is_bounded() -> None:
    """A huge inverted index costs a bounded amount: late positions and long words are cut."""
    index: dict[str, list[int]] = {"x" * 10_000: [0]}
    index.update({f"w{i}": [i] for i in range(1, 50_000)})
    work = {"id": "https://openalex.org/W1", "display_name": "T", "abstract_inverted_index": index}
    (result,) = openalex.parse(respond({"results": [work]}))
    assert len(result.snippet) == 2000
    assert result.snippet.startswith("x" * 200 + " w1 w2 ")
    assert "x" * 201 not in result.snippet


def test_req_test_002_empty() -> None:
    """REQ-TEST-002: no works is an empty list, not a failure."""
    assert openalex.parse(respond(fixture(ENGINE, "empty.json"))) == []


def test_malformed_items_are_skipped() -> None:
    """Works without a title or an http(s) URL are skipped; odd fields are dropped."""
    results = openalex.parse(respond(fixture(ENGINE, "malformed_items.json")))
    assert [(r.title, r.url, r.snippet, r.date, r.rank) for r in results] == [
        ("Kept work", "https://doi.org/10.1234/kept", "kept", None, 1)
    ]


# --- failures -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("response", "expected"),
    [pytest.param(r, c, id=i) for i, r, c in common_failures(ENGINE)],
)
def test_req_eng_006_error_classes(response: EngineResponse, expected: FailureClass) -> None:
    """REQ-ENG-006, REQ-ENG-009, REQ-RES-002: each failure has one class and no provider text."""
    expect_failure(openalex.parse, response, expected)


def test_req_res_002_forbidden_is_rate_limited() -> None:
    """REQ-RES-002: OpenAlex documents a JSON 403 as "rate limit exceeded; slow down"."""
    response = respond(fixture(ENGINE, "forbidden.json"), 403, headers={"Retry-After": "2"})
    failure = expect_failure(openalex.parse, response, FailureClass.RATE_LIMITED)
    assert failure.retry_after_s == 2.0


def test_req_res_002_exhausted_budget_waits_lim_b4() -> None:
    """REQ-RES-002: 429 with the daily budget at zero and no Retry-After waits LIM-B4."""
    headers = {"X-RateLimit-Remaining-USD": "0", "X-RateLimit-Limit-USD": "1"}
    response = respond(fixture(ENGINE, "rate_limited.json"), 429, headers=headers)
    failure = expect_failure(openalex.parse, response, FailureClass.RATE_LIMITED)
    assert failure.retry_after_s == 3600.0


def test_req_res_002_429_without_budget_header_has_no_wait() -> None:
    """REQ-RES-002: a 429 that says nothing about the wait leaves it to the circuit."""
    response = respond(fixture(ENGINE, "rate_limited.json"), 429)
    failure = expect_failure(openalex.parse, response, FailureClass.RATE_LIMITED)
    assert failure.retry_after_s is None


def test_req_eng_006_unauthorized_is_auth_failure() -> None:
    """REQ-ENG-006: 401 (a key OpenAlex refuses) is an auth_failure."""
    response = respond(fixture(ENGINE, "unauthorized.json"), 401)
    expect_failure(openalex.parse, response, FailureClass.AUTH_FAILURE)


def test_req_eng_006_bad_request_is_request_failure() -> None:
    """REQ-ENG-006: 400 ``{error, message}`` is a request_failure; the message is not kept."""
    response = respond(fixture(ENGINE, "bad_request.json"), 400)
    expect_failure(openalex.parse, response, FailureClass.REQUEST_FAILURE)


def test_req_eng_009_html_403_is_blocked() -> None:
    """REQ-ENG-009: an HTML 403 (an anti-bot wall in front of the API) is blocked."""
    response = respond(fixture(ENGINE, "error_page.html"), 403, HTML)
    expect_failure(openalex.parse, response, FailureClass.BLOCKED)


def test_req_eng_006_redirect_is_request_failure() -> None:
    """REQ-ENG-006: a 3xx (a merged entity's 301) is not followed: request_failure."""
    response = respond(b"", 301, headers={"Location": "https://api.openalex.org/works/W2"})
    expect_failure(openalex.parse, response, FailureClass.REQUEST_FAILURE)
