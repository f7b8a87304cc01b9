"""The configuration schema: every key, its type and its default from the limits table.

Unknown keys are refused (``extra="forbid"``), so a typo is an error that names the key
(REQ-CFG-005). Defaults come from :mod:`rypsok.config.limits` (REQ-CFG-003).
"""

from __future__ import annotations

import ipaddress
import re
from typing import Annotated, Literal

import idna
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from rypsok.config.limits import limit
from rypsok.contract.vocabulary import SafeSearch, ToolName

SCHEMA_VERSION = 1


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


PositiveMs = Annotated[int, Field(ge=1, le=600_000)]


class ServiceSettings(_Section):
    """``[service]``: identity, rendering, defaults applied to every engine."""

    contact: str = Field(
        default="",
        max_length=200,
        description="Operator contact (URL or e-mail) sent in the User-Agent (REQ-CMP-004).",
    )
    engine_status: bool = Field(default=True, description="Offer the engine_status tool.")
    structured_content: bool = Field(
        default=True, description="Send structured content next to the JSON text (REQ-MCP-011)."
    )
    attribution: bool = Field(
        default=False, description="Name the engines of every result, not only where required."
    )
    languages: list[Annotated[str, Field(pattern=r"^[a-z]{2,3}(-[A-Za-z]{2,4})?$")]] = Field(
        default_factory=lambda: ["en"],
        min_length=1,
        max_length=50,
        description="Languages a caller may choose (BCP 47 primary tags).",
    )
    default_language: str = Field(default="en", description="Language used when none is given.")
    region: str = Field(
        default="", pattern=r"^([A-Za-z]{2})?$", description="ISO 3166 code or empty."
    )
    safe_search: SafeSearch = Field(default=SafeSearch.MODERATE)
    log_level: Literal["debug", "info", "warning", "error"] = "info"
    log_queries: bool = Field(
        default=False,
        description="Log query text and URLs at debug level; warns at start (LIM-P3).",
    )
    calls_per_minute_web_search: int = Field(default=limit("LIM-C6"), ge=1, le=100_000)
    calls_per_minute_web_fetch: int = Field(default=limit("LIM-C7"), ge=1, le=100_000)
    calls_per_minute_engine_status: int = Field(default=limit("LIM-C8"), ge=1, le=100_000)

    @model_validator(mode="after")
    def _default_language_offered(self) -> ServiceSettings:
        if self.default_language not in self.languages:
            raise ValueError("default_language must be one of languages")
        return self

    @field_validator("contact")
    @classmethod
    def _contact_printable(cls, value: str) -> str:
        # The contact goes into the User-Agent header: printable ASCII only (RFC 9110).
        if any(not (" " <= c <= "~") or c in "()\\;" for c in value):
            raise ValueError(
                "contact must be printable ASCII without parentheses, backslashes or semicolons"
            )
        return value


# An engine request is not started with less of the engine phase left (search.pipeline).
MIN_REQUEST_MS = 500


