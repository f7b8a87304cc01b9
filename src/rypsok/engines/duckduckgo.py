"""DuckDuckGo: the no-JavaScript results page, scraped (general; opt-in scraping type).

Admission record: ``docs/engines/duckduckgo.md``. DuckDuckGo offers no search-results API (its
Instant Answer API is explicitly not one), so this driver reads the human-facing page at
``https://html.duckduckgo.com/html/``. It is a scraping driver (``SCRAPING = True``): refused at
configuration validation unless ``[scraping] enabled = true``, never in the default set, and run
at the operator's risk (REQ-ENG-013).

The request is the page's own search form, POSTed with the standard rypsok User-Agent and no
header that imitates a browser: no Accept-Language, Referer, Sec-Fetch-* or cookies
(REQ-ENG-014). A challenge page, 403, 429 or 503 is ``blocked`` or ``rate_limited`` and is never
worked around; a 3xx is ``request_failure`` (no redirect is followed, on or off the host).

The page is parsed by libxml2 as a pull parser under the bounds web_fetch uses (LIM-F10 nodes,
LIM-F11 depth) and a byte bound; a page beyond them is a ``parse_failure`` (REQ-ENG-015).
Parsing off the event loop is the pipeline's task. A page with results gives them in order,
with DuckDuckGo's ``/l/?uddg=`` redirect wrapper unwrapped (REQ-RANK-003) and ads left out;
the no-results page gives ``[]``; a page with neither (a changed layout) is a
``parse_failure``.
"""

from __future__ import annotations

import html
import re
from typing import Any, Final
from urllib.parse import parse_qs, urlencode, urljoin, urlsplit, urlunsplit

from lxml import etree

from rypsok.config.limits import limit
from rypsok.contract.vocabulary import Category, FailureClass, SafeSearch, TimeRange
from rypsok.engines.base import (
    AdmissionRecord,
    EngineFailure,
    EngineQuery,
    EngineRequest,
    EngineResponse,
    RateLimit,
    RawResult,
    check_status,
    clip_raw,
    http_url,
    retry_after,
)

SCRAPING: Final = True
"""This driver reads a human-facing interface (REQ-ENG-013): opt-in through ``[scraping]``."""

# DuckDuckGo's region codes (``kl``): (code, ISO 3166 country or None, ISO 639-1 language).
_REGIONS: Final[tuple[tuple[str, str | None, str], ...]] = (
    ("us-en", "US", "en"),
    ("uk-en", "GB", "en"),
    ("au-en", "AU", "en"),
    ("ca-en", "CA", "en"),
    ("ie-en", "IE", "en"),
    ("in-en", "IN", "en"),
    ("nz-en", "NZ", "en"),
    ("sg-en", "SG", "en"),
    ("za-en", "ZA", "en"),
    ("ph-en", "PH", "en"),
    ("my-en", "MY", "en"),
    ("id-en", "ID", "en"),
    ("pk-en", "PK", "en"),
    ("de-de", "DE", "de"),
    ("at-de", "AT", "de"),
    ("ch-de", "CH", "de"),
    ("fr-fr", "FR", "fr"),
    ("be-fr", "BE", "fr"),
    ("ca-fr", "CA", "fr"),
    ("ch-fr", "CH", "fr"),
    ("nl-nl", "NL", "nl"),
    ("be-nl", "BE", "nl"),
    ("es-es", "ES", "es"),
    ("mx-es", "MX", "es"),
    ("ar-es", "AR", "es"),
    ("cl-es", "CL", "es"),
    ("co-es", "CO", "es"),
    ("pe-es", "PE", "es"),
    ("ve-es", "VE", "es"),
    ("ue-es", "US", "es"),
    ("xl-es", None, "es"),
    ("ct-ca", None, "ca"),
    ("it-it", "IT", "it"),
    ("ch-it", "CH", "it"),
    ("pt-pt", "PT", "pt"),
    ("br-pt", "BR", "pt"),
    ("pl-pl", "PL", "pl"),
    ("cz-cs", "CZ", "cs"),
    ("sk-sk", "SK", "sk"),
    ("hu-hu", "HU", "hu"),
    ("ro-ro", "RO", "ro"),
    ("bg-bg", "BG", "bg"),
    ("hr-hr", "HR", "hr"),
    ("sl-sl", "SI", "sl"),
    ("gr-el", "GR", "el"),
    ("tr-tr", "TR", "tr"),
    ("ru-ru", "RU", "ru"),
    ("ua-uk", "UA", "uk"),
    ("ee-et", "EE", "et"),
    ("lv-lv", "LV", "lv"),
    ("lt-lt", "LT", "lt"),
    ("fi-fi", "FI", "fi"),
    ("se-sv", "SE", "sv"),
    ("dk-da", "DK", "da"),
    ("no-no", "NO", "no"),
    ("il-he", "IL", "he"),
    ("xa-ar", None, "ar"),
    ("jp-jp", "JP", "ja"),
    ("kr-kr", "KR", "ko"),
    ("cn-zh", "CN", "zh"),
    ("tw-tzh", "TW", "zh"),
    ("hk-tzh", "HK", "zh"),
    ("th-th", "TH", "th"),
    ("vn-vi", "VN", "vi"),
    ("my-ms", "MY", "ms"),
    ("id-id", "ID", "id"),
    ("ph-tl", "PH", "tl"),
)
# Norwegian Bokmål is DuckDuckGo's "no".
_LANGUAGE_ALIASES: Final[dict[str, str]] = {"nb": "no"}
_ALL_REGIONS: Final = "wt-wt"

