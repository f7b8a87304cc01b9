"""Fuzz target: every engine driver's ``parse`` (REQ-ENG-006, REQ-SEC-014/016; THR-10).

For each driver of ``rypsok.engines.registry.DRIVER_MODULES``: a fuzzed body with status 2xx,
3xx, 4xx or 5xx, a JSON, XML, HTML, text or fuzzed Content-Type and sometimes a Retry-After,
handed to ``parse`` or, for a two-step driver (PubMed), to ``follow_up`` with a fixed query.
Invariants: ``parse`` returns results or raises ``EngineFailure`` and nothing else; a failure
carries only its class (no provider text) and a Retry-After within LIM-B4; results are at most
the driver's admitted count, with string fields and positive ranks. ``follow_up`` returns such
results or one GET to the endpoint's origin, with no line break in its URL and no body.
"""

from __future__ import annotations

from types import MappingProxyType
from urllib.parse import urlsplit

from _harness import Input, check, instrumented, main

with instrumented():
    from rypsok.contract.vocabulary import SafeSearch
    from rypsok.engines.base import (
        MAX_RETRY_AFTER_S,
        EngineFailure,
        EngineQuery,
        EngineRequest,
        EngineResponse,
        RawResult,
    )
    from rypsok.engines.registry import DRIVER_MODULES, load_driver

_DRIVERS = tuple(load_driver(engine_id) for engine_id in sorted(DRIVER_MODULES))
_STATUSES = (200, 200, 200, 200, 204, 301, 400, 401, 403, 404, 429, 500, 502, 503)
_TYPES = (
    "application/json",
    "application/json; charset=utf-8",
    "application/atom+xml",
    "application/xml",
    "text/xml",
    "text/html",
    "text/html; charset=utf-8",
    "text/plain",
    "",
)
_RETRY = ("", "120", "0", "99999999999999", "Wed, 21 Oct 2015 07:28:00 GMT", "soon", "-1")


def _query(endpoint: str) -> EngineQuery:
    """The fixed query a two-step driver's ``follow_up`` reads the fuzzed answer for."""
    return EngineQuery(
        text="fuzz",
        endpoint=endpoint,
        count=10,
        language="en",
        time_range=None,
        region="",
        safe_search=SafeSearch.MODERATE,
        contact="ops@example.org",
        now=0.0,
    )


def _check_request(request: EngineRequest, endpoint: str) -> None:
    """A second request stays a bodiless GET on the endpoint's origin (THR-08)."""
    sent, origin = urlsplit(request.url), urlsplit(endpoint)
    check(request.method == "GET" and request.body is None, "second request not a plain GET")
    check((sent.scheme, sent.netloc) == (origin.scheme, origin.netloc), "second request origin")
    check("\r" not in request.url and "\n" not in request.url, "line break in second request")


def test_one_input(data: bytes) -> None:
    """Read a fuzzed response with one driver and check the invariants."""
    source = Input(data)
    driver = source.pick(_DRIVERS)
    status = source.pick(_STATUSES)
    kind = source.pick(_TYPES) if source.byte() < 240 else source.sized_text(60)
    headers = {"content-type": kind}
    if source.flag():
        headers["retry-after"] = source.pick(_RETRY) if source.flag() else source.sized_text(20)
    # Only a two-step driver draws this flag, so the inputs of the others decode as before.
    first_step = driver.follow_up is not None and source.flag()
    response = EngineResponse(status, MappingProxyType(headers), source.raw())
    try:
        if first_step:
            endpoint = driver.admission.endpoint
            step = driver.follow_up(_query(endpoint), response)
            if isinstance(step, EngineRequest):
                _check_request(step, endpoint)
                return
            results = step
        else:
            results = driver.parse(response)
    except EngineFailure as failure:
        check(str(failure) == failure.failure_class.value, "a failure carries provider text")
        retry = failure.retry_after_s
        check(retry is None or 0 <= retry <= MAX_RETRY_AFTER_S, "Retry-After beyond LIM-B4")
        return
    check(isinstance(results, list), "parse returned no list")
    check(len(results) <= max(driver.admission.max_results, 1), "more results than admitted")
    for result in results:
        check(isinstance(result, RawResult), "not a RawResult")
        check(isinstance(result.url, str) and isinstance(result.title, str), "field types")
        check(isinstance(result.snippet, str), "snippet type")
        check(result.date is None or isinstance(result.date, str), "date type")
        check(isinstance(result.rank, int) and result.rank >= 1, "rank")


if __name__ == "__main__":
    main(test_one_input)
