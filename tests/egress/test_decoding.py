"""Bounded decompression (REQ-SEC-010, REQ-SEC-013, REQ-TEST-006).

Decompressed bytes are counted as they are produced: the decoder never hands out more than
its bound, and a bomb stops there with memory bounded by it.
"""

from __future__ import annotations

import gzip
import importlib.util
import os
import tracemalloc
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rypsok.egress import EgressError, EgressReason
from rypsok.egress.decoding import ACCEPT_ENCODING, BoundedDecoder

from ._support import zero_bomb

MiB = 1 << 20
CHUNK = 64 * 1024


def compress(data: bytes, wbits: int) -> bytes:
    compressor = zlib.compressobj(6, zlib.DEFLATED, wbits)
    return compressor.compress(data) + compressor.flush()


def decode(encoding: str, body: bytes, max_bytes: int, chunk: int = CHUNK) -> bytes:
    decoder = BoundedDecoder(encoding, max_bytes)
    out = [decoder.feed(body[i : i + chunk]) for i in range(0, len(body), chunk)]
    out.append(decoder.finish())
    return b"".join(out)


@pytest.mark.req("REQ-SEC-013")
@pytest.mark.parametrize(("encoding", "wbits"), [("gzip", 31), ("deflate", 15), ("deflate", -15)])
def test_req_sec_013_bomb_stops_at_the_bound_with_bounded_memory(encoding: str, wbits: int) -> None:
    """A 1 MiB stream that would inflate to 1 GiB stops at the bound (REQ-TEST-006).

    The decoder's own count and the bytes actually handed out both stay within the bound,
    and the peak of memory allocated while decoding is a small multiple of it.

    Proves THR-14.
    """
    bomb = zero_bomb(wbits, 1024)
    assert len(bomb) < 2 * MiB
    bound = 4 * MiB
    decoder = BoundedDecoder(encoding, bound)
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
    assert decoder.produced <= bound
    assert decoder.produced == bound  # it really inflated up to the bound, and no further
    assert peak < 4 * bound


@pytest.mark.parametrize(
    ("encoding", "wbits"), [("gzip", 31), ("x-gzip", 31), ("deflate", 15), ("deflate", -15)]
)
@pytest.mark.parametrize("chunk", [1, 7, 4096, CHUNK])
def test_round_trip(encoding: str, wbits: int, chunk: int) -> None:
    data = os.urandom(3000) + b"text " * 5000
    assert decode(encoding, compress(data, wbits), len(data), chunk) == data


def test_exactly_the_bound_is_accepted_one_more_is_not() -> None:
    data = b"x" * 100_000
    for encoding, body in (("identity", data), ("gzip", gzip.compress(data))):
        assert decode(encoding, body, len(data)) == data
        with pytest.raises(EgressError) as refused:
            decode(encoding, body, len(data) - 1)
        assert refused.value.reason == EgressReason.TOO_LARGE


def test_identity_is_bounded_too() -> None:
    decoder = BoundedDecoder("", 10)
    assert decoder.feed(b"0123456789") == b"0123456789"
    with pytest.raises(EgressError):
        decoder.feed(b"x")
    assert decoder.produced == 10


def test_gzip_members_are_concatenated() -> None:
    body = gzip.compress(b"first ") + gzip.compress(b"second")
    assert decode("gzip", body, 100, chunk=5) == b"first second"


@pytest.mark.parametrize(
    ("encoding", "body"),
    [
        # mtime=0: the bytes name the test, and a timestamp in them would make its id
        # differ between two collections (mutmut collects, then runs by id).
        ("gzip", gzip.compress(b"hello world" * 100, mtime=0)[:-12]),  # truncated
        ("gzip", gzip.compress(b"hello", mtime=0) + b"garbage!"),  # trailing data
        ("gzip", gzip.compress(b"hello", mtime=0) + b"\x1f"),  # a member cut after one byte
        ("gzip", b"not gzip at all"),
        ("deflate", compress(b"hello", 15) + b"x"),
        ("deflate", compress(b"hello" * 100, -15)[:-3]),
        ("deflate", b"x"),
    ],
)
def test_broken_streams_are_protocol_errors(encoding: str, body: bytes) -> None:
    with pytest.raises(EgressError) as refused:
        decode(encoding, body, 1 << 20)
    assert refused.value.reason == EgressReason.PROTOCOL_ERROR


@pytest.mark.parametrize("encoding", ["gzip, gzip", "deflate, gzip", "compress", "zstd", "bogus"])
def test_stacked_or_unknown_codings_refused(encoding: str) -> None:
    with pytest.raises(EgressError) as refused:
        BoundedDecoder(encoding, 100)
    assert refused.value.reason == EgressReason.PROTOCOL_ERROR


def test_identity_spellings() -> None:
    for encoding in ("", "identity", " Identity ", "identity, identity"):
        assert BoundedDecoder(encoding, 10).coding == "identity"
    assert BoundedDecoder("GZIP", 10).coding == "gzip"


def test_empty_body_with_a_coding_is_empty() -> None:
    assert decode("gzip", b"", 10) == b""
    assert decode("deflate", b"", 10) == b""


@pytest.mark.skipif(importlib.util.find_spec("brotli") is not None, reason="brotli installed")
def test_br_neither_offered_nor_accepted_without_brotli() -> None:
    # brotli is a dependency; this holds for an installation that lacks it anyway.
    assert ACCEPT_ENCODING == "gzip, deflate"
    with pytest.raises(EgressError):
        BoundedDecoder("br", 100)


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(["gzip", "deflate", "identity"]),
    st.binary(max_size=2000),
    st.integers(1, 5000),
)
def test_any_body_decodes_within_the_bound_or_is_refused(
    encoding: str, body: bytes, bound: int
) -> None:
    """Arbitrary bytes never produce more than the bound nor raise anything but EgressError."""
    try:
        out = decode(encoding, body, bound, chunk=97)
    except EgressError:
        return
    assert len(out) <= bound


@pytest.mark.req("REQ-SEC-013", "REQ-CMP-005")
@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from([("gzip", 31), ("deflate", 15), ("deflate", -15), ("identity", 0)]),
    st.binary(max_size=3000),
    st.integers(1, 4000),
    st.integers(1, 300),
)
def test_truncate_mode_hands_out_exactly_the_first_bytes(
    coding: tuple[str, int], data: bytes, bound: int, chunk: int
) -> None:
    """With ``truncate`` the decoder hands out exactly the first ``bound`` decoded bytes of
    any body in any chunking, ``cut`` says whether more existed, and after a cut it decodes
    nothing more; without it, the same body beyond the bound is refused."""
    encoding, wbits = coding
    body = data if encoding == "identity" else compress(data, wbits)
    decoder = BoundedDecoder(encoding, bound, truncate=True)
    out = b""
    for i in range(0, len(body), chunk):
        if decoder.cut:
            assert decoder.feed(body[i : i + chunk]) == b""
            break
        out += decoder.feed(body[i : i + chunk])
    out += decoder.finish()
    assert out == data[:bound]
    assert decoder.cut is (len(data) > bound)
    if len(data) > bound:
        with pytest.raises(EgressError) as refused:
            decode(encoding, body, bound, chunk)
        assert refused.value.reason == EgressReason.TOO_LARGE
    else:
        assert decode(encoding, body, bound, chunk) == data
