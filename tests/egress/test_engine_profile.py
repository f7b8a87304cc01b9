"""The engine profile (REQ-SEC-005, REQ-SEC-017, REQ-TEST-015).

Engine requests go only to the origin of the engine's endpoint, over https, to allowed
addresses, unless the operator configured the endpoint explicitly; credential headers never
reach another origin; no redirect is followed; proxy variables are ignored.
"""

from __future__ import annotations

import socket
import ssl
import threading
from collections.abc import Callable
from typing import Literal

import anyio
import pytest

from rypsok.egress import Egress, EgressError, EgressReason
from rypsok.egress.addresses import Category
from rypsok.engines.base import EngineRequest, EngineResponse

from ._support import Conn, DNSServer, make_settings, respond_each, serving, wait_for
from .conftest import MakeEgress

pytestmark = pytest.mark.anyio

KEY = ("X-Api-Key", "engine-secret")
GUARD_S = 30


async def send(
    egress: Egress,
    request: EngineRequest,
    endpoint: str,
    *,
    explicit: bool = False,
    max_bytes: int = 1 << 20,
    total_timeout_s: float = 10,
) -> EngineResponse:
    with anyio.fail_after(GUARD_S):
        return await egress.engine_request(
            request,
            endpoint=endpoint,
            explicit_endpoint=explicit,
            connect_timeout_s=2,
            total_timeout_s=total_timeout_s,
            max_bytes=max_bytes,
        )


async def refused(
    egress: Egress,
    request: EngineRequest,
    endpoint: str,
    *,
    explicit: bool = False,
    max_bytes: int = 1 << 20,
    total_timeout_s: float = 10,
) -> EgressError:
    with pytest.raises(EgressError) as caught:
        await send(
            egress,
            request,
            endpoint,
            explicit=explicit,
            max_bytes=max_bytes,
            total_timeout_s=total_timeout_s,
        )
    return caught.value


def keyed(
    url: str,
    *,
    method: Literal["GET", "POST"] = "GET",
    body: bytes | None = None,
    headers: tuple[tuple[str, str], ...] = (),
) -> EngineRequest:
    """A driver's request that carries a credential header."""
    return EngineRequest(
        method=method,
        url=url,
        headers=(("Accept", "application/json"), KEY, *headers),
        body=body,
        credential_headers=frozenset({"x-api-key"}),
    )


@pytest.fixture
def engine_dns(dns_zone: Callable[..., DNSServer]) -> DNSServer:
    return dns_zone(
        {"engine.test": ["127.0.0.1"], "other.test": ["127.0.0.1"], "searxng": ["127.0.0.1"]}
    )


@pytest.mark.req("REQ-SEC-017")
async def test_req_sec_017_engine_request_over_https(
    make_egress: MakeEgress,
    engine_dns: DNSServer,
    server_tls: Callable[..., ssl.SSLContext],
) -> None:
    """The driver's headers are sent after rypsok's own, to the endpoint's origin only."""
    with serving(respond_each(body=b'{"ok": 1}'), tls=server_tls("engine.test")) as engine:
        egress = make_egress(make_settings(dns_server=engine_dns.address))
        endpoint = f"https://engine.test:{engine.port}/api"
        response = await send(egress, keyed(f"{endpoint}?q=rypsok#frag"), endpoint)
    assert (response.status, response.body) == (200, b'{"ok": 1}')
    [request] = engine.received
    assert request.target == "/api?q=rypsok"
    assert request.names == [
        "host",
        "user-agent",
        "accept",
        "accept-encoding",
        "connection",
        "x-api-key",
    ]
    assert request.header("accept") == "application/json"
    assert request.header("x-api-key") == "engine-secret"
    assert engine.sni == ["engine.test"]


@pytest.mark.req("REQ-TEST-015")
async def test_req_test_015_engine_requests_use_https_unless_explicit(
    make_egress: MakeEgress, engine_dns: DNSServer
) -> None:
    """http, and a loopback address, are accepted only for an explicitly configured endpoint.

    Proves THR-11.
    """
    with serving(respond_each(body=b"plain")) as engine:
        egress = make_egress(make_settings(dns_server=engine_dns.address), allow=())
        endpoint = f"http://127.0.0.1:{engine.port}/search"
        request = EngineRequest("GET", endpoint + "?q=1")
        assert (await refused(egress, request, endpoint)).reason == EgressReason.SCHEME
        https_endpoint = f"https://127.0.0.1:{engine.port}/search"
        error = await refused(egress, EngineRequest("GET", https_endpoint), https_endpoint)
        assert (error.reason, error.category) == (EgressReason.ADDRESS_DENIED, Category.LOOPBACK)
        assert engine.connections == 0
        response = await send(egress, request, endpoint, explicit=True)
        assert response.body == b"plain"
        named = f"http://searxng:{engine.port}/search"  # a compose service name: one label
        response = await send(egress, EngineRequest("GET", named), named, explicit=True)
        assert response.body == b"plain"


