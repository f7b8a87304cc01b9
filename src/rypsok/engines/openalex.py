"""OpenAlex: the works search of the REST API (science).

Admission record: ``docs/engines/openalex.md``. Since 2026-02-13 an API key is required (free;
without one the daily budget covers a handful of searches), so the record says
``key = "required"`` and the catalog keeps the engine inactive until the operator configures
one. The key travels as the ``api_key`` query parameter, the only place OpenAlex reads it; the
URL therefore holds a credential and only ever goes to the endpoint's origin.

Abstracts come as ``abstract_inverted_index`` (word -> positions); the snippet is the abstract
rebuilt from it, bounded in the positions read and in the characters produced.
"""

from __future__ import annotations

import math
import re
from datetime import UTC, date, datetime
from typing import Any, Final

from rypsok.contract.vocabulary import Category, FailureClass, TimeRange
from rypsok.engines.base import (
    MAX_RETRY_AFTER_S,
    AdmissionRecord,
    EngineFailure,
    EngineQuery,
    EngineRequest,
    EngineResponse,
    RateLimit,
    RawResult,
    append_query,
    http_url,
    load_json,
    looks_like_challenge,
    retry_after,
)

ADMISSION: Final = AdmissionRecord(
    engine_id="openalex",
    provider="OpenAlex (OurResearch): REST API, works search",
    categories=(Category.SCIENCE,),
    endpoint="https://api.openalex.org/works",
    documentation="https://developers.openalex.org/api-reference/authentication",
    permitted_use=(
        "Official REST API; a free API key is required since 2026-02-13 and buys a daily "
        "budget ($1/day, about 1,000 searches), beyond which OpenAlex answers 429. The data "
        "is CC0 and 'will remain available at no cost'."
    ),
    # The free key's budget: search costs $1 per 1,000 calls against $1 a day. The record keeps
    # that daily window; the provider's 100 requests/s ceiling is far above max_in_flight.
    rate=RateLimit(requests=1000, per_seconds=86_400.0),
    max_in_flight=2,
    attribution_required=False,
    license="CC0 1.0 (OpenAlex data)",
    cacheable=True,
    user_agent_note=(
        "Standard rypsok User-Agent (REQ-CMP-004); no per-engine format. The mailto polite "
        "pool no longer changes limits, so no contact parameter is sent."
    ),
    # The ``language`` filter takes ISO 639-1 codes; any two-letter code is passed on.
    languages=None,
    time_ranges=frozenset(TimeRange),
    max_query_chars=400,
    max_response_bytes=2 * 1024 * 1024,
    key="required",
    enabled_by_default=True,
    max_results=50,
)

_RANGE_SECONDS: Final[dict[TimeRange, int]] = {
    TimeRange.DAY: 86_400,
    TimeRange.WEEK: 7 * 86_400,
    TimeRange.MONTH: 31 * 86_400,
    TimeRange.YEAR: 366 * 86_400,
}
# Root-level fields only (OpenAlex's ``select`` takes no nested paths): a full work object
# carries authorships, concepts and reference lists many times the size of what is used.
_SELECT: Final = (
    "id,doi,display_name,title,publication_date,abstract_inverted_index,primary_location"
)
_LANGUAGE: Final = re.compile(r"^[a-z]{2}$")
_DATE: Final = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")
_MAX_ITEMS: Final = 200
_SNIPPET_RAW_MAX: Final = 2000
# Abstract reconstruction bounds: words past this position are never placed (the snippet is
# cut far earlier), and at most this many (word, position) pairs are looked at per work.
_ABSTRACT_MAX_POSITION: Final = 1000
_ABSTRACT_MAX_PAIRS: Final = 20_000
_ABSTRACT_MAX_WORD: Final = 200
# An exhausted daily budget resets at midnight UTC; the wait is bounded by LIM-B4 anyway.
_BUDGET_HEADER: Final = "x-ratelimit-remaining-usd"


def _language(tag: str) -> str | None:
    """The ISO 639-1 code of a BCP 47 tag's primary language, if it has one."""
    primary = tag.split("-")[0].strip().lower()
    return primary if _LANGUAGE.match(primary) else None


