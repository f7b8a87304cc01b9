"""The SearXNG engine type against hand-written fixtures in the JSON API's shape.

Fixture shape: searxng/searxng ``docs/dev/search_api.rst`` (POST form ``q``, ``format``,
``categories``, ``engines``, ``language``, ``pageno``, ``time_range``, ``safesearch``; 403
when ``search.formats`` lacks json), ``searx/webutils.py`` ``get_json_response`` (``query``,
``results[]`` with ``url``, ``title``, ``content``, ``publishedDate``, ``engines``;
``answers``, ``corrections``, ``infoboxes``, ``suggestions``, ``unresponsive_engines`` as
``[name, message]`` pairs), ``searx/query.py`` (the query syntax) and ``searx/webadapter.py``.
REQ-TEST-002, REQ-ENG-005/006/009/010/011/012, REQ-RES-002, REQ-CMP-001, REQ-TEST-015;
spec README section 3 (SearXNG engine type).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from rypsok.config.secrets import Secret
from rypsok.contract.vocabulary import Category, FailureClass, SafeSearch, TimeRange
from rypsok.engines import searxng
from rypsok.engines.base import EngineQuery, EngineResponse
from tests.engines.helpers_a import (
    DOCS,
    HTML,
    TEXT,
    assert_ranks,
    common_failures,
    expect_failure,
    fixture,
    make_query,
    origin_of,
    respond,
)
from tests.engines.helpers_d import BROWSER_HEADERS, expect_refusal, form_of, header_names

ENGINE = "searxng"
INSTANCE = "https://search.example.org/search"
TOKEN = "searxng-proxy-handwritten-token-0000"


def query(**changes: Any) -> Any:
    """A query on an operator's instance."""
    changes.setdefault("text", "rust async runtime")
    endpoint = changes.pop("endpoint", INSTANCE)
    return make_query(endpoint, **changes)


def refused(text: str) -> None:
    """``text`` is refused before contact: request_failure, no request built."""
    expect_refusal(searxng.build_request, query(text=text), FailureClass.REQUEST_FAILURE)


# --- admission record ---------------------------------------------------------------------


def test_req_eng_010_admission_record() -> None:
    """REQ-ENG-010, REQ-CMP-001: an operator-run engine, off by default, in every category."""
    record = searxng.ADMISSION
    assert record.engine_id == ENGINE
    assert record.categories == (
        Category.GENERAL,
        Category.NEWS,
        Category.SCIENCE,
        Category.CODE,
    )
    assert record.endpoint == "https://searxng.invalid/search"
    assert record.key == "optional"
    assert record.enabled_by_default is False
    assert record.cacheable is False
    assert record.languages is None
    assert record.time_ranges == frozenset(TimeRange)
    assert record.max_results == 10


def test_req_cmp_001_admission_page_exists() -> None:
    """REQ-CMP-001: the admission page names the JSON switch and the unresponsive engines."""
    page = (DOCS / "searxng.md").read_text(encoding="utf-8")
    assert "search.formats" in page
    assert "unresponsive_engines" in page
    assert "https://searxng.invalid/search" in page


# --- request ------------------------------------------------------------------------------


def test_req_eng_011_request_is_one_post_of_the_form() -> None:
    """One POST of the JSON search form to the instance; no cookie, no preferences."""
    request = searxng.build_request(query())
    assert request.method == "POST"
    assert request.url == INSTANCE
    assert origin_of(request.url) == ("https", "search.example.org")
    assert form_of(request) == {
        "q": "rust async runtime",
        "format": "json",
        "pageno": "1",
        "categories": "general",
        "language": "en",
        "safesearch": "1",
    }
    assert header_names(request) == {"accept", "content-type"}
    assert not header_names(request) & BROWSER_HEADERS
    assert dict(request.headers)["Accept"] == "application/json"
    assert request.credential_headers == frozenset()


