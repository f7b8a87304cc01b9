"""Fuzz target: robots.txt answers (REQ-CMP-005, RFC 9309; THR-23).

``RobotsPolicy.verdict`` (protego underneath) for a fuzzed URL path, answered by a fake egress
with a fuzzed status, Content-Type, Location and body. Invariants: no exception; 5xx and
redirect loops (the fake answers every hop alike) are ``unreachable`` (fail closed), 4xx is
``allowed``; 2xx is ``allowed`` or ``disallowed``; a body that disallows everything for
``*`` disallows the URL.
"""

from __future__ import annotations

import logging
from types import MappingProxyType

import anyio
from _harness import Input, check, instrumented, main

with instrumented():
    from rypsok.egress.errors import EgressError
    from rypsok.egress.gateway import FetchedResponse
    from rypsok.egress.urls import CheckedURL, parse_url
    from rypsok.fetch.robots import RobotsPolicy, Verdict

_STATUSES = (200, 200, 200, 204, 301, 302, 401, 403, 404, 410, 429, 500, 503)
_LOG = logging.getLogger("rypsok.fuzz")
_LOG.disabled = True


class _Clock:
    def monotonic(self) -> float:
        return 0.0

    def time(self) -> float:
        return 0.0


def _check(url: str) -> CheckedURL:
    return parse_url(url, allow_http=True, ports=frozenset({80, 443}))


def test_one_input(data: bytes) -> None:
    """Judge a fuzzed URL under a fuzzed robots.txt answer and check the invariants."""
    source = Input(data)
    status = source.pick(_STATUSES)
    location = source.sized_text(60) if 300 <= status < 400 else None
    path = source.sized_text(80)
    deny_all = source.byte() == 7
    body = source.raw()
    if deny_all:
        body = b"User-agent: *\nDisallow: /\n"
    try:
        url = _check("https://example.org/" + path.lstrip("/"))
    except EgressError:
        url = _check("https://example.org/")
    headers = {"content-type": "text/plain"}
    if location is not None:
        headers["location"] = location

    async def get(target: CheckedURL, **_: object) -> FetchedResponse:
        return FetchedResponse(target, status, MappingProxyType(headers), body, None)

    policy = RobotsPolicy(
        get=get, check=_check, clock=_Clock(), lifetime_s=3600, max_bytes=512 * 1024, logger=_LOG
    )

    async def judge() -> Verdict:
        return await policy.verdict(url, deadline_s=10.0)

    verdict = anyio.run(judge)
    check(verdict in tuple(Verdict), "verdict outside the vocabulary")
    if status >= 500:
        check(verdict is Verdict.UNREACHABLE, "a 5xx robots.txt did not fail closed")
    elif 400 <= status < 500:
        check(verdict is Verdict.ALLOWED, "a 4xx robots.txt did not allow")
    elif 300 <= status < 400:
        check(verdict is Verdict.UNREACHABLE, "a robots.txt redirect loop did not fail closed")
    elif deny_all:
        check(verdict is Verdict.DISALLOWED, "Disallow: / for * did not disallow")


if __name__ == "__main__":
    main(test_one_input)
