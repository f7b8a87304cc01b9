"""Fixtures of the egress tests: anyio, trustme TLS, local DNS and a loopback-only guard."""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import Any

import pytest
import trustme

from rypsok.config.schema import Settings
from rypsok.egress import Egress
from tests.fakes.loopback_guard import guard_loopback

from ._support import USER_AGENT, DNSServer, make_settings, static_zone


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def loopback_only(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every TCP connection and every system lookup of a test stays on this machine
    (tests/fakes/loopback_guard.py). Returns the list of addresses connected to."""
    return guard_loopback(monkeypatch)


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