def build_request(query: EngineQuery) -> EngineRequest:
    """One GET of ``/works?search=`` for ``query.count`` works, OpenAlex's relevance order.

    Without a key nothing is sent: the engine requires one (``auth_failure``).
    """
    if query.credential is None:
        raise EngineFailure(FailureClass.AUTH_FAILURE)
    text = " ".join(query.text.split())
    if not text:
        raise EngineFailure(FailureClass.REQUEST_FAILURE)
    filters: list[str] = []
    if query.time_range is not None:
        since = datetime.fromtimestamp(query.now - _RANGE_SECONDS[query.time_range], tz=UTC)
        filters.append(f"from_publication_date:{since:%Y-%m-%d}")
    language = _language(query.language)
    if language is not None:
        filters.append(f"language:{language}")
    count = max(1, min(query.count, ADMISSION.max_results))
    params = [("search", text), ("per-page", str(count)), ("page", "1"), ("select", _SELECT)]
    if filters:
        # Filter values are rypsok's own (a date, a two-letter code): no comma can leak in.
        params.append(("filter", ",".join(filters)))
    params.append(("api_key", query.credential.reveal()))
    return EngineRequest(
        method="GET",
        url=append_query(query.endpoint, params),
        headers=(("Accept", "application/json"),),
    )


def _budget_exhausted(response: EngineResponse) -> bool:
    value = response.headers.get(_BUDGET_HEADER, "").strip()
    try:
        remaining = float(value[:32])
    except ValueError:
        return False
    return math.isfinite(remaining) and remaining <= 0


def _raise_limited(response: EngineResponse) -> None:
    """OpenAlex's documented limit signals: 429 (daily budget) and 403 ("slow down")."""
    if response.status not in (403, 429):
        return
    if looks_like_challenge(response):
        raise EngineFailure(FailureClass.BLOCKED)
    if response.status == 403 and response.media_type in ("text/html", "application/xhtml+xml"):
        raise EngineFailure(FailureClass.BLOCKED)
    wait = retry_after(response.headers)
    if wait is None and _budget_exhausted(response):
        wait = MAX_RETRY_AFTER_S
    raise EngineFailure(FailureClass.RATE_LIMITED, wait)


def _abstract(index: Any) -> str:
    """The abstract rebuilt from an inverted index, bounded; empty when there is none."""
    if not isinstance(index, dict):
        return ""
    placed: dict[int, str] = {}
    pairs = 0
    for word, positions in index.items():
        if not isinstance(word, str) or not isinstance(positions, list):
            continue
        for position in positions:
            pairs += 1
            if pairs > _ABSTRACT_MAX_PAIRS:
                break
            if (
                isinstance(position, int)
                and not isinstance(position, bool)
                and 0 <= position < _ABSTRACT_MAX_POSITION
            ):
                placed[position] = word[:_ABSTRACT_MAX_WORD]
        if pairs > _ABSTRACT_MAX_PAIRS:
            break
    words = [placed[p] for p in sorted(placed)]
    text = " ".join(w for w in words if w)
    return text[:_SNIPPET_RAW_MAX]


def _url(item: dict[str, Any]) -> str | None:
    """The DOI link, else the landing page, else the OpenAlex work page."""
    location = item.get("primary_location")
    landing = location.get("landing_page_url") if isinstance(location, dict) else None
    for candidate in (item.get("doi"), landing, item.get("id")):
        url = http_url(candidate)
        if url is not None:
            return url
    return None


def _date(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    match = _DATE.match(value.strip())
    if match is None:
        return None
    try:
        return date(int(match[1]), int(match[2]), int(match[3])).isoformat()
    except ValueError:
        return None


def parse(response: EngineResponse) -> list[RawResult]:
    """Works in OpenAlex's order: display name, DOI (or landing page), abstract, date."""
    _raise_limited(response)
    data = load_json(response)
    if not isinstance(data, dict) or not isinstance(data.get("results"), list):
        raise EngineFailure(FailureClass.PARSE_FAILURE)
    results: list[RawResult] = []
    for item in data["results"][:_MAX_ITEMS]:
        if not isinstance(item, dict):
            continue
        title = item.get("display_name")
        if not isinstance(title, str) or not title.strip():
            title = item.get("title")
        url = _url(item)
        if not isinstance(title, str) or not title.strip() or url is None:
            continue  # a malformed work costs itself only
        results.append(
            RawResult(
                url=url,
                title=title,
                snippet=_abstract(item.get("abstract_inverted_index")),
                rank=len(results) + 1,
                date=_date(item.get("publication_date")),
            )
        )
    return results