class SearchSettings(_Section):
    """``[search]``: deadlines, counts and bounds of web_search."""

    max_results_default: int = Field(
        default=limit("LIM-S2"), ge=1, description="max_results when a call gives none (LIM-S2)."
    )
    max_results_ceiling: int = Field(
        default=limit("LIM-S2-MAX"),
        ge=1,
        le=100,
        description="Largest max_results a call may ask for (LIM-S2).",
    )
    results_per_engine: int = Field(
        default=limit("LIM-S3"),
        ge=1,
        le=50,
        description="Results asked of each engine, at most what its provider allows (LIM-S3).",
    )
    deadline_ms: PositiveMs = Field(
        default=limit("LIM-S4"),
        description="Search deadline from the start of a call (LIM-S4). The engine phase ends "
        "at deadline_ms - reserve_ms: engines still running then are cut and reported failed "
        "(timeout). The phase must be at least 500 ms long, since a request is not started "
        "with less of it left.",
    )
    engine_timeout_ms: PositiveMs = Field(
        default=limit("LIM-S5"),
        description="Timeout of one engine's requests, both requests of a two-step engine "
        "together (LIM-S5). engine_timeout_ms + reserve_ms must not exceed deadline_ms.",
    )
    reserve_ms: PositiveMs = Field(
        default=limit("LIM-S6"),
        description="Part of the deadline kept after the engine phase for cleaning, fusion "
        "and the response (LIM-S6).",
    )
    ceiling_ms: PositiveMs = Field(
        default=limit("LIM-S7"),
        description="Hard ceiling of a web_search call (LIM-S7): a call still running then "
        "ends with the error unavailable / timeout. At least deadline_ms.",
    )
    connect_timeout_ms: PositiveMs = Field(
        default=limit("LIM-S12"),
        description="Connect timeout of an engine request, within its engine_timeout_ms (LIM-S12).",
    )
    engines_per_search: int = Field(
        default=limit("LIM-S8"),
        ge=1,
        le=32,
        description="Engines asked per search, in preference order; the others are counted "
        "in the engines_not_queried notice (LIM-S8).",
    )
    title_max_chars: int = Field(
        default=limit("LIM-S9"),
        ge=20,
        le=2000,
        description="Longest title returned, in Unicode scalar values (LIM-S9).",
    )
    snippet_max_chars: int = Field(
        default=limit("LIM-S10"),
        ge=20,
        le=5000,
        description="Longest snippet returned, in Unicode scalar values (LIM-S10).",
    )
    query_max_chars: int = Field(
        default=limit("LIM-S1"),
        ge=1,
        le=2000,
        description="Longest query accepted, after trimming (LIM-S1).",
    )
    requests_in_flight: int = Field(
        default=limit("LIM-C1"),
        ge=1,
        le=1024,
        description="Engine requests in flight in the process, all engines together (LIM-C1).",
    )
    instruction_like: Literal["notice", "drop"] = Field(
        default="notice", description="What to do with results holding instruction-like text."
    )

    @model_validator(mode="after")
    def _deadlines_consistent(self) -> SearchSettings:
        if self.deadline_ms - self.reserve_ms < MIN_REQUEST_MS:
            # Otherwise every call would end no_engine_answered without contacting anyone.
            raise ValueError(
                f"deadline_ms - reserve_ms must leave at least {MIN_REQUEST_MS} ms for the "
                "engine phase: no engine request is started with less"
            )
        if self.engine_timeout_ms + self.reserve_ms > self.deadline_ms:
            raise ValueError(
                "engine_timeout_ms + reserve_ms must not exceed deadline_ms (REQ-AGG-003)"
            )
        if self.deadline_ms > self.ceiling_ms:
            raise ValueError("deadline_ms must not exceed ceiling_ms")
        if self.max_results_default > self.max_results_ceiling:
            raise ValueError("max_results_default must not exceed max_results_ceiling")
        return self


class EngineSettings(_Section):
    """``[engines.<id>]``: one engine's switch, endpoint and credential reference."""

    enabled: bool | None = Field(
        default=None, description="Switch the engine on or off; unset keeps its default."
    )
    endpoint: str | None = Field(
        default=None,
        max_length=2048,
        description="Full URL replacing the provider's endpoint; may use {language}.",
    )
    api_key_env: str | None = Field(default=None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    api_key_file: str | None = None
    preference: int | None = Field(
        default=None, ge=0, le=1000, description="Order among engines of a category; lower first."
    )

    @model_validator(mode="after")
    def _one_reference(self) -> EngineSettings:
        if self.api_key_env and self.api_key_file:
            raise ValueError("give api_key_env or api_key_file, not both")
        return self

    @field_validator("endpoint")
    @classmethod
    def _endpoint_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("https://", "http://")):
            raise ValueError("endpoint must be a full http(s) URL")
        return value


def _network_or_host(value: str) -> str:
    try:
        ipaddress.ip_network(value, strict=False)
    except ValueError:
        if not value or len(value) > 253 or any(c.isspace() or c in "/@:" for c in value):
            raise ValueError(f"not a CIDR or host name: {value!r}") from None
    return value


