"""A fetched body on its way to extraction, let go of as soon as a worker has it."""

from __future__ import annotations


class Body:
    """The bytes of one fetched body, held once.

    The retrieval hands a ``Body`` to the extractor; the worker pool calls :meth:`release`
    when the body has been written to a worker, so that a fetch does not keep its body (up to
    LIM-F3) while the worker reads it and the reply is decoded (REQ-PERF-003: a fetch in flight
    holds one body's worth, not a body and the extraction of it).
    """

    __slots__ = ("_data", "size")

    def __init__(self, data: bytes) -> None:
        self._data: bytes | None = data
        self.size = len(data)

    @property
    def data(self) -> bytes:
        """The bytes; raises RuntimeError once released."""
        if self._data is None:
            raise RuntimeError("the body was released")
        return self._data

    def release(self) -> None:
        """Drop the bytes (idempotent)."""
        self._data = None
