"""The Crossref driver against hand-written fixtures in the REST API's documented shape.

Fixture shape: https://api.crossref.org/swagger-ui/index.html (``work-list`` envelope,
``date-parts``, validation failures) and SearXNG ``searx/engines/crossref.py``.
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
from rypsok.engines import crossref
from rypsok.engines.base import EngineFailure, EngineQuery, EngineResponse

FIXTURES = Path(__file__).parent / "fixtures" / "crossref"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "engines" / "crossref.md"
NOW = 1_700_000_000.0  # 2023-11-14T22:13:20Z
JSON = "application/json;charset=utf-8"


def fixture(name: str) -> bytes:
    """The bytes of one fixture file."""
    return (FIXTURES / name).read_bytes()


def make_query(**changes: object) -> EngineQuery:
    """A query as the pipeline builds it, with a fixed clock."""
    values: dict[str, object] = {
        "text": "e coli growth temperature",
        "endpoint": crossref.ADMISSION.endpoint,
        "count": 10,
        "language": "en",
        "time_range": None,
        "region": "",
        "safe_search": SafeSearch.MODERATE,
        "contact": "",
        "now": NOW,
    }
    values.update(changes)
    return EngineQuery(**values)  # type: ignore[arg-type]


def params_of(query: EngineQuery) -> dict[str, list[str]]:
    """The decoded query parameters of the request built for ``query``."""
    return parse_qs(urlsplit(crossref.build_request(query).url).query)


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
        crossref.parse(response)
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
    """REQ-ENG-011: one GET of /works on the endpoint's origin for query.count rows."""
    request = crossref.build_request(make_query())
    parts = urlsplit(request.url)
    assert request.method == "GET"
    assert (parts.scheme, parts.netloc, parts.path) == ("https", "api.crossref.org", "/works")
    params = parse_qs(parts.query)
    assert params["query"] == ["e coli growth temperature"]
    assert params["rows"] == ["10"]
    assert "filter" not in params
    assert "mailto" not in params
    assert ("Accept", "application/json") in request.headers
    assert request.credential_headers == frozenset()


@pytest.mark.req("REQ-ENG-011")
def test_req_eng_011_count_is_bounded_by_the_record() -> None:
    """REQ-ENG-011: never more rows than the record allows, never fewer than one."""
    assert params_of(make_query(count=3))["rows"] == ["3"]
    assert params_of(make_query(count=5000))["rows"] == [str(crossref.ADMISSION.max_results)]
    assert params_of(make_query(count=0))["rows"] == ["1"]


@pytest.mark.req("REQ-ENG-010")
@pytest.mark.parametrize(
    ("time_range", "since"),
    [
        (TimeRange.DAY, "2023-11-13"),
        (TimeRange.WEEK, "2023-11-07"),
        (TimeRange.MONTH, "2023-10-14"),
        (TimeRange.YEAR, "2022-11-13"),
    ],
)
def test_req_eng_010_time_range_maps_to_from_pub_date(time_range: TimeRange, since: str) -> None:
    """REQ-ENG-010: a time range becomes filter=from-pub-date:YYYY-MM-DD, from query.now."""
    assert params_of(make_query(time_range=time_range))["filter"] == [f"from-pub-date:{since}"]


def test_build_request_reads_no_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """The request is a pure function of the query: the clock is query.now only."""
    query = make_query(time_range=TimeRange.WEEK)

    def no_clock() -> float:
        raise AssertionError("build_request read the clock")

    monkeypatch.setattr(time, "time", no_clock)
    assert "from-pub-date" in crossref.build_request(query).url


