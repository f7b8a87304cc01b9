"""Bounded brotli decoding (REQ-SEC-010, REQ-SEC-013, REQ-TEST-006).

brotli is a dependency of rypsok (>= 1.2, whose Decompressor bounds its output per call), so
``br`` is offered in Accept-Encoding and decoded under the same byte bound as gzip and deflate:
the bytes are counted as they are produced and a bomb stops at the bound with bounded memory.
"""

from __future__ import annotations

import os
import sys
import tracemalloc
import types

import brotli  # type: ignore[import-untyped]
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rypsok.egress import EgressError, EgressReason, decoding
from rypsok.egress.decoding import ACCEPT_ENCODING, BoundedDecoder

MiB = 1 << 20
CHUNK = 64 * 1024


def brotli_bomb(mebibytes: int) -> bytes:
    """A br stream of ``mebibytes`` MiB of zeros (1 GiB compresses to about 190 KB)."""
    compressor = brotli.Compressor(quality=1)
    zeros = bytes(MiB)
    parts = [compressor.process(zeros) for _ in range(mebibytes)]
    parts.append(compressor.finish())
    return b"".join(parts)


def decode(body: bytes, max_bytes: int, chunk: int = CHUNK, *, truncate: bool = False) -> bytes:
    decoder = BoundedDecoder("br", max_bytes, truncate=truncate)
    out = [decoder.feed(body[i : i + chunk]) for i in range(0, len(body), chunk)]
    out.append(decoder.finish())
    return b"".join(out)


def test_br_is_offered() -> None:
    """With brotli installed (a dependency), br is offered next to gzip and deflate."""
    assert ACCEPT_ENCODING == "gzip, deflate, br"


@pytest.mark.parametrize("chunk", [1, 7, 4096, CHUNK])
def test_br_round_trip(chunk: int) -> None:
    data = os.urandom(3000) + b"text " * 5000
    assert decode(brotli.compress(data), 10 * MiB, chunk) == data


@pytest.mark.req("REQ-SEC-013")
def test_req_sec_013_br_bomb_stops_at_the_bound_with_bounded_memory() -> None:
    """A br stream of 190 KB that would inflate to 1 GiB stops at the bound: the decoder
    hands out no more than the bound, and the memory allocated while decoding stays a small
    multiple of it (brotli's per-call output limit is a buffer size, so an excess is counted
    and refused, never kept)."""
    bomb = brotli_bomb(1024)
    assert len(bomb) < MiB
    bound = 4 * MiB
    decoder = BoundedDecoder("br", bound)
    handed_out = 0
    tracemalloc.start()
    try:
        with pytest.raises(EgressError) as refused:
            for i in range(0, len(bomb), CHUNK):
                handed_out += len(decoder.feed(bomb[i : i + CHUNK]))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert refused.value.reason == EgressReason.TOO_LARGE
    assert handed_out <= bound
    assert peak < 4 * bound


def test_a_truncated_br_stream_is_a_protocol_error() -> None:
    body = brotli.compress(b"words " * 20000)
    with pytest.raises(EgressError) as refused:
        decode(body[: len(body) // 2], 10 * MiB)
    assert refused.value.reason == EgressReason.PROTOCOL_ERROR


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=2000), st.integers(1, 5000))
def test_any_br_body_decodes_within_the_bound_or_is_refused(body: bytes, bound: int) -> None:
    """Arbitrary bytes labelled br never produce more than the bound nor raise anything but
    EgressError."""
    try:
        out = decode(body, bound, chunk=97)
    except EgressError:
        return
    assert len(out) <= bound


@pytest.mark.req("REQ-SEC-013", "REQ-CMP-005")
@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=3000), st.integers(1, 4000), st.integers(1, 300))
def test_br_truncate_mode_hands_out_exactly_the_first_bytes(
    data: bytes, bound: int, chunk: int
) -> None:
    """A prefix read (robots.txt) of a br body gives exactly its first ``bound`` bytes."""
    body = brotli.compress(data)
    assert decode(body, bound, chunk, truncate=True) == data[:bound]


def test_a_brotli_without_bounded_output_is_not_used(monkeypatch: pytest.MonkeyPatch) -> None:
    """A brotli module whose Decompressor cannot bound its output (before 1.2), or none at
    all, is not used: one call of it could inflate a bomb without limit."""
    unbounded = types.SimpleNamespace(Decompressor=type("Decompressor", (), {}))
    monkeypatch.setitem(sys.modules, "brotli", unbounded)
    assert decoding._load_brotli() is None
    monkeypatch.setitem(sys.modules, "brotli", None)  # import brotli raises ImportError
    assert decoding._load_brotli() is None
    monkeypatch.setitem(sys.modules, "brotli", brotli)
    assert decoding._load_brotli() is brotli
