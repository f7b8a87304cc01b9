"""Stack Exchange: API 2.3 ``search/advanced`` on Stack Overflow (code).

Admission record: ``docs/engines/stackexchange.md``. Every answer comes in the common wrapper
(``items``, ``has_more``, ``quota_max``, ``quota_remaining``, optional ``backoff``); errors
come in the same wrapper as ``error_id``/``error_name``/``error_message``, whatever the HTTP
status. Responses are always gzip-compressed on the wire; the pipeline decompresses them.
"""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from typing import Any, Final, NoReturn

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
    check_status,
    clip_raw,
    http_url,
    looks_like_challenge,
)

ADMISSION: Final = AdmissionRecord(
    engine_id="stackexchange",
    provider="Stack Exchange, Inc. (Stack Overflow)",
    categories=(Category.CODE,),
    endpoint="https://api.stackexchange.com/2.3/search/advanced",
    documentation="https://api.stackexchange.com/docs/advanced-search",
    permitted_use=(
        "Official public API, no key needed; an optional app key raises the quota "
        "(https://api.stackexchange.com/docs/throttle). The key is sent as the key query "
        "parameter, so it is part of the URL, which only goes to the endpoint's origin."
    ),
    # Without a key: 300 requests per day per IP; with one 10,000 (keyed_rate, in force when a
    # key is configured); never above 30/s.
    rate=RateLimit(requests=300, per_seconds=86_400.0),
    keyed_rate=RateLimit(requests=10_000, per_seconds=86_400.0),
    max_in_flight=2,
    attribution_required=True,
    license="CC BY-SA (2.5, 3.0 or 4.0 by post date): link to the question, name its author",
    cacheable=True,
    user_agent_note=(
        "Standard rypsok User-Agent (REQ-CMP-004); no per-engine format. Responses are always "
        "gzip-compressed."
    ),
    # Stack Overflow is English-only and the API has no language filter: language-neutral.
    languages=frozenset(),
    time_ranges=frozenset(TimeRange),
    max_query_chars=400,
    max_response_bytes=4 * 1024 * 1024,
    key="optional",
    enabled_by_default=True,
    max_results=50,
)

_SITE: Final = "stackoverflow"
# The built-in filter that adds the question body (HTML) to the default fields: the only
# provider text that can serve as a snippet.
_FILTER: Final = "withbody"
_RANGE_SECONDS: Final[dict[TimeRange, int]] = {
    TimeRange.DAY: 86_400,
    TimeRange.WEEK: 7 * 86_400,
    TimeRange.MONTH: 31 * 86_400,
    TimeRange.YEAR: 366 * 86_400,
}
# error_id values that mean the key or token is missing, wrong or refused.
_AUTH_ERROR_IDS: Final = frozenset({401, 402, 403, 405, 406})
_AUTH_ERROR_NAMES: Final = frozenset(
    {
        "access_token_required",
        "invalid_openid_request",
        "access_denied",
        "key_required",
        "access_token_compromised",
    }
)
_THROTTLE_ERROR_ID: Final = 502
_MAX_ITEMS: Final = 200
_SNIPPET_RAW_MAX: Final = 2000
# Epoch seconds accepted as a creation date: 2008-01-01 (before Stack Overflow) to 2100.
_EPOCH_MIN: Final = 1_199_145_600
_EPOCH_MAX: Final = 4_102_444_800


def build_request(query: EngineQuery) -> EngineRequest:
    """One GET of ``search/advanced`` on Stack Overflow for ``query.count`` questions."""
    count = max(1, min(query.count, ADMISSION.max_results))
    params = [
        ("q", query.text),
        ("site", _SITE),
        ("sort", "relevance"),
        ("order", "desc"),
        ("page", "1"),
        ("pagesize", str(count)),
        ("filter", _FILTER),
    ]
    if query.time_range is not None:
        since = int(query.now) - _RANGE_SECONDS[query.time_range]
        params.append(("fromdate", str(since)))
    if query.credential is not None:
        # The API takes the app key only as a query parameter (it is not a secret by the
        # provider's design, but rypsok still never logs or forwards it elsewhere).
        params.append(("key", query.credential.reveal()))
    return EngineRequest(
        method="GET",
        url=append_query(query.endpoint, params),
        headers=(("Accept", "application/json"),),
    )


