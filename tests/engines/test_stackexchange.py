"""The Stack Exchange driver against hand-written fixtures in API 2.3's documented shape.

Fixture shape: https://api.stackexchange.com/docs/wrapper (``items``, ``quota_*``, ``backoff``,
``error_*``), https://api.stackexchange.com/docs/types/question, the error list at
https://api.stackexchange.com/docs/error-handling and SearXNG ``searx/engines/stackexchange.py``.
REQ-TEST-002, REQ-ENG-005/006/009/010/011/012, REQ-RES-002.
"""

from __future__ import annotations

import contextlib
import email.utils
import random
import time
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from rypsok.config.secrets import Secret
from rypsok.contract.vocabulary import Category, FailureClass, SafeSearch, TimeRange
from rypsok.engines import stackexchange
from rypsok.engines.base import EngineFailure, EngineQuery, EngineResponse

FIXTURES = Path(__file__).parent / "fixtures" / "stackexchange"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "engines" / "stackexchange.md"
NOW = 1_700_000_000.0  # 2023-11-14T22:13:20Z
JSON = "application/json; charset=utf-8"


def fixture(name: str) -> bytes:
    """The bytes of one fixture file."""
    return (FIXTURES / name).read_bytes()


def make_query(**changes: object) -> EngineQuery:
    """A query as the pipeline builds it, with a fixed clock."""
    values: dict[str, object] = {
        "text": "parse json python",
        "endpoint": stackexchange.ADMISSION.endpoint,
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
    return parse_qs(urlsplit(stackexchange.build_request(query).url).query)


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
        stackexchange.parse(response)
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
    """REQ-ENG-011: one GET of search/advanced on Stack Overflow for query.count questions."""
    request = stackexchange.build_request(make_query())
    parts = urlsplit(request.url)
    assert request.method == "GET"
    assert (parts.scheme, parts.netloc, parts.path) == (
        "https",
        "api.stackexchange.com",
        "/2.3/search/advanced",
    )
    params = parse_qs(parts.query)
    assert params["q"] == ["parse json python"]
    assert params["site"] == ["stackoverflow"]
    assert params["pagesize"] == ["10"]
    assert params["filter"] == ["withbody"]
    assert "fromdate" not in params
    assert "key" not in params
    assert ("Accept", "application/json") in request.headers
    assert request.credential_headers == frozenset()


@pytest.mark.req("REQ-ENG-011")
def test_req_eng_011_count_is_bounded_by_the_record() -> None:
    """REQ-ENG-011: never more than the record's max_results, never fewer than one."""
    assert params_of(make_query(count=7))["pagesize"] == ["7"]
    assert params_of(make_query(count=100))["pagesize"] == [
        str(stackexchange.ADMISSION.max_results)
    ]
    assert params_of(make_query(count=0))["pagesize"] == ["1"]


@pytest.mark.req("REQ-ENG-010")
@pytest.mark.parametrize(
    ("time_range", "fromdate"),
    [
        (TimeRange.DAY, 1_700_000_000 - 86_400),
        (TimeRange.WEEK, 1_700_000_000 - 7 * 86_400),
        (TimeRange.MONTH, 1_700_000_000 - 31 * 86_400),
        (TimeRange.YEAR, 1_668_377_600),
    ],
)
def test_req_eng_010_time_range_maps_to_fromdate(time_range: TimeRange, fromdate: int) -> None:
    """REQ-ENG-010: a time range becomes fromdate in Unix seconds, from query.now."""
    assert params_of(make_query(time_range=time_range))["fromdate"] == [str(fromdate)]


def test_build_request_reads_no_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """The request is a pure function of the query: the clock is query.now only."""
    query = make_query(time_range=TimeRange.DAY)

    def no_clock() -> float:
        raise AssertionError("build_request read the clock")

    monkeypatch.setattr(time, "time", no_clock)
    assert "fromdate" in stackexchange.build_request(query).url


@pytest.mark.req("REQ-SEC-017")
def test_req_sec_017_key_goes_as_a_parameter_to_the_endpoint_origin_only() -> None:
    """REQ-SEC-017: the app key is the ``key`` parameter of a URL on the endpoint's origin."""
    request = stackexchange.build_request(make_query(credential=Secret("app-key-123((")))
    parts = urlsplit(request.url)
    assert parts.netloc == "api.stackexchange.com"
    assert parse_qs(parts.query)["key"] == ["app-key-123(("]
    assert request.credential_headers == frozenset()
    assert all("app-key" not in value for _, value in request.headers)


def test_operator_endpoint_keeps_its_origin_and_path() -> None:
    """An operator-configured endpoint is used as given (REQ-ENG-003)."""
    request = stackexchange.build_request(
        make_query(endpoint="https://se.example.org/2.3/search/advanced")
    )
    assert urlsplit(request.url).netloc == "se.example.org"


# --- the admission record ----------------------------------------------------------------


@pytest.mark.req("REQ-CMP-001")
def test_req_cmp_001_admission_record_and_its_page() -> None:
    """REQ-CMP-001/REQ-CMP-003: keyless daily quota, CC BY-SA attribution; its page exists."""
    record = stackexchange.ADMISSION
    assert record.engine_id == "stackexchange"
    assert record.categories == (Category.CODE,)
    assert record.rate.requests == 300 and record.rate.per_seconds == 86_400.0
    assert record.attribution_required is True
    assert "CC BY-SA" in record.license
    assert record.key == "optional"
    assert record.languages == frozenset()
    assert record.time_ranges == frozenset(TimeRange)
    page = DOCS.read_text(encoding="utf-8")
    assert record.endpoint in page
    assert record.documentation in page
    assert "backoff" in page


# --- successful and empty answers ---------------------------------------------------------


@pytest.mark.req("REQ-TEST-002")
def test_req_test_002_success_is_parsed_in_provider_order() -> None:
    """REQ-TEST-002/REQ-ENG-005: questions in order, their links, creation dates in UTC."""
    results = stackexchange.parse(respond(fixture("success.json")))
    assert [r.rank for r in results] == [1, 2, 3]
    assert [r.url for r in results] == [
        "https://stackoverflow.com/questions/7654321/how-do-i-parse-json-safely-in-python",
        "https://stackoverflow.com/questions/77000001/json-decodeerror-expecting-value",
        "https://stackoverflow.com/questions/7654000/python-json-module",
    ]
    # 1316093640 = 2011-09-15T13:34:00Z; a date given as a string is not a Unix time.
    assert [r.date for r in results] == ["2011-09-15", "2023-11-14", None]


@pytest.mark.req("REQ-ENG-012")
def test_req_eng_012_title_and_snippet_stay_raw() -> None:
    """REQ-ENG-012: entities in titles and the HTML body stay raw; no text of rypsok's own."""
    first, second, third = stackexchange.parse(respond(fixture("success.json")))
    assert first.title == "How do I parse JSON &quot;safely&quot; in Python &amp; avoid eval?"
    assert first.snippet.startswith("<p>I have a string like <code>{&quot;a&quot;: 1}</code>")
    assert "don&#39;t" in second.snippet
    # Without a body the snippet is empty: tags, score and answer state are never written.
    assert third.snippet == ""
    for result in (first, second, third):
        assert "score" not in result.snippet
        assert "[python" not in result.snippet


@pytest.mark.req("REQ-TEST-002")
def test_req_test_002_empty_items_is_no_results() -> None:
    """REQ-TEST-002: an empty item list is an empty list, not a failure."""
    assert stackexchange.parse(respond(fixture("empty.json"))) == []


# --- each failure class ------------------------------------------------------------------


@pytest.mark.req("REQ-RES-002")
def test_req_res_002_429_with_retry_after_seconds() -> None:
    """REQ-RES-002: HTTP 429 is rate_limited and Retry-After in seconds is kept."""
    exc = failure(
        respond(b"Too Many Requests", 429, "text/plain", **{"retry-after": "45"}),
        FailureClass.RATE_LIMITED,
    )
    assert exc.retry_after_s == 45.0


@pytest.mark.req("REQ-RES-002")
def test_req_res_002_429_with_retry_after_http_date() -> None:
    """REQ-RES-002: a Retry-After HTTP date becomes seconds from now."""
    when = email.utils.formatdate(time.time() + 90, usegmt=True)
    exc = failure(
        respond(b"", 429, "text/plain", **{"retry-after": when}), FailureClass.RATE_LIMITED
    )
    assert exc.retry_after_s is not None
    assert 70 <= exc.retry_after_s <= 91


@pytest.mark.req("REQ-RES-002")
@pytest.mark.parametrize("status", [400, 502, 200])
def test_req_res_002_throttle_violation_is_rate_limited(status: int) -> None:
    """REQ-RES-002: error 502 throttle_violation is rate_limited whatever the HTTP status.

    The seconds in its message are provider text and are not read; no numeric field, no wait.
    """
    exc = failure(respond(fixture("throttle_violation.json"), status), FailureClass.RATE_LIMITED)
    assert exc.retry_after_s is None
    assert "33635" not in repr(exc)
    assert "too many requests" not in repr(exc)


@pytest.mark.req("REQ-RES-002")
def test_req_res_002_throttle_violation_takes_its_wait_from_backoff() -> None:
    """REQ-RES-002: a numeric backoff next to the error gives the wait."""
    exc = failure(
        respond(fixture("throttle_violation_backoff.json"), 400), FailureClass.RATE_LIMITED
    )
    assert exc.retry_after_s == 42.0


@pytest.mark.req("REQ-RES-002")
def test_req_res_002_backoff_is_honoured_even_with_results() -> None:
    """REQ-RES-002: a backoff on a successful answer binds the next call: rate_limited."""
    exc = failure(respond(fixture("backoff.json")), FailureClass.RATE_LIMITED)
    assert exc.retry_after_s == 10.0


@pytest.mark.req("REQ-RES-002")
def test_req_res_002_exhausted_quota_is_rate_limited() -> None:
    """REQ-RES-002: quota_remaining 0 is rate_limited."""
    exc = failure(respond(fixture("quota_exhausted.json")), FailureClass.RATE_LIMITED)
    assert exc.retry_after_s is None


def test_backoff_is_bounded_and_must_be_numeric() -> None:
    """An absurd backoff is capped at LIM-B4; a non-numeric one gives no wait."""
    huge = b'{"items": [], "quota_remaining": 10, "backoff": 999999}'
    assert failure(respond(huge), FailureClass.RATE_LIMITED).retry_after_s == 3600.0
    text = b'{"error_id": 502, "error_name": "throttle_violation", "backoff": "30"}'
    assert failure(respond(text, 400), FailureClass.RATE_LIMITED).retry_after_s is None


@pytest.mark.req("REQ-ENG-009")
def test_req_eng_009_captcha_page_is_blocked() -> None:
    """REQ-ENG-009: an HTML CAPTCHA page is blocked, as 200 and as 403."""
    exc = failure(respond(fixture("captcha.html"), 200, "text/html"), FailureClass.BLOCKED)
    assert "robot" not in repr(exc)
    failure(respond(fixture("captcha.html"), 403, "text/html"), FailureClass.BLOCKED)


@pytest.mark.req("REQ-ENG-006")
@pytest.mark.parametrize(
    ("name", "content_type"),
    [
        ("truncated.json", JSON),
        ("maintenance.html", "text/html"),
        ("wrong_shape.json", JSON),
    ],
)
def test_req_eng_006_unusable_bodies_are_parse_failure(name: str, content_type: str) -> None:
    """REQ-ENG-006: truncated JSON, HTML instead of JSON, a wrapper without items."""
    exc = failure(respond(fixture(name), 200, content_type), FailureClass.PARSE_FAILURE)
    assert "offline" not in repr(exc)


@pytest.mark.req("REQ-ENG-006")
@pytest.mark.parametrize(
    ("name", "status"),
    [
        ("invalid_key.json", 400),
        ("key_required.json", 400),
        ("access_denied.json", 400),
    ],
)
def test_req_eng_006_key_errors_are_auth_failure(name: str, status: int) -> None:
    """REQ-ENG-006: an invalid, missing or refused key is auth_failure; no provider text."""
    exc = failure(respond(fixture(name), status), FailureClass.AUTH_FAILURE)
    assert "key" not in str(exc)
    assert "access_token" not in repr(exc)


@pytest.mark.req("REQ-ENG-006")
def test_req_eng_006_401_is_auth_failure() -> None:
    """REQ-ENG-006: a bare 401 without a wrapper is auth_failure."""
    failure(respond(b"Unauthorized", 401, "text/plain"), FailureClass.AUTH_FAILURE)


@pytest.mark.req("REQ-ENG-006")
@pytest.mark.parametrize(
    ("name", "status"),
    [("bad_parameter.json", 400), ("internal_error.json", 500)],
)
def test_req_eng_006_other_errors_are_request_failure(name: str, status: int) -> None:
    """REQ-ENG-006: bad_parameter (not the key) and internal_error are request_failure."""
    exc = failure(respond(fixture(name), status), FailureClass.REQUEST_FAILURE)
    assert "pagesize" not in repr(exc)
    assert "ref 7f3a" not in repr(exc)


@pytest.mark.req("REQ-ENG-006")
def test_req_eng_006_server_error_without_wrapper_is_request_failure() -> None:
    """REQ-ENG-006: a 500 HTML page is request_failure."""
    failure(respond(fixture("maintenance.html"), 500, "text/html"), FailureClass.REQUEST_FAILURE)


def test_long_body_is_cut_outside_a_tag() -> None:
    """Only the first part of a long body is kept, never cut inside a tag."""
    body = "<p>" + "y" * 1995 + "<code>zz</code></p>"
    answer = (
        b'{"items": [{"link": "https://stackoverflow.com/questions/1/q", "title": "t", '
        b'"creation_date": 1700000000, "body": "' + body.encode() + b'"}], "quota_remaining": 9}'
    )
    snippet = stackexchange.parse(respond(answer))[0].snippet
    assert snippet == "<p>" + "y" * 1995


def test_error_wrapper_of_odd_types_is_request_failure() -> None:
    """Error fields of unexpected types are classified, never a crash of the driver."""
    odd = b'{"error_id": [502], "error_name": {"x": 1}, "error_message": ["key"]}'
    failure(respond(odd, 400), FailureClass.REQUEST_FAILURE)


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
            stackexchange.parse(respond(bytes(body), 200, JSON))


def test_link_that_cannot_be_split_is_skipped() -> None:
    """A link that is not a valid URL drops its question only."""
    answer = (
        b'{"items": [{"link": "http://[broken", "title": "a"},'
        b' {"link": "https://stackoverflow.com/questions/2/b", "title": "b"}],'
        b' "quota_remaining": 9}'
    )
    assert [r.title for r in stackexchange.parse(respond(answer))] == ["b"]


def test_req_cmp_002_a_configured_key_raises_the_admitted_rate(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """REQ-CMP-002, REQ-CFG-004: with a key configured by reference the provider's keyed rate
    is in force; without one the keyless rate holds."""
    from rypsok.config.load import parse_settings
    from rypsok.engines.base import RateLimit
    from rypsok.engines.catalog import resolve_engines

    monkeypatch.setenv("RYPSOK_TEST_STACKEXCHANGE_KEY", "k" * 40)

    def rate(entry: dict[str, Any]) -> RateLimit:
        settings = parse_settings({"schema_version": 1, "engines": {"stackexchange": entry}})
        engine = next(x for x in resolve_engines(settings) if x.engine_id == "stackexchange")
        return engine.driver.admission.rate

    record = stackexchange.ADMISSION
    assert record.keyed_rate is not None and record.keyed_rate != record.rate
    assert rate({}) == record.rate
    assert rate({"api_key_env": "RYPSOK_TEST_STACKEXCHANGE_KEY"}) == record.keyed_rate