ADMISSION: Final = AdmissionRecord(
    engine_id="duckduckgo",
    provider="DuckDuckGo: no-JavaScript results page (scraped; no API)",
    categories=(Category.GENERAL,),
    endpoint="https://html.duckduckgo.com/html/",
    documentation="https://duckduckgo.com/duckduckgo-help-pages/settings/params",
    permitted_use=(
        "No API and no permission: DuckDuckGo offers no search-results API, and its Terms of "
        "Service (https://duckduckgo.com/terms) grant none for automated use of the results "
        "page. Reading it is at the operator's risk and responsibility: opt-in through "
        "[scraping] enabled = true, off by default, never worked around when challenged."
    ),
    # No published limit. DuckDuckGo blocks an address that asks too often; rypsok keeps a
    # slow, steady pace of its own choosing.
    rate=RateLimit(requests=1, per_seconds=5.0),
    max_in_flight=1,
    # No licence comes with the page: every result names the engine it came from.
    attribution_required=True,
    license="None granted: results page of DuckDuckGo, whose results come from its sources",
    cacheable=False,
    user_agent_note=(
        "Standard rypsok User-Agent only (REQ-CMP-004, REQ-ENG-014): no browser User-Agent, "
        "Accept-Language, Referer, Sec-Fetch-* or cookie. DuckDuckGo may challenge a "
        "non-browser client; the challenge is classified blocked, never answered."
    ),
    languages=frozenset({language for _, _, language in _REGIONS} | set(_LANGUAGE_ALIASES)),
    time_ranges=frozenset(TimeRange),
    # DuckDuckGo refuses queries of 500 characters or more; LIM-S1 is lower.
    max_query_chars=400,
    max_response_bytes=1024 * 1024,
    key="none",
    enabled_by_default=False,
    max_results=10,
)

MAX_NODES: Final = int(limit("LIM-F10"))
MAX_DEPTH: Final = int(limit("LIM-F11"))
_CHUNK_BYTES: Final = 32 * 1024
_TIME_RANGES: Final[dict[TimeRange, str]] = {
    TimeRange.DAY: "d",
    TimeRange.WEEK: "w",
    TimeRange.MONTH: "m",
    TimeRange.YEAR: "y",
}
# DuckDuckGo's ``kp`` values: 1 strict, -1 moderate, -2 off.
_SAFE_SEARCH: Final[dict[SafeSearch, str]] = {
    SafeSearch.STRICT: "1",
    SafeSearch.MODERATE: "-1",
    SafeSearch.OFF: "-2",
}
_WORDS: Final = re.compile(r"(\s+)")
_PROVIDER_DOMAIN: Final = "duckduckgo.com"
# Paths on DuckDuckGo's hosts that are never a result: ads and its own search pages.
_PROVIDER_PAGES: Final = ("/y.js", "/html", "/lite", "/d.js")
# How far the page is examined: result anchors looked at, spans searched for a date.
_MAX_ANCHORS: Final = 50
_MAX_DATE_SPANS: Final = 20
_SNIPPET_RAW_MAX: Final = 2000
_TITLE_RAW_MAX: Final = 1000
_DATE: Final = re.compile(r"(?<!\d)(\d{4})-(\d{2})-(\d{2})T\d{2}:\d{2}")


def _class_test(token: str) -> str:
    return f"contains(concat(' ', normalize-space(@class), ' '), ' {token} ')"


