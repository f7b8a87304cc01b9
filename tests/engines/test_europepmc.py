"""The Europe PMC driver against hand-written fixtures in the REST search's documented shape.

Fixture shape: https://europepmc.org/RestfulWebService (``hitCount``, ``resultList.result``,
``resultType=core`` fields) and the search syntax at https://europepmc.org/searchsyntax.
REQ-TEST-002, REQ-ENG-005/006/009/010/011/012, REQ-RES-002.
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
from rypsok.engines import europepmc
from rypsok.engines.base import EngineFailure, EngineQuery, EngineResponse

FIXTURES = Path(__file__).parent / "fixtures" / "europepmc"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "engines" / "europepmc.md"
NOW = 1_700_000_000.0  # 2023-11-14T22:13:20Z
JSON = "application/json;charset=UTF-8"


def fixture(name: str) -> bytes:
    """The bytes of one fixture file."""
    return (FIXTURES / name).read_bytes()


def make_query(**changes: object) -> EngineQuery:
    """A query as the pipeline builds it, with a fixed clock."""
    values: dict[str, object] = {
        "text": "malaria vaccine",
        "endpoint": europepmc.ADMISSION.endpoint,
        "count": 10,
        "language": "xx",  # a code with no LANG filter, so the plain query shows
        "time_range": None,
        "region": "",
        "safe_search": SafeSearch.MODERATE,
        "now": NOW,
    }
    values.update(changes)
    return EngineQuery(**values)  # type: ignore[arg-type]


def params_of(query: EngineQuery) -> dict[str, list[str]]:
    """The decoded query parameters of the request built for ``query``."""
    return parse_qs(urlsplit(europepmc.build_request(query).url).query)


def respond(
    body: bytes, status: int = 200, content_type: str = JSON, **headers: str
) -> EngineResponse:
    """A decoded response as the pipeline hands it to ``parse``."""
    return EngineResponse(
        status=status, headers={"content-type": content_type, **headers}, body=body
    )


def failure(response: EngineResponse, expected: FailureClass) -> EngineFailure:
    """The failure ``parse`` raises, checked to carry its class and no provider text."""
    with pytest.raises(EngineFailure) as caught:
        europepmc.parse(response)
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
    """REQ-ENG-011: one GET of the search service for query.count core records, as JSON."""
    request = europepmc.build_request(make_query())
    parts = urlsplit(request.url)
    assert request.method == "GET"
    assert (parts.scheme, parts.netloc, parts.path) == (
        "https",
        "www.ebi.ac.uk",
        "/europepmc/webservices/rest/search",
    )
    params = parse_qs(parts.query)
    assert params["query"] == ["malaria vaccine"]
    assert params["format"] == ["json"]
    assert params["resultType"] == ["core"]
    assert params["pageSize"] == ["10"]
    assert ("Accept", "application/json") in request.headers
    assert request.credential_headers == frozenset()


@pytest.mark.req("REQ-ENG-011")
def test_req_eng_011_count_is_bounded_by_the_record() -> None:
    """REQ-ENG-011: never more than the record's max_results, never fewer than one."""
    assert params_of(make_query(count=4))["pageSize"] == ["4"]
    assert params_of(make_query(count=1000))["pageSize"] == [str(europepmc.ADMISSION.max_results)]
    assert params_of(make_query(count=-3))["pageSize"] == ["1"]


@pytest.mark.req("REQ-ENG-010")
@pytest.mark.parametrize(
    ("time_range", "window"),
    [
        (TimeRange.DAY, "[2023-11-13 TO 2023-11-14]"),
        (TimeRange.WEEK, "[2023-11-07 TO 2023-11-14]"),
        (TimeRange.MONTH, "[2023-10-14 TO 2023-11-14]"),
        (TimeRange.YEAR, "[2022-11-13 TO 2023-11-14]"),
    ],
)
def test_req_eng_010_time_range_maps_to_first_pdate(time_range: TimeRange, window: str) -> None:
    """REQ-ENG-010: a time range becomes FIRST_PDATE:[from TO to], from query.now."""
    query = params_of(make_query(time_range=time_range))["query"]
    assert query == [f"(malaria vaccine) AND FIRST_PDATE:{window}"]


