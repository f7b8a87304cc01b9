"""Shared helpers of the keyed-driver tests: brave, brave_news, tavily, exa, kagi, you, mojeek
and marginalia (REQ-TEST-002, REQ-CFG-004).

The fixtures are hand-written in each provider's documented shape; the keys here are made up.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import pytest

from rypsok.config.secrets import Secret
from rypsok.engines.base import AdmissionRecord, EngineQuery, EngineRequest, EngineResponse
from tests.engines.helpers_a import DOCS, JSON, fixture, http_date, make_query, respond

KEY = "rypsok-test-key-7f3a9c1e5b2d4086"  # not a real key of any provider
BuildRequest = Callable[[EngineQuery], EngineRequest]


def keyed_query(endpoint: str, **changes: Any) -> EngineQuery:
    """A validated query carrying the operator's key, as the catalog resolves it."""
    changes.setdefault("credential", Secret(KEY))
    return make_query(endpoint, **changes)


def header(request: EngineRequest, name: str) -> str | None:
    """The value of one request header (names compared case-insensitively)."""
    values = [value for key, value in request.headers if key.lower() == name.lower()]
    assert len(values) <= 1, f"header {name} repeated"
    return values[0] if values else None


def json_body(request: EngineRequest) -> Any:
    """The JSON body of a POST request, checked to be declared as JSON."""
    assert request.body is not None
    assert header(request, "Content-Type") == "application/json"
    return json.loads(request.body)


def assert_key_only_in(request: EngineRequest, carrier: str, key: str = KEY) -> None:
    """REQ-CFG-004, REQ-SEC-017: the key is in ``carrier`` only and never in a repr.

    ``carrier`` is a header name (which must be listed in ``credential_headers``) or
    ``"url"`` for a provider that takes the key only as a query parameter.
    """
    assert key not in repr(request)
    assert key not in str(request)
    if request.body is not None:
        assert key.encode() not in request.body
    carriers = [name for name, value in request.headers if key in value]
    if carrier == "url":
        assert key in request.url
        assert carriers == []
        assert request.credential_headers == frozenset()
    else:
        assert key not in request.url
        assert [name.lower() for name in carriers] == [carrier.lower()]
        assert {name.lower() for name in request.credential_headers} == {carrier.lower()}


def assert_reads_no_clock(
    build_request: BuildRequest, query: EngineQuery, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The request is a pure function of the query: its clock is ``query.now`` only."""
    expected = build_request(query)

    def no_clock() -> float:
        raise AssertionError("build_request read the clock")

    monkeypatch.setattr(time, "time", no_clock)
    assert build_request(query) == expected


def assert_keyed_record(record: AdmissionRecord, engine_id: str) -> None:
    """REQ-ENG-010, REQ-CMP-001, REQ-CFG-004: a keyed engine, enabled once its key is set."""
    assert record.engine_id == engine_id
    assert record.key == "required"
    assert record.enabled_by_default is True
    assert record.endpoint.startswith("https://")
    assert record.documentation.startswith("https://")
    assert record.rate.requests >= 1
    assert record.rate.per_seconds > 0
    assert 1 <= record.max_in_flight <= 4  # LIM-C2
    assert 1 <= record.max_query_chars <= 400  # LIM-S1
    assert record.max_results >= 10  # LIM-S3 can be asked
    assert record.permitted_use
    assert record.user_agent_note


def admission_page(engine_id: str) -> str:
    """The admission record page of an engine (REQ-CMP-001)."""
    return (DOCS / f"{engine_id}.md").read_text(encoding="utf-8")


def json_response(
    engine_id: str, name: str, status: int = 200, headers: dict[str, str] | None = None
) -> EngineResponse:
    """A JSON response built from one fixture file of an engine."""
    return respond(fixture(engine_id, name), status, JSON, headers)


def retry_after_headers(now: float) -> list[tuple[str, dict[str, str], float]]:
    """Retry-After in seconds and as an HTTP date against the response's ``Date``."""
    return [
        ("seconds", {"Retry-After": "17"}, 17.0),
        ("http-date", {"Date": http_date(now), "Retry-After": http_date(now + 90)}, 90.0),
        ("past-http-date", {"Date": http_date(now), "Retry-After": http_date(now - 60)}, 0.0),
        ("beyond-lim-b4", {"Retry-After": "999999"}, 3600.0),
    ]
