"""The DuckDuckGo scraping driver against hand-written pages in the shape of its HTML endpoint.

Page shape: ``https://html.duckduckgo.com/html/`` as SearXNG ``searx/engines/duckduckgo.py``
reads it (``#links`` > ``div.result.web-result`` > ``h2 > a.result__a``,
``a.result__snippet``; ads ``result--ad`` with ``/y.js`` links; ``//duckduckgo.com/l/?uddg=``
redirect wrappers; the date span in ``result__extras__url``), the no-results block
(``result--no-result`` > ``div.no-results``) and the anomaly page served with 202
(``anomaly-modal``, ``form#challenge-form`` posting to ``anomaly.js``). The drifted page is a
results page in a layout the driver does not know.

REQ-TEST-018 (results in order, no-results page, drifted page, challenge page, blocking
statuses, parsing bounds, absence of browser headers, redirect rule; the refusal without the
``[scraping]`` switch is configuration validation, outside the driver: here only the
``SCRAPING`` mark it keys on), REQ-ENG-013/014/015, REQ-TEST-002, REQ-ENG-005/006/009/010/011/
012, REQ-RES-002, REQ-RANK-003, REQ-CMP-001.
"""

from __future__ import annotations

from typing import Any

import pytest

from rypsok.config.limits import limit
from rypsok.contract.vocabulary import Category, FailureClass, SafeSearch, TimeRange
from rypsok.engines import duckduckgo
from rypsok.engines.base import EngineFailure, EngineResponse
from tests.engines.helpers_a import (
    DOCS,
    JSON,
    assert_ranks,
    expect_failure,
    fixture,
    make_query,
    origin_of,
    respond,
)
from tests.engines.helpers_d import BROWSER_HEADERS, expect_refusal, form_of, header_names

ENGINE = "duckduckgo"
PAGE = "text/html; charset=UTF-8"


def query(**changes: Any) -> Any:
    """A query on DuckDuckGo's HTML endpoint."""
    changes.setdefault("text", "rust async runtime")
    return make_query(duckduckgo.ADMISSION.endpoint, **changes)


def page(name: str, status: int = 200, **headers: str) -> EngineResponse:
    """One fixture page as the pipeline hands it to ``parse``."""
    return respond(fixture(ENGINE, name), status, PAGE, headers)


def result_page(blocks: str, prefix: str = "", suffix: str = "") -> bytes:
    """A minimal results page around ``blocks``, optionally wrapped in more markup."""
    return (
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>q at DuckDuckGo</title></head>"
        f"<body>{prefix}<div id='links' class='results'>{blocks}</div>{suffix}</body></html>"
    ).encode()


def block(href: str, title: str = "Title", snippet: str = "Snippet.", classes: str = "") -> str:
    """One result block in the page's shape."""
    return (
        f"<div class='result results_links results_links_deep web-result {classes}'>"
        "<div class='links_main links_deep result__body'><h2 class='result__title'>"
        f"<a rel='nofollow' class='result__a' href='{href}'>{title}</a></h2>"
        f"<a class='result__snippet' href='{href}'>{snippet}</a></div></div>"
    )


# --- admission record and the scraping mark -----------------------------------------------


def test_req_eng_013_marked_as_scraping_and_opt_in() -> None:
    """REQ-ENG-013, REQ-TEST-018: a scraping driver, never in the zero-configuration set.

    The refusal without ``[scraping] enabled = true`` is configuration validation, keyed on
    this module-level mark.
    """
    assert duckduckgo.SCRAPING is True
    record = duckduckgo.ADMISSION
    assert record.enabled_by_default is False
    assert record.key == "none"


def test_req_eng_010_admission_record() -> None:
    """REQ-ENG-010, REQ-CMP-001: the record carries the page's obligations."""
    record = duckduckgo.ADMISSION
    assert record.engine_id == ENGINE
    assert record.categories == (Category.GENERAL,)
    assert record.endpoint == "https://html.duckduckgo.com/html/"
    assert record.max_in_flight == 1
    assert record.cacheable is False
    assert record.attribution_required is True
    assert record.time_ranges == frozenset(TimeRange)
    assert record.max_query_chars <= 499  # DuckDuckGo refuses 500 characters and more
    assert record.languages is not None
    assert {"en", "de", "fr", "ja", "zh", "nb"} <= record.languages
    assert record.max_results == 10