class EgressSettings(_Section):
    """``[egress]``: operator rules of the agent-directed profile, DNS servers, engine proxy."""

    allow: list[str] = Field(default_factory=list, description="CIDRs or host names to allow.")
    deny: list[str] = Field(default_factory=list, description="CIDRs or host names to deny.")
    dns_servers: list[str] = Field(
        default_factory=list, description="DNS servers as ip:port; empty uses the system resolver."
    )
    engine_proxy: str | None = Field(
        default=None,
        max_length=2048,
        description=(
            "One proxy for engine requests only, as http://host:port or https://host:port, "
            "without credentials (REQ-RES-008); for an authenticating proxy use "
            "engine_proxy_auth_env or engine_proxy_auth_file. Never used by web_fetch; proxy "
            "environment variables are always ignored."
        ),
    )
    engine_proxy_auth_env: str | None = Field(
        default=None,
        pattern=r"^[A-Za-z_][A-Za-z0-9_]*$",
        description=(
            "Environment variable holding user:password for the engine proxy (HTTP Basic, sent "
            "only to the proxy as Proxy-Authorization, never to engines); needs engine_proxy."
        ),
    )
    engine_proxy_auth_file: str | None = Field(
        default=None,
        min_length=1,
        description="File holding user:password for the engine proxy (one line); needs "
        "engine_proxy.",
    )

    @field_validator("allow", "deny")
    @classmethod
    def _rules(cls, value: list[str]) -> list[str]:
        return [_network_or_host(v.strip().lower()) for v in value]

    @field_validator("engine_proxy")
    @classmethod
    def _proxy(cls, value: str | None) -> str | None:
        # The shape only; the egress component parses it with its own URL parser and judges
        # the host at start (rypsok.egress.proxy). Messages never repeat the value, which
        # could hold a password.
        if value is None:
            return None
        if "@" in value:
            raise ValueError(
                "the proxy URL must not carry credentials (user:password@); give them by "
                "reference with engine_proxy_auth_env or engine_proxy_auth_file"
            )
        scheme, sep, rest = value.partition("://")
        authority, _slash, tail = rest.partition("/")
        if not sep or scheme.lower() not in ("http", "https") or not authority:
            raise ValueError("the proxy must be http://host:port or https://host:port")
        if tail or any(c in authority for c in "?#"):
            raise ValueError("the proxy URL takes a scheme, host and port only")
        host, colon, port = authority.rpartition(":")
        if not colon or not host or host.endswith(":") or not port.isdigit():
            raise ValueError("the proxy URL must name its port (http://host:port)")
        if not 0 < int(port) < 65536:
            raise ValueError("the proxy port must be 1 to 65535")
        return value

    @model_validator(mode="after")
    def _proxy_credentials(self) -> EgressSettings:
        if self.engine_proxy_auth_env and self.engine_proxy_auth_file:
            raise ValueError("give engine_proxy_auth_env or engine_proxy_auth_file, not both")
        if (self.engine_proxy_auth_env or self.engine_proxy_auth_file) and not self.engine_proxy:
            raise ValueError(
                "engine_proxy_auth_env and engine_proxy_auth_file need engine_proxy to be set"
            )
        return self

    @field_validator("dns_servers")
    @classmethod
    def _servers(cls, value: list[str]) -> list[str]:
        for server in value:
            host, sep, port = server.rpartition(":")
            try:
                ipaddress.ip_address(host.strip("[]"))
            except ValueError:
                raise ValueError(f"dns server must be ip:port, got {server!r}") from None
            if not sep or not port.isdigit() or not 0 < int(port) < 65536:
                raise ValueError(f"dns server must be ip:port, got {server!r}")
        return value


# One label of a host name as the egress URL parser accepts it (lower-case ASCII).
_LABEL = re.compile(r"[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?")


def _host_rule(value: str) -> str:
    """A ``[fetch] strict_allow`` entry, normalized: a name, ``*.name`` or an IP address.

    A Unicode name is converted to ASCII as the egress URL parser converts a URL's host (UTS
    46, non-transitional), so that the rule and the host compare in one form. Refused:
    anything with a scheme, port, path or brackets, a ``*`` elsewhere than a leading ``*.``, a
    trailing dot, and a name whose last label is a number (the URL parser reads such a host as
    an IPv4 address, so the rule could never match).
    """
    rule = value.strip().lower()
    try:
        return str(ipaddress.ip_address(rule))
    except ValueError:
        pass
    prefix = "*." if rule.startswith("*.") else ""
    name = rule.removeprefix(prefix)
    if not name.isascii():
        try:
            name = idna.encode(name, uts46=True, std3_rules=True, transitional=False).decode()
        except (idna.IDNAError, UnicodeError, ValueError):
            name = ""  # refused below
    labels = name.split(".")
    last = labels[-1]
    if (
        len(name) > 253
        or not all(_LABEL.fullmatch(label) for label in labels)
        or last.isdigit()
        or last.startswith("0x")
    ):
        raise ValueError(
            f"not a host name, *.name pattern or IP address: {value!r} (a rule is a host "
            "only, e.g. docs.python.org or *.example.org)"
        )
    return prefix + name