# Expressions, not compiled XPath objects: these are evaluated per call, so a parse running in
# a worker thread shares no evaluator state with another.
_XP_ANCHORS: Final = f"//a[{_class_test('result__a')}]"
_XP_SNIPPET: Final = f".//*[{_class_test('result__snippet')}]"
_XP_NO_RESULTS: Final = (
    f"boolean(//*[{_class_test('no-results')}] | //*[{_class_test('result--no-result')}])"
)
# DuckDuckGo's anomaly page ("Unfortunately, bots use DuckDuckGo too."): a challenge form that
# posts to anomaly.js inside an anomaly-modal; and any other page built around a CAPTCHA form.
_XP_CHALLENGE: Final = (
    "boolean(//*[@id='challenge-form']"
    " | //*[contains(@class, 'anomaly-modal')]"
    " | //form[contains(@action, 'anomaly.js')]"
    " | //form[contains(translate(@id, 'CAPTCH', 'captch'), 'captcha')]"
    " | //form[contains(translate(@class, 'CAPTCH', 'captch'), 'captcha')]"
    " | //form[contains(translate(@action, 'CAPTCH', 'captch'), 'captcha')])"
)


def _region(language: str, region: str) -> str:
    """DuckDuckGo's ``kl`` for a language and an ISO 3166 region (``wt-wt``: all regions)."""
    primary = language.split("-")[0].strip().lower()
    primary = _LANGUAGE_ALIASES.get(primary, primary)
    country = region.strip().upper()
    if country:
        for code, code_country, code_language in _REGIONS:
            if code_country == country and code_language == primary:
                return code
    if primary == "en":
        return _ALL_REGIONS
    for code, _, code_language in _REGIONS:
        if code_language == primary:
            return code
    return _ALL_REGIONS


def _search_text(text: str) -> str:
    """The query with DuckDuckGo's redirecting words quoted.

    A word starting with ``!`` is a bang (a redirect to another site, or to the first result),
    and a leading ``\\`` jumps to the first result. Quoted, they are searched as words, as
    SearXNG does, instead of answering with a redirect.
    """
    words = [w for w in _WORDS.split(text.strip()) if w and not w.isspace()]
    return " ".join(f"'{w}'" if w[0] in "!\\" else w for w in words)


def build_request(query: EngineQuery) -> EngineRequest:
    """One POST of the results page's search form: ``q``, ``b`` (first page), ``kl``, ``kp``."""
    text = _search_text(query.text)
    if not text:
        raise EngineFailure(FailureClass.REQUEST_FAILURE)
    form = [("q", text), ("b", ""), ("kl", _region(query.language, query.region))]
    if query.time_range is not None:
        form.append(("df", _TIME_RANGES[query.time_range]))
    form.append(("kp", _SAFE_SEARCH[query.safe_search]))
    parts = urlsplit(query.endpoint)
    return EngineRequest(
        method="POST",
        url=urlunsplit((parts.scheme, parts.netloc, parts.path or "/", "", "")),
        headers=(
            ("Accept", "text/html"),
            ("Content-Type", "application/x-www-form-urlencoded"),
        ),
        body=urlencode(form).encode("ascii"),
    )


# --- response -------------------------------------------------------------------------------


def _classify_status(response: EngineResponse) -> None:
    """The statuses of a refusal: never answered, never followed (REQ-ENG-014/015)."""
    status = response.status
    if status == 200:
        return
    if status in (429, 503):
        raise EngineFailure(FailureClass.RATE_LIMITED, retry_after(response.headers))
    if status == 403:
        raise EngineFailure(FailureClass.BLOCKED)
    if 200 <= status < 300:
        # DuckDuckGo serves its anomaly (challenge) page with 202; no other 2xx is a results page.
        raise EngineFailure(FailureClass.BLOCKED)
    check_status(response)  # 3xx and the rest: request_failure; 401/407: auth_failure
    raise EngineFailure(FailureClass.REQUEST_FAILURE)


def _bounded_tree(body: bytes) -> Any:
    """The page as an lxml tree, or ``parse_failure`` beyond LIM-F10 nodes or LIM-F11 depth."""
    # Decoded here (DuckDuckGo serves UTF-8) and handed to libxml2 as UTF-8, so that no
    # declaration inside the page can make it decode the bytes differently.
    data = body.decode("utf-8", errors="replace").encode("utf-8")
    parser = etree.HTMLPullParser(
        events=("start", "end"),
        encoding="utf-8",
        no_network=True,
        recover=True,
        huge_tree=False,
        remove_comments=True,
        remove_pis=True,
    )
    nodes = depth = 0
    try:
        for offset in range(0, len(data), _CHUNK_BYTES):
            parser.feed(data[offset : offset + _CHUNK_BYTES])
            for event, _ in parser.read_events():
                if event == "end":
                    depth -= 1
                    continue
                nodes += 1
                depth += 1
                if nodes > MAX_NODES or depth > MAX_DEPTH:
                    raise EngineFailure(FailureClass.PARSE_FAILURE)
        root = parser.close()
    except (etree.LxmlError, ValueError, AssertionError):
        root = None
    if root is None:
        raise EngineFailure(FailureClass.PARSE_FAILURE)
    return root