def test_req_cmp_001_admission_page_records_the_operators_risk() -> None:
    """REQ-CMP-001: the admission page records the missing permission and the operator's risk."""
    page_text = (DOCS / "duckduckgo.md").read_text(encoding="utf-8")
    assert "https://html.duckduckgo.com/html/" in page_text
    assert "operator's risk" in page_text
    assert "[scraping] enabled = true" in page_text


# --- request ------------------------------------------------------------------------------


def test_req_eng_011_request_is_the_pages_own_form() -> None:
    """One POST of the search form: q, b (first page), kl, kp; to the endpoint only."""
    request = duckduckgo.build_request(query())
    assert request.method == "POST"
    assert request.url == "https://html.duckduckgo.com/html/"
    assert origin_of(request.url) == ("https", "html.duckduckgo.com")
    assert form_of(request) == {"q": "rust async runtime", "b": "", "kl": "wt-wt", "kp": "-1"}
    assert request.credential_headers == frozenset()


def test_req_eng_014_no_browser_headers() -> None:
    """REQ-ENG-014, REQ-TEST-018: only Accept and Content-Type; the User-Agent is rypsok's.

    The egress layer adds the standard User-Agent (REQ-CMP-004); the driver sets none, and
    nothing meant to resemble a browser: no Accept-Language, Referer, Origin, Sec-*, cookie.
    """
    for changes in ({}, {"language": "de", "region": "DE", "time_range": TimeRange.WEEK}):
        request = duckduckgo.build_request(query(**changes))
        assert header_names(request) == {"accept", "content-type"}
        assert not header_names(request) & BROWSER_HEADERS
        assert dict(request.headers)["Accept"] == "text/html"


@pytest.mark.parametrize(
    ("language", "region", "kl"),
    [
        ("en", "", "wt-wt"),
        ("en", "US", "us-en"),
        ("en", "GB", "uk-en"),
        ("en-GB", "gb", "uk-en"),
        ("de", "", "de-de"),
        ("de", "AT", "at-de"),
        ("fr", "CA", "ca-fr"),
        ("es", "US", "ue-es"),
        ("ja", "", "jp-jp"),
        ("zh", "TW", "tw-tzh"),
        ("nb", "NO", "no-no"),
        ("de", "JP", "de-de"),  # no region for that pair: the language's own
        ("tlh", "", "wt-wt"),  # unknown: all regions
    ],
)
def test_req_eng_010_region_code(language: str, region: str, kl: str) -> None:
    """REQ-ENG-010: language and region become DuckDuckGo's ``kl`` region code."""
    request = duckduckgo.build_request(query(language=language, region=region))
    assert form_of(request)["kl"] == kl


@pytest.mark.parametrize(
    ("time_range", "df"),
    [(TimeRange.DAY, "d"), (TimeRange.WEEK, "w"), (TimeRange.MONTH, "m"), (TimeRange.YEAR, "y")],
)
def test_req_eng_010_time_range(time_range: TimeRange, df: str) -> None:
    """REQ-ENG-010: a time range is the form's ``df`` field."""
    assert form_of(duckduckgo.build_request(query(time_range=time_range)))["df"] == df


@pytest.mark.parametrize(
    ("safe_search", "kp"),
    [(SafeSearch.STRICT, "1"), (SafeSearch.MODERATE, "-1"), (SafeSearch.OFF, "-2")],
)
def test_safe_search(safe_search: SafeSearch, kp: str) -> None:
    """The operator's safe-search level is DuckDuckGo's ``kp``."""
    assert form_of(duckduckgo.build_request(query(safe_search=safe_search)))["kp"] == kp


@pytest.mark.parametrize(
    ("text", "q"),
    [
        ("!w paris", "'!w' paris"),
        ("paris !g", "paris '!g'"),
        ("! paris", "'!' paris"),
        ("\\paris tourism", "'\\paris' tourism"),
        ("wow! amazing", "wow! amazing"),
        ("  spaced \t out  ", "spaced out"),
    ],
)
def test_redirecting_words_are_quoted(text: str, q: str) -> None:
    """Bangs and the leading backslash redirect; quoted, they are searched as words."""
    assert form_of(duckduckgo.build_request(query(text=text)))["q"] == q


