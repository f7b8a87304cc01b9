"""GDELT DOC 2.0 article search, ``mode=artlist&format=json`` (admission: docs/engines/gdelt.md).

One GET per search. GDELT reports trouble as plain text, often with HTTP 200: its rate-limit
notice ("Please limit requests to one every 5 seconds ...") and short messages that refuse a
query (e.g. "The specified phrase is too short."). The driver tells them apart from JSON by
shape, never by passing the text on. An answer with no articles is ``{}``.
"""

from __future__ import annotations

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
    check_status,
    is_http_url,
    looks_like_challenge,
    replace_query,
)

# ISO 639-1 code -> the language name GDELT's ``sourcelang:`` operator takes. Only languages of
# GDELT's translingual collection whose English name is unambiguous are listed.
_SOURCE_LANGUAGES: Final[dict[str, str]] = {
    "ar": "arabic",
    "bg": "bulgarian",
    "bn": "bengali",
    "cs": "czech",
    "da": "danish",
    "de": "german",
    "el": "greek",
    "en": "english",
    "es": "spanish",
    "fi": "finnish",
    "fr": "french",
    "he": "hebrew",
    "hi": "hindi",
    "hr": "croatian",
    "hu": "hungarian",
    "id": "indonesian",
    "it": "italian",
    "ja": "japanese",
    "ko": "korean",
    "nl": "dutch",
    "pl": "polish",
    "pt": "portuguese",
    "ro": "romanian",
    "ru": "russian",
    "sk": "slovak",
    "sr": "serbian",
    "sv": "swedish",
    "th": "thai",
    "tr": "turkish",
    "uk": "ukrainian",
    "vi": "vietnamese",
    "zh": "chinese",
}

ADMISSION: Final = AdmissionRecord(
    engine_id="gdelt",
    provider="The GDELT Project: DOC 2.0 API",
    categories=(Category.NEWS,),
    endpoint="https://api.gdeltproject.org/api/v2/doc/doc",
    documentation="https://blog.gdeltproject.org/gdelt-doc-2-0-api-debuts/",
    permitted_use=(
        "Official public API, no key; GDELT data are free for any use provided the GDELT "
        "Project is cited with a link to https://www.gdeltproject.org/."
    ),
    # Documented: one request every 5 s per IP, and repeated violations lengthen the block;
    # admitted at one per 6 s so that jitter never crosses the line.
    rate=RateLimit(requests=1, per_seconds=6.0),
    max_in_flight=1,
    attribution_required=True,
    license="GDELT terms of use: free and unrestricted use with citation of the GDELT Project "
    "and a link to gdeltproject.org; articles belong to their publishers",
    cacheable=True,
    user_agent_note="No format required; the standard rypsok User-Agent (REQ-CMP-004).",
    languages=frozenset(_SOURCE_LANGUAGES),
    time_ranges=frozenset(TimeRange),
    # No documented maximum: the service's own bound (LIM-S1).
    max_query_chars=400,
    max_response_bytes=2 * 1024 * 1024,
    key="none",
    enabled_by_default=True,
    max_results=250,
)

# Day, week and month fit GDELT's relative ``timespan``, documented for windows within its
# last three months; a year goes past that, so it is an explicit start and end instead.
# Windows are rounded up as in the other drivers.
_TIMESPAN: Final[dict[TimeRange, str]] = {
    TimeRange.DAY: "1d",
    TimeRange.WEEK: "7d",
    TimeRange.MONTH: "31d",
}
_YEAR_SECONDS: Final = 366 * 86_400
_DATETIME_FORMAT: Final = "%Y%m%d%H%M%S"
_SEENDATE_FORMAT: Final = "%Y%m%dT%H%M%SZ"
# GDELT's rate-limit notice, searched for only in a body that is not JSON.
_RATE_LIMIT_MARK: Final = b"limit requests"
_HTML_MARKS: Final = (b"<!doctype", b"<html", b"<body")