@pytest.mark.req("REQ-ENG-010")
@pytest.mark.parametrize(("language", "code"), [("en", "eng"), ("de", "ger"), ("fr-CA", "fre")])
def test_req_eng_010_language_maps_to_lang_field(language: str, code: str) -> None:
    """REQ-ENG-010: an honoured language becomes LANG:<ISO 639-2 code>."""
    query = params_of(make_query(language=language, time_range=TimeRange.DAY))["query"]
    assert query == [
        f"(malaria vaccine) AND FIRST_PDATE:[2023-11-13 TO 2023-11-14] AND LANG:{code}"
    ]
    honoured = europepmc.ADMISSION.languages
    assert honoured is not None and language.split("-")[0] in honoured


def test_build_request_reads_no_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """The request is a pure function of the query: the clock is query.now only."""
    query = make_query(time_range=TimeRange.YEAR)

    def no_clock() -> float:
        raise AssertionError("build_request read the clock")

    monkeypatch.setattr(time, "time", no_clock)
    assert "FIRST_PDATE" in europepmc.build_request(query).url


def test_unbalanced_syntax_cannot_escape_the_group() -> None:
    """Unpaired parentheses or quotes are dropped so rypsok's filters stay ANDed."""
    query = params_of(make_query(text='malaria) OR (x "vaccine', time_range=TimeRange.DAY))
    assert query["query"] == ["(malaria OR x vaccine) AND FIRST_PDATE:[2023-11-13 TO 2023-11-14]"]
    balanced = params_of(make_query(text='TITLE:"malaria vaccine" AND (child OR infant)'))
    assert balanced["query"] == ['TITLE:"malaria vaccine" AND (child OR infant)']


def test_query_of_syntax_only_fails_before_sending() -> None:
    """A text with nothing left to search is a request_failure, not a malformed request."""
    with pytest.raises(EngineFailure) as caught:
        europepmc.build_request(make_query(text='(("'))
    assert caught.value.failure_class is FailureClass.REQUEST_FAILURE


# --- the admission record ----------------------------------------------------------------


@pytest.mark.req("REQ-CMP-001")
def test_req_cmp_001_admission_record_and_its_page() -> None:
    """REQ-CMP-001/REQ-ENG-010: polite pacing and honoured filters; its page exists."""
    record = europepmc.ADMISSION
    assert record.engine_id == "europepmc"
    assert record.categories == (Category.SCIENCE,)
    assert record.rate.requests / record.rate.per_seconds <= 5
    assert record.max_in_flight <= 2
    assert record.languages is not None and "en" in record.languages
    assert record.time_ranges == frozenset(TimeRange)
    page = DOCS.read_text(encoding="utf-8")
    assert record.endpoint in page
    assert record.documentation in page


# --- successful and empty answers ---------------------------------------------------------


@pytest.mark.req("REQ-TEST-002")
def test_req_test_002_success_is_parsed_in_provider_order() -> None:
    """REQ-TEST-002/REQ-ENG-005: records in order, article pages, first publication dates."""
    results = europepmc.parse(respond(fixture("success.json")))
    assert [r.rank for r in results] == [1, 2, 3]
    assert [r.url for r in results] == [
        "https://europepmc.org/article/MED/38000001",
        "https://europepmc.org/article/PPR/PPR800002",
        # Identifiers that do not form a safe article path fall back to the DOI.
        "https://doi.org/10.5555/odd-source",
    ]
    assert [r.date for r in results] == ["2024-01-19", "2024-01-03", None]


@pytest.mark.req("REQ-ENG-012")
def test_req_eng_012_title_and_snippet_stay_raw() -> None:
    """REQ-ENG-012: HTML and entities in titles and abstracts are left for the pipeline."""
    first, second, _ = europepmc.parse(respond(fixture("success.json")))
    assert first.title == (
        "Efficacy of an R21 <i>Plasmodium falciparum</i> vaccine &amp; booster in children."
    )
    assert first.snippet.startswith("<h4>Background</h4>Malaria remains")
    assert "&lt;5 years" in first.snippet
    assert second.snippet == ""


