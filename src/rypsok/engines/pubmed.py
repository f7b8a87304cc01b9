"""PubMed: NCBI's E-utilities, ESearch then ESummary (science, biomedical literature).

Admission record: ``docs/engines/pubmed.md``. A PubMed search is two requests (NBK25499): ESearch
answers the PMIDs that match, in relevance order, and nothing else; ESummary answers a document
summary per PMID (title, journal, dates, authors). ``build_request`` is the ESearch,
``follow_up`` reads its answer and builds the ESummary of those PMIDs (or ends the search when
none matched), ``parse`` reads the ESummary. Abstracts come only from EFetch (XML), a third
request rypsok does not send, so the snippet is the journal, the date and the authors.

NCBI reports some errors inside answers with status 200 (``esearchresult.ERROR``, a top-level
``error`` or ``ERROR``, ``esummaryresult``); they are classified here like statuses are, and
their text never leaves the driver (REQ-ENG-006).
"""

from __future__ import annotations

import json
import re
from datetime import date
from typing import Any, Final
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
    balanced_text,
    contact_email,
    load_json,
    retry_after,
)

# ISO 639-1 code -> the language name PubMed's [la] field takes (MEDLINE language names).
_LANGUAGES: Final[dict[str, str]] = {
    "ar": "arabic",
    "cs": "czech",
    "da": "danish",
    "de": "german",
    "el": "greek",
    "en": "english",
    "es": "spanish",
    "fi": "finnish",
    "fr": "french",
    "he": "hebrew",
    "hu": "hungarian",
    "it": "italian",
    "ja": "japanese",
    "ko": "korean",
    "nl": "dutch",
    "no": "norwegian",
    "pl": "polish",
    "pt": "portuguese",
    "ru": "russian",
    "sv": "swedish",
    "tr": "turkish",
    "zh": "chinese",
}

ADMISSION: Final = AdmissionRecord(
    engine_id="pubmed",
    provider="NCBI, U.S. National Library of Medicine: E-utilities (ESearch, ESummary), PubMed",
    categories=(Category.SCIENCE,),
    # The E-utilities base: the driver appends esearch.fcgi and esummary.fcgi.
    endpoint="https://eutils.ncbi.nlm.nih.gov/entrez/eutils/",
    documentation="https://www.ncbi.nlm.nih.gov/books/NBK25499/",
    permitted_use=(
        "Official API (Entrez Programming Utilities) under NCBI's usage guidelines "
        "(https://www.ncbi.nlm.nih.gov/books/NBK25497/): keyless use is permitted at up to 3 "
        "requests/s per IP, 10/s with an API key of the operator's own; requests name the tool "
        "and, when the operator contact is an e-mail address, the email NCBI may write to."
    ),
    # One search is two requests, both counted here. Keyless 3/s per IP; with api_key 10/s
    # (https://support.nlm.nih.gov/kbArticle/?pn=KA-05510), put in force by the catalog.
    rate=RateLimit(requests=3, per_seconds=1.0),
    keyed_rate=RateLimit(requests=10, per_seconds=1.0),
    max_in_flight=1,
    # NLM data: results name their source; some records remain their publishers' copyright.
    attribution_required=True,
    license=(
        "NLM/NCBI data: NCBI places no restriction on its use; some records and abstracts "
        "remain their publishers' copyright (NBK25497, Disclaimer and Copyright)"
    ),
    cacheable=True,
    user_agent_note=(
        "Standard rypsok User-Agent (REQ-CMP-004). NCBI asks for the tool and email "
        "parameters instead of a User-Agent format: tool=rypsok, and email from [service] "
        "contact when it is an e-mail address."
    ),
    languages=frozenset(_LANGUAGES),
    time_ranges=frozenset(TimeRange),
    max_query_chars=400,
    max_response_bytes=2 * 1024 * 1024,
    key="optional",
    enabled_by_default=False,
    max_results=20,
)

TOOL: Final = "rypsok"
SEARCH: Final = "esearch.fcgi"
SUMMARY: Final = "esummary.fcgi"
ARTICLE_PAGE: Final = "https://pubmed.ncbi.nlm.nih.gov/{pmid}/"

