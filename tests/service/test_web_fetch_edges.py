"""web_fetch at its edges, through the service as it is built: the redirect bound (LIM-F7),
an https to http downgrade, cross-host redirects followed by the operator's choice, the
http to https upgrade over real TLS, the connect timeout (LIM-F6), and the start-up line that
states the extraction containment.

Servers run on 127.0.0.0/8 only, reached through the explicit allow rule injected in code;
names come from a local DNS server and certificates from a test CA (REQ-TEST-005).
"""

from __future__ import annotations

import gc
import json
import socket
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager

import pytest

from rypsok.config.limits import limit
from rypsok.fetch.sandbox import PROCESS
from tests.egress._support import Conn, DNSServer, serving, static_zone
from tests.fakes.http_server import FakeHTTPServer, Reply, fake_http_server
from tests.fakes.loopback_guard import guard_loopback
from tests.service._fetch_support import (
    ARTICLE,
    HTML,
    Lines,
    error_of,
    fetch,
    fetch_services,
    make_ca,
    server_context,
)

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True)
def _loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    guard_loopback(monkeypatch)


@pytest.fixture
def dns() -> Iterator[DNSServer]:
    """site.test, a.test and b.test on 127.0.0.1; anything else does not exist."""
    names = ("site.test", "a.test", "b.test")
    server = DNSServer(static_zone({name: ["127.0.0.1"] for name in names})).start()
    yield server
    server.stop()


def codes(data: dict[str, object]) -> dict[str, object]:
    """The notices of a result by code: their counts (or None)."""
    notices = data.get("notices") or []
    assert isinstance(notices, list)
    return {n["code"]: n.get("count") for n in notices}


def chain(server: FakeHTTPServer, name: str, redirects: int) -> str:
    """``redirects`` same-host redirects /name/0 -> /name/1 -> ... ending at a page; the path
    of the first."""
    for i in range(redirects):
        server.replies[f"/{name}/{i}"] = Reply(
            status=301, headers=(("Location", f"/{name}/{i + 1}"),)
        )
    server.replies[f"/{name}/{redirects}"] = Reply(body=ARTICLE, headers=HTML)
    return f"/{name}/0"


# --- redirects (REQ-FETCH-006, REQ-SEC-008) ------------------------------------------------


async def test_req_fetch_006_lim_f7_same_host_redirects_are_followed_and_one_more_is_not() -> None:
    """REQ-FETCH-006, LIM-F7: exactly LIM-F7 same-host redirects are followed (the notice
    counts them); one more ends the call with unavailable / http_status giving the redirect's
    status and saying the page redirects too many times, and the next target is never
    requested."""
    bound = limit("LIM-F7")
    with fake_http_server() as server:
        within = chain(server, "within", bound)
        beyond = chain(server, "beyond", bound + 1)
        async with fetch_services(server.port) as services:
            ok = await fetch(services, server.url(within))
            too_many = await fetch(services, server.url(beyond))
    assert ok["outcome"] == "ok", ok
    assert ok["url"] == server.url(f"/within/{bound}")
    assert codes(ok)["redirect_followed"] == bound
    assert error_of(too_many) == ("unavailable", "http_status")
    assert too_many["error"]["detail"]["status"] == 301
    assert "redirects too many times" in too_many["error"]["message"]
    requested = [r.path for r in server.requests if r.path.startswith("/beyond/")]
    assert requested == [f"/beyond/{i}" for i in range(bound + 1)]  # not /beyond/<bound+1>


def page_handler(
    pages: Mapping[str, tuple[int, tuple[tuple[str, str], ...], bytes]],
) -> Callable[[Conn], None]:
    """A keep-alive handler answering each path from ``pages``; 404 for others."""

    def handler(conn: Conn) -> None:
        while (request := conn.read_request()) is not None:
            status, headers, body = pages.get(request.target, (404, HTML, b""))
            if not conn.respond(status, headers, body):
                return

    return handler


@pytest.mark.parametrize("allow_http", [False, True])
async def test_req_fetch_010_an_https_page_redirecting_to_http(allow_http: bool) -> None:
    """REQ-FETCH-010, REQ-SEC-009: a redirect from https to plain http on the same host is a
    downgrade. Without ``[fetch] allow_http`` it ends the call with denied / scheme and the
    http URL is neither requested nor upgraded; with it, the hop is followed like any other
    same-host redirect and the response states the http URL."""
    ca, client = make_ca()
    with fake_http_server() as plain:
        plain.replies["/tides"] = Reply(body=ARTICLE, headers=HTML)
        target = plain.url("/tides")
        pages = {"/old": (301, (("Location", target),), b"")}
        with serving(page_handler(pages), tls=server_context(ca, "127.0.0.1")) as secure:
            async with fetch_services(
                secure.port, plain.port, fetch={"allow_http": allow_http}, tls=client
            ) as services:
                data = await fetch(services, f"https://127.0.0.1:{secure.port}/old")
        assert [r.target for r in secure.received] == ["/robots.txt", "/old"]
    if allow_http:
        assert data["outcome"] == "ok" and data["url"] == target, data
        assert [r.path for r in plain.requests] == ["/robots.txt", "/tides"]
    else:
        assert error_of(data) == ("denied", "scheme")
        assert plain.requests == []


