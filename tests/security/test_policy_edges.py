"""Edges of the egress rules and the credential check that mutation testing showed untested.

Each test here kills surviving mutants of the first mutation run (docs/security.md): operator
rules written in upper case, with host bits, as IPv4-mapped networks, as Unicode names; an
allow rule that must not open the forbidden address a transition address embeds; adjacent
and overlapping credentials; the placeholder threshold.
"""

from __future__ import annotations

import ipaddress

import pytest

from rypsok.egress.addresses import AddressPolicy
from rypsok.egress.errors import EgressError, EgressReason
from rypsok.privacy import CredentialCheck, CredentialMode, find_credentials, mask
from rypsok.privacy.detect import REDACTED, CredentialMatch

pytestmark = pytest.mark.req("REQ-SEC-006", "REQ-PRIV-002")

GOOGLE_DNS = ipaddress.ip_address("8.8.8.8")


def _refused(policy: AddressPolicy, address: str, *, trusted: bool = False) -> bool:
    try:
        policy.check_address(ipaddress.ip_address(address), trusted_name=trusted)
    except EgressError as error:
        assert error.reason is EgressReason.ADDRESS_DENIED
        return True
    return False


# --- operator rules ---------------------------------------------------------------------------


def test_rules_are_case_insensitive() -> None:
    """A rule written in upper case names the same host (names are compared lower-cased).

    Proves THR-02.
    """
    policy = AddressPolicy(deny=["EXAMPLE.ORG", "*.CORP.EXAMPLE"])
    for host in ("example.org", "wiki.corp.example"):
        with pytest.raises(EgressError):
            policy.check_name(host)


def test_cidr_rules_with_host_bits_are_accepted() -> None:
    """``10.1.2.3/8`` means 10.0.0.0/8, as an operator writes it; it is not refused.

    Proves THR-30.
    """
    policy = AddressPolicy(deny=["8.8.4.4/16", "2001:4860:4860::8888/32"])
    assert _refused(policy, "8.8.8.8")
    assert _refused(policy, "2001:4860::1")


def test_ipv4_mapped_rules_mean_ipv4() -> None:
    """``::ffff:0:0/96`` covers every IPv4 address, as mapped addresses are judged as IPv4.

    Proves THR-03.
    """
    policy = AddressPolicy(deny=["::ffff:0.0.0.0/96"])
    assert _refused(policy, "8.8.8.8")
    assert _refused(policy, "::ffff:8.8.8.8")
    assert not _refused(AddressPolicy(deny=["::ffff:10.0.0.0/104"]), "8.8.8.8")
    assert _refused(AddressPolicy(deny=["::ffff:8.0.0.0/104"]), "8.8.8.8")


@pytest.mark.parametrize(
    ("rule", "host"),
    [
        ("bücher.example", "xn--bcher-kva.example"),
        ("faß.example", "xn--fa-hia.example"),  # non-transitional, as the URL parser
        ("ｅｘａｍｐｌｅ.org", "example.org"),  # UTS 46 maps full-width letters
        ("*.BÜCHER.example", "www.xn--bcher-kva.example"),
    ],
)
def test_unicode_rules_match_the_ascii_host(rule: str, host: str) -> None:
    """A rule in Unicode is converted exactly like a URL's host (UTS 46, non-transitional).

    Proves THR-02.
    """
    with pytest.raises(EgressError):
        AddressPolicy(deny=[rule]).check_name(host)
    assert AddressPolicy(allow=[rule]).name_allowed_by_rule(host)


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        ("   ", "an egress rule is empty"),
        ("a..b", "an egress rule is neither a CIDR nor a host name"),
        ("user@example.org", "an egress rule is neither a CIDR nor a host name"),
        ("example.org:8080", "an egress rule is neither a CIDR nor a host name"),
        ("exa\u2029mple.org", "an egress rule is neither a CIDR nor a host name"),
    ],
)
def test_malformed_rules_are_refused_with_a_reason(rule: str, message: str) -> None:
    """A rule that is neither a CIDR nor a clean host name is refused, saying so.

    Proves THR-30.
    """
    with pytest.raises(ValueError) as refused:
        AddressPolicy(deny=[rule])
    assert str(refused.value) == message


