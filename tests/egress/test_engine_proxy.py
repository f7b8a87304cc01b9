"""The engine proxy of ``[egress] engine_proxy`` (REQ-RES-008, REQ-SEC-007).

A real CONNECT proxy runs on 127.0.0.1 in the test's event loop: it records what it was asked
(CONNECT targets, absolute-form request targets, the ``Proxy-Authorization`` it got), then
relays bytes to the local engine servers, refuses with a chosen status, demands Basic
credentials, hangs up at a chosen point, or answers the tunnel with its own certificate (a man
in the middle). Engines are the threaded trustme TLS servers of ``_support``.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import io
import json
import logging
import ssl
import traceback
import urllib.parse
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import anyio
import pytest

from rypsok.app import ConfigurationError, load
from rypsok.config.load import ConfigError, parse_settings
from rypsok.config.schema import EgressSettings, FetchSettings, SearchSettings, Settings
from rypsok.config.secrets import Secret
from rypsok.contract.vocabulary import FailureClass
from rypsok.egress import Egress, EgressError, EgressReason, gateway
from rypsok.egress.addresses import AddressPolicy, Category
from rypsok.egress.proxy import (
    AUTH_HINT,
    AUTH_MISSING_HINT,
    engine_proxy_from,
    parse_engine_proxy,
    resolve_proxy_credentials,
)
from rypsok.engines.base import EngineRequest, EngineResponse
from rypsok.logs import JsonLineFormatter
from rypsok.search.pipeline import _classify_egress

from ._support import (
    USER_AGENT,
    Conn,
    DNSServer,
    HTTPServer,
    OpenConnections,
    at_once,
    respond_each,
    serving,
)
from .conftest import MakeEgress

pytestmark = pytest.mark.anyio

GUARD_S = 30
KEY = ("X-Api-Key", "engine-secret")
PROXY_TEXT = "IGNORE-PREVIOUS-INSTRUCTIONS proxy-realm-4242"
PROXY_VARIABLES = (
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
)

# Credentials no test output may show: the password is a marker searched for everywhere.
PROXY_USER = "svc-rypsok"
PROXY_PASSWORD = "pw-MARKER-5f3a:with colon"
PROXY_CREDENTIALS = f"{PROXY_USER}:{PROXY_PASSWORD}"
AUTH_VARIABLE = "RYPSOK_TEST_PROXY_AUTH"

# relay: a working proxy; refuse: answers every request with ``status``; mitm: answers the
# tunnel's TLS itself; hang_up: closes on reading CONNECT; half_answer: closes in the middle
# of its status line; closed_tunnel: answers 200, then closes before any TLS byte.
Mode = Literal["relay", "refuse", "mitm", "hang_up", "half_answer", "closed_tunnel"]


# --- a local recording proxy -------------------------------------------------------------------


@dataclass
class Proxy:
    """An HTTP proxy on a loopback address: CONNECT tunnels and absolute-form forwarding.

    ``names`` maps the host names it is asked for to loopback addresses (it resolves nothing
    else, so the test cannot leave the machine). ``connects`` and ``forwards`` record the
    CONNECT targets and absolute request targets in order, ``authorizations`` the
    ``Proxy-Authorization`` value of each (None when absent). With ``credentials``
    (``user:password``) it demands Basic authentication like a corporate proxy: anything else
    is answered 407, and it removes the header before forwarding (it is hop-by-hop).
    """

    mode: Mode = "relay"
    status: int = 407
    credentials: str | None = None
    names: dict[str, str] = field(default_factory=dict)
    tls: ssl.SSLContext | None = None  # the proxy's own TLS (an https proxy)
    mitm_tls: ssl.SSLContext | None = None  # the certificate a "mitm" proxy answers with
    host: str = "127.0.0.1"
    connects: list[str] = field(default_factory=list)
    forwards: list[str] = field(default_factory=list)
    authorizations: list[str | None] = field(default_factory=list)
    connections: int = 0
    port: int = 0
    _server: asyncio.Server | None = None
    _tasks: set[asyncio.Task[None]] = field(default_factory=set)

    @property
    def url(self) -> str:
        scheme = "https" if self.tls else "http"
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{scheme}://{host}:{self.port}"

    async def start(self) -> Proxy:
        self._server = await asyncio.start_server(self._accept, self.host, 0, ssl=self.tls)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(BaseException):
                await task

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self.connections += 1
        try:
            await self._serve(reader, writer)
        except (OSError, asyncio.IncompleteReadError, ssl.SSLError, ValueError):
            pass
        finally:
            writer.close()
            self._tasks.discard(task)

    def _address(self, host: str) -> str:
        host = host.strip("[]")
        address = self.names.get(host, host)
        if address not in ("127.0.0.1", "::1"):
            raise AssertionError(f"the test proxy was asked for {host}")
        return address

    async def _refuse(self, writer: asyncio.StreamWriter, status: int) -> None:
        body = f"<html>{PROXY_TEXT}</html>".encode()
        writer.write(
            f"HTTP/1.1 {status} {PROXY_TEXT}\r\n"
            f'Proxy-Authenticate: Basic realm="{PROXY_TEXT}"\r\n'
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode("latin-1")
            + body
        )
        await writer.drain()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
        line, _, rest = head.partition("\r\n")
        method, target, _version = line.split(" ", 2)
        if method == "CONNECT":
            self.connects.append(target)
        else:
            self.forwards.append(target)
        fields = [f for f in rest.split("\r\n") if f]
        authorization = [
            f.partition(":")[2].strip()
            for f in fields
            if f.partition(":")[0].strip().lower() == "proxy-authorization"
        ]
        self.authorizations.append(authorization[0] if authorization else None)
        # Hop-by-hop: what a proxy passes on never carries it.
        rest = (
            "".join(f"{f}\r\n" for f in fields if not f.lower().startswith("proxy-authorization:"))
            + "\r\n"
        )
        if self.mode == "hang_up":
            return
        if self.mode == "half_answer":
            writer.write(b"HTTP/1.1 20")
            await writer.drain()
            return
        if self.mode == "refuse":
            await self._refuse(writer, self.status)
            return
        if self.credentials is not None:
            expected = "Basic " + base64.b64encode(self.credentials.encode()).decode()
            if authorization != [expected]:
                await self._refuse(writer, 407)
                return
        if method == "CONNECT" and self.mode == "closed_tunnel":
            writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            await writer.drain()
            return
        if method == "CONNECT":
            host, _, port = target.rpartition(":")
            if self.mode == "mitm":
                # Accept the tunnel, then answer the client's TLS itself.
                writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
                await writer.drain()
                assert self.mitm_tls is not None
                await writer.start_tls(self.mitm_tls)
                await reader.read(1)
                return
            up_reader, up_writer = await asyncio.open_connection(self._address(host), int(port))
            writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        else:
            parts = urllib.parse.urlsplit(target)
            assert parts.hostname is not None and parts.port is not None
            up_reader, up_writer = await asyncio.open_connection(
                self._address(parts.hostname), parts.port
            )
            origin_form = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
            up_writer.write(f"{method} {origin_form} HTTP/1.1\r\n{rest}".encode("latin-1"))
        try:
            await asyncio.gather(_pump(reader, up_writer), _pump(up_reader, writer))
        finally:
            up_writer.close()


async def _pump(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    try:
        while data := await source.read(65536):
            sink.write(data)
            await sink.drain()
    finally:
        sink.close()


@pytest.fixture
async def proxies() -> AsyncIterator[Callable[..., Proxy]]:
    """Start recording proxies; they are stopped after the test."""
    started: list[Proxy] = []

    def make(**kwargs: object) -> Proxy:
        proxy = Proxy(**kwargs)  # type: ignore[arg-type]
        started.append(proxy)
        return proxy

    yield make
    for proxy in started:
        await proxy.stop()


# --- helpers -----------------------------------------------------------------------------------


def proxy_settings(
    proxy_url: str | None, *, dns: DNSServer | None = None, **egress: object
) -> Settings:
    return Settings(
        egress=EgressSettings(
            engine_proxy=proxy_url,
            dns_servers=[dns.address] if dns else [],
            **egress,  # type: ignore[arg-type]
        ),
        fetch=FetchSettings(),
    )


def keyed(url: str) -> EngineRequest:
    return EngineRequest(
        "GET",
        url,
        headers=(("Accept", "application/json"), KEY),
        credential_headers=frozenset({"x-api-key"}),
    )


async def send(egress: Egress, endpoint: str, *, explicit: bool = False) -> EngineResponse:
    with anyio.fail_after(GUARD_S):
        return await egress.engine_request(
            keyed(endpoint + "?q=rypsok"),
            endpoint=endpoint,
            explicit_endpoint=explicit,
            connect_timeout_s=2,
            total_timeout_s=10,
            max_bytes=1 << 20,
        )


async def failed(egress: Egress, endpoint: str, *, explicit: bool = False) -> EgressError:
    with pytest.raises(EgressError) as caught:
        await send(egress, endpoint, explicit=explicit)
    return caught.value


def assert_scrubbed(error: EgressError) -> None:
    """rypsok's own text only: nothing the proxy said, no chained library exception."""
    assert "[egress] engine_proxy" in str(error)
    for text in (str(error), repr(error)):
        assert "IGNORE-PREVIOUS" not in text and "proxy-realm" not in text
    assert error.__cause__ is None and error.__context__ is None


