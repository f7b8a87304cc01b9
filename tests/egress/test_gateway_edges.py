"""Edges of the egress gateway that its mutation runs found untested (docs/security.md §5).

Bounds checked before anything is sent, the limits of a header value and of a driver's
headers and body, the construction checks, and "no retry": a refused connection is tried once
(session 5). HTTP/1.1 only in ALPN, the pool's bounds (connections per origin, idle ones kept,
their expiry), the lookup's bound and the close of every pool in a cancelled scope (session 6).
Real loopback servers, reached through the allow rule the fixtures inject; the pools' bounds
are counted at the server's end of the sockets.
"""

from __future__ import annotations

import socket
import ssl
from collections.abc import Callable
from typing import Any

import anyio
import pytest

from rypsok.config.schema import SearchSettings, Settings
from rypsok.egress import Egress, EgressError, EgressReason, gateway
from rypsok.egress.gateway import MAX_DRIVER_HEADERS, MAX_REQUEST_BODY
from rypsok.engines.base import EngineRequest

from ._support import (
    USER_AGENT,
    Conn,
    DNSServer,
    OpenConnections,
    at_once,
    make_settings,
    respond_each,
    serving,
)
from .conftest import MakeEgress

pytestmark = pytest.mark.anyio

GUARD_S = 30
BOUNDS = ("max_bytes", "connect_timeout_s", "total_timeout_s")


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def bounds(zero: str | None = None) -> dict[str, Any]:
    values: dict[str, Any] = {"max_bytes": 1 << 20, "connect_timeout_s": 2, "total_timeout_s": 10}
    if zero is not None:
        values[zero] = 0
    return values


async def get(egress: Egress, url: str, accept: str = "text/html", **kwargs: Any) -> Any:
    with anyio.fail_after(GUARD_S):
        return await egress.get(
            egress.check_url(url, allow_http=True), accept=accept, **{**bounds(), **kwargs}
        )


async def engine(egress: Egress, request: EngineRequest, endpoint: str, **kwargs: Any) -> Any:
    with anyio.fail_after(GUARD_S):
        return await egress.engine_request(
            request, endpoint=endpoint, explicit_endpoint=True, **{**bounds(), **kwargs}
        )


@pytest.mark.req("REQ-SEC-013")
@pytest.mark.parametrize("zero", BOUNDS)
async def test_req_sec_013_a_bound_of_zero_is_refused_before_anything_is_sent(
    make_egress: MakeEgress, zero: str
) -> None:
    """REQ-SEC-013: every request is bounded in bytes and time; a zero bound is a programming
    error, refused for both profiles before a connection is opened."""
    with serving(respond_each(body=b"ok")) as server:
        egress = make_egress(make_settings(ports=[server.port]))
        url = f"http://127.0.0.1:{server.port}/"
        with pytest.raises(ValueError, match=r"^timeouts and byte bounds must be positive$"):
            await get(egress, url, **bounds(zero))
        with pytest.raises(ValueError, match=r"^timeouts and byte bounds must be positive$"):
            await engine(egress, EngineRequest("GET", url), url, **bounds(zero))
        assert server.received == []


@pytest.mark.req("REQ-SEC-009")
async def test_req_sec_009_a_header_value_holds_at_most_8192_characters(
    make_egress: MakeEgress,
) -> None:
    """REQ-SEC-009: a header value of 8192 characters is sent as given; one more is refused
    as an invalid request, and nothing is sent."""
    with serving(respond_each(body=b"ok")) as server:
        egress = make_egress(make_settings(ports=[server.port]))
        url = f"http://127.0.0.1:{server.port}/"
        await get(egress, url, accept="a" * 8192)
        assert server.received[0].header("accept") == "a" * 8192
        with pytest.raises(EgressError) as caught:
            await get(egress, url, accept="a" * 8193)
        assert caught.value.reason is EgressReason.INVALID_REQUEST
        assert len(server.received) == 1


@pytest.mark.req("REQ-SEC-017")
async def test_req_sec_017_driver_headers_and_body_up_to_their_bounds(
    make_egress: MakeEgress,
) -> None:
    """REQ-SEC-017: a driver may set MAX_DRIVER_HEADERS headers and POST MAX_REQUEST_BODY
    bytes, no more (invalid_request, nothing sent); without its own Accept, ``*/*`` is sent."""
    with serving(respond_each(body=b"{}")) as server:
        egress = make_egress(make_settings(ports=[server.port]))
        url = f"http://127.0.0.1:{server.port}/search"
        headers = tuple((f"X-Field-{n}", str(n)) for n in range(MAX_DRIVER_HEADERS))
        await engine(egress, EngineRequest("GET", url, headers=headers), url)
        assert server.received[0].header("x-field-31") == "31"
        assert server.received[0].header("accept") == "*/*"
        await engine(egress, EngineRequest("POST", url, body=b"b" * MAX_REQUEST_BODY), url)
        assert len(server.received[1].body) == MAX_REQUEST_BODY
        too_many = (*headers, ("X-Field-32", "32"))
        too_big = b"b" * (MAX_REQUEST_BODY + 1)
        for request in (
            EngineRequest("GET", url, headers=too_many),
            EngineRequest("POST", url, body=too_big),
        ):
            with pytest.raises(EgressError) as caught:
                await engine(egress, request, url)
            assert caught.value.reason is EgressReason.INVALID_REQUEST
        assert len(server.received) == 2