class FetchSettings(_Section):
    """``[fetch]``: web_fetch policy and bounds."""

    allow_http: bool = Field(default=False, description="Fetch plain http without the https retry.")
    ports: list[Annotated[int, Field(ge=1, le=65535)]] = Field(
        default_factory=list, description="Ports allowed in addition to 80 and 443 (LIM-F8)."
    )
    robots: bool = Field(default=True, description="Honour robots.txt (REQ-CMP-005).")
    strict: bool = Field(
        default=False,
        description="Fetch only URLs rypsok returned in this process, and hosts of "
        "strict_allow (REQ-SEC-021).",
    )
    strict_allow: list[str] = Field(
        default_factory=list,
        max_length=1000,
        description="With strict = true (required), hosts web_fetch also accepts: a name "
        "(`docs.python.org`, that name only), `*.name` (every name below it, not the name "
        "itself) or an IP address (URLs written with it). A rule names a host only; scheme, "
        "port, the egress policy and robots.txt are checked as for any URL. A redirect to "
        "another host must be allowed (or returned) too, else denied / strict_mode.",
    )
    follow_cross_host_redirects: bool = Field(
        default=False,
        description="Follow a redirect to another host (each target checked like the first "
        "URL, at most max_redirects in all) and report the URL fetched, instead of ending "
        "the call with redirected and the target (REQ-FETCH-006).",
    )
    max_chars_default: int = Field(default=limit("LIM-F1"), ge=1)
    max_chars_ceiling: int = Field(default=limit("LIM-F2"), ge=1, le=1_000_000)
    max_body_bytes: int = Field(default=limit("LIM-F3"), ge=1024, le=64 * 1024 * 1024)
    total_timeout_ms: PositiveMs = limit("LIM-F4")
    ceiling_ms: PositiveMs = limit("LIM-F5")
    connect_timeout_ms: PositiveMs = limit("LIM-F6")
    max_redirects: int = Field(default=limit("LIM-F7"), ge=0, le=20)
    fetches_in_flight: int = Field(default=limit("LIM-C3"), ge=1, le=256)
    fetches_per_host: int = Field(default=limit("LIM-C4"), ge=1, le=64)
    workers: int = Field(default=limit("LIM-C5"), ge=1, le=64)
    sandbox: Literal["auto", "bwrap", "none"] = Field(
        default="auto", description="Run extraction workers under bubblewrap when available."
    )

    @field_validator("strict_allow")
    @classmethod
    def _strict_rules(cls, value: list[str]) -> list[str]:
        return [_host_rule(v) for v in value]

    @model_validator(mode="after")
    def _consistent(self) -> FetchSettings:
        if self.strict_allow and not self.strict:
            # Without strict mode every URL is fetched: a list the operator believes limits
            # fetches would silently limit nothing.
            raise ValueError("strict_allow has effect only with strict = true; set both")
        if self.max_chars_default > self.max_chars_ceiling:
            raise ValueError("max_chars_default must not exceed max_chars_ceiling")
        if self.total_timeout_ms > self.ceiling_ms:
            raise ValueError("total_timeout_ms must not exceed ceiling_ms")
        return self


class PrivacySettings(_Section):
    """``[privacy]``: the credential check of queries and URLs (REQ-PRIV-002, LIM-P1)."""

    credential_check: Literal["deny", "warn", "mask", "off"] = Field(
        default="deny",
        description="A query or URL holding a credential (formats: see the disclosure page) is "
        "refused (deny), sent with a notice (warn), sent with the credential masked (mask), "
        "or not checked (off) (LIM-P1).",
    )


# A Host header value: a name or bracketed IPv6 address, then an optional port or ``*``.
_HOST_VALUE = re.compile(r"^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]{1,253})(:([0-9]{1,5}|\*))?$")


