"""Europe PMC: the RESTful search web service (science, life sciences).

Admission record: ``docs/engines/europepmc.md``. The service answers XML unless asked for
JSON, so the request sets ``format=json``; ``resultType=core`` adds ``abstractText``.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime
from typing import Any, Final
from urllib.parse import quote

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
    clip_raw,
    load_json,
)

# ISO 639-1 code -> the ISO 639-2/B code Europe PMC's LANG field uses (MEDLINE's language codes).
_LANG_CODES: Final[dict[str, str]] = {
    "ar": "ara",
    "cs": "cze",
    "da": "dan",
    "de": "ger",
    "el": "gre",
    "en": "eng",
    "es": "spa",
    "fi": "fin",
    "fr": "fre",
    "he": "heb",
    "hu": "hun",
    "it": "ita",
    "ja": "jpn",
    "ko": "kor",
    "nl": "dut",
    "no": "nor",
    "pl": "pol",
    "pt": "por",
    "ru": "rus",
    "sv": "swe",
    "tr": "tur",
    "zh": "chi",
}

ADMISSION: Final = AdmissionRecord(
    engine_id="europepmc",
    provider="Europe PMC (EMBL-EBI)",
    categories=(Category.SCIENCE,),
    endpoint="https://www.ebi.ac.uk/europepmc/webservices/rest/search",
    documentation="https://europepmc.org/RestfulWebService",
    permitted_use=(
        "Official, keyless REST web service under the EMBL-EBI Terms of Use "
        "(https://www.ebi.ac.uk/about/terms-of-use); return snippets and link back."
    ),
    # No published number; a secondary source says 10/s per IP, so pace at half of it.
    rate=RateLimit(requests=5, per_seconds=1.0),
    max_in_flight=2,
    # Abstracts are often publishers' copyright: name the source on every result.
    attribution_required=True,
    license="EMBL-EBI Terms of Use; abstracts remain their publishers' copyright",
    cacheable=True,
    user_agent_note="Standard rypsok User-Agent (REQ-CMP-004); no per-engine format.",
    languages=frozenset(_LANG_CODES),
    time_ranges=frozenset(TimeRange),
    max_query_chars=400,
    max_response_bytes=4 * 1024 * 1024,
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
_SOURCE: Final = re.compile(r"^[A-Z]{3}$")
_ID: Final = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
_DATE: Final = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")
_MAX_ITEMS: Final = 200
_SNIPPET_RAW_MAX: Final = 2000


def _language(code: str) -> str | None:
    """Europe PMC's code for a BCP 47 tag's primary language, if it has one."""
    return _LANG_CODES.get(code.split("-")[0].lower())


def build_request(query: EngineQuery) -> EngineRequest:
    """One GET of the search service for ``query.count`` core records, by relevance."""
    text = balanced_text(query.text)
    if not text:
        raise EngineFailure(FailureClass.REQUEST_FAILURE)
    filters: list[str] = []
    if query.time_range is not None:
        since = datetime.fromtimestamp(query.now - _RANGE_SECONDS[query.time_range], tz=UTC)
        until = datetime.fromtimestamp(query.now, tz=UTC)
        filters.append(f"FIRST_PDATE:[{since:%Y-%m-%d} TO {until:%Y-%m-%d}]")
    language = _language(query.language)
    if language is not None:
        filters.append(f"LANG:{language}")
    search = " AND ".join([f"({text})", *filters]) if filters else text
    count = max(1, min(query.count, ADMISSION.max_results))
    params = [
        ("query", search),
        ("format", "json"),
        ("resultType", "core"),
        ("pageSize", str(count)),
        ("cursorMark", "*"),
    ]
    return EngineRequest(
        method="GET",
        url=append_query(query.endpoint, params),
        headers=(("Accept", "application/json"),),
    )


def _url(item: dict[str, Any]) -> str | None:
    """The article page ``https://europepmc.org/article/<source>/<id>``, else the DOI link."""
    source, ident = item.get("source"), item.get("id")
    if (
        isinstance(source, str)
        and isinstance(ident, str)
        and _SOURCE.match(source)
        and _ID.match(ident)
    ):
        return f"https://europepmc.org/article/{source}/{ident}"
    doi = item.get("doi")
    if isinstance(doi, str) and doi.strip().startswith("10."):
        return "https://doi.org/" + quote(doi.strip(), safe="/:;()._-")
    return None


def _iso_date(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    match = _DATE.match(value.strip())
    if match is None:
        return None
    try:
        return date(int(match[1]), int(match[2]), int(match[3])).isoformat()
    except ValueError:
        return None


def _items(data: Any) -> list[Any]:
    """The result list of a search answer, or a failure class."""
    if not isinstance(data, dict):
        raise EngineFailure(FailureClass.PARSE_FAILURE)
    if "errCode" in data or "errMsg" in data:
        # An error reported in the body: the service refused the request.
        raise EngineFailure(FailureClass.REQUEST_FAILURE)
    result_list = data.get("resultList")
    if result_list is None and data.get("hitCount") == 0:
        return []
    if not isinstance(result_list, dict):
        raise EngineFailure(FailureClass.PARSE_FAILURE)
    items = result_list.get("result")
    if not isinstance(items, list):
        raise EngineFailure(FailureClass.PARSE_FAILURE)
    return items[:_MAX_ITEMS]


def parse(response: EngineResponse) -> list[RawResult]:
    """Records in provider order: title, article page, raw abstract, first publication date."""
    results: list[RawResult] = []
    for item in _items(load_json(response)):
        if not isinstance(item, dict):
            continue
        title = item.get("title")
        url = _url(item)
        if not isinstance(title, str) or not title.strip() or url is None:
            continue  # a malformed record costs itself only
        abstract = item.get("abstractText")
        results.append(
            RawResult(
                url=url,
                title=title,
                snippet=clip_raw(abstract, _SNIPPET_RAW_MAX) if isinstance(abstract, str) else "",
                rank=len(results) + 1,
                date=_iso_date(item.get("firstPublicationDate")),
            )
        )
    return results