def test_blank_query_is_refused() -> None:
    """Whitespace only: request_failure before contact."""
    expect_refusal(duckduckgo.build_request, query(text=" \n "), FailureClass.REQUEST_FAILURE)


def test_build_request_is_pure() -> None:
    """REQ-ENG-001: the same query builds the same request."""
    assert duckduckgo.build_request(query()) == duckduckgo.build_request(query())


# --- results, no results, drift -----------------------------------------------------------


def test_req_test_018_results_in_order() -> None:
    """REQ-TEST-018, REQ-ENG-005: organic results in page order; the ad and the box are left out.

    REQ-RANK-003: DuckDuckGo's ``/l/?uddg=`` wrapper is unwrapped by the driver.
    """
    results = duckduckgo.parse(page("results.html"))
    assert [(r.url, r.date) for r in results] == [
        ("https://tokio.rs/", "2025-08-26"),
        ("https://rust-lang.github.io/async-book/", None),
        ("https://docs.rs/tokio/latest/tokio/?search=spawn&kind=fn", "2026-11-03"),
        ("https://smol-rs.github.io/smol/", None),
    ]
    assert_ranks(results)
    assert all("duckduckgo.com" not in r.url for r in results)
    assert all("DDG-AD-MARKER" not in r.snippet for r in results)


def test_req_eng_012_titles_and_snippets_stay_raw() -> None:
    """REQ-ENG-012: title and snippet are the page's markup; the pipeline cleans them."""
    results = duckduckgo.parse(page("results.html"))
    assert results[0].title == "Tokio - An asynchronous <b>Rust</b> runtime"
    assert results[0].snippet == (
        "Tokio is an event-driven, non-blocking I/O platform for writing <b>asynchronous</b> "
        "applications with the <b>Rust</b> programming language &amp; more."
    )
    assert results[1].snippet.startswith("It's a guide to <b>async</b> programming")
    assert results[3].snippet == ""  # a block without a snippet keeps its title and URL


def test_req_test_018_no_results_page_is_empty() -> None:
    """REQ-TEST-018, REQ-TEST-002: the no-results marker is an empty list, not a failure."""
    assert duckduckgo.parse(page("no_results.html")) == []


def test_req_test_018_drifted_page_is_parse_failure() -> None:
    """REQ-TEST-018, REQ-ENG-015: neither results nor the no-results marker: parse_failure."""
    expect_failure(duckduckgo.parse, page("drifted.html"), FailureClass.PARSE_FAILURE)


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"<html><body><p>Nothing here DDG-ERROR-PAGE-MARKER</p></body></html>",
        fixture(ENGINE, "error_page.html"),
        # Only advertising: no organic result and no no-results marker.
        result_page(block("https://duckduckgo.com/y.js?ad_domain=x.example", classes="result--ad")),
    ],
)
def test_pages_without_results_or_marker_are_parse_failure(body: bytes) -> None:
    """Anything that is neither a results page nor the no-results page is never "no results"."""
    expect_failure(duckduckgo.parse, respond(body, 200, PAGE), FailureClass.PARSE_FAILURE)


def test_challenge_words_in_results_are_not_a_challenge() -> None:
    """Results about CAPTCHAs are results: the challenge is recognised by the page's structure."""
    (result,) = duckduckgo.parse(page("words_like_a_challenge.html"))
    assert result.url == "https://en.wikipedia.org/wiki/CAPTCHA"


def test_results_are_cut_to_lim_s3() -> None:
    """There is no count to ask for: the page is cut to the record's 10 results."""
    blocks = "".join(block(f"https://example.org/{i}", f"R{i}") for i in range(30))
    results = duckduckgo.parse(respond(result_page(blocks), 200, PAGE))
    assert [r.url for r in results] == [f"https://example.org/{i}" for i in range(10)]


def test_one_result_per_block() -> None:
    """A block with a second title anchor still gives one result, the first anchor's."""
    doubled = block("https://a.example/", "First").replace(
        "</h2>", "</h2><a class='result__a' href='https://b.example/'>Second</a>"
    )
    results = duckduckgo.parse(
        respond(result_page(doubled + block("https://c.example/")), 200, PAGE)
    )
    assert [r.url for r in results] == ["https://a.example/", "https://c.example/"]