def _seconds(value: Any) -> float | None:
    """A numeric wrapper field (``backoff``) as seconds to wait, at most LIM-B4."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if not math.isfinite(value) or value < 0:
        return None
    return min(float(value), MAX_RETRY_AFTER_S)


def _is_key_parameter(message: Any) -> bool:
    """Whether a ``bad_parameter`` error names the ``key`` parameter (an invalid app key).

    The message is compared, never returned: it names the refused parameter.
    """
    if not isinstance(message, str):
        return False
    words = message.strip().strip("`").lower().replace("`", " ").split()
    return bool(words) and words[0] == "key"


def _raise_error(data: dict[str, Any]) -> NoReturn:
    """Classify an error wrapper; raises always."""
    # Only well-typed fields are compared: anything else (a list, an object) is unknown.
    raw_id, raw_name = data.get("error_id"), data.get("error_name")
    error_id = raw_id if isinstance(raw_id, int) and not isinstance(raw_id, bool) else None
    error_name = raw_name if isinstance(raw_name, str) else None
    wait = _seconds(data.get("backoff"))
    if error_id == _THROTTLE_ERROR_ID or error_name == "throttle_violation":
        # The wait is only taken from a numeric field, never read out of the message text.
        raise EngineFailure(FailureClass.RATE_LIMITED, wait)
    if error_id in _AUTH_ERROR_IDS or error_name in _AUTH_ERROR_NAMES:
        raise EngineFailure(FailureClass.AUTH_FAILURE, wait)
    if error_name == "bad_parameter" and _is_key_parameter(data.get("error_message")):
        raise EngineFailure(FailureClass.AUTH_FAILURE, wait)
    if wait is not None:
        # Any backoff is binding, whatever else went wrong.
        raise EngineFailure(FailureClass.RATE_LIMITED, wait)
    raise EngineFailure(FailureClass.REQUEST_FAILURE)


def _wrapper(response: EngineResponse) -> dict[str, Any]:
    """The decoded wrapper of a successful answer, or a failure class."""
    if response.status == 429:
        check_status(response)
    if looks_like_challenge(response):
        raise EngineFailure(FailureClass.BLOCKED)
    data: Any = None
    decoded = True
    try:
        data = json.loads(response.body)
    except (ValueError, RecursionError):
        decoded = False
    if not decoded:
        # Outside the handler, so the decoder's error (which holds the body) is not chained.
        check_status(response)  # a non-2xx status without a wrapper is classified by status
        raise EngineFailure(FailureClass.PARSE_FAILURE)
    if isinstance(data, dict) and ("error_id" in data or "error_name" in data):
        _raise_error(data)
    check_status(response)
    if not isinstance(data, dict) or not isinstance(data.get("items"), list):
        raise EngineFailure(FailureClass.PARSE_FAILURE)
    return data


def _date(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    if not _EPOCH_MIN <= value <= _EPOCH_MAX:
        return None
    return datetime.fromtimestamp(value, tz=UTC).date().isoformat()


def parse(response: EngineResponse) -> list[RawResult]:
    """Questions in provider order; a ``backoff`` or an exhausted quota is ``rate_limited``.

    The wrapper's ``backoff`` binds the next request, and a result list has no way to carry
    it to the pipeline, so the answer is given up for the wait it announces. Titles keep
    their HTML entities and the snippet is the raw question body (REQ-ENG-012); tags and
    score are not turned into text of rypsok's own.
    """
    data = _wrapper(response)
    wait = _seconds(data.get("backoff"))
    if wait is not None:
        raise EngineFailure(FailureClass.RATE_LIMITED, wait)
    quota = data.get("quota_remaining")
    if isinstance(quota, int) and not isinstance(quota, bool) and quota <= 0:
        raise EngineFailure(FailureClass.RATE_LIMITED)
    results: list[RawResult] = []
    for item in data["items"][:_MAX_ITEMS]:
        if not isinstance(item, dict):
            continue
        title = item.get("title")
        url = http_url(item.get("link"))
        if not isinstance(title, str) or not title.strip() or url is None:
            continue  # a malformed item costs itself only
        body = item.get("body")
        results.append(
            RawResult(
                url=url,
                title=title,
                snippet=clip_raw(body, _SNIPPET_RAW_MAX) if isinstance(body, str) else "",
                rank=len(results) + 1,
                date=_date(item.get("creation_date")),
            )
        )
    return results
