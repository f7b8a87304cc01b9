"""Local servers for the egress tests: threaded HTTP(S) on loopback and a UDP DNS server.

Everything binds to 127.0.0.0/8 or ::1; nothing here talks to any other address.
"""

from __future__ import annotations

import contextlib
import socket
import ssl
import threading
import zlib
from collections.abc import Callable, Coroutine, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.to_thread
import dns.message
import dns.name
import dns.rcode
import dns.rdatatype
import dns.rrset

from rypsok.config.schema import EgressSettings, FetchSettings, Settings

USER_AGENT = "rypsok-test/0.1 (+https://example.org/contact)"


def make_settings(
    *,
    dns_server: str | None = None,
    ports: Iterable[int] = (),
    allow: Iterable[str] = (),
    deny: Iterable[str] = (),
) -> Settings:
    """Settings with the given operator rules, DNS server and extra fetch ports."""
    return Settings(
        egress=EgressSettings(
            allow=list(allow),
            deny=list(deny),
            dns_servers=[dns_server] if dns_server else [],
        ),
        fetch=FetchSettings(ports=list(ports)),
    )


# --- HTTP ---------------------------------------------------------------------------------


@dataclass
class Received:
    """One request as the server read it."""

    method: str
    target: str
    version: str
    headers: list[tuple[str, str]]
    body: bytes

    def header(self, name: str) -> str | None:
        """The first value of a header, by case-insensitive name."""
        return next((v for k, v in self.headers if k.lower() == name.lower()), None)

    @property
    def names(self) -> list[str]:
        """The header names in order, lower case."""
        return [k.lower() for k, _ in self.headers]


class Conn:
    """The server side of one accepted connection."""

    def __init__(self, sock: socket.socket, server: HTTPServer) -> None:
        self.sock = sock
        self.server = server
        self._buffer = b""

    def _fill(self) -> bool:
        try:
            data = self.sock.recv(65536)
        except (OSError, ValueError):
            return False
        if not data:
            return False
        self._buffer += data
        return True

    def read_request(self) -> Received | None:
        """Read one request; None when the client closed first."""
        while b"\r\n\r\n" not in self._buffer:
            if not self._fill():
                return None
        head, self._buffer = self._buffer.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        method, target, version = lines[0].split(" ", 2)
        headers = []
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers.append((name.strip(), value.strip()))
        request = Received(method, target, version, headers, b"")
        length = int(request.header("content-length") or 0)
        while len(self._buffer) < length:
            if not self._fill():
                return None
        request.body, self._buffer = self._buffer[:length], self._buffer[length:]
        with self.server.lock:
            self.server.received.append(request)
        return request

    def send(self, data: bytes) -> bool:
        """Send bytes; False when the client has gone."""
        try:
            self.sock.sendall(data)
        except (OSError, ValueError):
            return False
        return True

    def respond(
        self,
        status: int = 200,
        headers: Iterable[tuple[str, str]] = (("Content-Type", "text/plain"),),
        body: bytes = b"",
        *,
        content_length: bool = True,
    ) -> bool:
        """Send a whole response."""
        head = [f"HTTP/1.1 {status} X"]
        head += [f"{k}: {v}" for k, v in headers]
        if content_length:
            head.append(f"Content-Length: {len(body)}")
        return self.send(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body)

    def wait_closed(self, timeout_s: float) -> bool:
        """Block until the client closes the connection (True) or the timeout passes."""
        self.sock.settimeout(timeout_s)
        try:
            while True:
                data = self.sock.recv(65536)
                if not data:
                    return True
        except TimeoutError:
            return False
        except (OSError, ValueError):
            return True


Handler = Callable[[Conn], None]


def respond_each(
    status: int = 200,
    headers: Iterable[tuple[str, str]] = (("Content-Type", "text/plain"),),
    body: bytes = b"hello",
) -> Handler:
    """A keep-alive handler that answers every request with the same response."""
    fixed_headers = tuple(headers)

    def handler(conn: Conn) -> None:
        while conn.read_request() is not None:
            if not conn.respond(status, fixed_headers, body):
                return

    return handler


async def at_once(
    count: int, call: Callable[..., Coroutine[Any, Any, object]], *args: object
) -> None:
    """Run ``count`` calls of ``call(*args)`` concurrently and wait for all of them."""
    async with anyio.create_task_group() as group:
        for _ in range(count):
            group.start_soon(call, *args)


class OpenConnections:
    """A keep-alive handler that counts the connections open now and at most, and holds each
    answer until ``together`` requests wait for theirs (or ``hold_s`` passed: the barrier is
    then broken and every later answer goes at once)."""

    def __init__(self, together: int, hold_s: float) -> None:
        self.lock = threading.Lock()
        self.open = 0
        self.most = 0
        self._barrier = threading.Barrier(together)
        self._hold_s = hold_s

    def __call__(self, conn: Conn) -> None:
        with self.lock:
            self.open += 1
            self.most = max(self.most, self.open)
        try:
            while conn.read_request() is not None:
                with contextlib.suppress(threading.BrokenBarrierError):
                    self._barrier.wait(self._hold_s)
                if not conn.respond(body=b"{}"):
                    return
        finally:
            with self.lock:
                self.open -= 1


