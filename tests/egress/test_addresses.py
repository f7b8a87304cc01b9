"""The address and name table and the operator rules (REQ-SEC-006, REQ-TEST-005).

The expected categories are written out by hand from the IANA registries, independent of the
table, and a coverage test checks that every row of the table is hit by at least one of them.
"""

from __future__ import annotations

import ast
import inspect
import ipaddress

import pytest

from rypsok.egress import EgressError, EgressReason, addresses
from rypsok.egress.addresses import (
    FORBIDDEN_V4,
    FORBIDDEN_V6,
    METADATA_ADDRESSES,
    AddressPolicy,
    Category,
    metadata_row,
    table_row,
)

C = Category
ip = ipaddress.ip_address

# address -> the category of the most specific table row holding it
V4_ROWS = [
    ("0.1.2.3", C.THIS_NETWORK),
    ("0.255.255.255", C.THIS_NETWORK),
    ("0.0.0.0", C.UNSPECIFIED),
    ("10.0.0.1", C.PRIVATE),
    ("10.255.255.255", C.PRIVATE),
    ("100.64.0.1", C.SHARED_CGNAT),
    ("100.127.255.254", C.SHARED_CGNAT),
    ("127.0.0.1", C.LOOPBACK),
    ("127.255.255.254", C.LOOPBACK),
    ("169.254.0.1", C.LINK_LOCAL),
    ("169.254.255.254", C.LINK_LOCAL),
    ("172.16.0.1", C.PRIVATE),
    ("172.31.255.254", C.PRIVATE),
    ("192.0.0.1", C.PROTOCOL_ASSIGNMENTS),
    ("192.0.0.9", C.PROTOCOL_ASSIGNMENTS),
    ("192.0.0.170", C.PROTOCOL_ASSIGNMENTS),
    ("192.0.2.1", C.DOCUMENTATION),
    ("192.31.196.1", C.AS112),
    ("192.52.193.1", C.AMT),
    ("192.88.99.1", C.RELAY_6TO4),
    ("192.168.0.1", C.PRIVATE),
    ("192.168.255.254", C.PRIVATE),
    ("192.175.48.1", C.AS112),
    ("198.18.0.1", C.BENCHMARKING),
    ("198.19.255.254", C.BENCHMARKING),
    ("198.51.100.1", C.DOCUMENTATION),
    ("203.0.113.1", C.DOCUMENTATION),
    ("224.0.0.1", C.MULTICAST),
    ("239.255.255.250", C.MULTICAST),
    ("240.0.0.1", C.RESERVED),
    ("255.255.255.254", C.RESERVED),
    ("255.255.255.255", C.BROADCAST),
]

V6_ROWS = [
    ("::", C.UNSPECIFIED),
    ("::1", C.LOOPBACK),
    ("::8.8.8.8", C.IPV4_COMPATIBLE),
    ("1::1", C.NOT_GLOBAL_UNICAST),
    ("1fff:ffff::1", C.NOT_GLOBAL_UNICAST),
    ("4000::1", C.NOT_GLOBAL_UNICAST),
    ("8000::1", C.NOT_GLOBAL_UNICAST),
    ("e000::1", C.NOT_GLOBAL_UNICAST),
    ("64:ff9b::808:808", C.NAT64),
    ("64:ff9b:1::1", C.NAT64),
    ("100::1", C.DISCARD_ONLY),
    ("100:0:0:1::1", C.DUMMY_PREFIX),
    ("2001:0:4136:e378:8000:63bf:3fff:fdd2", C.TEREDO),
    ("2001:1::1", C.PROTOCOL_ASSIGNMENTS),
    ("2001:1::2", C.PROTOCOL_ASSIGNMENTS),
    ("2001:1::3", C.PROTOCOL_ASSIGNMENTS),
    ("2001:1::4", C.PROTOCOL_ASSIGNMENTS),
    ("2001:1ff::1", C.PROTOCOL_ASSIGNMENTS),
    ("2001:2::1", C.BENCHMARKING),
    ("2001:3::1", C.AMT),
    ("2001:4:112::1", C.AS112),
    ("2001:10::1", C.ORCHID),
    ("2001:20::1", C.ORCHID),
    ("2001:30::1", C.DRONE_REMOTE_ID),
    ("2001:db8::1", C.DOCUMENTATION),
    ("2001:db8:ffff::1", C.DOCUMENTATION),
    ("2002:808:808::1", C.SIX_TO_FOUR),
    ("2620:4f:8000::1", C.AS112),
    ("3fff::1", C.DOCUMENTATION),
    ("3fff:fff::1", C.DOCUMENTATION),
    ("5f00::1", C.SRV6),
    ("fc00::1", C.UNIQUE_LOCAL),
    ("fdff:ffff::1", C.UNIQUE_LOCAL),
    ("fe80::1", C.LINK_LOCAL),
    ("febf::1", C.LINK_LOCAL),
    ("fec0::1", C.SITE_LOCAL),
    ("feff::1", C.SITE_LOCAL),
    ("ff02::1", C.MULTICAST),
    ("ff0e::1", C.MULTICAST),
]

