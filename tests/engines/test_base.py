"""The helpers every driver shares, in ``rypsok.engines.base`` (one copy, used by all).

REQ-CMP-002 and LIM-B4 (Retry-After, measured against the answer's own Date), REQ-RES-002,
REQ-ENG-006 (status classes), REQ-ENG-012 (raw text clipped, never inside markup), THR-08
(query text stays one parameter).
"""

from __future__ import annotations

import importlib
import time
from urllib.parse import parse_qsl, urlsplit

import pytest

from rypsok.contract.vocabulary import FailureClass
from rypsok.engines import base
from rypsok.engines.base import (
    MAX_RETRY_AFTER_S,
    EngineFailure,
    EngineResponse,
    append_query,
    balanced_text,
    check_status,
    clip_raw,
    contact_email,
    http_url,
    is_http_url,
    parse_retry_after,
    replace_query,
    retry_after,
    server_time,
)
from rypsok.engines.registry import DRIVER_MODULES
from tests.engines.helpers_a import NOW, http_date

FAR_FUTURE = NOW + 10 * 365 * 86_400.0  # a local clock ten years ahead of the server's


@pytest.fixture
def skewed_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """The local clock far from the servers': a delta taken from it would be wrong."""
    monkeypatch.setattr(time, "time", lambda: FAR_FUTURE)


# --- the response's time and Retry-After --------------------------------------------------


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"date": http_date(NOW)}, NOW),
        ({"date": "Tue, 01 Dec 2026 00:00:00 GMT"}, NOW),
        ({"date": "Tuesday, 01-Dec-26 00:00:00 GMT"}, NOW),  # RFC 850, obsolete but valid
        ({"date": "Tue, 01 Dec 2026 00:00:00"}, None),  # no zone: not an HTTP date
        ({"date": "yesterday"}, None),
        ({"date": ""}, None),
        ({}, None),
    ],
)
def test_server_time_reads_the_date_header(headers: dict[str, str], expected: float | None) -> None:
    """The answer's Date as an epoch; anything unreadable is None, never an exception."""
    assert server_time(headers) == expected


@pytest.mark.req("REQ-CMP-002")
@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"retry-after": "17"}, 17.0),
        ({"retry-after": " 17 "}, 17.0),
        ({"date": http_date(NOW), "retry-after": http_date(NOW + 90)}, 90.0),
        ({"date": http_date(NOW), "retry-after": http_date(NOW - 60)}, 0.0),
        ({"date": http_date(NOW), "retry-after": http_date(NOW + 86_400)}, MAX_RETRY_AFTER_S),
        ({"retry-after": "999999"}, MAX_RETRY_AFTER_S),
        ({"retry-after": "soon"}, None),
        ({"retry-after": "\u00b2"}, None),  # a Latin-1 superscript digit (SEC-01)
        ({"retry-after": "-5"}, None),
        ({}, None),
    ],
)
def test_req_cmp_002_retry_after_counts_from_the_answers_date(
    skewed_clock: None, headers: dict[str, str], expected: float | None
) -> None:
    """REQ-CMP-002, LIM-B4: delta-seconds as given; an HTTP date measured against the
    answer's own Date, whatever the local clock says; at most LIM-B4; garbage is None."""
    assert retry_after(headers) == expected


def test_retry_after_without_a_date_falls_back_to_the_local_clock(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without a readable Date the local clock stands in for the server's."""
    monkeypatch.setattr(time, "time", lambda: NOW)
    assert retry_after({"retry-after": http_date(NOW + 120)}) == 120.0
    assert retry_after({"date": "garbage", "retry-after": http_date(NOW + 120)}) == 120.0


def test_parse_retry_after_takes_now_from_the_caller(skewed_clock: None) -> None:
    """``now`` replaces the local clock for an HTTP date; seconds ignore it."""
    assert parse_retry_after(http_date(NOW + 30), now=NOW) == 30.0
    assert parse_retry_after("30", now=0.0) == 30.0
    assert parse_retry_after(None) is None


@pytest.mark.req("REQ-RES-002")
@pytest.mark.parametrize("status", [429, 503])
def test_req_res_002_check_status_uses_the_answers_date(skewed_clock: None, status: int) -> None:
    """REQ-RES-002, REQ-CMP-002: 429, and 503 with Retry-After, are rate_limited with the wait
    measured against the answer's Date header, not the local clock."""
    headers = {
        "content-type": "text/html",
        "date": http_date(NOW),
        "retry-after": http_date(NOW + 300),
    }
    with pytest.raises(EngineFailure) as caught:
        check_status(EngineResponse(status, headers, b"<html>busy</html>"))
    assert caught.value.failure_class is FailureClass.RATE_LIMITED
    assert caught.value.retry_after_s == 300.0


@pytest.mark.req("REQ-ENG-006")
@pytest.mark.parametrize(
    ("status", "content_type", "expected"),
    [
        (200, "application/json", None),
        (204, "application/json", None),
        (401, "application/json", FailureClass.AUTH_FAILURE),
        (407, "text/plain", FailureClass.AUTH_FAILURE),
        (403, "application/json", FailureClass.AUTH_FAILURE),
        (403, "text/html; charset=utf-8", FailureClass.BLOCKED),
        (503, "text/html", FailureClass.REQUEST_FAILURE),  # no Retry-After: not a rate limit
        (500, "text/html", FailureClass.REQUEST_FAILURE),
        (302, "text/html", FailureClass.REQUEST_FAILURE),
    ],
)
def test_req_eng_006_check_status_classes(
    status: int, content_type: str, expected: FailureClass | None
) -> None:
    """REQ-ENG-006: each status is exactly one class (or none for 2xx)."""
    response = EngineResponse(status, {"content-type": content_type}, b"")
    if expected is None:
        check_status(response)
        return
    with pytest.raises(EngineFailure) as caught:
        check_status(response)
    assert caught.value.failure_class is expected
    assert caught.value.retry_after_s is None


# --- URLs ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("https://example.org/a?b=c#d", True),
        ("http://example.org", True),
        ("HTTPS://EXAMPLE.ORG/", True),
        ("ftp://example.org/", False),
        ("javascript:alert(1)", False),
        ("//example.org/a", False),
        ("/relative/path", False),
        ("https://", False),
        ("http://[::1", False),  # an unbalanced IPv6 bracket: urlsplit raises
        ("", False),
    ],
)
def test_is_http_url(value: str, expected: bool) -> None:
    """Only absolute http(s) URLs with a host; a malformed one is False, never an exception."""
    assert is_http_url(value) is expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("  https://example.org/a?b=c#frag  ", "https://example.org/a?b=c#frag"),
        ("http://example.org", "http://example.org"),
        ("mailto:someone@example.org", None),
        ("https:///no-host", None),
        ("http://[::1", None),
        (None, None),
        (42, None),
        (["https://example.org/"], None),
    ],
)
def test_http_url(value: object, expected: str | None) -> None:
    """An http(s) URL with a host, stripped of surrounding space; anything else is None."""
    assert http_url(value) == expected