@pytest.mark.req("REQ-SEC-017")
async def test_req_sec_017_explicit_endpoint_never_reaches_metadata(
    make_egress: MakeEgress,
) -> None:
    egress = make_egress(allow=())
    for endpoint, reason in (
        ("http://169.254.169.254/latest/", EgressReason.ADDRESS_DENIED),
        ("http://[::ffff:a9fe:a9fe]/", EgressReason.ADDRESS_DENIED),
        ("http://metadata.google.internal/", EgressReason.NAME_DENIED),
    ):
        error = await refused(egress, EngineRequest("GET", endpoint), endpoint, explicit=True)
        assert (error.reason, error.category) == (reason, Category.METADATA)


@pytest.mark.req("REQ-TEST-015")
async def test_req_test_015_credential_header_never_sent_to_another_origin(
    make_egress: MakeEgress,
    engine_dns: DNSServer,
    server_tls: Callable[..., ssl.SSLContext],
) -> None:
    """A request built for another origin (host, port or scheme) is refused before any byte
    is sent, so the credential header cannot leave the endpoint's origin (REQ-SEC-017).

    Proves THR-11.
    """
    with (
        serving(respond_each(), tls=server_tls("engine.test", "other.test")) as engine,
        serving(respond_each(), tls=server_tls("engine.test", "other.test")) as other,
    ):
        egress = make_egress(make_settings(dns_server=engine_dns.address))
        endpoint = f"https://engine.test:{engine.port}/api"
        for url in (
            f"https://other.test:{other.port}/steal",
            f"https://engine.test:{other.port}/api",
            f"https://other.test:{engine.port}/api",
            f"http://engine.test:{engine.port}/api",
        ):
            error = await refused(egress, keyed(url), endpoint, explicit=True)
            assert error.reason == EgressReason.ORIGIN_MISMATCH
    assert engine.connections == 0 and other.connections == 0
    assert engine_dns.queries == []


@pytest.mark.req("REQ-SEC-017")
async def test_req_sec_017_redirect_returned_not_followed(
    make_egress: MakeEgress, engine_dns: DNSServer
) -> None:
    """A 3xx is handed back as it came; the credential went to the endpoint only.

    Proves THR-11.
    """
    with serving(respond_each()) as other:
        target = f"http://other.test:{other.port}/collect"
        redirect = respond_each(302, [("Location", target)], b"")
        with serving(redirect) as engine:
            egress = make_egress(make_settings(dns_server=engine_dns.address))
            endpoint = f"http://engine.test:{engine.port}/api"
            response = await send(egress, keyed(endpoint), endpoint, explicit=True)
    assert (response.status, response.headers["location"]) == (302, target)
    assert engine.received[0].header("x-api-key") == "engine-secret"
    assert other.connections == 0


async def test_connections_kept_alive_and_resolved_once(
    make_egress: MakeEgress, engine_dns: DNSServer, loopback_only: list[str]
) -> None:
    """The pool reuses one pinned connection; the name is resolved only to open it."""
    with serving(respond_each(body=b"again")) as engine:
        egress = make_egress(make_settings(dns_server=engine_dns.address))
        endpoint = f"http://engine.test:{engine.port}/api"
        for _ in range(3):
            assert (await send(egress, keyed(endpoint), endpoint, explicit=True)).body == b"again"
    assert engine.connections == 1
    assert engine_dns.count("engine.test", "A") == 1
    assert loopback_only == ["127.0.0.1"]


async def test_a_connection_the_engine_closed_while_idle_is_not_reused(
    make_egress: MakeEgress, engine_dns: DNSServer
) -> None:
    """REQ-AGG-008: the engine closes a kept-alive connection after answering (as servers do
    when their idle timeout ends); the next request sees it closed before sending, opens a
    new one and succeeds, although a request is never retried."""

    def answer_then_hang_up(conn: Conn) -> None:
        if conn.read_request() is not None:
            conn.respond(200, (("Content-Type", "text/plain"),), b"fresh")
            conn.sock.shutdown(socket.SHUT_RDWR)

    with serving(answer_then_hang_up) as engine:
        egress = make_egress(make_settings(dns_server=engine_dns.address))
        endpoint = f"http://engine.test:{engine.port}/api"
        for _ in range(3):
            await anyio.sleep(0.05)  # the hang-up reaches the client's socket
            assert (await send(egress, keyed(endpoint), endpoint, explicit=True)).body == b"fresh"
    assert engine.connections == 3


@pytest.mark.parametrize(
    "header",
    [
        ("Host", "evil.example"),
        ("User-Agent", "Mozilla/5.0"),
        ("Cookie", "a=b"),
        ("Connection", "upgrade"),
        ("Transfer-Encoding", "chunked"),
        ("Content-Length", "5"),
        ("Accept-Encoding", "br"),
        ("Proxy-Authorization", "Basic x"),
        ("X-Evil", "a\r\nInjected: yes"),
        ("Bad Name", "x"),
    ],
)
async def test_reserved_or_malformed_driver_headers_refused(
    make_egress: MakeEgress, header: tuple[str, str]
) -> None:
    egress = make_egress(allow=())
    endpoint = "https://api.example.org/v1"
    request = EngineRequest("GET", endpoint, headers=(header,))
    assert (await refused(egress, request, endpoint)).reason == EgressReason.INVALID_REQUEST