@pytest.mark.parametrize(
    ("href", "url"),
    [
        ("//duckduckgo.com/l/?uddg=https%3A%2F%2Fa.example%2Fx&amp;rut=1", "https://a.example/x"),
        ("https://duckduckgo.com/l/?uddg=http%3A%2F%2Fb.example%2F", "http://b.example/"),
        ("/l/?uddg=https%3A%2F%2Fc.example%2Fp%3Fq%3D1%26r%3D2", "https://c.example/p?q=1&r=2"),
        ("https://d.example/path?a=1&amp;b=2#frag", "https://d.example/path?a=1&b=2#frag"),
        ("https://duckduckgo.com/privacy", "https://duckduckgo.com/privacy"),
    ],
)
def test_req_rank_003_wrapper_unwrapped(href: str, url: str) -> None:
    """REQ-RANK-003: wrapped links give their target; direct links stay as they are."""
    (result,) = duckduckgo.parse(respond(result_page(block(href)), 200, PAGE))
    assert result.url == url


@pytest.mark.parametrize(
    "href",
    [
        "//duckduckgo.com/l/?rut=1",  # a wrapper without its target
        "//duckduckgo.com/l/?uddg=ftp%3A%2F%2Ffiles.example%2Fx",  # not http(s)
        "//duckduckgo.com/l/?uddg=javascript%3Aalert(1)",
        "//duckduckgo.com/l/?uddg=https%3A%2F%2Fduckduckgo.com%2Fl%2F%3Fuddg%3Dhttps%253A%252F%252Fx.example",
        "https://duckduckgo.com/y.js?ad_domain=x.example&amp;u3=https%3A%2F%2Fx.example",
        "/html/?q=next+page",  # an internal link, not a result
        "https://html.duckduckgo.com/html/?q=related",  # DuckDuckGo's own search page
        "?q=related",
        "mailto:someone@example.org",
        "https://[::1",
        "",
    ],
)
def test_unusable_links_are_skipped(href: str) -> None:
    """A block whose link gives no usable result URL is skipped, not passed on."""
    body = result_page(block(href) + block("https://kept.example/", "Kept"))
    (result,) = duckduckgo.parse(respond(body, 200, PAGE))
    assert result.url == "https://kept.example/"


# --- challenge and blocking statuses ------------------------------------------------------


@pytest.mark.parametrize("status", [200, 202, 403])
def test_req_test_018_challenge_page_is_blocked(status: int) -> None:
    """REQ-TEST-018, REQ-ENG-009/014: the anomaly page is blocked, whatever its status."""
    expect_failure(duckduckgo.parse, page("challenge.html", status), FailureClass.BLOCKED)


@pytest.mark.parametrize(
    ("status", "headers", "expected", "wait"),
    [
        (403, {}, FailureClass.BLOCKED, None),
        (429, {}, FailureClass.RATE_LIMITED, None),
        (429, {"Retry-After": "120"}, FailureClass.RATE_LIMITED, 120.0),
        (503, {}, FailureClass.RATE_LIMITED, None),
        (503, {"Retry-After": "30"}, FailureClass.RATE_LIMITED, 30.0),
        (202, {}, FailureClass.BLOCKED, None),
        (204, {}, FailureClass.BLOCKED, None),
    ],
)
def test_req_test_018_blocking_statuses(
    status: int, headers: dict[str, str], expected: FailureClass, wait: float | None
) -> None:
    """REQ-TEST-018, REQ-ENG-014, REQ-RES-002: 403, 429, 503 are blocked or rate_limited.

    Even with a results page as the body: a refusal status is never worked around.
    """
    failure = expect_failure(duckduckgo.parse, page("results.html", status, **headers), expected)
    assert failure.retry_after_s == wait


