"""Shared helpers of the driver tests for searxng and duckduckgo (form-encoded POST requests).

The JSON helpers of ``helpers_a`` (responses, queries, failure checks) are used as they are.
"""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import parse_qsl

from rypsok.contract.vocabulary import FailureClass
from rypsok.engines.base import (
    EngineFailure,
    EngineQuery,
    EngineRequest,
    EngineResponse,
    RawResult,
)
from tests.engines.helpers_a import expect_failure

FORM = "application/x-www-form-urlencoded"
# Headers a browser sends and a scraping or self-hosted driver must not imitate (REQ-ENG-014).
BROWSER_HEADERS = frozenset(
    {
        "user-agent",
        "accept-language",
        "referer",
        "origin",
        "cookie",
        "sec-fetch-site",
        "sec-fetch-mode",
        "sec-fetch-dest",
        "sec-fetch-user",
        "sec-ch-ua",
        "sec-ch-ua-mobile",
        "sec-ch-ua-platform",
        "upgrade-insecure-requests",
        "dnt",
        "cache-control",
        "pragma",
    }
)


def form_of(request: EngineRequest) -> dict[str, str]:
    """The decoded form body of a POST request; every field appears once."""
    assert request.method == "POST"
    assert request.body is not None
    assert dict(request.headers)["Content-Type"] == FORM
    pairs = parse_qsl(request.body.decode("ascii"), keep_blank_values=True, strict_parsing=True)
    names = [name for name, _ in pairs]
    assert len(names) == len(set(names)), f"repeated field in {names}"
    return dict(pairs)


def header_names(request: EngineRequest) -> set[str]:
    """The lower-case names of the headers a driver sets."""
    return {name.lower() for name, _ in request.headers}


def expect_refusal(
    build: Callable[[EngineQuery], EngineRequest], query: EngineQuery, expected: FailureClass
) -> EngineFailure:
    """``build(query)`` refuses before contact with ``expected``, carrying nothing else.

    The checks of :func:`helpers_a.expect_failure` apply: class only, no provider text, no
    chained exception.
    """

    def attempt(_: EngineResponse) -> list[RawResult]:
        build(query)
        return []

    return expect_failure(attempt, EngineResponse(status=200, headers={}, body=b""), expected)
