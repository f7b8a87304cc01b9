"""The Brave Search API, shared by its two drivers (brave: web, brave_news: news).

One provider, one set of rules: the subscription-token header, Brave's language and country
tables, its rate-limit headers (``X-RateLimit-Limit: 1, 15000`` and ``X-RateLimit-Reset: 1,
1419704``: per second, per month; a 429 waits for the reset of the window that ran out) and
its error bodies (an invalid token is answered with 422 ``SUBSCRIPTION_TOKEN_INVALID``, not
only with 401). Each driver keeps its admission record, endpoint and answer shape.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any, Final

from rypsok.contract.vocabulary import FailureClass, TimeRange
from rypsok.engines.base import (
    MAX_RETRY_AFTER_S,
    EngineFailure,
    EngineQuery,
    EngineRequest,
    EngineResponse,
    RawResult,
    is_http_url,
    parse_retry_after,
    replace_query,
    server_time,
)

# rypsok language (primary subtag) -> Brave ``search_lang``. Brave's Language enum is not plain
# ISO 639-1: Japanese is ``jp``, Chinese and Portuguese exist only as script/regional variants.
_PLAIN_LANGS: Final = (
    "ar", "eu", "bn", "bg", "ca", "hr", "cs", "da", "nl", "en", "et", "fi", "fr", "gl", "de",
    "el", "gu", "he", "hi", "hu", "is", "it", "kn", "ko", "lv", "lt", "ms", "ml", "mr", "nb",
    "pl", "pa", "ro", "ru", "sr", "sk", "sl", "es", "sv", "ta", "te", "th", "tr", "uk", "vi",
)  # fmt: skip
SEARCH_LANG: Final[dict[str, str]] = {
    **{code: code for code in _PLAIN_LANGS},
    "ja": "jp",
    "no": "nb",
    "zh": "zh-hans",
    "pt": "pt-br",
}
# Full tags that pick one of Brave's regional or script variants.
_SEARCH_LANG_TAGS: Final[dict[str, str]] = {
    "en-gb": "en-gb",
    "pt-br": "pt-br",
    "pt-pt": "pt-pt",
    "zh-hans": "zh-hans",
    "zh-cn": "zh-hans",
    "zh-sg": "zh-hans",
    "zh-hant": "zh-hant",
    "zh-tw": "zh-hant",
    "zh-hk": "zh-hant",
    "zh-mo": "zh-hant",
}
# Brave's Country enum (``ALL`` = worldwide).
_COUNTRIES: Final = frozenset(
    "AR AU AT BE BR CA CL DK FI FR DE HK IN ID IT JP KR MY MX NL NZ NO CN PL PT PH RU SA ZA "
    "ES SE CH TW TR GB US".split()
)
FRESHNESS: Final[dict[TimeRange, str]] = {
    TimeRange.DAY: "pd",
    TimeRange.WEEK: "pw",
    TimeRange.MONTH: "pm",
    TimeRange.YEAR: "py",
}

CREDENTIAL_HEADER: Final = "X-Subscription-Token"
_BAD_SUBSCRIPTION_CODE: Final = "SUBSCRIPTION_TOKEN_INVALID"
_RATE_LIMITED_CODES: Final = frozenset({"RATE_LIMITED", "QUOTA_LIMITED"})
_ERROR_PEEK_BYTES: Final = 16_384


def build_request(query: EngineQuery, max_count: int) -> EngineRequest:
    """One search: count (at most ``max_count``), country, search_lang, safesearch, freshness."""
    params = {
        "q": query.text,
        "count": str(max(1, min(query.count, max_count))),
        "country": country(query.region),
        "safesearch": query.safe_search.value,
    }
    language = search_lang(query.language)
    if language is not None:
        params["search_lang"] = language
    if query.time_range is not None:
        params["freshness"] = FRESHNESS[query.time_range]
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


def results(items: list[Any], max_results: int) -> list[RawResult]:
    """Brave's result items, in its order, ranked 1..n; malformed items are skipped."""
    found: list[RawResult] = []
    for item in items[:max_results]:
        result = _result(item, len(found) + 1)
        if result is not None:
            found.append(result)
    return found


def search_lang(tag: str) -> str | None:
    """Brave's ``search_lang`` for a BCP 47 tag, or None when Brave has no such language."""
    lowered = tag.strip().lower()
    return _SEARCH_LANG_TAGS.get(lowered) or SEARCH_LANG.get(lowered.split("-")[0])


def country(region: str) -> str:
    code = region.strip().upper()
    return code if code in _COUNTRIES else "ALL"


def check_errors(response: EngineResponse) -> None:
    """Brave's own signals, before the status classification every provider shares."""
    if 200 <= response.status < 300:
        return
    code = _error_code(response)
    if response.status == 429 or code in _RATE_LIMITED_CODES:
        raise EngineFailure(FailureClass.RATE_LIMITED, _retry_after(response.headers))
    if code == _BAD_SUBSCRIPTION_CODE:
        raise EngineFailure(FailureClass.AUTH_FAILURE)


def _error_code(response: EngineResponse) -> str:
    """``error.code`` of Brave's ErrorResponse, compared with known values only."""
    if response.media_type != "application/json":
        return ""
    try:
        body: Any = json.loads(response.body[:_ERROR_PEEK_BYTES])
    except (ValueError, RecursionError):
        return ""
    error = body.get("error") if isinstance(body, dict) else None
    code = error.get("code") if isinstance(error, dict) else None
    return code.strip().upper() if isinstance(code, str) and len(code) <= 64 else ""


def _retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds to wait: ``retry-after`` if given, else the reset of the exhausted window.

    ``X-RateLimit-Reset`` lists seconds until each window resets, aligned with
    ``X-RateLimit-Remaining``; the windows with nothing remaining are the ones that refused.
    The smallest of them is used (the circuit's own growing cooldown covers a longer
    exhaustion); without a readable ``Remaining`` the smallest window is used.
    """
    seconds = parse_retry_after(headers.get("retry-after"), now=server_time(headers))
    if seconds is not None:
        return seconds
    resets = _numbers(headers.get("x-ratelimit-reset"))
    if not resets:
        return None
    remaining = _numbers(headers.get("x-ratelimit-remaining"))
    exhausted = (
        [reset for reset, left in zip(resets, remaining, strict=True) if left <= 0]
        if len(remaining) == len(resets)
        else []
    )
    return min(float(min(exhausted or resets)), MAX_RETRY_AFTER_S)


def _numbers(value: str | None) -> list[int]:
    """A comma list of non-negative integers; empty when any part is unreadable."""
    if not value or len(value) > 200:
        return []
    parts = [part.strip() for part in value.split(",")]
    if not all(part.isascii() and part.isdigit() and len(part) <= 12 for part in parts):
        return []
    return [int(part) for part in parts]


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
        date=_date(item.get("page_age")),
    )


def _date(value: object) -> str | None:
    """``page_age`` (ISO 8601) as ``YYYY-MM-DD``; ``age`` ("2 days ago") is never read."""
    if not isinstance(value, str) or len(value) > 40:
        return None
    try:
        return datetime.fromisoformat(value.strip()).date().isoformat()
    except ValueError:
        return None
