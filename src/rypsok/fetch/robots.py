"""robots.txt for agent-directed fetches (REQ-CMP-005, RFC 9309).

One verdict source per origin, cached for LIM-F12, fetched through the egress component under
the agent-directed profile like any other request. The rules for rypsok's product token and
``*`` are applied by protego, a maintained RFC 9309 parser. Per RFC 9309: a 4xx answer means no
rules (allowed); a 5xx answer, a network failure or a timeout means the site is unreachable and
everything is disallowed. An anti-bot check served in place of the file, whatever its status
(:func:`rypsok.engines.base.is_bot_challenge`), leaves the rules unknown: everything is
disallowed as well, with its own verdict so that the call says why. The file's content never
leaves this module: no message, log line or notice quotes it.

Size (RFC 9309 section 2.5: parse at least the first 500 KiB): at most LIM-F13 decoded bytes
are read. The egress reads the file as a bounded prefix (``on_excess="truncate"``): it stops at
LIM-F13 decoded bytes (counted as they are decoded, so a compressed file stops there too),
leaves the rest unread and closes the connection. A file cut there is parsed up to the last
line end within its first LIM-F13 bytes, so that no rule is read half; the rest is ignored, as
search engines do. A robots.txt of any size is therefore never refused for its size alone.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from enum import StrEnum

import anyio
from protego import Protego

from rypsok.config.limits import limit
from rypsok.egress.errors import EgressError
from rypsok.egress.gateway import FetchedResponse
from rypsok.egress.urls import CheckedURL, resolve_reference
from rypsok.engines.base import is_bot_challenge
from rypsok.health.clock import Clock
from rypsok.logs import log_event

PRODUCT_TOKEN = "rypsok"  # noqa: S105  # robots.txt product token, not a secret
_MAX_ORIGINS = 1024  # bounded memory: least recently used origins are forgotten
_MAX_REDIRECTS = 5  # RFC 9309 section 2.3.1.2
UNREACHABLE_RETRY_S = 60.0
CONNECT_TIMEOUT_S = limit("LIM-F6") / 1000  # the default; the caller passes [fetch]'s value
_LINE_ENDS = (b"\n", b"\r")

Get = Callable[..., Awaitable[FetchedResponse]]
"""``get(url, *, accept, max_bytes, connect_timeout_s, total_timeout_s, on_excess)``: the
egress (:meth:`~rypsok.egress.gateway.Egress.get`)."""
Check = Callable[[str], CheckedURL]
"""Checks a redirect target under the agent-directed profile (raises EgressError)."""


class Verdict(StrEnum):
    """The robots.txt verdict on one URL."""

    ALLOWED = "allowed"
    DISALLOWED = "disallowed"
    UNREACHABLE = "unreachable"  # no answer (network, 5xx, timeout): disallowed by RFC 9309
    BOT_CHALLENGE = "bot_challenge"  # an anti-bot check instead of the file: disallowed


@dataclass(frozen=True, slots=True)
class _Verdicts:
    """What is known of one origin's robots.txt."""

    rules: Protego | None  # None: allow everything (no usable file)
    unreachable: bool
    expires: float
    bot_challenge: bool = False

    def verdict(self, url: str) -> Verdict:
        if self.bot_challenge:
            return Verdict.BOT_CHALLENGE
        if self.unreachable:
            return Verdict.UNREACHABLE
        if self.rules is None or self.rules.can_fetch(url, PRODUCT_TOKEN):
            return Verdict.ALLOWED
        return Verdict.DISALLOWED