def test_req_test_015_credential_is_a_listed_bearer_header() -> None:
    """REQ-TEST-015, REQ-SEC-017: the proxy credential goes in Authorization, listed."""
    request = searxng.build_request(query(credential=Secret(TOKEN)))
    assert ("Authorization", f"Bearer {TOKEN}") in request.headers
    assert request.credential_headers == frozenset({"Authorization"})
    assert TOKEN not in request.url
    assert TOKEN not in repr(request)


@pytest.mark.parametrize(
    ("endpoint", "url"),
    [
        ("https://search.example.org/search", "https://search.example.org/search"),
        ("https://search.example.org", "https://search.example.org/search"),
        ("https://search.example.org/", "https://search.example.org/search"),
        ("https://example.org/searxng/", "https://example.org/searxng/search"),
        ("https://example.org/searxng/search#x", "https://example.org/searxng/search"),
        ("http://10.0.0.5:8888/search", "http://10.0.0.5:8888/search"),
    ],
)
def test_any_configured_endpoint(endpoint: str, url: str) -> None:
    """The driver works with any configured instance: its origin, its path (default /search)."""
    request = searxng.build_request(query(endpoint=endpoint))
    assert request.url == url
    assert origin_of(request.url) == origin_of(endpoint)


def test_placeholder_endpoint_is_refused() -> None:
    """The record's placeholder endpoint means "not configured": nothing is sent."""
    expect_refusal(
        searxng.build_request,
        query(endpoint=searxng.ADMISSION.endpoint),
        FailureClass.REQUEST_FAILURE,
    )


def test_operator_engine_restriction_replaces_the_category() -> None:
    """The endpoint's ``engines`` restricts the instance's engines; no category is added.

    SearXNG adds the engines of any category sent to an explicit engine list, so sending
    ``categories`` too would widen the operator's restriction.
    """
    endpoint = "https://search.example.org/search?engines=arxiv,Crossref,%20google%20scholar"
    request = searxng.build_request(query(endpoint=endpoint))
    form = form_of(request)
    assert form["engines"] == "arxiv,crossref,google scholar"
    assert "categories" not in form
    assert request.url == "https://search.example.org/search"  # the endpoint's query is not sent


@pytest.mark.parametrize(
    "endpoint",
    [
        "https://search.example.org/search?engines=",
        "https://search.example.org/search?engines=,,",
        "https://search.example.org/search?engines=arxiv,bad%3Cname%3E",
        "https://search.example.org/search?engines=" + ",".join(f"e{i}" for i in range(65)),
    ],
)
def test_unusable_engine_restriction_is_refused(endpoint: str) -> None:
    """An engine restriction that names no usable engine is never dropped silently."""
    expect_refusal(searxng.build_request, query(endpoint=endpoint), FailureClass.REQUEST_FAILURE)


def test_other_endpoint_parameters_are_not_sent() -> None:
    """Only ``engines`` is read from the endpoint; the driver sets every other field itself."""
    endpoint = "https://search.example.org/search?format=html&q=other&categories=images"
    form = form_of(searxng.build_request(query(endpoint=endpoint)))
    assert (form["format"], form["q"], form["categories"]) == (
        "json",
        "rust async runtime",
        "general",
    )


@pytest.mark.parametrize("time_range", list(TimeRange))
def test_req_eng_010_time_range_is_searxngs_own_value(time_range: TimeRange) -> None:
    """REQ-ENG-010: day, week, month and year are SearXNG's own time_range values."""
    form = form_of(searxng.build_request(query(time_range=time_range)))
    assert form["time_range"] == time_range.value


@pytest.mark.parametrize(
    ("safe_search", "value"),
    [(SafeSearch.OFF, "0"), (SafeSearch.MODERATE, "1"), (SafeSearch.STRICT, "2")],
)
def test_safe_search_levels(safe_search: SafeSearch, value: str) -> None:
    """The operator's safe-search level is SearXNG's 0/1/2."""
    assert form_of(searxng.build_request(query(safe_search=safe_search)))["safesearch"] == value


