"""Keys and stored values of the result cache (REQ-CACHE-003, REQ-CACHE-004, REQ-TEST-010).

A key is valid only for the caller, the engine and the request parameters it was produced
for, and for the configuration and version it was produced under; a stored value is read back
only when it is exactly what rypsok wrote for that engine.
"""

from __future__ import annotations

import dataclasses
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rypsok.cache import MAX_VALUE_BYTES, KeyScope, decode_results, encode_results, generation_of
from rypsok.cache.keys import NOT_IN_KEY
from rypsok.config.load import parse_settings
from rypsok.config.secrets import Secret
from rypsok.contract.vocabulary import Category, SafeSearch, TimeRange
from rypsok.engines.base import EngineQuery, RawResult
from tests.cache.support import sample_results

SETTINGS = parse_settings({"schema_version": 1})
QUERY = EngineQuery(
    text="rust async",
    endpoint="https://en.wikipedia.org/w/api.php",
    count=10,
    language="en",
    time_range=None,
    region="",
    safe_search=SafeSearch.MODERATE,
)


def key(query: EngineQuery = QUERY, caller: str = "alice", engine: str = "wikipedia") -> str:
    return KeyScope(SETTINGS, process_token="p1").key(caller=caller, engine_id=engine, query=query)


@pytest.mark.parametrize(
    "change",
    [
        {"text": "rust  async"},
        {"text": "Rust async"},
        {"endpoint": "https://de.wikipedia.org/w/api.php"},
        {"count": 5},
        {"language": "de"},
        {"time_range": TimeRange.WEEK},
        {"region": "DE"},
        {"safe_search": SafeSearch.STRICT},
        {"category": Category.SCIENCE},
    ],
)
def test_req_cache_003_every_request_parameter_is_in_the_key(change: dict[str, object]) -> None:
    """REQ-CACHE-003: a request that differs in any parameter never meets another's entry.

    Proves THR-44.
    """
    assert key(dataclasses.replace(QUERY, **change)) != key()  # type: ignore[arg-type]


def test_req_cache_003_only_the_non_parameters_are_left_out() -> None:
    """REQ-CACHE-003: every EngineQuery field is a key part unless it is listed as not being a
    request parameter; a field added later is in the key by default."""
    names = {f.name for f in dataclasses.fields(EngineQuery)}
    assert {"credential", "contact", "now"} == NOT_IN_KEY
    assert names >= NOT_IN_KEY


def test_req_cache_003_engine_is_in_the_key_and_the_key_is_stable() -> None:
    """REQ-CACHE-003: another engine's answer is another entry; the same request, the same key
    whatever the clock, the contact or the credential value (fixed by the configuration).

    Proves THR-44.
    """
    assert key(engine="wikidata") != key()
    same = dataclasses.replace(QUERY, now=1.0, contact="x@example.org", credential=Secret("k"))
    assert key(same) == key()
    assert len(key()) == 64 and int(key(), 16) >= 0  # a SHA-256, hex: no query text in it


def test_req_cache_003_configuration_and_version_are_in_the_key() -> None:
    """REQ-CACHE-003: no entry outlives the configuration or the version that produced it,
    even in a Redis that outlives the process.

    Proves THR-44.
    """
    other = parse_settings({"schema_version": 1, "search": {"results_per_engine": 9}})
    assert generation_of(other) != generation_of(SETTINGS)
    assert generation_of(SETTINGS, "9.9.9") != generation_of(SETTINGS)
    assert generation_of(parse_settings({"schema_version": 1})) == generation_of(SETTINGS)
    scope = KeyScope(other, process_token="p1")
    assert scope.key(caller="alice", engine_id="wikipedia", query=QUERY) != key()


def test_req_cache_004_callers_are_isolated() -> None:
    """REQ-CACHE-004: over HTTP each authenticated caller has its own entries; the same caller
    meets its entries on every replica of the same configuration.

    Proves THR-38.
    """
    assert key(caller="bob") != key(caller="alice")
    replica = KeyScope(SETTINGS, process_token="p2")
    assert replica.key(caller="alice", engine_id="wikipedia", query=QUERY) == key()


def test_req_cache_004_the_process_is_the_unit_of_the_local_caller() -> None:
    """REQ-CACHE-004: over stdio the process is the isolation unit, so two processes sharing a
    Redis never share the local caller's entries; nor does a caller named like it.

    Proves THR-38.
    """
    one = KeyScope(SETTINGS).key(caller="local", engine_id="wikipedia", query=QUERY)
    two = KeyScope(SETTINGS).key(caller="local", engine_id="wikipedia", query=QUERY)
    assert one != two
    assert "p1" not in repr(KeyScope(SETTINGS, process_token="p1"))


def test_codec_round_trip_is_exact() -> None:
    """Results come back exactly as stored, in order."""
    results = sample_results(5)
    value = encode_results("hackernews", results)
    assert value is not None
    assert decode_results("hackernews", value) == tuple(results)
    assert decode_results("hackernews", encode_results("hackernews", []) or b"") == ()


@given(
    st.lists(
        st.builds(
            RawResult,
            url=st.text(max_size=50),
            title=st.text(max_size=50),
            snippet=st.text(max_size=80),
            rank=st.integers(min_value=0, max_value=1000),
            date=st.none() | st.text(max_size=20),
        ),
        max_size=20,
    )
)
def test_codec_round_trip_property(results: list[RawResult]) -> None:
    """Any results with a UTF-8 form survive storage; others are not stored at all."""
    value = encode_results("e", results)
    texts = [t for r in results for t in (r.url, r.title, r.snippet, r.date or "")]
    if any("\ud800" <= c <= "\udfff" for t in texts for c in t):  # lone surrogates
        assert value is None
    else:
        assert value is not None and decode_results("e", value) == tuple(results)


def _stored(**change: object) -> bytes:
    value = json.loads(encode_results("hackernews", sample_results(2)) or b"")
    value.update(change)
    return json.dumps(value).encode()


def _result(**change: object) -> bytes:
    value = json.loads(encode_results("hackernews", sample_results(1)) or b"")
    value["results"][0].update(change)
    return json.dumps(value).encode()


@pytest.mark.parametrize(
    "value",
    [
        b"",
        b"\x80\x81 not utf-8",
        b"{not json",
        b"[]",
        b"null",
        _stored(format=2),
        _stored(engine="gdelt"),
        _stored(extra=True),
        _stored(results="none"),
        _result(rank="1"),
        _result(rank=True),
        _result(rank=-1),
        _result(url=None),
        _result(unknown="x"),
        json.dumps({"format": 1, "engine": "hackernews"}).encode(),
        json.dumps(
            {
                "format": 1,
                "engine": "hackernews",
                "results": [json.loads(_result())["results"][0]] * 101,
            }
        ).encode(),
        b" " * (MAX_VALUE_BYTES + 1),
    ],
)
def test_req_cache_006_corrupt_or_foreign_values_are_misses(value: bytes) -> None:
    """REQ-CACHE-006: a value rypsok did not write for this engine is a miss, never an error.

    Proves THR-43, THR-44.
    """
    assert decode_results("hackernews", value) is None


def test_results_without_utf8_form_are_not_stored() -> None:
    """A lone surrogate in a driver's text cannot be stored faithfully: not cached."""
    bad = [RawResult(url="https://e.org/", title="a\ud800b", snippet="", rank=1)]
    assert encode_results("e", bad) is None
