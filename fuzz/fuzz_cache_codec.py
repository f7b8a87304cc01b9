"""Fuzz target: cached values read back from the result cache (REQ-CACHE-006, REQ-SEC-020; THR-43).

With ``[cache] backend = "redis"`` the bytes ``decode_results`` reads are external data: a
shared Redis may hold values of other replicas, configurations, versions or programs. Three
modes, chosen by the first byte:

* **raw**: any bytes as a stored value. Invariants: no exception (a value rypsok cannot read is
  a miss, None); an accepted value is one UTF-8 JSON object that Python's own parser reads the
  same way, of format 1, for the engine asked, with at most ``MAX_RESULTS`` results whose fields
  have their exact types and bounds; the results it gives are stored again as an equal value.
* **shaped**: a JSON value built from fuzzed choices (right and wrong types, keys, engines,
  lengths). Invariant: it is accepted exactly when it is a value rypsok could have written for
  that engine (a lone surrogate, which rypsok never writes, may be refused too).
* **round trip**: fuzzed results encoded and decoded again come back equal (or are not stored,
  when a text has no UTF-8 form); every proper prefix of a stored value is a miss.

``format`` is compared by value: pydantic's ``Literal[1]`` admits ``true`` and ``1.0`` even in
strict mode (docs/security.md, SEC-18); that changes nothing that is read.
"""

from __future__ import annotations

import json
import math
from typing import Any

from _harness import Input, check, fail, instrumented, main

with instrumented():
    from rypsok.cache.base import MAX_VALUE_BYTES
    from rypsok.cache.codec import MAX_RESULTS, decode_results, encode_results
    from rypsok.engines.base import RawResult

_ENGINES = ("hackernews", "gdelt", "wikipedia", "")
_FIELDS = ("url", "title", "snippet", "rank", "date")
_BOUNDS = {"url": 16_384, "title": 16_384, "snippet": 65_536, "date": 256}
_TEXTS = ("", "https://example.org/", "<b>x</b>", "\u200b", "\ud800", "\U0001f600", "\x00")


def _valid_result(item: object) -> bool:
    if not isinstance(item, dict) or set(item) != set(_FIELDS):
        return False
    rank = item["rank"]
    if type(rank) is not int or not 0 <= rank <= 1_000_000:
        return False
    names: tuple[str, ...] = ("url", "title", "snippet")
    if item["date"] is not None:
        names += ("date",)
    return all(isinstance(item[n], str) and len(item[n]) <= _BOUNDS[n] for n in names)


def _valid(value: object, engine: str) -> bool:
    """Whether ``value`` (parsed JSON) is a value rypsok writes for ``engine``."""
    if not isinstance(value, dict) or set(value) != {"format", "engine", "results"}:
        return False
    if value["format"] != 1:  # by value: see the module docstring
        return False
    results = value["results"]
    return (
        value["engine"] == engine
        and isinstance(value["engine"], str)
        and isinstance(results, list)
        and len(results) <= MAX_RESULTS
        and all(_valid_result(r) for r in results)
    )


def _has_lone_surrogate(value: object) -> bool:
    if isinstance(value, str):
        return any("\ud800" <= c <= "\udfff" for c in value)
    if isinstance(value, dict):
        return any(_has_lone_surrogate(k) or _has_lone_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_lone_surrogate(v) for v in value)
    return False


def _as_stored(results: tuple[RawResult, ...]) -> list[dict[str, Any]]:
    return [{name: getattr(r, name) for name in _FIELDS} for r in results]


def _check_accepted(engine: str, value: bytes, results: tuple[RawResult, ...]) -> None:
    check(len(value) <= MAX_VALUE_BYTES, "a value above MAX_VALUE_BYTES was read")
    check(len(results) <= MAX_RESULTS, "more than MAX_RESULTS results were read")
    try:
        parsed = json.loads(value.decode("utf-8"), parse_constant=_refuse_constant)
    except ValueError:
        fail("a value Python's JSON parser refuses (or not UTF-8) was read")
    check(_valid(parsed, engine), "a value rypsok never writes for this engine was read")
    check(parsed["results"] == _as_stored(results), "the value was read otherwise than JSON")
    again = encode_results(engine, results)
    if again is not None:
        check(decode_results(engine, again) == results, "results read back do not round-trip")