@pytest.mark.parametrize(
    "location",
    [
        "https://html.duckduckgo.com/html/?q=rust",  # on the provider's host
        "https://duckduckgo.com/?q=rust",  # the provider's other host
        "https://tokio.rs/",  # off the provider's host (a bang's target)
    ],
)
@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_req_test_018_redirect_is_not_followed(status: int, location: str) -> None:
    """REQ-TEST-018, REQ-ENG-015: no redirect is followed, on or off the host: request_failure.

    The pipeline follows none (egress returns the 3xx); the driver takes no target from it.
    """
    response = respond(b"", status, PAGE, {"Location": location})
    expect_failure(duckduckgo.parse, response, FailureClass.REQUEST_FAILURE)


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (400, FailureClass.REQUEST_FAILURE),
        (401, FailureClass.AUTH_FAILURE),
        (404, FailureClass.REQUEST_FAILURE),
        (500, FailureClass.REQUEST_FAILURE),
        (502, FailureClass.REQUEST_FAILURE),
    ],
)
def test_req_eng_006_other_statuses(status: int, expected: FailureClass) -> None:
    """REQ-ENG-006: other statuses by their meaning; no page text is kept."""
    expect_failure(duckduckgo.parse, page("error_page.html", status), expected)


def test_non_html_answer_is_parse_failure() -> None:
    """A JSON (or any non-HTML) answer where the page was expected: parse_failure."""
    expect_failure(
        duckduckgo.parse, respond(b'{"results": []}', 200, JSON), FailureClass.PARSE_FAILURE
    )


# --- parsing bounds (REQ-ENG-015, REQ-TEST-018) -------------------------------------------


def test_bounds_are_web_fetchs() -> None:
    """The node and depth bounds are LIM-F10 and LIM-F11, as web_fetch's."""
    assert duckduckgo.MAX_NODES == limit("LIM-F10") == 200_000
    assert duckduckgo.MAX_DEPTH == limit("LIM-F11") == 256


def test_req_test_018_depth_bound() -> None:
    """Nesting beyond LIM-F11 is a parse_failure, even around a valid result."""
    deep = result_page(block("https://a.example/"), prefix="<div>" * 300, suffix="</div>" * 300)
    expect_failure(duckduckgo.parse, respond(deep, 200, PAGE), FailureClass.PARSE_FAILURE)


def test_depth_within_the_bound_parses() -> None:
    """Nesting within LIM-F11 (with the block's own levels) still gives the results."""
    nested = result_page(block("https://a.example/"), prefix="<div>" * 240, suffix="</div>" * 240)
    (result,) = duckduckgo.parse(respond(nested, 200, PAGE))
    assert result.url == "https://a.example/"


def test_req_test_018_node_bound() -> None:
    """More than LIM-F10 elements is a parse_failure (each ``<p>`` closes the previous one)."""
    body = result_page(block("https://a.example/"), suffix="<p>" * 200_001)
    assert len(body) <= duckduckgo.ADMISSION.max_response_bytes
    expect_failure(duckduckgo.parse, respond(body, 200, PAGE), FailureClass.PARSE_FAILURE)


def test_req_test_018_byte_bound() -> None:
    """A body larger than the record's response bound is a parse_failure, never parsed."""
    body = result_page(
        block("https://a.example/"), suffix=" " * duckduckgo.ADMISSION.max_response_bytes
    )
    expect_failure(duckduckgo.parse, respond(body, 200, PAGE), FailureClass.PARSE_FAILURE)


def test_invalid_utf8_does_not_break_parsing() -> None:
    """Bytes that are not UTF-8 are replaced; the page still parses."""
    body = result_page(block("https://a.example/", title="Caf\xe9")).replace(
        "Café".encode(), b"Caf\xe9\xff"
    )
    (result,) = duckduckgo.parse(respond(body, 200, PAGE))
    assert result.title == "Caf\ufffd\ufffd"


def test_declared_charset_cannot_change_the_decoding() -> None:
    """A ``<meta charset>`` naming another encoding does not make the page decode differently."""
    body = result_page(block("https://a.example/", title="Grüße")).replace(
        b"charset='utf-8'", b"charset='iso-8859-1'"
    )
    (result,) = duckduckgo.parse(respond(body, 200, PAGE))
    assert result.title == "Grüße"


def test_markup_from_the_page_never_reaches_exceptions() -> None:
    """REQ-ENG-006: no page text in any failure (str, repr, args, chained exceptions)."""
    for name, status in (("challenge.html", 202), ("drifted.html", 200), ("error_page.html", 500)):
        with pytest.raises(EngineFailure) as caught:
            duckduckgo.parse(page(name, status))
        text = f"{caught.value!s}{caught.value!r}{caught.value.args}"
        assert "MARKER" not in text and "DuckDuckGo" not in text
