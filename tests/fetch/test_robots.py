"""robots.txt beyond LIM-F13 (REQ-CMP-005, RFC 9309 section 2.5; review finding SEC-05).

Against a real HTTP server on loopback, through the service as it is built (egress, retrieval,
robots.txt policy): a file larger than LIM-F13 is parsed on its first LIM-F13 bytes, cut after
the last complete line in them, instead of disallowing the whole site.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from rypsok.app import runtime
from rypsok.config.limits import limit
from rypsok.config.load import parse_settings
from rypsok.egress.errors import EgressError, EgressReason
from rypsok.egress.urls import parse_url
from rypsok.fetch.robots import RobotsPolicy, Verdict, parsed_part
from rypsok.services.calls import Services
from tests.fakes.http_server import FakeHTTPServer, Reply, fake_http_server

pytestmark = pytest.mark.anyio

HTML = (("Content-Type", "text/html; charset=utf-8"),)
TEXT = (("Content-Type", "text/plain"),)
PAGE = (
    b"<html><head><title>Tides</title></head><body><article><h1>Tides</h1><p>"
    + b"The tide rises twice a day; sailors read the table before leaving. " * 8
    + b"</p></article></body></html>"
)


@asynccontextmanager
async def services_for(server: FakeHTTPServer) -> AsyncIterator[Services]:
    settings = parse_settings(
        {
            "schema_version": 1,
            "fetch": {"allow_http": True, "ports": [server.port], "sandbox": "none"},
            "service": {"calls_per_minute_web_fetch": 1000},
        }
    )
    async with runtime(
        settings, logging.getLogger("rypsok.test.robots"), extra_allow=["127.0.0.0/8"]
    ) as services:
        yield services


async def fetch(services: Services, url: str) -> dict[str, Any]:
    return (await services.call("web_fetch", {"url": url})).structured


def _oversized_robots() -> bytes:
    """Rules, then comment lines up to LIM-F13, a rule line that straddles the LIM-F13 bound,
    and a rule after it."""
    head = b"User-agent: *\nDisallow: /private\n"
    filler = b"# " + b"x" * 97 + b"\n"  # 100 bytes a line
    bound = limit("LIM-F13")
    body = head + filler * ((bound - len(head)) // len(filler))
    straddling = b"Disallow: /st" + b"raddling-rule-cut-in-the-middle\n"
    body += b"#" * (bound - len(body) - len(b"Disallow: /st") - 1) + b"\n"
    assert len(body) + len(b"Disallow: /st") == bound  # the bound falls inside this line
    return body + straddling + b"Disallow: /late\n" + filler * 200


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


class _Clock:
    def monotonic(self) -> float:
        return 0.0

    def time(self) -> float:
        return 0.0


@pytest.mark.req("REQ-CMP-005")
async def test_a_robots_txt_beyond_any_body_bound_still_disallows() -> None:
    """Fail closed where nothing can be parsed: the file is read up to the bound of a fetched
    body (LIM-F3); when even that is exceeded, the site is treated as unreachable."""
    asked: list[int] = []

    async def get(target: Any, *, max_bytes: int, **_: object) -> Any:
        asked.append(max_bytes)
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
    assert asked == [limit("LIM-F3")]
