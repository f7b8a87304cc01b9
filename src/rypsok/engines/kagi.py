"""Kagi Search API v1 (admission: docs/engines/kagi.md).

One ``POST /api/v1/search`` with a JSON body (workflow ``search``) and the operator's token as
``Authorization: Bot <token>``, the token type of Kagi's authentication page. Results are
``data.search``; Kagi leaves a result key out when it has no results of that kind. Searches
inherit the Kagi account's personalisation (blocked and promoted sites).
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

# Fixed windows, the same as the other drivers: month and year rounded up.
_RANGE_SECONDS: Final[dict[TimeRange, int]] = {
    TimeRange.DAY: 86_400,
    TimeRange.WEEK: 7 * 86_400,
    TimeRange.MONTH: 31 * 86_400,
    TimeRange.YEAR: 366 * 86_400,
}
NO_REGION: Final = "no_region"

ADMISSION: Final = AdmissionRecord(
    engine_id="kagi",
    provider="Kagi: Kagi Search API v1",
    categories=(Category.GENERAL,),
    endpoint="https://kagi.com/api/v1/search",
    documentation="https://help.kagi.com/kagi/api/search.html",
    permitted_use=(
        "Official API, with the operator's own token from a Kagi plan that includes Search "
        "API access; every search is billed. No right to store results is granted, so they are "
        "not cached. An optional per-token IP allow-list refuses other addresses with 403."
    ),
    # Kagi publishes no request rate; a metered API billed per search: one request a second.
    rate=RateLimit(requests=1, per_seconds=1.0),
    max_in_flight=2,
    attribution_required=False,
    license="Kagi API terms; the pages belong to their publishers",
    cacheable=False,
    user_agent_note="No format required; the standard rypsok User-Agent (REQ-CMP-004).",
    # No language parameter (results follow the account's settings): language-neutral.
    languages=frozenset(),
    time_ranges=frozenset(_RANGE_SECONDS),
    # No documented bound: LIM-S1's 400 characters.
    max_query_chars=400,
    max_response_bytes=2 * 1024 * 1024,
    key="required",
    enabled_by_default=True,
    # ``limit`` accepts 1 to 1024.
    max_results=1024,
)

CREDENTIAL_HEADER: Final = "Authorization"
AUTH_SCHEME: Final = "Bot"
# 402 is not in Kagi's v1 reference; a payment refusal means the balance ran out.
_QUOTA_STATUS: Final = 402


def build_request(query: EngineQuery) -> EngineRequest:
    """One web search: limit, safe search, region and an ``after`` date for a time range."""
    filters: dict[str, str] = {"region": _region(query.region)}
    if query.time_range is not None:
        since = datetime.fromtimestamp(query.now - _RANGE_SECONDS[query.time_range], tz=UTC)
        filters["after"] = since.date().isoformat()
    body: dict[str, Any] = {
        "query": query.text,
        "workflow": "search",
        "limit": _count(query.count),
        "safe_search": query.safe_search is not SafeSearch.OFF,
        "filters": filters,
    }
    headers = [
        ("Accept", "application/json"),
        ("Content-Type", "application/json"),
    ]
    credential_headers: frozenset[str] = frozenset()
    if query.credential is not None:
        headers.append((CREDENTIAL_HEADER, f"{AUTH_SCHEME} {query.credential.reveal()}"))
        credential_headers = frozenset({CREDENTIAL_HEADER})
    return EngineRequest(
        method="POST",
        url=query.endpoint,
        headers=tuple(headers),
        body=json.dumps(body, ensure_ascii=False).encode("utf-8"),
        credential_headers=credential_headers,
    )


def parse(response: EngineResponse) -> list[RawResult]:
    """``data.search`` in Kagi's order; no ``search`` key means no web results."""
    if response.status in (429, _QUOTA_STATUS):
        raise EngineFailure(FailureClass.RATE_LIMITED, retry_after(response.headers))
    body = load_json(response)
    if not isinstance(body, dict):
        raise EngineFailure(FailureClass.PARSE_FAILURE)
    data = body.get("data")
    if not isinstance(data, dict):
        raise EngineFailure(FailureClass.PARSE_FAILURE)
    items = data.get("search", [])
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


def _region(region: str) -> str:
    """An ISO 3166-1 alpha-2 code (lower case, as Kagi's examples), else ``no_region``."""
    code = region.strip().lower()
    return code if len(code) == 2 and code.isascii() and code.isalpha() else NO_REGION


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
    snippet = item.get("snippet")
    return RawResult(
        url=url,
        title=title,
        snippet=snippet if isinstance(snippet, str) else "",
        rank=rank,
        date=_date(item.get("time")),
    )


def _date(value: object) -> str | None:
    """``time`` (creation or last update, ISO 8601) as ``YYYY-MM-DD``."""
    if not isinstance(value, str) or len(value) > 40:
        return None
    try:
        return datetime.fromisoformat(value.strip()).date().isoformat()
    except ValueError:
        return None