METADATA = [
    "169.254.169.254",
    "169.254.169.253",
    "169.254.169.123",
    "169.254.170.2",
    "169.254.170.23",
    "169.254.0.23",
    "169.254.42.42",
    "100.100.100.200",
    "168.63.129.16",
    "192.0.0.192",
    "fd00:ec2::254",
    "fd00:ec2::123",
    "fd20:ce::254",
]

GLOBAL = [
    "8.8.8.8",
    "1.1.1.1",
    "93.184.215.14",
    "100.63.255.255",
    "100.128.0.0",
    "126.255.255.255",
    "128.0.0.0",
    "169.253.255.255",
    "169.255.0.0",
    "172.15.255.255",
    "172.32.0.0",
    "192.0.1.255",
    "192.0.3.0",
    "192.167.255.255",
    "192.169.0.0",
    "198.17.255.255",
    "198.20.0.0",
    "223.255.255.255",
    "2606:4700:4700::1111",
    "2a00:1450:4001:82a::200e",
    "2001:200::1",
    "2003::1",
    "2001:db7:ffff::1",
    "2001:db9::1",
    "3ffe::1",
    "3fff:1000::1",
]


@pytest.mark.req("REQ-SEC-006")
@pytest.mark.parametrize(("address", "category"), V4_ROWS + V6_ROWS)
def test_req_sec_006_table_row_of_every_forbidden_range(address: str, category: Category) -> None:
    """Each refused range of the IPv4 and IPv6 registries has its row (REQ-TEST-005).

    Proves THR-02.
    """
    row = table_row(ip(address))
    assert row is not None and row.category == category
    with pytest.raises(EgressError) as refused:
        AddressPolicy().check_address(ip(address))
    assert refused.value.reason == EgressReason.ADDRESS_DENIED


@pytest.mark.req("REQ-SEC-006")
@pytest.mark.parametrize("address", METADATA)
def test_req_sec_006_cloud_metadata_addresses_refused(address: str) -> None:
    """Cloud metadata addresses are refused, Azure's public WireServer address included.

    Proves THR-02.
    """
    assert metadata_row(ip(address)) is not None
    with pytest.raises(EgressError) as refused:
        AddressPolicy().check_address(ip(address))
    assert refused.value.category == C.METADATA


@pytest.mark.req("REQ-TEST-005")
def test_req_test_005_every_table_row_has_a_test() -> None:
    """No row of the table goes untested: each is the row of some hand-written case."""
    cases = [ip(a) for a, _ in V4_ROWS + V6_ROWS]
    for row in FORBIDDEN_V4 + FORBIDDEN_V6:
        assert any(table_row(a) == row for a in cases), row
    meta = [ip(a) for a in METADATA]
    for row in METADATA_ADDRESSES:
        assert any(metadata_row(a) == row for a in meta), row


@pytest.mark.req("REQ-SEC-006")
@pytest.mark.parametrize("address", GLOBAL)
def test_req_sec_006_global_unicast_allowed(address: str) -> None:
    """Global unicast addresses, including those just beside refused ranges, pass."""
    assert AddressPolicy().check_address(ip(address)) == ip(address)


