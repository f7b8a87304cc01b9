"""Tavily Search API (admission: docs/engines/tavily.md).

One ``POST /search`` with a JSON body and the operator's key as ``Authorization: Bearer``
(Tavily also accepts it in the body; the header keeps it out of the body and lets egress
guard it). Tavily's ``topic`` follows the requested category (``EngineQuery.category``):
``general`` for web results, ``news`` for news. A plan or pay-as-you-go limit is answered with
432 or 433: both are quota exhaustion, classified ``rate_limited``.
"""

from __future__ import annotations

import email.utils
import json
from datetime import UTC, datetime
from typing import Any, Final

from rypsok.contract.vocabulary import Category, FailureClass, TimeRange
from rypsok.engines.base import (
    AdmissionRecord,
    EngineFailure,
    EngineQuery,
    EngineRequest,
    EngineResponse,
    RateLimit,
    RawResult,
    is_http_url,
    load_json,
    retry_after,
)

_TOPICS: Final[dict[Category, str]] = {Category.GENERAL: "general", Category.NEWS: "news"}
_TIME_RANGE: Final[dict[TimeRange, str]] = {
    TimeRange.DAY: "day",
    TimeRange.WEEK: "week",
    TimeRange.MONTH: "month",
    TimeRange.YEAR: "year",
}
# ISO 3166-1 code -> Tavily's ``country`` value (lower-case English names; general topic only).
# Only names whose spelling is unambiguous are mapped; any other region sends no country.
_COUNTRIES: Final[dict[str, str]] = {
    "AR": "argentina",
    "AT": "austria",
    "AU": "australia",
    "BE": "belgium",
    "BR": "brazil",
    "CA": "canada",
    "CH": "switzerland",
    "CN": "china",
    "DE": "germany",
    "DK": "denmark",
    "ES": "spain",
    "FI": "finland",
    "FR": "france",
    "GB": "united kingdom",
    "IE": "ireland",
    "IN": "india",
    "IT": "italy",
    "JP": "japan",
    "MX": "mexico",
    "NL": "netherlands",
    "NO": "norway",
    "NZ": "new zealand",
    "PL": "poland",
    "PT": "portugal",
    "SE": "sweden",
    "US": "united states",
}

ADMISSION: Final = AdmissionRecord(
    engine_id="tavily",
    provider="Tavily: Tavily Search API",
    categories=(Category.GENERAL, Category.NEWS),
    endpoint="https://api.tavily.com/search",
    documentation="https://docs.tavily.com/documentation/api-reference/endpoint/search",
    permitted_use=(
        "Official API for AI agents under Tavily's Terms of Service, with the operator's own "
        "key; credit-based billing (a basic search costs one credit). The terms grant no right "
        "to store results, so they are not cached."
    ),
    # Development keys: 100 requests per minute (production keys 1,000).
    rate=RateLimit(requests=100, per_seconds=60.0),
    max_in_flight=4,
    attribution_required=False,
    license="Tavily Terms of Service; the pages belong to their publishers",
    cacheable=False,
    user_agent_note="No format required; the standard rypsok User-Agent (REQ-CMP-004).",
    # No language parameter: the engine is language-neutral.
    languages=frozenset(),
    time_ranges=frozenset(_TIME_RANGE),
    # "Query is too long. Max query length is 400 characters."
    max_query_chars=400,
    max_response_bytes=2 * 1024 * 1024,
    key="required",
    enabled_by_default=True,
    max_results=20,
)

CREDENTIAL_HEADER: Final = "Authorization"
# 432: plan usage limit exceeded; 433: pay-as-you-go limit exceeded.
_QUOTA_STATUSES: Final = frozenset({432, 433})


def topic_for(category: Category) -> str:
    """Tavily's ``topic`` for a rypsok category (``general`` for any other than news)."""
    return _TOPICS.get(category, "general")


def build_request(query: EngineQuery) -> EngineRequest:
    """One basic search (one credit) without answer, raw content or images."""
    topic = topic_for(query.category)
    body: dict[str, Any] = {
        "query": query.text,
        "topic": topic,
        "search_depth": "basic",
        "max_results": _count(query.count),
        "include_answer": False,
        "include_raw_content": False,
        "include_images": False,
    }
    if query.time_range is not None:
        body["time_range"] = _TIME_RANGE[query.time_range]
    country = _COUNTRIES.get(query.region.strip().upper())
    if country is not None and topic == "general":
        body["country"] = country
    headers = [
        ("Accept", "application/json"),
        ("Content-Type", "application/json"),
    ]
    credential_headers: frozenset[str] = frozenset()
    if query.credential is not None:
        headers.append((CREDENTIAL_HEADER, f"Bearer {query.credential.reveal()}"))
        credential_headers = frozenset({CREDENTIAL_HEADER})
    return EngineRequest(
        method="POST",
        url=query.endpoint,
        headers=tuple(headers),
        body=json.dumps(body, ensure_ascii=False).encode("utf-8"),
        credential_headers=credential_headers,
    )


def parse(response: EngineResponse) -> list[RawResult]:
    """``results`` in Tavily's order: title, URL, ``content`` and, for news, the date."""
    if response.status == 429 or response.status in _QUOTA_STATUSES:
        raise EngineFailure(FailureClass.RATE_LIMITED, retry_after(response.headers))
    body = load_json(response)
    if not isinstance(body, dict):
        raise EngineFailure(FailureClass.PARSE_FAILURE)
    items = body.get("results")
    if not isinstance(items, list):
        raise EngineFailure(FailureClass.PARSE_FAILURE)
    results: list[RawResult] = []
    for item in items[: ADMISSION.max_results]:
        result = _result(item, len(results) + 1)
        if result is not None:
            results.append(result)
    return results


def _count(requested: int) -> int:
    return max(1, min(requested, ADMISSION.max_results))


def _result(item: object, rank: int) -> RawResult | None:
    if not isinstance(item, dict):
        return None
    title = item.get("title")
    url = item.get("url")
    if not isinstance(title, str) or not title.strip() or not isinstance(url, str):
        return None
    url = url.strip()
    if not is_http_url(url):
        return None
    content = item.get("content")
    return RawResult(
        url=url,
        title=title,
        snippet=content if isinstance(content, str) else "",
        rank=rank,
        date=_date(item.get("published_date")),
    )


def _date(value: object) -> str | None:
    """``published_date`` as ``YYYY-MM-DD``: ISO 8601 or an RFC 2822 date (both are seen)."""
    if not isinstance(value, str) or len(value) > 64:
        return None
    value = value.strip()
    try:
        return datetime.fromisoformat(value).date().isoformat()
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when.tzinfo is not None:
        when = when.astimezone(UTC)
    return when.date().isoformat()
