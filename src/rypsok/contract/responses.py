"""Response models of the three tools (REQ-CTX-001/002, REQ-MCP-011).

Each field is either asserted by rypsok (outcome, notices, control fields) or external data
(titles, snippets, URLs, content); docs/design.md states the class of every field. External data
only ever sits in its own fields, never inside a string rypsok writes (REQ-SEC-001/002).
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from rypsok.contract.errors import ErrorBody
from rypsok.contract.notices import Notice
from rypsok.contract.vocabulary import Access, Outcome


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class SearchResult(_Frozen):
    """One result of web_search; ``date`` and ``engines`` are present only when they apply."""

    title: str
    url: str
    snippet: str
    date: str | None = None
    engines: list[str] | None = None


class SearchResponse(_Frozen):
    """The response of web_search."""

    outcome: Literal[Outcome.OK, Outcome.PARTIAL, Outcome.EMPTY]
    notices: list[Notice] = Field(default_factory=list)
    results: list[SearchResult] = Field(default_factory=list)


class OutlineEntry(_Frozen):
    """A heading of the fetched content and where it starts (external data, rypsok's offset)."""

    heading: str
    level: int
    start_char: int


class FeedItem(_Frozen):
    """One item of an RSS or Atom feed."""

    title: str
    link: str | None = None
    summary: str
    date: str | None = None


class FetchResponse(_Frozen):
    """The response of web_fetch."""

    outcome: Literal[Outcome.OK, Outcome.PARTIAL]
    notices: list[Notice] = Field(default_factory=list)
    url: str
    media_type: str
    access: Access
    title: str | None
    content: str
    outline: list[OutlineEntry] = Field(default_factory=list)
    start_char: int
    next_start_char: int | None
    truncated: bool
    total_chars: int
    sha256: str
    items: list[FeedItem] | None = None


EngineState = Literal["disabled", "closed", "open", "half_open"]


class EngineHealth(_Frozen):
    """Health of one configured engine: nothing else (REQ-STATUS-001/002)."""

    engine: str
    state: EngineState
    median_latency_ms: int | None


class StatusResponse(_Frozen):
    """The response of engine_status."""

    outcome: Literal[Outcome.OK]
    engines: list[EngineHealth]


class ErrorResponse(_Frozen):
    """The structured content of every error (REQ-ERR-002/003)."""

    outcome: Literal[Outcome.ERROR] = Outcome.ERROR
    error: ErrorBody


Response = SearchResponse | FetchResponse | StatusResponse | ErrorResponse


def to_structured(response: Response) -> dict[str, Any]:
    """The structured content of a response: optional search fields are omitted when absent."""
    data: dict[str, Any] = response.model_dump(mode="json")
    if isinstance(response, SearchResponse):
        data["results"] = [r.model_dump(mode="json", exclude_none=True) for r in response.results]
    if isinstance(response, FetchResponse) and response.items is None:
        del data["items"]
    for n in data.get("notices", []):
        for key in ("engine", "count"):
            if n.get(key) is None:
                n.pop(key, None)
    if isinstance(response, ErrorResponse):
        data["error"]["detail"] = {
            k: v for k, v in data["error"]["detail"].items() if v is not None
        }
    return data


def to_json_text(structured: dict[str, Any]) -> str:
    """The JSON text rendering of a structured response (REQ-CTX-003): deterministic, compact."""
    return json.dumps(structured, ensure_ascii=False, separators=(",", ":"))
