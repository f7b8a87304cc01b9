"""Wikipedia: MediaWiki Action API ``list=search`` (admission record: docs/engines/wikipedia.md).

One GET per search to the language's own wiki. The request also asks for ``meta=siteinfo``
(``siprop=general``): ``parse`` receives only the response, so the wiki's own ``server`` and
``articlepath`` are what turn a result title into an absolute article URL. This also keeps the
URLs right when the operator points the endpoint at another MediaWiki.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Final
from urllib.parse import quote, urlsplit

from rypsok.contract.vocabulary import Category, FailureClass
from rypsok.engines.base import (
    AdmissionRecord,
    EngineFailure,
    EngineQuery,
    EngineRequest,
    EngineResponse,
    RateLimit,
    RawResult,
    load_json,
    replace_query,
    retry_after,
)

ADMISSION: Final = AdmissionRecord(
    engine_id="wikipedia",
    provider="Wikimedia Foundation: Wikipedia, MediaWiki Action API (list=search)",
    categories=(Category.GENERAL,),
    endpoint="https://{language}.wikipedia.org/w/api.php",
    documentation="https://www.mediawiki.org/wiki/API:Search",
    permitted_use=(
        "Official public API of every Wikipedia; read access without a key under the Wikimedia "
        "API access policy, API etiquette and User-Agent policy."
    ),
    # No public number for identified read clients; the etiquette asks for serial requests.
    rate=RateLimit(requests=1, per_seconds=1.0),
    max_in_flight=1,
    attribution_required=True,
    license="CC BY-SA 4.0 (text also under GFDL); credit Wikipedia, link the article and licence",
    cacheable=True,
    user_agent_note=(
        "Wikimedia User-Agent policy: the User-Agent must name the client and give a contact "
        "(URL or e-mail); generic library agents are blocked. The standard rypsok User-Agent "
        "with the project URL and the operator contact satisfies it."
    ),
    languages=None,
    time_ranges=frozenset(),
    # CirrusSearch refuses full-text queries longer than 300 characters.
    max_query_chars=300,
    max_response_bytes=2 * 1024 * 1024,
    key="none",
    enabled_by_default=True,
    max_results=500,
)

# MediaWiki error codes that mean "slow down" rather than "this request is wrong".
_RATE_LIMIT_CODES: Final = frozenset({"ratelimited", "maxlag"})
# A private wiki behind an operator-configured endpoint refuses anonymous reads with this code.
_AUTH_CODES: Final = frozenset({"readapidenied"})
# Characters MediaWiki itself leaves unescaped in article paths (wfUrlencode).
_TITLE_SAFE: Final = ";@$!*(),/:~"


def build_request(query: EngineQuery) -> EngineRequest:
    """One Action API search on the language's wiki (``query.endpoint`` is already concrete)."""
    params = {
        "action": "query",
        "list": "search",
        "srsearch": query.text,
        "srlimit": str(_count(query.count)),
        "srnamespace": "0",
        "srprop": "snippet|timestamp",
        "meta": "siteinfo",
        "siprop": "general",
        "format": "json",
        "formatversion": "2",
    }
    return EngineRequest(
        method="GET",
        url=replace_query(query.endpoint, params),
        headers=(("Accept", "application/json"),),
    )


def parse(response: EngineResponse) -> list[RawResult]:
    """Results in Wikipedia's order; raw snippets; the last-edit date."""
    if response.status == 403:
        # The wiki takes no key: a refusal is a block of this client, not a bad credential.
        raise EngineFailure(FailureClass.BLOCKED)
    body = load_json(response)
    if not isinstance(body, dict):
        raise EngineFailure(FailureClass.PARSE_FAILURE)
    _raise_api_error(body, response)
    query = body.get("query")
    if not isinstance(query, dict):
        raise EngineFailure(FailureClass.PARSE_FAILURE)
    hits = query.get("search")
    if not isinstance(hits, list):
        raise EngineFailure(FailureClass.PARSE_FAILURE)
    if not hits:
        return []
    article_url = _article_url_template(query.get("general"))
    if article_url is None:
        raise EngineFailure(FailureClass.PARSE_FAILURE)
    results: list[RawResult] = []
    for hit in hits[: ADMISSION.max_results]:
        result = _result(hit, article_url, len(results) + 1)
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


def _article_url_template(general: object) -> str | None:
    """``https://host/wiki/$1`` from siteinfo's ``server`` and ``articlepath``, or None."""
    if not isinstance(general, dict):
        return None
    server = general.get("server")
    path = general.get("articlepath")
    if not isinstance(server, str) or not isinstance(path, str):
        return None
    if server.startswith("//"):
        # Wikimedia wikis give a protocol-relative server; they are served over HTTPS.
        server = "https:" + server
    try:
        parts = urlsplit(server)
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return None
    if not path.startswith("/") or "$1" not in path:
        return None
    return f"{parts.scheme}://{parts.netloc}{path}"


def _result(hit: object, article_url: str, rank: int) -> RawResult | None:
    if not isinstance(hit, dict):
        return None
    title = hit.get("title")
    if not isinstance(title, str) or not title.strip():
        return None
    snippet = hit.get("snippet")
    return RawResult(
        url=article_url.replace("$1", quote(title.replace(" ", "_"), safe=_TITLE_SAFE)),
        title=title,
        snippet=snippet if isinstance(snippet, str) else "",
        rank=rank,
        date=_date(hit.get("timestamp")),
    )


def _date(value: object) -> str | None:
    """``YYYY-MM-DD`` of an ISO 8601 timestamp (the last edit, the only date the API gives)."""
    if not isinstance(value, str) or len(value) > 40:
        return None
    try:
        return datetime.fromisoformat(value).date().isoformat()
    except ValueError:
        return None
