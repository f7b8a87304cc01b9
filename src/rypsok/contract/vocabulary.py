"""Fixed vocabularies of the external contract (REQ-ERR-001/002, REQ-SEC-016, REQ-ENG-006).

No string of a provider or a page ever becomes one of these values.
"""

from __future__ import annotations

from enum import StrEnum


class Outcome(StrEnum):
    """How a call ended: exactly one per call (REQ-ERR-001)."""

    OK = "ok"
    PARTIAL = "partial"
    EMPTY = "empty"
    ERROR = "error"


class ErrorKind(StrEnum):
    """The six error kinds (REQ-ERR-002)."""

    INVALID_REQUEST = "invalid_request"
    DENIED = "denied"
    UNAVAILABLE = "unavailable"
    REDIRECTED = "redirected"
    UNSUPPORTED_CONTENT = "unsupported_content"
    TOO_LARGE = "too_large"


class Reason(StrEnum):
    """Why an error happened, one level finer than its kind (fixed vocabulary)."""

    # invalid_request
    INVALID_ARGUMENT = "invalid_argument"
    START_CHAR_BEYOND_END = "start_char_beyond_end"
    # denied
    CREDENTIAL_IN_QUERY = "credential_in_query"
    CREDENTIALS_IN_URL = "credentials_in_url"
    EGRESS_POLICY = "egress_policy"
    ROBOTS_TXT = "robots_txt"
    STRICT_MODE = "strict_mode"
    SCHEME = "scheme"
    TOOL_NOT_PERMITTED = "tool_not_permitted"
    # unavailable
    RATE_LIMITED = "rate_limited"
    NO_ENGINE_ANSWERED = "no_engine_answered"
    NO_ENGINE_AVAILABLE = "no_engine_available"
    HTTP_STATUS = "http_status"
    BOT_CHALLENGE = "bot_challenge"
    TIMEOUT = "timeout"
    DNS_FAILURE = "dns_failure"
    CONNECTION_FAILED = "connection_failed"
    CAPACITY = "capacity"
    INTERNAL = "internal"
    # redirected
    CROSS_HOST_REDIRECT = "cross_host_redirect"
    # unsupported_content
    MEDIA_TYPE = "media_type"
    EXTRACTION_FAILED = "extraction_failed"
    JAVASCRIPT_REQUIRED = "javascript_required"
    # too_large
    BODY_TOO_LARGE = "body_too_large"


class NoticeCode(StrEnum):
    """What rypsok changed or decided, reported next to the data (CLR-11)."""

    # search: engines
    ENGINE_FAILED = "engine_failed"
    ENGINE_SKIPPED_LANGUAGE = "engine_skipped_language"
    ENGINE_SKIPPED_TIME_RANGE = "engine_skipped_time_range"
    ENGINE_SKIPPED_QUERY_LENGTH = "engine_skipped_query_length"
    ENGINE_SKIPPED_CIRCUIT_OPEN = "engine_skipped_circuit_open"
    ENGINE_SKIPPED_RATE_LIMIT = "engine_skipped_rate_limit"
    ENGINES_NOT_QUERIED = "engines_not_queried"
    ENGINE_SOURCES_UNRESPONSIVE = "engine_sources_unresponsive"
    # search: results
    RESULTS_DROPPED_URL = "results_dropped_url"
    RESULTS_DROPPED_INSTRUCTION_LIKE = "results_dropped_instruction_like"
    # external text
    TITLE_TRUNCATED = "title_truncated"
    SNIPPET_TRUNCATED = "snippet_truncated"
    MARKUP_REMOVED = "markup_removed"
    INVISIBLE_CHARACTERS_REMOVED = "invisible_characters_removed"
    INSTRUCTION_LIKE_TEXT = "instruction_like_text"
    # privacy
    CREDENTIAL_DETECTED = "credential_detected"
    CREDENTIAL_MASKED = "credential_masked"
    # fetch
    EXTRACTION_PARTIAL = "extraction_partial"
    FETCHED_OVER_HTTPS = "fetched_over_https"
    REDIRECT_FOLLOWED = "redirect_followed"
    CHARSET_REPLACED = "charset_replaced"
    JAVASCRIPT_MAY_BE_REQUIRED = "javascript_may_be_required"
    FOCUS_NOT_FOUND = "focus_not_found"
    FEED_ITEMS_LIMITED = "feed_items_limited"


class FailureClass(StrEnum):
    """The class of a failed engine request: exactly one of six (REQ-ENG-006)."""

    TIMEOUT = "timeout"
    RATE_LIMITED = "rate_limited"
    BLOCKED = "blocked"
    PARSE_FAILURE = "parse_failure"
    AUTH_FAILURE = "auth_failure"
    REQUEST_FAILURE = "request_failure"


class OperatorHint(StrEnum):
    """What the operator should check after an engine failure: fixed, chosen by rypsok's code.

    A driver or the pipeline picks one from a status code or the configuration, never from
    response text (REQ-ENG-006, REQ-SEC-016); its sentence is fixed text of rypsok's
    (:data:`rypsok.contract.notices.HINT_MESSAGES`), filled only with configuration key names.
    """

    CHECK_KEY = "check_key"  # the engine's key was refused, or one is needed
    JSON_OUTPUT_DISABLED = "json_output_disabled"  # a SearXNG instance that serves no JSON


class Category(StrEnum):
    """Search categories (REQ-SEARCH-002)."""

    GENERAL = "general"
    NEWS = "news"
    SCIENCE = "science"
    CODE = "code"


class TimeRange(StrEnum):
    """Time ranges of web_search (REQ-SEARCH-005)."""

    DAY = "day"
    WEEK = "week"
    MONTH = "month"
    YEAR = "year"


class SafeSearch(StrEnum):
    """Operator's safe-search level (REQ-SEARCH-008)."""

    OFF = "off"
    MODERATE = "moderate"
    STRICT = "strict"


class Access(StrEnum):
    """Access classification of a fetched page (spec README section 4)."""

    OPEN = "open"
    RESTRICTED = "restricted"
    UNKNOWN = "unknown"


class ToolName(StrEnum):
    """The three tools, in the order they are listed (REQ-MCP-005, REQ-MCP-009)."""

    WEB_SEARCH = "web_search"
    WEB_FETCH = "web_fetch"
    ENGINE_STATUS = "engine_status"
