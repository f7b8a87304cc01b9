"""The limits table as data: the one source of every bound (spec README section 2).

``docs/limits.md`` is generated from this table (``python scripts/gen_docs.py``) and a test
keeps the two equal. Defaults in the configuration schema are read from here, never copied.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Limit:
    """One row of the limits table."""

    id: str
    meaning: str
    value: int | str
    unit: str


_ROWS: tuple[Limit, ...] = (
    Limit("LIM-S1", "query length after trimming (maximum; minimum 1)", 400, "characters"),
    Limit("LIM-S2", "max_results default", 10, "results"),
    Limit("LIM-S2-MAX", "max_results ceiling (range 1 to this)", 20, "results"),
    Limit("LIM-S3", "results asked of each engine", 10, "results"),
    Limit("LIM-S4", "search deadline from call start", 4000, "ms"),
    Limit("LIM-S5", "per-engine request timeout", 3500, "ms"),
    Limit("LIM-S6", "reserve after the engines (S5 + S6 <= S4)", 500, "ms"),
    Limit("LIM-S7", "hard ceiling of a web_search call", 6000, "ms"),
    Limit("LIM-S8", "engines queried per search", 6, "engines"),
    Limit("LIM-S9", "title length", 200, "characters"),
    Limit("LIM-S10", "snippet length", 500, "characters"),
    Limit("LIM-S11", "latency window for engine_status", 20, "requests"),
    Limit("LIM-S12", "engine connect timeout", 2000, "ms"),
    Limit("LIM-C1", "outbound engine requests in flight per process", 64, "requests"),
    Limit("LIM-C2", "outbound requests in flight per engine", 4, "requests"),
    Limit("LIM-C3", "fetches in flight per process", 8, "fetches"),
    Limit("LIM-C4", "fetches in flight per host", 2, "fetches"),
    Limit("LIM-C5", "parse and extraction tasks at once", 2, "tasks"),
    Limit("LIM-C6", "web_search calls per minute per process", 60, "calls"),
    Limit("LIM-C7", "web_fetch calls per minute per process", 60, "calls"),
    Limit("LIM-C8", "engine_status calls per minute per process", 120, "calls"),
    Limit("LIM-C9", "per-engine request rate", "from its admission record", "-"),
    Limit("LIM-F1", "max_chars default", 20000, "characters"),
    Limit("LIM-F2", "max_chars ceiling", 100000, "characters"),
    Limit("LIM-F3", "fetched body after decompression", 4 * 1024 * 1024, "bytes"),
    Limit("LIM-F4", "fetch total timeout", 10000, "ms"),
    Limit("LIM-F5", "web_fetch call ceiling", 15000, "ms"),
    Limit("LIM-F6", "fetch connect timeout", 3000, "ms"),
    Limit("LIM-F7", "same-host redirects followed", 5, "redirects"),
    Limit("LIM-F8", "ports allowed for fetches", "80, 443", "ports"),
    Limit("LIM-F9", "URL length", 2048, "characters"),
    Limit("LIM-F10", "parsed nodes", 200000, "nodes"),
    Limit("LIM-F11", "nesting depth", 256, "levels"),
    Limit("LIM-F12", "robots.txt cache lifetime", 3600, "s"),
    Limit(
        "LIM-F13",
        "robots.txt bytes read and parsed (the first ones; reading stops there)",
        500 * 1024,
        "bytes",
    ),
    Limit("LIM-B1", "consecutive failures that open a circuit", 3, "failures"),
    Limit("LIM-B2", "first cooldown", 30, "s"),
    Limit("LIM-B3", "cooldown growth: factor, capped at LIM-B3-MAX", 2, "factor"),
    Limit("LIM-B3-MAX", "longest cooldown", 900, "s"),
    Limit("LIM-B4", "longest Retry-After honoured", 3600, "s"),
    Limit("LIM-B5", "probe requests after a cooldown", 1, "requests"),
    Limit(
        "LIM-I1", "all tool definitions plus server instructions, serialized", 8000, "characters"
    ),
    Limit("LIM-I2", "parameters per tool", 5, "parameters"),
    Limit("LIM-I3", "schema shape", "flat object of primitives and enums", "-"),
    Limit("LIM-I4", "notice and error message length", 300, "characters"),
    Limit("LIM-K1", "cache default", "off", "-"),
    Limit("LIM-K2", "cache entry lifetime", 300, "s"),
    Limit("LIM-K3", "cache entries", 1000, "entries"),
    Limit("LIM-O1", "shutdown after EOF or SIGTERM", 2000, "ms"),
    Limit("LIM-O2", "cancellation takes effect", 100, "ms"),
    Limit("LIM-P1", "credential check mode default (deny, warn, mask, off)", "deny", "-"),
    Limit("LIM-P3", "debug logging of queries", "off", "-"),
    Limit("LIM-H4", "HTTP/2 streams per connection", 100, "streams"),
    Limit("LIM-H5", "HTTP request ceiling", 30000, "ms"),
    Limit("LIM-H6", "live sessions (handshake revisions)", 100, "sessions"),
    Limit("LIM-U1", "unit of every text budget", "Unicode scalar values", "-"),
)

LIMITS: dict[str, Limit] = {row.id: row for row in _ROWS}


def limit(limit_id: str) -> int:
    """The numeric value of a limit; raises if the limit is not numeric."""
    value = LIMITS[limit_id].value
    if not isinstance(value, int):
        raise TypeError(f"{limit_id} is not numeric")
    return value


def markdown_table() -> str:
    """The table as Markdown, the body of docs/limits.md."""
    lines = ["| id | meaning | value | unit |", "| --- | --- | --- | --- |"]
    lines += [f"| {r.id} | {r.meaning} | {r.value} | {r.unit} |" for r in _ROWS]
    return "\n".join(lines) + "\n"
