"""Strict fetch mode (REQ-SEC-021): only URLs rypsok itself returned earlier in this process.

The search service records every URL it returns; web_fetch in strict mode accepts a URL only
when its comparison key was recorded, or its host is on the operator's allow list. Memory is
bounded: the oldest keys are forgotten first.
"""

from __future__ import annotations

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
