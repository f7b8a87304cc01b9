"""The egress component's single entry point, :class:`Egress`, and its two profiles (REQ-SEC-005).

Every outbound request of rypsok goes through one :class:`Egress`:

* **engine profile** (:meth:`Egress.engine_request`, REQ-SEC-017): the request must go to the
  origin (scheme, host, port) of the engine's endpoint, over https, to addresses the policy
  allows; an endpoint the operator configured explicitly may use http and private or loopback
  addresses (metadata addresses and operator deny rules still refuse). Its credential headers
  can therefore reach only that origin. No redirect is followed: a 3xx is returned as it came.
  Connections are pooled per origin (keep-alive), each new one pinned to checked addresses.
  When ``[egress] engine_proxy`` is set (REQ-RES-008), every engine request goes through that
  proxy and nowhere else: a CONNECT tunnel for https (TLS to the engine, the engine's
  certificate verified), absolute-form forwarding for an explicit http endpoint; the
  connection to the proxy is pinned to its checked addresses. With ``engine_proxy_auth_env``
  or ``engine_proxy_auth_file``, Basic ``Proxy-Authorization`` goes to the proxy only (the
  CONNECT request, or the forwarded request), never into the tunnel. A proxy that cannot be
  reached, refuses, or hangs up on CONNECT is ``proxy_failure``, never a fallback to a direct
  connection; a 407 is also logged with a hint naming the credential keys (see :mod:`.proxy`).
* **agent-directed profile** (:meth:`Egress.check_url` then :meth:`Egress.get`, REQ-SEC-006..009):
  GET only, https (http when the caller allows it), ports 80, 443 and ``[fetch] ports``, the
  full address policy, only the headers rypsok sets, one hop per call on a fresh connection
  that is closed afterwards. The caller follows redirects by checking and getting each hop.

Both profiles bound the decoded body while streaming, have a connect timeout and a total
deadline for the whole exchange (DNS, connect, TLS, request, body) with read timeouts equal to
the time remaining (REQ-SEC-011), ignore proxy environment variables, and send no cookies.
The agent-directed profile never uses the engine proxy (REQ-SEC-007).
Everything is async (anyio) and cancellable: a cancelled call closes its connection.
"""

from __future__ import annotations

import logging
import re
import ssl
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Final, Self

import anyio
import httpcore2

from rypsok.config.schema import Settings
from rypsok.egress.addresses import AddressPolicy, IPAddress
from rypsok.egress.client import Excess, Exchange, exchange
from rypsok.egress.decoding import ACCEPT_ENCODING
from rypsok.egress.errors import EgressError, EgressReason
from rypsok.egress.proxy import (
    AUTH_HINT,
    AUTH_MISSING_HINT,
    ConnectWatch,
    EngineProxy,
    engine_proxy_from,
)
from rypsok.egress.resolver import make_resolver
from rypsok.egress.transport import (
    Pin,
    PinnedBackend,
    default_ssl_context,
    pinned,
    require_verifying,
)
from rypsok.egress.urls import CheckedURL, parse_url
from rypsok.engines.base import EngineRequest, EngineResponse
from rypsok.logs import log_event

FETCH_PORTS: Final = frozenset({80, 443})  # LIM-F8
MAX_REQUEST_BODY: Final = 1024 * 1024
MAX_DRIVER_HEADERS: Final = 32
ENGINE_KEEPALIVE_S: Final = 30.0
PROXY_AUTH_WARNING_S: Final = 60.0  # a proxy refusing with 407 is logged at most this often
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_VALUE = re.compile(r"[\x20-\x7e\t]*")
# Headers only rypsok sets, or that change framing, connection or state; a driver may not.
_RESERVED_HEADERS: Final = frozenset(
    {
        "host",
        "user-agent",
        "accept-encoding",
        "connection",
        "keep-alive",
        "content-length",
        "transfer-encoding",
        "te",
        "trailer",
        "upgrade",
        "expect",
        "cookie",
        "cookie2",
    }
)