def test_table_does_not_use_python_classification() -> None:
    """The table is rypsok's own, not ipaddress.is_global/is_private (which vary by version)."""
    tree = ast.parse(inspect.getsource(addresses))
    used = {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    banned = {"is_global", "is_private", "is_reserved", "is_loopback", "is_link_local"}
    assert not used & banned


@pytest.mark.req("REQ-SEC-006")
@pytest.mark.parametrize(
    ("address", "category"),
    [
        # IPv4-mapped: canonicalized, judged as IPv4
        ("::ffff:127.0.0.1", C.LOOPBACK),
        ("::ffff:7f00:1", C.LOOPBACK),
        ("::ffff:10.0.0.1", C.PRIVATE),
        ("::ffff:169.254.169.254", C.METADATA),
        ("::ffff:0.0.0.0", C.UNSPECIFIED),
        ("::ffff:192.168.1.1", C.PRIVATE),
        # IPv4-compatible: the embedded address decides first
        ("::127.0.0.1", C.LOOPBACK),
        ("::169.254.169.254", C.METADATA),
        ("::8.8.8.8", C.IPV4_COMPATIBLE),
        # 6to4
        ("2002:7f00:1::1", C.LOOPBACK),
        ("2002:a9fe:a9fe::", C.METADATA),
        ("2002:c0a8:101::1", C.PRIVATE),
        ("2002:808:808::1", C.SIX_TO_FOUR),
        # Teredo: client 127.0.0.1 is stored inverted (0x80fffffe)
        ("2001:0:4136:e378:8000:63bf:80ff:fffe", C.LOOPBACK),
        ("2001:0:4136:e378:8000:63bf:5601:5601", C.METADATA),  # ~0x5601... = 169.254.169.254
        ("2001:0:4136:e378:8000:63bf:f7f7:f7f7", C.TEREDO),  # client 8.8.8.8
        # NAT64 well-known prefix
        ("64:ff9b::7f00:1", C.LOOPBACK),
        ("64:ff9b::a9fe:a9fe", C.METADATA),
        ("64:ff9b::a00:1", C.PRIVATE),
        ("64:ff9b::808:808", C.NAT64),
    ],
)
def test_req_sec_006_embedded_ipv4_judged(address: str, category: Category) -> None:
    """Mapped, compatible, 6to4, Teredo and NAT64 addresses are judged by what they embed.

    Proves THR-03.
    """
    with pytest.raises(EgressError) as refused:
        AddressPolicy().check_address(ip(address))
    assert refused.value.reason == EgressReason.ADDRESS_DENIED
    assert refused.value.category == category


def test_mapped_global_address_is_canonicalized() -> None:
    """::ffff:8.8.8.8 passes and is returned as the IPv4 address it is connected to."""
    assert AddressPolicy().check_address(ip("::ffff:8.8.8.8")) == ip("8.8.8.8")


def test_scoped_address_refused() -> None:
    with pytest.raises(EgressError) as refused:
        AddressPolicy().check_address(ipaddress.IPv6Address("2001:4860::1%eth0"))
    assert refused.value.category == C.SCOPED


# --- operator rules --------------------------------------------------------------------------


@pytest.mark.req("REQ-TEST-005")
def test_req_test_005_allow_rule_opens_only_what_it_names() -> None:
    """Tests reach 127.0.0.1 through an explicit allow rule; 127.0.0.2 stays refused."""
    policy = AddressPolicy(allow=["127.0.0.1"])
    assert policy.check_address(ip("127.0.0.1")) == ip("127.0.0.1")
    assert policy.check_address(ip("::ffff:127.0.0.1")) == ip("127.0.0.1")
    with pytest.raises(EgressError):
        policy.check_address(ip("127.0.0.2"))
    with pytest.raises(EgressError):
        policy.check_address(ip("::1"))


def test_mapped_rule_means_ipv4() -> None:
    policy = AddressPolicy(allow=["::ffff:127.0.0.0/104"])
    assert policy.check_address(ip("127.9.9.9")) == ip("127.9.9.9")


def test_deny_rule_wins_over_allow_rule() -> None:
    policy = AddressPolicy(allow=["8.8.8.0/24", "127.0.0.1"], deny=["8.8.8.8", "127.0.0.0/8"])
    for address in ("8.8.8.8", "::ffff:8.8.8.8", "2002:808:808::1", "127.0.0.1"):
        with pytest.raises(EgressError) as refused:
            policy.check_address(ip(address))
        assert refused.value.category == C.OPERATOR_DENY
    assert policy.check_address(ip("8.8.8.9")) == ip("8.8.8.9")


def test_allowing_a_transition_range_does_not_open_what_it_embeds() -> None:
    """Every view must pass: allowing 2002::/16 does not open 6to4 of 127.0.0.1."""
    policy = AddressPolicy(allow=["2002::/16"])
    assert policy.check_address(ip("2002:808:808::1")) == ip("2002:808:808::1")
    with pytest.raises(EgressError) as refused:
        policy.check_address(ip("2002:7f00:1::1"))
    assert refused.value.category == C.LOOPBACK
    both = AddressPolicy(allow=["2002::/16", "127.0.0.0/8"])
    assert both.check_address(ip("2002:7f00:1::1")) == ip("2002:7f00:1::1")


def test_trusted_name_opens_private_but_never_metadata() -> None:
    """A trusted name (explicit endpoint, name allow rule) may be private, never metadata."""
    policy = AddressPolicy(deny=["10.9.0.0/16"])
    assert policy.check_address(ip("10.0.0.1"), trusted_name=True) == ip("10.0.0.1")
    assert policy.check_address(ip("127.0.0.1"), trusted_name=True) == ip("127.0.0.1")
    for address, category in (
        ("169.254.169.254", C.METADATA),
        ("fd00:ec2::254", C.METADATA),
        ("10.9.0.1", C.OPERATOR_DENY),
    ):
        with pytest.raises(EgressError) as refused:
            policy.check_address(ip(address), trusted_name=True)
        assert refused.value.category == category


def test_cidr_allow_rule_is_the_only_way_to_a_metadata_address() -> None:
    policy = AddressPolicy(allow=["169.254.169.254/32"])
    assert policy.check_address(ip("169.254.169.254")) == ip("169.254.169.254")


@pytest.mark.parametrize("bad", ["", "a b", "x/y/z", "user@host", "host:80", "10.0.0.0/33"])
def test_invalid_rule_refused(bad: str) -> None:
    with pytest.raises(ValueError):
        AddressPolicy(allow=[bad])


# --- names -----------------------------------------------------------------------------------


@pytest.mark.req("REQ-SEC-006")
@pytest.mark.parametrize(
    ("host", "category"),
    [
        ("metadata.google.internal", C.METADATA),
        ("metadata.goog", C.METADATA),
        ("metadata", C.METADATA),
        ("instance-data", C.METADATA),
        ("instance-data.ec2.internal", C.METADATA),
        ("metadata.tencentyun.com", C.METADATA),
        ("localhost", C.SPECIAL_USE_NAME),
        ("app.localhost", C.SPECIAL_USE_NAME),
        ("host.localdomain", C.SPECIAL_USE_NAME),
        ("printer.local", C.SPECIAL_USE_NAME),
        ("service.internal", C.SPECIAL_USE_NAME),
        ("x.invalid", C.SPECIAL_USE_NAME),
        ("abc.onion", C.SPECIAL_USE_NAME),
        ("x.alt", C.SPECIAL_USE_NAME),
        ("router.home.arpa", C.SPECIAL_USE_NAME),
        ("nas.lan", C.SPECIAL_USE_NAME),
        ("pc.home", C.SPECIAL_USE_NAME),
        ("wiki.corp", C.SPECIAL_USE_NAME),
        ("intranet", C.SINGLE_LABEL),
        ("kubernetes", C.SINGLE_LABEL),
    ],
)
def test_req_sec_006_names_refused(host: str, category: Category) -> None:
    """Metadata names, special-use domains and single labels are refused by name."""
    with pytest.raises(EgressError) as refused:
        AddressPolicy().check_name(host)
    assert refused.value.reason == EgressReason.NAME_DENIED
    assert refused.value.category == category


def test_public_names_pass() -> None:
    policy = AddressPolicy()
    for host in ("example.org", "www.wikipedia.org", "localhost.example.com", "local.example"):
        assert policy.check_name(host) is False  # passes, not trusted


def test_name_rules() -> None:
    """Exact and subdomain rules; deny wins; an allow rule never opens a metadata name."""
    policy = AddressPolicy(
        allow=["wiki.corp", ".intra.example", "metadata.google.internal", "both.example"],
        deny=["bad.example", "*.evil.example", "both.example"],
    )
    assert policy.check_name("wiki.corp") is True
    assert policy.check_name("a.intra.example") is True
    assert policy.check_name("intra.example") is False
    for host, category in (
        ("bad.example", C.OPERATOR_DENY),
        ("x.evil.example", C.OPERATOR_DENY),
        ("both.example", C.OPERATOR_DENY),
        ("metadata.google.internal", C.METADATA),
        ("other.corp", C.SPECIAL_USE_NAME),
    ):
        with pytest.raises(EgressError) as refused:
            policy.check_name(host)
        assert refused.value.category == category
    assert policy.check_name("sub.bad.example") is False  # an exact rule is exact


def test_trusted_name_skips_special_use_but_not_metadata_or_deny() -> None:
    policy = AddressPolicy(deny=["searx.lan"])
    assert policy.check_name("searxng", trusted=True) is True
    with pytest.raises(EgressError):
        policy.check_name("metadata", trusted=True)
    with pytest.raises(EgressError):
        policy.check_name("searx.lan", trusted=True)


# --- answer sets -----------------------------------------------------------------------------


@pytest.mark.req("REQ-SEC-006")
def test_req_sec_006_mixed_answer_set_refused_not_filtered() -> None:
    """One forbidden address refuses the whole set; nothing is filtered out."""
    policy = AddressPolicy()
    for answer in (
        ["8.8.8.8", "10.0.0.1"],
        ["8.8.8.8", "::1"],
        ["2606:4700:4700::1111", "::ffff:169.254.169.254"],
    ):
        with pytest.raises(EgressError) as refused:
            policy.check_answer_set([ip(a) for a in answer])
        assert refused.value.reason == EgressReason.ADDRESS_DENIED


def test_answer_set_canonical_and_deduplicated() -> None:
    checked = AddressPolicy().check_answer_set(
        [ip("8.8.8.8"), ip("::ffff:8.8.8.8"), ip("2606:4700:4700::1111")]
    )
    assert checked == (ip("8.8.8.8"), ip("2606:4700:4700::1111"))


def test_empty_answer_set_fails_closed() -> None:
    with pytest.raises(EgressError) as refused:
        AddressPolicy().check_answer_set([])
    assert refused.value.reason == EgressReason.DNS_FAILURE