async def test_methods_and_bodies(make_egress: MakeEgress) -> None:
    """GET and POST only; a body only with POST (REQ-TEST-005: forbidden methods)."""
    egress = make_egress(allow=())
    endpoint = "https://api.example.org/v1"
    for request in (
        EngineRequest("DELETE", endpoint),  # type: ignore[arg-type]
        EngineRequest("PUT", endpoint, body=b"x"),  # type: ignore[arg-type]
        EngineRequest("GET", endpoint, body=b"x"),
    ):
        assert (await refused(egress, request, endpoint)).reason == EgressReason.INVALID_REQUEST


async def test_post_body_is_framed(make_egress: MakeEgress, engine_dns: DNSServer) -> None:
    with serving(respond_each(body=b"posted")) as engine:
        egress = make_egress(make_settings(dns_server=engine_dns.address))
        endpoint = f"http://engine.test:{engine.port}/search"
        request = keyed(
            endpoint,
            method="POST",
            body=b"q=rypsok&format=json",
            headers=(("Content-Type", "application/x-www-form-urlencoded"),),
        )
        assert (await send(egress, request, endpoint, explicit=True)).body == b"posted"
    [received] = engine.received
    assert (received.method, received.body) == ("POST", b"q=rypsok&format=json")
    assert received.header("content-length") == "20"


@pytest.mark.req("REQ-SEC-010")
async def test_req_sec_010_engine_response_bounded(
    make_egress: MakeEgress, engine_dns: DNSServer
) -> None:
    """The driver-declared bound applies while streaming.

    Proves THR-14.
    """
    with serving(respond_each(body=b"x" * 5000)) as engine:
        egress = make_egress(make_settings(dns_server=engine_dns.address))
        endpoint = f"http://engine.test:{engine.port}/"
        error = await refused(egress, keyed(endpoint), endpoint, explicit=True, max_bytes=4096)
    assert error.reason == EgressReason.TOO_LARGE


@pytest.mark.req("REQ-TEST-015")
async def test_req_test_015_proxy_environment_ignored(
    make_egress: MakeEgress,
    engine_dns: DNSServer,
    monkeypatch: pytest.MonkeyPatch,
    server_tls: Callable[..., ssl.SSLContext],
) -> None:
    with (
        serving(respond_each()) as trap,
        serving(respond_each(body=b"direct"), tls=server_tls("engine.test")) as engine,
    ):
        for name in (
            "HTTP_PROXY",
            "HTTPS_PROXY",
            "ALL_PROXY",
            "http_proxy",
            "https_proxy",
            "all_proxy",
        ):
            monkeypatch.setenv(name, f"http://127.0.0.1:{trap.port}")
        egress = make_egress(make_settings(dns_server=engine_dns.address))
        endpoint = f"https://engine.test:{engine.port}/api"
        assert (await send(egress, keyed(endpoint), endpoint)).body == b"direct"
    assert trap.connections == 0


@pytest.mark.req("REQ-SEC-011")
async def test_req_sec_011_engine_total_deadline(
    make_egress: MakeEgress, engine_dns: DNSServer
) -> None:
    def slow(conn: Conn) -> None:
        if conn.read_request() is None:
            return
        conn.send(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n")
        for _ in range(100):
            if not conn.send(b"x") or conn.server.idle(2):
                return

    with serving(slow) as engine:
        egress = make_egress(make_settings(dns_server=engine_dns.address))
        endpoint = f"http://engine.test:{engine.port}/"
        error = await refused(egress, keyed(endpoint), endpoint, explicit=True, total_timeout_s=2)
    assert error.reason == EgressReason.TIMEOUT


async def test_cancelled_engine_request_closes_its_pooled_connection(
    make_egress: MakeEgress, engine_dns: DNSServer
) -> None:
    served = threading.Event()

    def stall(conn: Conn) -> None:
        if conn.read_request() is None:
            return
        conn.send(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npart")
        served.set()
        if conn.wait_closed(GUARD_S):
            conn.server.closed.set()

    with serving(stall) as engine:
        egress = make_egress(make_settings(dns_server=engine_dns.address))
        endpoint = f"http://engine.test:{engine.port}/"
        with anyio.fail_after(GUARD_S):
            async with anyio.create_task_group() as group:
                group.start_soon(
                    lambda: egress.engine_request(
                        keyed(endpoint),
                        endpoint=endpoint,
                        explicit_endpoint=True,
                        connect_timeout_s=2,
                        total_timeout_s=600,
                        max_bytes=1000,
                    )
                )
                assert await wait_for(served, GUARD_S)
                group.cancel_scope.cancel()
            assert await wait_for(engine.closed, GUARD_S)