@pytest.mark.req("REQ-CMP-004")
@pytest.mark.parametrize(
    ("contact", "mailto"),
    [
        ("ops@example.org", ["ops@example.org"]),
        ("mailto:ops@example.org", ["ops@example.org"]),
        (" Ops.Team+search@lab.example.ac.uk ", ["Ops.Team+search@lab.example.ac.uk"]),
        ("https://example.org/contact", None),
        ("ops at example dot org", None),
        ("", None),
    ],
)
def test_req_cmp_004_mailto_only_from_an_email_contact(
    contact: str, mailto: list[str] | None
) -> None:
    """REQ-CMP-004: the operator contact joins Crossref's polite pool when it is an e-mail."""
    assert params_of(make_query(contact=contact)).get("mailto") == mailto


def test_operator_endpoint_keeps_its_origin_and_path() -> None:
    """An operator-configured endpoint is used as given (REQ-ENG-003)."""
    request = crossref.build_request(make_query(endpoint="https://cr.example.org/v1/works"))
    parts = urlsplit(request.url)
    assert (parts.netloc, parts.path) == ("cr.example.org", "/v1/works")


# --- the admission record ----------------------------------------------------------------


@pytest.mark.req("REQ-CMP-001")
def test_req_cmp_001_admission_record_and_its_page() -> None:
    """REQ-CMP-001/REQ-ENG-010: public-pool limits (5/s, 1 at a time); its page exists."""
    record = crossref.ADMISSION
    assert record.engine_id == "crossref"
    assert record.categories == (Category.SCIENCE,)
    assert record.rate.requests == 5 and record.rate.per_seconds == 1.0
    assert record.max_in_flight == 1
    assert record.languages == frozenset()
    assert record.time_ranges == frozenset(TimeRange)
    assert "mailto" in record.user_agent_note
    page = DOCS.read_text(encoding="utf-8")
    assert record.endpoint in page
    assert record.documentation in page


# --- successful and empty answers ---------------------------------------------------------


@pytest.mark.req("REQ-TEST-002")
def test_req_test_002_success_is_parsed_in_provider_order() -> None:
    """REQ-TEST-002/REQ-ENG-005: works in order, doi.org links, complete dates only."""
    results = crossref.parse(respond(fixture("success.json")))
    assert [r.rank for r in results] == [1, 2, 3]
    assert [r.url for r in results] == [
        "https://doi.org/10.1234/esm.2023.0042",
        "https://doi.org/10.5555/handbook.ch7",
        "https://doi.org/10.7777/proc.2022.15",
    ]
    # date-parts [[2023, 5, 17]]; [[2021, 3]] and [[2021]] are incomplete; published-print.
    assert [r.date for r in results] == ["2023-05-17", None, "2022-11-30"]


@pytest.mark.req("REQ-ENG-012")
def test_req_eng_012_title_and_snippet_stay_raw() -> None:
    """REQ-ENG-012: HTML in titles and the JATS abstract are left for the pipeline."""
    results = crossref.parse(respond(fixture("success.json")))
    assert results[0].title == (
        "Growth of <i>Escherichia coli</i> at body temperature &amp; neutral pH"
    )
    assert results[0].snippet.startswith("<jats:title>Abstract</jats:title><jats:p>")
    assert "<jats:italic>E. coli</jats:italic>" in results[0].snippet
    # Without an abstract, the container title is the provider's own description.
    assert results[1].snippet == "Handbook of Bacterial Culture"
    assert results[2].snippet == ""


@pytest.mark.req("REQ-TEST-002")
def test_req_test_002_empty_list_is_no_results() -> None:
    """REQ-TEST-002: total-results 0 is an empty list, not a failure."""
    assert crossref.parse(respond(fixture("empty.json"))) == []


# --- each failure class ------------------------------------------------------------------


@pytest.mark.req("REQ-RES-002")
def test_req_res_002_429_with_retry_after_seconds() -> None:
    """REQ-RES-002: HTTP 429 (rate or concurrency exceeded) is rate_limited with its wait."""
    exc = failure(
        respond(fixture("rate_limited.txt"), 429, "text/plain", **{"retry-after": "2"}),
        FailureClass.RATE_LIMITED,
    )
    assert exc.retry_after_s == 2.0
    assert "lower rate" not in repr(exc)