def basic(credentials: str) -> str:
    return "Basic " + base64.b64encode(credentials.encode()).decode()


# Every form in which the configured credentials could leak: the password, the marker in it,
# and the header value made from them.
SECRET_FORMS = (PROXY_PASSWORD, "MARKER-5f3a", basic(PROXY_CREDENTIALS).removeprefix("Basic "))


def assert_no_secret(*texts: str) -> None:
    for text in texts:
        for form in SECRET_FORMS:
            assert form not in text


@contextlib.contextmanager
def captured_logs() -> Iterator[io.StringIO]:
    """Every record of every logger, the libraries' debug records included, as text: once as
    rypsok's JSON lines and once with the plain message and its arguments."""
    stream = io.StringIO()
    json_handler = logging.StreamHandler(stream)
    json_handler.setFormatter(JsonLineFormatter())
    plain_handler = logging.StreamHandler(stream)
    plain_handler.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))
    root = logging.getLogger()
    saved = (root.level, list(root.handlers))
    root.handlers[:] = [json_handler, plain_handler]
    root.setLevel(logging.DEBUG)
    try:
        yield stream
    finally:
        root.setLevel(saved[0])
        root.handlers[:] = saved[1]


def log_events(stream: io.StringIO, event: str) -> list[dict[str, object]]:
    found = []
    for line in stream.getvalue().splitlines():
        if line.startswith("{"):
            record = json.loads(line)
            if record.get("event") == event:
                found.append(record)
    return found


@pytest.fixture
def engine_dns(dns_zone: Callable[[dict[str, list[str]]], DNSServer]) -> DNSServer:
    """rypsok's resolver: it knows only the proxy's name, never an engine's."""
    return dns_zone({"proxy.test": ["127.0.0.1"], "site.test": ["127.0.0.1"]})


ENGINE_NAMES = {"engine.test": "127.0.0.1", "searxng.test": "127.0.0.1", "site.test": "127.0.0.1"}


# --- the tunnel ----------------------------------------------------------------------------------


@pytest.mark.req("REQ-RES-008", "REQ-SEC-017")
async def test_req_res_008_https_engine_request_through_a_connect_tunnel(
    make_egress: MakeEgress,
    proxies: Callable[..., Proxy],
    engine_dns: DNSServer,
    server_tls: Callable[..., ssl.SSLContext],
) -> None:
    """An https engine request goes through the configured proxy as CONNECT, TLS end to end.

    The proxy sees only ``host:port``; the engine gets the request with its credential, SNI
    is the engine's name, rypsok never resolves the engine's name, and the tunnel is kept
    alive for the next request.

    Proves THR-41.
    """
    proxy = await proxies(names=ENGINE_NAMES).start()
    with serving(respond_each(body=b'{"ok": 1}'), tls=server_tls("engine.test")) as engine:
        egress = make_egress(proxy_settings(proxy.url, dns=engine_dns))
        endpoint = f"https://engine.test:{engine.port}/api"
        first = await send(egress, endpoint)
        second = await send(egress, endpoint)
    assert (first.status, first.body, second.body) == (200, b'{"ok": 1}', b'{"ok": 1}')
    assert proxy.connects == [f"engine.test:{engine.port}"]
    assert proxy.forwards == [] and proxy.connections == 1
    assert engine.connections == 1 and engine.sni == ["engine.test"]
    assert [r.target for r in engine.received] == ["/api?q=rypsok"] * 2
    assert engine.received[0].header("x-api-key") == "engine-secret"
    assert engine_dns.queries == []  # the proxy resolves the engine, not rypsok