class HTTPServer:
    """A threaded HTTP/1.1 server on a loopback address, optionally with TLS."""

    def __init__(
        self,
        handler: Handler,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self.handler = handler
        self.tls = tls
        self.lock = threading.Lock()
        self.received: list[Received] = []
        self.sni: list[str | None] = []
        self.connections = 0
        self.closed = threading.Event()  # set when a handler saw its client go away
        self._stop = threading.Event()
        self._sockets: list[socket.socket] = []
        self._threads: list[threading.Thread] = []
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self._listener = socket.socket(family, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind((host, port))
        self._listener.listen(64)
        self._listener.settimeout(0.1)
        self.host = host
        self.port: int = self._listener.getsockname()[1]
        if tls is not None:
            tls.sni_callback = self._record_sni

    def _record_sni(self, _obj: ssl.SSLObject, name: str | None, _ctx: ssl.SSLContext) -> None:
        with self.lock:
            self.sni.append(name)

    def start(self) -> HTTPServer:
        thread = threading.Thread(target=self._accept_loop, daemon=True)
        thread.start()
        self._threads.append(thread)
        return self

    def _accept_loop(self) -> None:
        while not self._stop.is_set():
            try:
                sock, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with self.lock:
                self.connections += 1
                self._sockets.append(sock)
            thread = threading.Thread(target=self._serve, args=(sock,), daemon=True)
            thread.start()
            self._threads.append(thread)

    def _serve(self, sock: socket.socket) -> None:
        sock.settimeout(30)
        try:
            if self.tls is not None:
                try:
                    sock = self.tls.wrap_socket(sock, server_side=True)
                except (OSError, ssl.SSLError):
                    return
                with self.lock:
                    self._sockets.append(sock)
            self.handler(Conn(sock, self))
        except (OSError, ssl.SSLError, ValueError):
            pass
        finally:
            with contextlib.suppress(OSError):
                sock.close()

    def idle(self, seconds: float) -> bool:
        """Wait in a handler; True when the server is stopping (the handler should return)."""
        return self._stop.wait(seconds)

    @property
    def origin(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"

    def stop(self) -> None:
        self._stop.set()
        with contextlib.suppress(OSError):
            self._listener.close()
        with self.lock:
            sockets = list(self._sockets)
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(OSError):
                sock.close()
        for thread in self._threads:
            thread.join(timeout=5)


@contextlib.contextmanager
def serving(handler: Handler, **kwargs: object) -> Iterator[HTTPServer]:
    """Run an :class:`HTTPServer` for the duration of a with-block."""
    server = HTTPServer(handler, **kwargs).start()  # type: ignore[arg-type]
    try:
        yield server
    finally:
        server.stop()


async def wait_for(event: threading.Event, timeout_s: float) -> bool:
    """Wait for a server thread's event without blocking the event loop."""
    return await anyio.to_thread.run_sync(event.wait, timeout_s)


# --- DNS ----------------------------------------------------------------------------------

# answer(name, rdtype, n) -> addresses, "NXDOMAIN", "SERVFAIL" or None (no reply);
# n counts earlier queries of the same name and type.
Answer = Callable[[str, str, int], "list[str] | str | None"]


@dataclass
class DNSServer:
    """A UDP DNS server on 127.0.0.1 answering from a function; it records every question."""

    answer: Answer
    queries: list[tuple[str, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.settimeout(0.1)
        self.port: int = self._sock.getsockname()[1]
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def count(self, name: str, rdtype: str | None = None) -> int:
        """How many questions were asked about a name (and type)."""
        with self._lock:
            return sum(1 for n, t in self.queries if n == name and rdtype in (None, t))

    def start(self) -> DNSServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self._sock.close()

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                data, client = self._sock.recvfrom(4096)
            except TimeoutError:
                continue
            except OSError:
                return
            reply = self._reply(data)
            if reply is not None:
                with contextlib.suppress(OSError):
                    self._sock.sendto(reply, client)

    def _reply(self, data: bytes) -> bytes | None:
        query = dns.message.from_wire(data)
        question = query.question[0]
        name = question.name.to_text(omit_final_dot=True).lower()
        rdtype = dns.rdatatype.to_text(question.rdtype)
        with self._lock:
            n = sum(1 for q in self.queries if q == (name, rdtype))
            self.queries.append((name, rdtype))
        result = self.answer(name, rdtype, n)
        if result is None:
            return None
        response = dns.message.make_response(query)
        if result == "NXDOMAIN":
            response.set_rcode(dns.rcode.NXDOMAIN)
        elif result == "SERVFAIL":
            response.set_rcode(dns.rcode.SERVFAIL)
        else:
            family_v6 = rdtype == "AAAA"
            addresses = [a for a in result if (":" in a) == family_v6]
            if addresses:
                response.answer.append(
                    dns.rrset.from_text_list(question.name, 60, "IN", rdtype, addresses)
                )
        wire: bytes = response.to_wire()
        return wire


def static_zone(zone: dict[str, list[str]]) -> Answer:
    """Answer from a fixed zone; names not in it are NXDOMAIN."""

    def answer(name: str, _rdtype: str, _n: int) -> list[str] | str | None:
        return zone.get(name, "NXDOMAIN")

    return answer


# --- compression bombs ---------------------------------------------------------------------


def zero_bomb(wbits: int, mebibytes: int) -> bytes:
    """A stream that inflates to ``mebibytes`` MiB of zeros, built without inflating it.

    After a full flush the compressor starts afresh, so compressing the same MiB again gives
    the same bytes; the block is repeated. The stream has no end (no trailer): the decoder
    must stop at its bound long before.
    """
    zeros = bytes(1 << 20)
    compressor = zlib.compressobj(9, zlib.DEFLATED, wbits)
    first = compressor.compress(zeros) + compressor.flush(zlib.Z_FULL_FLUSH)
    block = compressor.compress(zeros) + compressor.flush(zlib.Z_FULL_FLUSH)
    return first + block * (mebibytes - 1)