async def test_req_fetch_006_follow_cross_host_redirects_follows_and_checks_each_target(
    dns: DNSServer,
) -> None:
    """REQ-FETCH-006, REQ-SEC-008, REQ-CMP-005: with ``[fetch] follow_cross_host_redirects``
    a redirect to another host is followed and the response states the URL fetched; the new
    host's robots.txt is read and honoured, and a target the egress policy refuses still ends
    with denied / egress_policy, undisclosed. Without the setting the same redirect ends with
    redirected."""
    with fake_http_server() as server:
        port = server.port
        server.replies["/robots.txt"] = Reply(status=404)
        server.replies["/away"] = Reply(
            status=302, headers=(("Location", f"http://b.test:{port}/tides"),)
        )
        server.replies["/metadata"] = Reply(
            status=302, headers=(("Location", "http://169.254.169.254/latest/meta-data/"),)
        )
        server.replies["/tides"] = Reply(body=ARTICLE, headers=HTML)
        start = f"http://a.test:{port}"
        follow = {"follow_cross_host_redirects": True}
        async with fetch_services(port, fetch=follow, dns=dns.address) as services:
            followed = await fetch(services, f"{start}/away")
            forbidden = await fetch(services, f"{start}/metadata")
        async with fetch_services(port, dns=dns.address) as services:
            not_followed = await fetch(services, f"{start}/away")
    assert followed["outcome"] == "ok", followed
    assert followed["url"] == f"http://b.test:{port}/tides"
    assert codes(followed)["redirect_followed"] == 1
    robots_hosts = [r.headers["host"] for r in server.requests if r.path == "/robots.txt"]
    assert f"b.test:{port}" in robots_hosts  # the new origin's robots.txt was asked
    assert error_of(forbidden) == ("denied", "egress_policy")
    assert "169.254" not in json.dumps(forbidden)
    assert error_of(not_followed) == ("redirected", "cross_host_redirect")
    assert not_followed["error"]["detail"]["location"] == f"http://b.test:{port}/tides"


async def test_req_fetch_006_a_followed_cross_host_redirect_honours_the_new_hosts_robots(
    dns: DNSServer,
) -> None:
    """REQ-CMP-005 for a followed cross-host hop: when b.test's robots.txt disallows the
    target, the call ends with denied / robots_txt and the target is not requested. (One
    server answers both names; its robots.txt answers per Host header.)"""
    with serving(
        _per_host_robots({"a.test": b"", "b.test": b"User-agent: *\nDisallow: /tides\n"})
    ) as server:
        port = server.port
        async with fetch_services(
            port, fetch={"follow_cross_host_redirects": True}, dns=dns.address
        ) as services:
            data = await fetch(services, f"http://a.test:{port}/away?to=b.test")
    assert error_of(data) == ("denied", "robots_txt")
    assert [(r.header("host"), r.target) for r in server.received] == [
        (f"a.test:{port}", "/robots.txt"),
        (f"a.test:{port}", "/away?to=b.test"),
        (f"b.test:{port}", "/robots.txt"),
    ]


def _per_host_robots(robots: dict[str, bytes]) -> Callable[[Conn], None]:
    """robots.txt per Host name; /away?to=<name> redirects to /tides on that name; pages."""

    def handler(conn: Conn) -> None:
        while (request := conn.read_request()) is not None:
            host = (request.header("host") or "").rsplit(":", 1)
            if request.target == "/robots.txt":
                reply = (200, (("Content-Type", "text/plain"),), robots.get(host[0], b""))
            elif request.target.startswith("/away?to="):
                to = request.target.removeprefix("/away?to=")
                reply = (302, (("Location", f"http://{to}:{host[1]}/tides"),), b"")
            else:
                reply = (200, HTML, ARTICLE)
            if not conn.respond(*reply):
                return

    return handler


# --- http upgraded to https (REQ-FETCH-010) --------------------------------------------------