class RobotsPolicy:
    """Cached robots.txt verdicts per origin."""

    def __init__(
        self,
        *,
        get: Get,
        check: Check,
        clock: Clock,
        lifetime_s: float,
        max_bytes: int,
        logger: logging.Logger,
    ) -> None:
        """``max_bytes`` is the most read and parsed of one robots.txt (LIM-F13)."""
        self._get = get
        self._check = check
        self._clock = clock
        self._lifetime_s = lifetime_s
        self._max_bytes = max_bytes
        self._logger = logger
        self._cache: OrderedDict[tuple[str, str, int], _Verdicts] = OrderedDict()
        self._locks: dict[tuple[str, str, int], anyio.Lock] = {}

    async def verdict(
        self, url: CheckedURL, *, deadline_s: float, connect_timeout_s: float = CONNECT_TIMEOUT_S
    ) -> Verdict:
        """Whether rypsok may fetch ``url``; reads robots.txt of its origin when not cached.

        ``connect_timeout_s`` bounds each connection of the read (LIM-F6, ``[fetch]
        connect_timeout_ms``): robots.txt is an agent-directed fetch like the page (REQ-SEC-011).
        """
        origin = url.origin
        lock = self._locks.setdefault(origin, anyio.Lock())
        async with lock:  # one read per origin at a time; followers use the cached verdict
            verdicts = self._cache.get(origin)
            if verdicts is None or verdicts.expires <= self._clock.monotonic():
                verdicts = await self._read(url, deadline_s, connect_timeout_s)
                self._cache[origin] = verdicts
                self._cache.move_to_end(origin)
                while len(self._cache) > _MAX_ORIGINS:
                    forgotten, _ = self._cache.popitem(last=False)
                    self._locks.pop(forgotten, None)
        return verdicts.verdict(url.url)

    async def _read(
        self, url: CheckedURL, deadline_s: float, connect_timeout_s: float
    ) -> _Verdicts:
        expires = self._clock.monotonic() + self._lifetime_s
        # An unreachable verdict disallows (fail closed) but is kept briefly: one transient
        # error, or a read cut short by a late call's deadline, must not close a site for LIM-F12.
        retry = self._clock.monotonic() + min(UNREACHABLE_RETRY_S, self._lifetime_s)
        target = self._check(f"{url.scheme}://{url.host_header}/robots.txt")
        try:
            for _ in range(_MAX_REDIRECTS + 1):
                left = deadline_s - self._clock.monotonic()
                if left <= 0:
                    raise TimeoutError
                response = await self._get(
                    target,
                    accept="text/plain",
                    max_bytes=self._max_bytes,
                    connect_timeout_s=min(connect_timeout_s, left),
                    total_timeout_s=left,
                    on_excess="truncate",  # the first LIM-F13 bytes, never too_large
                )
                location = response.location
                if location is None:
                    break
                target = self._check(resolve_reference(target.url, location))
            else:
                return _Verdicts(None, unreachable=True, expires=retry)
        except (EgressError, TimeoutError) as exc:
            # Unreachable (or refused by policy): disallow, fail closed. A long file is not an
            # error here: it comes back cut (``truncated``).
            reason = exc.reason.value if isinstance(exc, EgressError) else "timeout"
            log_event(
                self._logger, logging.INFO, "robots_unreachable", host=url.host, reason=reason
            )
            return _Verdicts(None, unreachable=True, expires=retry)
        if is_bot_challenge(response.headers):
            # Kept briefly like an unreachable file: a check comes and goes with the site's load.
            log_event(self._logger, logging.INFO, "robots_bot_challenge", host=url.host)
            return _Verdicts(None, unreachable=True, expires=retry, bot_challenge=True)
        status = response.status
        if 200 <= status < 300:
            text = parsed_part(response.body, self._max_bytes, cut=response.truncated)
            return _Verdicts(Protego.parse(text), unreachable=False, expires=expires)
        if 400 <= status < 500:
            return _Verdicts(None, unreachable=False, expires=expires)
        return _Verdicts(None, unreachable=True, expires=retry)


def parsed_part(body: bytes, max_bytes: int, *, cut: bool = False) -> str:
    """The part of a robots.txt that is parsed: all of it up to ``max_bytes``, else its first
    ``max_bytes`` bytes cut after the last line end within them (RFC 9309 section 2.5), so that
    no rule is read half (a cut "Disallow: /private" would read as "Disallow: /pri").

    ``cut``: the read stopped at ``max_bytes`` with more to come, so even a body of exactly
    ``max_bytes`` bytes may end inside a line and is cut after its last line end too."""
    if cut or len(body) > max_bytes:
        end = max(body.rfind(mark, 0, max_bytes) for mark in _LINE_ENDS)
        body = body[: end + 1]  # nothing at all when the first max_bytes hold no line end
    return body.decode("utf-8", errors="replace")
