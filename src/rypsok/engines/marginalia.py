"""Marginalia Search API with the operator's own key (admission: docs/engines/marginalia.md).

One ``GET /search`` on ``api2.marginalia-search.com``, the current API, with the key in the
``API-Key`` header (the legacy API put it in the path: ``api.marginalia.nu/<key>/search/...``).
The shared development key ``public`` is refused before any request: it is rate-limited for
everyone, and integrations that used it got Marginalia's engine dropped from SearXNG. Marginalia
signals its rate limit with 503 and no ``Retry-After``. Free and paid non-commercial keys
deliver results under CC-BY-NC-SA 4.0: attribution is required.
"""

from __future__ import annotations

from typing import Final

from rypsok.contract.vocabulary import Category, FailureClass, SafeSearch
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
    replace_query,
    retry_after,
)

ADMISSION: Final = AdmissionRecord(
    engine_id="marginalia",
    provider="Marginalia Search: API (api2.marginalia-search.com)",
    categories=(Category.GENERAL,),
    endpoint="https://api2.marginalia-search.com/search",
    documentation="https://about.marginalia-search.com/article/api/",
    permitted_use=(
        "Official API of an independent small-web index, with the operator's own key (free "
        "non-commercial keys by e-mail, paid non-commercial or metered commercial keys); the "
        "shared 'public' key is for developing an integration only and is refused. "
        "Non-commercial keys deliver results under CC-BY-NC-SA 4.0."
    ),
    # Each key has its own limit, unpublished; a one-person project: one request a second.
    rate=RateLimit(requests=1, per_seconds=1.0),
    max_in_flight=1,
    attribution_required=True,
    license=(
        "CC-BY-NC-SA 4.0 for free and paid non-commercial keys (the response's license field); "
        "commercial keys carry no attribution requirement"
    ),
    cacheable=True,
    user_agent_note="No format required; the standard rypsok User-Agent (REQ-CMP-004).",
    # No documented language parameter: the engine is language-neutral.
    languages=frozenset(),
    # No time filter.
    time_ranges=frozenset(),
    # No documented bound: LIM-S1's 400 characters.
    max_query_chars=400,
    max_response_bytes=2 * 1024 * 1024,
    key="required",
    enabled_by_default=True,
    # ``count``: 1 to 100.
    max_results=100,
)

CREDENTIAL_HEADER: Final = "API-Key"
PUBLIC_KEY: Final = "public"
# Marginalia answers its rate limit with 503 and no Retry-After.
_RATE_LIMIT_STATUS: Final = 503


def build_request(query: EngineQuery) -> EngineRequest:
    """One search: count and the ``nsfw`` filter; the shared ``public`` key is refused."""
    params = {
        "query": query.text,
        "count": str(_count(query.count)),
        "nsfw": "0" if query.safe_search is SafeSearch.OFF else "1",
    }
    headers = [("Accept", "application/json")]
    credential_headers: frozenset[str] = frozenset()
    if query.credential is not None:
        key = query.credential.reveal()
        if key.strip().lower() == PUBLIC_KEY:
            raise EngineFailure(FailureClass.AUTH_FAILURE)
        headers.append((CREDENTIAL_HEADER, key))
        credential_headers = frozenset({CREDENTIAL_HEADER})
    return EngineRequest(
        method="GET",
        url=replace_query(query.endpoint, params),
        headers=tuple(headers),
        credential_headers=credential_headers,
    )


def parse(response: EngineResponse) -> list[RawResult]:
    """``results`` in Marginalia's order: title, URL, description; Marginalia gives no date."""
    if response.status in (429, _RATE_LIMIT_STATUS):
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
    description = item.get("description")
    return RawResult(
        url=url,
        title=title,
        snippet=description if isinstance(description, str) else "",
        rank=rank,
    )