def test_append_query_keeps_the_endpoints_own_query_and_origin() -> None:
    """Parameters are appended to the endpoint's query; scheme, host and path are the
    endpoint's and its fragment is dropped; a hostile value stays one parameter (THR-08)."""
    url = append_query(
        "https://api.example.org/v1/search?site=x#frag",
        [("q", "a&key=evil#x"), ("n", "10")],
    )
    parts = urlsplit(url)
    assert (parts.scheme, parts.netloc, parts.path, parts.fragment) == (
        "https",
        "api.example.org",
        "/v1/search",
        "",
    )
    assert parse_qsl(parts.query) == [("site", "x"), ("q", "a&key=evil#x"), ("n", "10")]


def test_replace_query_replaces_the_endpoints_query() -> None:
    """The parameters become the whole query; the endpoint's own query and fragment go."""
    url = replace_query("https://api.example.org/search?old=1#frag", {"q": "a b", "n": "3"})
    assert url == "https://api.example.org/search?q=a+b&n=3"


# --- text ---------------------------------------------------------------------------------


@pytest.mark.req("REQ-ENG-012")
@pytest.mark.parametrize(
    ("raw", "limit", "expected"),
    [
        ("short", 10, "short"),
        ("abc<b>def</b>", 5, "abc"),  # never inside a tag
        ("abc<b>def</b>", 6, "abc<b>"),  # a whole tag stays
        ("abc &amp; def", 6, "abc "),  # never inside an entity reference
        ("abc &amp; def", 9, "abc &amp;"),  # a whole entity stays
        ("a < b" + "x" * 600, 600, ("a < b" + "x" * 600)[:600]),  # a far bare < is text
        ("x" * 50 + " & " + "y" * 60, 100, "x" * 50 + " & " + "y" * 47),  # a far bare & too
    ],
)
def test_req_eng_012_clip_raw(raw: str, limit: int, expected: str) -> None:
    """REQ-ENG-012: raw text is cut to the limit, never inside markup; the pipeline cleans."""
    assert clip_raw(raw, limit) == expected


@pytest.mark.parametrize(
    ("contact", "expected"),
    [
        ("ops@example.org", "ops@example.org"),
        ("  mailto:ops@example.org ", "ops@example.org"),
        ("MAILTO:ops@example.org", "ops@example.org"),
        ("https://example.org/contact", None),
        ("ops at example.org", None),
        ("ops@example", None),
        ("a@b@example.org", None),
        ("", None),
    ],
)
def test_contact_email(contact: str, expected: str | None) -> None:
    """The operator contact is an e-mail address only when it has the shape of one."""
    assert contact_email(contact) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("malaria vaccine", "malaria vaccine"),
        ('(a OR b) AND "c d"', '(a OR b) AND "c d"'),
        ("a) OR (b", "a OR b"),  # closes before it opens: no group may be escaped
        ("(a OR b", "a OR b"),
        ('say "hi', "say hi"),
        ("  spaced \t out  ", "spaced out"),
        ('( "', ""),
    ],
)
def test_balanced_text(text: str, expected: str) -> None:
    """Unpaired parentheses or quotes are dropped; paired ones and the words stay."""
    assert balanced_text(text) == expected


# --- one copy -----------------------------------------------------------------------------

SHARED = (
    "_is_http_url",
    "_http_url",
    "_server_time",
    "_with_query",
    "_clip",
    "_mailto",
    "_balanced",
    "_link",
    "_absolute",
)


@pytest.mark.parametrize("module_name", [*sorted(set(DRIVER_MODULES.values())), "brave_api"])
def test_drivers_keep_no_private_copy_of_a_shared_helper(module_name: str) -> None:
    """The helpers above exist once, in base; a driver that needs one imports it."""
    module = importlib.import_module(f"rypsok.engines.{module_name}")
    assert [name for name in SHARED if hasattr(module, name)] == []
    assert hasattr(base, "retry_after") and hasattr(base, "server_time")
