"""Brave Search API, web search (admission: docs/engines/brave.md).

One GET to ``/res/v1/web/search``; the provider's rules (token header, language and
country tables, rate-limit headers, error bodies) live in :mod:`rypsok.engines.brave_api`.
"""

from __future__ import annotations

from typing import Final

from rypsok.contract.vocabulary import Category, FailureClass
from rypsok.engines import brave_api
from rypsok.engines.base import (
    AdmissionRecord,
    EngineFailure,
    EngineQuery,
    EngineRequest,
    EngineResponse,
    RateLimit,
    RawResult,
    load_json,
)

CREDENTIAL_HEADER: Final = brave_api.CREDENTIAL_HEADER

ADMISSION: Final = AdmissionRecord(
    engine_id="brave",
    provider="Brave Software: Brave Search API, web search",
    categories=(Category.GENERAL,),
    endpoint="https://api.search.brave.com/res/v1/web/search",
    documentation="https://api-dashboard.search.brave.com/api-reference/web/search/get",
    permitted_use=(
        "Official API under the Brave Search API Terms of Use, with the operator's own "
        "subscription token. The plan decides AI use: only plans whose terms permit AI use "
        "(Search / 'Data for AI') may serve an agent; the legacy 'Data for Search' plans forbid "
        "AI inference. Storage rights come with paid Search plans only, so results are not "
        "cached."
    ),
    # Free / entry plan: 1 request per second (X-RateLimit-Limit: 1, <monthly quota>). The plan
    # is the token's: the news engine ``brave_news`` with the same token shares it.
    rate=RateLimit(requests=1, per_seconds=1.0),
    max_in_flight=1,
    attribution_required=False,
    license="Brave Search API Terms of Use; the pages belong to their publishers",
    cacheable=False,
    user_agent_note=(
        "No format required. Brave's docs suggest a browser User-Agent for device-specific "
        "results; rypsok never imitates a browser and sends its standard User-Agent "
        "(REQ-CMP-004)."
    ),
    languages=frozenset(brave_api.SEARCH_LANG),
    time_ranges=frozenset(brave_api.FRESHNESS),
    # q: at most 400 characters and 50 words (the word bound is Brave's, answered with 422).
    max_query_chars=400,
    max_response_bytes=2 * 1024 * 1024,
    key="required",
    enabled_by_default=True,
    max_results=20,
)


def build_request(query: EngineQuery) -> EngineRequest:
    """One web search (see :func:`rypsok.engines.brave_api.build_request`)."""
    return brave_api.build_request(query, ADMISSION.max_results)


def search_lang(tag: str) -> str | None:
    """Brave's ``search_lang`` for a BCP 47 tag, or None when Brave has no such language."""
    return brave_api.search_lang(tag)


def parse(response: EngineResponse) -> list[RawResult]:
    """``web.results`` in Brave's order; an answer without ``web`` has no web results."""
    brave_api.check_errors(response)
    body = load_json(response)
    if not isinstance(body, dict) or body.get("type") != "search":
        raise EngineFailure(FailureClass.PARSE_FAILURE)
    web = body.get("web")
    if web is None:
        return []
    if not isinstance(web, dict):
        raise EngineFailure(FailureClass.PARSE_FAILURE)
    items = web.get("results", [])
    if not isinstance(items, list):
        raise EngineFailure(FailureClass.PARSE_FAILURE)
    return brave_api.results(items, ADMISSION.max_results)
