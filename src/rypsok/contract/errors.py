"""Tool errors: a kind, a reason, a message that says what to change, and a fixed-key detail.

Raised anywhere in the core as :class:`ToolFailure`; the call runner turns it into the
error response of REQ-ERR-002/003. Messages are rypsok's text only (REQ-ERR-004).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from rypsok.contract.vocabulary import Access, ErrorKind, Reason

MESSAGE_MAX_CHARS = 300  # LIM-I4; the limits table checks this copy (tests/config/test_limits.py)


class ErrorDetail(BaseModel):
    """The detail object of an error: fixed keys, each present only when it applies."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    parameter: str | None = None
    valid_values: list[str] | None = None
    minimum: int | None = None
    maximum: int | None = None
    retry_after_ms: int | None = None
    status: int | None = None
    location: str | None = None
    media_type: str | None = None
    credential_kind: str | None = None
    position: int | None = None
    total_chars: int | None = None
    limit_bytes: int | None = None
    access: Access | None = None
    """``restricted`` on an HTTP error that is a direct access signal (401, an authentication
    challenge): the access dimension stays separate from the error (spec README section 4)."""


class ErrorBody(BaseModel):
    """The ``error`` object of an error response."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: ErrorKind
    reason: Reason
    message: str
    detail: ErrorDetail


class ToolFailure(Exception):
    """A call ends with an error of one kind; raised by the core, rendered by the runner."""

    def __init__(
        self, kind: ErrorKind, reason: Reason, message: str, detail: ErrorDetail | None = None
    ) -> None:
        if len(message) > MESSAGE_MAX_CHARS:
            raise ValueError("error messages are bounded by LIM-I4")
        super().__init__(message)
        self.body = ErrorBody(
            kind=kind, reason=reason, message=message, detail=detail or ErrorDetail()
        )

    @property
    def kind(self) -> ErrorKind:
        """The error kind."""
        return self.body.kind

    @property
    def reason(self) -> Reason:
        """The reason."""
        return self.body.reason


def invalid_argument(parameter: str, message: str, **detail: object) -> ToolFailure:
    """An ``invalid_request`` about one parameter (CLR-2, CLR-3)."""
    return ToolFailure(
        ErrorKind.INVALID_REQUEST,
        Reason.INVALID_ARGUMENT,
        message,
        ErrorDetail.model_validate({"parameter": parameter, **detail}),
    )
