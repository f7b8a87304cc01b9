"""Deduplication and rank fusion (REQ-RANK-001, -004 to -007, REQ-ARCH-004, REQ-TEST-011)."""

from __future__ import annotations

import itertools
import random
from collections.abc import Mapping, Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rypsok.search.fuse import (
    SCALE,
    EngineResult,
    FusedResult,
    K,
    Observation,
    contribution,
    fuse,
    fusion_score,
)
from rypsok.search.normalize import comparison_key

PROPERTY = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
PREFERENCE = {"wikipedia": 0, "arxiv": 1, "crossref": 2, "github": 3, "hackernews": 4, "gdelt": 5}
ENGINES = list(PREFERENCE)


def result(
    url: str, rank: int, title: str = "", snippet: str = "", date: str | None = None
) -> EngineResult:
    """An engine result whose title and snippet name its origin unless given."""
    return EngineResult(
        url=url,
        title=title or f"{url} @{rank}",
        snippet=snippet or f"snippet {rank}",
        date=date,
        rank=rank,
    )


def urls_of(fused: Sequence[FusedResult]) -> list[str]:
    """The URLs of a fused list, in order."""
    return [item.url for item in fused]


# --------------------------------------------------------------------------- examples


@pytest.mark.req("REQ-RANK-005")
@pytest.mark.req("REQ-RANK-006")
@pytest.mark.req("REQ-RANK-007")
def test_worked_example_of_ranking_doc() -> None:
    """REQ-RANK-005/006/007: the example of docs/ranking.md section 8, number for number."""
    c1, c2, c3 = contribution(1), contribution(2), contribution(3)
    assert (c1, c2, c3) == (16_393_442, 16_129_032, 15_873_015)
    engines = {
        "wikipedia": [
            result("https://a.example/", 1),
            result("https://b.example/", 2),
            result("https://c.example/x", 3),
        ],
        "arxiv": [result("https://b.example/", 1), result("https://e.example/", 2)],
        "crossref": [result("https://f.example/", 1), result("https://c.example/x#abstract", 2)],
    }
    fused = fuse(engines, PREFERENCE, 10)
    assert urls_of(fused) == [
        "https://b.example/",
        "https://c.example/x#abstract",
        "https://a.example/",
        "https://f.example/",
        "https://e.example/",
    ]
    scores = [fusion_score(item.observations, PREFERENCE) for item in fused]
    assert scores == [32_522_474, 32_002_047, 16_393_442, 16_393_442, 16_129_032]
    b, c = fused[0], fused[1]
    assert b.observations == (Observation("arxiv", 1), Observation("wikipedia", 2))
    assert b.title == "https://b.example/ @1"
    assert c.key == "https://c.example/x"
    assert c.observations == (Observation("crossref", 2), Observation("wikipedia", 3))
    assert c.title == "https://c.example/x#abstract @2"
    assert urls_of(fuse(engines, PREFERENCE, 3)) == urls_of(fused)[:3]


@pytest.mark.req("REQ-RANK-001")
def test_canonical_result_model() -> None:
    """REQ-RANK-001: url, comparison key, title, snippet, optional date, observations."""
    fused = fuse(
        {"arxiv": [result("https://Example.org/p?utm_source=x", 1, "T", "S", "2024-01-02")]},
        PREFERENCE,
        10,
    )
    assert fused == [
        FusedResult(
            url="https://Example.org/p?utm_source=x",
            key="https://example.org/p",
            title="T",
            snippet="S",
            date="2024-01-02",
            observations=(Observation("arxiv", 1),),
        )
    ]
    assert not hasattr(fused[0], "score")  # REQ-CTX-001: no score reaches the caller


@pytest.mark.req("REQ-RANK-004")
def test_same_key_merges_and_observations_are_the_union() -> None:
    """REQ-RANK-004: one result per comparison key; its observations are the union."""
    fused = fuse(
        {
            "crossref": [result("https://example.org/doc", 4)],
            "wikipedia": [result("https://EXAMPLE.org:443/doc#intro", 2)],
            "arxiv": [result("https://example.org/doc?utm_campaign=feed", 7)],
        },
        PREFERENCE,
        10,
    )
    assert len(fused) == 1
    assert fused[0].observations == (
        Observation("wikipedia", 2),
        Observation("crossref", 4),
        Observation("arxiv", 7),
    )
    assert fused[0].url == "https://EXAMPLE.org:443/doc#intro"


