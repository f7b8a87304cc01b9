"""robots.txt over time and across hops (REQ-CMP-005, RFC 9309).

The cache lifetime (LIM-F12) and the short retry of an unreachable robots.txt
(``UNREACHABLE_RETRY_S``) are tested on :class:`RobotsPolicy` over a real egress and a real
server on loopback, with an injected clock (the one the service passes as ``clock=``), so that
an hour passes in no time. A same-host redirect to a disallowed path and ``[fetch] robots =
false`` are tested through the service as it is built.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from rypsok.config.limits import limit
from rypsok.config.load import parse_settings
from rypsok.egress.gateway import Egress
from rypsok.egress.urls import parse_url
from rypsok.fetch.robots import UNREACHABLE_RETRY_S, RobotsPolicy, Verdict
from tests.egress._support import Conn, serving
from tests.fakes.http_server import FakeHTTPServer, Reply, fake_http_server
from tests.fakes.loopback_guard import guard_loopback
from tests.service._fetch_support import (
    ARTICLE,
    HTML,
    TEXT,
    error_of,
    fetch,
    fetch_services,
)

pytestmark = pytest.mark.anyio
LIFETIME_S = float(limit("LIM-F12"))


@pytest.fixture(autouse=True)
def _loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    guard_loopback(monkeypatch)


class Clock:
    """A clock the test moves by hand (the :class:`~rypsok.health.clock.Clock` protocol)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now

    def time(self) -> float:
        return self.now


@asynccontextmanager
async def policy_for(port: int, clock: Clock) -> AsyncIterator[RobotsPolicy]:
    """The policy as the service wires it (LIM-F12, LIM-F13), over a real egress allowed to
    reach 127.0.0.1:``port``, on ``clock``."""
    settings = parse_settings({"schema_version": 1, "fetch": {"allow_http": True, "ports": [port]}})
    async with Egress(settings, "rypsok-test/0.1", extra_allow=["127.0.0.1"]) as egress:
        yield RobotsPolicy(
            get=egress.get,
            check=lambda url: egress.check_url(url, allow_http=True),
            clock=clock,
            lifetime_s=LIFETIME_S,
            max_bytes=limit("LIM-F13"),
            logger=logging.getLogger("rypsok.test.robots_cache"),
        )


async def verdict(policy: RobotsPolicy, clock: Clock, port: int, path: str) -> Verdict:
    """The verdict on one path of 127.0.0.1:``port``, with a deadline 20 s after ``clock``."""
    url = parse_url(f"http://127.0.0.1:{port}{path}", allow_http=True, ports=None)
    with anyio.fail_after(30):
        return await policy.verdict(url, deadline_s=clock.now + 20)


def robots_reads(server: FakeHTTPServer) -> int:
    return sum(1 for r in server.requests if r.path == "/robots.txt")


@pytest.mark.req("REQ-CMP-005")
async def test_req_cmp_005_lim_f12_a_robots_txt_is_reused_until_it_expires() -> None:
    """REQ-CMP-005, LIM-F12: the verdicts of one read serve every URL of the origin until
    LIM-F12 has passed, even when the file has changed meanwhile; at LIM-F12 the file is read
    again and its new rules apply."""
    clock = Clock()
    with fake_http_server() as server:
        port = server.port
        server.replies["/robots.txt"] = Reply(body=b"User-agent: *\nDisallow: /a\n", headers=TEXT)
        async with policy_for(port, clock) as policy:
            first = [await verdict(policy, clock, port, p) for p in ("/a", "/b")]
            server.replies["/robots.txt"] = Reply(
                body=b"User-agent: *\nDisallow: /b\n", headers=TEXT
            )
            clock.now += LIFETIME_S - 0.001
            cached = [await verdict(policy, clock, port, p) for p in ("/a", "/b")]
            reads_before_expiry = robots_reads(server)
            clock.now += 0.001
            renewed = [await verdict(policy, clock, port, p) for p in ("/a", "/b")]
    assert first == [Verdict.DISALLOWED, Verdict.ALLOWED]
    assert cached == first
    assert reads_before_expiry == 1
    assert renewed == [Verdict.ALLOWED, Verdict.DISALLOWED]
    assert robots_reads(server) == 2


class Flaky:
    """A robots.txt server that fails in a chosen way until ``healed`` is set, then answers
    with a file allowing everything but /private."""

    def __init__(self, failure: str) -> None:
        self.failure = failure
        self.healed = threading.Event()
        self.reads = 0

    def __call__(self, conn: Conn) -> None:
        while conn.read_request() is not None:
            self.reads += 1
            if self.healed.is_set():
                body = b"User-agent: *\nDisallow: /private\n"
                if not conn.respond(200, (("Content-Type", "text/plain"),), body):
                    return
            elif self.failure == "status_503":
                if not conn.respond(503, (("Content-Type", "text/plain"),), b"busy"):
                    return
            else:  # the connection closed without an answer: a network failure
                return


@pytest.fixture(params=["status_503", "closed_without_answer"])
def flaky(request: pytest.FixtureRequest) -> Iterator[tuple[Flaky, int]]:
    handler = Flaky(request.param)
    with serving(handler) as server:
        yield handler, server.port