# --- transition addresses and allow rules -----------------------------------------------------


def test_allowing_ipv4_compatible_space_never_opens_what_it_embeds() -> None:
    """``::2`` embeds 0.0.0.2 (this network): an allow rule for ::/96 does not open it.

    Proves THR-03.
    """
    assert _refused(AddressPolicy(allow=["::/96"]), "::2")
    assert _refused(AddressPolicy(allow=["::/96"]), "::7f00:1")


def test_an_allowed_embedded_address_does_not_open_its_transition_range() -> None:
    """Allowing 8.8.8.0/24 does not allow the 6to4 or Teredo address that embeds it: every
    view of an address must pass.

    Proves THR-03.
    """
    policy = AddressPolicy(allow=["8.8.8.0/24"])
    assert not _refused(policy, "8.8.8.8")
    assert _refused(policy, "2002:808:808::1")  # 6to4 of 8.8.8.8
    assert _refused(policy, "64:ff9b::808:808")  # NAT64 of 8.8.8.8


def test_trusted_names_still_never_reach_metadata_inside_a_transition_address() -> None:
    """An explicitly configured endpoint may resolve to private addresses, never to a cloud
    metadata address, also when a NAT64 or 6to4 address embeds it.

    Proves THR-03.
    """
    policy = AddressPolicy()
    assert not _refused(policy, "10.1.2.3", trusted=True)
    assert _refused(policy, "64:ff9b::a9fe:a9fe", trusted=True)
    assert _refused(policy, "2002:a9fe:a9fe::1", trusted=True)
    assert _refused(policy, "fd00:ec2::254", trusted=True)


# --- the credential check ---------------------------------------------------------------------

AWS = "AKIA" + "QWERTYUI234567AB"
PEM = (
    "-----BEGIN PRIVATE KEY-----\n"
    "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7q1w2e3r4t5y6u7i8o9p0\n"
    "-----END PRIVATE KEY-----"
)


def test_adjacent_credentials_are_both_found_and_masked() -> None:
    """Two credentials back to back are two matches, and masking hides both.

    Proves THR-04.
    """
    text = f"{AWS}{PEM}"
    matches = find_credentials(text)
    assert [m.kind for m in matches] == ["aws_access_key_id", "private_key"]
    assert matches[0].end == matches[1].start
    assert mask(text, matches) == REDACTED + REDACTED


def test_mask_merges_overlapping_spans_and_goes_on() -> None:
    """Overlapping spans are merged, and spans after them are still masked.

    Proves THR-04.
    """
    text = "0123456789abcdefghij"
    spans = [
        CredentialMatch("x", 0, 5),
        CredentialMatch("x", 3, 8),
        CredentialMatch("x", 4, 6),
        CredentialMatch("x", 12, 14),
    ]
    assert mask(text, spans) == f"{REDACTED}89ab{REDACTED}efghij"


@pytest.mark.parametrize(("start", "end"), [(3, 3), (-1, 2), (5, 4), (0, 99)])
def test_mask_refuses_spans_outside_the_text_naming_positions_only(start: int, end: int) -> None:
    """An empty, reversed or outside span is a caller bug, reported by position only.

    Proves THR-04.
    """
    with pytest.raises(ValueError, match=rf"credential span {start}\.\.{end} is not inside"):
        mask("0123456789", [CredentialMatch("x", start, end)])


def test_placeholder_threshold_counts_letters_and_digits_only() -> None:
    """Six distinct letters or digits make a credential; punctuation does not count, so
    ``glpat-abcde_-abcde_-...`` stays a placeholder and a six-letter token is found.

    Proves THR-04.
    """
    assert find_credentials("glpat-abcde_-abcde_-abcde_-ab") == []
    assert [m.kind for m in find_credentials("ghp_" + "abcdef" * 6)] == ["github_token"]
    assert find_credentials("ghp_" + "abcdea" * 6) == []


def test_a_clean_text_has_no_matches_in_every_mode() -> None:
    """A text without credentials proceeds with an empty tuple of matches (never None).

    Proves THR-04.
    """
    for mode in CredentialMode:
        verdict = CredentialCheck(mode).apply("weather in Paris")
        assert verdict.matches == ()
        assert verdict.first is None
