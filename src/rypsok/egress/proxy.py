"""The engine proxy of ``[egress] engine_proxy`` (REQ-RES-008, REQ-SEC-007).

One outbound proxy may carry the engine requests. It is taken from configuration only: the
HTTP library reads no environment, so ``HTTP_PROXY``, ``HTTPS_PROXY``, ``ALL_PROXY`` and
``NO_PROXY`` change nothing. It is never used for agent-directed requests (web_fetch and
robots.txt), because a proxy cannot enforce rypsok's egress profile (REQ-SEC-007).

The proxy URL is ``http://host:port`` or ``https://host:port``: parsed by the egress URL
parser, without credentials (proxy authentication is not supported), path, query or fragment.
The operator configured it, so it is trusted like an explicitly configured engine endpoint:
it may be a private or loopback address, but cloud metadata addresses and names and the
operator's ``[egress] deny`` rules still refuse it, at start and again on every answer set
its name resolves to (the connection is pinned to the checked addresses).

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
"""

from __future__ import annotations

from dataclasses import dataclass

from rypsok.egress.addresses import AddressPolicy
from rypsok.egress.errors import EgressError, EgressReason
from rypsok.egress.urls import CheckedURL, parse_url

KEY = "[egress] engine_proxy"


@dataclass(frozen=True, slots=True)
class EngineProxy:
    """A checked engine proxy: scheme, host and port (``url.target`` is ``/``)."""

    url: CheckedURL

    @property
    def is_https(self) -> bool:
        """True when the connection to the proxy itself uses TLS."""
        return self.url.scheme == "https"


def parse_engine_proxy(text: str, policy: AddressPolicy) -> EngineProxy:
    """Check the proxy URL and judge its host as an operator-configured one.

    Raises ValueError with a message naming the key; the message never repeats the URL.
    """
    try:
        url = parse_url(text, allow_http=True, ports=None)
    except EgressError as error:
        if error.reason == EgressReason.CREDENTIALS_IN_URL:
            raise ValueError(
                f"{KEY} must not carry credentials (user:password@); "
                "proxy authentication is not supported"
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


def check_engine_proxy(text: str | None, *, allow: list[str], deny: list[str]) -> None:
    """Validate ``[egress] engine_proxy`` at start, without network; ValueError when refused."""
    if text is not None:
        parse_engine_proxy(text, AddressPolicy(allow=allow, deny=deny))
