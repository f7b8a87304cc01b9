"""Strict fetch mode (REQ-SEC-021): URLs rypsok returned earlier in this process, and the
operator's allow list.

The search service records every URL it returns; web_fetch in strict mode accepts a URL only
when its comparison key was recorded, or its host matches a rule of ``[fetch] strict_allow``
(:class:`HostRules`). Memory is bounded: the oldest keys are forgotten first.

A rule names a host, nothing else: ``docs.python.org`` matches that name exactly,
``*.example.org`` matches every name below example.org (not example.org itself), and an IP
address matches a URL written with that address literal. Scheme, port and path are not part of
a rule; the other checks (``allow_http``, ports, the egress policy, robots.txt) still apply to
an allowed URL, so the list widens strict mode only, never the egress policy. The entries are
validated and normalized (lower case, IPv6 compressed) by ``rypsok.config.schema``.

Redirects (see :mod:`rypsok.fetch.retrieve`): a hop on the same host as the URL it came from
is the site's own and is followed as in any mode; a hop to another host must itself be a
returned URL or match a rule, or the call ends with ``denied`` / ``strict_mode``.
"""

from __future__ import annotations

import ipaddress
from collections import OrderedDict
from collections.abc import Iterable

from rypsok.search.normalize import comparison_key

_MAX_KEYS = 100_000


class ReturnedURLs:
    """The URLs returned to callers in this process, by comparison key."""

    def __init__(self, max_keys: int = _MAX_KEYS) -> None:
        self._keys: OrderedDict[str, None] = OrderedDict()
        self._max_keys = max_keys

    def record(self, urls: Iterable[str]) -> None:
        """Remember returned URLs."""
        for url in urls:
            key = comparison_key(url)
            self._keys[key] = None
            self._keys.move_to_end(key)
        while len(self._keys) > self._max_keys:
            self._keys.popitem(last=False)

    def __contains__(self, url: object) -> bool:
        return isinstance(url, str) and comparison_key(url) in self._keys


class HostRules:
    """The operator's strict-mode allow list: exact names, ``*.`` suffixes and addresses.

    ``rules`` are the normalized entries of ``[fetch] strict_allow``. :meth:`matches` takes the
    host of a checked URL (:attr:`rypsok.egress.urls.CheckedURL.host`: lower-case ASCII, an
    address in its canonical spelling, no brackets), so plain string comparison is exact.
    """

    def __init__(self, rules: Iterable[str]) -> None:
        suffixes: list[str] = []
        exact: set[str] = set()
        for rule in rules:
            if rule.startswith("*."):
                suffixes.append(rule[1:])  # keeps the dot: ".example.org"
            else:
                exact.add(_canonical(rule))
        self._exact = frozenset(exact)
        self._suffixes = tuple(suffixes)

    def matches(self, host: str) -> bool:
        """Whether a checked URL's host is allowed by a rule."""
        if host in self._exact:
            return True
        # A suffix rule never matches an address literal: "*.0.0.1" is no rule for 127.0.0.1.
        return not _is_address(host) and host.endswith(self._suffixes)


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _canonical(rule: str) -> str:
    """An address in the spelling a checked URL's host has; a name as it is."""
    try:
        return str(ipaddress.ip_address(rule))
    except ValueError:
        return rule