_RANGE_DAYS: Final[dict[TimeRange, int]] = {
    TimeRange.DAY: 1,
    TimeRange.WEEK: 7,
    TimeRange.MONTH: 31,
    TimeRange.YEAR: 366,
}
_PMID: Final = re.compile(r"^[1-9][0-9]{0,9}$")
_MONTHS: Final[dict[str, int]] = {
    name: number
    for number, name in enumerate(
        ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"),
        start=1,
    )
}
_FULL_DATE: Final = re.compile(r"^(\d{4}) ([A-Z][a-z]{2}) (\d{1,2})$")
_MAX_IDS: Final = 200  # entries of an idlist looked at
_MAX_AUTHORS: Final = 3  # named in a snippet before "et al."
_ERROR_PEEK_BYTES: Final = 4096


def _utility(endpoint: str, name: str) -> str:
    """The URL of one E-utility under the configured base; its query, if any, is kept.

    An endpoint that names a utility itself (``…/esearch.fcgi``) is taken as its folder.
    """
    parts = urlsplit(endpoint)
    folder = parts.path
    if folder.rsplit("/", 1)[-1].endswith(".fcgi"):
        folder = folder.rsplit("/", 1)[0]
    path = f"{folder.rstrip('/')}/{name}"
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


def _identity(query: EngineQuery) -> list[tuple[str, str]]:
    """tool, email and api_key: who asks, as NCBI asks every client to say (NBK25497)."""
    params = [("tool", TOOL)]
    email = contact_email(query.contact)
    if email is not None:
        params.append(("email", email))
    if query.credential is not None:
        params.append(("api_key", query.credential.reveal()))
    return params


def _count(requested: int) -> int:
    return max(1, min(requested, ADMISSION.max_results))


def build_request(query: EngineQuery) -> EngineRequest:
    """The ESearch: the PMIDs of ``query.count`` best matches, by relevance, as JSON."""
    text = balanced_text(query.text)
    if not text:
        raise EngineFailure(FailureClass.REQUEST_FAILURE)
    language = _LANGUAGES.get(query.language.split("-")[0].lower())
    term = f"({text}) AND {language}[la]" if language is not None else text
    params = [
        ("db", "pubmed"),
        ("term", term),
        ("retmode", "json"),
        ("retmax", str(_count(query.count))),
        ("sort", "relevance"),
    ]
    if query.time_range is not None:
        params += [("datetype", "pdat"), ("reldate", str(_RANGE_DAYS[query.time_range]))]
    return EngineRequest(
        method="GET",
        url=append_query(_utility(query.endpoint, SEARCH), [*params, *_identity(query)]),
        headers=(("Accept", "application/json"),),
    )


def follow_up(query: EngineQuery, response: EngineResponse) -> EngineRequest | list[RawResult]:
    """The ESummary of the PMIDs the ESearch answered, in its order; no results when none."""
    data = _load(response)
    result = data.get("esearchresult")
    if not isinstance(result, dict):
        raise EngineFailure(FailureClass.PARSE_FAILURE)
    if "ERROR" in result:
        raise _reported(result["ERROR"], response)
    ids = result.get("idlist")
    if not isinstance(ids, list):
        raise EngineFailure(FailureClass.PARSE_FAILURE)
    pmids: list[str] = []
    for value in ids[:_MAX_IDS]:
        if isinstance(value, str) and _PMID.match(value) and value not in pmids:
            pmids.append(value)
    if not pmids:
        if ids:  # identifiers, but none a PMID: not an answer to trust
            raise EngineFailure(FailureClass.PARSE_FAILURE)
        return []  # nothing matched: the search is over, with no second request
    params = [("db", "pubmed"), ("id", ",".join(pmids[: _count(query.count)])), ("retmode", "json")]
    return EngineRequest(
        method="GET",
        url=append_query(_utility(query.endpoint, SUMMARY), [*params, *_identity(query)]),
        headers=(("Accept", "application/json"),),
    )