@pytest.mark.req("REQ-RES-008", "REQ-SEC-009")
async def test_req_res_008_http_1_1_inside_the_tunnel_even_where_the_engine_prefers_http_2(
    make_egress: MakeEgress,
    proxies: Callable[..., Proxy],
    engine_dns: DNSServer,
    server_tls: Callable[..., ssl.SSLContext],
) -> None:
    """TLS through the tunnel offers only ``http/1.1`` in ALPN, as without a proxy
    (tests/egress/test_gateway_edges.py): an engine that prefers ``h2`` still gets HTTP/1.1."""
    offered: list[str | None] = []

    def record_alpn(conn: Conn) -> None:
        assert isinstance(conn.sock, ssl.SSLSocket)
        offered.append(conn.sock.selected_alpn_protocol())
        respond_each(body=b"{}")(conn)

    proxy = await proxies(names=ENGINE_NAMES).start()
    tls = server_tls("engine.test")
    tls.set_alpn_protocols(["h2", "http/1.1"])
    with serving(record_alpn, tls=tls) as engine:
        egress = make_egress(proxy_settings(proxy.url, dns=engine_dns))
        response = await send(egress, f"https://engine.test:{engine.port}/api")
    assert (response.status, response.body) == (200, b"{}")
    assert offered == ["http/1.1"]


@pytest.mark.req("REQ-RES-008")
async def test_req_res_008_proxy_name_resolved_once_and_pinned(
    make_egress: MakeEgress,
    proxies: Callable[..., Proxy],
    engine_dns: DNSServer,
    server_tls: Callable[..., ssl.SSLContext],
    loopback_only: list[str],
) -> None:
    """A proxy given by name is resolved by rypsok's resolver to open the connection, and
    the connection goes to the address judged (a loopback address: the operator's own)."""
    proxy = await proxies(names=ENGINE_NAMES).start()
    with serving(respond_each(body=b"named"), tls=server_tls("engine.test")) as engine:
        egress = make_egress(
            proxy_settings(f"http://proxy.test:{proxy.port}", dns=engine_dns), allow=()
        )
        endpoint = f"https://engine.test:{engine.port}/api"
        assert (await send(egress, endpoint)).body == b"named"
        assert (await send(egress, endpoint)).body == b"named"
    assert engine_dns.count("proxy.test", "A") == 1
    assert loopback_only == ["127.0.0.1"]
    assert proxy.connects == [f"engine.test:{engine.port}"]


@pytest.mark.req("REQ-RES-008", "REQ-SEC-017")
async def test_req_res_008_the_engine_certificate_is_verified_behind_the_proxy(
    make_egress: MakeEgress,
    proxies: Callable[..., Proxy],
    server_tls: Callable[..., ssl.SSLContext],
) -> None:
    """TLS verifies the engine's certificate and name, never the proxy's: an engine with a
    certificate for another name fails, and so does a proxy that answers the tunnel itself
    with a certificate the client trusts, issued for the proxy's own name.

    Proves THR-41.
    """
    proxy = await proxies(names=ENGINE_NAMES).start()
    with serving(respond_each(), tls=server_tls("other.test")) as engine:
        egress = make_egress(proxy_settings(proxy.url))
        error = await failed(egress, f"https://engine.test:{engine.port}/api")
    assert error.reason == EgressReason.TLS_FAILURE
    assert proxy.connects == [f"engine.test:{engine.port}"]  # it did go through the proxy
    assert engine.received == []

    mitm = await proxies(mode="mitm", mitm_tls=server_tls("127.0.0.1", "proxy.test")).start()
    egress = make_egress(proxy_settings(mitm.url))
    error = await failed(egress, "https://engine.test:8443/api")
    assert error.reason == EgressReason.TLS_FAILURE
    assert mitm.connects == ["engine.test:8443"]


@pytest.mark.req("REQ-RES-008")
async def test_req_res_008_https_proxy_verified_against_its_own_name(
    make_egress: MakeEgress,
    proxies: Callable[..., Proxy],
    engine_dns: DNSServer,
    server_tls: Callable[..., ssl.SSLContext],
) -> None:
    """An https proxy: TLS to the proxy (its name verified), then the engine's TLS inside."""
    proxy = await proxies(names=ENGINE_NAMES, tls=server_tls("proxy.test")).start()
    with serving(respond_each(body=b"inner"), tls=server_tls("engine.test")) as engine:
        egress = make_egress(
            proxy_settings(f"https://proxy.test:{proxy.port}", dns=engine_dns), allow=()
        )
        endpoint = f"https://engine.test:{engine.port}/api"
        assert (await send(egress, endpoint)).body == b"inner"
        assert engine.sni == ["engine.test"]
        # The same proxy by address: its certificate does not name 127.0.0.1.
        wrong = make_egress(proxy_settings(f"https://127.0.0.1:{proxy.port}"))
        error = await failed(wrong, endpoint)
    assert error.reason == EgressReason.PROXY_FAILURE
    assert_scrubbed(error)
    assert proxy.connects == [f"engine.test:{engine.port}"]  # the second never got that far


@pytest.mark.req("REQ-RES-008")
async def test_req_res_008_explicit_http_endpoint_forwarded_in_absolute_form(
    make_egress: MakeEgress, proxies: Callable[..., Proxy]
) -> None:
    """An explicitly configured http endpoint goes through the proxy as an absolute-form
    request (no CONNECT), with rypsok's headers; the origin rule is unchanged."""
    proxy = await proxies(names=ENGINE_NAMES).start()
    with serving(respond_each(body=b"searx")) as searxng:
        egress = make_egress(proxy_settings(proxy.url))
        endpoint = f"http://searxng.test:{searxng.port}/search"
        response = await send(egress, endpoint, explicit=True)
        with pytest.raises(EgressError) as caught:
            await egress.engine_request(
                keyed(f"http://other.test:{searxng.port}/search"),
                endpoint=endpoint,
                explicit_endpoint=True,
                connect_timeout_s=2,
                total_timeout_s=10,
                max_bytes=1000,
            )
    assert response.body == b"searx"
    assert caught.value.reason == EgressReason.ORIGIN_MISMATCH
    assert proxy.connects == []
    assert proxy.forwards == [f"http://searxng.test:{searxng.port}/search?q=rypsok"]
    [received] = searxng.received
    assert received.header("host") == f"searxng.test:{searxng.port}"
    assert received.header("user-agent") == USER_AGENT
    assert received.header("x-api-key") == "engine-secret"


