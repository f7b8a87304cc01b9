"""robots.txt beyond LIM-F13 (REQ-CMP-005, RFC 9309 section 2.5; review finding SEC-05).

Against real HTTP servers on loopback, through the service as it is built (egress, retrieval,
robots.txt policy) or through the robots.txt policy over a real egress: at most LIM-F13 bytes of
a file are read (the egress stops there and closes the connection), they are parsed cut after
the last complete line in them, and a file of any size, plain or compressed, never disallows
the whole site for its size alone.
"""

from __future__ import annotations

import logging
import zlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from rypsok.app import runtime
from rypsok.config.limits import limit
from rypsok.config.load import parse_settings
from rypsok.config.schema import Settings
from rypsok.egress.errors import EgressError, EgressReason
from rypsok.egress.gateway import Egress, FetchedResponse
from rypsok.egress.urls import CheckedURL, parse_url
from rypsok.fetch.robots import RobotsPolicy, Verdict, parsed_part
from rypsok.services.calls import Services
from tests.egress._support import Conn, serving
from tests.fakes.http_server import Reply, fake_http_server
from tests.fakes.streamed_body import StreamedBody

pytestmark = pytest.mark.anyio

HTML = (("Content-Type", "text/html; charset=utf-8"),)
TEXT = (("Content-Type", "text/plain"),)
PAGE = (
    b"<html><head><title>Tides</title></head><body><article><h1>Tides</h1><p>"
    + b"The tide rises twice a day; sailors read the table before leaving. " * 8
    + b"</p></article></body></html>"
)


def settings_for(port: int) -> Settings:
    return parse_settings(
        {
            "schema_version": 1,
            "fetch": {"allow_http": True, "ports": [port], "sandbox": "none"},
            "service": {"calls_per_minute_web_fetch": 1000},
        }
    )


@asynccontextmanager
async def services_for(server: Any) -> AsyncIterator[Services]:
    """The service as it is built, allowed to reach ``server`` (anything with a ``port``)."""
    settings = settings_for(server.port)
    async with runtime(
        settings, logging.getLogger("rypsok.test.robots"), extra_allow=["127.0.0.0/8"]
    ) as services:
        yield services


async def fetch(services: Services, url: str) -> dict[str, Any]:
    return (await services.call("web_fetch", {"url": url})).structured


FILLER = b"# " + b"x" * 97 + b"\n"  # a comment line of 100 bytes