@pytest.mark.req("REQ-CMP-005")
async def test_req_cmp_005_an_unreachable_robots_txt_disallows_and_is_retried_after_60_s(
    flaky: tuple[Flaky, int],
) -> None:
    """REQ-CMP-005, RFC 9309 section 2.3.1.4: a robots.txt answered with 5xx, or not answered
    at all, disallows every URL of the site; that verdict is kept for UNREACHABLE_RETRY_S
    (60 s), not LIM-F12, so one transient failure does not close a site for an hour. Before
    the 60 s no new read is made; at 60 s the file is read again and its rules apply."""
    handler, port = flaky
    clock = Clock()
    assert UNREACHABLE_RETRY_S == 60.0 < LIFETIME_S
    async with policy_for(port, clock) as policy:
        failed = await verdict(policy, clock, port, "/page")
        handler.healed.set()
        clock.now += UNREACHABLE_RETRY_S - 0.001
        still = await verdict(policy, clock, port, "/page")
        reads_before_retry = handler.reads
        clock.now += 0.001
        retried = [await verdict(policy, clock, port, p) for p in ("/page", "/private/x")]
    assert failed is Verdict.UNREACHABLE
    assert still is Verdict.UNREACHABLE
    assert reads_before_retry == 1
    assert retried == [Verdict.ALLOWED, Verdict.DISALLOWED]
    assert handler.reads == 2


@pytest.mark.req("REQ-CMP-005")
async def test_an_anti_bot_check_on_robots_txt_disallows_and_is_retried_after_60_s() -> None:
    """A robots.txt answered by an anti-bot check (here a 200 whose body, read as a file, would
    allow everything) leaves the rules unknown: every URL gets the ``bot_challenge`` verdict,
    which disallows; like an unreachable file it is kept UNREACHABLE_RETRY_S, not LIM-F12, since
    such checks come and go. At 60 s the file is read again and its rules apply."""
    clock = Clock()
    check = (*TEXT, ("cf-mitigated", "challenge"))
    with fake_http_server() as server:
        port = server.port
        server.replies["/robots.txt"] = Reply(body=b"", headers=check)
        async with policy_for(port, clock) as policy:
            checked = await verdict(policy, clock, port, "/page")
            server.replies["/robots.txt"] = Reply(
                body=b"User-agent: *\nDisallow: /private\n", headers=TEXT
            )
            clock.now += UNREACHABLE_RETRY_S - 0.001
            still = await verdict(policy, clock, port, "/page")
            reads_before_retry = robots_reads(server)
            clock.now += 0.001
            retried = [await verdict(policy, clock, port, p) for p in ("/page", "/private/x")]
    assert checked is still is Verdict.BOT_CHALLENGE
    assert reads_before_retry == 1
    assert retried == [Verdict.ALLOWED, Verdict.DISALLOWED]


# --- through the service ----------------------------------------------------------------------


@pytest.mark.req("REQ-CMP-005", "REQ-FETCH-006")
async def test_req_cmp_005_a_same_host_redirect_to_a_disallowed_path_is_refused() -> None:
    """REQ-CMP-005 ("including each redirect target"): an allowed page that redirects on the
    same host to a path robots.txt disallows ends the call with denied / robots_txt; the
    target is never requested, and the origin's cached verdict serves the hop (robots.txt is
    read once)."""
    with fake_http_server() as server:
        server.replies["/robots.txt"] = Reply(
            body=b"User-agent: *\nDisallow: /private\n", headers=TEXT
        )
        server.replies["/old"] = Reply(status=301, headers=(("Location", "/private/page"),))
        server.replies["/private/page"] = Reply(body=ARTICLE, headers=HTML)
        async with fetch_services(server.port) as services:
            data = await fetch(services, server.url("/old"))
    assert error_of(data) == ("denied", "robots_txt")
    assert [r.path for r in server.requests] == ["/robots.txt", "/old"]


@pytest.mark.req("REQ-CMP-005")
@pytest.mark.parametrize("robots", [False, True])
async def test_req_cmp_005_robots_false_sends_no_robots_request(robots: bool) -> None:
    """REQ-CMP-005 ("the operator may disable the check"): with ``[fetch] robots = false`` a
    site whose robots.txt disallows everything is fetched and robots.txt is never requested;
    with the check on (the default), the same fetch is refused."""
    settings: dict[str, Any] = {"robots": robots}
    with fake_http_server() as server:
        server.replies["/robots.txt"] = Reply(body=b"User-agent: *\nDisallow: /\n", headers=TEXT)
        server.replies["/tides"] = Reply(body=ARTICLE, headers=HTML)
        async with fetch_services(server.port, fetch=settings) as services:
            data = await fetch(services, server.url("/tides"))
    if robots:
        assert error_of(data) == ("denied", "robots_txt")
        assert [r.path for r in server.requests] == ["/robots.txt"]
    else:
        assert data["outcome"] == "ok", data
        assert [r.path for r in server.requests] == ["/tides"]
