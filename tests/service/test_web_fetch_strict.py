"""Strict fetch mode through the service as it is built (REQ-SEC-021).

web_fetch in strict mode accepts URLs web_search returned earlier in the process and hosts of
``[fetch] strict_allow``; any other URL, and any redirect to another host that is neither,
ends with ``denied`` / ``strict_mode`` before a request is sent. The search runs against a
simulated engine on loopback whose result points at a page server on loopback; names are
served by a local DNS server.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from rypsok.engines.registry import DRIVER_MODULES
from tests.egress._support import DNSServer, static_zone
from tests.fakes.http_server import FakeHTTPServer, Reply, fake_http_server
from tests.fakes.loopback_guard import guard_loopback
from tests.service._fetch_support import (
    ARTICLE,
    HTML,
    error_of,
    fetch,
    fetch_services,
)

pytestmark = pytest.mark.anyio
HN_PATH = "/hn/api/v1/search"


@pytest.fixture(autouse=True)
def _loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    guard_loopback(monkeypatch)


@pytest.fixture
def dns() -> Iterator[DNSServer]:
    """Names of the tests, all on 127.0.0.1; anything else does not exist."""
    names = ("docs.test", "other.test", "wild.test", "a.wild.test", "b.c.wild.test")
    server = DNSServer(static_zone({name: ["127.0.0.1"] for name in names})).start()
    yield server
    server.stop()


def hackernews_only(server: FakeHTTPServer) -> dict[str, Any]:
    """The engines table: the Hacker News driver against ``server``, every other one off."""
    entries: dict[str, Any] = {e: {"enabled": False} for e in DRIVER_MODULES}
    entries["hackernews"] = {"enabled": True, "endpoint": server.url(HN_PATH)}
    return entries


def hits(*urls: str) -> Reply:
    """An Algolia answer of the Hacker News API with one story per URL."""
    stories = [
        {"title": f"Tide tables {i}", "url": url, "objectID": str(i), "created_at_i": 1795701791}
        for i, url in enumerate(urls, 1)
    ]
    return Reply(body=json.dumps({"hits": stories}).encode())


def seen(server: FakeHTTPServer, path: str) -> list[str]:
    """The Host headers of the requests for ``path``."""
    return [r.headers.get("host", "") for r in server.requests if r.path == path]


async def test_req_sec_021_strict_mode_fetches_a_url_web_search_returned() -> None:
    """REQ-SEC-021: the full path. Before the search, the page's URL is refused with
    strict_mode and nothing is sent; web_search against a simulated engine returns it; then
    web_fetch of the returned URL succeeds. A URL of the same site that no search returned is
    still refused.

    Proves THR-07.
    """
    with fake_http_server() as server:
        page = server.url("/tides")
        server.replies[HN_PATH] = hits(page)
        server.replies["/tides"] = Reply(body=ARTICLE, headers=HTML)
        server.replies["/other"] = Reply(body=ARTICLE, headers=HTML)
        async with fetch_services(
            server.port, fetch={"strict": True}, engines=hackernews_only(server)
        ) as services:
            before = await fetch(services, page)
            assert seen(server, "/tides") == []
            found = (
                await services.call("web_search", {"query": "tide tables", "category": "news"})
            ).structured
            after = await fetch(services, page)
            other = await fetch(services, server.url("/other"))
    assert error_of(before) == ("denied", "strict_mode")
    assert [r["url"] for r in found["results"]] == [page], found
    assert after["outcome"] == "ok", after
    assert after["url"] == page and "The tide rises twice a day" in after["content"]
    assert error_of(other) == ("denied", "strict_mode")
    assert len(seen(server, "/tides")) == 1 and seen(server, "/other") == []


@pytest.mark.parametrize(
    ("rules", "host", "accepted"),
    [
        (["docs.test"], "docs.test", True),
        (["docs.test"], "other.test", False),
        (["*.wild.test"], "a.wild.test", True),
        (["*.wild.test"], "b.c.wild.test", True),
        (["*.wild.test"], "wild.test", False),  # the pattern names what is below, not itself
        (["Docs.Test"], "docs.test", True),  # rules are normalized to lower case
        (["127.0.0.1"], "127.0.0.1", True),
        (["docs.test"], "127.0.0.1", False),  # a name rule never allows the address itself
    ],
)
async def test_req_sec_021_strict_mode_accepts_allow_listed_hosts_only(
    dns: DNSServer, rules: list[str], host: str, accepted: bool
) -> None:
    """REQ-SEC-021: a URL whose host matches ``[fetch] strict_allow`` is fetched in strict
    mode without a search; a host the list does not name is refused with denied /
    strict_mode before any request (not even robots.txt) is sent."""
    with fake_http_server() as server:
        server.replies["/tides"] = Reply(body=ARTICLE, headers=HTML)
        async with fetch_services(
            server.port, fetch={"strict": True, "strict_allow": rules}, dns=dns.address
        ) as services:
            data = await fetch(services, f"http://{host}:{server.port}/tides")
    if accepted:
        assert data["outcome"] == "ok", data
        assert seen(server, "/tides") == [f"{host}:{server.port}"]
    else:
        assert error_of(data) == ("denied", "strict_mode")
        assert server.requests == []


async def test_req_sec_021_the_allow_list_never_widens_the_egress_policy() -> None:
    """REQ-SEC-021, REQ-SEC-006: an allow-listed host is accepted by strict mode only; the
    egress policy still judges it. Without the loopback rule injected for the tests, a URL on
    127.0.0.1 listed in strict_allow is refused with denied / egress_policy, nothing sent."""
    with fake_http_server() as server:
        server.replies["/tides"] = Reply(body=ARTICLE, headers=HTML)
        async with fetch_services(
            server.port,
            fetch={"strict": True, "strict_allow": ["127.0.0.1"]},
            extra_allow=(),
        ) as services:
            data = await fetch(services, server.url("/tides"))
    assert error_of(data) == ("denied", "egress_policy")
    assert server.requests == []


async def test_req_sec_021_strict_mode_judges_every_redirect_hop(dns: DNSServer) -> None:
    """REQ-SEC-021, REQ-FETCH-006: in strict mode a same-host redirect of an accepted URL is
    followed; with cross-host redirects followed, a hop to an allowed host is fetched and one
    to any other host ends with denied / strict_mode, its target neither requested nor
    disclosed; without following, a hop to an allowed host ends with redirected as usual.

    Proves THR-07.
    """
    with fake_http_server() as server:
        port = server.port
        server.replies["/tides"] = Reply(body=ARTICLE, headers=HTML)
        server.replies["/same"] = Reply(status=301, headers=(("Location", "/tides"),))
        server.replies["/to-allowed"] = Reply(
            status=302, headers=(("Location", f"http://a.wild.test:{port}/tides"),)
        )
        server.replies["/to-other"] = Reply(
            status=302, headers=(("Location", f"http://other.test:{port}/secret"),)
        )
        server.replies["/secret"] = Reply(body=ARTICLE, headers=HTML)
        strict = {"strict": True, "strict_allow": ["docs.test", "*.wild.test"]}
        base = f"http://docs.test:{port}"
        async with fetch_services(
            port, fetch={**strict, "follow_cross_host_redirects": True}, dns=dns.address
        ) as services:
            same = await fetch(services, f"{base}/same")
            allowed = await fetch(services, f"{base}/to-allowed")
            other = await fetch(services, f"{base}/to-other")
        async with fetch_services(port, fetch=strict, dns=dns.address) as services:
            not_followed = await fetch(services, f"{base}/to-allowed")
            not_followed_other = await fetch(services, f"{base}/to-other")
    assert same["outcome"] == "ok" and same["url"] == f"{base}/tides", same
    assert allowed["outcome"] == "ok" and allowed["url"] == f"http://a.wild.test:{port}/tides"
    assert error_of(other) == ("denied", "strict_mode")
    assert "other.test" not in json.dumps(other) and "secret" not in json.dumps(other)
    assert seen(server, "/secret") == []
    assert all(not h.startswith("other.test") for h in seen(server, "/robots.txt"))
    assert error_of(not_followed) == ("redirected", "cross_host_redirect")
    assert not_followed["error"]["detail"]["location"] == f"http://a.wild.test:{port}/tides"
    assert error_of(not_followed_other) == ("denied", "strict_mode")
