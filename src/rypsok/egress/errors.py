"""The one exception of the egress component and its fixed reason vocabulary (REQ-SEC-016).

An :class:`EgressError` carries a reason, a message that is rypsok's own text, and at most a
category name from rypsok's address table. It never carries a resolved address, a header, a
body or any other text that came from the network, so it may be logged and mapped to a tool
error without cleaning.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Final


class EgressReason(StrEnum):
    """Why an outbound request was refused or failed."""

    # refused by policy before any network use
    INVALID_URL = "invalid_url"
    SCHEME = "scheme"
    CREDENTIALS_IN_URL = "credentials_in_url"
    PORT = "port"
    NAME_DENIED = "name_denied"
    ADDRESS_DENIED = "address_denied"
    ORIGIN_MISMATCH = "origin_mismatch"
    INVALID_REQUEST = "invalid_request"
    # failed while talking to the network
    DNS_FAILURE = "dns_failure"
    CONNECT_FAILED = "connect_failed"
    TLS_FAILURE = "tls_failure"
    PROXY_FAILURE = "proxy_failure"
    TIMEOUT = "timeout"
    TOO_LARGE = "too_large"
    PROTOCOL_ERROR = "protocol_error"
    CLOSED = "closed"


POLICY_REASONS: Final = frozenset(
    {
        EgressReason.INVALID_URL,
        EgressReason.SCHEME,
        EgressReason.CREDENTIALS_IN_URL,
        EgressReason.PORT,
        EgressReason.NAME_DENIED,
        EgressReason.ADDRESS_DENIED,
        EgressReason.ORIGIN_MISMATCH,
        EgressReason.INVALID_REQUEST,
    }
)

_MESSAGES: Final[dict[EgressReason, str]] = {
    EgressReason.INVALID_URL: "The URL is not a valid, unambiguous http(s) URL.",
    EgressReason.SCHEME: "The URL scheme is not allowed; only https (or http where allowed).",
    EgressReason.CREDENTIALS_IN_URL: "The URL carries credentials, which are never sent.",
    EgressReason.PORT: "The URL port is not allowed by the egress policy.",
    EgressReason.NAME_DENIED: "The host name is not allowed by the egress policy.",
    EgressReason.ADDRESS_DENIED: "The destination address is not allowed by the egress policy.",
    EgressReason.ORIGIN_MISMATCH: "The request does not go to the configured origin.",
    EgressReason.INVALID_REQUEST: "The request has a method, header or body the profile refuses.",
    EgressReason.DNS_FAILURE: "The host name could not be resolved.",
    EgressReason.CONNECT_FAILED: "The connection to the destination failed.",
    EgressReason.TLS_FAILURE: "The TLS handshake or certificate check failed.",
    EgressReason.PROXY_FAILURE: (
        "The engine proxy could not be reached or refused the request; check [egress] engine_proxy."
    ),
    EgressReason.TIMEOUT: "The request did not complete within its time limit.",
    EgressReason.TOO_LARGE: "The response exceeded its size limit.",
    EgressReason.PROTOCOL_ERROR: "The response was not a well-formed HTTP response.",
    EgressReason.CLOSED: "The egress component is closed.",
}


class EgressError(Exception):
    """An outbound request that was refused or failed, as exactly one reason.

    ``category`` names the row of the address or name table that refused the destination
    (for example ``"loopback"`` or ``"metadata"``); it is rypsok's own vocabulary.
    """

    def __init__(self, reason: EgressReason, category: str | None = None) -> None:
        super().__init__(_MESSAGES[reason])
        self.reason = reason
        self.category = category

    @property
    def is_policy(self) -> bool:
        """True when the policy refused the request (the caller maps it to ``denied``)."""
        return self.reason in POLICY_REASONS

    def __repr__(self) -> str:
        return f"EgressError({self.reason.value!r}, category={self.category!r})"