async def test_req_fetch_010_an_http_url_is_fetched_over_https(dns: DNSServer) -> None:
    """REQ-FETCH-010, REQ-SEC-007: without ``[fetch] allow_http`` an http URL is fetched over
    https on the same host and port, verified against the URL's host name: the response states
    the https URL and carries the fetched_over_https notice, and nothing is sent in plain
    http (robots.txt is read over https too)."""
    ca, client = make_ca()
    pages = {"/robots.txt": (404, HTML, b""), "/tides": (200, HTML, ARTICLE)}
    with serving(page_handler(pages), tls=server_context(ca, "site.test")) as server:
        port = server.port
        async with fetch_services(
            port, fetch={"allow_http": False}, dns=dns.address, tls=client
        ) as services:
            data = await fetch(services, f"http://site.test:{port}/tides")
    assert data["outcome"] == "ok", data
    assert data["url"] == f"https://site.test:{port}/tides"
    assert "fetched_over_https" in codes(data)
    assert "The tide rises twice a day" in data["content"]
    assert server.sni and set(server.sni) == {"site.test"}
    assert [r.target for r in server.received] == ["/robots.txt", "/tides"]


# --- connect timeout (REQ-SEC-011, LIM-F6) ---------------------------------------------------


@contextmanager
def black_hole() -> Iterator[int]:
    """A loopback port where a TCP connect never completes; yields the port.

    A listener with backlog 0 that never accepts: once its accept queue holds a connection,
    Linux drops every further SYN (the client retransmits and waits), so a new connect hangs
    until the client gives up. The queue is filled here first, by connecting until a connect
    no longer completes within 0.3 s.
    """
    with ExitStack() as stack:
        listener = stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
        listener.bind(("127.0.0.1", 0))
        listener.listen(0)
        port: int = listener.getsockname()[1]
        for _ in range(16):
            filler = stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
            filler.settimeout(0.3)
            try:
                filler.connect(("127.0.0.1", port))
            except TimeoutError:
                break
        else:
            pytest.skip("this kernel completes every loopback connect; no black hole here")
        yield port


@pytest.mark.parametrize(
    ("connect_timeout_ms", "robots", "reason"),
    [
        (None, False, "timeout"),  # the default: LIM-F6
        (1000, False, "timeout"),
        # robots.txt is fetched first and bounded by the same setting; unreachable disallows.
        (1000, True, "robots_txt"),
    ],
)
async def test_req_sec_011_lim_f6_a_connect_that_never_completes_ends_at_the_connect_timeout(
    connect_timeout_ms: int | None, robots: bool, reason: str
) -> None:
    """REQ-SEC-011, LIM-F6: a connection that never completes ends the call after the
    connect timeout (``[fetch] connect_timeout_ms``, LIM-F6 by default), far before the total
    timeout (LIM-F4): unavailable / timeout. With robots.txt on, its read is the first
    connection and meets the same bound; the site then counts as unreachable (denied /
    robots_txt)."""
    expected_s = (connect_timeout_ms or limit("LIM-F6")) / 1000
    settings: dict[str, object] = {"robots": robots}
    if connect_timeout_ms is not None:
        settings["connect_timeout_ms"] = connect_timeout_ms
    with black_hole() as port:
        async with fetch_services(port, fetch=settings) as services:
            started = time.monotonic()
            data = await fetch(services, f"http://127.0.0.1:{port}/tides")
            elapsed = time.monotonic() - started
    kind = "denied" if reason == "robots_txt" else "unavailable"
    assert error_of(data) == (kind, reason)
    assert expected_s - 0.05 <= elapsed < expected_s + 1.0, elapsed
    assert elapsed < limit("LIM-F4") / 1000 / 2


# --- the containment line at start (REQ-OBS, contained extraction) ---------------------------


async def test_the_extraction_containment_in_force_is_logged_once_at_start() -> None:
    """Contained extraction (spec README section 3): the service states at start which
    containment is in force. The warm-up that both transports run right after start assembles
    the core, which logs one extraction_containment line naming it (here without bubblewrap:
    ``process+rlimits``); later calls do not repeat it."""
    lines = Lines()
    gc.unfreeze()
    try:
        with fake_http_server() as server:
            server.replies["/tides"] = Reply(body=ARTICLE, headers=HTML)
            async with fetch_services(server.port, lines=lines) as services:
                assert lines.events("extraction_containment") == []
                await services.warm_up()
                started = lines.events("extraction_containment")
                data = await fetch(services, server.url("/tides"))
    finally:
        gc.unfreeze()  # the warm-up froze the collector's view of the test process too
    assert data["outcome"] == "ok", data
    assert [(line["level"], line["containment"]) for line in started] == [("info", PROCESS)]
    assert len(lines.events("extraction_containment")) == 1
