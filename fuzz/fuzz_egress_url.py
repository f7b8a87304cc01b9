"""Fuzz target: the egress policy's judgment of a URL (REQ-SEC-006/009, REQ-TEST-005; THR-02).

``parse_url`` (the one strict parser of every outbound URL) on any text, then the name and
literal-address policy of ``Egress.check_url``. Invariants: no exception but ``EgressError``,
whose message is rypsok's fixed text for its reason; a checked URL is printable ASCII without
whitespace, its port is allowed, its host a lower-case name or a canonical address, and it
parses again to the same destination and request target (the URL sent is the URL judged).
"""

from __future__ import annotations

import ipaddress
import re

from _harness import Input, check, instrumented, main

with instrumented():
    from rypsok.egress.addresses import AddressPolicy
    from rypsok.egress.errors import _MESSAGES, EgressError
    from rypsok.egress.urls import MAX_URL_CHARS, parse_url

_PREFIXES = ("", "https://", "http://", "https://[", "https://example.org", "https://0x7f.")
_PORTS = (None, frozenset({80, 443}), frozenset({443, 8443}))
_NAME = re.compile(r"[a-z0-9._\-]+")
_POLICY = AddressPolicy()


def test_one_input(data: bytes) -> None:
    """Check the input as a URL and check the invariants."""
    source = Input(data)
    allow_http = source.flag()
    ports = source.pick(_PORTS)
    url = source.pick(_PREFIXES) + source.text()
    try:
        checked = parse_url(url, allow_http=allow_http, ports=ports)
    except EgressError as error:
        check(str(error) == _MESSAGES[error.reason], "an egress error carries other text")
        return
    sent = checked.url
    check(sent.isascii() and sent.isprintable() and " " not in sent, "URL not printable ASCII")
    check(len(sent) <= MAX_URL_CHARS, "URL sent beyond LIM-F9")
    check(ports is None or checked.port in ports, "port outside the allowed set")
    check(checked.scheme == "https" or allow_http, "http without allow_http")
    if checked.address is not None:
        check(str(checked.address) == checked.host, "literal host not canonical")
        check(ipaddress.ip_address(checked.host) == checked.address, "literal differs")
    else:
        check(_NAME.fullmatch(checked.host) is not None, "host is not a lower-case ASCII name")
    again = parse_url(sent, allow_http=allow_http, ports=ports)
    check(again.origin == checked.origin, "the URL sent names another origin")
    check(again.target == checked.target, "the URL sent has another target")
    check(again.fragment is None, "a fragment would be sent")
    try:
        if checked.address is not None:
            _POLICY.check_address(checked.address)
        else:
            _POLICY.check_name(checked.host)
    except EgressError as error:
        check(error.is_policy, "the policy failed with a non-policy reason")


if __name__ == "__main__":
    main(test_one_input)
