"""The private protocol between the extractor and its worker processes.

Frames, in both directions over pipes:

* job (parent -> child): ``>II`` header (JSON length, body length), a JSON object, the body;
* reply (child -> parent): ``>IB`` header (payload length, flags), a payload (JSON or empty).

Flags: :data:`READY` (the worker is up and limited), :data:`FAILED` (the job raised), and
:data:`RETIRE` (the worker exits after this reply and must be replaced).

JSON, not pickle: nothing a worker returns can execute anything in the parent (REQ-SEC-020).
The payload of an extraction is :class:`WireResult` or :class:`WireFailure`; the parent validates
it with pydantic before any field is used, so a confused worker cannot forge a structure.
"""

from __future__ import annotations

import struct
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from rypsok.fetch.media import MediaKind
from rypsok.fetch.sections import MAX_SECTIONS

JOB_HEADER = struct.Struct(">II")
REPLY_HEADER = struct.Struct(">IB")
READY = 1
FAILED = 2
RETIRE = 4
MAX_JOB_JSON_BYTES = 64 * 1024
MAX_BODY_BYTES = 64 * 1024 * 1024
# The content is bounded to MAX_CONTENT_CHARS; JSON needs at most 6 bytes per character
# (\uXXXX), plus sections and items that are bounded by the same text.
MAX_CONTENT_CHARS = 4 * 1024 * 1024
MAX_REPLY_BYTES = 8 * MAX_CONTENT_CHARS


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class WireSection(_Strict):
    """A section as the worker computed it."""

    heading: str = Field(max_length=500)
    level: int = Field(ge=1, le=6)
    start_char: int = Field(ge=0)
    body_start: int = Field(ge=0)
    end_char: int = Field(ge=0)
    anchors: list[str] = Field(max_length=4)
    slug: str
    toc: bool


class WireItem(_Strict):
    """A feed item."""

    title: str
    link: str | None = Field(default=None, max_length=2048)
    summary: str
    date: str | None = Field(default=None, max_length=64)


class WireSignals(_Strict):
    """The bounded booleans of :class:`rypsok.fetch.access.AccessSignals`."""

    password_control: bool
    identity_form: bool
    form_in_main: bool
    usable_content: bool


class WireResult(_Strict):
    """A successful extraction."""

    status: Literal["ok"]
    media_type: str = Field(max_length=129)
    kind: MediaKind = Field(strict=False)
    title: str | None = Field(max_length=200)
    title_truncated: bool
    content: str = Field(max_length=MAX_CONTENT_CHARS)
    sections: list[WireSection] = Field(max_length=MAX_SECTIONS)
    heading_ids: list[tuple[str, list[str]]] = Field(max_length=2000)  # keys of <= 500 chars
    items: list[WireItem] | None = Field(max_length=100)
    items_total: int = Field(ge=0)
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    charset: str = Field(max_length=40)
    partial: bool
    charset_replaced: bool
    signals: WireSignals | None
    method: str = Field(max_length=20)
    javascript_may_be_required: bool = False


class WireFailure(_Strict):
    """A refused or failed extraction, in rypsok's vocabulary only."""

    status: Literal["error"]
    reason: Literal["media_type", "extraction_failed", "javascript_required"]
    media_type: str | None = Field(default=None, max_length=129)


_REPLY: TypeAdapter[WireResult | WireFailure] = TypeAdapter(
    Annotated[WireResult | WireFailure, Field(discriminator="status")]
)


def job_head(header_json: bytes, body_size: int) -> bytes:
    """The start of a job frame: its header and JSON object; the body follows as it is."""
    return JOB_HEADER.pack(len(header_json), body_size) + header_json


def reply_frame(flags: int, payload: bytes) -> bytes:
    """One reply frame."""
    return REPLY_HEADER.pack(len(payload), flags) + payload


def encode_reply(reply: WireResult | WireFailure) -> bytes:
    """A reply as the JSON payload of its frame (bytes directly, no intermediate str)."""
    return _REPLY.dump_json(reply)


def decode_reply(payload: bytes | bytearray) -> WireResult | WireFailure:
    """Validate a worker's JSON payload (run it off the event loop: it is linear in size)."""
    return _REPLY.validate_json(payload)
