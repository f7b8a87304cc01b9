"""Semantic Scholar: the Academic Graph API's paper relevance search (science).

Admission record: ``docs/engines/semanticscholar.md``. Keyless requests share one pool among
every anonymous client and are often answered 429; an operator key (header ``x-api-key``)
buys a dedicated rate of one request a second. The key is optional: the engine works
best-effort without one and is off by default, so running it is always the operator's choice.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime
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
    append_query,
    clip_raw,
    http_url,
    load_json,
)

ADMISSION: Final = AdmissionRecord(
    engine_id="semanticscholar",
    provider="Semantic Scholar (Allen Institute for AI): Academic Graph API, paper search",
    categories=(Category.SCIENCE,),
    endpoint="https://api.semanticscholar.org/graph/v1/paper/search",
    documentation="https://api.semanticscholar.org/api-docs/graph",
    permitted_use=(
        "Official API under the Semantic Scholar API License Agreement "
        "(https://www.semanticscholar.org/product/api/license); keyless use is permitted from "
        "a shared pool, a key (header x-api-key) gives a dedicated rate. Displayed data must "
        "name Semantic Scholar and link back to it."
    ),
    # With a key: 1 request/s, dedicated. Keyless: a pool shared by all anonymous clients,
    # throttled under load. The record keeps the key's rate, which holds in both cases.
    rate=RateLimit(requests=1, per_seconds=1.0),
    max_in_flight=1,
    attribution_required=True,
    license="Semantic Scholar API License Agreement; abstracts remain their publishers'",
    cacheable=True,
    user_agent_note="Standard rypsok User-Agent (REQ-CMP-004); no per-engine format.",
    # No language filter: language-neutral.
    languages=frozenset(),
    time_ranges=frozenset(TimeRange),
    max_query_chars=400,
    max_response_bytes=2 * 1024 * 1024,
    key="optional",
    enabled_by_default=False,
    max_results=100,
)

KEY_HEADER: Final = "x-api-key"
# tldr is not requested: the relevance search does not serve every field of the paper API.
_FIELDS: Final = "title,url,abstract,publicationDate"
_RANGE_SECONDS: Final[dict[TimeRange, int]] = {
    TimeRange.DAY: 86_400,
    TimeRange.WEEK: 7 * 86_400,
    TimeRange.MONTH: 31 * 86_400,
    TimeRange.YEAR: 366 * 86_400,
}
_PAPER_ID: Final = re.compile(r"^[0-9a-f]{40}$")
_PAPER_PAGE: Final = "https://www.semanticscholar.org/paper/"
_DATE: Final = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")
_MAX_ITEMS: Final = 200
_SNIPPET_RAW_MAX: Final = 2000


def _search_text(text: str) -> str:
    """The query as Semantic Scholar reads it: plain words.

    The search has no query syntax, and a hyphenated term matches nothing (the documentation
    says to write a space instead), so hyphens become spaces.
    """
    return " ".join(text.replace("-", " ").split())


def build_request(query: EngineQuery) -> EngineRequest:
    """One GET of ``/graph/v1/paper/search`` for ``query.count`` papers, by relevance."""
    text = _search_text(query.text)
    if not text:
        raise EngineFailure(FailureClass.REQUEST_FAILURE)
    count = max(1, min(query.count, ADMISSION.max_results))
    params = [("query", text), ("offset", "0"), ("limit", str(count)), ("fields", _FIELDS)]
    if query.time_range is not None:
        since = datetime.fromtimestamp(query.now - _RANGE_SECONDS[query.time_range], tz=UTC)
        until = datetime.fromtimestamp(query.now, tz=UTC)
        # <start>:<end>, both inclusive, in YYYY-MM-DD.
        params.append(("publicationDateOrYear", f"{since:%Y-%m-%d}:{until:%Y-%m-%d}"))
    headers = [("Accept", "application/json")]
    credential_headers: frozenset[str] = frozenset()
    if query.credential is not None:
        headers.append((KEY_HEADER, query.credential.reveal()))
        credential_headers = frozenset({KEY_HEADER})
    return EngineRequest(
        method="GET",
        url=append_query(query.endpoint, params),
        headers=tuple(headers),
        credential_headers=credential_headers,
    )


def _url(item: dict[str, Any]) -> str | None:
    """The paper's Semantic Scholar page (the link back the licence asks for)."""
    url = http_url(item.get("url"))
    if url is not None:
        return url
    paper_id = item.get("paperId")
    if isinstance(paper_id, str) and _PAPER_ID.match(paper_id):
        return _PAPER_PAGE + paper_id
    return None


def _date(value: Any) -> str | None:
    """A complete ``publicationDate``; anything less gives no date."""
    if not isinstance(value, str):
        return None
    match = _DATE.match(value.strip())
    if match is None:
        return None
    try:
        return date(int(match[1]), int(match[2]), int(match[3])).isoformat()
    except ValueError:
        return None


def _papers(data: Any) -> list[Any]:
    if not isinstance(data, dict):
        raise EngineFailure(FailureClass.PARSE_FAILURE)
    papers = data.get("data")
    if isinstance(papers, list):
        return papers
    total = data.get("total")
    if papers is None and isinstance(total, int) and not isinstance(total, bool) and total == 0:
        return []  # an empty search may leave ``data`` out
    raise EngineFailure(FailureClass.PARSE_FAILURE)


def parse(response: EngineResponse) -> list[RawResult]:
    """Papers in relevance order: title, Semantic Scholar page, abstract, publication date.

    400 (e.g. a refused parameter) is a request_failure, a JSON 401/403 (a bad key) an
    auth_failure, 429 rate_limited; the ``error`` text is never read out.
    """
    data = load_json(response)
    results: list[RawResult] = []
    for item in _papers(data)[:_MAX_ITEMS]:
        if not isinstance(item, dict):
            continue
        title = item.get("title")
        url = _url(item)
        if not isinstance(title, str) or not title.strip() or url is None:
            continue  # a malformed paper costs itself only
        abstract = item.get("abstract")
        results.append(
            RawResult(
                url=url,
                title=title,
                snippet=clip_raw(abstract, _SNIPPET_RAW_MAX) if isinstance(abstract, str) else "",
                rank=len(results) + 1,
                date=_date(item.get("publicationDate")),
            )
        )
    return results