def _inner_html(element: Any) -> str:
    """An element's content as HTML source: raw text for the pipeline (REQ-ENG-012)."""
    parts = [html.escape(element.text or "", quote=False)]
    for child in element:
        parts.append(etree.tostring(child, method="html", encoding="unicode", with_tail=True))
    return "".join(str(part) for part in parts)


def _classes(element: Any) -> set[str]:
    value = element.get("class")
    return set(str(value).split()) if value else set()


def _block(anchor: Any) -> Any:
    """The result block around an anchor: its nearest ancestor of class ``result``."""
    node = anchor.getparent()
    while node is not None:
        if "result" in _classes(node):
            return node
        node = node.getparent()
    return None


def _is_provider_host(host: str) -> bool:
    return host == _PROVIDER_DOMAIN or host.endswith("." + _PROVIDER_DOMAIN)


def _target(href: Any) -> str | None:
    """The result's own URL: DuckDuckGo's ``/l/?uddg=`` wrapper unwrapped, ads (``/y.js``) out.

    Hrefs are relative to the results page (``//duckduckgo.com/l/?...`` has no scheme).
    """
    if not isinstance(href, str) or not href.strip():
        return None
    try:
        relative = not urlsplit(href.strip()).netloc
        url = urljoin(ADMISSION.endpoint, href.strip())
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
    except ValueError:
        return None
    if _is_provider_host(host):
        if parts.path.startswith(_PROVIDER_PAGES):
            return None  # an ad, or DuckDuckGo's own search pages
        if parts.path in ("/l/", "/l"):
            wrapped = parse_qs(parts.query).get("uddg")
            if not wrapped:
                return None
            target = http_url(wrapped[0].strip())
            if target is None:
                return None
            inner = urlsplit(target)
            if _is_provider_host((inner.hostname or "").lower()) and inner.path in ("/l/", "/l"):
                return None  # wrapped twice: not a result URL
            return target
        if relative:
            return None  # a link within the results page, not a result
    return http_url(url)


def _date(block: Any) -> str | None:
    """The date DuckDuckGo prints next to a result's URL (``2025-08-26T00:00:00``), if any."""
    for index, span in enumerate(block.iter("span")):
        if index >= _MAX_DATE_SPANS:
            break
        match = _DATE.search(str(span.text or "")[:200])
        if match is not None:
            year, month, day = int(match[1]), int(match[2]), int(match[3])
            if 1 <= month <= 12 and 1 <= day <= 31:
                return f"{year:04d}-{month:02d}-{day:02d}"
    return None


def _results(root: Any) -> list[RawResult]:
    results: list[RawResult] = []
    # The blocks themselves, not their id(): lxml's element proxies live only while referenced,
    # so an id() can come back for another element once a proxy is gone.
    seen: list[Any] = []
    for anchor in list(root.xpath(_XP_ANCHORS))[:_MAX_ANCHORS]:
        if len(results) >= ADMISSION.max_results:
            break
        block = _block(anchor)
        if block is None or any(block is other for other in seen):
            continue
        seen.append(block)
        classes = _classes(block)
        if "result--ad" in classes or "result--no-result" in classes:
            continue
        url = _target(anchor.get("href"))
        title = clip_raw(_inner_html(anchor), _TITLE_RAW_MAX)
        if url is None or not title.strip():
            continue  # a malformed or advertising block costs itself only
        snippets = block.xpath(_XP_SNIPPET)
        snippet = clip_raw(_inner_html(snippets[0]), _SNIPPET_RAW_MAX) if snippets else ""
        results.append(
            RawResult(
                url=url, title=title, snippet=snippet, rank=len(results) + 1, date=_date(block)
            )
        )
    return results


def parse(response: EngineResponse) -> list[RawResult]:
    """Organic results in page order; ``[]`` on the no-results page; else a failure class."""
    _classify_status(response)
    if response.media_type not in ("text/html", "application/xhtml+xml"):
        raise EngineFailure(FailureClass.PARSE_FAILURE)
    if len(response.body) > ADMISSION.max_response_bytes:
        raise EngineFailure(FailureClass.PARSE_FAILURE)
    root = _bounded_tree(response.body)
    if root.xpath(_XP_CHALLENGE):
        raise EngineFailure(FailureClass.BLOCKED)
    results = _results(root)
    if results:
        return results
    if root.xpath(_XP_NO_RESULTS):
        return []
    # Neither results nor the no-results marker: the layout changed (or every block was
    # unusable); never reported as "nothing found".
    raise EngineFailure(FailureClass.PARSE_FAILURE)
