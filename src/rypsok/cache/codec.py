"""The stored form of one engine's results: JSON out, strictly validated JSON back in.

A value is ``{"format": 1, "engine": <id>, "results": [{url, title, snippet, rank, date}]}``.
Reading is strict (exact types, no unknown fields, bounded sizes) and anything else (corrupt
bytes, another format, another engine's value, a value written by some other program under the
same key) is a miss, never an error: a cache may cost speed only (REQ-CACHE-006). The results
are kept raw, as the driver parsed them, so a hit goes through the same cleaning, notices and
fusion as a fresh answer. JSON rather than pickle: stored bytes are external data (REQ-SEC-020).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rypsok.cache.base import MAX_VALUE_BYTES
from rypsok.engines.base import RawResult

VALUE_FORMAT: Final = 1
MAX_RESULTS: Final = 100
"""More results than any engine is asked for (LIM-S3 <= 50); a longer list is foreign."""


class _Stored(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class _Result(_Stored):
    url: str = Field(max_length=16_384)
    title: str = Field(max_length=16_384)
    snippet: str = Field(max_length=65_536)
    rank: int = Field(ge=0, le=1_000_000)
    date: str | None = Field(max_length=256)


class _Value(_Stored):
    format: Literal[1]
    engine: str = Field(max_length=64)
    results: list[_Result] = Field(max_length=MAX_RESULTS)


def encode_results(engine_id: str, results: Sequence[RawResult]) -> bytes | None:
    """The stored form of ``results``; None when they cannot be stored faithfully.

    A lone surrogate in a driver's text has no UTF-8 form: such an answer is not cached.
    """
    value = {
        "format": VALUE_FORMAT,
        "engine": engine_id,
        "results": [
            {"url": r.url, "title": r.title, "snippet": r.snippet, "rank": r.rank, "date": r.date}
            for r in results
        ],
    }
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    except UnicodeEncodeError:
        return None


def decode_results(engine_id: str, value: bytes) -> tuple[RawResult, ...] | None:
    """The results stored in ``value`` for ``engine_id``, or None when it is not such a value."""
    if len(value) > MAX_VALUE_BYTES:
        return None
    try:
        stored = _Value.model_validate_json(value)
    except (ValidationError, ValueError):
        return None
    if stored.engine != engine_id:
        return None
    return tuple(
        RawResult(url=r.url, title=r.title, snippet=r.snippet, rank=r.rank, date=r.date)
        for r in stored.results
    )
