"""Validation of tool arguments before any work starts (REQ-MCP-004, REQ-SEARCH-001..006).

Hand-written rather than generated so that every refusal lists the valid values or states the
ceiling (CLR-2, CLR-3) in rypsok's own words; the caller's text is never echoed back.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass

from rypsok.contract.errors import ToolFailure, invalid_argument
from rypsok.contract.tools import ContractSettings
from rypsok.contract.vocabulary import Category, TimeRange


@dataclass(frozen=True, slots=True)
class SearchArguments:
    """Validated arguments of web_search."""

    query: str
    category: Category
    max_results: int
    language: str
    time_range: TimeRange | None


@dataclass(frozen=True, slots=True)
class FetchArguments:
    """Validated arguments of web_fetch (the URL is checked by the egress policy later)."""

    url: str
    max_chars: int
    start_char: int
    focus: str | None


@dataclass(frozen=True, slots=True)
class StatusArguments:
    """engine_status takes no arguments."""


def _unknown(args: Mapping[str, object], known: tuple[str, ...]) -> None:
    for key in args:
        if key not in known:
            valid = f"valid parameters are: {', '.join(known)}" if known else "it takes none"
            raise invalid_argument(
                "arguments", f"Unknown parameter; {valid}.", valid_values=list(known)
            )


def _string(args: Mapping[str, object], name: str, *, required: bool) -> str | None:
    value = args.get(name)
    if value is None:
        if required:
            raise invalid_argument(name, f"Parameter {name} is required and must be a string.")
        return None
    if not isinstance(value, str):
        raise invalid_argument(name, f"Parameter {name} must be a string.")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise invalid_argument(
            name, f"Parameter {name} contains invalid Unicode (a lone surrogate); remove it."
        ) from None
    return value


def _text(value: str, name: str, max_chars: int) -> str:
    """Trim, collapse whitespace, refuse control characters; count Unicode scalar values."""
    for position, char in enumerate(value):
        if char in "\t\n\r":
            continue
        if unicodedata.category(char) in ("Cc", "Cf", "Cs", "Co", "Cn"):
            raise invalid_argument(
                name,
                f"Parameter {name} contains a control or invisible character at position "
                f"{position}; remove it.",
                position=position,
            )
    text = " ".join(value.split())
    if not text:
        raise invalid_argument(
            name,
            f"Parameter {name} is empty after trimming whitespace.",
            minimum=1,
            maximum=max_chars,
        )
    if len(text) > max_chars:
        raise invalid_argument(
            name,
            f"Parameter {name} is {len(text)} characters long; the ceiling is {max_chars}. "
            "Shorten it.",
            minimum=1,
            maximum=max_chars,
        )
    return text


def _integer(
    args: Mapping[str, object], name: str, default: int, minimum: int, maximum: int | None
) -> int:
    value = args.get(name, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise invalid_argument(
                name, f"Parameter {name} must be an integer.", minimum=minimum, maximum=maximum
            )
    if value < minimum or (maximum is not None and value > maximum):
        bound = f"from {minimum} to {maximum}" if maximum is not None else f"at least {minimum}"
        raise invalid_argument(
            name, f"Parameter {name} must be {bound}.", minimum=minimum, maximum=maximum
        )
    return value


def _choice(args: Mapping[str, object], name: str, valid: tuple[str, ...]) -> str | None:
    value = args.get(name)
    if value is None:
        return None
    if not isinstance(value, str) or value not in valid:
        listed = ", ".join(valid)
        if len(listed) > 200:  # the message stays within LIM-I4; detail has every value
            listed = ", ".join(valid[:10]) + f" and {len(valid) - 10} more (see detail)"
        raise invalid_argument(
            name, f"Parameter {name} must be one of: {listed}.", valid_values=list(valid)
        )
    return value


def parse_search(args: Mapping[str, object], settings: ContractSettings) -> SearchArguments:
    """Validate web_search arguments or raise an ``invalid_request`` :class:`ToolFailure`."""
    _unknown(args, ("query", "category", "max_results", "language", "time_range"))
    query = _text(_string(args, "query", required=True) or "", "query", settings.query_max_chars)
    category = _choice(args, "category", tuple(c.value for c in settings.categories))
    language = _choice(args, "language", settings.languages)
    time_range = _choice(args, "time_range", tuple(t.value for t in TimeRange))
    return SearchArguments(
        query=query,
        category=Category(category) if category else settings.categories[0],
        max_results=_integer(
            args, "max_results", settings.max_results_default, 1, settings.max_results_ceiling
        ),
        language=language or settings.default_language,
        time_range=TimeRange(time_range) if time_range else None,
    )


def parse_fetch(args: Mapping[str, object], settings: ContractSettings) -> FetchArguments:
    """Validate web_fetch arguments or raise an ``invalid_request`` :class:`ToolFailure`."""
    _unknown(args, ("url", "max_chars", "start_char", "focus"))
    url = (_string(args, "url", required=True) or "").strip()
    if not url:
        raise invalid_argument("url", "Parameter url is empty.")
    if len(url) > settings.url_max_chars:
        raise invalid_argument(
            "url",
            f"Parameter url is {len(url)} characters long; the ceiling is "
            f"{settings.url_max_chars}.",
            maximum=settings.url_max_chars,
        )
    focus_raw = _string(args, "focus", required=False)
    focus = _text(focus_raw, "focus", 200) if focus_raw is not None else None
    return FetchArguments(
        url=url,
        max_chars=_integer(
            args, "max_chars", settings.max_chars_default, 1, settings.max_chars_ceiling
        ),
        start_char=_integer(args, "start_char", 0, 0, None),
        focus=focus,
    )


def parse_status(args: Mapping[str, object]) -> StatusArguments:
    """engine_status accepts no parameters."""
    _unknown(args, ())
    return StatusArguments()


__all__ = [
    "FetchArguments",
    "SearchArguments",
    "StatusArguments",
    "ToolFailure",
    "parse_fetch",
    "parse_search",
    "parse_status",
]
