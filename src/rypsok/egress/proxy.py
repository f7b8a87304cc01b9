"""The engine proxy of ``[egress] engine_proxy`` (REQ-RES-008, REQ-SEC-007).

One outbound proxy may carry the engine requests. It is taken from configuration only: the
HTTP library reads no environment, so ``HTTP_PROXY``, ``HTTPS_PROXY``, ``ALL_PROXY`` and
``NO_PROXY`` change nothing. It is never used for agent-directed requests (web_fetch and
robots.txt), because a proxy cannot enforce rypsok's egress profile (REQ-SEC-007).

The proxy URL is ``http://host:port`` or ``https://host:port``: parsed by the egress URL
parser, without credentials, path, query or fragment. The operator configured it, so it is
trusted like an explicitly configured engine endpoint: it may be a private or loopback address,
but cloud metadata addresses and names and the operator's ``[egress] deny`` rules still refuse
it, at start and again on every answer set its name resolves to (the connection is pinned to
the checked addresses).

Proxy authentication (HTTP Basic) takes its credentials by reference only, like every secret
of rypsok (REQ-CFG-004): ``[egress] engine_proxy_auth_env`` names an environment variable,
``engine_proxy_auth_file`` a file, holding ``user:password``; credentials written into the
proxy URL are refused. They are resolved at start into a :class:`~rypsok.config.secrets.Secret`
(a missing variable, an unreadable file or a value without ``:`` is a configuration error that
names the key, never the value), and sent only to the proxy as ``Proxy-Authorization``: on the
CONNECT request of a tunnel, and on a forwarded absolute-form request (which the proxy removes
before passing it on). They never enter the tunnel, so the engine never sees them, and never
go with an agent-directed request, which never uses the proxy.

How requests use it (httpcore2's ``AsyncHTTPProxy``):

* an ``https`` engine endpoint is reached through an HTTP CONNECT tunnel; TLS runs end to end
  with the engine and verifies the engine's certificate and host name, never the proxy's;
  the proxy sees the engine's host name and port, not the request;
* an ``http`` endpoint (only an explicitly configured one, e.g. a SearXNG on the local
  network) is forwarded in absolute form (``GET http://host:port/path``), which proxies accept
  without opening CONNECT to non-TLS ports; the proxy sees that whole request, as does anyone
  on the path of plain http.

With a proxy, the engine's host name is resolved by the proxy, not by rypsok: the address
policy still judges engine names and address literals before anything is sent, and the
origin rule (REQ-SEC-017) is unchanged.

A proxy that refuses (a non-2xx answer to CONNECT, a 407 to a forwarded request), or that
closes the connection while CONNECT is open or before the engine's TLS session through the
tunnel is set up, is ``proxy_failure``: :class:`ConnectWatch` follows the CONNECT exchange so
that these are told apart from the engine's own failures, and a 407 points the operator at
the credential keys (:data:`AUTH_HINT`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Final

from rypsok.config.schema import EgressSettings
from rypsok.config.secrets import Secret, SecretError, resolve
from rypsok.egress.addresses import AddressPolicy
from rypsok.egress.errors import EgressError, EgressReason
from rypsok.egress.urls import CheckedURL, parse_url

KEY = "[egress] engine_proxy"
AUTH_ENV_KEY = "[egress] engine_proxy_auth_env"
AUTH_FILE_KEY = "[egress] engine_proxy_auth_file"
AUTH_HINT: Final = (
    "the engine proxy asks for authentication (407): check the credentials that "
    "[egress] engine_proxy_auth_env or engine_proxy_auth_file refer to"
)
AUTH_MISSING_HINT: Final = (
    "the engine proxy asks for authentication (407): set [egress] engine_proxy_auth_env or "
    "engine_proxy_auth_file to a reference holding user:password"
)


@dataclass(frozen=True, slots=True)
class EngineProxy:
    """A checked engine proxy: scheme, host and port (``url.target`` is ``/``).

    ``credentials`` is ``user:password`` for Basic authentication, or None; it is a
    :class:`Secret`, so the proxy's repr shows ``Secret('***')``.
    """

    url: CheckedURL
    credentials: Secret | None = None

    @property
    def is_https(self) -> bool:
        """True when the connection to the proxy itself uses TLS."""
        return self.url.scheme == "https"

    def basic_auth(self) -> tuple[bytes, bytes] | None:
        """The (user, password) pair, UTF-8, for httpcore2's ``proxy_auth``; None without."""
        if self.credentials is None:
            return None
        user, _colon, password = self.credentials.reveal().partition(":")
        return user.encode("utf-8"), password.encode("utf-8")


def parse_engine_proxy(text: str, policy: AddressPolicy) -> EngineProxy:
    """Check the proxy URL and judge its host as an operator-configured one.

    Raises ValueError with a message naming the key; the message never repeats the URL.
    """
    try:
        url = parse_url(text, allow_http=True, ports=None)
    except EgressError as error:
        if error.reason == EgressReason.CREDENTIALS_IN_URL:
            raise ValueError(
                f"{KEY} must not carry credentials (user:password@); give them by reference "
                "with [egress] engine_proxy_auth_env or engine_proxy_auth_file"
            ) from None
        raise ValueError(
            f"{KEY} must be http://host:port or https://host:port ({error.reason.value})"
        ) from None
    if url.target != "/" or url.fragment is not None:
        raise ValueError(f"{KEY} takes a scheme, host and port only: no path, query or fragment")
    try:
        if url.address is not None:
            policy.check_address(url.address, trusted_name=True)
        else:
            policy.check_name(url.host, trusted=True)
    except EgressError as error:
        raise ValueError(
            f"{KEY} is refused by the egress policy ({error.category or error.reason.value})"
        ) from None
    return EngineProxy(url)