@dataclass(frozen=True, slots=True)
class FetchedResponse:
    """One agent-directed hop: status, lower-cased headers, decoded body and the peer address.

    ``url`` is the checked URL requested (its fragment was not sent). ``peer`` is the address
    connected to; it is for logs and tests, never for the caller's response. ``truncated``:
    the body went on beyond ``max_bytes`` and only its first bytes were read (asked for with
    ``on_excess="truncate"``).
    """

    url: CheckedURL
    status: int
    headers: Mapping[str, str]
    body: bytes
    peer: IPAddress | None
    truncated: bool = False

    @property
    def location(self) -> str | None:
        """The Location of a 3xx response (external text, to be checked as a new URL)."""
        if 300 <= self.status < 400:
            return self.headers.get("location")
        return None

    @property
    def media_type(self) -> str:
        """The media type without parameters, lower-case."""
        return self.headers.get("content-type", "").split(";")[0].strip().lower()


def _header_value(value: str) -> str:
    if not _VALUE.fullmatch(value) or len(value) > 8192:
        raise EgressError(EgressReason.INVALID_REQUEST)
    return value


def _scrubbed(error: EgressError) -> EgressError:
    """A fresh error with the same reason, raised outside any handler by the caller.

    Internal failures are chained to library exceptions whose text may hold peer data
    (a certificate subject, a header line); the public error carries none of it: no cause,
    no context, no inner traceback (REQ-SEC-001, REQ-SEC-016).
    """
    return EgressError(error.reason, error.category)


def _positive(*values: float) -> None:
    if any(not value > 0 for value in values):
        raise ValueError("timeouts and byte bounds must be positive")


# Idle connections kept per engine origin by default: a request looks at each pooled connection,
# so keep about the per-engine concurrency cap (LIM-C2) of two engines sharing an origin.
ENGINE_KEEPALIVE_PER_ORIGIN = 8
_ENDPOINT_ORIGINS_KEPT = 256


