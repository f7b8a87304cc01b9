"""Shared helpers of the driver tests for wikipedia, wikidata, hackernews, gdelt and github.

Fixtures live in ``tests/engines/fixtures/<engine id>/`` and are hand-written in the provider's
documented shape (REQ-TEST-002); each test module names its shape sources.
"""

from __future__ import annotations

import email.utils
import json
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest

from rypsok.contract.vocabulary import FailureClass, SafeSearch
from rypsok.engines.base import EngineFailure, EngineQuery, EngineRequest, EngineResponse, RawResult

FIXTURES = Path(__file__).resolve().parent / "fixtures"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "engines"
NOW = 1_796_083_200.0  # 2026-12-01T00:00:00Z
JSON = "application/json; charset=utf-8"
HTML = "text/html; charset=utf-8"
TEXT = "text/plain; charset=utf-8"

Parse = Callable[[EngineResponse], list[RawResult]]


def fixture(engine_id: str, name: str) -> bytes:
    """The bytes of one fixture file of an engine."""
    return (FIXTURES / engine_id / name).read_bytes()


def fixture_json(engine_id: str, name: str) -> Any:
    """One JSON fixture, decoded, for tests that derive a variant from it."""
    return json.loads(fixture(engine_id, name))


def respond(
    body: bytes | Any,
    status: int = 200,
    content_type: str = JSON,
    headers: Mapping[str, str] | None = None,
) -> EngineResponse:
    """A decoded response as the pipeline hands it to ``parse`` (header names lower case)."""
    raw = body if isinstance(body, bytes) else json.dumps(body).encode("utf-8")
    all_headers = {"content-type": content_type}
    all_headers.update({k.lower(): v for k, v in (headers or {}).items()})
    return EngineResponse(status=status, headers=all_headers, body=raw)


def make_query(endpoint: str, **changes: Any) -> EngineQuery:
    """A validated query as the pipeline builds it, with a fixed clock."""
    values: dict[str, Any] = {
        "text": "relativity",
        "endpoint": endpoint,
        "count": 10,
        "language": "en",
        "time_range": None,
        "region": "",
        "safe_search": SafeSearch.MODERATE,
        "now": NOW,
    }
    values.update(changes)
    return EngineQuery(**values)


def params_of(request: EngineRequest) -> dict[str, str]:
    """The decoded query parameters of a request; every parameter appears once."""
    pairs = parse_qsl(urlsplit(request.url).query, keep_blank_values=True)
    names = [name for name, _ in pairs]
    assert len(names) == len(set(names)), f"repeated parameter in {names}"
    return dict(pairs)


def origin_of(url: str) -> tuple[str, str]:
    """Scheme and host of a URL."""
    parts = urlsplit(url)
    return parts.scheme, parts.netloc


def http_date(epoch: float) -> str:
    """An HTTP date (RFC 9110 IMF-fixdate)."""
    return email.utils.formatdate(epoch, usegmt=True)


def expect_failure(parse: Parse, response: EngineResponse, expected: FailureClass) -> EngineFailure:
    """The failure ``parse`` raises, checked to carry its class and nothing of the provider.

    REQ-ENG-006: str(), repr() and args hold the class value only, and no exception with the
    provider's text is chained to it.
    """
    with pytest.raises(EngineFailure) as caught:
        parse(response)
    failure = caught.value
    assert failure.failure_class is expected
    assert failure.args == (expected.value,)
    assert str(failure) == expected.value
    assert repr(failure) == f"EngineFailure({expected.value!r})"
    assert failure.__cause__ is None
    assert failure.__context__ is None or failure.__suppress_context__
    assert not getattr(failure, "__notes__", None)
    return failure


def common_failures(engine_id: str) -> list[tuple[str, EngineResponse, FailureClass]]:
    """The error classes every driver shares (REQ-ENG-006, REQ-ENG-009, REQ-RES-002).

    Timeout is the pipeline's (the driver never sees a response), so it is not here.
    """
    challenge = fixture(engine_id, "challenge.html")
    page = fixture(engine_id, "error_page.html")
    return [
        ("429", respond(page, 429, HTML), FailureClass.RATE_LIMITED),
        ("429-json", respond(b'{"message": "slow down"}', 429), FailureClass.RATE_LIMITED),
        (
            "503-retry-after",
            respond(page, 503, HTML, {"Retry-After": "30"}),
            FailureClass.RATE_LIMITED,
        ),
        ("captcha-200", respond(challenge, 200, HTML), FailureClass.BLOCKED),
        ("captcha-403", respond(challenge, 403, HTML), FailureClass.BLOCKED),
        (
            "truncated-json",
            respond(fixture(engine_id, "truncated.json")),
            FailureClass.PARSE_FAILURE,
        ),
        ("html-not-json", respond(page, 200, HTML), FailureClass.PARSE_FAILURE),
        (
            "wrong-shape",
            respond(fixture(engine_id, "wrong_shape.json")),
            FailureClass.PARSE_FAILURE,
        ),
        ("json-array", respond(b"[]"), FailureClass.PARSE_FAILURE),
        ("401", respond(b'{"message": "unauthorized"}', 401), FailureClass.AUTH_FAILURE),
        ("500", respond(page, 500, HTML), FailureClass.REQUEST_FAILURE),
        ("502", respond(page, 502, HTML), FailureClass.REQUEST_FAILURE),
    ]


def retry_after_cases() -> list[tuple[str, dict[str, str], tuple[float, float] | None]]:
    """Retry-After in seconds and as an HTTP date, with the accepted range of the result."""
    now = time.time()
    return [
        ("seconds", {"Retry-After": "120"}, (120.0, 120.0)),
        ("http-date", {"Retry-After": http_date(now + 600)}, (500.0, 600.0)),
        ("past-http-date", {"Retry-After": http_date(now - 60)}, (0.0, 0.0)),
        ("beyond-lim-b4", {"Retry-After": "999999"}, (3600.0, 3600.0)),
        ("unreadable", {"Retry-After": "soon"}, None),
        ("absent", {}, None),
    ]


def assert_retry_after(failure: EngineFailure, expected: tuple[float, float] | None) -> None:
    """The failure's retry delay lies in the expected range, or is absent."""
    if expected is None:
        assert failure.retry_after_s is None
    else:
        assert failure.retry_after_s is not None
        assert expected[0] <= failure.retry_after_s <= expected[1]


def assert_ranks(results: list[RawResult]) -> None:
    """Ranks are 1..n in the order given (REQ-ENG-005)."""
    assert [r.rank for r in results] == list(range(1, len(results) + 1))
