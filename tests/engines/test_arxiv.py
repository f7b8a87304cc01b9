"""The arXiv driver against hand-written fixtures in the Atom API's documented shape.

Fixture shape: https://info.arxiv.org/help/api/user-manual.html (feed, entry, error entry) and
SearXNG ``searx/engines/arxiv.py``. REQ-TEST-002, REQ-ENG-005/006/009/010/011/012, REQ-RES-002.
"""

from __future__ import annotations

import contextlib
import email.utils
import random
import time
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from rypsok.contract.vocabulary import Category, FailureClass, SafeSearch, TimeRange
from rypsok.engines import arxiv
from rypsok.engines.base import EngineFailure, EngineQuery, EngineResponse

FIXTURES = Path(__file__).parent / "fixtures" / "arxiv"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "engines" / "arxiv.md"
NOW = 1_700_000_000.0  # 2023-11-14T22:13:20Z
ATOM = "application/atom+xml; charset=utf-8"


def fixture(name: str) -> bytes:
    """The bytes of one fixture file."""
    return (FIXTURES / name).read_bytes()


def make_query(**changes: object) -> EngineQuery:
    """A query as the pipeline builds it, with a fixed clock."""
    values: dict[str, object] = {
        "text": "quantum error",
        "endpoint": arxiv.ADMISSION.endpoint,
        "count": 10,
        "language": "en",
        "time_range": None,
        "region": "",
        "safe_search": SafeSearch.MODERATE,
        "now": NOW,
    }
    values.update(changes)
    return EngineQuery(**values)  # type: ignore[arg-type]


def params_of(query: EngineQuery) -> dict[str, list[str]]:
    """The decoded query parameters of the request built for ``query``."""
    return parse_qs(urlsplit(arxiv.build_request(query).url).query)


def respond(
    body: bytes, status: int = 200, content_type: str = ATOM, **headers: str
) -> EngineResponse:
    """A decoded response as the pipeline hands it to ``parse``."""
    return EngineResponse(
        status=status, headers={"content-type": content_type, **headers}, body=body
    )


def failure(response: EngineResponse, expected: FailureClass) -> EngineFailure:
    """The failure ``parse`` raises, checked to carry its class and no provider text."""
    with pytest.raises(EngineFailure) as caught:
        arxiv.parse(response)
    exc = caught.value
    assert exc.failure_class is expected
    assert str(exc) == expected.value
    assert exc.args == (expected.value,)
    assert exc.__cause__ is None
    assert exc.__context__ is None or exc.__suppress_context__
    return exc


# --- the request -------------------------------------------------------------------------


@pytest.mark.req("REQ-ENG-011")
def test_req_eng_011_request_asks_for_count_on_the_endpoint_origin() -> None:
    """REQ-ENG-011: one GET on the endpoint's origin asking for query.count entries."""
    request = arxiv.build_request(make_query())
    parts = urlsplit(request.url)
    assert request.method == "GET"
    assert (parts.scheme, parts.netloc, parts.path) == ("https", "export.arxiv.org", "/api/query")
    params = parse_qs(parts.query)
    assert params["max_results"] == ["10"]
    assert params["start"] == ["0"]
    assert params["search_query"] == ["all:quantum AND all:error"]
    assert ("Accept", "application/atom+xml") in request.headers
    assert request.credential_headers == frozenset()
    assert request.body is None


@pytest.mark.req("REQ-ENG-011")
def test_req_eng_011_count_is_bounded_by_the_record() -> None:
    """REQ-ENG-011: never more than the record's max_results, never fewer than one."""
    assert params_of(make_query(count=5))["max_results"] == ["5"]
    assert params_of(make_query(count=10_000))["max_results"] == [str(arxiv.ADMISSION.max_results)]
    assert params_of(make_query(count=0))["max_results"] == ["1"]


def test_operator_endpoint_keeps_its_origin_and_path() -> None:
    """An operator-configured endpoint is used as given (REQ-ENG-003)."""
    request = arxiv.build_request(make_query(endpoint="https://mirror.example.org/arxiv/api/query"))
    parts = urlsplit(request.url)
    assert (parts.scheme, parts.netloc, parts.path) == (
        "https",
        "mirror.example.org",
        "/arxiv/api/query",
    )


@pytest.mark.req("REQ-ENG-010")
@pytest.mark.parametrize(
    ("time_range", "window"),
    [
        (TimeRange.DAY, "[202311132213 TO 202311142213]"),
        (TimeRange.WEEK, "[202311072213 TO 202311142213]"),
        (TimeRange.MONTH, "[202310142213 TO 202311142213]"),
        (TimeRange.YEAR, "[202211132213 TO 202311142213]"),
    ],
)
def test_req_eng_010_time_range_maps_to_submitted_date(time_range: TimeRange, window: str) -> None:
    """REQ-ENG-010: a time range becomes submittedDate:[from TO to] in GMT, from query.now."""
    search = params_of(make_query(time_range=time_range))["search_query"][0]
    assert search == f"(all:quantum AND all:error) AND submittedDate:{window}"


