"""A safety net under the network tests: nothing leaves this machine.

Every TCP connection the HTTP library opens must go to a loopback address and every system
lookup must be for a loopback name; anything else fails the test at once. Not part of what
the tests check: should the policy under test have a hole, the test fails here instead of
sending traffic elsewhere.
"""

from __future__ import annotations

import ipaddress
from typing import Any

import anyio
import httpcore2
import pytest

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")


def guard_loopback(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Install the net for the current test; returns the list of addresses connected to."""
    connected: list[str] = []
    original_connect = httpcore2.AnyIOBackend.connect_tcp

    async def guarded_connect(
        self: httpcore2.AnyIOBackend, host: str, port: int, **kwargs: Any
    ) -> httpcore2.AsyncNetworkStream:
        if not ipaddress.ip_address(host).is_loopback:
            raise AssertionError(f"a test tried to connect to {host}")
        connected.append(host)
        return await original_connect(self, host, port, **kwargs)

    original_lookup = anyio.getaddrinfo

    async def guarded_lookup(host: bytes | str | None, *args: Any, **kwargs: Any) -> Any:
        name = host.decode() if isinstance(host, bytes) else str(host)
        if name not in LOOPBACK_NAMES:
            raise AssertionError(f"a test asked the system resolver for {name}")
        return await original_lookup(host, *args, **kwargs)

    monkeypatch.setattr(httpcore2.AnyIOBackend, "connect_tcp", guarded_connect)
    monkeypatch.setattr(anyio, "getaddrinfo", guarded_lookup)
    return connected
