"""You.com Search API v1 (admission: docs/engines/you.md).

One ``GET /v1/search`` with the operator's key in ``X-API-Key``. You.com answers with web and
news sections; this engine serves ``general`` and reads ``results.web``. Snippets are the first
query-aware ``snippets`` entry, else the page ``description``. Errors are JSON objects
(``detail``, or ``status``/``code``/``title``/``detail``); 402 means the credits ran out.
"""

from __future__ import annotations

from datetime import datetime
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
    replace_query,
    retry_after,
)

# rypsok language (primary subtag) -> You.com ``language`` (its Language enum, upper case).
_PLAIN_LANGS: Final = (
    "ar", "eu", "bn", "bg", "ca", "hr", "cs", "da", "nl", "en", "et", "fi", "fr", "gl", "de",
    "el", "gu", "he", "hi", "hu", "is", "it", "ja", "kn", "ko", "lv", "lt", "ms", "ml", "mr",
    "nb", "pl", "pa", "ro", "ru", "sr", "sk", "sl", "es", "sv", "ta", "te", "th", "tr", "uk",
    "vi",
)  # fmt: skip
_LANGUAGES: Final[dict[str, str]] = {
    **{code: code.upper() for code in _PLAIN_LANGS},
    "no": "NB",
    "zh": "ZH-HANS",
    "pt": "PT-BR",
}
# Full tags that pick one of You.com's regional or script variants.
_LANGUAGE_TAGS: Final[dict[str, str]] = {
    "en-gb": "EN-GB",
    "pt-br": "PT-BR",
    "pt-pt": "PT-PT",
    "zh-hans": "ZH-HANS",
    "zh-cn": "ZH-HANS",
    "zh-sg": "ZH-HANS",
    "zh-hant": "ZH-HANT",
    "zh-tw": "ZH-HANT",
    "zh-hk": "ZH-HANT",
    "zh-mo": "ZH-HANT",
}
# You.com's Country enum.
_COUNTRIES: Final = frozenset(
    "AR AU AT BE BR CA CL DK FI FR DE HK IN ID IT JP KR MY MX NL NZ NO CN PL PT PH RU SA ZA "
    "ES SE CH TW TR GB US".split()
)
_FRESHNESS: Final[dict[TimeRange, str]] = {
    TimeRange.DAY: "day",
    TimeRange.WEEK: "week",
    TimeRange.MONTH: "month",
    TimeRange.YEAR: "year",
}

ADMISSION: Final = AdmissionRecord(
    engine_id="you",
    provider="You.com: Search API v1 (ydc-index.io)",
    categories=(Category.GENERAL,),
    endpoint="https://ydc-index.io/v1/search",
    documentation="https://you.com/docs/api-reference/search/v1-search",
    permitted_use=(
        "Official API for LLM applications under You.com's API terms, with the operator's own "
        "key; credit-based billing (free credits on sign-up). No right to store results is "
        "granted, so they are not cached."
    ),
    # You.com publishes no request rate for the entry plan: one request a second.
    rate=RateLimit(requests=1, per_seconds=1.0),
    max_in_flight=2,
    attribution_required=False,
    license="You.com API terms; the pages belong to their publishers",
    cacheable=False,
    user_agent_note="No format required; the standard rypsok User-Agent (REQ-CMP-004).",
    languages=frozenset(_LANGUAGES),
    time_ranges=frozenset(_FRESHNESS),
    # No documented bound: LIM-S1's 400 characters.
    max_query_chars=400,
    max_response_bytes=2 * 1024 * 1024,
    key="required",
    enabled_by_default=True,
    # ``count``: 1 to 100 per section.
    max_results=100,
)

CREDENTIAL_HEADER: Final = "X-API-Key"
# 402: the account's credits are exhausted ("add credits").
_QUOTA_STATUS: Final = 402


def build_request(query: EngineQuery) -> EngineRequest:
    """One search: count, safesearch, language, country and freshness."""
    params = {
        "query": query.text,
        "count": str(_count(query.count)),
        "safesearch": query.safe_search.value,
    }
    language = language_code(query.language)
    if language is not None:
        params["language"] = language
    country = query.region.strip().upper()
    if country in _COUNTRIES:
        params["country"] = country
    if query.time_range is not None:
        params["freshness"] = _FRESHNESS[query.time_range]
    headers = [("Accept", "application/json")]
    credential_headers: frozenset[str] = frozenset()
    if query.credential is not None:
        headers.append((CREDENTIAL_HEADER, query.credential.reveal()))
        credential_headers = frozenset({CREDENTIAL_HEADER})
    return EngineRequest(
        method="GET",
        url=replace_query(query.endpoint, params),
        headers=tuple(headers),
        credential_headers=credential_headers,
    )


def parse(response: EngineResponse) -> list[RawResult]:
    """``results.web`` in You.com's order; no ``web`` section means no web results."""
    if response.status in (429, _QUOTA_STATUS):
        raise EngineFailure(FailureClass.RATE_LIMITED, retry_after(response.headers))
    body = load_json(response)
    if not isinstance(body, dict):
        raise EngineFailure(FailureClass.PARSE_FAILURE)
    sections = body.get("results")
    if not isinstance(sections, dict):
        raise EngineFailure(FailureClass.PARSE_FAILURE)
    items = sections.get("web", [])
    if not isinstance(items, list):
        raise EngineFailure(FailureClass.PARSE_FAILURE)
    results: list[RawResult] = []
    for item in items[: ADMISSION.max_results]:
        result = _result(item, len(results) + 1)
        if result is not None:
            results.append(result)
    return results


def language_code(tag: str) -> str | None:
    """You.com's ``language`` for a BCP 47 tag, or None when it has no such language."""
    lowered = tag.strip().lower()
    return _LANGUAGE_TAGS.get(lowered) or _LANGUAGES.get(lowered.split("-")[0])


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
        date=_date(item.get("page_age")),
    )


def _snippet(item: dict[str, Any]) -> str:
    """The first non-empty entry of ``snippets``, else ``description``."""
    snippets = item.get("snippets")
    if isinstance(snippets, list):
        for snippet in snippets:
            if isinstance(snippet, str) and snippet.strip():
                return snippet
    description = item.get("description")
    return description if isinstance(description, str) else ""


def _date(value: object) -> str | None:
    """``page_age`` (ISO 8601) as ``YYYY-MM-DD``."""
    if not isinstance(value, str) or len(value) > 40:
        return None
    try:
        return datetime.fromisoformat(value.strip()).date().isoformat()
    except ValueError:
        return None