def test_build_request_reads_no_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """The request is a pure function of the query: the clock is query.now only."""
    query = make_query(time_range=TimeRange.DAY)

    def no_clock() -> float:
        raise AssertionError("build_request read the clock")

    monkeypatch.setattr(time, "time", no_clock)
    assert "submittedDate" in arxiv.build_request(query).url


def test_query_syntax_of_the_caller_is_not_obeyed() -> None:
    """Field prefixes, brackets and operators in the text are searched as words."""
    search = params_of(make_query(text='au:hawking OR (black "hole  area") ANDNOT x]'))
    assert search["search_query"] == [
        'all:au AND all:hawking AND all:or AND all:black AND all:"hole area" AND all:andnot'
        " AND all:x"
    ]


def test_query_of_syntax_only_fails_before_sending() -> None:
    """A text with no word left is a request_failure, not a malformed request."""
    with pytest.raises(EngineFailure) as caught:
        arxiv.build_request(make_query(text='(): [] ""'))
    assert caught.value.failure_class is FailureClass.REQUEST_FAILURE


# --- the admission record ----------------------------------------------------------------


@pytest.mark.req("REQ-CMP-001")
def test_req_cmp_001_admission_record_and_its_page() -> None:
    """REQ-CMP-001/REQ-ENG-010: the record holds the provider's limits; its page exists."""
    record = arxiv.ADMISSION
    assert record.engine_id == "arxiv"
    assert record.categories == (Category.SCIENCE,)
    assert record.rate.requests == 1 and record.rate.per_seconds == 3.0
    assert record.max_in_flight == 1
    assert record.languages == frozenset()
    assert record.time_ranges == frozenset(TimeRange)
    assert record.key == "none"
    page = DOCS.read_text(encoding="utf-8")
    assert record.endpoint in page
    assert record.documentation in page
    assert "https://info.arxiv.org/help/api/tou.html" in page


# --- successful and empty answers ---------------------------------------------------------


@pytest.mark.req("REQ-TEST-002")
def test_req_test_002_success_is_parsed_in_provider_order() -> None:
    """REQ-TEST-002/REQ-ENG-005: entries in order, abs pages on https, dates, bad entry skipped."""
    results = arxiv.parse(respond(fixture("success.xml")))
    assert [r.rank for r in results] == [1, 2, 3]
    assert [r.url for r in results] == [
        "https://arxiv.org/abs/2403.01234v2",
        "https://arxiv.org/abs/hep-ex/0307015v1",
        "https://arxiv.org/abs/2501.00002v1",
    ]
    assert [r.date for r in results] == ["2024-03-02", "2003-07-07", "2025-01-01"]
    assert results[2].snippet == ""


@pytest.mark.req("REQ-ENG-012")
def test_req_eng_012_title_and_snippet_stay_raw() -> None:
    """REQ-ENG-012: line breaks, LaTeX and markup stay as the provider wrote them."""
    first = arxiv.parse(respond(fixture("success.xml")))[0]
    assert first.title == (
        "Surface codes & logical error rates below\n  threshold with $\\lambda < 1$"
    )
    assert first.snippet.startswith("  We study logical error rates")
    assert "<b>superconducting</b>" in first.snippet


def test_long_summary_is_cut_outside_markup() -> None:
    """Only the first part of a long abstract is kept, never cut inside a tag."""
    summary = "word " * 390 + "&lt;b&gt;bold&lt;/b&gt; " + "tail " * 400
    body = fixture("success.xml").replace(
        b"  We study logical error rates", summary.encode() + b"We study", 1
    )
    snippet = arxiv.parse(respond(body))[0].snippet
    assert len(snippet) <= 2000
    assert snippet.count("<") == snippet.count(">")


@pytest.mark.req("REQ-TEST-002")
def test_req_test_002_empty_feed_is_no_results() -> None:
    """REQ-TEST-002: a feed without entries is an empty list, not a failure."""
    assert arxiv.parse(respond(fixture("empty.xml"))) == []


# --- each failure class ------------------------------------------------------------------


@pytest.mark.req("REQ-RES-002")
def test_req_res_002_429_with_retry_after_seconds() -> None:
    """REQ-RES-002: HTTP 429 is rate_limited and Retry-After in seconds is kept."""
    exc = failure(
        respond(b"Too Many Requests", 429, "text/plain", **{"retry-after": "30"}),
        FailureClass.RATE_LIMITED,
    )
    assert exc.retry_after_s == 30.0


@pytest.mark.req("REQ-RES-002")
def test_req_res_002_429_with_retry_after_http_date() -> None:
    """REQ-RES-002: a Retry-After HTTP date becomes seconds from now."""
    when = email.utils.formatdate(time.time() + 120, usegmt=True)
    exc = failure(
        respond(b"", 429, "text/plain", **{"retry-after": when}), FailureClass.RATE_LIMITED
    )
    assert exc.retry_after_s is not None
    assert 100 <= exc.retry_after_s <= 121