@pytest.mark.parametrize(
    ("language", "value"),
    [
        ("en", "en"),
        ("de-AT", "de-AT"),
        ("pt-br", "pt-BR"),
        ("zh-Hant", "zh"),
        ("haw", "haw"),
        ("x", "all"),
        ("", "all"),
    ],
)
def test_req_eng_010_language(language: str, value: str) -> None:
    """REQ-ENG-010: the language as a tag SearXNG accepts, else ``all``."""
    assert form_of(searxng.build_request(query(language=language)))["language"] == value


@dataclass(frozen=True)
class _CategoryQuery:
    """A stand-in for a query that carries the search's category (not yet in EngineQuery)."""

    query: EngineQuery
    category: Category

    def __getattr__(self, name: str) -> Any:
        return getattr(self.query, name)


@pytest.mark.parametrize(
    ("category", "value"),
    [
        (Category.GENERAL, "general"),
        (Category.NEWS, "news"),
        (Category.SCIENCE, "science"),
        (Category.CODE, "it"),
    ],
)
def test_category_is_used_once_the_query_carries_it(category: Category, value: str) -> None:
    """Until EngineQuery carries the category the form says ``general``; then it maps."""
    stand_in: Any = _CategoryQuery(query(), category)
    assert form_of(searxng.build_request(stand_in))["categories"] == value


@pytest.mark.parametrize(
    "text",
    [
        "!wp paris",
        "paris !wp",
        "!images cats",
        "!!g paris",
        "!! paris",
        "paris !",
        ":fr paris",
        "paris :de",
        "?wp paris",
        "<3 paris",
        "<850 paris",
        "paris\u2003!ddg",  # an em space separates words for SearXNG too
        "paris\n:en",
    ],
)
def test_searxng_syntax_is_refused_before_contact(text: str) -> None:
    """Engines, categories, languages, bangs and timeouts chosen in the text are refused.

    Proves THR-42.
    """
    assert searxng.uses_searxng_syntax(text)
    refused(text)


@pytest.mark.parametrize(
    "text",
    [
        "rust: the book",
        "what is 2 < 3",
        "a <b> tag",
        "wow! amazing",
        "c++ vs c#",
        "ratio 1:2",
        "why? because",
        "\u200b!wp paris",  # SearXNG reads the first character: a zero-width space is no bang
    ],
)
def test_ordinary_text_is_not_refused(text: str) -> None:
    """Words that only contain those characters, or are lone ones, are ordinary text."""
    assert not searxng.uses_searxng_syntax(text)
    assert form_of(searxng.build_request(query(text=text)))["q"] == text


def test_blank_query_is_refused() -> None:
    """Whitespace only: request_failure before contact."""
    refused("   ")


def test_build_request_is_pure() -> None:
    """REQ-ENG-001: the same query builds the same request."""
    assert searxng.build_request(query()) == searxng.build_request(query())


# --- success and empty --------------------------------------------------------------------


def test_req_test_002_success() -> None:
    """REQ-TEST-002, REQ-ENG-005: results in the instance's order; infoboxes are not results."""
    results = searxng.parse(respond(fixture(ENGINE, "success.json")))
    assert [(r.title, r.url, r.date) for r in results] == [
        ("Tokio - An asynchronous Rust runtime", "https://tokio.rs/", None),
        (
            "Asynchronous Programming in Rust",
            "https://rust-lang.github.io/async-book/",
            "2024-05-01",
        ),
        # 2026-11-30T23:30-05:00 is 2026-12-01 in UTC.
        (
            "Comparing async runtimes in 2026",
            "https://news.example.com/2026/11/30/async-runtimes",
            "2026-12-01",
        ),
    ]
    assert_ranks(results)
    assert not isinstance(results, searxng.PartialResults)


def test_req_eng_012_content_stays_raw() -> None:
    """REQ-ENG-012: content keeps its entities and markup."""
    (first, *_) = searxng.parse(respond(fixture(ENGINE, "success.json")))
    assert first.snippet.endswith("Rust programming language &amp; <b>more</b>.")


