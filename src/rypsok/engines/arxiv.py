"""arXiv: the Atom query API of export.arxiv.org (science).

Admission record: ``docs/engines/arxiv.md``. The API answers Atom 1.0 XML; errors arrive as an
Atom entry whose id starts ``http://arxiv.org/api/errors#`` (often with HTTP 200), so the entry
ids are checked, not only the status.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from datetime import UTC, date, datetime
from typing import Final
from urllib.parse import urlsplit, urlunsplit

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
    check_status,
    clip_raw,
    looks_like_challenge,
    retry_after,
)

ADMISSION: Final = AdmissionRecord(
    engine_id="arxiv",
    provider="arXiv (Cornell University)",
    categories=(Category.SCIENCE,),
    endpoint="https://export.arxiv.org/api/query",
    documentation="https://info.arxiv.org/help/api/user-manual.html",
    permitted_use=(
        "Official API, free for search and metadata retrieval under the arXiv API Terms of Use "
        "(https://info.arxiv.org/help/api/tou.html); links to full text point to arXiv."
    ),
    # Terms of Use: no more than one request every three seconds, one connection at a time.
    rate=RateLimit(requests=1, per_seconds=3.0),
    max_in_flight=1,
    # Metadata is CC0, but the Terms of Use ask for an acknowledgement of arXiv; rypsok names
    # the engine on every result rather than weigh the wording.
    attribution_required=True,
    license="Metadata CC0 1.0; e-prints keep their own licence",
    cacheable=True,
    user_agent_note="Standard rypsok User-Agent (REQ-CMP-004); no per-engine format.",
    # arXiv has no language filter: it is language-neutral.
    languages=frozenset(),
    time_ranges=frozenset(TimeRange),
    max_query_chars=300,
    max_response_bytes=2 * 1024 * 1024,
    key="none",
    enabled_by_default=True,
    max_results=50,
)

_ATOM: Final = "{http://www.w3.org/2005/Atom}"
_ERROR_ID_PREFIXES: Final = ("http://arxiv.org/api/errors", "https://arxiv.org/api/errors")
# Time ranges as durations; month and year are taken wide so a range never falls short.
_RANGE_SECONDS: Final[dict[TimeRange, int]] = {
    TimeRange.DAY: 86_400,
    TimeRange.WEEK: 7 * 86_400,
    TimeRange.MONTH: 31 * 86_400,
    TimeRange.YEAR: 366 * 86_400,
}
# Characters of arXiv's query grammar: inside a user's words they would change the query.
_SYNTAX: Final = re.compile(r"[():\[\]\"\\]")
_TOKEN: Final = re.compile(r'"([^"]*)"|(\S+)')
_OPERATORS: Final = frozenset({"AND", "OR", "ANDNOT"})
_MAX_ENTRIES: Final = 200
_SNIPPET_RAW_MAX: Final = 2000
_DATE: Final = re.compile(r"(\d{4})-(\d{2})-(\d{2})")
_FORBIDDEN_MARKUP: Final = ("<!doctype", "<!entity")
_RATE_EXCEEDED: Final = b"Rate exceeded."


def _search_query(text: str) -> str:
    """The user's words as an arXiv query: every word or quoted phrase must match (AND)."""
    terms: list[str] = []
    for match in _TOKEN.finditer(text):
        phrase, word = match.group(1), match.group(2)
        if phrase is not None:
            cleaned = " ".join(_SYNTAX.sub(" ", phrase).split())
            if cleaned:
                terms.append(f'all:"{cleaned}"')
            continue
        for part in _SYNTAX.sub(" ", word).split():
            # An operator typed as a word is searched as a word, not obeyed.
            terms.append(f"all:{part.lower() if part in _OPERATORS else part}")
    return " AND ".join(terms)