class Egress:
    """The only code in rypsok that opens sockets.

    ``extra_allow`` adds allow rules in code (tests reach 127.0.0.1 this way; production
    passes none). ``ssl_context`` replaces the system trust store (tests pass a trustme CA);
    it must verify certificates and host names. ``keepalive_per_origin`` is how many idle
    engine connections one origin keeps: fewer than the requests that run at once on an origin
    means a new connection (and TLS handshake) per request under load, many more means idle
    sockets checked on every request. ``[egress] engine_proxy``, when set, carries every
    engine request (never an agent-directed one); a proxy URL the policy refuses, or proxy
    credentials that cannot be resolved, raise ValueError here (naming the key, never a
    value). ``logger`` receives the operator's hint when the proxy asks for authentication.
    """

    def __init__(
        self,
        settings: Settings,
        user_agent: str,
        *,
        extra_allow: Sequence[str] = (),
        ssl_context: ssl.SSLContext | None = None,
        keepalive_per_origin: int = ENGINE_KEEPALIVE_PER_ORIGIN,
        logger: logging.Logger | None = None,
    ) -> None:
        if keepalive_per_origin < 1:
            raise ValueError("keepalive_per_origin must be at least 1")
        if not user_agent or len(user_agent) > 512 or not _VALUE.fullmatch(user_agent):
            raise ValueError("the User-Agent must be 1 to 512 printable ASCII characters")
        self._user_agent = user_agent
        self._policy = AddressPolicy(
            allow=[*settings.egress.allow, *extra_allow], deny=settings.egress.deny
        )
        self._proxy: EngineProxy | None = engine_proxy_from(settings.egress, self._policy)
        self._logger = logger or logging.getLogger("rypsok.egress")
        self._proxy_warned_at: float | None = None
        self._resolver = make_resolver(settings.egress.dns_servers)
        self._fetch_ports = FETCH_PORTS | frozenset(settings.fetch.ports)
        self._ssl = require_verifying(ssl_context) if ssl_context else default_ssl_context()
        self._backend = PinnedBackend()
        # One pool per trust level and origin: a connection opened for an explicitly configured
        # endpoint is never reused for a request that must pass the full policy, and a request
        # only looks at its own origin's few connections (httpcore checks every pooled
        # connection with a system call per request). Origins are bounded by configuration.
        self._pools: dict[tuple[bool, tuple[str, str, int]], httpcore2.AsyncConnectionPool] = {}
        # Concurrency is bounded by the provider limits (LIM-C1 for the process, LIM-C2 per
        # engine); the pool only must not be the tighter bound.
        self._pool_size = settings.search.requests_in_flight
        self._keepalive = min(keepalive_per_origin, self._pool_size)
        # Endpoint origins, parsed once: endpoints come from the configuration (and the
        # engines' language templates), so there are few; the bound is a backstop.
        self._endpoint_origins: dict[tuple[str, bool], tuple[str, str, int]] = {}
        self._closed = False

    # --- checks without network -------------------------------------------------------------

    def _judge(self, url: CheckedURL, *, trusted: bool) -> bool:
        """Apply the name or literal-address policy; return whether the name is trusted."""
        if url.address is not None:
            self._policy.check_address(url.address, trusted_name=trusted)
            return trusted
        return self._policy.check_name(url.host, trusted=trusted)

    def check_url(self, url: str, *, allow_http: bool) -> CheckedURL:
        """Check an agent-directed URL without network: syntax, scheme, port, name, literal.

        Raises :class:`EgressError`; a name is resolved and judged again by :meth:`get`.
        """
        try:
            checked = parse_url(url, allow_http=allow_http, ports=self._fetch_ports)
            self._judge(checked, trusted=False)
        except EgressError as error:
            failure = error
        else:
            return checked
        raise _scrubbed(failure)

    # --- the two profiles -------------------------------------------------------------------

    def _pin(self, url: CheckedURL, *, trusted: bool) -> Pin:
        policy = self._policy
        resolver = self._resolver
        literal = url.address

        async def checked_addresses(timeout_s: float) -> tuple[IPAddress, ...]:
            if literal is not None:
                return (policy.check_address(literal, trusted_name=trusted),)
            answer = await resolver.resolve(url.host, timeout_s)
            return policy.check_answer_set(answer, trusted_name=trusted)

        return Pin(url.host, url.port, checked_addresses)

    def _proxy_pin(self, proxy: EngineProxy) -> Pin:
        """The pin of a connection to the engine proxy: trusted like an explicit endpoint.

        A new pin per request, so the proxy's name is resolved once per new connection and
        that connection goes to the addresses just judged.
        """
        pin = self._pin(proxy.url, trusted=True)
        return Pin(
            pin.host,
            pin.port,
            pin.addresses,
            failure=EgressReason.PROXY_FAILURE,
            own_tls=proxy.is_https,
        )

    def _ensure_open(self) -> None:
        if self._closed:
            raise EgressError(EgressReason.CLOSED)

    async def _run(
        self,
        sender: httpcore2.AsyncConnectionPool | httpcore2.AsyncHTTPConnection,
        *,
        method: str,
        url: CheckedURL,
        headers: list[tuple[str, str]],
        body: bytes | None,
        pin: Pin,
        max_bytes: int,
        connect_timeout_s: float,
        total_timeout_s: float,
        proxied: bool = False,
        watch: ConnectWatch | None = None,
        on_excess: Excess = "refuse",
    ) -> Exchange:
        host = url.host
        extensions: dict[str, object] = {}
        if watch is not None:
            # Follows a CONNECT this request may open, to tell the proxy's failures apart.
            extensions["trace"] = watch
        if proxied and ":" in host:
            # Through the proxy, the host is written into the CONNECT target and the absolute
            # request URL, where an IPv6 literal needs its brackets; TLS still names the
            # address itself.
            host = f"[{host}]"
            extensions["sni_hostname"] = url.host
        try:
            # The scope is the total deadline over DNS, connect, TLS, request and body. Each
            # read is also given the whole total: the scope ends it at the deadline, so the
            # read timeout is in effect the time remaining (REQ-SEC-011).
            with anyio.fail_after(total_timeout_s):
                left = total_timeout_s
                request = httpcore2.Request(
                    method,
                    httpcore2.URL(scheme=url.scheme, host=host, port=url.port, target=url.target),
                    headers=headers,
                    content=body,
                    extensions={
                        **extensions,
                        "timeout": {
                            "connect": min(connect_timeout_s, left),
                            "read": left,
                            "write": left,
                            "pool": left,
                        },
                    },
                )
                with pinned(pin):
                    return await exchange(sender, request, max_bytes=max_bytes, on_excess=on_excess)
        except TimeoutError:
            raise EgressError(EgressReason.TIMEOUT) from None
        except EgressError as error:
            if watch is None:
                raise
            failure = watch.judge(error)
        raise failure

    async def get(
        self,
        url: CheckedURL,
        *,
        accept: str,
        max_bytes: int,
        connect_timeout_s: float,
        total_timeout_s: float,
        on_excess: Excess = "refuse",
    ) -> FetchedResponse:
        """Fetch one agent-directed hop with GET (REQ-SEC-006/007/009, REQ-FETCH-007).

        The URL is checked again (a :class:`CheckedURL` can be built by hand), its name
        resolved, the complete answer set judged, and the connection pinned to it. A 3xx
        is returned with its Location; following it is the caller's next call. A body beyond
        ``max_bytes`` decoded bytes is ``too_large``; with ``on_excess="truncate"`` its first
        ``max_bytes`` bytes are returned instead (``truncated``), the rest left unread and the
        connection closed (a bounded prefix, as robots.txt is read).
        """
        try:
            return await self._get(
                url,
                accept=accept,
                max_bytes=max_bytes,
                connect_timeout_s=connect_timeout_s,
                total_timeout_s=total_timeout_s,
                on_excess=on_excess,
            )
        except EgressError as error:
            failure = error
        raise _scrubbed(failure)

    async def _get(
        self,
        url: CheckedURL,
        *,
        accept: str,
        max_bytes: int,
        connect_timeout_s: float,
        total_timeout_s: float,
        on_excess: Excess,
    ) -> FetchedResponse:
        self._ensure_open()
        _positive(max_bytes, connect_timeout_s, total_timeout_s)
        checked = parse_url(url.url, allow_http=url.scheme == "http", ports=self._fetch_ports)
        trusted = self._judge(checked, trusted=False)
        headers = [
            ("Host", checked.host_header),
            ("User-Agent", self._user_agent),
            ("Accept", _header_value(accept)),
            ("Accept-Encoding", ACCEPT_ENCODING),
            ("Connection", "close"),
        ]
        connection = httpcore2.AsyncHTTPConnection(
            origin=httpcore2.Origin(
                checked.scheme.encode("ascii"), checked.host.encode("ascii"), checked.port
            ),
            ssl_context=self._ssl,
            http1=True,
            http2=False,
            retries=0,
            network_backend=self._backend,
        )
        try:
            result = await self._run(
                connection,
                method="GET",
                url=checked,
                headers=headers,
                body=None,
                pin=self._pin(checked, trusted=trusted),
                max_bytes=max_bytes,
                connect_timeout_s=connect_timeout_s,
                total_timeout_s=total_timeout_s,
                on_excess=on_excess,
            )
        finally:
            with anyio.move_on_after(2.0, shield=True):
                await connection.aclose()
        return FetchedResponse(
            url=url,
            status=result.status,
            headers=result.headers,
            body=result.body,
            peer=result.peer,
            truncated=result.truncated,
        )

    def _engine_headers(self, request: EngineRequest, url: CheckedURL) -> list[tuple[str, str]]:
        if len(request.headers) > MAX_DRIVER_HEADERS:
            raise EgressError(EgressReason.INVALID_REQUEST)
        driver: dict[str, tuple[str, str]] = {}
        for name, value in request.headers:
            key = name.lower()
            if not _TOKEN.fullmatch(name) or key in _RESERVED_HEADERS or key in driver:
                raise EgressError(EgressReason.INVALID_REQUEST)
            if key.startswith("proxy-"):
                raise EgressError(EgressReason.INVALID_REQUEST)
            driver[key] = (name, _header_value(value))
        accept = driver.pop("accept", ("Accept", "*/*"))[1]
        headers = [
            ("Host", url.host_header),
            ("User-Agent", self._user_agent),
            ("Accept", accept),
            ("Accept-Encoding", ACCEPT_ENCODING),
            ("Connection", "keep-alive"),
            *driver.values(),
        ]
        if request.method == "POST":
            headers.append(("Content-Length", str(len(request.body or b""))))
        return headers

    def _pool_for(
        self, explicit: bool, origin: tuple[str, str, int]
    ) -> httpcore2.AsyncConnectionPool:
        pool = self._pools.get((explicit, origin))
        if pool is not None:
            return pool
        proxy = self._proxy
        if proxy is None:
            pool = httpcore2.AsyncConnectionPool(
                ssl_context=self._ssl,
                proxy=None,
                max_connections=self._pool_size,
                max_keepalive_connections=self._keepalive,
                keepalive_expiry=ENGINE_KEEPALIVE_S,
                http1=True,
                http2=False,
                retries=0,
                network_backend=self._backend,
            )
        else:
            # The library's proxy pool: CONNECT and TLS to the engine with ``ssl_context`` for
            # https origins, absolute-form forwarding for http ones. Its connections to the
            # proxy go through the same pinned backend, and an https proxy is verified with
            # the same verifying context against the proxy's own host name. ``proxy_auth``
            # becomes a Basic ``Proxy-Authorization`` header on the CONNECT request and on
            # forwarded requests only; the request inside a tunnel never carries it (and a
            # driver may not set a ``Proxy-*`` header, see ``_engine_headers``).
            pool = httpcore2.AsyncHTTPProxy(
                proxy_url=httpcore2.URL(
                    scheme=proxy.url.scheme, host=proxy.url.host, port=proxy.url.port, target="/"
                ),
                proxy_auth=proxy.basic_auth(),
                ssl_context=self._ssl,
                proxy_ssl_context=self._ssl if proxy.is_https else None,
                max_connections=self._pool_size,
                max_keepalive_connections=self._keepalive,
                keepalive_expiry=ENGINE_KEEPALIVE_S,
                http1=True,
                http2=False,
                retries=0,
                network_backend=self._backend,
            )
        self._pools[(explicit, origin)] = pool
        return pool

    async def engine_request(
        self,
        request: EngineRequest,
        *,
        endpoint: str,
        explicit_endpoint: bool,
        connect_timeout_s: float,
        total_timeout_s: float,
        max_bytes: int,
    ) -> EngineResponse:
        """Send one engine request under the engine profile (REQ-SEC-017, REQ-TEST-015).

        ``endpoint`` is the engine's concrete endpoint URL (any template filled in);
        ``explicit_endpoint`` is True when the operator configured it in ``[engines.<id>]``.
        The request URL must have the endpoint's origin, else ``origin_mismatch`` and
        nothing is sent. A 3xx is returned, never followed.
        """
        try:
            return await self._engine_request(
                request,
                endpoint=endpoint,
                explicit_endpoint=explicit_endpoint,
                connect_timeout_s=connect_timeout_s,
                total_timeout_s=total_timeout_s,
                max_bytes=max_bytes,
            )
        except EgressError as error:
            failure = error
        raise _scrubbed(failure)

    def _endpoint_origin(self, endpoint: str, explicit: bool) -> tuple[str, str, int]:
        key = (endpoint, explicit)
        origin = self._endpoint_origins.get(key)
        if origin is None:
            origin = parse_url(endpoint, allow_http=explicit, ports=None).origin
            if len(self._endpoint_origins) >= _ENDPOINT_ORIGINS_KEPT:
                self._endpoint_origins.clear()
            self._endpoint_origins[key] = origin
        return origin

    async def _engine_request(
        self,
        request: EngineRequest,
        *,
        endpoint: str,
        explicit_endpoint: bool,
        connect_timeout_s: float,
        total_timeout_s: float,
        max_bytes: int,
    ) -> EngineResponse:
        self._ensure_open()
        _positive(max_bytes, connect_timeout_s, total_timeout_s)
        origin = self._endpoint_origin(endpoint, explicit_endpoint)
        url = parse_url(request.url, allow_http=explicit_endpoint, ports=None)
        if url.origin != origin:
            # Also what keeps credential headers on the endpoint's origin.
            raise EgressError(EgressReason.ORIGIN_MISMATCH)
        if request.method not in ("GET", "POST"):
            raise EgressError(EgressReason.INVALID_REQUEST)
        if request.body is not None and (
            request.method != "POST" or len(request.body) > MAX_REQUEST_BODY
        ):
            raise EgressError(EgressReason.INVALID_REQUEST)
        trusted = self._judge(url, trusted=explicit_endpoint)
        headers = self._engine_headers(request, url)
        proxy = self._proxy
        watch = ConnectWatch() if proxy is not None else None
        try:
            result = await self._run(
                self._pool_for(explicit_endpoint, url.origin),
                method=request.method,
                url=url,
                headers=headers,
                body=request.body if request.method == "POST" else None,
                # Through the proxy, the only connection rypsok opens is to the proxy; the
                # engine's name is resolved by the proxy (judged above as a name or literal).
                pin=self._pin(url, trusted=trusted) if proxy is None else self._proxy_pin(proxy),
                max_bytes=max_bytes,
                connect_timeout_s=connect_timeout_s,
                total_timeout_s=total_timeout_s,
                proxied=proxy is not None,
                watch=watch,
            )
        except EgressError:
            if watch is not None and watch.refused_for_authentication:
                self._warn_proxy_authentication()
            raise
        if proxy is not None and url.scheme == "http" and result.status == 407:
            # A forwarded http request answered "Proxy Authentication Required": only a proxy
            # sends 407 (its credentials were missing or refused), so this is the proxy refusing.
            self._warn_proxy_authentication()
            raise EgressError(EgressReason.PROXY_FAILURE)
        return EngineResponse(status=result.status, headers=result.headers, body=result.body)

    def _warn_proxy_authentication(self) -> None:
        """Tell the operator which keys to check when the proxy answers 407 (never a value)."""
        now = time.monotonic()
        if self._proxy_warned_at is not None and now - self._proxy_warned_at < (
            PROXY_AUTH_WARNING_S
        ):
            return
        self._proxy_warned_at = now
        configured = self._proxy is not None and self._proxy.credentials is not None
        log_event(
            self._logger,
            logging.WARNING,
            "engine_proxy_authentication",
            status=407,
            credentials="configured" if configured else "none",
            hint=AUTH_HINT if configured else AUTH_MISSING_HINT,
        )

    # --- lifecycle --------------------------------------------------------------------------

    async def aclose(self) -> None:
        """Close the engine connection pools; later calls raise ``closed``."""
        self._closed = True
        with anyio.CancelScope(shield=True):
            for pool in self._pools.values():
                await pool.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()
