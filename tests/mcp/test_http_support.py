"""Helpers for the HTTP service tests: the real ``rypsok serve --transport http`` process,
a simulated engine that notices when rypsok closes its connection, and MCP clients.

No tests here; the module is named like the tests it serves so that it stays in their files.
Only loopback traffic: rypsok listens on 127.0.0.1 with port 0 and reports the port it got in
its "listening" log line; the engines are explicit loopback endpoints.
"""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import httpx2
from mcp.client.streamable_http import streamable_http_client

from mcp import Client
from rypsok.engines.registry import DRIVER_MODULES
from tests.support import server_env

FIXTURES = Path(__file__).resolve().parents[1] / "engines" / "fixtures"
WIKIPEDIA_PATH = "/wp/{language}/api.php"
START_TIMEOUT_S = 30
# Generous bound for "it ended": interpreter start-up and a loaded CI machine are not LIM-O1.
EXIT_GRACE_S = 10
MODERN = "2026-07-28"
LEGACY = "2025-11-25"
ACCEPT = "application/json, text/event-stream"


def http_config(
    tmp_path: Path,
    *,
    http: str = "",
    engine_url: str | None = None,
    extra: str = "",
) -> Path:
    """A configuration: port 0 on loopback, every engine off but an optional Wikipedia."""
    lines = ["schema_version = 1", "[http]", "port = 0", http.strip()]
    for engine in DRIVER_MODULES:
        if engine == "wikipedia" and engine_url is not None:
            continue
        lines += [f"[engines.{engine}]", "enabled = false"]
    if engine_url is not None:
        lines += ["[engines.wikipedia]", "enabled = true", f'endpoint = "{engine_url}"']
    lines.append(extra.strip())
    path = tmp_path / "rypsok.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


class RypsokHTTP:
    """A running ``rypsok serve --transport http`` process; its stderr is collected."""

    def __init__(self, config: Path, env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "rypsok",
                "serve",
                "--transport",
                "http",
                "--config",
                str(config),
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=server_env(env),
        )
        self.lines: list[str] = []
        self._listening = threading.Event()
        self.port = 0
        self.metrics_port: int | None = None
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for raw in self.proc.stderr:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            self.lines.append(line)
            event = self._event(line)
            if event.get("event") == "listening":
                self.port = int(event["port"])
                self.metrics_port = event.get("metrics_port")
                self._listening.set()

    @staticmethod
    def _event(line: str) -> dict[str, Any]:
        try:
            value = json.loads(line)
        except ValueError:
            return {}
        return value if isinstance(value, dict) else {}

    def events(self, name: str) -> list[dict[str, Any]]:
        """Every log event of this name so far."""
        return [e for e in map(self._event, list(self.lines)) if e.get("event") == name]

    def wait_listening(self) -> RypsokHTTP:
        """Block until the process listens; fails with its stderr if it exits instead."""
        deadline = time.monotonic() + START_TIMEOUT_S
        while not self._listening.wait(0.1):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self._reader.join(2)
                raise AssertionError("rypsok did not listen:\n" + "\n".join(self.lines))
        return self

    @property
    def base(self) -> str:
        """``http://127.0.0.1:<port>``."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        """The MCP endpoint."""
        return self.base + "/mcp"

    def stop(self, sig: int = signal.SIGTERM) -> int:
        """Signal the process and wait for its exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(EXIT_GRACE_S)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait(5)
            self._reader.join(5)

    def stderr_text(self) -> str:
        """Everything the process wrote to stderr so far."""
        return "\n".join(self.lines)


@contextmanager
def rypsok_http(config: Path, env: dict[str, str] | None = None) -> Iterator[RypsokHTTP]:
    """A listening rypsok HTTP process for the duration of the block."""
    server = RypsokHTTP(config, env)
    try:
        yield server.wait_listening()
    finally:
        server.stop()