@pytest.mark.req("REQ-RANK-004")
def test_duplicate_within_one_engine_keeps_its_best_rank() -> None:
    """REQ-RANK-004: an engine that returns a key twice counts once, with its best rank."""
    fused = fuse(
        {
            "arxiv": [
                result("https://example.org/a", 1, "first"),
                result("https://example.org/b", 2),
                result("https://example.org/a#again", 3, "again"),
            ]
        },
        PREFERENCE,
        10,
    )
    assert urls_of(fused) == ["https://example.org/a", "https://example.org/b"]
    assert fused[0].observations == (Observation("arxiv", 1),)
    assert fused[0].title == "first"
    assert fusion_score(fused[0].observations, PREFERENCE) == contribution(1)


@pytest.mark.req("REQ-RANK-004")
def test_merged_text_comes_from_best_rank_then_preference() -> None:
    """REQ-RANK-004: title and snippet from the best rank; ties by engine preference."""
    engines = {
        "hackernews": [result("https://x.example/", 1, "hn title", "hn snippet")],
        "crossref": [result("https://x.example/", 1, "crossref title", "crossref snippet")],
        "wikipedia": [result("https://x.example/", 2, "wiki title", "wiki snippet")],
    }
    (fused,) = fuse(engines, PREFERENCE, 10)
    assert (fused.title, fused.snippet) == ("crossref title", "crossref snippet")
    reversed_preference = {engine: -position for engine, position in PREFERENCE.items()}
    (fused,) = fuse(engines, reversed_preference, 10)
    assert (fused.title, fused.snippet) == ("hn title", "hn snippet")


@pytest.mark.req("REQ-RANK-004")
def test_date_from_best_observation_else_first_that_has_one() -> None:
    """REQ-RANK-004: the date follows the best observation, or the best one that has a date."""
    engines = {
        "wikipedia": [result("https://x.example/", 1, date=None)],
        "arxiv": [result("https://x.example/", 3, date="2021-03-03")],
        "crossref": [result("https://x.example/", 2, date="2022-02-02")],
    }
    assert fuse(engines, PREFERENCE, 10)[0].date == "2022-02-02"
    engines["wikipedia"] = [result("https://x.example/", 1, date="2020-01-01")]
    assert fuse(engines, PREFERENCE, 10)[0].date == "2020-01-01"
    engines = {
        "wikipedia": [result("https://x.example/", 1)],
        "arxiv": [result("https://x.example/", 2)],
    }
    assert fuse(engines, PREFERENCE, 10)[0].date is None


@pytest.mark.req("REQ-RANK-005")
def test_agreement_beats_a_single_better_rank() -> None:
    """REQ-RANK-005: two engines at rank 10 outrank one engine at rank 1."""
    engines = {
        "wikipedia": [result("https://top.example/", 1)]
        + [result(f"https://w{i}.example/", i) for i in range(2, 10)]
        + [result("https://both.example/", 10)],
        "arxiv": [result(f"https://a{i}.example/", i) for i in range(1, 10)]
        + [result("https://both.example/", 10)],
    }
    fused = fuse(engines, PREFERENCE, 20)
    assert fused[0].url == "https://both.example/"
    assert urls_of(fused).index("https://both.example/") < urls_of(fused).index(
        "https://top.example/"
    )


@pytest.mark.req("REQ-RANK-005")
def test_score_is_integer_reciprocal_rank_fusion() -> None:
    """REQ-RANK-005: SCALE // (K + rank), integers only, strictly falling with rank."""
    assert (K, SCALE) == (60, 10**9)
    contributions = [contribution(rank) for rank in range(1, 1001)]
    assert all(type(value) is int for value in contributions)
    assert all(a > b for a, b in itertools.pairwise(contributions))
    assert contribution(31_681) == contribution(31_682)  # the documented limit of SCALE
    assert contribution(31_680) > contribution(31_681)
    observations = [Observation("arxiv", 3), Observation("wikipedia", 1)]
    assert fusion_score(observations, PREFERENCE) == SCALE // 63 + SCALE // 61
    with pytest.raises(ValueError):
        contribution(0)


@pytest.mark.req("REQ-RANK-006")
def test_tie_breakers_in_order() -> None:
    """REQ-RANK-006: score, then best rank, then engine preference, then comparison key."""
    # Equal scores (one observation each at rank 1): preference, then key decide.
    fused = fuse(
        {
            "crossref": [result("https://c.example/", 1)],
            "wikipedia": [result("https://w.example/", 1)],
            "arxiv": [result("https://a.example/", 1)],
        },
        PREFERENCE,
        10,
    )
    assert urls_of(fused) == ["https://w.example/", "https://a.example/", "https://c.example/"]
    # Equal scores, equal best rank, same engine of the best observation: the key decides.
    fused = fuse(
        {
            "arxiv": [result("https://z.example/", 1), result("https://y.example/", 2)],
            "wikipedia": [result("https://y.example/", 1), result("https://z.example/", 2)],
        },
        {"arxiv": 0, "wikipedia": 0},
        10,
    )
    assert urls_of(fused) == ["https://y.example/", "https://z.example/"]
    # Equal scores, different best ranks: floor(S/63) + floor(S/84) == 2 * floor(S/72), so
    # ranks {3, 24} and {12, 12} tie on score and the better best rank (3) comes first,
    # although its key and its engine's preference would both put it second.
    assert contribution(3) + contribution(24) == 2 * contribution(12)
    fused = fuse(
        {
            "arxiv": [result("https://z.example/", 3), result("https://a.example/", 12)],
            "crossref": [result("https://z.example/", 24), result("https://a.example/", 12)],
        },
        {"arxiv": 1, "crossref": 0},
        10,
    )
    assert urls_of(fused) == ["https://z.example/", "https://a.example/"]


