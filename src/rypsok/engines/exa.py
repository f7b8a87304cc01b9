"""Exa Search API (admission: docs/engines/exa.md).

One ``POST /search`` with a JSON body and the operator's key in ``x-api-key``. Exa's
``category`` narrows the index: ``news``, ``research paper`` and ``github`` serve rypsok's
``news``, ``science`` and ``code``; ``general`` sends no category. The category is the
requested one (``EngineQuery.category``). Snippets are Exa's query-relevant ``highlights``.
Exhausted credits or an exceeded key budget are answered with 402, classified
``rate_limited``.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any, Final

from rypsok.contract.vocabulary import Category, FailureClass, SafeSearch, TimeRange
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

# rypsok category -> Exa ``category`` (None: no category, the whole index).
_EXA_CATEGORIES: Final[dict[Category, str | None]] = {
    Category.GENERAL: None,
    Category.NEWS: "news",
    Category.SCIENCE: "research paper",
    Category.CODE: "github",
}
# Fixed windows, the same as the other drivers: month and year rounded up.
_RANGE_SECONDS: Final[dict[TimeRange, int]] = {
    TimeRange.DAY: 86_400,
    TimeRange.WEEK: 7 * 86_400,
    TimeRange.MONTH: 31 * 86_400,
    TimeRange.YEAR: 366 * 86_400,
}
# Characters of highlights per result: LIM-S10 keeps 500 of a snippet anyway.
HIGHLIGHT_CHARS: Final = 500
_HIGHLIGHT_SEPARATOR: Final = " … "

ADMISSION: Final = AdmissionRecord(
    engine_id="exa",
    provider="Exa Labs: Exa Search API",
    categories=(Category.GENERAL, Category.NEWS, Category.SCIENCE, Category.CODE),
    endpoint="https://api.exa.ai/search",
    documentation="https://exa.ai/docs/reference/search",
    permitted_use=(
        "Official API under Exa's Terms of Service, with the operator's own key; billed per "
        "request plus contents. The terms forbid copying or storing what the service returns "
        "beyond transient display, so results are not cached."
    ),
    # Default limit about 10 queries per second across endpoints; half of it is recorded.
    rate=RateLimit(requests=5, per_seconds=1.0),
    max_in_flight=4,
    attribution_required=False,
    license="Exa Terms of Service; the pages belong to their publishers",
    cacheable=False,
    user_agent_note="No format required; the standard rypsok User-Agent (REQ-CMP-004).",
    # No language parameter: the engine is language-neutral.
    languages=frozenset(),
    time_ranges=frozenset(_RANGE_SECONDS),
    # No documented bound: LIM-S1's 400 characters.
    max_query_chars=400,
    max_response_bytes=2 * 1024 * 1024,
    key="required",
    enabled_by_default=True,
    max_results=100,
)

CREDENTIAL_HEADER: Final = "x-api-key"
# 402: credits exhausted or the key's spending budget exceeded.
_QUOTA_STATUS: Final = 402


def exa_category(category: Category) -> str | None:
    """Exa's ``category`` for a rypsok category; None searches the whole index."""
    return _EXA_CATEGORIES.get(category)


def build_request(query: EngineQuery) -> EngineRequest:
    """One ``auto`` search asking for highlights only, never full page text."""
    body: dict[str, Any] = {
        "query": query.text,
        "type": "auto",
        "numResults": _count(query.count),
        "contents": {"highlights": {"maxCharacters": HIGHLIGHT_CHARS}},
    }
    category = exa_category(query.category)
    if category is not None:
        body["category"] = category
    if query.time_range is not None:
        since = datetime.fromtimestamp(query.now - _RANGE_SECONDS[query.time_range], tz=UTC)
        body["startPublishedDate"] = since.strftime("%Y-%m-%dT%H:%M:%S.000Z")
    region = query.region.strip().upper()
    if len(region) == 2 and region.isascii() and region.isalpha():
        body["userLocation"] = region
    if query.safe_search is not SafeSearch.OFF:
        body["moderation"] = True
    headers = [
        ("Accept", "application/json"),
        ("Content-Type", "application/json"),
    ]
    credential_headers: frozenset[str] = frozenset()
    if query.credential is not None:
        headers.append((CREDENTIAL_HEADER, query.credential.reveal()))
        credential_headers = frozenset({CREDENTIAL_HEADER})
    return EngineRequest(
        method="POST",
        url=query.endpoint,
        headers=tuple(headers),
        body=json.dumps(body, ensure_ascii=False).encode("utf-8"),
        credential_headers=credential_headers,
    )


def parse(response: EngineResponse) -> list[RawResult]:
    """``results`` in Exa's order: title, URL, joined highlights, publication date."""
    if response.status in (429, _QUOTA_STATUS):
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
    return RawResult(
        url=url,
        title=title,
        snippet=_snippet(item),
        rank=rank,
        date=_date(item.get("publishedDate")),
    )


def _snippet(item: dict[str, Any]) -> str:
    """The highlights, joined; else a ``summary`` or ``text`` when the response has one."""
    highlights = item.get("highlights")
    if isinstance(highlights, list):
        parts = [h for h in highlights if isinstance(h, str) and h.strip()]
        if parts:
            return _HIGHLIGHT_SEPARATOR.join(parts)
    for key in ("summary", "text"):
        value = item.get(key)
        if isinstance(value, str) and value.strip():
            return value
    return ""


def _date(value: object) -> str | None:
    """``publishedDate`` (ISO 8601) as ``YYYY-MM-DD``."""
    if not isinstance(value, str) or len(value) > 40:
        return None
    try:
        return datetime.fromisoformat(value.strip()).date().isoformat()
    except ValueError:
        return None