@pytest.mark.req("REQ-RES-008")
async def test_req_res_008_ipv6_literal_endpoint_bracketed_in_the_connect_target(
    make_egress: MakeEgress,
    proxies: Callable[..., Proxy],
    server_tls: Callable[..., ssl.SSLContext],
) -> None:
    """An IPv6 address literal is written ``[::1]:port`` in CONNECT; TLS names the address."""
    proxy = await proxies().start()
    with serving(respond_each(body=b"six"), host="::1", tls=server_tls("::1")) as engine:
        egress = make_egress(proxy_settings(proxy.url), allow=("127.0.0.1", "::1"))
        response = await send(egress, f"https://[::1]:{engine.port}/api")
    assert response.body == b"six"
    assert proxy.connects == [f"[::1]:{engine.port}"]


# --- configuration only, engines only --------------------------------------------------------


@pytest.mark.req("REQ-RES-008", "REQ-SEC-007")
async def test_req_res_008_proxy_environment_variables_ignored(
    make_egress: MakeEgress,
    proxies: Callable[..., Proxy],
    monkeypatch: pytest.MonkeyPatch,
    server_tls: Callable[..., ssl.SSLContext],
) -> None:
    """With the variables pointing at another recording proxy, and NO_PROXY naming the
    engine, engine requests still go only through the configured proxy.

    Proves THR-41.
    """
    configured = await proxies(names=ENGINE_NAMES).start()
    trap = await proxies(names=ENGINE_NAMES).start()
    for name in PROXY_VARIABLES:
        monkeypatch.setenv(name, trap.url)
    monkeypatch.setenv("NO_PROXY", "*")
    monkeypatch.setenv("no_proxy", "engine.test")
    with serving(respond_each(body=b"configured"), tls=server_tls("engine.test")) as engine:
        egress = make_egress(proxy_settings(configured.url))
        assert (await send(egress, f"https://engine.test:{engine.port}/api")).body == b"configured"
    assert configured.connects == [f"engine.test:{engine.port}"]
    assert trap.connections == 0


