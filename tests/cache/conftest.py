"""Fixtures of the cache tests: anyio on asyncio, and real redis-server processes on loopback.

No Redis is mocked. A session server serves most tests (flushed before each); a test that stops
Redis mid-run starts its own. Without the ``redis-server`` binary those tests are skipped with
the install line; CI installs it.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

REDIS_BINARY = shutil.which("redis-server")
SKIP_REASON = (
    "redis-server is not installed (apt-get install -y redis-server); "
    "the tests of the Redis backend and of shared limits need a real one"
)


@pytest.fixture
def anyio_backend() -> str:
    """Run async tests on asyncio, the loop rypsok serves on."""
    return "asyncio"


def free_port() -> int:
    """A TCP port on loopback that was free a moment ago."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class RedisServer:
    """A redis-server child on loopback: no persistence, its own directory, stoppable."""

    def __init__(self, binary: str, directory: Path) -> None:
        self._binary = binary
        self._directory = directory
        self.port = 0
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """The redis:// URL of database 0."""
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
        """Start on a free port; a port taken in the meantime is retried with another."""
        for _ in range(5):
            self.port = free_port()
            if self._launch():
                return self
        raise RuntimeError("redis-server did not start")

    def restart(self) -> None:
        """Start again on the same port, as after an outage."""
        if not self._launch():
            raise RuntimeError("redis-server did not restart on its port")

    def _launch(self) -> bool:
        self._process = subprocess.Popen(
            [
                self._binary,
                "--bind", "127.0.0.1",
                "--port", str(self.port),
                "--save", "",
                "--appendonly", "no",
                "--dir", str(self._directory),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        if self._wait_ready():
            return True
        self.stop()
        return False

    def _wait_ready(self) -> bool:
        deadline = time.monotonic() + 10
        client = redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=1)
        try:
            while time.monotonic() < deadline:
                if self._process is not None and self._process.poll() is not None:
                    return False
                try:
                    if client.ping():
                        return True
                except redis.RedisError:
                    time.sleep(0.05)
            return False
        finally:
            client.close()

    def stop(self) -> None:
        """Stop the server and wait for it."""
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait(10)
        self._process = None

    def flush(self) -> None:
        """Empty every database."""
        client = redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=2)
        try:
            client.flushall()
        finally:
            client.close()

    def client(self) -> redis.Redis:
        """A synchronous client, for tests that look at what is stored."""
        return redis.Redis(
            host="127.0.0.1", port=self.port, socket_timeout=2, decode_responses=True
        )


@pytest.fixture(scope="session")
def redis_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """One redis-server for the session."""
    if REDIS_BINARY is None:
        pytest.skip(SKIP_REASON)
    server = RedisServer(REDIS_BINARY, tmp_path_factory.mktemp("redis")).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def redis_server(redis_session: RedisServer) -> RedisServer:
    """The session server, emptied for this test."""
    redis_session.flush()
    return redis_session


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[RedisServer]:
    """A redis-server of this test alone, which the test may stop."""
    if REDIS_BINARY is None:
        pytest.skip(SKIP_REASON)
    server = RedisServer(REDIS_BINARY, tmp_path).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def closed_port() -> int:
    """A loopback port nothing listens on: connections are refused."""
    return free_port()
