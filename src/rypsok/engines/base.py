"""The engine abstraction shared by every driver (REQ-ENG-001, REQ-ENG-005/006/010).

A driver is data plus two pure functions, after SearXNG's engine modules:

* ``ADMISSION``: the frozen :class:`AdmissionRecord` of its provider (REQ-CMP-001);
* ``build_request(query) -> EngineRequest``: the first (usually the only) HTTP request;
* ``parse(response) -> list[RawResult]``: the results, or raises :class:`EngineFailure`.

A provider whose search answers only identifiers (PubMed's ESearch) needs a second request for
the records. Its driver also defines

* ``follow_up(query, response) -> EngineRequest | list[RawResult]``: given the answer to
  ``build_request``, either the second request, whose answer then goes to ``parse``, or the
  final results when no second request is needed (nothing found); or raises
  :class:`EngineFailure`.

A search thus sends at most :data:`MAX_REQUESTS_PER_SEARCH` requests to one engine. The second
goes out under the same egress profile, within the same per-engine timeout counted from the
first request, and takes its own provider-limit slot and start in the engine's rate window; a
failure of either request fails the engine, with no partial results.

Drivers do no I/O. The search pipeline moves the bytes through the egress component under the
engine profile, bounds them, times them and hands the decoded body to the driver. No provider
text ever leaves a driver inside an :class:`EngineFailure` (REQ-ENG-006): it carries a class
and, at most, a fixed operator hint chosen by the driver's code.
"""

from __future__ import annotations

import email.utils
import json
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol
from urllib.parse import urlencode, urlsplit, urlunsplit

from rypsok.config.secrets import Secret
from rypsok.contract.vocabulary import (
    Category,
    FailureClass,
    OperatorHint,
    SafeSearch,
    TimeRange,
)

KeyRequirement = Literal["none", "optional", "required"]

MAX_REQUESTS_PER_SEARCH = 2  # build_request, then at most one follow_up


@dataclass(frozen=True, slots=True)
class RateLimit:
    """An admitted request rate: at most ``requests`` per ``per_seconds`` (LIM-C9)."""

    requests: int
    per_seconds: float


@dataclass(frozen=True, slots=True)
class AdmissionRecord:
    """What the provider permits, recorded before the driver exists (REQ-CMP-001, REQ-ENG-010).

    ``languages`` is None when the engine honours every language code, empty when it is
    language-neutral (then skipped with a notice whenever a language other than the operator's
    default is asked); ``time_ranges`` lists the ranges it can apply. ``keyed_rate`` is the rate
    the provider grants an operator key, where it grants more than ``rate``; the catalog puts it
    in force when a key is configured.
    """

    engine_id: str
    provider: str
    categories: tuple[Category, ...]
    endpoint: str
    documentation: str
    permitted_use: str
    rate: RateLimit
    max_in_flight: int
    attribution_required: bool
    license: str
    cacheable: bool
    user_agent_note: str
    languages: frozenset[str] | None
    time_ranges: frozenset[TimeRange]
    max_query_chars: int
    max_response_bytes: int = 2 * 1024 * 1024
    key: KeyRequirement = "none"
    enabled_by_default: bool = True
    max_results: int = 10
    keyed_rate: RateLimit | None = None


@dataclass(frozen=True, slots=True)
class EngineQuery:
    """Everything a driver may use to build its request; all values validated by rypsok."""

    text: str
    endpoint: str
    count: int
    language: str
    time_range: TimeRange | None
    region: str
    safe_search: SafeSearch
    credential: Secret | None = None
    contact: str = ""
    now: float = field(default_factory=time.time)
    category: Category = Category.GENERAL


@dataclass(frozen=True, slots=True)
class EngineRequest:
    """One HTTP request; ``url`` must stay on the origin of ``EngineQuery.endpoint``.

    ``credential_headers`` names the headers that carry a credential, so the egress layer can
    guarantee they never reach another origin (REQ-SEC-017).
    """

    method: Literal["GET", "POST"]
    url: str = field(repr=False)  # may carry a key as a query parameter (Stack Exchange)
    # Headers and body may carry a credential: never shown in repr, logs or tracebacks.
    headers: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    body: bytes | None = field(default=None, repr=False)
    credential_headers: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class EngineResponse:
    """A bounded, decompressed response as the pipeline received it."""

    status: int
    headers: Mapping[str, str]  # lower-case names
    body: bytes

    @property
    def media_type(self) -> str:
        """The media type without parameters, lower-case."""
        return self.headers.get("content-type", "").split(";")[0].strip().lower()


@dataclass(frozen=True, slots=True)
class RawResult:
    """One result as the engine gave it: raw text, cleaned later by the pipeline (REQ-ENG-012)."""

    url: str
    title: str
    snippet: str
    rank: int
    date: str | None = None


class PartialResults(list[RawResult]):
    """Results of an engine that reported some of its own sources unresponsive (SearXNG).

    A plain list for every other purpose; ``unresponsive_sources`` is a count only: the names
    and messages are provider text and never kept.
    """

    __slots__ = ("unresponsive_sources",)

    def __init__(self, results: list[RawResult], unresponsive_sources: int) -> None:
        super().__init__(results)
        self.unresponsive_sources = unresponsive_sources