def build_request(query: EngineQuery) -> EngineRequest:
    """One article-list search, filtered to the asked language and time range."""
    text = query.text
    language = _SOURCE_LANGUAGES.get(query.language.split("-")[0].lower())
    if language is not None:
        text = f"{text} sourcelang:{language}"
    params = {
        "query": text,
        "mode": "artlist",
        "format": "json",
        "maxrecords": str(_count(query.count)),
        # GDELT's relevance order (blended with the standing of the outlet), asked for
        # explicitly rather than left to the default order.
        "sort": "hybridrel",
    }
    if query.time_range is TimeRange.YEAR:
        params["startdatetime"] = _gdelt_datetime(query.now - _YEAR_SECONDS)
        params["enddatetime"] = _gdelt_datetime(query.now)
    elif query.time_range is not None:
        params["timespan"] = _TIMESPAN[query.time_range]
    return EngineRequest(
        method="GET",
        url=replace_query(query.endpoint, params),
        headers=(("Accept", "application/json"),),
    )


def parse(response: EngineResponse) -> list[RawResult]:
    """Articles in GDELT's order with the date GDELT first saw them; GDELT gives no snippet."""
    if response.status == 403:
        # No key is involved: a refusal is a block of this client, not a credential problem.
        raise EngineFailure(FailureClass.BLOCKED)
    check_status(response)
    if looks_like_challenge(response):
        raise EngineFailure(FailureClass.BLOCKED)
    body = _load(response)
    if not isinstance(body, dict):
        raise EngineFailure(FailureClass.PARSE_FAILURE)
    articles = body.get("articles", [])
    if not isinstance(articles, list):
        raise EngineFailure(FailureClass.PARSE_FAILURE)
    results: list[RawResult] = []
    for article in articles[: ADMISSION.max_results]:
        result = _result(article, len(results) + 1)
        if result is not None:
            results.append(result)
    return results


def _count(requested: int) -> int:
    return max(1, min(requested, ADMISSION.max_results))


def _gdelt_datetime(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, tz=UTC).strftime(_DATETIME_FORMAT)


def _load(response: EngineResponse) -> Any:
    """The JSON body, or the failure class of GDELT's plain-text answers."""
    try:
        # strict=False: GDELT titles sometimes carry raw control characters.
        return json.loads(response.body, strict=False)
    except (ValueError, RecursionError):
        pass
    head = response.body[:4096].lower()
    if _RATE_LIMIT_MARK in head:
        raise EngineFailure(FailureClass.RATE_LIMITED)
    start = head.lstrip(b"\xef\xbb\xbf \t\r\n")[:1]
    if not start or start in (b"{", b"[") or response.media_type.endswith("json"):
        # Empty, or JSON that does not decode (cut short, corrupted).
        raise EngineFailure(FailureClass.PARSE_FAILURE)
    if any(mark in head for mark in _HTML_MARKS):
        # A whole page where data was expected: not one of GDELT's one-line messages.
        raise EngineFailure(FailureClass.PARSE_FAILURE)
    # GDELT's documented answer to a query it will not run (too short, bad operator, ...).
    raise EngineFailure(FailureClass.REQUEST_FAILURE)


def _result(article: object, rank: int) -> RawResult | None:
    if not isinstance(article, dict):
        return None
    title = article.get("title")
    url = article.get("url")
    if not isinstance(title, str) or not title.strip() or not isinstance(url, str):
        return None
    url = url.strip()
    if not is_http_url(url):
        return None
    return RawResult(url=url, title=title, snippet="", rank=rank, date=_date(article))


def _date(article: dict[str, Any]) -> str | None:
    """``YYYY-MM-DD`` of ``seendate`` (``20230918T031500Z``, when GDELT first saw it)."""
    seen = article.get("seendate")
    if not isinstance(seen, str) or len(seen) > 20:
        return None
    try:
        return datetime.strptime(seen, _SEENDATE_FORMAT).date().isoformat()
    except ValueError:
        return None
