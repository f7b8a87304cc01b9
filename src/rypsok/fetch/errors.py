"""The errors of the post-retrieval fetch stages and their mapping to tool errors.

Every error here carries rypsok's own words only: a page's text never reaches a message
(REQ-SEC-001, REQ-ERR-004). The only external value is ``media_type``, an external identifier
that :func:`rypsok.fetch.media.valid_media_type` checked syntactically (REQ-SEC-001).
"""

from __future__ import annotations

from rypsok.contract.errors import ErrorDetail, ToolFailure
from rypsok.contract.vocabulary import ErrorKind, Reason

_MESSAGES: dict[Reason, str] = {
    Reason.MEDIA_TYPE: (
        "The media type of the response cannot be extracted; web_fetch reads HTML, XHTML, "
        "plain text, Markdown, RSS 2.0 and Atom. Fetch a page of one of those types."
    ),
    Reason.EXTRACTION_FAILED: (
        "No content could be extracted from the page within the parsing bounds. "
        "Another URL may help; the same URL will not."
    ),
    Reason.JAVASCRIPT_REQUIRED: (
        "The page has no text of its own, only scripts: its content is built in the browser, "
        "and web_fetch runs no scripts. The same URL will not work; look for the content at "
        "another URL."
    ),
    Reason.INTERNAL: ("The content extraction workers are unavailable at the moment; retry later."),
    Reason.TIMEOUT: (
        "The page could not be read within the call's time limit; retry later, or fetch fewer "
        "pages at once."
    ),
    Reason.CAPACITY: (
        "All content extraction workers are busy with pages queued before this one, which "
        "would not be read within the call's time limit. Retry after detail.retry_after_ms, or "
        "fetch fewer pages at once."
    ),
    Reason.START_CHAR_BEYOND_END: (
        "start_char is at or beyond the end of the extracted content ({total} characters); "
        "use a start_char below {total}."
    ),
}


class ExtractionError(Exception):
    """A fetch ended after the bytes arrived: unsupported media type or nothing extractable.

    ``reason`` is :attr:`Reason.MEDIA_TYPE` (``media_type`` names the type when it is a
    syntactically valid media type), :attr:`Reason.EXTRACTION_FAILED`,
    :attr:`Reason.JAVASCRIPT_REQUIRED` when a page without text of its own has scripts,
    :attr:`Reason.CAPACITY` when the page would have waited for a worker beyond the call's time
    (``retry_after_ms`` says when the queue should be through), :attr:`Reason.TIMEOUT` when the
    call's time ran out while the page was being read, or :attr:`Reason.INTERNAL` when no
    worker could be started.
    """

    def __init__(
        self, reason: Reason, *, media_type: str | None = None, retry_after_ms: int | None = None
    ) -> None:
        super().__init__(reason.value)
        self.reason = reason
        self.media_type = media_type
        self.retry_after_ms = retry_after_ms

    @property
    def kind(self) -> ErrorKind:
        """The error kind the service reports."""
        if self.reason in (Reason.INTERNAL, Reason.CAPACITY, Reason.TIMEOUT):
            return ErrorKind.UNAVAILABLE
        return ErrorKind.UNSUPPORTED_CONTENT

    def to_tool_failure(self) -> ToolFailure:
        """The tool error of this failure (REQ-FETCH-008, REQ-PAGE-006, REQ-SEC-012)."""
        detail = None
        if self.media_type:
            detail = ErrorDetail(media_type=self.media_type)
        elif self.retry_after_ms is not None:
            detail = ErrorDetail(retry_after_ms=self.retry_after_ms)
        return ToolFailure(self.kind, self.reason, _MESSAGES[self.reason], detail)


class StartCharBeyondEnd(Exception):
    """start_char is at or beyond the end of the content (REQ-FETCH-005)."""

    def __init__(self, total_chars: int) -> None:
        super().__init__(f"start_char beyond {total_chars}")
        self.total_chars = total_chars

    def to_tool_failure(self) -> ToolFailure:
        """``invalid_request`` / ``start_char_beyond_end`` stating the content length."""
        message = _MESSAGES[Reason.START_CHAR_BEYOND_END].format(total=self.total_chars)
        return ToolFailure(
            ErrorKind.INVALID_REQUEST,
            Reason.START_CHAR_BEYOND_END,
            message,
            ErrorDetail(parameter="start_char", total_chars=self.total_chars),
        )