def _up_to_the_bound() -> bytes:
    """Rules, then comment lines, ending with "Disallow: /st" just at LIM-F13 (no line end)."""
    head = b"User-agent: *\nDisallow: /private\n"
    bound = limit("LIM-F13")
    body = head + FILLER * ((bound - len(head)) // len(FILLER))
    body += b"#" * (bound - len(body) - len(b"Disallow: /st") - 1) + b"\n"
    body += b"Disallow: /st"
    assert len(body) == bound  # the bound falls inside this line
    return body


def _oversized_robots() -> bytes:
    """Rules, then comment lines up to LIM-F13, a rule line that straddles the LIM-F13 bound,
    and a rule after it."""
    return (
        _up_to_the_bound() + b"raddling-rule-cut-in-the-middle\nDisallow: /late\n" + (FILLER * 200)
    )


@pytest.mark.req("REQ-CMP-005")
async def test_req_cmp_005_robots_txt_beyond_lim_f13_is_parsed_on_its_first_lim_f13_bytes() -> None:
    """REQ-CMP-005, RFC 9309 section 2.5: a robots.txt larger than LIM-F13 no longer disallows
    the whole site. Its rules within the first LIM-F13 bytes apply (/private is denied), the
    rules after them do not (/late is fetched), and the line the bound cuts is dropped whole
    rather than read as a shorter rule ("Disallow: /st" would deny /stations).

    Fixes the rest of review finding SEC-05 (docs/security.md).
    """
    robots = _oversized_robots()
    assert len(robots) > limit("LIM-F13")
    with fake_http_server() as server:
        server.replies["/robots.txt"] = Reply(body=robots, headers=TEXT)
        for path in ("/public", "/private/page", "/late/page", "/stations"):
            server.replies[path] = Reply(body=PAGE, headers=HTML)
        async with services_for(server) as services:
            public = await fetch(services, server.url("/public"))
            private = await fetch(services, server.url("/private/page"))
            late = await fetch(services, server.url("/late/page"))
            stations = await fetch(services, server.url("/stations"))
    assert public["outcome"] == "ok", public
    assert (private["error"]["kind"], private["error"]["reason"]) == ("denied", "robots_txt")
    assert late["outcome"] == "ok", late
    assert stations["outcome"] == "ok", stations
    assert not any(r.path == "/private/page" for r in server.requests)
    assert [r.path for r in server.requests].count("/robots.txt") == 1  # read once, cached


def test_the_parsed_part_ends_at_a_line_end_within_the_bound() -> None:
    """The cut keeps whole lines only: LF, CR and CR LF endings; nothing when the bound holds
    no line end; the whole file when it fits."""
    assert parsed_part(b"a: 1\nb: 2\n", 100) == "a: 1\nb: 2\n"
    assert parsed_part(b"a: 1\nb: 22222\n", 8) == "a: 1\n"
    assert parsed_part(b"a: 1\rb: 22222\r", 8) == "a: 1\r"
    assert parsed_part(b"a: 1\r\nb: 2222\r\n", 6) == "a: 1\r\n"
    assert parsed_part(b"a: 1\r\nb: 2222\r\n", 5) == "a: 1\r"
    assert parsed_part(b"x" * 20, 10) == ""
    assert parsed_part(b"a: 1\n", 5) == "a: 1\n"
    # A read cut at the bound may end inside a line even when it is not longer than the bound.
    assert parsed_part(b"a: 1\nb: 2", 9) == "a: 1\nb: 2"
    assert parsed_part(b"a: 1\nb: 2", 9, cut=True) == "a: 1\n"
    assert parsed_part(b"a: 1\nb: 2\n", 10, cut=True) == "a: 1\nb: 2\n"
    assert parsed_part(b"x" * 10, 10, cut=True) == ""


class _Clock:
    def monotonic(self) -> float:
        return 0.0

    def time(self) -> float:
        return 0.0


@pytest.mark.req("REQ-CMP-005")
async def test_robots_txt_is_read_as_a_lim_f13_prefix_and_still_fails_closed() -> None:
    """The egress is asked for the first LIM-F13 bytes as a prefix (never refused for its
    length); should it fail all the same (any egress error, too_large included), the site is
    treated as unreachable: fail closed."""
    asked: list[dict[str, object]] = []

    async def get(target: Any, **kwargs: object) -> Any:
        asked.append(kwargs)
        raise EgressError(EgressReason.TOO_LARGE)

    policy = RobotsPolicy(
        get=get,
        check=lambda url: parse_url(url, allow_http=False, ports=frozenset({443})),
        clock=_Clock(),
        lifetime_s=3600,
        max_bytes=limit("LIM-F13"),
        logger=logging.getLogger("rypsok.test.robots"),
    )
    url = parse_url("https://example.org/page", allow_http=False, ports=frozenset({443}))
    assert await policy.verdict(url, deadline_s=10.0) is Verdict.UNREACHABLE
    [call] = asked
    assert (call["max_bytes"], call["on_excess"]) == (limit("LIM-F13"), "truncate")


# --- through a real egress --------------------------------------------------------------------


@asynccontextmanager
async def policy_for(port: int) -> AsyncIterator[tuple[RobotsPolicy, list[FetchedResponse]]]:
    """A robots.txt policy over a real egress allowed to reach 127.0.0.1:``port``; every
    response the egress gave it is recorded."""
    seen: list[FetchedResponse] = []
    async with Egress(settings_for(port), "rypsok-test/0.1", extra_allow=["127.0.0.1"]) as egress:

        async def get(target: CheckedURL, **kwargs: Any) -> FetchedResponse:
            response = await egress.get(target, **kwargs)
            seen.append(response)
            return response

        yield (
            RobotsPolicy(
                get=get,
                check=lambda url: egress.check_url(url, allow_http=True),
                clock=_Clock(),
                lifetime_s=3600,
                max_bytes=limit("LIM-F13"),
                logger=logging.getLogger("rypsok.test.robots"),
            ),
            seen,
        )


async def verdicts(policy: RobotsPolicy, port: int, *paths: str) -> list[Verdict]:
    found = []
    for path in paths:
        url = parse_url(f"http://127.0.0.1:{port}{path}", allow_http=True, ports=None)
        with anyio.fail_after(30):
            found.append(await policy.verdict(url, deadline_s=20.0))
    return found


class HugeRobots(StreamedBody):
    """A loopback server whose robots.txt is ``head`` then ``size`` bytes in all of comment
    lines, streamed (never held whole); it records how much it managed to send and whether the
    client closed the connection before the end. Other paths get a small page."""

    def __init__(self, head: bytes, size: int) -> None:
        headers = [("Content-Type", "text/plain"), ("Content-Length", str(size))]
        block = FILLER * 655  # 65,500 bytes of whole lines
        super().__init__(size, headers, block=block, prefix=head)
        self.paths: list[str] = []

    def __call__(self, conn: Conn) -> None:
        request = conn.read_request()
        if request is None:
            return
        self.paths.append(request.target)
        if request.target != "/robots.txt":
            conn.respond(200, HTML, PAGE)
            return
        self.stream(conn)


@pytest.mark.req("REQ-CMP-005")
async def test_req_cmp_005_a_robots_txt_beyond_lim_f3_is_read_in_part() -> None:
    """REQ-CMP-005 ("read at most LIM-F13"), RFC 9309 section 2.5: a 256 MiB robots.txt, far
    beyond the LIM-F3 bound of any fetched body, no longer disallows the site. Its rules in
    the first LIM-F13 bytes apply and the line cut at the bound is dropped whole; the read
    stops there: the server sees the connection closed with most of the file unsent.

    Fixes the rest of review finding SEC-05 (docs/security.md). Proves THR-23 (a huge file).
    """
    size = 256 * 1024 * 1024
    assert size > limit("LIM-F3")
    huge = HugeRobots(_oversized_robots(), size)
    with serving(huge) as server:
        async with services_for(server) as services:
            base = f"http://127.0.0.1:{server.port}"
            public = await fetch(services, f"{base}/public")
            private = await fetch(services, f"{base}/private/page")
            late = await fetch(services, f"{base}/late/page")
            stations = await fetch(services, f"{base}/stations")
        assert await anyio.to_thread.run_sync(huge.done.wait, 30)
    assert public["outcome"] == "ok", public
    assert (private["error"]["kind"], private["error"]["reason"]) == ("denied", "robots_txt")
    assert late["outcome"] == "ok", late
    assert stations["outcome"] == "ok", stations
    assert "/private/page" not in huge.paths
    assert huge.paths.count("/robots.txt") == 1  # read once, cached
    assert huge.left_early
    assert huge.sent < size // 8  # socket buffers' worth past LIM-F13, not the file


@pytest.mark.req("REQ-CMP-005", "REQ-SEC-013")
async def test_req_cmp_005_a_gzip_robots_txt_inflating_beyond_lim_f3_stops_at_lim_f13() -> None:
    """A gzip-encoded robots.txt that inflates to 64 MiB (beyond LIM-F3) is decoded only up to
    LIM-F13 bytes, counted as they are decoded: its first rules apply, the cut line and what
    follows do not, and the site is not disallowed for the file's size.

    Proves THR-23 (a huge compressed file).
    """
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    parts = [compressor.compress(_oversized_robots())]
    block = FILLER * 10_000  # 1 MB of comment lines
    parts += [compressor.compress(block) for _ in range(64)]
    parts.append(compressor.compress(b"Disallow: /\n") + compressor.flush())
    gz = b"".join(parts)
    assert len(gz) < limit("LIM-F13")  # the wire bound is not what stops it
    headers = (("Content-Type", "text/plain"), ("Content-Encoding", "gzip"))
    with fake_http_server() as server:
        server.replies["/robots.txt"] = Reply(body=gz, headers=headers)
        async with policy_for(server.port) as (policy, seen):
            found = await verdicts(
                policy, server.port, "/public", "/private/x", "/late/x", "/stations"
            )
    assert found == [Verdict.ALLOWED, Verdict.DISALLOWED, Verdict.ALLOWED, Verdict.ALLOWED]
    [response] = seen
    assert (response.truncated, len(response.body)) == (True, limit("LIM-F13"))


@pytest.mark.req("REQ-CMP-005")
@pytest.mark.parametrize(
    ("rest", "stations"),
    [(b"", Verdict.DISALLOWED), (b"raddling\n", Verdict.ALLOWED)],
    ids=["file-ends-at-the-bound", "file-goes-on"],
)
async def test_req_cmp_005_a_rule_cut_at_the_bound_is_not_applied_half(
    rest: bytes, stations: Verdict
) -> None:
    """The egress hands over LIM-F13 bytes in both cases, ending with "Disallow: /st". When
    the file ends there, that is its last rule, whole, and applies (/stations is denied); when
    the file goes on ("Disallow: /straddling"), the read was cut inside the line, which is
    dropped rather than read as "Disallow: /st"."""
    with fake_http_server() as server:
        server.replies["/robots.txt"] = Reply(body=_up_to_the_bound() + rest, headers=TEXT)
        async with policy_for(server.port) as (policy, seen):
            found = await verdicts(policy, server.port, "/stations", "/private/x", "/public")
    assert found == [stations, Verdict.DISALLOWED, Verdict.ALLOWED]
    [response] = seen
    assert len(response.body) == limit("LIM-F13")
    assert response.truncated is bool(rest)
