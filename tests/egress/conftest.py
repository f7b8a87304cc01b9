"""Fixtures of the egress tests: anyio, trustme TLS, local DNS and a loopback-only guard."""

from __future__ import annotations

import ipaddress
import ssl
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import Any

import anyio
import httpcore2
import pytest
import trustme

from rypsok.config.schema import Settings
from rypsok.egress import Egress

from ._support import USER_AGENT, DNSServer, make_settings, static_zone


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def loopback_only(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every TCP connection and every system lookup of a test stays on this machine.

    A safety net under the tests, not part of what they check: if the policy under test had
    a hole, the test fails here instead of sending traffic elsewhere. Returns the list of
    addresses connected to.
    """
    connected: list[str] = []
    original_connect = httpcore2.AnyIOBackend.connect_tcp

    async def guarded_connect(
        self: httpcore2.AnyIOBackend, host: str, port: int, **kwargs: Any
    ) -> httpcore2.AsyncNetworkStream:
        if not ipaddress.ip_address(host).is_loopback:
            raise AssertionError(f"a test tried to connect to {host}")
        connected.append(host)
        return await original_connect(self, host, port, **kwargs)

    original_lookup = anyio.getaddrinfo

    async def guarded_lookup(host: bytes | str | None, *args: Any, **kwargs: Any) -> Any:
        name = host.decode() if isinstance(host, bytes) else str(host)
        if name not in ("localhost", "127.0.0.1", "::1"):
            raise AssertionError(f"a test asked the system resolver for {name}")
        return await original_lookup(host, *args, **kwargs)

    monkeypatch.setattr(httpcore2.AnyIOBackend, "connect_tcp", guarded_connect)
    monkeypatch.setattr(anyio, "getaddrinfo", guarded_lookup)
    return connected


@pytest.fixture(scope="session")
def ca() -> trustme.CA:
    return trustme.CA()


@pytest.fixture
def client_tls(ca: trustme.CA) -> ssl.SSLContext:
    """A verifying client context that trusts only the test CA."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ca.configure_trust(context)
    return context


@pytest.fixture
def server_tls(ca: trustme.CA) -> Callable[..., ssl.SSLContext]:
    """A server context with a certificate for the given names."""

    def make(*names: str) -> ssl.SSLContext:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ca.issue_cert(*names).configure_cert(context)
        return context

    return make


@pytest.fixture
def dns_zone() -> Iterator[Callable[[dict[str, list[str]]], DNSServer]]:
    """Start local DNS servers answering from a fixed zone."""
    servers: list[DNSServer] = []

    def start(zone: dict[str, list[str]]) -> DNSServer:
        server = DNSServer(static_zone(zone)).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


@pytest.fixture
def dns_server() -> Iterator[Callable[..., DNSServer]]:
    """Start local DNS servers answering from a function."""
    servers: list[DNSServer] = []

    def start(answer: Any) -> DNSServer:
        server = DNSServer(answer).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


MakeEgress = Callable[..., Egress]


@pytest.fixture
async def make_egress(client_tls: ssl.SSLContext) -> AsyncIterator[MakeEgress]:
    """Build an Egress with the production policy plus allow rules injected in code."""
    created: list[Egress] = []

    def make(
        settings: Settings | None = None,
        *,
        allow: Sequence[str] = ("127.0.0.1",),
        tls: ssl.SSLContext | None = None,
    ) -> Egress:
        egress = Egress(
            settings or make_settings(),
            USER_AGENT,
            extra_allow=allow,
            ssl_context=tls or client_tls,
        )
        created.append(egress)
        return egress

    yield make
    for egress in created:
        await egress.aclose()
