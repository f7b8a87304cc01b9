"""Who is calling over HTTP: bearer tokens, callers and their tools (REQ-SEC-018, REQ-SEC-019).

Tokens are configured by reference (``token_env`` / ``token_file``) and resolved once at
start; a reference that resolves to nothing is a start-up error naming the caller. A
presented token is compared with every configured token in constant time: both sides are
hashed first so that the comparison neither stops early nor depends on the lengths, and
the loop never stops at the first match, so timing tells nothing about which caller, or
how much of a token, matched.

The middleware puts the :class:`Caller` on the ASGI scope; :func:`caller_of` reads it back
from the request the SDK attaches to each MCP request, for ``build_server``. It also sets
the SDK's ``AuthenticatedUser`` on the scope, which makes the SDK bind a handshake-era
session to the caller that opened it: another caller presenting that session id gets 404.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from mcp.server import ServerRequestContext
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from rypsok.config.schema import CallerSettings
from rypsok.config.secrets import SecretError, resolve
from rypsok.logs import log_event

CALLER_SCOPE_KEY: Final = "rypsok.caller"
"""Where the authenticated caller is kept on the ASGI scope."""

REALM: Final = "rypsok"
MIN_TOKEN_CHARS: Final = 16
"""Shorter tokens are refused at start: they could be guessed over the network."""


@dataclass(frozen=True, slots=True)
class Caller:
    """An authenticated caller: its name (the key of its limits) and the tools it may use."""

    name: str
    tools: frozenset[str] | None  # None: every tool

    def as_pair(self) -> tuple[str, frozenset[str] | None]:
        """The ``(caller, permitted)`` pair ``build_server`` expects."""
        return self.name, self.tools


LOCAL_CALLER: Final = Caller("local", None)
"""Everyone, when no callers are configured (loopback only)."""

# A request whose scope carries no caller is served as nobody with no tools: failing closed
# if a path ever reaches the server without passing the middleware.
_NOBODY: Final = Caller("unauthenticated", frozenset())


class CallerConfigError(ValueError):
    """A caller's token cannot be used; the message names the caller, never a value."""


@dataclass(frozen=True, slots=True)
class _Credential:
    caller: Caller
    digest: bytes


def _digest(token: bytes) -> bytes:
    return hashlib.sha256(token).digest()


class Authenticator:
    """Maps an ``Authorization`` header to a :class:`Caller`, or None when it matches none."""

    def __init__(self, credentials: Sequence[_Credential]) -> None:
        self._credentials = tuple(credentials)

    @classmethod
    def from_settings(cls, callers: Sequence[CallerSettings]) -> Authenticator:
        """Resolve every caller's token reference; raises :class:`CallerConfigError`."""
        credentials: list[_Credential] = []
        for entry in callers:
            where = f"[[http.callers]] {entry.name}"
            reference = f"token_env {entry.token_env}" if entry.token_env else "token_file"
            try:
                secret = resolve(entry.token_env, entry.token_file)
            except SecretError as exc:
                raise CallerConfigError(f"{where}: {exc}") from None
            if secret is None:
                raise CallerConfigError(f"{where}: {reference} gives no token (unset or empty)")
            token = secret.reveal().strip()
            if len(token) < MIN_TOKEN_CHARS or any(c.isspace() for c in token):
                raise CallerConfigError(
                    f"{where}: the token must be at least {MIN_TOKEN_CHARS} characters "
                    "without spaces"
                )
            digest = _digest(token.encode())
            if any(hmac.compare_digest(digest, c.digest) for c in credentials):
                raise CallerConfigError(f"{where}: shares its token with another caller")
            tools = frozenset(t.value for t in entry.tools)
            credentials.append(_Credential(Caller(entry.name, tools), digest))
        return cls(credentials)

    @property
    def required(self) -> bool:
        """Whether callers must authenticate (some are configured)."""
        return bool(self._credentials)

    def authenticate(self, authorization: bytes | None) -> Caller | None:
        """The caller whose token is presented as ``Bearer <token>``, or None."""
        presented = b""
        if authorization:
            scheme, _, value = authorization.strip().partition(b" ")
            if scheme.lower() == b"bearer":
                presented = value.strip()
        digest = _digest(presented)
        found: Caller | None = None
        for credential in self._credentials:
            # Every credential is compared, match or not (see the module docstring).
            if hmac.compare_digest(digest, credential.digest) and presented:
                found = credential.caller
        return found


def _header(scope: Scope, name: bytes) -> bytes | None:
    for key, value in scope["headers"]:
        if key == name:
            return bytes(value)
    return None


def _user(caller: Caller) -> AuthenticatedUser:
    # The SDK keys session ownership on the token's client_id; the token itself is not needed.
    return AuthenticatedUser(AccessToken(token="", client_id=caller.name, scopes=[]))


class BearerAuthMiddleware:
    """ASGI middleware: 401 without a valid token; otherwise the caller goes on the scope."""

    def __init__(
        self,
        app: ASGIApp,
        authenticator: Authenticator,
        logger: logging.Logger,
        on_refused: Callable[[], None] | None = None,
    ) -> None:
        self.app = app
        self._authenticator = authenticator
        self._logger = logger
        self._on_refused = on_refused

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Authenticate one HTTP request; other scopes (lifespan) pass through."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        caller = LOCAL_CALLER
        if self._authenticator.required:
            authorization = _header(scope, b"authorization")
            found = self._authenticator.authenticate(authorization)
            if found is None:
                reason = "missing" if authorization is None else "invalid"
                log_event(self._logger, logging.INFO, "http_unauthenticated", reason=reason)
                if self._on_refused is not None:
                    self._on_refused()
                await _unauthorized(send, invalid=authorization is not None)
                return
            caller = found
        scope[CALLER_SCOPE_KEY] = caller
        scope["user"] = _user(caller)
        await self.app(scope, receive, send)


async def _unauthorized(send: Send, *, invalid: bool) -> None:
    challenge = f'Bearer realm="{REALM}"' + (', error="invalid_token"' if invalid else "")
    body = (
        b'{"jsonrpc":"2.0","id":null,"error":{"code":-32001,'
        b'"message":"Unauthorized: send Authorization: Bearer <token>"}}'
    )
    await send(
        {
            "type": "http.response.start",
            "status": 401,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"www-authenticate", challenge.encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def caller_of(ctx: ServerRequestContext[Any]) -> tuple[str, frozenset[str] | None]:
    """The ``caller_of`` of ``build_server`` for HTTP: the caller the middleware authenticated."""
    request = ctx.request
    if isinstance(request, Request):
        caller = request.scope.get(CALLER_SCOPE_KEY)
        if isinstance(caller, Caller):
            return caller.as_pair()
    return _NOBODY.as_pair()
