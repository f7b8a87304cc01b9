"""Fuzz target: the address policy on DNS answer sets and egress rules (REQ-SEC-006; THR-03).

An ``AddressPolicy`` built from fuzzed operator rules (CIDRs or names; ``ValueError`` is the
documented refusal of a bad rule) judges a fuzzed answer set of IPv4 and IPv6 addresses.
Invariants: no other exception; a set passes only if every address passes alone (a mixed set is
refused, never filtered); what passes is canonical (IPv4-mapped becomes IPv4) and complete;
a deny rule covering an address refuses it whatever else applies; without rules, no address
that passes, nor any IPv4 address it embeds, is loopback, private, link-local, multicast,
reserved, unspecified or a cloud metadata address; a metadata name is always refused.
"""

from __future__ import annotations

import ipaddress

from _harness import Input, check, instrumented, main

with instrumented():
    from rypsok.egress.addresses import (
        METADATA_NAMES,
        AddressPolicy,
        IPAddress,
        canonical,
        embedded_ipv4,
        metadata_row,
    )
    from rypsok.egress.errors import EgressError

_RULES = (
    "10.0.0.0/8",
    "::ffff:127.0.0.0/104",
    "2002::/16",
    "*.example.org",
    "example.org",
    "169.254.169.254/32",
    "0.0.0.0/0",
    "::/0",
    "fd00::/8",
    "metadata.google.internal",
)
_NAMES = ("example.org", "a.example.org", "localhost", "metadata.google.internal", "intranet")
_DEFAULT = AddressPolicy()


def _address(source: Input) -> IPAddress:
    if source.flag():
        return ipaddress.IPv4Address(source.raw(4).ljust(4, b"\0"))
    prefix = source.pick(
        (
            b"",
            b"\0" * 10 + b"\xff\xff",
            b"\x20\x02",
            b"\x20\x01\0\0",
            b"\0\x64\xff\x9b" + b"\0" * 8,
            b"\0" * 12,
        )
    )
    return ipaddress.IPv6Address((prefix + source.raw(16 - len(prefix))).ljust(16, b"\0"))


def _rules(source: Input) -> list[str]:
    rules: list[str] = []
    for _ in range(source.integer(0, 3)):
        rules.append(source.pick(_RULES) if source.flag() else source.sized_text(40))
    return rules


def _passes(policy: AddressPolicy, address: IPAddress, trusted: bool) -> bool:
    try:
        policy.check_address(address, trusted_name=trusted)
    except EgressError:
        return False
    return True


def _forbidden(view: IPAddress) -> bool:
    return (
        view.is_loopback
        or view.is_private
        or view.is_link_local
        or view.is_multicast
        or view.is_reserved
        or view.is_unspecified
        or metadata_row(view) is not None
    )


def test_one_input(data: bytes) -> None:
    """Judge a fuzzed answer set under fuzzed rules and check the invariants."""
    source = Input(data)
    try:
        policy = AddressPolicy(allow=_rules(source), deny=(deny := _rules(source)))
    except ValueError:
        return
    trusted = source.flag()
    name = source.pick(_NAMES) if source.flag() else source.sized_text(30).lower()
    try:
        policy.check_name(name, trusted=trusted)
        check(name not in METADATA_NAMES, "a metadata name passed")
    except EgressError:
        pass
    answers = [_address(source) for _ in range(source.integer(0, 6))]
    try:
        passed = policy.check_answer_set(answers, trusted_name=trusted)
    except EgressError:
        check(not answers or not all(_passes(policy, a, trusted) for a in answers), "mixed set")
        return
    check(all(_passes(policy, a, trusted) for a in answers), "a refused address passed in a set")
    check(set(passed) == {canonical(a) for a in answers}, "the set passed is not the set asked")
    for address in passed:
        check(not (isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped), "mapped")
    deny_networks = []
    for rule in deny:
        try:
            deny_networks.append(ipaddress.ip_network(rule.strip().lower(), strict=False))
        except ValueError:
            continue
    for address in passed:
        views = [address, *(embedded_ipv4(address) if address.version == 6 else ())]
        for view in views:
            for network in deny_networks:
                if network.version == view.version:
                    check(view not in network, "an address a deny rule covers passed")
    for address in answers:
        if not _passes(_DEFAULT, address, False):
            continue
        primary = canonical(address)
        views = [primary, *(embedded_ipv4(primary) if primary.version == 6 else ())]
        check(not any(_forbidden(v) for v in views), f"{address} passed the default policy")


if __name__ == "__main__":
    main(test_one_input)
