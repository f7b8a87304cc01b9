"""The HTTP listener's pure parts, in process: listener policy, token matching, Host matching,
the session bound's decoration and the request ceiling (REQ-SEC-018, REQ-SEC-019,
REQ-SEC-022, REQ-SEC-024, REQ-TEST-014)."""

from __future__ import annotations

import logging
from typing import Any

import anyio
import pytest

from rypsok.app import ConfigurationError
from rypsok.config.load import ConfigError, parse_settings
from rypsok.config.schema import HttpSettings
from rypsok.mcp.http import check_listener, is_loopback, listener_policy
from rypsok.mcp.http_auth import Authenticator, CallerConfigError
from rypsok.mcp.http_guard import (
    HttpCounters,
    InFlight,
    RequestCeiling,
    SessionBound,
    _host_allowed,
    _request_id,
)

pytestmark = pytest.mark.anyio
LOGGER = logging.getLogger("rypsok.test.http")


def _http(**values: Any) -> HttpSettings:
    return parse_settings({"schema_version": 1, "http": values}).http


@pytest.mark.parametrize(
    ("bind", "hosts"),
    [
        ("127.0.0.1", ("127.0.0.1:8000", "localhost:8000")),
        ("::1", ("[::1]:8000", "localhost:8000")),
        ("localhost", ("127.0.0.1:8000", "localhost:8000", "[::1]:8000")),
    ],
)
def test_req_sec_018_default_hosts_derive_from_bind_and_port(
    bind: str, hosts: tuple[str, ...]
) -> None:
    """REQ-SEC-018: without allowed_hosts, the loopback names with the port; origins follow."""
    policy = listener_policy(_http(bind=bind), 8000)
    assert policy.allowed_hosts == hosts
    assert policy.loopback
    assert f"http://{hosts[0]}" in policy.allowed_origins
    assert "http://evil.example" not in policy.allowed_origins


def test_req_sec_018_port_80_also_allows_the_bare_name() -> None:
    """Clients leave the default port out of Host."""
    assert "localhost" in listener_policy(_http(), 80).allowed_hosts


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"bind": "10.1.2.3"}, "[[http.callers]]"),
        ({"bind": "0.0.0.0"}, "[http] bind"),
        (
            {"bind": "::", "callers": [{"name": "a", "token_env": "X"}]},
            "[http] allowed_hosts",
        ),
        ({"bind": "rypsok.internal"}, "[[http.callers]]"),
    ],
)
def test_req_sec_018_unprotected_listeners_refused(values: dict[str, Any], message: str) -> None:
    """REQ-SEC-018: authentication off loopback, explicit hosts for a wildcard bind."""
    with pytest.raises(ConfigurationError, match=message.replace("[", r"\[").replace("]", r"\]")):
        check_listener(_http(**values))


def test_req_sec_018_specific_address_with_callers_is_accepted() -> None:
    """A specific non-loopback address with a caller gets its own address as default Host."""
    http = _http(bind="10.1.2.3", callers=[{"name": "a", "token_env": "X"}])
    policy = listener_policy(http, 9000)
    assert policy.allowed_hosts == ("10.1.2.3:9000",) and not policy.loopback
    assert not is_loopback("10.1.2.3") and is_loopback("127.0.0.2") and is_loopback("[::1]")


@pytest.mark.parametrize("bad", ["evil.example/path", "http://x", "a b", "[::1", "x:-1", ""])
def test_allowed_hosts_values_validated(bad: str) -> None:
    """A Host allow-list entry that cannot match a Host header is a configuration error."""
    with pytest.raises(ConfigError, match="allowed_hosts"):
        _http(allowed_hosts=[bad])


def test_allowed_origins_need_a_scheme() -> None:
    """Origins are scheme://host[:port]."""
    with pytest.raises(ConfigError, match="allowed_origins"):
        _http(allowed_origins=["example.org"])


@pytest.mark.parametrize(
    ("value", "allowed", "expected"),
    [
        ("a.example:8000", ["a.example:8000"], True),
        ("a.example:8001", ["a.example:8000"], False),
        ("a.example:8001", ["a.example:*"], True),
        ("a.example", ["a.example:*"], False),
        ("a.example:x", ["a.example:*"], False),
        ("b.a.example:80", ["a.example:*"], False),
        ("[::1]:5", ["[::1]:*"], True),
        ("http://a.example:3000", ["http://a.example:*"], True),
    ],
)
def test_host_matching(value: str, allowed: list[str], expected: bool) -> None:
    """Exact values, or ``name:*`` with a numeric port; nothing looser."""
    assert _host_allowed(value, allowed) is expected


def _authenticator(monkeypatch: pytest.MonkeyPatch) -> Authenticator:
    monkeypatch.setenv("RYPSOK_T1", "token-one-0123456789")
    monkeypatch.setenv("RYPSOK_T2", "token-two-0123456789")
    http = _http(
        callers=[
            {"name": "one", "token_env": "RYPSOK_T1"},
            {"name": "two", "token_env": "RYPSOK_T2", "tools": ["web_search"]},
        ]
    )
    return Authenticator.from_settings(http.callers)