def _is_control(char: str) -> bool:
    return char < " " or "\x7f" <= char <= "\x9f"


def resolve_proxy_credentials(settings: EgressSettings) -> Secret | None:
    """Resolve ``engine_proxy_auth_env`` / ``engine_proxy_auth_file``; None when neither is set.

    Raises ValueError with a message naming the key (and the variable or file it refers to),
    never the value: an unset or empty variable, an unreadable or empty file, a value without
    ``user:`` or with control characters.
    """
    env_name, file_path = settings.engine_proxy_auth_env, settings.engine_proxy_auth_file
    if not env_name and not file_path:
        return None
    key = AUTH_ENV_KEY if env_name else AUTH_FILE_KEY
    try:
        secret = resolve(env_name, file_path)
    except SecretError as exc:
        raise ValueError(f"{key}: {exc}") from None
    if secret is None:
        where = f"the environment variable {env_name}" if env_name else f"the file {file_path}"
        raise ValueError(f"{key}: {where} is unset or empty; it must hold user:password")
    value = secret.reveal()
    user, colon, _password = value.partition(":")
    if not colon or not user:
        raise ValueError(f"{key}: the value must be user:password (a user name, then ':')")
    if any(_is_control(c) for c in value):
        raise ValueError(f"{key}: the value must not contain control characters or line breaks")
    return secret


def engine_proxy_from(settings: EgressSettings, policy: AddressPolicy) -> EngineProxy | None:
    """The configured engine proxy with its credentials, or None; ValueError when refused."""
    if settings.engine_proxy is None:
        return None
    proxy = parse_engine_proxy(settings.engine_proxy, policy)
    credentials = resolve_proxy_credentials(settings)
    return proxy if credentials is None else EngineProxy(proxy.url, credentials)


def check_engine_proxy(text: str | None, *, allow: list[str], deny: list[str]) -> None:
    """Validate ``[egress] engine_proxy`` at start, without network; ValueError when refused."""
    if text is not None:
        parse_engine_proxy(text, AddressPolicy(allow=allow, deny=deny))


# --- telling the proxy's failures from the engine's ------------------------------------------


class _Stage(Enum):
    IDLE = "idle"  # no CONNECT on this request: a pooled tunnel, or absolute-form forwarding
    CONNECTING = "connecting"  # CONNECT sent, no answer yet
    REFUSED = "refused"  # CONNECT answered with a status outside 2xx
    HANDSHAKE = "handshake"  # CONNECT answered 2xx; the engine's TLS through the tunnel
    TUNNEL = "tunnel"  # the engine's TLS is up; what follows is the engine's


# The reasons a closed, reset or malformed exchange with the proxy surfaces as.
_HANG_UP_REASONS: Final = frozenset(
    {EgressReason.PROTOCOL_ERROR, EgressReason.CONNECT_FAILED, EgressReason.TLS_FAILURE}
)


class ConnectWatch:
    """Follows one proxied request through httpcore2's ``trace`` events (the ``trace`` extension).

    httpcore2 passes the extension on to the CONNECT request it sends for a new tunnel, so the
    watch sees that request go out, the proxy's status, and the start of the engine's TLS
    through the tunnel. It keeps only the stage and the status, never a header or text.
    """

    __slots__ = ("_stage", "status")

    def __init__(self) -> None:
        self._stage = _Stage.IDLE
        self.status: int | None = None

    async def __call__(self, event: str, info: Mapping[str, object]) -> None:
        """The trace callback: ``event`` is ``<module>.<step>.<started|complete|failed>``."""
        if event == "http11.send_request_headers.started":
            # An httpcore2 Request; read by attribute so that this module (imported at start by
            # the configuration check) does not import the HTTP library.
            if getattr(info.get("request"), "method", None) == b"CONNECT":
                self._stage = _Stage.CONNECTING
        elif event == "http11.receive_response_headers.complete":
            if self._stage is _Stage.CONNECTING:
                value = info.get("return_value")
                status = value[1] if isinstance(value, tuple) and len(value) > 1 else None
                self.status = status if isinstance(status, int) else None
                ok = self.status is not None and 200 <= self.status < 300
                self._stage = _Stage.HANDSHAKE if ok else _Stage.REFUSED
        elif event == "proxy.start_tls.complete" and self._stage is _Stage.HANDSHAKE:
            self._stage = _Stage.TUNNEL

    @property
    def refused_for_authentication(self) -> bool:
        """True when the proxy answered this request's CONNECT with 407."""
        return self._stage is _Stage.REFUSED and self.status == 407

    def judge(self, error: EgressError) -> EgressError:
        """The error to report for ``error``: ``proxy_failure`` when the proxy hung up.

        A connection closed, reset or left malformed while CONNECT was open is the proxy's;
        so is a refused CONNECT. The engine's TLS through the tunnel keeps its reasons here
        (a certificate failure is the engine's ``tls_failure``); a tunnel closed during
        that handshake is recognised by the transport (``egress.transport``).
        """
        if error.is_policy or error.reason is EgressReason.PROXY_FAILURE:
            return error
        if self._stage is _Stage.REFUSED or (
            self._stage is _Stage.CONNECTING and error.reason in _HANG_UP_REASONS
        ):
            return EgressError(EgressReason.PROXY_FAILURE)
        return error
