"""Wikidata entity search with ``wbsearchentities`` (admission: docs/engines/wikidata.md).

One GET per search. Wikidata is one wiki for every language: the language is the ``language``
parameter (labels and descriptions come back in it, with MediaWiki's language fallback), not
the host. It matches entity labels and aliases, not full text.
"""

from __future__ import annotations

from typing import Any, Final

from rypsok.contract.vocabulary import Category, FailureClass
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
    retry_after,
)

ADMISSION: Final = AdmissionRecord(
    engine_id="wikidata",
    provider="Wikimedia Foundation: Wikidata, MediaWiki Action API (wbsearchentities)",
    categories=(Category.GENERAL,),
    endpoint="https://www.wikidata.org/w/api.php",
    documentation="https://www.wikidata.org/w/api.php?action=help&modules=wbsearchentities",
    permitted_use=(
        "Official public API of Wikidata; read access without a key under the Wikimedia API "
        "access policy, API etiquette and User-Agent policy."
    ),
    # No public number for identified read clients; the etiquette asks for serial requests.
    rate=RateLimit(requests=1, per_seconds=1.0),
    max_in_flight=1,
    attribution_required=False,
    license="CC0 1.0 (structured data); no attribution required",
    cacheable=True,
    user_agent_note=(
        "Wikimedia User-Agent policy: the User-Agent must name the client and give a contact "
        "(URL or e-mail); generic library agents are blocked. The standard rypsok User-Agent "
        "with the project URL and the operator contact satisfies it."
    ),
    languages=None,
    time_ranges=frozenset(),
    # Labels and aliases hold at most 250 characters, so a longer text can match nothing.
    max_query_chars=250,
    max_response_bytes=2 * 1024 * 1024,
    key="none",
    enabled_by_default=True,
    max_results=50,
)

_RATE_LIMIT_CODES: Final = frozenset({"ratelimited", "maxlag"})
_AUTH_CODES: Final = frozenset({"readapidenied"})


def build_request(query: EngineQuery) -> EngineRequest:
    """One ``wbsearchentities`` call for items, in the asked language."""
    # MediaWiki language codes are lower case (en, pt-br, zh-hans).
    language = query.language.lower()
    params = {
        "action": "wbsearchentities",
        "search": query.text,
        "language": language,
        "uselang": language,
        "type": "item",
        "limit": str(_count(query.count)),
        "format": "json",
        "formatversion": "2",
    }
    return EngineRequest(
        method="GET",
        url=replace_query(query.endpoint, params),
        headers=(("Accept", "application/json"),),
    )


def parse(response: EngineResponse) -> list[RawResult]:
    """Entities in Wikidata's order: label, description, entity page; Wikidata gives no date."""
    if response.status == 403:
        # The wiki takes no key: a refusal is a block of this client, not a bad credential.
        raise EngineFailure(FailureClass.BLOCKED)
    body = load_json(response)
    if not isinstance(body, dict):
        raise EngineFailure(FailureClass.PARSE_FAILURE)
    _raise_api_error(body, response)
    hits = body.get("search")
    if not isinstance(hits, list):
        raise EngineFailure(FailureClass.PARSE_FAILURE)
    results: list[RawResult] = []
    for hit in hits[: ADMISSION.max_results]:
        result = _result(hit, len(results) + 1)
        if result is not None:
            results.append(result)
    return results


def _count(requested: int) -> int:
    return max(1, min(requested, ADMISSION.max_results))


def _raise_api_error(body: dict[str, Any], response: EngineResponse) -> None:
    """MediaWiki answers errors with HTTP 200 and an ``error`` object; classify by its code."""
    error = body.get("error")
    if error is None:
        return
    code = error.get("code") if isinstance(error, dict) else None
    if code in _RATE_LIMIT_CODES:
        # maxlag comes with a Retry-After header (Manual:Maxlag_parameter).
        raise EngineFailure(FailureClass.RATE_LIMITED, retry_after(response.headers))
    if code in _AUTH_CODES:
        raise EngineFailure(FailureClass.AUTH_FAILURE)
    raise EngineFailure(FailureClass.REQUEST_FAILURE)


def _result(hit: object, rank: int) -> RawResult | None:
    if not isinstance(hit, dict):
        return None
    url = _entity_url(hit)
    title = _text(hit.get("label")) or _display(hit, "label") or _text(hit.get("id"))
    if url is None or title is None:
        return None
    snippet = _text(hit.get("description")) or _display(hit, "description") or ""
    return RawResult(url=url, title=title, snippet=snippet, rank=rank)


def _entity_url(hit: dict[str, Any]) -> str | None:
    """The entity page: ``url`` (protocol-relative) made absolute, else ``concepturi``."""
    for key in ("url", "concepturi"):
        value = hit.get(key)
        if not isinstance(value, str):
            continue
        value = value.strip()
        if value.startswith("//"):
            value = "https:" + value
        if is_http_url(value):
            return value
    return None


def _display(hit: dict[str, Any], term: str) -> str | None:
    """``display.<term>.value``: the term in the asked language or its fallback."""
    display = hit.get("display")
    if not isinstance(display, dict):
        return None
    entry = display.get(term)
    return _text(entry.get("value")) if isinstance(entry, dict) else None


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value.strip() else None
