"""Mojeek Search API (admission: docs/engines/mojeek.md).

One ``GET /search?fmt=json``. Mojeek takes its key only as the ``api_key`` query parameter, so
the key travels in the URL of the endpoint's origin (``EngineRequest.url`` never shows in a
repr). Mojeek reports errors inside the body, with HTTP 200: ``response.status`` is ``"OK"``
or ``"ERROR: <message>"`` (e.g. ``"ERROR: Daily Limit Reached"``); the message is classified
and never passed on.
"""

from __future__ import annotations

import json
import re
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
    replace_query,
)

# Fixed windows, the same as the other drivers: month and year rounded up.
_RANGE_SECONDS: Final[dict[TimeRange, int]] = {
    TimeRange.DAY: 86_400,
    TimeRange.WEEK: 7 * 86_400,
    TimeRange.MONTH: 31 * 86_400,
    TimeRange.YEAR: 366 * 86_400,
}
# Boost for the region (rb) and language (lb) biases: Mojeek's recommended value.
BIAS_BOOST: Final = "10"

ADMISSION: Final = AdmissionRecord(
    engine_id="mojeek",
    provider="Mojeek: Mojeek Search API",
    categories=(Category.GENERAL,),
    endpoint="https://www.mojeek.com/search",
    documentation="https://www.mojeek.com/support/api/search/request_parameters.html",
    permitted_use=(
        "Official API of Mojeek's independent index under a commercial API agreement, with "
        "the operator's own key and its daily limit. No right to store results is granted, so "
        "they are not cached."
    ),
    # Limits are per contract (a daily quota per key); no request rate is published.
    rate=RateLimit(requests=1, per_seconds=1.0),
    max_in_flight=2,
    attribution_required=False,
    license="Mojeek API terms; the pages belong to their publishers",
    cacheable=False,
    user_agent_note="No format required; the standard rypsok User-Agent (REQ-CMP-004).",
    # ``lb`` + ``lbb`` bias results towards any ISO 639-1 language.
    languages=None,
    time_ranges=frozenset(_RANGE_SECONDS),
    # No documented bound: LIM-S1's 400 characters.
    max_query_chars=400,
    max_response_bytes=2 * 1024 * 1024,
    key="required",
    enabled_by_default=True,
    # ``t`` has no documented maximum (default 10); rypsok asks at most LIM-S2's ceiling.
    max_results=20,
)

CREDENTIAL_PARAMETER: Final = "api_key"
_OK: Final = "OK"
# Words of an ``ERROR: ...`` status, read only to pick a class.
_LIMIT_WORDS: Final = re.compile(r"\b(?:limit\w*|quota|too many|exceeded)\b")
_KEY_WORDS: Final = re.compile(r"\b(?:key|auth\w*|unauthori[sz]ed|forbidden|denied|permission)\b")
_ERROR_PEEK_BYTES: Final = 16_384
_MAX_EPOCH: Final = 253_402_300_799  # 9999-12-31T23:59:59Z


def build_request(query: EngineQuery) -> EngineRequest:
    """One JSON search: count, safe search, language and region bias, ``since`` date."""
    params: dict[str, str] = {}
    if query.credential is not None:
        params[CREDENTIAL_PARAMETER] = query.credential.reveal()
    params.update(
        {
            "q": query.text,
            "fmt": "json",
            "t": str(_count(query.count)),
            "safe": "0" if query.safe_search is SafeSearch.OFF else "1",
        }
    )
    language = query.language.strip().split("-")[0].lower()
    if len(language) == 2 and language.isascii() and language.isalpha():
        params["lb"] = language
        params["lbb"] = BIAS_BOOST
    region = query.region.strip().upper()
    if len(region) == 2 and region.isascii() and region.isalpha():
        params["rb"] = region
        params["rbb"] = BIAS_BOOST
    if query.time_range is not None:
        since = datetime.fromtimestamp(query.now - _RANGE_SECONDS[query.time_range], tz=UTC)
        params["since"] = since.strftime("%Y%m%d")
    return EngineRequest(
        method="GET",
        url=replace_query(query.endpoint, params),
        headers=(("Accept", "application/json"),),
    )


def parse(response: EngineResponse) -> list[RawResult]:
    """``response.results`` in Mojeek's order, after checking ``response.status``."""
    if not 200 <= response.status < 300:
        status = _peek_status(response)
        if status is not None and status.strip().upper() != _OK:
            raise EngineFailure(classify_status(status))
    body = load_json(response)
    inner = body.get("response") if isinstance(body, dict) else None
    if not isinstance(inner, dict):
        raise EngineFailure(FailureClass.PARSE_FAILURE)
    status = inner.get("status")
    if not isinstance(status, str):
        raise EngineFailure(FailureClass.PARSE_FAILURE)
    if status.strip().upper() != _OK:
        raise EngineFailure(classify_status(status))
    items = inner.get("results", [])
    if not isinstance(items, list):
        raise EngineFailure(FailureClass.PARSE_FAILURE)
    results: list[RawResult] = []
    for item in items[: ADMISSION.max_results]:
        result = _result(item, len(results) + 1)
        if result is not None:
            results.append(result)
    return results


def classify_status(status: str) -> FailureClass:
    """The class of an ``ERROR: <message>`` status; the message itself goes nowhere."""
    message = status[:300].lower()
    if _LIMIT_WORDS.search(message):
        return FailureClass.RATE_LIMITED
    if _KEY_WORDS.search(message):
        return FailureClass.AUTH_FAILURE
    return FailureClass.REQUEST_FAILURE


def _peek_status(response: EngineResponse) -> str | None:
    """``response.status`` of a JSON error body, if there is one."""
    if response.media_type != "application/json":
        return None
    try:
        body: Any = json.loads(response.body[:_ERROR_PEEK_BYTES])
    except (ValueError, RecursionError):
        return None
    inner = body.get("response") if isinstance(body, dict) else None
    status = inner.get("status") if isinstance(inner, dict) else None
    return status if isinstance(status, str) else None


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
    desc = item.get("desc")
    return RawResult(
        url=url,
        title=title,
        snippet=desc if isinstance(desc, str) else "",
        rank=rank,
        date=_date(item.get("pdate")) or _date(item.get("timestamp")),
    )


def _date(value: object) -> str | None:
    """A Unix timestamp (``pdate`` published, ``timestamp`` last modified) as ``YYYY-MM-DD``."""
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 12:
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or not 0 < value <= _MAX_EPOCH:
        return None
    return datetime.fromtimestamp(value, tz=UTC).date().isoformat()
