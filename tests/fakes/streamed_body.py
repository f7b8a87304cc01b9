"""A handler streaming a large body, for the threaded loopback server of ``tests.egress``.

Serves with :func:`tests.egress._support.serving`: it answers one request with a 200 whose
body is ``prefix`` then ``block`` repeated up to ``size`` bytes in all, never held whole. It
records how many body bytes it managed to send and whether the client closed the connection
before the end, so a test can show that a bounded read stopped early on the wire too.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tests.egress._support import Conn


class StreamedBody:
    """A handler answering with ``size`` bytes of body: ``prefix``, then ``block`` repeated.

    ``sent`` counts the body bytes sent, ``left_early`` is True when the client closed the
    connection before the end, and ``done`` is set when the handler has finished.
    """

    def __init__(
        self,
        size: int,
        headers: Sequence[tuple[str, str]],
        *,
        block: bytes = b"x" * 65536,
        prefix: bytes = b"",
    ) -> None:
        self.size = size
        self.headers = list(headers)
        self.block = block
        self.prefix = prefix
        self.sent = 0
        self.left_early = False
        self.done = threading.Event()

    def __call__(self, conn: Conn) -> None:
        try:
            if conn.read_request() is not None:
                self.stream(conn)
        finally:
            self.done.set()

    def stream(self, conn: Conn) -> None:
        """Send the response to a request already read from ``conn``."""
        try:
            head = "HTTP/1.1 200 OK\r\n" + "".join(f"{k}: {v}\r\n" for k, v in self.headers)
            if not conn.send((head + "\r\n").encode() + self.prefix):
                return
            self.sent = len(self.prefix)
            while self.sent < self.size:
                piece = self.block[: self.size - self.sent]
                if not conn.send(piece):
                    self.left_early = True
                    return
                self.sent += len(piece)
        finally:
            self.done.set()