class EngineFailure(Exception):
    """A failed engine request, as exactly one class; never carries provider text.

    ``hint`` is what the operator should check, when the driver can tell more than the class
    says (a SearXNG 403: JSON output disabled). It is a member of a fixed vocabulary that the
    driver's code picks from the status, never from the body, and it goes into the notice and
    the log line as rypsok's fixed sentence. A key to check is the pipeline's hint, not the
    driver's: only the pipeline knows how the key is configured.
    """

    def __init__(
        self,
        failure_class: FailureClass,
        retry_after_s: float | None = None,
        hint: OperatorHint | None = None,
    ) -> None:
        super().__init__(failure_class.value)  # args and repr: the class only
        self.failure_class = failure_class
        self.retry_after_s = retry_after_s
        self.hint = hint


class Driver(Protocol):
    """What the registry expects of a driver module (``follow_up`` is optional, see above)."""

    ADMISSION: AdmissionRecord

    def build_request(self, query: EngineQuery) -> EngineRequest: ...

    def parse(self, response: EngineResponse) -> list[RawResult]: ...


FollowUp = Callable[[EngineQuery, EngineResponse], EngineRequest | list[RawResult]]
"""``follow_up(query, first_response)``: the second request, or the final results."""


@dataclass(frozen=True, slots=True)
class DriverSpec:
    """A driver as the registry holds it: its record and its functions."""

    admission: AdmissionRecord
    build_request: Callable[[EngineQuery], EngineRequest]
    parse: Callable[[EngineResponse], list[RawResult]]
    scraping: bool = False  # reads a human-facing page (REQ-ENG-013): opt-in only
    follow_up: FollowUp | None = None  # a two-step search (at most MAX_REQUESTS_PER_SEARCH)


# --- helpers shared by drivers: provider-neutral only --------------------------------------

MAX_RETRY_AFTER_S = 3600.0  # LIM-B4
# How far back from a cut an unfinished tag or entity reference is looked for (clip_raw).
TAG_REACH = 500
ENTITY_REACH = 40

_EMAIL = re.compile(r"^[^@\s<>()\[\],;:\"]+@[^@\s<>()\[\],;:\"]+\.[A-Za-z]{2,}$")


