"""Fuzz target: URL normalization and the comparison key (REQ-RANK-002/003, REQ-CTX-006; THR-13).

``returned_url`` and ``comparison_key`` on any text. Invariants: no exception; a returned URL
is within its bound and returned unchanged when normalized again; the comparison key is
idempotent and equal for a URL and its returned form; and, against the egress parser (the
one that decides where a fetch goes), a returned URL that both parsers accept names the same
host and port in both: two parsers that disagree about a host are how a guard is bypassed.
"""

from __future__ import annotations

import ipaddress

from _harness import Input, check, instrumented, main

with instrumented():
    from rypsok.egress.errors import EgressError
    from rypsok.egress.urls import parse_url
    from rypsok.search.normalize import comparison_key, returned_url

_PREFIXES = ("", "https://", "http://", "HTTPS://", "https://example.org", "http://[")


def _same_host(normalized: str, egress: str) -> bool:
    host = normalized[1:-1] if normalized.startswith("[") else normalized
    try:
        return ipaddress.ip_address(host) == ipaddress.ip_address(egress)
    except ValueError:
        return host == egress


def test_one_input(data: bytes) -> None:
    """Normalize the input and check the invariants."""
    source = Input(data)
    max_chars = source.pick((2048, 2048, 64, 0))
    url = source.pick(_PREFIXES) + source.text()

    key = comparison_key(url)
    check(comparison_key(key) == key, "comparison_key is not idempotent")
    returned = returned_url(url, max_chars)
    if returned is None:
        return
    check(len(returned) <= max_chars, "returned URL longer than its bound")
    check(returned_url(returned, max_chars) == returned, "returned_url is not idempotent")
    check(comparison_key(returned) == key, "the key of the returned URL differs")
    try:
        checked = parse_url(returned, allow_http=True, ports=None)
    except EgressError:
        return
    scheme, _, rest = returned.partition("://")
    end = min((i for i in (rest.find(c) for c in "/?#") if i >= 0), default=len(rest))
    authority = rest[:end]
    host = authority[: authority.find("]") + 1] if authority.startswith("[") else authority
    host = host if host.startswith("[") else host.partition(":")[0]
    check(_same_host(host, checked.host), f"parsers disagree on the host of {returned!r}")
    check(checked.scheme == scheme.lower(), "parsers disagree on the scheme")


if __name__ == "__main__":
    main(test_one_input)