def _refuse_constant(name: str) -> float:
    raise ValueError(name)


def _raw(source: Input) -> None:
    engine = source.pick(_ENGINES)
    value = source.raw()
    results = decode_results(engine, value)
    if results is not None:
        _check_accepted(engine, value, results)


def _wrong(source: Input) -> bool:
    """Whether to build a wrong part this time (one in eight), so that most values are right."""
    return source.integer(0, 7) == 7  # exhausted input (0) builds right parts


def _shaped_text(source: Input) -> object:
    if _wrong(source):
        return source.pick((None, 0, 1, [], {}, True, "x" * 65_537))
    if source.integer(0, 15) == 0:  # at and just past each bound
        return "x" * source.pick((256, 257, 16_384, 16_385, 65_536, 65_537))
    return source.pick(_TEXTS) + source.sized_text(32)


def _shaped_rank(source: Input) -> object:
    rank = source.integer(0, 1_000_000)
    if _wrong(source):
        return source.pick((-1, 1_000_001, True, False, 1.0, "1", None, 2**70, math.inf))
    return rank


def _shaped_result(source: Input) -> object:
    if _wrong(source):
        return source.pick(("x", 1, None, [], True))
    item: dict[str, object] = {}
    for name in _FIELDS:
        if name == "date" and source.flag():
            item[name] = None
        elif not _wrong(source):
            item[name] = _shaped_rank(source) if name == "rank" else _shaped_text(source)
    if _wrong(source):
        item[source.pick(("extra", "URL", "rank "))] = 1
    return item


def _shaped(source: Input) -> None:
    engine = source.pick(_ENGINES)
    value: dict[str, object] = {
        "format": source.pick((2, 0, "1", None, True, 1.0)) if _wrong(source) else 1,
        "engine": source.pick((*_ENGINES, None, 1)) if _wrong(source) else engine,
        "results": [],
    }
    count = source.integer(0, 8)
    if _wrong(source):
        count = source.pick((MAX_RESULTS, MAX_RESULTS + 1))
    template = _shaped_result(source)
    results = [template if i % 2 or source.remaining == 0 else _shaped_result(source)
               for i in range(count)]  # fmt: skip
    value["results"] = source.pick(("none", None, {})) if _wrong(source) else results
    if _wrong(source):
        value[source.pick(("extra", "Format"))] = True
    if _wrong(source):
        del value[source.pick(("format", "engine", "results"))]
    try:
        encoded = json.dumps(value, ensure_ascii=source.flag(), allow_nan=True).encode(
            "utf-8", errors="surrogatepass"
        )
    except (ValueError, OverflowError):
        return
    results_read = decode_results(engine, encoded)
    expected = _valid(value, engine) and len(encoded) <= MAX_VALUE_BYTES
    if results_read is not None:
        check(expected, "a value rypsok never writes was read")
        _check_accepted(engine, encoded, results_read)
    elif expected and not _has_lone_surrogate(value):
        fail("a value rypsok writes for this engine was refused")


def _round_trip(source: Input) -> None:
    engine = source.pick(_ENGINES)
    results = [
        RawResult(
            url=source.sized_text(40),
            title=source.sized_text(40),
            snippet=source.sized_text(80),
            rank=source.integer(0, 1_000_000),
            date=source.sized_text(20) if source.flag() else None,
        )
        for _ in range(source.integer(0, 12))
    ]
    value = encode_results(engine, results)
    texts = [t for r in results for t in (r.url, r.title, r.snippet, r.date or "")]
    if value is None:
        check(any(_has_lone_surrogate(t) for t in texts), "storable results were not stored")
        return
    check(decode_results(engine, value) == tuple(results), "stored results do not come back")
    other = next(e for e in _ENGINES if e != engine)
    check(decode_results(other, value) is None, "another engine's value was read")
    cut = source.integer(0, max(0, len(value) - 1))
    check(decode_results(engine, value[:cut]) is None, "a truncated value was read")


def test_one_input(data: bytes) -> None:
    """Read the input as a stored value (or build one from it) and check the invariants."""
    source = Input(data)
    mode = source.byte() % 3
    if mode == 0:
        _raw(source)
    elif mode == 1:
        _shaped(source)
    else:
        _round_trip(source)


if __name__ == "__main__":
    main(test_one_input)