def run_to_exit(
    config: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``rypsok serve --transport http`` expecting it to exit at start."""
    return subprocess.run(
        [sys.executable, "-m", "rypsok", "serve", "--transport", "http", "--config", str(config)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=server_env(env),
        timeout=60,
        check=False,
    )


@asynccontextmanager
async def mcp_client(url: str, *, mode: Any, token: str | None = None) -> AsyncIterator[Client]:
    """An SDK client over Streamable HTTP, carrying a bearer token if given."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    timeout = httpx2.Timeout(30, read=60)
    async with (
        httpx2.AsyncClient(headers=headers, timeout=timeout) as http,
        Client(streamable_http_client(url, http_client=http), mode=mode) as client,
    ):
        yield client


def modern_headers(
    method: str, name: str | None = None, token: str | None = None
) -> dict[str, str]:
    """Headers of a raw 2026-07-28 POST."""
    headers = {
        "Content-Type": "application/json",
        "Accept": ACCEPT,
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": method,
    }
    if name is not None:
        headers["Mcp-Name"] = name
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    return headers


def modern_body(method: str, params: dict[str, Any] | None = None, request_id: int = 1) -> str:
    """A raw 2026-07-28 request with its ``_meta`` envelope."""
    envelope = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw-test", "version": "0"},
    }
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": method,
            "params": {**(params or {}), "_meta": envelope},
        }
    )


def search_params(query: str = "relativity") -> dict[str, Any]:
    """tools/call parameters of a web_search."""
    return {"name": "web_search", "arguments": {"query": query}}


INITIALIZE = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": LEGACY,
            "capabilities": {},
            "clientInfo": {"name": "raw-test", "version": "0"},
        },
    }
)


def legacy_headers(session: str | None = None, token: str | None = None) -> dict[str, str]:
    """Headers of a raw handshake-era POST."""
    headers = {"Content-Type": "application/json", "Accept": ACCEPT}
    if session is not None:
        headers["Mcp-Session-Id"] = session
        headers["MCP-Protocol-Version"] = LEGACY
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    return headers


def open_session(client: httpx2.Client, url: str, token: str | None = None) -> httpx2.Response:
    """A raw handshake: initialize, then notifications/initialized when a session opened."""
    response = client.post(url, content=INITIALIZE, headers=legacy_headers(token=token))
    session = response.headers.get("mcp-session-id")
    if response.status_code == 200 and session:
        note = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})
        done = client.post(url, content=note, headers=legacy_headers(session, token))
        assert done.status_code == 202, done.text
    return response


class Engine:
    """A simulated Wikipedia on loopback: answers from the fixture, or hangs and records when
    rypsok closes the connection (the request was aborted).

    Runs its own event loop in a thread, so sync and async tests can use it alike.
    """

    def __init__(self, *, hang: bool) -> None:
        self.hang = hang
        self.body = (FIXTURES / "wikipedia" / "success.json").read_bytes()
        self.requests = 0
        self.received = threading.Event()
        self.closed = threading.Event()
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._server: asyncio.Server | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)

    @property
    def endpoint(self) -> str:
        """The endpoint to configure for ``[engines.wikipedia]``."""
        return f"http://127.0.0.1:{self.port}{WIKIPEDIA_PATH}"

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
                while (await reader.readline()) not in (b"\r\n", b"\n", b""):
                    pass
                self.requests += 1
                self.received.set()
                if self.hang:
                    # Read until the peer closes: that is the abort this engine reports.
                    while await reader.read(4096):
                        pass
                    self.closed.set()
                    return
                head = (
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    f"Content-Length: {len(self.body)}\r\n\r\n"
                )
                writer.write(head.encode() + self.body)
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            self.closed.set()
        finally:
            writer.close()

    def reset(self) -> None:
        """Forget earlier requests (between tests sharing one engine)."""
        self.requests = 0
        self.received.clear()
        self.closed.clear()

    def start(self) -> Engine:
        """Start listening."""
        self._thread.start()
        self._ready.wait(10)
        return self

    def stop(self) -> None:
        """Stop the server and its loop."""

        async def shutdown() -> None:
            if self._server is not None:
                self._server.close()
            current = asyncio.current_task()
            tasks = [t for t in asyncio.all_tasks() if t is not current]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        asyncio.run_coroutine_threadsafe(shutdown(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()


@contextmanager
def engine(*, hang: bool = False) -> Iterator[Engine]:
    """A running :class:`Engine` for the duration of the block."""
    server = Engine(hang=hang).start()
    try:
        yield server
    finally:
        server.stop()


# A search deadline far beyond the tests' waits, so that a closed engine connection can only
# come from cancellation or shutdown, never from rypsok's own engine timeout.
LONG_SEARCH = """
[search]
engine_timeout_ms = 60000
reserve_ms = 500
deadline_ms = 61000
ceiling_ms = 62000
"""
