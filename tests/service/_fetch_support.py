"""Shared pieces of the web_fetch service tests: the service over loopback, TLS, local DNS,
log capture and a loopback-only safety net.

Everything binds to or connects to 127.0.0.0/8 only. The service is the production one
(``rypsok.app.runtime``); loopback is reached through the explicit allow rule injected in code
(REQ-TEST-005), names through a local DNS server, https through a test CA that the client
context trusts (and the system store does not).
"""

from __future__ import annotations

import json
import logging
import ssl
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import trustme

from rypsok.app import runtime
from rypsok.config.load import parse_settings
from rypsok.logs import JsonLineFormatter
from rypsok.services.calls import Services

HTML = (("Content-Type", "text/html; charset=utf-8"),)
TEXT = (("Content-Type", "text/plain"),)
ARTICLE = (
    b"<html><head><title>Tide tables</title></head><body><article><h1>Tide tables</h1>"
    + b"<p>The tide rises twice a day; sailors read the table before leaving the harbour.</p>" * 12
    + b"</article></body></html>"
)


class Lines(logging.Handler):
    """The service's log lines, parsed from the JSON the production formatter writes."""

    def __init__(self) -> None:
        super().__init__()
        self.lines: list[dict[str, Any]] = []
        self.setFormatter(JsonLineFormatter())

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(json.loads(self.format(record)))

    def events(self, name: str) -> list[dict[str, Any]]:
        """The lines of one event."""
        return [line for line in self.lines if line.get("event") == name]


def make_ca() -> tuple[trustme.CA, ssl.SSLContext]:
    """A fresh test CA and a verifying client context that trusts it alone."""
    ca = trustme.CA()
    client = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ca.configure_trust(client)
    return ca, client


def server_context(ca: trustme.CA, *names: str) -> ssl.SSLContext:
    """A server context with a certificate of ``ca`` for ``names``."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ca.issue_cert(*names).configure_cert(context)
    return context


@asynccontextmanager
async def fetch_services(
    *ports: int,
    fetch: dict[str, Any] | None = None,
    engines: dict[str, Any] | None = None,
    dns: str | None = None,
    tls: ssl.SSLContext | None = None,
    lines: Lines | None = None,
    extra_allow: tuple[str, ...] = ("127.0.0.0/8",),
) -> AsyncIterator[Services]:
    """The service as it is built, allowed to reach loopback on ``ports``.

    ``fetch`` overrides ``[fetch]`` (plain http allowed by default, as the loopback servers
    speak it), ``engines`` the ``[engines]`` table, ``dns`` is a local DNS server's ip:port,
    ``tls`` the client context, ``lines`` collects the log; ``extra_allow`` is the allow rule
    injected in code (empty: the production policy alone, which refuses loopback).
    """
    data: dict[str, Any] = {
        "schema_version": 1,
        "fetch": {"allow_http": True, "ports": list(ports), "sandbox": "none", **(fetch or {})},
        "service": {"calls_per_minute_web_fetch": 1000, "contact": "ops@example.org"},
    }
    if engines is not None:
        data["engines"] = engines
    if dns is not None:
        data["egress"] = {"dns_servers": [dns]}
    logger = logging.getLogger(f"rypsok.test.fetch_edges.{id(data)}")
    logger.setLevel(logging.INFO)
    if lines is not None:
        logger.addHandler(lines)
    try:
        async with runtime(
            parse_settings(data), logger, extra_allow=extra_allow, ssl_context=tls
        ) as services:
            yield services
    finally:
        if lines is not None:
            logger.removeHandler(lines)


async def fetch(services: Services, url: str, **arguments: Any) -> dict[str, Any]:
    """One web_fetch call; its structured result."""
    return (await services.call("web_fetch", {"url": url, **arguments})).structured


def error_of(data: dict[str, Any]) -> tuple[str, str]:
    """(kind, reason) of an error result; fails with the result when it is none."""
    assert data.get("outcome") == "error", data
    return data["error"]["kind"], data["error"]["reason"]
