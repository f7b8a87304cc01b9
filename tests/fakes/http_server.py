"""A scriptable HTTP/1.1 server on loopback, for simulated engines and sites.

Runs its own event loop in a thread, so any test (sync or async) can use it. Each path is
answered by a :class:`Reply`: status, headers, body, an optional delay before answering and an
optional trickle. Every request is recorded (method, path, headers) for assertions.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from urllib.parse import urlsplit


@dataclass(frozen=True)
class Reply:
    """How to answer one path."""

    status: int = 200
    body: bytes = b""
    headers: tuple[tuple[str, str], ...] = (("Content-Type", "application/json"),)
    delay_s: float = 0.0
    hang: bool = False  # never answer


@dataclass
class Seen:
    """One request the server received."""

    method: str
    target: str
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def path(self) -> str:
        return urlsplit(self.target).path


class FakeHTTPServer:
    """HTTP server on 127.0.0.1 answering from a table of replies keyed by path."""

    def __init__(self) -> None:
        self.replies: dict[str, Reply] = {}
        self.requests: list[Seen] = []
        self.closed_hanging = 0  # hanging requests whose client closed the connection
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._server: asyncio.Server | None = None

    def url(self, path: str) -> str:
        """An http URL of this server."""
        return f"http://127.0.0.1:{self.port}{path}"

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._server = self._loop.run_until_complete(
            asyncio.start_server(self._handle, "127.0.0.1", 0)
        )
        self.port = self._server.sockets[0].getsockname()[1]
        self._ready.set()
        self._loop.run_forever()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                line = await reader.readline()
                if not line:
                    return
                method, target, _ = line.decode("latin-1").split(" ", 2)
                headers: dict[str, str] = {}
                while True:
                    raw = await reader.readline()
                    if raw in (b"\r\n", b"\n", b""):
                        break
                    name, _, value = raw.decode("latin-1").partition(":")
                    headers[name.strip().lower()] = value.strip()
                length = int(headers.get("content-length", "0") or 0)
                if length:
                    await reader.readexactly(length)
                self.requests.append(Seen(method, target, headers))
                reply = self.replies.get(urlsplit(target).path, Reply(status=404, body=b"{}"))
                if reply.hang:
                    # Wait for the client to give up, and record when it did.
                    await reader.read()
                    self.closed_hanging += 1
                    return
                if reply.delay_s:
                    await asyncio.sleep(reply.delay_s)
                head = [f"HTTP/1.1 {reply.status} X"]
                head += [f"{k}: {v}" for k, v in reply.headers]
                head.append(f"Content-Length: {len(reply.body)}")
                writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + reply.body)
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError, ValueError):
            return
        finally:
            writer.close()

    def start(self) -> FakeHTTPServer:
        self._thread.start()
        self._ready.wait(10)
        return self

    def stop(self) -> None:
        async def shutdown() -> None:
            if self._server is not None:
                self._server.close()
            current = asyncio.current_task()
            handlers = [t for t in asyncio.all_tasks() if t is not current]
            for task in handlers:
                task.cancel()
            await asyncio.gather(*handlers, return_exceptions=True)

        asyncio.run_coroutine_threadsafe(shutdown(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()


@contextmanager
def fake_http_server() -> Iterator[FakeHTTPServer]:
    """A running :class:`FakeHTTPServer` for the duration of the block."""
    server = FakeHTTPServer().start()
    try:
        yield server
    finally:
        server.stop()
