"""Fuzz target: every engine driver's ``parse`` (REQ-ENG-006, REQ-SEC-014/016; THR-10).

For each driver of ``rypsok.engines.registry.DRIVER_MODULES``: a fuzzed body with status 2xx,
3xx, 4xx or 5xx, a JSON, XML, HTML, text or fuzzed Content-Type and sometimes a Retry-After.
Invariants: ``parse`` returns results or raises ``EngineFailure`` and nothing else; a failure
carries only its class (no provider text) and a Retry-After within LIM-B4; results are at most
the driver's admitted count, with string fields and positive ranks.
"""

from __future__ import annotations

from types import MappingProxyType

from _harness import Input, check, instrumented, main

with instrumented():
    from rypsok.engines.base import MAX_RETRY_AFTER_S, EngineFailure, EngineResponse, RawResult
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


def test_one_input(data: bytes) -> None:
    """Parse a fuzzed response with one driver and check the invariants."""
    source = Input(data)
    driver = source.pick(_DRIVERS)
    status = source.pick(_STATUSES)
    kind = source.pick(_TYPES) if source.byte() < 240 else source.sized_text(60)
    headers = {"content-type": kind}
    if source.flag():
        headers["retry-after"] = source.pick(_RETRY) if source.flag() else source.sized_text(20)
    response = EngineResponse(status, MappingProxyType(headers), source.raw())
    try:
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