@pytest.mark.req("REQ-RANK-006")
def test_unlisted_engine_comes_after_listed_ones() -> None:
    """REQ-RANK-006: an engine missing from the preference order ranks after every listed one."""
    fused = fuse(
        {
            "searxng": [result("https://s.example/", 1, "from searxng")],
            "gdelt": [
                result("https://g.example/", 1),
                result("https://s.example/", 1, "from gdelt"),
            ],
        },
        PREFERENCE,
        10,
    )
    assert fused[0].url == "https://s.example/"
    assert fused[0].title == "from gdelt"
    assert fused[0].observations == (Observation("gdelt", 1), Observation("searxng", 1))


@pytest.mark.req("REQ-RANK-007")
def test_cut_to_max_results_after_ranking() -> None:
    """REQ-RANK-007: the list is cut after ranking, never before."""
    engines = {
        "wikipedia": [result(f"https://w{i}.example/", i) for i in range(1, 11)],
        # The last result of the last-arriving engine is the best of all once fused.
        "arxiv": [result(f"https://a{i}.example/", i) for i in range(1, 10)]
        + [result("https://w10.example/", 10)],
    }
    assert urls_of(fuse(engines, PREFERENCE, 1)) == ["https://w10.example/"]
    assert len(fuse(engines, PREFERENCE, 5)) == 5
    assert len(fuse(engines, PREFERENCE, 100)) == 19
    assert fuse(engines, PREFERENCE, 0) == []
    assert fuse({}, PREFERENCE, 10) == []
    assert fuse({"arxiv": []}, PREFERENCE, 10) == []


def test_invalid_input_is_refused() -> None:
    """A rank below 1 or a negative max_results is a programming error."""
    with pytest.raises(ValueError):
        fuse({"arxiv": [result("https://x.example/", 0)]}, PREFERENCE, 10)
    with pytest.raises(ValueError):
        fuse({}, PREFERENCE, -1)


# --------------------------------------------------------------------------- properties

# A small pool of URLs, several spellings of the same resources, so that merges are common.
_URL_POOL = [
    "https://a.example/",
    "https://A.example:443/#top",
    "https://a.example/?utm_source=x",
    "https://b.example/doc",
    "https://b.example/doc#part",
    "http://b.example/doc",
    "https://www.b.example/doc",
    "https://c.example/%7euser",
    "https://c.example/~user",
    "https://xn--bcher-kva.example/",
    "https://d.example/x?b=2&a=1",
    "https://d.example/x?a=1&b=2",
    "https://e.example/",
    "https://f.example/",
    "https://g.example/",
]
_TEXT = st.sampled_from(["alpha", "beta", "gamma", "", "Ünïcode", "same"])
_DATE = st.one_of(st.none(), st.sampled_from(["2020-01-01", "2021-06-30", "2024-12-31"]))


@st.composite
def engine_lists(draw: st.DrawFn) -> dict[str, list[EngineResult]]:
    """Results of up to six engines (LIM-S8), at most ten each (LIM-S3), ranks distinct."""
    engines = draw(st.lists(st.sampled_from([*ENGINES, "unlisted"]), unique=True, max_size=6))
    lists: dict[str, list[EngineResult]] = {}
    for engine in engines:
        urls = draw(st.lists(st.sampled_from(_URL_POOL), max_size=10))
        lists[engine] = [
            EngineResult(
                url=url, title=draw(_TEXT), snippet=draw(_TEXT), date=draw(_DATE), rank=rank
            )
            for rank, url in enumerate(urls, start=1)
        ]
    return lists


def shuffled(
    lists: Mapping[str, Sequence[EngineResult]], rng: random.Random
) -> dict[str, list[EngineResult]]:
    """The same engine responses, engines and each engine's list in another order."""
    engines = list(lists)
    rng.shuffle(engines)
    out: dict[str, list[EngineResult]] = {}
    for engine in engines:
        items = list(lists[engine])
        rng.shuffle(items)
        out[engine] = items
    return out