@pytest.mark.req("REQ-RES-002")
def test_req_res_002_429_with_retry_after_http_date() -> None:
    """REQ-RES-002: a Retry-After HTTP date becomes seconds from now."""
    when = email.utils.formatdate(time.time() + 60, usegmt=True)
    exc = failure(
        respond(fixture("rate_limited.txt"), 429, "text/plain", **{"retry-after": when}),
        FailureClass.RATE_LIMITED,
    )
    assert exc.retry_after_s is not None
    assert 40 <= exc.retry_after_s <= 61


@pytest.mark.req("REQ-ENG-009")
def test_req_eng_009_captcha_page_is_blocked() -> None:
    """REQ-ENG-009: an HTML challenge page is blocked, as 200 and as 403."""
    exc = failure(respond(fixture("captcha.html"), 200, "text/html"), FailureClass.BLOCKED)
    assert "robot" not in repr(exc)
    failure(respond(fixture("captcha.html"), 403, "text/html"), FailureClass.BLOCKED)


@pytest.mark.req("REQ-ENG-006")
@pytest.mark.parametrize(
    ("name", "content_type"),
    [
        ("truncated.json", JSON),
        ("server_error.html", "text/html"),
        ("not_work_list.json", JSON),
    ],
)
def test_req_eng_006_unusable_bodies_are_parse_failure(name: str, content_type: str) -> None:
    """REQ-ENG-006: truncated JSON, HTML instead of JSON, a body of another shape."""
    exc = failure(respond(fixture(name), 200, content_type), FailureClass.PARSE_FAILURE)
    assert "engineers" not in repr(exc)


def test_json_of_the_wrong_type_is_parse_failure() -> None:
    """A JSON array or an envelope without items is parse_failure."""
    failure(respond(b"[]"), FailureClass.PARSE_FAILURE)
    failure(
        respond(b'{"status": "ok", "message-type": "work-list", "message": {}}'),
        FailureClass.PARSE_FAILURE,
    )


@pytest.mark.req("REQ-ENG-006")
def test_req_eng_006_bad_plus_token_is_auth_failure() -> None:
    """REQ-ENG-006: 401 (a Metadata Plus token refused) is auth_failure."""
    exc = failure(
        respond(fixture("unauthorized.txt"), 401, "text/plain"), FailureClass.AUTH_FAILURE
    )
    assert "Crossref-Plus-API-Token" not in repr(exc)


@pytest.mark.req("REQ-ENG-006")
def test_req_eng_006_validation_failure_is_request_failure_without_its_text() -> None:
    """REQ-ENG-006: a 400 validation failure (or one sent with 200) is request_failure."""
    for status in (400, 200):
        exc = failure(
            respond(fixture("validation_failure.json"), status), FailureClass.REQUEST_FAILURE
        )
        assert "from-pub-dat" not in repr(exc)


@pytest.mark.req("REQ-ENG-006")
def test_req_eng_006_server_error_is_request_failure() -> None:
    """REQ-ENG-006: 500 and 503 without Retry-After are request_failure."""
    failure(respond(fixture("server_error.html"), 500, "text/html"), FailureClass.REQUEST_FAILURE)
    failure(respond(b"", 503, "text/plain"), FailureClass.REQUEST_FAILURE)


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
            crossref.parse(respond(bytes(body), 200, JSON))


def test_odd_link_and_date_values_cost_nothing_else() -> None:
    """A URL that cannot be split falls back to the DOI; an absurd year gives no date."""
    answer = (
        b'{"status": "ok", "message-type": "work-list", "message": {"items": [{"title": ["t"],'
        b' "URL": "http://[broken", "DOI": "10.1234/x y",'
        b' "published": {"date-parts": [[100000000000000000000, 1, 1]]}}]}}'
    )
    (result,) = crossref.parse(respond(answer))
    assert result.url == "https://doi.org/10.1234/x%20y"
    assert result.date is None