@pytest.mark.req("REQ-TEST-002")
def test_req_test_002_empty_result_list_is_no_results() -> None:
    """REQ-TEST-002: hitCount 0 is an empty list, not a failure."""
    assert europepmc.parse(respond(fixture("empty.json"))) == []
    assert europepmc.parse(respond(b'{"version": "6.9", "hitCount": 0}')) == []


# --- each failure class ------------------------------------------------------------------


@pytest.mark.req("REQ-RES-002")
def test_req_res_002_429_with_retry_after_seconds() -> None:
    """REQ-RES-002: HTTP 429 is rate_limited and Retry-After in seconds is kept."""
    exc = failure(
        respond(b"Too Many Requests", 429, "text/plain", **{"retry-after": "5"}),
        FailureClass.RATE_LIMITED,
    )
    assert exc.retry_after_s == 5.0


@pytest.mark.req("REQ-RES-002")
def test_req_res_002_429_with_retry_after_http_date() -> None:
    """REQ-RES-002: a Retry-After HTTP date becomes seconds from now; 503 with it too."""
    when = email.utils.formatdate(time.time() + 300, usegmt=True)
    exc = failure(
        respond(b"", 429, "text/plain", **{"retry-after": when}), FailureClass.RATE_LIMITED
    )
    assert exc.retry_after_s is not None
    assert 280 <= exc.retry_after_s <= 301
    exc = failure(
        respond(b"", 503, "text/html", **{"retry-after": "120"}), FailureClass.RATE_LIMITED
    )
    assert exc.retry_after_s == 120.0


@pytest.mark.req("REQ-ENG-009")
def test_req_eng_009_captcha_page_is_blocked() -> None:
    """REQ-ENG-009: an HTML CAPTCHA page is blocked, as 200 and as 403."""
    exc = failure(respond(fixture("captcha.html"), 200, "text/html"), FailureClass.BLOCKED)
    assert "Unusual traffic" not in repr(exc)
    failure(respond(fixture("captcha.html"), 403, "text/html"), FailureClass.BLOCKED)


@pytest.mark.req("REQ-ENG-006")
@pytest.mark.parametrize(
    ("name", "content_type"),
    [
        ("truncated.json", JSON),
        ("maintenance.html", "text/html"),
        ("xml_default.xml", "application/xml"),
        ("wrong_shape.json", JSON),
    ],
)
def test_req_eng_006_unusable_bodies_are_parse_failure(name: str, content_type: str) -> None:
    """REQ-ENG-006: truncated JSON, HTML or XML instead of JSON, a body of another shape."""
    exc = failure(respond(fixture(name), 200, content_type), FailureClass.PARSE_FAILURE)
    assert "maintenance" not in repr(exc)


@pytest.mark.req("REQ-ENG-006")
def test_req_eng_006_401_is_auth_failure() -> None:
    """REQ-ENG-006: 401 is auth_failure."""
    failure(respond(b"Unauthorized", 401, "text/plain"), FailureClass.AUTH_FAILURE)


@pytest.mark.req("REQ-ENG-006")
def test_req_eng_006_malformed_query_is_request_failure_without_its_text() -> None:
    """REQ-ENG-006: 400 for a malformed query, or an error reported in a 200 body."""
    exc = failure(respond(fixture("bad_request.json"), 400), FailureClass.REQUEST_FAILURE)
    assert "Invalid query" not in repr(exc)
    exc = failure(respond(fixture("error_in_body.json"), 200), FailureClass.REQUEST_FAILURE)
    assert "Syntax error" not in repr(exc)


@pytest.mark.req("REQ-ENG-006")
def test_req_eng_006_server_error_is_request_failure() -> None:
    """REQ-ENG-006: 500 is request_failure."""
    failure(respond(fixture("maintenance.html"), 500, "text/html"), FailureClass.REQUEST_FAILURE)


@pytest.mark.req("REQ-SEC-014")
def test_req_sec_014_damaged_answers_only_ever_fail_as_a_class() -> None:
    """REQ-SEC-014: any damaged answer is a result list or an EngineFailure, never a crash."""
    rnd = random.Random(20231114)
    original = fixture("success.json")
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
            europepmc.parse(respond(bytes(body), 200, JSON))