@pytest.mark.req("REQ-SEC-009")
async def test_req_sec_009_a_refused_connection_is_tried_once(
    make_egress: MakeEgress, monkeypatch: pytest.MonkeyPatch
) -> None:
    """REQ-SEC-009 ("no retry"): a destination that refuses the connection is tried once, by
    web_fetch's profile and by the engine profile alike. (The pinned backend reports a failed
    connect as an EgressError, which the HTTP library never retries, whatever its setting.)"""
    port = closed_port()
    egress = make_egress(make_settings(ports=[port]))
    attempts = 0
    connect = egress._backend.connect_tcp

    async def counted(*args: Any, **kwargs: Any) -> Any:
        nonlocal attempts
        attempts += 1
        return await connect(*args, **kwargs)

    monkeypatch.setattr(egress._backend, "connect_tcp", counted)
    url = f"http://127.0.0.1:{port}/"
    with pytest.raises(EgressError) as caught:
        await get(egress, url)
    assert caught.value.reason is EgressReason.CONNECT_FAILED
    assert attempts == 1
    with pytest.raises(EgressError):
        await engine(egress, EngineRequest("GET", url), url)
    assert attempts == 2


def test_construction_refuses_a_bad_user_agent_or_keepalive() -> None:
    """The User-Agent is 1 to 512 printable ASCII characters and at least one idle connection
    is kept per origin; anything else is refused with a message naming the rule."""
    settings = make_settings()
    Egress(settings, "a" * 512)
    Egress(settings, USER_AGENT, keepalive_per_origin=1)
    for agent in ("", "a" * 513, "rypsok\r\nX-Injected: 1", "r" * 600):
        with pytest.raises(
            ValueError, match=r"^the User-Agent must be 1 to 512 printable ASCII characters$"
        ):
            Egress(settings, agent)
    with pytest.raises(ValueError, match=r"^keepalive_per_origin must be at least 1$"):
        Egress(settings, USER_AGENT, keepalive_per_origin=0)


@pytest.mark.req("REQ-SEC-017")
async def test_req_sec_017_an_explicit_endpoints_connection_serves_no_other_request(
    make_egress: MakeEgress,
    dns_zone: Callable[..., DNSServer],
    server_tls: Callable[..., ssl.SSLContext],
) -> None:
    """REQ-SEC-017: a connection opened for an endpoint the operator configured (trusted) is
    never reused for a request to the same origin that must pass the full policy, and the
    other way round: each trust level has its own pool."""
    dns = dns_zone({"engine.test": ["127.0.0.1"]})
    with serving(respond_each(body=b"{}"), tls=server_tls("engine.test")) as server:
        egress = make_egress(make_settings(dns_server=dns.address))
        endpoint = f"https://engine.test:{server.port}/api"
        for explicit in (True, False, True, False):
            with anyio.fail_after(GUARD_S):
                await egress.engine_request(
                    EngineRequest("GET", endpoint),
                    endpoint=endpoint,
                    explicit_endpoint=explicit,
                    **bounds(),
                )
    assert len(server.received) == 4
    assert server.connections == 2  # one kept-alive connection per trust level


@pytest.mark.req("REQ-SEC-009")
async def test_req_sec_009_http_1_1_only_even_where_the_server_prefers_http_2(
    make_egress: MakeEgress,
    dns_zone: Callable[..., DNSServer],
    server_tls: Callable[..., ssl.SSLContext],
) -> None:
    """Both profiles offer only ``http/1.1`` in TLS ALPN: the byte bounds, the deadline and the
    header checks are built for HTTP/1.1, and the ``h2`` package is not installed. A server
    that prefers ``h2`` must still be spoken to in HTTP/1.1 (and answer)."""
    offered: list[str | None] = []

    def record_alpn(conn: Conn) -> None:
        assert isinstance(conn.sock, ssl.SSLSocket)
        offered.append(conn.sock.selected_alpn_protocol())
        respond_each(body=b"one")(conn)

    dns = dns_zone({"engine.test": ["127.0.0.1"]})
    tls = server_tls("engine.test")
    tls.set_alpn_protocols(["h2", "http/1.1"])
    with serving(record_alpn, tls=tls) as server:
        egress = make_egress(make_settings(ports=[server.port], dns_server=dns.address))
        url = f"https://engine.test:{server.port}/api"
        assert (await get(egress, url)).body == b"one"
        for explicit in (True, False):  # each trust level has its own pool
            with anyio.fail_after(GUARD_S):
                response = await egress.engine_request(
                    EngineRequest("GET", url), endpoint=url, explicit_endpoint=explicit, **bounds()
                )
            assert response.body == b"one"
    assert offered == ["http/1.1"] * 3


