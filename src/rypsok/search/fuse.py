"""Cross-engine deduplication and rank fusion (REQ-RANK-001, -004 to -007, REQ-ARCH-004).

Input: per engine, its cleaned results (the URL already the returned URL of
:func:`rypsok.search.normalize.returned_url`) with the rank the engine gave them, and the
operator's engine preference order. Output: one :class:`FusedResult` per comparison key, in a
total order, cut to ``max_results``.

The score is reciprocal rank fusion (Cormack, Clarke and Büttcher, SIGIR 2009) in integers::

    score = sum over observations of  SCALE // (K + rank),   SCALE = 10**9, K = 60

Integers make the score exact, so the order cannot depend on how floating-point rounding
falls; the sum is nevertheless taken in a fixed order (engine preference, then engine id),
never in arrival order. ``docs/ranking.md`` gives the reasons, the tie-breakers and a worked
example. Nothing here depends on the iteration order of the input mapping or of an engine's
list, so the output is the same, byte for byte, however the engines' answers arrived.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from rypsok.search.normalize import comparison_key

__all__ = [
    "SCALE",
    "EngineResult",
    "FusedResult",
    "K",
    "Observation",
    "contribution",
    "fuse",
    "fusion_score",
]

# Cormack et al.'s constant: it damps the lead of the very first ranks so that agreement
# between engines outweighs one engine's top position (see docs/ranking.md).
K: Final = 60
# Large enough that SCALE // (K + rank) falls strictly with every rank up to 31 681, far
# beyond what an engine returns (LIM-S3), so the floor never gives two ranks one value.
SCALE: Final = 10**9

# Position of an engine missing from the preference mapping: after every listed engine.
_UNLISTED: Final = sys.maxsize


@dataclass(frozen=True, slots=True)
class Observation:
    """One engine's sighting of a result: the engine id and the rank it gave (1 is best)."""

    engine: str
    rank: int


@dataclass(frozen=True, slots=True)
class EngineResult:
    """One cleaned result of one engine; ``url`` is already the returned URL."""

    url: str
    title: str
    snippet: str
    date: str | None
    rank: int


@dataclass(frozen=True, slots=True)
class FusedResult:
    """A result after deduplication (REQ-RANK-001).

    ``key`` is the comparison key: internal, never returned to the caller. ``observations``
    holds one entry per engine that returned the result, best first: by rank, then engine
    preference, then engine id, so ``observations[0]`` is the one that supplied url, title
    and snippet. The fusion score is deliberately not a field (REQ-CTX-001 returns no
    score); :func:`fusion_score` computes it from the observations.
    """

    url: str
    key: str
    title: str
    snippet: str
    date: str | None
    observations: tuple[Observation, ...]


def contribution(rank: int) -> int:
    """The score one observation at ``rank`` adds: ``SCALE // (K + rank)``."""
    if rank < 1:
        raise ValueError("ranks start at 1")
    return SCALE // (K + rank)


def _position(preference: Mapping[str, int], engine: str) -> tuple[int, str]:
    """Sort key of an engine: its preference position, then its id to break any tie."""
    return preference.get(engine, _UNLISTED), engine


def fusion_score(observations: Iterable[Observation], preference: Mapping[str, int]) -> int:
    """The fused score of a result: the sum of its observations' contributions.

    The sum runs in a fixed order, engine preference then engine id (REQ-ARCH-004); with
    integers the order cannot change the value, and the fixed order keeps it so should the
    formula ever change.
    """
    ordered = sorted(observations, key=lambda obs: (*_position(preference, obs.engine), obs.rank))
    total = 0
    for observation in ordered:
        total += contribution(observation.rank)
    return total


def _result_order(result: EngineResult) -> tuple[int, str, str, str, bool, str]:
    """A total order on one engine's results, used when it returned one key twice.

    The best rank wins; should an engine give the same rank twice, the fields decide, so
    the choice never depends on the position in the engine's list.
    """
    return (
        result.rank,
        result.url,
        result.title,
        result.snippet,
        result.date is None,
        result.date or "",
    )


def fuse(
    results_by_engine: Mapping[str, Sequence[EngineResult]],
    preference: Mapping[str, int],
    max_results: int,
) -> list[FusedResult]:
    """Deduplicate and rank the results of several engines (REQ-RANK-004 to -007).

    Results with the same comparison key merge into one whose observations are the union;
    when one engine returned a key more than once, only its best rank counts. The merged
    url, title and snippet come from the best-ranked observation, ties broken by engine
    preference (lower position first; an engine missing from ``preference`` comes after
    every listed one) and then engine id. The date comes from that observation too, or,
    when it has none, from the best observation in the same order that has one.

    The order is total: score descending, then best rank ascending, then the preference
    position of the engine that gave the best rank, then the comparison key (REQ-RANK-006).
    The list is cut to ``max_results`` after ranking (REQ-RANK-007).

    Raises ValueError for a rank below 1 or a negative ``max_results``.
    """
    if max_results < 0:
        raise ValueError("max_results must not be negative")
    # Engines in a fixed order, so that nothing below sees the arrival order (REQ-ARCH-004).
    engines = sorted(results_by_engine, key=lambda engine: _position(preference, engine))

    sightings: dict[str, list[tuple[EngineResult, str]]] = {}
    for engine in engines:
        best: dict[str, EngineResult] = {}
        for result in results_by_engine[engine]:
            if result.rank < 1:
                raise ValueError("ranks start at 1")
            key = comparison_key(result.url)
            held = best.get(key)
            if held is None or _result_order(result) < _result_order(held):
                best[key] = result
        for key, result in best.items():
            sightings.setdefault(key, []).append((result, engine))

    ranked: list[tuple[tuple[int, int, int, str], FusedResult]] = []
    for key, seen in sightings.items():
        seen.sort(key=lambda item: (item[0].rank, *_position(preference, item[1])))
        first, first_engine = seen[0]
        date = first.date
        if date is None:
            date = next((result.date for result, _ in seen if result.date is not None), None)
        observations = tuple(Observation(engine, result.rank) for result, engine in seen)
        fused = FusedResult(
            url=first.url,
            key=key,
            title=first.title,
            snippet=first.snippet,
            date=date,
            observations=observations,
        )
        order = (
            -fusion_score(observations, preference),
            first.rank,
            preference.get(first_engine, _UNLISTED),
            key,
        )
        ranked.append((order, fused))

    ranked.sort(key=lambda item: item[0])
    return [fused for _, fused in ranked[:max_results]]
