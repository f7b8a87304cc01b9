"""The engine abstraction shared by every driver (REQ-ENG-001, REQ-ENG-005/006/010).

A driver is data plus two pure functions, after SearXNG's engine modules:

* ``ADMISSION``: the frozen :class:`AdmissionRecord` of its provider (REQ-CMP-001);
* ``build_request(query) -> EngineRequest``: the one HTTP request for a search;
* ``parse(response) -> list[RawResult]``: the results, or raises :class:`EngineFailure`.

Drivers do no I/O. The search pipeline moves the bytes through the egress component under the
engine profile, bounds them, times them and hands the decoded body to ``parse``. No provider
text ever leaves a driver inside an :class:`EngineFailure` (REQ-ENG-006): it carries a class only.
"""

from __future__ import annotations

import email.utils
import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from rypsok.config.secrets import Secret
from rypsok.contract.vocabulary import Category, FailureClass, SafeSearch, TimeRange

KeyRequirement = Literal["none", "optional", "required"]


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
    default is asked); ``time_ranges`` lists the ranges it can apply.
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
    """A failed engine request, as exactly one class; never carries provider text."""

    def __init__(self, failure_class: FailureClass, retry_after_s: float | None = None) -> None:
        super().__init__(failure_class.value)
        self.failure_class = failure_class
        self.retry_after_s = retry_after_s


class Driver(Protocol):
    """What the registry expects of a driver module."""

    ADMISSION: AdmissionRecord

    def build_request(self, query: EngineQuery) -> EngineRequest: ...

    def parse(self, response: EngineResponse) -> list[RawResult]: ...


@dataclass(frozen=True, slots=True)
class DriverSpec:
    """A driver as the registry holds it: its record and its two functions."""

    admission: AdmissionRecord
    build_request: Callable[[EngineQuery], EngineRequest]
    parse: Callable[[EngineResponse], list[RawResult]]
    scraping: bool = False  # reads a human-facing page (REQ-ENG-013): opt-in only


# --- helpers shared by drivers: provider-neutral only --------------------------------------

MAX_RETRY_AFTER_S = 3600.0  # LIM-B4


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a Retry-After value (delta-seconds or HTTP date), at most LIM-B4."""
    if not value:
        return None
    value = value.strip()
    if value.isascii() and value.isdigit():  # "²".isdigit() is True, and int() refuses it
        seconds = float(int(value[:12]))
    else:
        try:
            when = email.utils.parsedate_to_datetime(value[:64])
        except (TypeError, ValueError, IndexError, OverflowError):
            return None
        if when is None or when.tzinfo is None:
            return None
        seconds = when.timestamp() - (time.time() if now is None else now)
    return max(0.0, min(seconds, MAX_RETRY_AFTER_S))


def check_status(response: EngineResponse) -> None:
    """Classify a non-2xx status the way every provider means it (REQ-RES-002, REQ-ENG-006)."""
    status = response.status
    if 200 <= status < 300:
        return
    if status == 429:
        raise EngineFailure(
            FailureClass.RATE_LIMITED, parse_retry_after(response.headers.get("retry-after"))
        )
    if status in (401, 407):
        raise EngineFailure(FailureClass.AUTH_FAILURE)
    if status == 403:
        # A 403 that serves an HTML page is an anti-bot wall; a JSON 403 is the key's fault.
        if response.media_type in ("text/html", "application/xhtml+xml"):
            raise EngineFailure(FailureClass.BLOCKED)
        raise EngineFailure(FailureClass.AUTH_FAILURE)
    if status == 503 and "retry-after" in response.headers:
        raise EngineFailure(
            FailureClass.RATE_LIMITED, parse_retry_after(response.headers.get("retry-after"))
        )
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