def parse(response: EngineResponse) -> list[RawResult]:
    """The ESummary's records in the order of its ``uids`` (the PMIDs asked, in rank order).

    A record ESummary cannot give (``{"uid", "error"}``) or a malformed one costs itself; an
    answer with no usable record at all fails the engine.
    """
    data = _load(response)
    if "esummaryresult" in data:  # ESummary's own complaint about the request
        raise EngineFailure(FailureClass.REQUEST_FAILURE)
    result = data.get("result")
    if not isinstance(result, dict):
        raise EngineFailure(FailureClass.PARSE_FAILURE)
    uids = result.get("uids")
    if not isinstance(uids, list) or not uids:
        raise EngineFailure(FailureClass.PARSE_FAILURE)
    results: list[RawResult] = []
    seen: set[str] = set()
    unavailable = 0
    for uid in uids[:_MAX_IDS]:
        if not isinstance(uid, str) or not _PMID.match(uid) or uid in seen:
            continue
        seen.add(uid)
        record = result.get(uid)
        if isinstance(record, dict) and "error" in record:
            unavailable += 1
            continue
        item = _result(uid, record, len(results) + 1)
        if item is not None:
            results.append(item)
            if len(results) == ADMISSION.max_results:
                break
    if not results:
        raise EngineFailure(
            FailureClass.REQUEST_FAILURE if unavailable else FailureClass.PARSE_FAILURE
        )
    return results


def _load(response: EngineResponse) -> dict[str, Any]:
    """The JSON object of an E-utilities answer, or the class of the failure it reports."""
    if not 200 <= response.status < 300 and response.status != 429:
        # NCBI refuses a bad api_key with 400 and {"error": "API key invalid", ...}.
        message = _peek_error(response)
        if message is not None and _error_class(message) is FailureClass.AUTH_FAILURE:
            raise EngineFailure(FailureClass.AUTH_FAILURE)
    data = load_json(response)
    if not isinstance(data, dict):
        raise EngineFailure(FailureClass.PARSE_FAILURE)
    for key in ("error", "ERROR"):
        if key in data:
            raise _reported(data[key], response)
    return data


def _peek_error(response: EngineResponse) -> object | None:
    """The ``error`` member of a small JSON error body, else None; never raises."""
    if response.media_type != "application/json" or len(response.body) > _ERROR_PEEK_BYTES:
        return None
    try:
        body: Any = json.loads(response.body)
    except (ValueError, RecursionError):
        return None
    return body.get("error") if isinstance(body, dict) else None


def _error_class(message: object) -> FailureClass:
    """The class of an error NCBI reports in a body; its text is compared, never kept."""
    text = message.lower() if isinstance(message, str) else ""
    if "rate limit" in text:
        return FailureClass.RATE_LIMITED
    if "api key" in text or "api_key" in text:
        return FailureClass.AUTH_FAILURE
    return FailureClass.REQUEST_FAILURE


def _reported(message: object, response: EngineResponse) -> EngineFailure:
    """The failure for an error reported inside an answer."""
    failure_class = _error_class(message)
    if failure_class is FailureClass.RATE_LIMITED:
        return EngineFailure(failure_class, retry_after(response.headers))
    return EngineFailure(failure_class)


def _result(pmid: str, record: object, rank: int) -> RawResult | None:
    if not isinstance(record, dict) or record.get("uid", pmid) != pmid:
        return None
    title = _text(record.get("title")) or _text(record.get("booktitle"))
    if not title:
        return None
    return RawResult(
        url=ARTICLE_PAGE.format(pmid=pmid),
        title=title,
        snippet=_snippet(record),
        rank=rank,
        date=_date(record.get("pubdate")) or _date(record.get("epubdate")),
    )


def _text(value: object) -> str:
    return value if isinstance(value, str) and value.strip() else ""


def _snippet(record: dict[str, Any]) -> str:
    """``Journal, date. First, Second, Third, et al.``: what ESummary tells of a record."""
    journal = _text(record.get("fulljournalname")) or _text(record.get("source"))
    head = ", ".join(part.strip() for part in (journal, _text(record.get("pubdate"))) if part)
    authors = record.get("authors")
    names = (
        [a["name"].strip() for a in authors if isinstance(a, dict) and _text(a.get("name"))]
        if isinstance(authors, list)
        else []
    )
    byline = ", ".join(names[:_MAX_AUTHORS]) + (", et al." if len(names) > _MAX_AUTHORS else "")
    parts = [part.rstrip(".") for part in (head, byline) if part]
    return ". ".join(parts) + ("." if parts else "")


def _date(value: object) -> str | None:
    """A full PubMed date (``2023 Jan 6``) as YYYY-MM-DD; a month or a season gives none.

    ``sortpubdate`` is not read: it fills a missing day with 01, a date nobody published.
    """
    if not isinstance(value, str):
        return None
    match = _FULL_DATE.match(value.strip())
    if match is None or match[2] not in _MONTHS:
        return None
    try:
        return date(int(match[1]), _MONTHS[match[2]], int(match[3])).isoformat()
    except ValueError:
        return None
