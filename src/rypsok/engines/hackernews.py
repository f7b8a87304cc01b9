"""Hacker News through the Algolia HN Search API (admission: docs/engines/hackernews.md).

One GET to ``/api/v1/search`` (relevance order) restricted to stories. A time range becomes a
``numericFilters`` bound on ``created_at_i``: the results stay in relevance order inside the
window, which suits a meta-search better than ``search_by_date``'s newest-first order.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Final
from urllib.parse import urlsplit

from rypsok.contract.vocabulary import Category, FailureClass, TimeRange
from rypsok.engines.base import (
    AdmissionRecord,
    EngineFailure,
    EngineQuery,
    EngineRequest,
    EngineResponse,
    RateLimit,
    RawResult,
    load_json,
    replace_query,
)

ADMISSION: Final = AdmissionRecord(
    engine_id="hackernews",
    provider="Algolia: Hacker News Search API (hn.algolia.com)",
    categories=(Category.NEWS,),
    endpoint="https://hn.algolia.com/api/v1/search",
    documentation="https://hn.algolia.com/api",
    permitted_use=(
        "Official public search API of Hacker News, run by Algolia; no key. The documented "
        "sanction for abuse is a block of the client's IP address."
    ),
    rate=RateLimit(requests=10_000, per_seconds=3600.0),
    max_in_flight=4,
    attribution_required=False,
    license="No licence stated by the API; stories and texts belong to Hacker News and their "
    "posters; results link to the story or its discussion",
    cacheable=True,
    user_agent_note="No format required; the standard rypsok User-Agent (REQ-CMP-004).",
    # No language parameter: the engine is language-neutral.
    languages=frozenset(),
    time_ranges=frozenset(TimeRange),
    # Algolia refuses queries over 512 bytes; 128 characters fit even at 4 UTF-8 bytes each.
    max_query_chars=128,
    max_response_bytes=2 * 1024 * 1024,
    key="none",
    enabled_by_default=True,
    max_results=1000,
)

# Fixed windows, the same as the other drivers: month and year rounded up so they never cut
# off an item a calendar month or year would include.
_RANGE_SECONDS: Final[dict[TimeRange, int]] = {
    TimeRange.DAY: 86_400,
    TimeRange.WEEK: 7 * 86_400,
    TimeRange.MONTH: 31 * 86_400,
    TimeRange.YEAR: 366 * 86_400,
}
_ITEM_URL: Final = "https://news.ycombinator.com/item?id="
_MAX_ITEM_ID_DIGITS: Final = 12


def build_request(query: EngineQuery) -> EngineRequest:
    """One relevance search over stories, bounded in time when a range is asked."""
    params = {
        "query": query.text,
        "tags": "story",
        "hitsPerPage": str(_count(query.count)),
    }
    if query.time_range is not None:
        since = int(query.now) - _RANGE_SECONDS[query.time_range]
        params["numericFilters"] = f"created_at_i>{since}"
    return EngineRequest(
        method="GET",
        url=replace_query(query.endpoint, params),
        headers=(("Accept", "application/json"),),
    )


def parse(response: EngineResponse) -> list[RawResult]:
    """Stories in Algolia's order: the story URL, or its HN page for text posts (Ask HN)."""
    if response.status == 403:
        # No key is involved: a refusal is the documented IP block, not a credential problem.
        raise EngineFailure(FailureClass.BLOCKED)
    body = load_json(response)
    if not isinstance(body, dict):
        raise EngineFailure(FailureClass.PARSE_FAILURE)
    hits = body.get("hits")
    if not isinstance(hits, list):
        raise EngineFailure(FailureClass.PARSE_FAILURE)
    results: list[RawResult] = []
    for hit in hits[: ADMISSION.max_results]:
        result = _result(hit, len(results) + 1)
        if result is not None:
            results.append(result)
    return results


def _count(requested: int) -> int:
    return max(1, min(requested, ADMISSION.max_results))


def _result(hit: object, rank: int) -> RawResult | None:
    if not isinstance(hit, dict):
        return None
    title = hit.get("title")
    if not isinstance(title, str) or not title.strip():
        return None
    url = _story_url(hit.get("url")) or _item_url(hit.get("objectID"))
    if url is None:
        return None
    text = hit.get("story_text")
    return RawResult(
        url=url,
        title=title,
        snippet=text if isinstance(text, str) else "",
        rank=rank,
        date=_date(hit),
    )


def _story_url(value: object) -> str | None:
    if not isinstance(value, str):
        return None
    value = value.strip()
    try:
        parts = urlsplit(value)
    except ValueError:
        return None
    return value if parts.scheme in ("http", "https") and parts.netloc else None


def _item_url(object_id: object) -> str | None:
    """The discussion page; only a plain item number goes into the URL."""
    if (
        isinstance(object_id, str)
        and object_id.isascii()
        and object_id.isdigit()
        and len(object_id) <= _MAX_ITEM_ID_DIGITS
    ):
        return _ITEM_URL + object_id
    return None


def _date(hit: dict[str, Any]) -> str | None:
    """``YYYY-MM-DD`` (UTC) from ``created_at_i``, else from ``created_at``."""
    seconds = hit.get("created_at_i")
    if isinstance(seconds, int) and not isinstance(seconds, bool):
        try:
            return datetime.fromtimestamp(seconds, tz=UTC).date().isoformat()
        except (OverflowError, OSError, ValueError):
            return None
    created = hit.get("created_at")
    if isinstance(created, str) and len(created) <= 40:
        try:
            return datetime.fromisoformat(created).date().isoformat()
        except ValueError:
            return None
    return None