def _http_date(value: str) -> float | None:
    """An HTTP date (RFC 9110: IMF-fixdate or an obsolete form) as an epoch, or None."""
    try:
        when = email.utils.parsedate_to_datetime(value[:64])
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when is None or when.tzinfo is None:
        return None
    return when.timestamp()


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a Retry-After value (delta-seconds or HTTP date), at most LIM-B4.

    An HTTP date is measured against ``now``, the local clock when None; pass the response's
    own time (:func:`server_time`) so that a skewed local clock cannot stretch or cut the wait.
    """
    if not value:
        return None
    value = value.strip()
    if value.isascii() and value.isdigit():  # "²".isdigit() is True, and int() refuses it
        seconds = float(int(value[:12]))
    else:
        when = _http_date(value)
        if when is None:
            return None
        seconds = when - (time.time() if now is None else now)
    return max(0.0, min(seconds, MAX_RETRY_AFTER_S))


def server_time(headers: Mapping[str, str]) -> float | None:
    """The response's ``date`` header as an epoch, or None when it is absent or unreadable.

    ``headers`` has lower-case names, as :class:`EngineResponse` holds them.
    """
    value = headers.get("date")
    return _http_date(value) if value else None


def retry_after(headers: Mapping[str, str]) -> float | None:
    """The ``retry-after`` of a response in seconds, at most LIM-B4, or None.

    An HTTP-date value is measured against the response's own ``date`` header, so the wait is
    what the server meant whatever the local clock says; without a readable ``date`` the local
    clock stands in.
    """
    return parse_retry_after(headers.get("retry-after"), now=server_time(headers))


def is_http_url(value: str) -> bool:
    """Whether ``value`` is an absolute http(s) URL with a host."""
    try:
        parts = urlsplit(value)
    except ValueError:  # e.g. an unbalanced IPv6 bracket
        return False
    return parts.scheme in ("http", "https") and bool(parts.netloc)


def http_url(value: object) -> str | None:
    """``value`` as an absolute http(s) URL with a host, surrounding space removed; else None."""
    if not isinstance(value, str):
        return None
    try:
        parts = urlsplit(value.strip())
    except ValueError:  # e.g. an unbalanced IPv6 bracket
        return None
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return None
    return urlunsplit((parts.scheme, parts.netloc, parts.path, parts.query, parts.fragment))


def append_query(endpoint: str, params: Sequence[tuple[str, str]]) -> str:
    """The endpoint with ``params`` appended to its own query; scheme, host and path stay."""
    parts = urlsplit(endpoint)
    query = urlencode(params)
    if parts.query:
        query = f"{parts.query}&{query}"
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, ""))


def replace_query(endpoint: str, params: Mapping[str, str]) -> str:
    """The endpoint with ``params`` as its whole query; scheme, host and path stay."""
    parts = urlsplit(endpoint)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode(params), ""))


def clip_raw(raw: str, limit: int) -> str:
    """The first ``limit`` characters of raw text, never cut inside a tag or an entity reference.

    Only a short unfinished tail is dropped (TAG_REACH, ENTITY_REACH): a bare ``<`` or ``&``
    far from the end is text, not markup, and must not cost the rest of the snippet.
    """
    if len(raw) <= limit:
        return raw
    cut = raw[:limit]
    for opener, closer, reach in (("<", ">", TAG_REACH), ("&", ";", ENTITY_REACH)):
        start = cut.rfind(opener)
        if start != -1 and cut.rfind(closer) < start and len(cut) - start <= reach:
            cut = cut[:start]
    return cut


def contact_email(contact: str) -> str | None:
    """The operator contact (``[service] contact``) as an e-mail address, when it is one."""
    candidate = contact.strip()
    if candidate.lower().startswith("mailto:"):
        candidate = candidate[len("mailto:") :]
    return candidate if _EMAIL.match(candidate) else None


def balanced_text(text: str) -> str:
    """Query text with its parentheses and double quotes dropped when they do not pair up.

    For providers with a boolean query syntax: unpaired ones are a syntax error there, and a
    driver that wraps the text in parentheses to add its own filters must not let the text
    close that group. White space is collapsed.
    """
    depth = 0
    for char in text:
        depth += 1 if char == "(" else -1 if char == ")" else 0
        if depth < 0:
            break
    if depth != 0:
        text = text.replace("(", " ").replace(")", " ")
    if text.count('"') % 2:
        text = text.replace('"', " ")
    return " ".join(text.split())


# The response headers by which an edge network marks an anti-bot check served in place of
# the resource (lower-case name -> values), as each vendor documents them:
# Cloudflare sets "cf-mitigated: challenge" on every challenge page ("challenge is the only
# valid value"; developers.cloudflare.com/cloudflare-challenges/challenge-types/challenge-pages/
# detect-response); AWS WAF sets "x-amzn-waf-action: challenge" with status 202 and
# "x-amzn-waf-action: captcha" with 405 (docs.aws.amazon.com/waf/latest/developerguide/
# waf-captcha-and-challenge-actions.html). Markers in the body are left to each reader: a page
# may well contain the word "captcha" as content.
_BOT_CHALLENGE_HEADERS: dict[str, frozenset[str]] = {
    "cf-mitigated": frozenset({"challenge"}),
    "x-amzn-waf-action": frozenset({"challenge", "captcha"}),
}


def is_bot_challenge(headers: Mapping[str, str]) -> bool:
    """Whether an answer is an anti-bot check (a script to run or a CAPTCHA to solve), told by
    the header its vendor documents for it; ``headers`` has lower-case names. The status says
    nothing here: AWS WAF answers its challenge with 202."""
    return any(
        headers.get(name, "").strip().lower() in values
        for name, values in _BOT_CHALLENGE_HEADERS.items()
    )


def check_status(response: EngineResponse) -> None:
    """Classify a non-2xx status the way every provider means it (REQ-RES-002, REQ-ENG-006)."""
    status = response.status
    if 200 <= status < 300:
        return
    if status == 429:
        raise EngineFailure(FailureClass.RATE_LIMITED, retry_after(response.headers))
    if status in (401, 407):
        raise EngineFailure(FailureClass.AUTH_FAILURE)
    if status == 403:
        # A 403 that serves an HTML page is an anti-bot wall; a JSON 403 is the key's fault.
        if response.media_type in ("text/html", "application/xhtml+xml"):
            raise EngineFailure(FailureClass.BLOCKED)
        raise EngineFailure(FailureClass.AUTH_FAILURE)
    if status == 503 and "retry-after" in response.headers:
        raise EngineFailure(FailureClass.RATE_LIMITED, retry_after(response.headers))
    raise EngineFailure(FailureClass.REQUEST_FAILURE)


_CHALLENGE_MARKERS = (
    b"captcha",
    b"challenge-form",
    b"cf-chl",
    b"are you a robot",
    b"unusual traffic",
)


def looks_like_challenge(response: EngineResponse) -> bool:
    """An HTML answer where data was expected, with the marks of an anti-bot page (REQ-ENG-009)."""
    if response.media_type not in ("text/html", "application/xhtml+xml"):
        return False
    head = response.body[:65536].lower()
    return any(marker in head for marker in _CHALLENGE_MARKERS)


def load_json(response: EngineResponse) -> Any:
    """Decode a JSON body; HTML or garbage becomes ``blocked`` or ``parse_failure``."""
    check_status(response)
    if looks_like_challenge(response):
        raise EngineFailure(FailureClass.BLOCKED)
    try:
        return json.loads(response.body)
    except (ValueError, RecursionError):
        raise EngineFailure(FailureClass.PARSE_FAILURE) from None