def build_request(query: EngineQuery) -> EngineRequest:
    """One GET of the Atom API for ``query.count`` entries, relevance first.

    A query made only of arXiv syntax characters has no word to search for: it fails as
    ``request_failure`` before anything is sent.
    """
    search = _search_query(query.text)
    if not search:
        raise EngineFailure(FailureClass.REQUEST_FAILURE)
    if query.time_range is not None:
        start = datetime.fromtimestamp(query.now - _RANGE_SECONDS[query.time_range], tz=UTC)
        end = datetime.fromtimestamp(query.now, tz=UTC)
        # arXiv's own syntax: GMT, to the minute (YYYYMMDDHHMM).
        window = f"submittedDate:[{start:%Y%m%d%H%M} TO {end:%Y%m%d%H%M}]"
        search = f"({search}) AND {window}"
    count = max(1, min(query.count, ADMISSION.max_results))
    params = [
        ("search_query", search),
        ("start", "0"),
        ("max_results", str(count)),
        ("sortBy", "relevance"),
        ("sortOrder", "descending"),
    ]
    return EngineRequest(
        method="GET",
        url=append_query(query.endpoint, params),
        headers=(("Accept", "application/atom+xml"),),
    )


def _text(element: ET.Element | None) -> str:
    if element is None:
        return ""
    return "".join(element.itertext())


def _abs_url(entry_id: str) -> str | None:
    """The abstract page of an entry id, on https."""
    try:
        parts = urlsplit(entry_id.strip())
        host = (parts.hostname or "").lower()
    except ValueError:  # e.g. an unbalanced IPv6 bracket
        return None
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return None
    scheme = "https" if host == "arxiv.org" or host.endswith(".arxiv.org") else parts.scheme
    return urlunsplit((scheme, parts.netloc, parts.path, parts.query, ""))


def _iso_date(value: str) -> str | None:
    match = _DATE.match(value.strip())
    if match is None:
        return None
    try:
        return date(int(match[1]), int(match[2]), int(match[3])).isoformat()
    except ValueError:
        return None


def _feed(response: EngineResponse) -> ET.Element:
    """The parsed feed element, or a failure class; the body is never echoed."""
    # arXiv's own overload signals: 503 (with or without Retry-After) and the gateway's plain
    # "Rate exceeded." body, which has been seen with several statuses.
    if response.status == 503 or response.body[:64].strip() == _RATE_EXCEEDED:
        raise EngineFailure(FailureClass.RATE_LIMITED, retry_after(response.headers))
    check_status(response)
    if looks_like_challenge(response):
        raise EngineFailure(FailureClass.BLOCKED)
    if len(response.body) > ADMISSION.max_response_bytes:
        raise EngineFailure(FailureClass.PARSE_FAILURE)
    try:
        # Decoded here and parsed as text, so a declared encoding cannot hide a DTD from the
        # check below (expat reads a str as UTF-8 whatever the declaration says).
        text = response.body.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise EngineFailure(FailureClass.PARSE_FAILURE) from None
    lowered = text.lower()
    if any(marker in lowered for marker in _FORBIDDEN_MARKUP):
        raise EngineFailure(FailureClass.PARSE_FAILURE)
    try:
        root = ET.fromstring(text)  # noqa: S314  (no DTD, so no entity can be declared)
    except (ET.ParseError, ValueError, RecursionError):
        raise EngineFailure(FailureClass.PARSE_FAILURE) from None
    if root.tag != f"{_ATOM}feed":
        raise EngineFailure(FailureClass.PARSE_FAILURE)
    return root


def parse(response: EngineResponse) -> list[RawResult]:
    """Entries in provider order; an arXiv error entry is a request_failure."""
    feed = _feed(response)
    entries = feed.findall(f"{_ATOM}entry")[:_MAX_ENTRIES]
    for entry in entries:
        if _text(entry.find(f"{_ATOM}id")).strip().startswith(_ERROR_ID_PREFIXES):
            raise EngineFailure(FailureClass.REQUEST_FAILURE)
    results: list[RawResult] = []
    for entry in entries:
        url = _abs_url(_text(entry.find(f"{_ATOM}id")))
        title = _text(entry.find(f"{_ATOM}title"))
        if url is None or not title.strip():
            continue  # a malformed entry costs itself only
        results.append(
            RawResult(
                url=url,
                title=title,
                snippet=clip_raw(_text(entry.find(f"{_ATOM}summary")), _SNIPPET_RAW_MAX),
                rank=len(results) + 1,
                date=_iso_date(_text(entry.find(f"{_ATOM}published"))),
            )
        )
    return results