@pytest.mark.req("REQ-SEC-013")
async def test_req_sec_013_an_engine_origin_holds_at_most_requests_in_flight_connections() -> None:
    """The pool is a second bound on sockets: more concurrent engine requests than
    ``[search] requests_in_flight`` (LIM-C1, which the search pipeline enforces first) wait
    for a connection instead of opening more."""
    counter = OpenConnections(together=3, hold_s=1.0)
    settings = Settings(search=SearchSettings(requests_in_flight=2))
    with serving(counter) as server:
        async with Egress(settings, USER_AGENT, extra_allow=["127.0.0.1"]) as egress:
            url = f"http://127.0.0.1:{server.port}/api"
            await at_once(3, engine, egress, EngineRequest("GET", url), url)
    assert len(server.received) == 3
    assert (counter.most, server.connections) == (2, 2)


@pytest.mark.req("REQ-SEC-013")
async def test_req_sec_013_idle_engine_connections_beyond_the_keepalive_bound_are_closed() -> None:
    """After a burst, an origin keeps ``keepalive_per_origin`` idle connections and closes the
    rest, so idle sockets stay bounded however large a burst was."""
    counter = OpenConnections(together=3, hold_s=10.0)
    settings = Settings(search=SearchSettings(requests_in_flight=3))
    with serving(counter) as server:
        async with Egress(
            settings, USER_AGENT, extra_allow=["127.0.0.1"], keepalive_per_origin=1
        ) as egress:
            url = f"http://127.0.0.1:{server.port}/api"
            await at_once(3, engine, egress, EngineRequest("GET", url), url)
            with anyio.move_on_after(GUARD_S):
                while counter.open > 1:  # the server sees each close a moment later
                    await anyio.sleep(0.01)
            assert (counter.most, counter.open) == (3, 1)


@pytest.mark.req("REQ-SEC-011")
async def test_req_sec_011_a_name_lookup_is_bounded_by_the_connect_timeout(
    make_egress: MakeEgress, dns_server: Callable[..., DNSServer]
) -> None:
    """A DNS server that never answers ends the call as ``dns_failure`` at the connect
    timeout, well inside the total deadline (which would end it as ``timeout``)."""
    dns = dns_server(lambda _name, _type, _n: None)
    egress = make_egress(make_settings(dns_server=dns.address))
    with pytest.raises(EgressError) as caught:
        await get(egress, "http://silent.test/", connect_timeout_s=0.3, total_timeout_s=4)
    assert caught.value.reason == EgressReason.DNS_FAILURE


@pytest.mark.req("REQ-SEC-013")
async def test_req_sec_013_an_idle_engine_connection_expires(
    make_egress: MakeEgress, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An engine connection idle for longer than ENGINE_KEEPALIVE_S is closed, not reused:
    a kept-alive socket does not outlive the engine's own idle timeout by much."""
    monkeypatch.setattr(gateway, "ENGINE_KEEPALIVE_S", 0.05)
    with serving(respond_each(body=b"{}")) as server:
        egress = make_egress()
        url = f"http://127.0.0.1:{server.port}/api"
        await engine(egress, EngineRequest("GET", url), url)
        await anyio.sleep(0.3)
        await engine(egress, EngineRequest("GET", url), url)
    assert (len(server.received), server.connections) == (2, 2)


@pytest.mark.req("REQ-SEC-013")
async def test_req_sec_013_the_connection_bound_is_per_origin() -> None:
    """Each engine origin has its own pool: with room for one connection per origin, two
    engines still answer at once, and one slow engine never holds up another's requests."""
    counter = OpenConnections(together=2, hold_s=1.0)
    settings = Settings(search=SearchSettings(requests_in_flight=1))
    with serving(counter) as first, serving(counter) as second:
        async with Egress(settings, USER_AGENT, extra_allow=["127.0.0.1"]) as egress:
            urls = [f"http://127.0.0.1:{s.port}/api" for s in (first, second)]
            async with anyio.create_task_group() as group:
                for url in urls:
                    group.start_soon(engine, egress, EngineRequest("GET", url), url)
    assert counter.most == 2


@pytest.mark.req("REQ-SEC-013")
async def test_closing_the_egress_closes_every_pool_even_when_cancelled() -> None:
    """The service's shutdown may run in a cancelled scope: every pooled engine connection is
    closed anyway, not only the first pool's."""
    counter = OpenConnections(together=1, hold_s=0)
    with serving(counter) as first, serving(counter) as second:
        egress = Egress(Settings(), USER_AGENT, extra_allow=["127.0.0.1"])
        for server in (first, second):
            url = f"http://127.0.0.1:{server.port}/api"
            await engine(egress, EngineRequest("GET", url), url)
        assert counter.open == 2
        with anyio.CancelScope() as scope:
            scope.cancel()
            await egress.aclose()
        with anyio.move_on_after(GUARD_S):
            while counter.open:
                await anyio.sleep(0.01)
        assert counter.open == 0
