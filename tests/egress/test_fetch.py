"""The agent-directed profile against real local servers (REQ-SEC-006..013, REQ-FETCH-006/007).

Local servers listen on loopback only; the tests reach them through allow rules injected in
code, over the production policy (REQ-TEST-005).
"""

from __future__ import annotations

import gzip
import ssl
import threading
from collections.abc import Callable

import anyio
import httpcore2
import pytest

from rypsok.egress import CheckedURL, Egress, EgressError, EgressReason, FetchedResponse
from rypsok.egress.addresses import Category
from rypsok.egress.client import exchange
from tests.fakes.streamed_body import StreamedBody

from ._support import (
    USER_AGENT,
    Conn,
    DNSServer,
    HTTPServer,
    make_settings,
    respond_each,
    serving,
    wait_for,
    zero_bomb,
)
from .conftest import MakeEgress

pytestmark = pytest.mark.anyio

MiB = 1 << 20
GUARD_S = 30  # an outer bound so that a broken deadline fails the test instead of hanging it


async def fetch(
    egress: Egress,
    url: str | CheckedURL,
    *,
    max_bytes: int = MiB,
    total_timeout_s: float = 10,
    connect_timeout_s: float = 3,
) -> FetchedResponse:
    checked = egress.check_url(url, allow_http=True) if isinstance(url, str) else url
    with anyio.fail_after(GUARD_S):
        return await egress.get(
            checked,
            accept="text/html,text/plain;q=0.9",
            max_bytes=max_bytes,
            connect_timeout_s=connect_timeout_s,
            total_timeout_s=total_timeout_s,
        )


async def refused(egress: Egress, url: str | CheckedURL, **kwargs: float) -> EgressError:
    with pytest.raises(EgressError) as caught:
        await fetch(egress, url, **kwargs)  # type: ignore[arg-type]
    return caught.value


# --- the request ------------------------------------------------------------------------------


@pytest.mark.req("REQ-SEC-009")
async def test_req_sec_009_get_with_only_the_headers_rypsok_sets(
    make_egress: MakeEgress, loopback_only: list[str]
) -> None:
    """One GET with Host, User-Agent, Accept, Accept-Encoding, Connection; no fragment sent.

    Proves THR-25.
    """
    with serving(respond_each(body=b"hello")) as server:
        egress = make_egress(make_settings(ports=[server.port]))
        response = await fetch(egress, f"http://127.0.0.1:{server.port}/page?q=1#section")
    assert (response.status, response.body) == (200, b"hello")
    assert response.url.fragment == "section"
    assert str(response.peer) == "127.0.0.1"
    assert loopback_only == ["127.0.0.1"]
    [request] = server.received
    assert (request.method, request.target) == ("GET", "/page?q=1")
    assert request.names == ["host", "user-agent", "accept", "accept-encoding", "connection"]
    assert request.header("host") == f"127.0.0.1:{server.port}"
    assert request.header("user-agent") == USER_AGENT
    assert request.header("accept-encoding") == "gzip, deflate, br"
    assert request.header("connection") == "close"


@pytest.mark.req("REQ-SEC-007")
async def test_req_sec_007_ipv6_literal_connects_to_that_address(make_egress: MakeEgress) -> None:
    with serving(respond_each(body=b"six"), host="::1") as server:
        egress = make_egress(make_settings(ports=[server.port]), allow=["::1"])
        response = await fetch(egress, f"http://[::1]:{server.port}/")
    assert response.body == b"six"
    assert str(response.peer) == "::1"
    assert server.received[0].header("host") == f"[::1]:{server.port}"