@pytest.mark.req("REQ-RES-008", "REQ-SEC-007")
async def test_req_sec_007_fetch_never_uses_the_engine_proxy(
    make_egress: MakeEgress,
    proxies: Callable[..., Proxy],
    engine_dns: DNSServer,
    server_tls: Callable[..., ssl.SSLContext],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An agent-directed request goes direct, pinned to the address rypsok checked, even
    with an engine proxy (and its credentials) configured (the proxy cannot enforce the
    egress profile), and carries no ``Proxy-*`` header.

    Proves THR-41.
    """
    monkeypatch.setenv(AUTH_VARIABLE, PROXY_CREDENTIALS)
    proxy = await proxies(names=ENGINE_NAMES).start()
    with serving(respond_each(body=b"direct"), tls=server_tls("site.test")) as site:
        settings = proxy_settings(proxy.url, dns=engine_dns, engine_proxy_auth_env=AUTH_VARIABLE)
        settings = settings.model_copy(update={"fetch": FetchSettings(ports=[site.port])})
        egress = make_egress(settings)
        checked = egress.check_url(f"https://site.test:{site.port}/page", allow_http=False)
        with anyio.fail_after(GUARD_S):
            response = await egress.get(
                checked,
                accept="text/html",
                max_bytes=1 << 20,
                connect_timeout_s=2,
                total_timeout_s=10,
            )
    assert (response.status, response.body) == (200, b"direct")
    assert proxy.connections == 0
    assert site.connections == 1 and engine_dns.count("site.test", "A") == 1
    # The proxy's credentials are the proxy's: they never go with an agent-directed request.
    assert not any(name.startswith("proxy-") for name in site.received[0].names)


# --- failures ----------------------------------------------------------------------------------


@pytest.mark.req("REQ-RES-008", "REQ-ENG-006")
@pytest.mark.parametrize("status", [407, 403, 502])
async def test_req_res_008_connect_refused_is_a_proxy_failure(
    make_egress: MakeEgress, proxies: Callable[..., Proxy], status: int
) -> None:
    """A refused CONNECT is ``proxy_failure`` (the engine's ``request_failure``), with
    rypsok's message naming the setting and nothing the proxy said; no direct fallback.

    Proves THR-41.
    """
    proxy = await proxies(mode="refuse", status=status).start()
    with serving(respond_each()) as engine:
        egress = make_egress(proxy_settings(proxy.url))
        error = await failed(egress, f"https://engine.test:{engine.port}/api")
    assert error.reason == EgressReason.PROXY_FAILURE
    assert_scrubbed(error)
    assert _classify_egress(error) == FailureClass.REQUEST_FAILURE
    assert proxy.connects == [f"engine.test:{engine.port}"]
    assert engine.connections == 0


@pytest.mark.req("REQ-RES-008", "REQ-ENG-006")
async def test_req_res_008_forwarded_407_is_a_proxy_failure(
    make_egress: MakeEgress, proxies: Callable[..., Proxy]
) -> None:
    """For a forwarded http request, 407 can only come from the proxy: ``proxy_failure``."""
    proxy = await proxies(mode="refuse", status=407).start()
    egress = make_egress(proxy_settings(proxy.url))
    error = await failed(egress, "http://searxng.test:8888/search", explicit=True)
    assert error.reason == EgressReason.PROXY_FAILURE
    assert_scrubbed(error)
    assert proxy.forwards == ["http://searxng.test:8888/search?q=rypsok"]


@pytest.mark.req("REQ-RES-008", "REQ-ENG-006")
async def test_req_res_008_unreachable_or_unresolvable_proxy_is_a_proxy_failure(
    make_egress: MakeEgress,
    dns_zone: Callable[[dict[str, list[str]]], DNSServer],
    server_tls: Callable[..., ssl.SSLContext],
) -> None:
    """Nothing listening, or a name that does not resolve: ``proxy_failure``, never a
    direct connection to the engine."""
    closed = HTTPServer(respond_each())
    port = closed.port
    closed.stop()  # the port is now closed: connections are refused
    dns = dns_zone({"engine.test": ["127.0.0.1"]})
    with serving(respond_each(), tls=server_tls("engine.test")) as engine:
        endpoint = f"https://engine.test:{engine.port}/api"
        for proxy_url in (f"http://127.0.0.1:{port}", "http://gone.test:3128"):
            egress = make_egress(proxy_settings(proxy_url, dns=dns))
            error = await failed(egress, endpoint)
            assert error.reason == EgressReason.PROXY_FAILURE
            assert_scrubbed(error)
    assert engine.connections == 0
    assert dns.count("engine.test") == 0


@pytest.mark.req("REQ-RES-008", "REQ-ENG-006")
@pytest.mark.parametrize("mode", ["hang_up", "half_answer", "closed_tunnel"])
@pytest.mark.parametrize("proxy_tls", [False, True], ids=["http_proxy", "https_proxy"])
async def test_req_res_008_proxy_hanging_up_on_connect_is_a_proxy_failure(
    make_egress: MakeEgress,
    proxies: Callable[..., Proxy],
    server_tls: Callable[..., ssl.SSLContext],
    mode: Mode,
    proxy_tls: bool,
) -> None:
    """A proxy that closes the connection on reading CONNECT, in the middle of its answer,
    or right after answering 200 (before any byte of the engine's TLS) is ``proxy_failure``
    pointing at the setting, not the engine's ``protocol_error`` or ``tls_failure``.

    Proves THR-41.
    """
    tls = server_tls("127.0.0.1") if proxy_tls else None
    proxy = await proxies(mode=mode, names=ENGINE_NAMES, tls=tls).start()
    with serving(respond_each(), tls=server_tls("engine.test")) as engine:
        egress = make_egress(proxy_settings(proxy.url))
        error = await failed(egress, f"https://engine.test:{engine.port}/api")
    assert error.reason == EgressReason.PROXY_FAILURE
    assert_scrubbed(error)
    assert _classify_egress(error) == FailureClass.REQUEST_FAILURE
    assert proxy.connects == [f"engine.test:{engine.port}"]
    assert engine.connections == 0


@pytest.mark.req("REQ-RES-008")
async def test_req_res_008_engine_hanging_up_inside_the_tunnel_stays_the_engines_failure(
    make_egress: MakeEgress,
    proxies: Callable[..., Proxy],
    server_tls: Callable[..., ssl.SSLContext],
) -> None:
    """Once the tunnel and the engine's TLS are up, an engine that closes without answering
    is the engine's ``protocol_error``, as without a proxy: the proxy is not blamed."""

    def read_then_close(conn: Conn) -> None:
        conn.read_request()

    proxy = await proxies(names=ENGINE_NAMES).start()
    with serving(read_then_close, tls=server_tls("engine.test")) as engine:
        egress = make_egress(proxy_settings(proxy.url))
        error = await failed(egress, f"https://engine.test:{engine.port}/api")
    assert error.reason == EgressReason.PROTOCOL_ERROR
    assert proxy.connects == [f"engine.test:{engine.port}"]
    assert [r.target for r in engine.received] == ["/api?q=rypsok"]


@pytest.mark.req("REQ-RES-008", "REQ-SEC-017")
async def test_req_res_008_proxy_answer_set_judged_at_connect_time(
    make_egress: MakeEgress,
    proxies: Callable[..., Proxy],
    dns_zone: Callable[[dict[str, list[str]]], DNSServer],
) -> None:
    """A proxy name that resolves to a metadata address (alone or in a mixed set) is refused
    by the policy before any connection; a private address would be allowed (trusted name).

    Proves THR-41.
    """
    proxy = await proxies().start()
    dns = dns_zone(
        {
            "meta.test": ["169.254.169.254"],
            "mixed.test": ["127.0.0.1", "169.254.169.254"],
        }
    )
    for name in ("meta.test", "mixed.test"):
        egress = make_egress(proxy_settings(f"http://{name}:{proxy.port}", dns=dns), allow=())
        error = await failed(egress, "https://engine.test/api")
        assert (error.reason, error.category) == (EgressReason.ADDRESS_DENIED, Category.METADATA)
    assert proxy.connections == 0


# --- proxy authentication ----------------------------------------------------------------------


@pytest.mark.req("REQ-RES-008", "REQ-CFG-004", "REQ-SEC-017")
async def test_req_res_008_proxy_credentials_sent_on_connect_never_to_the_engine(
    make_egress: MakeEgress,
    proxies: Callable[..., Proxy],
    server_tls: Callable[..., ssl.SSLContext],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A proxy that demands Basic credentials accepts the CONNECT that carries those of
    ``engine_proxy_auth_env``; the request inside the tunnel reaches the engine without any
    ``Proxy-*`` header, and the authenticated tunnel is reused.

    Proves THR-41.
    """
    monkeypatch.setenv(AUTH_VARIABLE, PROXY_CREDENTIALS)
    proxy = await proxies(names=ENGINE_NAMES, credentials=PROXY_CREDENTIALS).start()
    with serving(respond_each(body=b"authed"), tls=server_tls("engine.test")) as engine:
        egress = make_egress(proxy_settings(proxy.url, engine_proxy_auth_env=AUTH_VARIABLE))
        endpoint = f"https://engine.test:{engine.port}/api"
        first = await send(egress, endpoint)
        second = await send(egress, endpoint)
    assert (first.status, first.body, second.body) == (200, b"authed", b"authed")
    assert proxy.connects == [f"engine.test:{engine.port}"]
    assert proxy.authorizations == [basic(PROXY_CREDENTIALS)]
    assert len(engine.received) == 2
    for received in engine.received:
        assert not any(name.startswith("proxy-") for name in received.names)
        assert received.header("x-api-key") == "engine-secret"


@pytest.mark.req("REQ-RES-008", "REQ-CFG-004")
async def test_req_res_008_proxy_credentials_from_a_file_on_forwarded_requests(
    make_egress: MakeEgress, proxies: Callable[..., Proxy], tmp_path: Path
) -> None:
    """``engine_proxy_auth_file``: an explicit http endpoint is forwarded in absolute form
    with ``Proxy-Authorization`` for the proxy (which removes it before passing on).

    Proves THR-41.
    """
    auth_file = tmp_path / "proxy-auth"
    auth_file.write_text(PROXY_CREDENTIALS + "\n", encoding="utf-8")
    proxy = await proxies(names=ENGINE_NAMES, credentials=PROXY_CREDENTIALS).start()
    with serving(respond_each(body=b"searx")) as searxng:
        egress = make_egress(proxy_settings(proxy.url, engine_proxy_auth_file=str(auth_file)))
        endpoint = f"http://searxng.test:{searxng.port}/search"
        response = await send(egress, endpoint, explicit=True)
    assert (response.status, response.body) == (200, b"searx")
    assert proxy.forwards == [f"http://searxng.test:{searxng.port}/search?q=rypsok"]
    assert proxy.authorizations == [basic(PROXY_CREDENTIALS)]
    assert proxy.connects == []


@pytest.mark.req("REQ-RES-008", "REQ-ENG-006", "REQ-CFG-004")
@pytest.mark.parametrize("given", [None, f"{PROXY_USER}:wrong-MARKER-5f3a"], ids=["none", "wrong"])
async def test_req_res_008_proxy_asking_for_credentials_is_a_proxy_failure_with_a_hint(
    proxies: Callable[..., Proxy],
    server_tls: Callable[..., ssl.SSLContext],
    client_tls: ssl.SSLContext,
    monkeypatch: pytest.MonkeyPatch,
    given: str | None,
) -> None:
    """A 407 to CONNECT or to a forwarded request, for missing or refused credentials, is
    ``proxy_failure``; the operator is told once (not per request) which keys to check,
    and neither the log nor the error holds a credential or the proxy's text.

    Proves THR-41.
    """
    proxy = await proxies(names=ENGINE_NAMES, credentials=PROXY_CREDENTIALS).start()
    if given is not None:
        monkeypatch.setenv(AUTH_VARIABLE, given)
    variable = AUTH_VARIABLE if given is not None else None
    logger = logging.getLogger("rypsok.test.proxy")
    with (
        captured_logs() as logs,
        serving(respond_each(), tls=server_tls("engine.test")) as engine,
    ):
        async with Egress(
            proxy_settings(proxy.url, engine_proxy_auth_env=variable),
            USER_AGENT,
            extra_allow=("127.0.0.1",),
            ssl_context=client_tls,
            logger=logger,
        ) as egress:
            tunnelled = await failed(egress, f"https://engine.test:{engine.port}/api")
            forwarded = await failed(egress, "http://searxng.test:8888/search", explicit=True)
    for error in (tunnelled, forwarded):
        assert error.reason == EgressReason.PROXY_FAILURE
        assert_scrubbed(error)
    assert engine.connections == 0
    assert proxy.connects == [f"engine.test:{engine.port}"]
    assert proxy.forwards == ["http://searxng.test:8888/search?q=rypsok"]
    expected = None if given is None else basic(given)
    assert proxy.authorizations == [expected, expected]
    [warning] = log_events(logs, "engine_proxy_authentication")
    assert warning["level"] == "warning" and warning["status"] == 407
    assert warning["credentials"] == ("none" if given is None else "configured")
    hint = str(warning["hint"])
    assert "engine_proxy_auth_env" in hint and "engine_proxy_auth_file" in hint
    # Refused credentials and missing ones call for different action from the operator.
    assert hint == (AUTH_MISSING_HINT if given is None else AUTH_HINT)
    assert "IGNORE-PREVIOUS" not in json.dumps(warning)  # nothing the proxy said
    text = logs.getvalue()  # every line, the libraries' debug lines included
    assert "wrong-MARKER" not in text
    assert_no_secret(text)


@pytest.mark.req("REQ-RES-008", "REQ-SEC-020", "REQ-CFG-004")
async def test_req_sec_020_proxy_credentials_never_in_errors_logs_or_reprs(
    proxies: Callable[..., Proxy],
    server_tls: Callable[..., ssl.SSLContext],
    client_tls: ssl.SSLContext,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With credentials configured, nothing rypsok renders shows them: the settings, the
    resolved proxy and the egress (repr, str), errors (str, repr, traceback), and every log
    line, httpcore2's debug lines included, of a successful tunnel, a forwarded request and
    a refusal.

    Proves THR-31. Proves THR-41.
    """
    monkeypatch.setenv(AUTH_VARIABLE, PROXY_CREDENTIALS)
    settings = proxy_settings(
        "http://127.0.0.1:1", engine_proxy_auth_env=AUTH_VARIABLE
    )  # the port is replaced below
    good = await proxies(names=ENGINE_NAMES, credentials=PROXY_CREDENTIALS).start()
    picky = await proxies(names=ENGINE_NAMES, credentials="someone:else").start()
    texts: list[str] = []
    with (
        captured_logs() as logs,
        serving(respond_each(body=b"ok"), tls=server_tls("engine.test")) as engine,
        serving(respond_each(body=b"searx")) as searxng,
    ):
        for proxy, works in ((good, True), (picky, False)):
            settings = proxy_settings(proxy.url, engine_proxy_auth_env=AUTH_VARIABLE)
            async with Egress(
                settings, USER_AGENT, extra_allow=("127.0.0.1",), ssl_context=client_tls
            ) as egress:
                resolved = engine_proxy_from(settings.egress, AddressPolicy())
                assert resolved is not None and resolved.credentials is not None
                texts += [repr(settings), settings.model_dump_json(), repr(resolved)]
                texts += [str(resolved), repr(egress.__dict__), repr(vars(egress))]
                for endpoint, explicit in (
                    (f"https://engine.test:{engine.port}/api", False),
                    (f"http://searxng.test:{searxng.port}/search", True),
                ):
                    if works:
                        assert (await send(egress, endpoint, explicit=explicit)).status == 200
                        continue
                    error = await failed(egress, endpoint, explicit=explicit)
                    assert error.reason == EgressReason.PROXY_FAILURE
                    texts += [str(error), repr(error), "".join(traceback.format_exception(error))]
    assert good.authorizations == [basic(PROXY_CREDENTIALS)] * 2  # they were really sent
    texts.append(logs.getvalue())
    assert "httpcore2" in texts[-1]  # the library's debug lines were captured
    assert_no_secret(*texts)


# --- configuration ---------------------------------------------------------------------------


@pytest.mark.req("REQ-RES-008", "REQ-CFG-004", "REQ-CFG-005")
@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("http://user:hunter2@proxy.example:3128", "by reference with engine_proxy_auth_env"),
        ("http://hunter2@proxy.example:3128", "must not carry credentials"),
        ("socks5://proxy.example:1080", "http://host:port"),
        ("proxy.example:3128", "http://host:port"),
        ("http://proxy.example", "must name its port"),
        ("http://proxy.example:3128/path", "scheme, host and port only"),
        ("http://proxy.example:3128?x=1", "scheme, host and port only"),
        ("http://proxy.example:99999", "1 to 65535"),
    ],
)
def test_req_res_008_proxy_url_shape_checked_at_load(value: str, message: str) -> None:
    """The key is named, the value (which could hold a password) is never repeated."""
    with pytest.raises(ConfigError) as caught:
        parse_settings({"schema_version": 1, "egress": {"engine_proxy": value}})
    text = str(caught.value)
    assert "invalid value for egress.engine_proxy" in text and message in text
    assert "hunter2" not in text and value not in text


@pytest.mark.req("REQ-RES-008", "REQ-CFG-005")
@pytest.mark.parametrize(
    ("proxy", "deny", "message"),
    [
        ("http://169.254.169.254:3128", [], "metadata"),
        ("http://metadata.google.internal:3128", [], "metadata"),
        ("http://proxy.corp.example:3128", ["proxy.corp.example"], "operator_deny"),
        ("http://10.1.2.3:3128", ["10.0.0.0/8"], "operator_deny"),
        ("http://proxy..example:3128", [], "http://host:port"),
    ],
)
def test_req_res_008_proxy_judged_by_the_policy_at_start(
    tmp_path: Path, proxy: str, deny: list[str], message: str
) -> None:
    """Start-up refuses a proxy the egress policy refuses (metadata, deny rules) or its
    URL parser rejects; a private or loopback proxy is the operator's own and is accepted.

    Proves THR-41.
    """
    path = tmp_path / "rypsok.toml"
    deny_toml = ", ".join(f'"{d}"' for d in deny)
    path.write_text(
        f'schema_version = 1\n[egress]\nengine_proxy = "{proxy}"\ndeny = [{deny_toml}]\n',
        encoding="utf-8",
    )
    with pytest.raises(
        ConfigurationError, match=r"invalid value for egress\.engine_proxy"
    ) as caught:
        load(str(path))
    assert message in str(caught.value)
    with pytest.raises(ValueError, match=r"\[egress\] engine_proxy"):
        Egress(proxy_settings(proxy, deny=deny), USER_AGENT)


@pytest.mark.req("REQ-RES-008")
@pytest.mark.parametrize(
    "proxy",
    ["http://10.1.2.3:3128", "https://squid:3128", "http://[::1]:8080", "http://127.0.0.1:1"],
)
async def test_req_res_008_operator_proxy_may_be_private(tmp_path: Path, proxy: str) -> None:
    """A private, loopback or single-label proxy is the operator's own: accepted at start."""
    path = tmp_path / "rypsok.toml"
    path.write_text(f'schema_version = 1\n[egress]\nengine_proxy = "{proxy}"\n', encoding="utf-8")
    settings, _ = load(str(path))
    assert settings.egress.engine_proxy == proxy
    async with Egress(settings, USER_AGENT):
        pass


@pytest.mark.req("REQ-RES-008", "REQ-CFG-004", "REQ-CFG-005")
@pytest.mark.parametrize(
    ("egress_toml", "variable", "file_text", "messages"),
    [
        (
            f'engine_proxy_auth_env = "{AUTH_VARIABLE}"',
            None,
            None,
            ("[egress] engine_proxy_auth_env", AUTH_VARIABLE, "unset or empty"),
        ),
        (
            f'engine_proxy_auth_env = "{AUTH_VARIABLE}"',
            "no-colon-MARKER-5f3a",
            None,
            ("[egress] engine_proxy_auth_env", "user:password"),
        ),
        (
            f'engine_proxy_auth_env = "{AUTH_VARIABLE}"',
            ":pw-MARKER-5f3a",
            None,
            ("[egress] engine_proxy_auth_env", "user:password"),
        ),
        (
            f'engine_proxy_auth_env = "{AUTH_VARIABLE}"',
            "user:pw-MARKER-5f3a\r\nX-Injected: 1",
            None,
            ("[egress] engine_proxy_auth_env", "control characters"),
        ),
        (
            'engine_proxy_auth_file = "{missing}"',
            None,
            None,
            ("[egress] engine_proxy_auth_file", "cannot read", "FileNotFoundError"),
        ),
        (
            'engine_proxy_auth_file = "{file}"',
            None,
            "\n",
            ("[egress] engine_proxy_auth_file", "unset or empty"),
        ),
        (
            'engine_proxy_auth_file = "{file}"',
            None,
            "pw-MARKER-5f3a\n",
            ("[egress] engine_proxy_auth_file", "user:password"),
        ),
        (
            f'engine_proxy_auth_env = "{AUTH_VARIABLE}"\nengine_proxy_auth_file = "{{file}}"',
            PROXY_CREDENTIALS,
            PROXY_CREDENTIALS,
            ("egress", "not both"),
        ),
        (
            'engine_proxy_auth = "user:pw-MARKER-5f3a"',
            None,
            None,
            ("egress.engine_proxy_auth holds a secret inline", "engine_proxy_auth_env"),
        ),
    ],
    ids=[
        "unset_variable",
        "no_colon",
        "no_user",
        "line_break",
        "missing_file",
        "empty_file",
        "file_without_colon",
        "both_keys",
        "inline",
    ],
)
def test_req_cfg_004_proxy_credentials_errors_name_the_key_never_the_value(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    egress_toml: str,
    variable: str | None,
    file_text: str | None,
    messages: tuple[str, ...],
) -> None:
    """Proxy credentials that cannot be used stop start-up with a message naming the key
    (and the variable or file it refers to), never the value; the egress component refuses
    them the same way.

    Proves THR-31. Proves THR-41.
    """
    monkeypatch.delenv(AUTH_VARIABLE, raising=False)
    if variable is not None:
        monkeypatch.setenv(AUTH_VARIABLE, variable)
    auth_file = tmp_path / "proxy-auth"
    if file_text is not None:
        auth_file.write_text(file_text, encoding="utf-8")
    egress_toml = egress_toml.replace("{file}", str(auth_file)).replace(
        "{missing}", str(tmp_path / "absent")
    )
    path = tmp_path / "rypsok.toml"
    path.write_text(
        f'schema_version = 1\n[egress]\nengine_proxy = "http://127.0.0.1:3128"\n{egress_toml}\n',
        encoding="utf-8",
    )
    with pytest.raises(ConfigurationError) as caught:
        load(str(path))
    text = str(caught.value)
    for message in messages:
        assert message in text
    assert "MARKER" not in text and PROXY_PASSWORD not in text
    assert caught.value.__cause__ is None


@pytest.mark.req("REQ-RES-008", "REQ-CFG-004")
def test_req_cfg_004_proxy_credentials_need_a_proxy_and_resolve_at_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Credentials without ``engine_proxy`` are refused; with it they resolve at start to a
    Secret (shown as ``Secret('***')``); the egress component refuses an unset variable
    naming the key; and credentials written into the URL are pointed at the new keys."""
    with pytest.raises(ConfigError, match="need engine_proxy"):
        parse_settings({"schema_version": 1, "egress": {"engine_proxy_auth_env": AUTH_VARIABLE}})
    monkeypatch.setenv(AUTH_VARIABLE, PROXY_CREDENTIALS)
    path = tmp_path / "rypsok.toml"
    path.write_text(
        "schema_version = 1\n[egress]\n"
        f'engine_proxy = "http://127.0.0.1:3128"\nengine_proxy_auth_env = "{AUTH_VARIABLE}"\n',
        encoding="utf-8",
    )
    settings, _ = load(str(path))
    credentials = resolve_proxy_credentials(settings.egress)
    assert isinstance(credentials, Secret) and credentials.reveal() == PROXY_CREDENTIALS
    proxy = engine_proxy_from(settings.egress, AddressPolicy())
    assert proxy is not None
    assert proxy.basic_auth() == (PROXY_USER.encode(), PROXY_PASSWORD.encode())
    assert "Secret('***')" in repr(proxy) and PROXY_PASSWORD not in repr(proxy)
    monkeypatch.delenv(AUTH_VARIABLE)
    with pytest.raises(ValueError, match=r"\[egress\] engine_proxy_auth_env") as caught:
        Egress(settings, USER_AGENT)
    assert AUTH_VARIABLE in str(caught.value)
    with pytest.raises(ValueError, match="engine_proxy_auth_env") as refused:
        parse_engine_proxy("http://svc:pw-MARKER-5f3a@127.0.0.1:3128", AddressPolicy())
    assert "MARKER" not in str(refused.value)


@pytest.mark.req("REQ-RES-008", "REQ-OBS-005")
async def test_req_res_008_the_egress_logs_under_rypsoks_logger_by_default(
    proxies: Callable[..., Proxy], make_egress: MakeEgress
) -> None:
    """Without a logger passed in, the egress's events go to ``rypsok.egress``, a child of the
    logger whose level the operator sets (``[log] level``); the libraries' loggers stay at
    WARNING, so an event logged elsewhere would escape that level."""
    proxy = await proxies(names=ENGINE_NAMES, credentials=PROXY_CREDENTIALS).start()
    with captured_logs() as logs:
        egress = make_egress(proxy_settings(proxy.url))
        await failed(egress, "http://searxng.test:8888/search", explicit=True)
    lines = logs.getvalue().splitlines()
    assert "rypsok.egress WARNING engine_proxy_authentication" in lines


def bounded_settings(proxy: Proxy, dns: DNSServer, requests_in_flight: int) -> Settings:
    return Settings(
        egress=EgressSettings(engine_proxy=proxy.url, dns_servers=[dns.address]),
        search=SearchSettings(requests_in_flight=requests_in_flight),
    )


@pytest.mark.req("REQ-RES-008", "REQ-SEC-013")
async def test_req_res_008_the_proxy_pool_has_the_direct_pools_bounds(
    proxies: Callable[..., Proxy],
    engine_dns: DNSServer,
    server_tls: Callable[..., ssl.SSLContext],
    client_tls: ssl.SSLContext,
) -> None:
    """Through the proxy, an engine origin holds at most ``requests_in_flight`` tunnels at
    once and keeps ``keepalive_per_origin`` of them idle after a burst, as without a proxy
    (tests/egress/test_gateway_edges.py)."""
    proxy = await proxies(names=ENGINE_NAMES).start()
    counter = OpenConnections(together=3, hold_s=1.0)
    with serving(counter, tls=server_tls("engine.test")) as engine:
        endpoint = f"https://engine.test:{engine.port}/api"
        settings = bounded_settings(proxy, engine_dns, requests_in_flight=2)
        async with Egress(
            settings, USER_AGENT, extra_allow=["127.0.0.1"], ssl_context=client_tls
        ) as egress:
            await at_once(3, send, egress, endpoint)
    assert (len(engine.received), counter.most, proxy.connections) == (3, 2, 2)

    proxy = await proxies(names=ENGINE_NAMES).start()
    counter = OpenConnections(together=3, hold_s=10.0)
    with serving(counter, tls=server_tls("engine.test")) as engine:
        endpoint = f"https://engine.test:{engine.port}/api"
        settings = bounded_settings(proxy, engine_dns, requests_in_flight=3)
        async with Egress(
            settings,
            USER_AGENT,
            extra_allow=["127.0.0.1"],
            ssl_context=client_tls,
            keepalive_per_origin=1,
        ) as egress:
            await at_once(3, send, egress, endpoint)
            await at_once(3, send, egress, endpoint)
    # The second burst reuses the one tunnel kept idle and opens two more.
    assert (len(engine.received), proxy.connections) == (6, 5)


@pytest.mark.req("REQ-RES-008", "REQ-SEC-013")
async def test_req_res_008_an_idle_tunnel_expires(
    make_egress: MakeEgress,
    proxies: Callable[..., Proxy],
    engine_dns: DNSServer,
    server_tls: Callable[..., ssl.SSLContext],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A tunnel idle for longer than ENGINE_KEEPALIVE_S is closed, not reused."""
    monkeypatch.setattr(gateway, "ENGINE_KEEPALIVE_S", 0.05)
    proxy = await proxies(names=ENGINE_NAMES).start()
    with serving(respond_each(body=b"{}"), tls=server_tls("engine.test")) as engine:
        egress = make_egress(proxy_settings(proxy.url, dns=engine_dns))
        endpoint = f"https://engine.test:{engine.port}/api"
        await send(egress, endpoint)
        await anyio.sleep(0.3)
        await send(egress, endpoint)
    assert (len(engine.received), proxy.connections) == (2, 2)