def test_req_sec_019_tokens_map_to_callers(monkeypatch: pytest.MonkeyPatch) -> None:
    """REQ-SEC-019: each token maps to its caller and that caller's tools, nothing else does."""
    auth = _authenticator(monkeypatch)
    one = auth.authenticate(b"Bearer token-one-0123456789")
    two = auth.authenticate(b"bearer  token-two-0123456789 ")
    assert one is not None and (one.name, one.tools) == (
        "one",
        frozenset({"web_search", "web_fetch", "engine_status"}),
    )
    assert two is not None and (two.name, two.tools) == ("two", frozenset({"web_search"}))
    for bad in (
        None,
        b"",
        b"Bearer",
        b"Bearer ",
        b"Basic token-one-0123456789",
        b"Bearer token-one-012345678",
        b"Bearer token-one-0123456789x",
    ):
        assert auth.authenticate(bad) is None


def test_req_sec_018_token_references_must_resolve(monkeypatch: pytest.MonkeyPatch) -> None:
    """REQ-SEC-018: unset, short and shared tokens stop start-up, naming the caller only."""
    monkeypatch.setenv("RYPSOK_SHARED", "shared-token-0123456789")
    monkeypatch.delenv("RYPSOK_UNSET", raising=False)
    cases = [
        ([{"name": "u", "token_env": "RYPSOK_UNSET"}], "u: token_env RYPSOK_UNSET"),
        (
            [
                {"name": "a", "token_env": "RYPSOK_SHARED"},
                {"name": "b", "token_env": "RYPSOK_SHARED"},
            ],
            "b: shares its token",
        ),
    ]
    for callers, message in cases:
        with pytest.raises(CallerConfigError, match=message) as raised:
            Authenticator.from_settings(_http(callers=callers).callers)
        assert "shared-token" not in str(raised.value)


def test_request_ids_of_cancellable_requests() -> None:
    """Only a JSON-RPC request other than initialize has an id to cancel."""
    assert _request_id(b'{"jsonrpc":"2.0","id":7,"method":"tools/call"}') == 7
    assert _request_id(b'{"jsonrpc":"2.0","id":"a","method":"tools/call"}') == "a"
    for body in (
        b"",
        b"[1]",
        b'{"id":1}',
        b'{"id":true,"method":"x"}',
        b'{"jsonrpc":"2.0","method":"notifications/x"}',
        b'{"jsonrpc":"2.0","id":1,"method":"initialize"}',
    ):
        assert _request_id(body) is None


async def _call(app: Any, scope: dict[str, Any]) -> list[dict[str, Any]]:
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        await anyio.sleep_forever()
        raise AssertionError

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(scope, receive, send)
    return sent


def _scope(
    headers: list[tuple[bytes, bytes]] | None = None, method: str = "POST"
) -> dict[str, Any]:
    return {"type": "http", "method": method, "path": "/mcp", "headers": headers or []}


async def test_req_sec_024_refused_session_gets_retry_after() -> None:
    """REQ-SEC-024: the SDK's bare 503 for a new session gains Retry-After and is counted;
    a 503 for a request inside a session, or a 2026-07-28 request, is left alone."""

    async def refuse(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 503, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    counters = HttpCounters()
    bound = SessionBound(refuse, 2, counters, LOGGER)
    new = await _call(bound, _scope())
    inside = await _call(bound, _scope([(b"mcp-session-id", b"abc")]))
    modern = await _call(bound, _scope([(b"mcp-protocol-version", b"2026-07-28")]))
    assert (b"retry-after", b"10") in new[0]["headers"]
    assert all(b"retry-after" not in dict(m[0]["headers"]) for m in (inside, modern))
    assert counters.sessions_refused == 1


async def test_req_sec_022_ceiling_answers_408_or_ends_the_stream() -> None:
    """REQ-SEC-022: nothing sent yet → 408; a started response → its body is ended."""

    async def silent(scope: Any, receive: Any, send: Any) -> None:
        await anyio.sleep_forever()

    async def streaming(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"data", "more_body": True})
        await anyio.sleep_forever()

    counters = HttpCounters()
    quiet = await _call(RequestCeiling(silent, 0.05, counters, LOGGER, InFlight()), _scope())
    started = await _call(RequestCeiling(streaming, 0.05, counters, LOGGER, InFlight()), _scope())
    assert quiet[0]["status"] == 408
    assert started[-1] == {"type": "http.response.body", "body": b"", "more_body": False}
    assert counters.timed_out == 2


async def test_req_ops_002_shutdown_ends_requests_with_503() -> None:
    """REQ-OPS-002: at shutdown the requests in flight are ended (503 when nothing was sent)
    and new ones are refused."""

    async def silent(scope: Any, receive: Any, send: Any) -> None:
        await anyio.sleep_forever()

    in_flight = InFlight()
    ceiling = RequestCeiling(silent, 60, HttpCounters(), LOGGER, in_flight)
    results: list[list[dict[str, Any]]] = []

    async def one() -> None:
        results.append(await _call(ceiling, _scope()))

    async with anyio.create_task_group() as group:
        group.start_soon(one)
        await anyio.sleep(0.05)
        assert len(in_flight) == 1
        in_flight.cancel_all()
    late = await _call(ceiling, _scope())
    assert results[0][0]["status"] == 503 and late[0]["status"] == 503
    assert len(in_flight) == 0