@pytest.mark.req("REQ-TEST-005")
async def test_req_test_005_production_policy_refuses_loopback(make_egress: MakeEgress) -> None:
    """Without the injected allow rule the local server is unreachable, even with a
    hand-built CheckedURL that skipped check_url (REQ-SEC-006).

    Proves THR-02.
    """
    with serving(respond_each()) as server:
        egress = make_egress(make_settings(ports=[server.port]), allow=())
        with pytest.raises(EgressError) as caught:
            egress.check_url(f"http://127.0.0.1:{server.port}/", allow_http=True)
        assert caught.value.reason == EgressReason.ADDRESS_DENIED
        forged = CheckedURL("http", "127.0.0.1", server.port, "/", None, None)
        error = await refused(egress, forged)
        assert (error.reason, error.category) == (EgressReason.ADDRESS_DENIED, Category.LOOPBACK)
        other_port = CheckedURL("http", "example.com", 8080, "/", None, None)
        assert (await refused(egress, other_port)).reason == EgressReason.PORT
    assert server.connections == 0


@pytest.mark.req("REQ-FETCH-006")
async def test_req_fetch_006_redirect_returned_not_followed(make_egress: MakeEgress) -> None:
    """A 3xx comes back with its Location; the target is checked by the caller's next call,
    and a refused target is refused (REQ-SEC-008, REQ-TEST-005)."""
    with serving(respond_each()) as target:
        locations = [
            f"http://127.0.0.1:{target.port}/next",
            "http://169.254.169.254/latest/meta-data/",
            f"http://127.0.0.2:{target.port}/",
            "http://[::ffff:10.0.0.1]/",
        ]

        def redirect(conn: Conn) -> None:
            while (request := conn.read_request()) is not None:
                index = int(request.target.strip("/"))
                conn.respond(302, [("Location", locations[index])])

        with serving(redirect) as origin:
            egress = make_egress(make_settings(ports=[origin.port, target.port]))
            first = await fetch(egress, f"http://127.0.0.1:{origin.port}/0")
            assert (first.status, first.location) == (302, locations[0])
            assert target.connections == 0
            follow = await fetch(egress, first.location or "")
            assert follow.status == 200
            for index, category in (
                (1, Category.METADATA),
                (2, Category.LOOPBACK),
                (3, Category.PRIVATE),
            ):
                response = await fetch(egress, f"http://127.0.0.1:{origin.port}/{index}")
                with pytest.raises(EgressError) as caught:
                    egress.check_url(response.location or "", allow_http=True)
                assert caught.value.category == category


@pytest.mark.req("REQ-FETCH-007")
async def test_req_fetch_007_no_cookies_kept_or_sent(make_egress: MakeEgress) -> None:
    handler = respond_each(
        headers=[("Set-Cookie", "session=secret"), ("Content-Type", "text/plain")]
    )
    with serving(handler) as server:
        egress = make_egress(make_settings(ports=[server.port]))
        first = await fetch(egress, f"http://127.0.0.1:{server.port}/")
        await fetch(egress, f"http://127.0.0.1:{server.port}/")
    assert "set-cookie" not in first.headers
    assert all(r.header("cookie") is None for r in server.received)
    assert all(r.header("authorization") is None for r in server.received)


async def test_headers_are_lower_cased_and_bounded(make_egress: MakeEgress) -> None:
    many = [(f"X-H{i}", "v") for i in range(200)]
    with (
        serving(respond_each(headers=[("X-Thing", "a"), ("x-thing", "b")])) as ok,
        serving(respond_each(headers=many)) as flood,
    ):
        egress = make_egress(make_settings(ports=[ok.port, flood.port]))
        response = await fetch(egress, f"http://127.0.0.1:{ok.port}/")
        assert response.headers["x-thing"] == "a, b"
        error = await refused(egress, f"http://127.0.0.1:{flood.port}/")
    assert error.reason == EgressReason.PROTOCOL_ERROR


# --- TLS and proxies ---------------------------------------------------------------------------


