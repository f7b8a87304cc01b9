"""SearXNG: an operator-run SearXNG instance as one engine (spec README section 3, from 002).

Admission record: ``docs/engines/searxng.md``. The record's endpoint is a placeholder
(``https://searxng.invalid/search``): the operator configures the instance's URL in
``[engines.searxng] endpoint`` and switches the engine on; it is never part of the default set.

One POST of the search form to the instance's ``/search`` with ``format=json``: no cookie, no
``preferences`` blob, no plugin switches, ``pageno=1``. An optional credential (for an instance
behind an authenticating proxy) goes in ``Authorization: Bearer``, listed as a credential
header. The instance's engines may be restricted by the operator in the endpoint URL itself
(``https://search.example.org/search?engines=arxiv,crossref``): that ``engines`` value is sent
in the form instead of a category, and no category is sent with it, since SearXNG adds the
engines of any category sent to an explicit engine list.

SearXNG reads parts of the query text as commands (``!engine``, ``!category``, ``!!bang``,
``:language``, ``<timeout``, and ``?engine`` in older releases). Query text with such a word is
refused before contact (``request_failure``): it would let a caller pick engines, categories,
languages or external bang redirects that the operator did not choose.

Per-engine failures inside SearXNG are not HTTP errors but ``unresponsive_engines`` entries.
When results came back anyway they are returned as a :class:`PartialResults` list that carries
the number of unresponsive engines (never their names or messages); when none came back, the
search is a ``request_failure``, never a silent empty answer.

A 403 carries the operator hint that JSON output may be disabled on the instance (how to enable
it is the hint's fixed sentence); see :func:`parse`.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any, Final
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from rypsok.contract.vocabulary import (
    Category,
    FailureClass,
    OperatorHint,
    SafeSearch,
    TimeRange,
)
from rypsok.engines.base import (
    AdmissionRecord,
    EngineFailure,
    EngineQuery,
    EngineRequest,
    EngineResponse,
    PartialResults,
    RateLimit,
    RawResult,
    clip_raw,
    http_url,
    load_json,
    looks_like_challenge,
)

PLACEHOLDER_HOST: Final = "searxng.invalid"

ADMISSION: Final = AdmissionRecord(
    engine_id="searxng",
    provider="SearXNG instance run by the operator: JSON search API",
    categories=(Category.GENERAL, Category.NEWS, Category.SCIENCE, Category.CODE),
    endpoint=f"https://{PLACEHOLDER_HOST}/search",
    documentation="https://docs.searxng.org/dev/search_api.html",
    permitted_use=(
        "The operator's own instance, used with the operator's permission. Many SearXNG "
        "engines scrape the sites they query; the operator answers for the engines enabled on "
        "the instance (an instance restricted to API-based engines keeps the no-scraping rule "
        "end to end). The instance must serve JSON (search.formats includes json)."
    ),
    # One search fans out to every engine of the instance; a slow pace protects the instance's
    # own standing with its upstream engines (SearXNG suspends engines that meet CAPTCHAs).
    rate=RateLimit(requests=1, per_seconds=1.0),
    max_in_flight=2,
    attribution_required=False,
    license="Results belong to the instance's upstream engines, under their own terms",
    # rypsok cannot know the terms of the instance's upstream engines: never stored.
    cacheable=False,
    user_agent_note=(
        "Standard rypsok User-Agent (REQ-CMP-004). If the instance's limiter is on "
        "(server.limiter), the operator passes rypsok's address (botdetection pass_ip)."
    ),
    # SearXNG takes any language tag (xx or xx-YY) and hands it to its engines.
    languages=None,
    time_ranges=frozenset(TimeRange),
    max_query_chars=400,
    max_response_bytes=2 * 1024 * 1024,
    key="optional",
    enabled_by_default=False,
    # There is no result count to ask for: the first page is cut to LIM-S3 results.
    max_results=10,
)


# The partial-results list lives in base.py, where the pipeline reads it.


# SearXNG's own category names for rypsok's categories ("it" holds code and Q&A engines).
CATEGORIES: Final[dict[Category, str]] = {
    Category.GENERAL: "general",
    Category.NEWS: "news",
    Category.SCIENCE: "science",
    Category.CODE: "it",
}
_SAFE_SEARCH: Final[dict[SafeSearch, str]] = {
    SafeSearch.OFF: "0",
    SafeSearch.MODERATE: "1",
    SafeSearch.STRICT: "2",
}
# SearXNG's query parser splits on whitespace (re ``\s+``) and looks at each word's start.
_WORDS: Final = re.compile(r"\s+")
_TIMEOUT_WORD: Final = re.compile(r"^<\d+$")
_ENGINE_NAME: Final = re.compile(r"^[a-z0-9][a-z0-9 ._-]{0,63}$")
_MAX_ENGINES: Final = 64
_PRIMARY: Final = re.compile(r"^[a-z]{2,3}$")
_REGION: Final = re.compile(r"^[a-z]{2}$")
_MAX_ITEMS: Final = 200
_MAX_UNRESPONSIVE: Final = 1000
_SNIPPET_RAW_MAX: Final = 2000


def uses_searxng_syntax(text: str) -> bool:
    """Whether a word of ``text`` is one SearXNG would read as a command, not as a term.

    ``!x`` and a bare ``!``/``!!`` (engine, category, external bang, "first result"), ``:x``
    (language), ``?x`` (older releases' engine selector) and ``<digits`` (timeout). A lone
    ``:``, ``?`` or ``<`` is text to SearXNG, and so is ``<`` followed by anything but digits.
    """
    for word in _WORDS.split(text):
        if not word:
            continue
        first = word[0]
        if first == "!":
            return True
        if first in ":?" and len(word) > 1:
            return True
        if _TIMEOUT_WORD.match(word):
            return True
    return False


def _target(endpoint: str) -> tuple[str, str | None]:
    """The URL to POST to and the operator's engine restriction, from the endpoint.

    The path defaults to ``/search``; the endpoint's query is never sent, only its
    ``engines`` value is read. A restriction that names no usable engine refuses the request
    rather than searching every engine the operator meant to exclude.
    """
    parts = urlsplit(endpoint)
    if (parts.hostname or "").lower() == PLACEHOLDER_HOST:
        raise EngineFailure(FailureClass.REQUEST_FAILURE)  # not configured by the operator
    path = parts.path
    if not path or path.endswith("/"):
        path = f"{path or '/'}search"
    url = urlunsplit((parts.scheme, parts.netloc, path, "", ""))
    values = [v for k, v in parse_qsl(parts.query, keep_blank_values=True) if k == "engines"]
    if not values:
        return url, None
    names: list[str] = []
    for value in values:
        for name in value.split(","):
            name = " ".join(name.split()).lower()
            if not name:
                continue
            if not _ENGINE_NAME.match(name) or len(names) >= _MAX_ENGINES:
                raise EngineFailure(FailureClass.REQUEST_FAILURE)
            if name not in names:
                names.append(name)
    if not names:
        raise EngineFailure(FailureClass.REQUEST_FAILURE)
    return url, ",".join(names)


def _language(tag: str) -> str:
    """A tag SearXNG accepts (``xx`` or ``xx-YY``), else ``all``."""
    parts = tag.strip().split("-")
    primary = parts[0].lower()
    if not _PRIMARY.match(primary):
        return "all"
    if len(parts) > 1 and _REGION.match(parts[1].lower()):
        return f"{primary}-{parts[1].upper()}"
    return primary


def _category(query: EngineQuery) -> str:
    """SearXNG's category for the search's category; ``general`` until the query carries one.

    ``EngineQuery`` has no category yet; once it has (attribute ``category``), it is used.
    """
    category = getattr(query, "category", None)
    return CATEGORIES.get(category, "general") if isinstance(category, Category) else "general"


def build_request(query: EngineQuery) -> EngineRequest:
    """One POST of the search form with ``format=json`` to the configured instance."""
    text = query.text.strip()
    if not text or uses_searxng_syntax(text):
        raise EngineFailure(FailureClass.REQUEST_FAILURE)
    url, engines = _target(query.endpoint)
    form = [("q", text), ("format", "json"), ("pageno", "1")]
    if engines is not None:
        form.append(("engines", engines))
    else:
        form.append(("categories", _category(query)))
    form.append(("language", _language(query.language)))
    if query.time_range is not None:
        # SearXNG's own values are rypsok's: day, week, month, year.
        form.append(("time_range", query.time_range.value))
    form.append(("safesearch", _SAFE_SEARCH[query.safe_search]))
    headers = [
        ("Accept", "application/json"),
        ("Content-Type", "application/x-www-form-urlencoded"),
    ]
    credential_headers: frozenset[str] = frozenset()
    if query.credential is not None:
        headers.append(("Authorization", f"Bearer {query.credential.reveal()}"))
        credential_headers = frozenset({"Authorization"})
    return EngineRequest(
        method="POST",
        url=url,
        headers=tuple(headers),
        body=urlencode(form).encode("ascii"),
        credential_headers=credential_headers,
    )


def _date(value: Any) -> str | None:
    """``publishedDate`` (ISO 8601, or null) as YYYY-MM-DD, in UTC when it has an offset."""
    if not isinstance(value, str) or len(value) > 40:
        return None
    try:
        when = datetime.fromisoformat(value.strip())
    except ValueError:
        return None
    if when.tzinfo is not None:
        when = when.astimezone(UTC)
    return when.date().isoformat()


def _unresponsive(value: Any) -> int:
    """How many engines SearXNG lists as unresponsive; a malformed list counts its entries."""
    if not isinstance(value, list):
        return 0
    return min(len(value), _MAX_UNRESPONSIVE)


def parse(response: EngineResponse) -> list[RawResult]:
    """Results in the instance's order: title, URL, content, published date.

    A 403 that is not an anti-bot page is ``auth_failure`` with the hint
    :attr:`OperatorHint.JSON_OUTPUT_DISABLED`: SearXNG itself answers every ``format=json``
    request with 403 when ``search.formats`` lacks ``json``, so that is the first thing to
    fix. An authenticating proxy in front of the instance may also answer 403 to a refused
    credential; the driver cannot tell the two apart (the body is never read for it), so the
    pipeline adds the key hint when a credential is configured. A 401 (or 407) is only ever the
    credential: plain ``auth_failure``, for which the pipeline names the key setting.
    """
    if response.status == 403:
        if looks_like_challenge(response):
            raise EngineFailure(FailureClass.BLOCKED)
        # Chosen from the status alone: no byte of the page decides it (REQ-ENG-006).
        raise EngineFailure(FailureClass.AUTH_FAILURE, hint=OperatorHint.JSON_OUTPUT_DISABLED)
    data = load_json(response)
    if not isinstance(data, dict) or not isinstance(data.get("results"), list):
        raise EngineFailure(FailureClass.PARSE_FAILURE)
    results: list[RawResult] = []
    for item in data["results"][:_MAX_ITEMS]:
        if len(results) >= ADMISSION.max_results:
            break
        if not isinstance(item, dict):
            continue
        title = item.get("title")
        url = http_url(item.get("url"))
        if not isinstance(title, str) or not title.strip() or url is None:
            continue  # a malformed result costs itself only
        content = item.get("content")
        results.append(
            RawResult(
                url=url,
                title=title,
                snippet=clip_raw(content, _SNIPPET_RAW_MAX) if isinstance(content, str) else "",
                rank=len(results) + 1,
                date=_date(item.get("publishedDate")),
            )
        )
    unresponsive = _unresponsive(data.get("unresponsive_engines"))
    if unresponsive and not results:
        # Every answering engine came back empty while others failed: not a real "no results".
        raise EngineFailure(FailureClass.REQUEST_FAILURE)
    if unresponsive:
        return PartialResults(results, unresponsive_sources=unresponsive)
    return results