@pytest.mark.req("REQ-ARCH-004")
@pytest.mark.req("REQ-TEST-011")
@PROPERTY
@given(engine_lists(), st.randoms(use_true_random=False), st.integers(min_value=0, max_value=20))
def test_arrival_order_does_not_change_output(
    lists: dict[str, list[EngineResult]], rng: random.Random, max_results: int
) -> None:
    """REQ-ARCH-004, REQ-TEST-011: shuffled arrival orders give byte-identical output."""
    expected = repr(fuse(lists, PREFERENCE, max_results))
    for _ in range(3):
        assert repr(fuse(shuffled(lists, rng), PREFERENCE, max_results)) == expected
    # Reversed dict order, in particular the exact opposite of the preference order.
    reverse = dict(reversed(list(lists.items())))
    assert repr(fuse(reverse, PREFERENCE, max_results)) == expected


@pytest.mark.req("REQ-RANK-004")
@pytest.mark.req("REQ-RANK-006")
@PROPERTY
@given(engine_lists(), st.integers(min_value=0, max_value=20))
def test_fused_list_invariants(lists: dict[str, list[EngineResult]], max_results: int) -> None:
    """REQ-RANK-004/006/007: unique keys, best-ranked text, total order, cut length."""
    fused = fuse(lists, PREFERENCE, max_results)
    everything = fuse(lists, PREFERENCE, 1000)
    assert fused == everything[:max_results]
    keys = {comparison_key(item.url) for results in lists.values() for item in results}
    assert len(everything) == len(keys)
    assert len({item.key for item in everything}) == len(everything)

    def position(engine: str) -> tuple[int, str]:
        return PREFERENCE.get(engine, 2**63), engine

    order = []
    for item in everything:
        engines = [obs.engine for obs in item.observations]
        assert len(engines) == len(set(engines))  # one observation per engine
        # Each observation is the engine's best rank for this key.
        for obs in item.observations:
            ranks = [r.rank for r in lists[obs.engine] if comparison_key(r.url) == item.key]
            assert obs.rank == min(ranks)
        best = min(item.observations, key=lambda o: (o.rank, *position(o.engine)))
        assert item.observations[0] == best
        # The merge keeps the best-ranked observation's url, title and snippet.
        source = [r for r in lists[best.engine] if r.rank == best.rank]
        assert len(source) == 1
        assert (item.url, item.title, item.snippet) == (
            source[0].url,
            source[0].title,
            source[0].snippet,
        )
        score = fusion_score(item.observations, PREFERENCE)
        order.append((-score, best.rank, position(best.engine)[0], item.key))
    assert order == sorted(order)


@pytest.mark.req("REQ-RANK-005")
@PROPERTY
@given(
    st.integers(min_value=2, max_value=6),
    st.data(),
)
def test_more_engines_always_outrank_fewer_within_limits(
    engines_agreeing: int, data: st.DataObject
) -> None:
    """REQ-RANK-005: with ranks 1..10 (LIM-S3) and up to 6 engines (LIM-S8), a result seen
    by more engines ranks above one seen by fewer, whatever the ranks (docs/ranking.md)."""
    agreeing = ENGINES[:engines_agreeing]
    others = data.draw(
        st.lists(st.sampled_from(ENGINES), unique=True, min_size=1, max_size=engines_agreeing - 1)
    )
    lists: dict[str, list[EngineResult]] = {engine: [] for engine in ENGINES}
    for engine in agreeing:
        rank = data.draw(st.integers(min_value=1, max_value=10))
        lists[engine].append(result("https://agreed.example/", rank))
    for engine in others:
        rank = data.draw(st.integers(min_value=1, max_value=10))
        if rank in {r.rank for r in lists[engine]}:
            rank = next(r for r in range(1, 11) if r not in {x.rank for x in lists[engine]})
        lists[engine].append(result("https://fewer.example/", rank))
    fused = fuse(lists, PREFERENCE, 10)
    assert urls_of(fused) == ["https://agreed.example/", "https://fewer.example/"]


@pytest.mark.req("REQ-RANK-005")
def test_agreement_guarantee_boundary_is_as_documented() -> None:
    """REQ-RANK-005: m engines at rank 10 beat m - 1 at rank 1 for m <= 7, not for m = 8."""
    for m in range(2, 8):
        assert m * contribution(10) > (m - 1) * contribution(1)
    assert 8 * contribution(10) < 7 * contribution(1)
    # Deeper lists shrink the guarantee: with ranks up to 20, up to 4 engines.
    assert 4 * contribution(20) > 3 * contribution(1)
    assert 5 * contribution(20) < 4 * contribution(1)
