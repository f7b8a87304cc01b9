"""GitHub repository search, REST ``search/repositories`` (admission: docs/engines/github.md).

One GET per search, keyless by default; an operator token, when configured, goes in the
``Authorization`` header and raises the search limit from 10 to 30 requests a minute. GitHub
signals both its primary and its secondary rate limits with 403 or 429; only a 403 without
those signals is a credential problem.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Final

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
    is_http_url,
    load_json,
    parse_retry_after,
    replace_query,
    server_time,
)

ADMISSION: Final = AdmissionRecord(
    engine_id="github",
    provider="GitHub: REST API, search repositories",
    categories=(Category.CODE,),
    endpoint="https://api.github.com/search/repositories",
    documentation="https://docs.github.com/en/rest/search/search#search-repositories",
    permitted_use=(
        "Official REST API under the GitHub Terms of Service; keyless use is permitted at the "
        "unauthenticated search limit, a token raises it. Continuing while limited can get the "
        "integration banned."
    ),
    # Search: 10 requests/min without a token (per IP), 30/min with one (keyed_rate, in force
    # when a token is configured).
    rate=RateLimit(requests=10, per_seconds=60.0),
    keyed_rate=RateLimit(requests=30, per_seconds=60.0),
    max_in_flight=2,
    attribution_required=False,
    license="GitHub Terms of Service; repository metadata as published by its owners",
    cacheable=True,
    user_agent_note=(
        "GitHub rejects requests without a User-Agent; any stable value is accepted. The "
        "standard rypsok User-Agent (REQ-CMP-004)."
    ),
    # No natural-language filter (``language:`` is a programming language): language-neutral.
    languages=frozenset(),
    time_ranges=frozenset(TimeRange),
    # GitHub refuses search text over 256 characters (operators and qualifiers not counted).
    max_query_chars=256,
    max_response_bytes=2 * 1024 * 1024,
    key="optional",
    enabled_by_default=True,
    max_results=100,
)

API_VERSION: Final = "2022-11-28"
_RANGE_SECONDS: Final[dict[TimeRange, int]] = {
    TimeRange.DAY: 86_400,
    TimeRange.WEEK: 7 * 86_400,
    TimeRange.MONTH: 31 * 86_400,
    TimeRange.YEAR: 366 * 86_400,
}
# GitHub's rate-limit messages ("API rate limit exceeded ...", "You have exceeded a secondary
# rate limit ...") both carry this phrase.
_RATE_LIMIT_MARK: Final = b"rate limit"
# Without a header that says how long, GitHub asks to wait at least one minute.
_DEFAULT_WAIT_S: Final = 60.0


def build_request(query: EngineQuery) -> EngineRequest:
    """One best-match repository search; a time range is a ``pushed:>=`` qualifier."""
    text = query.text
    if query.time_range is not None:
        since = datetime.fromtimestamp(query.now - _RANGE_SECONDS[query.time_range], tz=UTC)
        text = f"{text} pushed:>={since.date().isoformat()}"
    params = {"q": text, "per_page": str(_count(query.count))}
    headers = [
        ("Accept", "application/vnd.github+json"),
        ("X-GitHub-Api-Version", API_VERSION),
    ]
    credential_headers: frozenset[str] = frozenset()
    if query.credential is not None:
        headers.append(("Authorization", f"Bearer {query.credential.reveal()}"))
        credential_headers = frozenset({"Authorization"})
    return EngineRequest(
        method="GET",
        url=replace_query(query.endpoint, params),
        headers=tuple(headers),
        credential_headers=credential_headers,
    )


def parse(response: EngineResponse) -> list[RawResult]:
    """Repositories in GitHub's order: full name, description, last push date."""
    if response.status in (403, 429) and _is_rate_limited(response):
        raise EngineFailure(FailureClass.RATE_LIMITED, _retry_after(response))
    body = load_json(response)
    if not isinstance(body, dict):
        raise EngineFailure(FailureClass.PARSE_FAILURE)
    items = body.get("items")
    if not isinstance(items, list):
        raise EngineFailure(FailureClass.PARSE_FAILURE)
    # incomplete_results = true (a search that timed out on GitHub's side) still carries valid
    # items: they are used.
    results: list[RawResult] = []
    for item in items[: ADMISSION.max_results]:
        result = _result(item, len(results) + 1)
        if result is not None:
            results.append(result)
    return results


def _count(requested: int) -> int:
    return max(1, min(requested, ADMISSION.max_results))


def _is_rate_limited(response: EngineResponse) -> bool:
    """GitHub's documented signals of the primary and secondary limits."""
    headers = response.headers
    if response.status == 429:
        return True
    if headers.get("x-ratelimit-remaining", "").strip() == "0" or "retry-after" in headers:
        return True
    return _RATE_LIMIT_MARK in response.body[:4096].lower()


def _retry_after(response: EngineResponse) -> float:
    """Seconds to wait: ``retry-after``, else ``x-ratelimit-reset``, else one minute.

    ``x-ratelimit-reset`` is an epoch; it is measured against the response's own ``date``
    header, which keeps the driver free of the local clock.
    """
    headers = response.headers
    server_now = server_time(headers)
    seconds = parse_retry_after(headers.get("retry-after"), now=server_now)
    if seconds is not None:
        return seconds
    reset = headers.get("x-ratelimit-reset", "").strip()
    exhausted = headers.get("x-ratelimit-remaining", "").strip() == "0"
    if exhausted and server_now is not None and reset.isdigit() and len(reset) <= 12:
        return max(0.0, min(float(reset) - server_now, MAX_RETRY_AFTER_S))
    return _DEFAULT_WAIT_S


def _result(item: object, rank: int) -> RawResult | None:
    if not isinstance(item, dict):
        return None
    title = item.get("full_name")
    url = item.get("html_url")
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
        date=_date(item.get("pushed_at")) or _date(item.get("updated_at")),
    )


def _date(value: object) -> str | None:
    if not isinstance(value, str) or len(value) > 40:
        return None
    try:
        return datetime.fromisoformat(value).date().isoformat()
    except ValueError:
        return None
