"""Crossref: the REST API ``/works`` search (science).

Admission record: ``docs/engines/crossref.md``. Crossref answers JSON in the envelope
``{"status", "message-type", "message"}``; a search is ``message-type`` ``work-list``.
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any, Final
from urllib.parse import quote, urlsplit, urlunsplit

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
    contact_email,
    load_json,
)

ADMISSION: Final = AdmissionRecord(
    engine_id="crossref",
    provider="Crossref",
    categories=(Category.SCIENCE,),
    endpoint="https://api.crossref.org/works",
    documentation=(
        "https://www.crossref.org/documentation/retrieve-metadata/rest-api/"
        "access-and-authentication/"
    ),
    permitted_use=(
        "Official public REST API, no key; metadata may be cached and incorporated "
        "(https://github.com/CrossRef/rest-api-doc). The polite pool is joined with a mailto "
        "contact."
    ),
    # Public pool since 2025-12-01: 5 requests/s and 1 concurrent (polite pool: 10/s, 3).
    # The record keeps the public values, which hold whether or not a contact is configured.
    rate=RateLimit(requests=5, per_seconds=1.0),
    max_in_flight=1,
    attribution_required=False,
    license="Bibliographic metadata: no rights asserted by Crossref; abstracts may be "
    "publishers' copyright",
    cacheable=True,
    user_agent_note=(
        "Standard rypsok User-Agent (REQ-CMP-004) with the operator contact; Crossref asks for "
        "a mailto: contact, also sent as the mailto parameter when the contact is an e-mail."
    ),
    # Crossref has no language filter: it is language-neutral.
    languages=frozenset(),
    time_ranges=frozenset(TimeRange),
    max_query_chars=400,
    max_response_bytes=2 * 1024 * 1024,
    key="none",
    enabled_by_default=True,
    max_results=50,
)

_RANGE_SECONDS: Final[dict[TimeRange, int]] = {
    TimeRange.DAY: 86_400,
    TimeRange.WEEK: 7 * 86_400,
    TimeRange.MONTH: 31 * 86_400,
    TimeRange.YEAR: 366 * 86_400,
}
# Only the fields the driver reads: smaller answers, fewer bytes to bound.
_SELECT: Final = "DOI,URL,title,abstract,container-title,published,issued,type"
_MAX_ITEMS: Final = 200
_SNIPPET_RAW_MAX: Final = 2000
_DATE_FIELDS: Final = ("published", "published-online", "published-print", "issued")


def build_request(query: EngineQuery) -> EngineRequest:
    """One GET of ``/works`` for ``query.count`` items, by relevance."""
    count = max(1, min(query.count, ADMISSION.max_results))
    params = [("query", query.text), ("rows", str(count)), ("select", _SELECT)]
    if query.time_range is not None:
        since = datetime.fromtimestamp(query.now - _RANGE_SECONDS[query.time_range], tz=UTC)
        params.append(("filter", f"from-pub-date:{since:%Y-%m-%d}"))
    mailto = contact_email(query.contact)
    if mailto is not None:
        params.append(("mailto", mailto))
    return EngineRequest(
        method="GET",
        url=append_query(query.endpoint, params),
        headers=(("Accept", "application/json"),),
    )


def _first_text(value: Any) -> str:
    """The first non-blank string of a Crossref string array."""
    if isinstance(value, list):
        for item in value:
            if isinstance(item, str) and item.strip():
                return item
    return ""


def _url(item: dict[str, Any]) -> str | None:
    """``URL`` when it is an absolute http(s) link, else the DOI resolver link."""
    url = item.get("URL")
    if isinstance(url, str):
        try:
            parts = urlsplit(url.strip())
            host = (parts.hostname or "").lower()
        except ValueError:  # e.g. an unbalanced IPv6 bracket: fall back to the DOI
            parts, host = None, ""
        if parts is not None and parts.scheme in ("http", "https") and parts.netloc:
            if host in ("doi.org", "dx.doi.org"):
                return urlunsplit(("https", "doi.org", parts.path, parts.query, ""))
            return urlunsplit((parts.scheme, parts.netloc, parts.path, parts.query, ""))
    doi = item.get("DOI")
    if isinstance(doi, str) and doi.strip().startswith("10."):
        return "https://doi.org/" + quote(doi.strip(), safe="/:;()._-")
    return None


def _date(item: dict[str, Any]) -> str | None:
    """The first complete ``date-parts`` date as YYYY-MM-DD; partial dates give none."""
    for name in _DATE_FIELDS:
        field = item.get(name)
        if not isinstance(field, dict):
            continue
        parts = field.get("date-parts")
        if not (isinstance(parts, list) and parts and isinstance(parts[0], list)):
            continue
        first = parts[0]
        if len(first) < 3 or not all(type(p) is int for p in first[:3]):
            continue
        try:
            return date(first[0], first[1], first[2]).isoformat()
        except (ValueError, OverflowError):
            continue
    return None


def _items(data: Any) -> list[Any]:
    """The work list of a Crossref envelope, or a failure class."""
    if not isinstance(data, dict):
        raise EngineFailure(FailureClass.PARSE_FAILURE)
    if data.get("status") != "ok":
        # "failed" with a validation-failure message list: the request was refused.
        if isinstance(data.get("status"), str):
            raise EngineFailure(FailureClass.REQUEST_FAILURE)
        raise EngineFailure(FailureClass.PARSE_FAILURE)
    message = data.get("message")
    if data.get("message-type") != "work-list" or not isinstance(message, dict):
        raise EngineFailure(FailureClass.PARSE_FAILURE)
    items = message.get("items")
    if not isinstance(items, list):
        raise EngineFailure(FailureClass.PARSE_FAILURE)
    return items[:_MAX_ITEMS]


def parse(response: EngineResponse) -> list[RawResult]:
    """Works in provider order: title, link, raw JATS abstract (or container title), date."""
    results: list[RawResult] = []
    for item in _items(load_json(response)):
        if not isinstance(item, dict):
            continue
        title = _first_text(item.get("title"))
        url = _url(item)
        if not title or url is None:
            continue  # a malformed item costs itself only
        abstract = item.get("abstract")
        snippet = abstract if isinstance(abstract, str) and abstract.strip() else ""
        if not snippet:
            # The journal or book title is the provider's own description when no abstract.
            snippet = _first_text(item.get("container-title"))
        results.append(
            RawResult(
                url=url,
                title=title,
                snippet=clip_raw(snippet, _SNIPPET_RAW_MAX),
                rank=len(results) + 1,
                date=_date(item),
            )
        )
    return results