class CallerSettings(_Section):
    """``[[http.callers]]``: one authenticated caller of the HTTP service."""

    name: str = Field(
        pattern=r"^[A-Za-z0-9_.-]{1,64}$",
        description="The caller's name; its invocation limits are its own (REQ-SEC-019).",
    )
    token_env: str | None = Field(
        default=None,
        pattern=r"^[A-Za-z_][A-Za-z0-9_]*$",
        description="Environment variable holding the caller's bearer token.",
    )
    token_file: str | None = Field(
        default=None, description="File holding the caller's bearer token (one line)."
    )
    tools: list[ToolName] = Field(
        default_factory=lambda: list(ToolName),
        description="Tools this caller may list and call; others are not shown and are denied.",
    )

    @model_validator(mode="after")
    def _one_reference(self) -> CallerSettings:
        if bool(self.token_env) == bool(self.token_file):
            raise ValueError("give exactly one of token_env or token_file")
        return self


class HttpSettings(_Section):
    """``[http]``: the Streamable HTTP listener (REQ-SEC-018); see docs/http.md."""

    bind: str = Field(
        default="127.0.0.1",
        description="Address to listen on; anything but loopback requires [[http.callers]].",
    )
    port: int = Field(default=8000, ge=0, le=65535, description="Port; 0 picks a free one.")
    allowed_hosts: list[str] = Field(
        default_factory=list,
        description="Host header values accepted (`name:port`, or `name:*` for any port); "
        "empty derives them from bind and port. Required for a wildcard bind.",
    )
    allowed_origins: list[str] = Field(
        default_factory=list,
        description="Origin header values accepted; empty derives http(s)://<allowed host>. "
        "Requests without Origin are accepted.",
    )
    callers: list[CallerSettings] = Field(default_factory=list)
    request_ceiling_ms: PositiveMs = Field(
        default=limit("LIM-H5"),
        description="Every request is ended after this, with 408 if nothing was sent yet.",
    )
    max_sessions: int = Field(
        default=limit("LIM-H6"),
        ge=1,
        le=100_000,
        description="Live sessions of the handshake revisions; beyond, 503 with Retry-After.",
    )
    max_sessions_per_caller: int | None = Field(
        default=None,
        ge=1,
        le=100_000,
        description="Live handshake-era sessions one authenticated caller may hold (at most "
        "max_sessions); beyond, 503 with Retry-After. Unset: a quarter of max_sessions (25). "
        "Not applied without [[http.callers]].",
    )
    session_idle_s: int = Field(
        default=600,
        ge=10,
        le=86_400,
        description="A handshake-era session with no request in flight for this long is closed.",
    )
    max_body_bytes: int = Field(
        # Not a LIM of the specification. The largest tools/call rypsok accepts is a few KiB
        # (query LIM-S1, URL LIM-F9, focus 200 characters); every stalled upload may hold up
        # to this much (F2), so the default stays small but generous.
        default=256 * 1024,
        ge=4096,
        le=16 * 1024 * 1024,
        description="Largest request body accepted; larger ones are answered 413.",
    )
    max_requests_in_flight: int = Field(
        default=128,
        ge=1,
        le=100_000,
        description="POST requests served at once (body upload included); beyond, 503 with "
        "Retry-After.",
    )
    max_requests_in_flight_per_caller: int | None = Field(
        default=None,
        ge=1,
        le=100_000,
        description="POST requests one authenticated caller may have in flight (at most "
        "max_requests_in_flight); beyond, 503. Unset: a quarter of max_requests_in_flight "
        "(32). Not applied without [[http.callers]].",
    )
    max_connections: int = Field(
        default=512,
        ge=8,
        le=1_000_000,
        description="Open client connections; a new one beyond closes the oldest connection "
        "waiting for a request, or itself when none waits. Keep it below the open-file limit.",
    )
    head_timeout_ms: PositiveMs = Field(
        default=10_000,
        description="A request head (or a new connection's first bytes) not complete by then "
        "gets 408 and the connection closed; at most request_ceiling_ms.",
    )
    metrics_port: int | None = Field(
        default=None,
        ge=1,
        le=65535,
        description="Serve Prometheus text at /metrics on this port of the bind address; "
        "unset: off.",
    )
    metrics_allowed_hosts: list[str] = Field(
        default_factory=list,
        description="Host header values accepted on metrics_port; empty derives them from bind "
        "and metrics_port (a wildcard bind: the loopback names). Origin is always refused there.",
    )

    @field_validator("allowed_hosts", "metrics_allowed_hosts")
    @classmethod
    def _host_values(cls, value: list[str]) -> list[str]:
        for item in value:
            if not _HOST_VALUE.fullmatch(item):
                raise ValueError(f"not a Host header value (name:port or name:*): {item!r}")
        return value

    @field_validator("allowed_origins")
    @classmethod
    def _origin_values(cls, value: list[str]) -> list[str]:
        for item in value:
            scheme, sep, rest = item.partition("://")
            if scheme not in ("http", "https") or not sep or not _HOST_VALUE.fullmatch(rest):
                raise ValueError(f"not an Origin value (scheme://name[:port]): {item!r}")
        return value

    @model_validator(mode="after")
    def _distinct_ports_and_callers(self) -> HttpSettings:
        if self.metrics_port is not None and self.metrics_port == self.port:
            raise ValueError("metrics_port must differ from port")
        names = [c.name for c in self.callers]
        if len(names) != len(set(names)):
            raise ValueError("[[http.callers]] names must be unique")
        if self.max_sessions_per_caller is not None and (
            self.max_sessions_per_caller > self.max_sessions
        ):
            raise ValueError("max_sessions_per_caller must not exceed max_sessions")
        per_caller = self.max_requests_in_flight_per_caller
        if per_caller is not None and per_caller > self.max_requests_in_flight:
            raise ValueError(
                "max_requests_in_flight_per_caller must not exceed max_requests_in_flight"
            )
        return self

    @property
    def sessions_per_caller(self) -> int:
        """The per-caller session quota in force: the key, or a quarter of max_sessions."""
        if self.max_sessions_per_caller is not None:
            return self.max_sessions_per_caller
        return max(1, self.max_sessions // 4)

    @property
    def requests_in_flight_per_caller(self) -> int:
        """The per-caller bound on POSTs in flight: the key, or a quarter of the total."""
        if self.max_requests_in_flight_per_caller is not None:
            return self.max_requests_in_flight_per_caller
        return max(1, self.max_requests_in_flight // 4)


class CacheSettings(_Section):
    """``[cache]``: the web_search result cache, off by default (REQ-CACHE-001, LIM-K1).

    A query cache retains queries for ``ttl_s`` (REQ-CACHE-007). With ``backend = "redis"``
    several replicas share the cache and also the per-caller invocation limits and the
    per-engine provider rates.
    """

    enabled: bool = Field(default=False, description="Cache web_search results (LIM-K1: off).")
    backend: Literal["memory", "redis"] = Field(
        default="memory", description="In-process, or Redis/Valkey shared by replicas."
    )
    ttl_s: int = Field(default=limit("LIM-K2"), ge=1, le=86_400, description="Entry lifetime.")
    max_entries: int = Field(
        default=limit("LIM-K3"), ge=1, le=10_000_000, description="Entries held in memory."
    )
    redis_url_env: str | None = Field(
        default=None,
        pattern=r"^[A-Za-z_][A-Za-z0-9_]*$",
        description="Environment variable holding the redis:// URL (it may carry a password).",
    )
    redis_url_file: str | None = Field(default=None, description="File holding the redis URL.")
    key_prefix: str = Field(
        default="rypsok:", pattern=r"^[A-Za-z0-9:_.-]{1,64}$", description="Redis key prefix."
    )

    @model_validator(mode="after")
    def _redis_reference(self) -> CacheSettings:
        if self.backend == "redis" and bool(self.redis_url_env) == bool(self.redis_url_file):
            raise ValueError("backend redis needs exactly one of redis_url_env or redis_url_file")
        return self


class ScrapingSettings(_Section):
    """``[scraping]``: drivers that read human-facing pages, at the operator's risk."""

    enabled: bool = Field(
        default=False,
        description="Allow scraping drivers (REQ-ENG-013); the operator answers for the "
        "provider's terms.",
    )


class Settings(_Section):
    """The whole configuration file."""

    schema_version: Literal[1] = 1
    service: ServiceSettings = Field(default_factory=ServiceSettings)
    search: SearchSettings = Field(default_factory=SearchSettings)
    engines: dict[str, EngineSettings] = Field(default_factory=dict)
    egress: EgressSettings = Field(default_factory=EgressSettings)
    fetch: FetchSettings = Field(default_factory=FetchSettings)
    privacy: PrivacySettings = Field(default_factory=PrivacySettings)
    http: HttpSettings = Field(default_factory=HttpSettings)
    cache: CacheSettings = Field(default_factory=CacheSettings)
    scraping: ScrapingSettings = Field(default_factory=ScrapingSettings)