@pytest.mark.req("REQ-SEC-007")
async def test_req_sec_007_tls_verifies_the_original_host_name(
    make_egress: MakeEgress,
    server_tls: Callable[..., ssl.SSLContext],
    dns_zone: Callable[[dict[str, list[str]]], DNSServer],
) -> None:
    """The connection goes to the checked address, and TLS checks the name in the URL:
    a certificate for another name fails (SNI and certificate check).

    Proves THR-39.
    """
    dns = dns_zone({"good.test": ["127.0.0.1"], "other.test": ["127.0.0.1"]})
    with serving(respond_each(body=b"secure"), tls=server_tls("good.test")) as server:
        egress = make_egress(make_settings(ports=[server.port], dns_server=dns.address))
        response = await fetch(egress, f"https://good.test:{server.port}/")
        assert (response.body, str(response.peer)) == (b"secure", "127.0.0.1")
        assert server.sni == ["good.test"]
        assert server.received[0].header("host") == f"good.test:{server.port}"
        error = await refused(egress, f"https://other.test:{server.port}/")
        assert error.reason == EgressReason.TLS_FAILURE
        error = await refused(egress, f"https://127.0.0.1:{server.port}/")
        assert error.reason == EgressReason.TLS_FAILURE
    assert len(server.received) == 1


async def test_tls_to_an_address_literal_checks_the_address(
    make_egress: MakeEgress, server_tls: Callable[..., ssl.SSLContext]
) -> None:
    with serving(respond_each(body=b"ip"), tls=server_tls("127.0.0.1")) as server:
        egress = make_egress(make_settings(ports=[server.port]))
        response = await fetch(egress, f"https://127.0.0.1:{server.port}/")
    assert response.body == b"ip"


async def test_untrusted_certificate_fails(
    make_egress: MakeEgress, server_tls: Callable[..., ssl.SSLContext]
) -> None:
    """The system trust store does not know the test CA: the handshake must fail.

    Proves THR-39.
    """
    with serving(respond_each(), tls=server_tls("127.0.0.1")) as server:
        egress = Egress(make_settings(ports=[server.port]), USER_AGENT, extra_allow=["127.0.0.1"])
        try:
            error = await refused(egress, f"https://127.0.0.1:{server.port}/")
        finally:
            await egress.aclose()
    assert error.reason == EgressReason.TLS_FAILURE


def test_non_verifying_tls_context_refused() -> None:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    with pytest.raises(ValueError):
        Egress(make_settings(), USER_AGENT, ssl_context=context)


PROXY_VARIABLES = (
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
)


@pytest.mark.req("REQ-SEC-007")
async def test_req_sec_007_proxy_environment_ignored(
    make_egress: MakeEgress,
    monkeypatch: pytest.MonkeyPatch,
    server_tls: Callable[..., ssl.SSLContext],
    dns_zone: Callable[[dict[str, list[str]]], DNSServer],
) -> None:
    """Proxy variables pointing at a local listener are never used (REQ-TEST-015).

    Proves THR-32.
    """
    dns = dns_zone({"site.test": ["127.0.0.1"]})
    with (
        serving(respond_each()) as trap,
        serving(respond_each(body=b"direct")) as plain,
        serving(respond_each(body=b"direct tls"), tls=server_tls("site.test")) as secure,
    ):
        for name in PROXY_VARIABLES:
            monkeypatch.setenv(name, f"http://127.0.0.1:{trap.port}")
        monkeypatch.setenv("NO_PROXY", "")
        egress = make_egress(make_settings(ports=[plain.port, secure.port], dns_server=dns.address))
        assert (await fetch(egress, f"http://site.test:{plain.port}/")).body == b"direct"
        assert (await fetch(egress, f"https://site.test:{secure.port}/")).body == b"direct tls"
    assert trap.connections == 0


# --- size bounds -------------------------------------------------------------------------------