def test_req_test_002_empty() -> None:
    """REQ-TEST-002: no results and no unresponsive engine is an empty list."""
    assert searxng.parse(respond(fixture(ENGINE, "empty.json"))) == []


def test_results_are_cut_to_lim_s3() -> None:
    """There is no count to ask for: the first page is cut to the record's 10 results."""
    items = [{"url": f"https://example.org/{i}", "title": f"R{i}"} for i in range(30)]
    results = searxng.parse(respond({"results": items, "unresponsive_engines": []}))
    assert [r.url for r in results] == [f"https://example.org/{i}" for i in range(10)]
    assert_ranks(results)


def test_malformed_items_are_skipped() -> None:
    """Results without a title or an absolute http(s) URL are skipped; odd fields dropped."""
    results = searxng.parse(respond(fixture(ENGINE, "malformed_items.json")))
    assert [(r.title, r.url, r.snippet, r.date, r.rank) for r in results] == [
        ("Kept result", "https://example.org/kept", "", None, 1),
        ("Odd date", "https://example.org/date-too-long", "", None, 2),
    ]


# --- unresponsive engines -----------------------------------------------------------------


def test_unresponsive_engines_with_results_are_partial() -> None:
    """Results still come back; the list says how many of the instance's engines failed."""
    results = searxng.parse(respond(fixture(ENGINE, "unresponsive.json")))
    assert isinstance(results, searxng.PartialResults)
    assert results.unresponsive_sources == 2
    assert [r.url for r in results] == ["https://tokio.rs/"]
    # Names and messages of the failed engines are provider text: not kept anywhere.
    assert not hasattr(results, "__dict__")
    assert "SEARXNG-PROVIDER-TEXT" not in repr(results)


def test_unresponsive_engines_without_results_fail() -> None:
    """Every answering engine empty while others failed: a failure, never a silent empty."""
    response = respond(fixture(ENGINE, "unresponsive_empty.json"))
    expect_failure(searxng.parse, response, FailureClass.REQUEST_FAILURE)


# --- failures -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("response", "expected"),
    [pytest.param(r, c, id=i) for i, r, c in common_failures(ENGINE)],
)
def test_req_eng_006_error_classes(response: EngineResponse, expected: FailureClass) -> None:
    """REQ-ENG-006, REQ-ENG-009, REQ-RES-002: each failure has one class and no provider text."""
    expect_failure(searxng.parse, response, expected)


def test_req_eng_006_json_disabled_is_auth_failure() -> None:
    """REQ-ENG-006: 403 (``search.formats`` lacks json) is an auth_failure, HTML or not."""
    response = respond(fixture(ENGINE, "forbidden.html"), 403, HTML)
    expect_failure(searxng.parse, response, FailureClass.AUTH_FAILURE)


def test_req_res_002_limiter_is_rate_limited() -> None:
    """REQ-RES-002: the instance's limiter answers 429."""
    response = respond(fixture(ENGINE, "too_many_requests.txt"), 429, TEXT)
    expect_failure(searxng.parse, response, FailureClass.RATE_LIMITED)


def test_req_eng_006_bad_parameter_is_request_failure() -> None:
    """REQ-ENG-006: 400 (a parameter the instance refuses) is a request_failure."""
    response = respond(fixture(ENGINE, "error_page.html"), 400, HTML)
    expect_failure(searxng.parse, response, FailureClass.REQUEST_FAILURE)


@pytest.mark.parametrize(
    "location", ["https://search.example.org/search/", "https://elsewhere.example.net/"]
)
def test_req_eng_006_redirect_is_not_followed(location: str) -> None:
    """A 3xx is never followed (the pipeline follows none): request_failure."""
    response = respond(b"", 302, HTML, {"Location": location})
    expect_failure(searxng.parse, response, FailureClass.REQUEST_FAILURE)