@pytest.mark.req("REQ-RES-002")
def test_req_res_002_arxiv_overload_signals() -> None:
    """REQ-RES-002: arXiv's 503 and its plain "Rate exceeded." body are rate_limited."""
    exc = failure(
        respond(b"", 503, "text/plain", **{"retry-after": "15"}), FailureClass.RATE_LIMITED
    )
    assert exc.retry_after_s == 15.0
    assert failure(respond(b"", 503, "text/html"), FailureClass.RATE_LIMITED).retry_after_s is None
    failure(respond(fixture("rate_exceeded.txt"), 200, "text/plain"), FailureClass.RATE_LIMITED)


@pytest.mark.req("REQ-ENG-009")
def test_req_eng_009_captcha_page_is_blocked() -> None:
    """REQ-ENG-009: an HTML CAPTCHA page is blocked, as 200 and as 403."""
    body = fixture("captcha.html")
    exc = failure(respond(body, 200, "text/html; charset=utf-8"), FailureClass.BLOCKED)
    assert "CAPTCHA" not in repr(exc)
    failure(respond(body, 403, "text/html"), FailureClass.BLOCKED)


@pytest.mark.req("REQ-ENG-006")
@pytest.mark.parametrize(
    ("name", "content_type"),
    [
        ("truncated.xml", ATOM),
        ("maintenance.html", "text/html"),
        ("doctype_entity.xml", ATOM),
        ("doctype_external.xml", ATOM),
    ],
)
def test_req_eng_006_unusable_bodies_are_parse_failure(name: str, content_type: str) -> None:
    """REQ-ENG-006: truncated XML, HTML and any DTD or entity declaration: parse_failure."""
    exc = failure(respond(fixture(name), 200, content_type), FailureClass.PARSE_FAILURE)
    assert "maintenance" not in repr(exc)


def test_dtd_hidden_by_another_encoding_is_refused() -> None:
    """A DTD in UTF-16 cannot slip past the check: the body must be UTF-8.

    Proves THR-10.
    """
    body = fixture("doctype_entity.xml").decode().replace("UTF-8", "UTF-16").encode("utf-16")
    failure(respond(body), FailureClass.PARSE_FAILURE)


def test_json_or_foreign_xml_is_parse_failure() -> None:
    """A body that is not an Atom feed is parse_failure."""
    failure(respond(b'{"feed": []}', 200, "application/json"), FailureClass.PARSE_FAILURE)
    failure(
        respond(b"<rss><channel/></rss>", 200, "application/rss+xml"), FailureClass.PARSE_FAILURE
    )


@pytest.mark.req("REQ-ENG-006")
def test_req_eng_006_401_is_auth_failure() -> None:
    """REQ-ENG-006: 401 is auth_failure."""
    failure(respond(b"Unauthorized", 401, "text/plain"), FailureClass.AUTH_FAILURE)


@pytest.mark.req("REQ-ENG-006")
def test_req_eng_006_server_error_is_request_failure() -> None:
    """REQ-ENG-006: 500 is request_failure."""
    failure(respond(b"Internal Server Error", 500, "text/plain"), FailureClass.REQUEST_FAILURE)


@pytest.mark.req("REQ-ENG-006")
def test_req_eng_006_error_entry_is_request_failure_without_its_text() -> None:
    """REQ-ENG-006: arXiv's error entry (HTTP 200 or 400) is request_failure; no provider text."""
    for status in (200, 400):
        exc = failure(respond(fixture("error_entry.xml"), status), FailureClass.REQUEST_FAILURE)
        assert "incorrect id format" not in repr(exc)
        assert "1234.12345" not in str(exc)


def test_bare_ampersand_far_from_the_cut_is_kept() -> None:
    """A bare ``&`` or ``<`` in the text is not markup: the cut does not fall back to it."""
    summary = "A &amp; B & C, p < 0.05; " + "x" * 2500
    body = fixture("success.xml").replace(
        b"  We study logical error rates",
        summary.replace("&", "&amp;").replace("<", "&lt;").encode(),
        1,
    )
    snippet = arxiv.parse(respond(body))[0].snippet
    assert len(snippet) == 2000
    assert snippet.startswith("A &amp; B & C, p < 0.05; xxx")


@pytest.mark.req("REQ-SEC-014")
def test_req_sec_014_damaged_answers_only_ever_fail_as_a_class() -> None:
    """REQ-SEC-014: any damaged answer is a result list or an EngineFailure, never a crash."""
    rnd = random.Random(20231114)
    original = fixture("success.xml")
    pieces = [b'"', b"{", b"[", b"null", b"<", b">", b"&", b"]", b"}", b"http://[", b"-1"]
    for _ in range(400):
        body = bytearray(original)
        for _ in range(rnd.randint(1, 6)):
            at = rnd.randrange(len(body))
            choice = rnd.random()
            if choice < 0.4:
                body[at] = rnd.randrange(256)
            elif choice < 0.7:
                del body[at : at + rnd.randint(1, 40)]
            else:
                body[at:at] = rnd.choice(pieces)
        with contextlib.suppress(EngineFailure):
            arxiv.parse(respond(bytes(body), 200, ATOM))