def streaming(
    headers: list[tuple[str, str]], body: bytes, chunk: int = 64 * 1024
) -> Callable[[Conn], None]:
    """Answer once with the given head, streaming the body until done or the client leaves."""

    def handler(conn: Conn) -> None:
        if conn.read_request() is None:
            return
        head = "HTTP/1.1 200 OK\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers) + "\r\n"
        if not conn.send(head.encode()):
            return
        for i in range(0, len(body), chunk):
            if not conn.send(body[i : i + chunk]):
                return

    return handler


@pytest.mark.req("REQ-SEC-013")
@pytest.mark.parametrize(("encoding", "wbits"), [("gzip", 31), ("deflate", 15), ("deflate", -15)])
async def test_req_sec_013_compression_bomb_stops_at_the_bound(
    make_egress: MakeEgress, encoding: str, wbits: int
) -> None:
    """A 1 MiB body inflating to 1 GiB ends with too_large at the byte bound (REQ-SEC-010).

    Proves THR-22.
    """
    bomb = zero_bomb(wbits, 1024)
    handler = streaming([("Content-Encoding", encoding), ("Connection", "close")], bomb)
    with serving(handler) as server:
        egress = make_egress(make_settings(ports=[server.port]))
        error = await refused(egress, f"http://127.0.0.1:{server.port}/", max_bytes=2 * MiB)
    assert error.reason == EgressReason.TOO_LARGE


@pytest.mark.req("REQ-SEC-013")
async def test_req_sec_013_br_compression_bomb_stops_at_the_bound(make_egress: MakeEgress) -> None:
    """A br body of 190 KB inflating to 1 GiB ends with too_large at the byte bound, as gzip
    and deflate do (REQ-SEC-010); br is offered, so a server may send it."""
    import brotli

    compressor = brotli.Compressor(quality=1)
    bomb = b"".join(compressor.process(bytes(MiB)) for _ in range(1024)) + compressor.finish()
    handler = streaming([("Content-Encoding", "br"), ("Connection", "close")], bomb)
    with serving(handler) as server:
        egress = make_egress(make_settings(ports=[server.port]))
        error = await refused(egress, f"http://127.0.0.1:{server.port}/", max_bytes=2 * MiB)
    assert error.reason == EgressReason.TOO_LARGE


@pytest.mark.req("REQ-SEC-010")
async def test_req_sec_010_content_length_is_never_trusted(make_egress: MakeEgress) -> None:
    """Content-Length is a hint: small claims do not raise the bound, large claims do not
    make a short body complete, and close-delimited bodies are counted too."""
    small_claim_gzip = streaming(
        [("Content-Encoding", "gzip"), ("Content-Length", "10")], zero_bomb(31, 4)
    )
    no_length = streaming([("Connection", "close")], b"x" * (3 * MiB))
    huge_claim_short_body = streaming([("Content-Length", str(1 << 30))], b"short")
    chunked = streaming(
        [("Transfer-Encoding", "chunked")],
        b"".join(b"%x\r\n%s\r\n" % (MiB, b"y" * MiB) for _ in range(3)) + b"0\r\n\r\n",
    )
    with (
        serving(no_length) as s1,
        serving(huge_claim_short_body) as s2,
        serving(chunked) as s3,
        serving(small_claim_gzip) as s4,
    ):
        egress = make_egress(make_settings(ports=[s.port for s in (s1, s2, s3, s4)]))
        assert (
            await refused(egress, f"http://127.0.0.1:{s1.port}/")
        ).reason == EgressReason.TOO_LARGE
        s2_error = await refused(egress, f"http://127.0.0.1:{s2.port}/")
        assert s2_error.reason == EgressReason.PROTOCOL_ERROR  # a body cut short is refused
        assert (
            await refused(egress, f"http://127.0.0.1:{s3.port}/")
        ).reason == EgressReason.TOO_LARGE
        # The 10-byte claim frames 10 wire bytes: a truncated gzip stream, never more.
        error = await refused(egress, f"http://127.0.0.1:{s4.port}/")
        assert error.reason == EgressReason.PROTOCOL_ERROR


async def test_ambiguous_framing_refused(make_egress: MakeEgress) -> None:
    """Content-Length together with Transfer-Encoding is refused, not resolved."""
    both = streaming(
        [("Content-Length", "3"), ("Transfer-Encoding", "chunked")], b"5\r\nhello\r\n0\r\n\r\n"
    )
    with serving(both) as server:
        egress = make_egress(make_settings(ports=[server.port]))
        error = await refused(egress, f"http://127.0.0.1:{server.port}/")
    assert error.reason == EgressReason.PROTOCOL_ERROR


async def test_body_within_the_bound_is_returned_whole(make_egress: MakeEgress) -> None:
    body = b"z" * MiB
    with serving(streaming([("Connection", "close")], body)) as server:
        egress = make_egress(make_settings(ports=[server.port]))
        response = await fetch(egress, f"http://127.0.0.1:{server.port}/", max_bytes=MiB)
    assert response.body == body


# --- time bounds -------------------------------------------------------------------------------


def trickle(head_first: bool) -> Callable[[Conn], None]:
    """Send one byte every 2 s: of the body after a whole head, or of the head itself."""

    def handler(conn: Conn) -> None:
        if conn.read_request() is None:
            return
        if head_first and not conn.send(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n"):
            return
        payload = b"x" * 1000 if head_first else b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"
        for byte in payload:
            if not conn.send(bytes([byte])) or conn.server.idle(2):
                return

    return handler


@pytest.mark.req("REQ-SEC-011")
@pytest.mark.parametrize("head_first", [True, False])
async def test_req_sec_011_trickling_server_ends_at_the_total_deadline(
    make_egress: MakeEgress, head_first: bool
) -> None:
    """1 byte every 2 s never resets the clock: the call ends with timeout at its deadline."""
    with serving(trickle(head_first)) as server:
        egress = make_egress(make_settings(ports=[server.port]))
        error = await refused(egress, f"http://127.0.0.1:{server.port}/", total_timeout_s=3)
    assert error.reason == EgressReason.TIMEOUT


async def test_connection_refused(make_egress: MakeEgress) -> None:
    server = HTTPServer(respond_each())
    port = server.port
    server.stop()  # the port is now closed
    egress = make_egress(make_settings(ports=[port]))
    assert (
        await refused(egress, f"http://127.0.0.1:{port}/")
    ).reason == EgressReason.CONNECT_FAILED


# --- cancellation and lifecycle ----------------------------------------------------------------


@pytest.mark.req("REQ-SEC-011")
async def test_cancellation_aborts_the_request_and_closes_its_connection(
    make_egress: MakeEgress,
) -> None:
    """A cancelled call stops at once and its connection is closed, not left to linger."""
    served = threading.Event()

    def stall(conn: Conn) -> None:
        if conn.read_request() is None:
            return
        conn.send(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\npartial")
        served.set()
        if conn.wait_closed(GUARD_S):
            conn.server.closed.set()

    finished: list[bool] = []
    with serving(stall) as server:
        egress = make_egress(make_settings(ports=[server.port]))
        url = egress.check_url(f"http://127.0.0.1:{server.port}/", allow_http=True)

        async def call() -> None:
            await egress.get(
                url, accept="*/*", max_bytes=MiB, connect_timeout_s=3, total_timeout_s=600
            )
            finished.append(True)

        with anyio.fail_after(GUARD_S):
            async with anyio.create_task_group() as group:
                group.start_soon(call)
                assert await wait_for(served, GUARD_S)
                group.cancel_scope.cancel()
            assert await wait_for(server.closed, GUARD_S)
    assert finished == []


async def test_closed_egress_refuses(make_egress: MakeEgress) -> None:
    egress = make_egress()
    url = egress.check_url("https://example.com/", allow_http=False)
    await egress.aclose()
    assert (await refused(egress, url)).reason == EgressReason.CLOSED


async def test_invalid_accept_header_refused(make_egress: MakeEgress) -> None:
    egress = make_egress()
    url = egress.check_url("https://example.com/", allow_http=False)
    with pytest.raises(EgressError) as caught:
        await egress.get(
            url, accept="a\r\nX: y", max_bytes=10, connect_timeout_s=1, total_timeout_s=1
        )
    assert caught.value.reason == EgressReason.INVALID_REQUEST


# --- a bounded prefix (on_excess="truncate", as robots.txt is read) ---------------------------


async def prefix(egress: Egress, url: str, max_bytes: int) -> FetchedResponse:
    checked = egress.check_url(url, allow_http=True)
    with anyio.fail_after(GUARD_S):
        return await egress.get(
            checked,
            accept="text/plain",
            max_bytes=max_bytes,
            connect_timeout_s=3,
            total_timeout_s=10,
            on_excess="truncate",
        )


@pytest.mark.req("REQ-SEC-010", "REQ-CMP-005")
async def test_a_prefix_read_stops_at_the_bound_and_closes_the_connection(
    make_egress: MakeEgress,
) -> None:
    """With ``on_excess="truncate"`` a 256 MiB body gives its first max_bytes bytes, marked
    truncated; the rest is never read: the server sees the connection closed long before it
    could send the body (what it sent is bounded by the socket buffers, not by the body)."""
    block = bytes(range(256)) * 256
    size = 256 * MiB
    endless = StreamedBody(size, [("Content-Length", str(size))], block=block)
    with serving(endless) as server:
        egress = make_egress(make_settings(ports=[server.port]))
        started = anyio.current_time()
        response = await prefix(egress, f"http://127.0.0.1:{server.port}/", 100_000)
        elapsed = anyio.current_time() - started
        assert await wait_for(endless.done, GUARD_S)
    assert (response.status, response.truncated) == (200, True)
    assert response.body == (block * 2)[:100_000]
    assert endless.left_early
    assert endless.sent < size // 8
    assert elapsed < 5


@pytest.mark.req("REQ-SEC-010", "REQ-CMP-005")
async def test_a_prefix_read_ends_at_the_bound_without_waiting_for_the_rest(
    make_egress: MakeEgress,
) -> None:
    """A server that sends a little more than the bound and then stalls with 10 MiB still
    promised: the read ends as soon as the bound is passed (well before the 10 s deadline),
    and the server sees its connection closed."""
    sent = threading.Event()

    def stall(conn: Conn) -> None:
        if conn.read_request() is None:
            return
        conn.send(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % (10 * MiB))
        conn.send(b"s" * 100_010)
        sent.set()
        if conn.wait_closed(GUARD_S):
            conn.server.closed.set()

    with serving(stall) as server:
        egress = make_egress(make_settings(ports=[server.port]))
        started = anyio.current_time()
        response = await prefix(egress, f"http://127.0.0.1:{server.port}/", 100_000)
        elapsed = anyio.current_time() - started
        assert await wait_for(server.closed, GUARD_S)
    assert (response.truncated, response.body) == (True, b"s" * 100_000)
    assert elapsed < 5


@pytest.mark.req("REQ-SEC-010")
async def test_the_default_still_refuses_what_is_longer_than_the_bound(
    make_egress: MakeEgress,
) -> None:
    """web_fetch pages and engine answers keep ``too_large``: the prefix is asked for only."""
    endless = StreamedBody(4 * MiB, [("Connection", "close")])
    with serving(endless) as server:
        egress = make_egress(make_settings(ports=[server.port]))
        error = await refused(egress, f"http://127.0.0.1:{server.port}/", max_bytes=100_000)
    assert error.reason == EgressReason.TOO_LARGE


@pytest.mark.req("REQ-SEC-010")
@pytest.mark.parametrize(("extra", "truncated"), [(0, False), (1, True)])
async def test_a_prefix_read_of_exactly_the_bound_is_whole_one_more_byte_is_cut(
    make_egress: MakeEgress, extra: int, truncated: bool
) -> None:
    body = b"r" * (MiB + extra)
    with serving(streaming([("Connection", "close")], body)) as server:
        egress = make_egress(make_settings(ports=[server.port]))
        response = await prefix(egress, f"http://127.0.0.1:{server.port}/", MiB)
    assert response.truncated is truncated
    assert response.body == body[:MiB]


@pytest.mark.req("REQ-SEC-013", "REQ-CMP-005")
@pytest.mark.parametrize(("encoding", "wbits"), [("gzip", 31), ("deflate", 15), ("deflate", -15)])
async def test_a_prefix_read_of_a_compression_bomb_stops_at_the_bound(
    make_egress: MakeEgress, encoding: str, wbits: int
) -> None:
    """A body inflating to 1 GiB gives exactly its first max_bytes decoded bytes: the bound
    counts decoded bytes as they are produced, in prefix mode too.

    Proves THR-22 for the prefix read.
    """
    bomb = zero_bomb(wbits, 1024)
    handler = streaming([("Content-Encoding", encoding), ("Connection", "close")], bomb)
    with serving(handler) as server:
        egress = make_egress(make_settings(ports=[server.port]))
        response = await prefix(egress, f"http://127.0.0.1:{server.port}/", 2 * MiB)
    assert response.truncated
    assert response.body == bytes(2 * MiB)


@pytest.mark.req("REQ-SEC-010")
async def test_a_prefix_read_is_bounded_on_the_wire_too(make_egress: MakeEgress) -> None:
    """Raw bytes that decode to almost nothing (one short gzip member, then empty members
    without end) stop at the raw bound: refused by default, a cut prefix in prefix mode."""
    empty_member = gzip.compress(b"")
    assert len(empty_member) <= 32
    members = gzip.compress(b"hello\n") + empty_member * (MiB // len(empty_member))
    handler = streaming([("Content-Encoding", "gzip"), ("Connection", "close")], members)
    with serving(handler) as server, serving(handler) as other:
        egress = make_egress(make_settings(ports=[server.port, other.port]))
        response = await prefix(egress, f"http://127.0.0.1:{server.port}/", 1024)
        error = await refused(egress, f"http://127.0.0.1:{other.port}/", max_bytes=1024)
    assert (response.truncated, response.body) == (True, b"hello\n")
    assert error.reason == EgressReason.TOO_LARGE


async def test_a_prefix_read_never_leaves_its_connection_in_a_pool() -> None:
    """The rest of a cut body is unread, so its connection cannot carry another request:
    :func:`exchange` closes it, where a body read to its end leaves its connection idle in the
    pool for the next request."""
    body = b"p" * (2 * MiB)

    def keep_alive(conn: Conn) -> None:
        while conn.read_request() is not None:
            if not conn.respond(200, (("Content-Type", "text/plain"),), body):
                return

    with serving(keep_alive) as server:
        async with httpcore2.AsyncConnectionPool(max_keepalive_connections=4) as pool:

            def request() -> httpcore2.Request:
                return httpcore2.Request(
                    "GET",
                    f"http://127.0.0.1:{server.port}/",
                    headers=[("Host", f"127.0.0.1:{server.port}")],
                )

            with anyio.fail_after(GUARD_S):
                whole = await exchange(pool, request(), max_bytes=4 * MiB)
                assert (whole.truncated, len(whole.body), len(pool.connections)) == (
                    False,
                    2 * MiB,
                    1,
                )
                cut = await exchange(pool, request(), max_bytes=MiB, on_excess="truncate")
                assert (cut.truncated, cut.body) == (True, body[:MiB])
                assert pool.connections == []
                again = await exchange(pool, request(), max_bytes=4 * MiB)
        assert again.body == body
    assert server.connections == 2  # the first connection served twice, the cut one once
