"""The address and name policy of the egress component (REQ-SEC-006, REQ-SEC-017).

rypsok's own table, written from the IANA IPv4 and IPv6 Special-Purpose Address Registries,
the IANA multicast and IPv6 address-space registries and the cloud providers' documentation.
It does not use ``ipaddress.is_global``/``is_private``, whose tables change between Python
versions. The policy is deliberately conservative:

* IPv4: every special-purpose block is refused, including the few the registry marks globally
  reachable (AS112, AMT, the anycast addresses of 192.0.0.0/24): no web page lives there.
* IPv6: only global unicast 2000::/3 is allowed, and within it every special-purpose and
  transition block (2001::/23, 6to4, documentation, SRv6, AS112) is refused.
* IPv4-mapped addresses (::ffff:0:0/96) are canonicalized to IPv4 and judged as IPv4.
* IPv4-compatible, 6to4, Teredo and NAT64 addresses are judged on every view: the IPv6
  address itself and each IPv4 address it embeds. All views must pass, so an operator rule
  that opens a transition range never opens the forbidden IPv4 address inside it.
* Cloud metadata addresses and names are refused even where a name allow rule applies; only
  an operator CIDR allow rule that covers the address opens one.

Operator rules (``[egress] allow`` / ``deny``: CIDRs or host names) apply on top; deny wins
over allow. A name rule ``example.org`` matches that name only; ``.example.org`` and
``*.example.org`` match its subdomains. A name allow rule lets that name resolve to addresses
the table refuses (an intranet host), except metadata addresses.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

import idna

from rypsok.egress.errors import EgressError, EgressReason

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


class Category(StrEnum):
    """Why an address or name is refused: the vocabulary of the table."""

    THIS_NETWORK = "this_network"
    UNSPECIFIED = "unspecified"
    PRIVATE = "private"
    SHARED_CGNAT = "shared_cgnat"
    LOOPBACK = "loopback"
    LINK_LOCAL = "link_local"
    PROTOCOL_ASSIGNMENTS = "protocol_assignments"
    DOCUMENTATION = "documentation"
    AS112 = "as112"
    AMT = "amt"
    RELAY_6TO4 = "6to4_relay"
    BENCHMARKING = "benchmarking"
    MULTICAST = "multicast"
    RESERVED = "reserved"
    BROADCAST = "broadcast"
    NOT_GLOBAL_UNICAST = "not_global_unicast"
    IPV4_COMPATIBLE = "ipv4_compatible"
    NAT64 = "nat64"
    DISCARD_ONLY = "discard_only"
    DUMMY_PREFIX = "dummy_prefix"
    TEREDO = "teredo"
    ORCHID = "orchid"
    DRONE_REMOTE_ID = "drone_remote_id"
    SIX_TO_FOUR = "6to4"
    SRV6 = "srv6_sid"
    UNIQUE_LOCAL = "unique_local"
    SITE_LOCAL = "site_local"
    METADATA = "metadata"
    SCOPED = "scoped"
    OPERATOR_DENY = "operator_deny"
    SPECIAL_USE_NAME = "special_use_name"
    SINGLE_LABEL = "single_label"


@dataclass(frozen=True, slots=True)
class Range:
    """One row of the table: a refused network, why, and where it is defined."""

    network: IPNetwork
    category: Category
    source: str


def _v4(cidr: str, category: Category, source: str) -> Range:
    return Range(ipaddress.IPv4Network(cidr), category, source)


def _v6(cidr: str, category: Category, source: str) -> Range:
    return Range(ipaddress.IPv6Network(cidr), category, source)


C = Category

FORBIDDEN_V4: Final[tuple[Range, ...]] = (
    _v4("0.0.0.0/8", C.THIS_NETWORK, "RFC 791"),
    _v4("0.0.0.0/32", C.UNSPECIFIED, "RFC 1122"),
    _v4("10.0.0.0/8", C.PRIVATE, "RFC 1918"),
    _v4("100.64.0.0/10", C.SHARED_CGNAT, "RFC 6598"),
    _v4("127.0.0.0/8", C.LOOPBACK, "RFC 1122"),
    _v4("169.254.0.0/16", C.LINK_LOCAL, "RFC 3927"),
    _v4("172.16.0.0/12", C.PRIVATE, "RFC 1918"),
    _v4("192.0.0.0/24", C.PROTOCOL_ASSIGNMENTS, "RFC 6890"),
    _v4("192.0.2.0/24", C.DOCUMENTATION, "RFC 5737 TEST-NET-1"),
    _v4("192.31.196.0/24", C.AS112, "RFC 7535"),
    _v4("192.52.193.0/24", C.AMT, "RFC 7450"),
    _v4("192.88.99.0/24", C.RELAY_6TO4, "RFC 7526 (deprecated)"),
    _v4("192.168.0.0/16", C.PRIVATE, "RFC 1918"),
    _v4("192.175.48.0/24", C.AS112, "RFC 7534"),
    _v4("198.18.0.0/15", C.BENCHMARKING, "RFC 2544"),
    _v4("198.51.100.0/24", C.DOCUMENTATION, "RFC 5737 TEST-NET-2"),
    _v4("203.0.113.0/24", C.DOCUMENTATION, "RFC 5737 TEST-NET-3"),
    _v4("224.0.0.0/4", C.MULTICAST, "RFC 5771"),
    _v4("240.0.0.0/4", C.RESERVED, "RFC 1112"),
    _v4("255.255.255.255/32", C.BROADCAST, "RFC 919, RFC 8190"),
)

FORBIDDEN_V6: Final[tuple[Range, ...]] = (
    # Everything outside 2000::/3 is not global unicast (IANA IPv6 Address Space).
    _v6("::/3", C.NOT_GLOBAL_UNICAST, "RFC 4291, IANA IPv6 address space"),
    _v6("4000::/2", C.NOT_GLOBAL_UNICAST, "RFC 4291, IANA IPv6 address space"),
    _v6("8000::/1", C.NOT_GLOBAL_UNICAST, "RFC 4291, IANA IPv6 address space"),
    _v6("::/128", C.UNSPECIFIED, "RFC 4291"),
    _v6("::1/128", C.LOOPBACK, "RFC 4291"),
    _v6("::/96", C.IPV4_COMPATIBLE, "RFC 4291 (deprecated)"),
    _v6("64:ff9b::/96", C.NAT64, "RFC 6052"),
    _v6("64:ff9b:1::/48", C.NAT64, "RFC 8215"),
    _v6("100::/64", C.DISCARD_ONLY, "RFC 6666"),
    _v6("100:0:0:1::/64", C.DUMMY_PREFIX, "RFC 9780"),
    _v6("2001::/23", C.PROTOCOL_ASSIGNMENTS, "RFC 2928"),
    _v6("2001::/32", C.TEREDO, "RFC 4380"),
    _v6("2001:1::1/128", C.PROTOCOL_ASSIGNMENTS, "RFC 7723 PCP anycast"),
    _v6("2001:1::2/128", C.PROTOCOL_ASSIGNMENTS, "RFC 8155 TURN anycast"),
    _v6("2001:1::3/128", C.PROTOCOL_ASSIGNMENTS, "RFC 9665 DNS-SD SRP anycast"),
    _v6("2001:2::/48", C.BENCHMARKING, "RFC 5180"),
    _v6("2001:3::/32", C.AMT, "RFC 7450"),
    _v6("2001:4:112::/48", C.AS112, "RFC 7535"),
    _v6("2001:10::/28", C.ORCHID, "RFC 4843 (deprecated)"),
    _v6("2001:20::/28", C.ORCHID, "RFC 7343 ORCHIDv2"),
    _v6("2001:30::/28", C.DRONE_REMOTE_ID, "RFC 9374"),
    _v6("2001:db8::/32", C.DOCUMENTATION, "RFC 3849"),
    _v6("2002::/16", C.SIX_TO_FOUR, "RFC 3056"),
    _v6("2620:4f:8000::/48", C.AS112, "RFC 7534"),
    _v6("3fff::/20", C.DOCUMENTATION, "RFC 9637"),
    _v6("5f00::/16", C.SRV6, "RFC 9602"),
    _v6("fc00::/7", C.UNIQUE_LOCAL, "RFC 4193"),
    _v6("fe80::/10", C.LINK_LOCAL, "RFC 4291"),
    _v6("fec0::/10", C.SITE_LOCAL, "RFC 3879 (deprecated)"),
    _v6("ff00::/8", C.MULTICAST, "RFC 4291"),
)

METADATA_ADDRESSES: Final[tuple[Range, ...]] = (
    _v4("169.254.169.254/32", C.METADATA, "AWS, GCP, Azure, OpenStack, Oracle, DigitalOcean"),
    _v4("169.254.169.253/32", C.METADATA, "AWS VPC DNS"),
    _v4("169.254.169.123/32", C.METADATA, "AWS time sync"),
    _v4("169.254.170.2/32", C.METADATA, "AWS ECS task metadata"),
    _v4("169.254.170.23/32", C.METADATA, "AWS EKS pod identity"),
    _v4("169.254.0.23/32", C.METADATA, "Tencent Cloud"),
    _v4("169.254.42.42/32", C.METADATA, "Scaleway"),
    _v4("100.100.100.200/32", C.METADATA, "Alibaba Cloud"),
    _v4("168.63.129.16/32", C.METADATA, "Azure WireServer (a public address)"),
    _v4("192.0.0.192/32", C.METADATA, "Oracle Cloud (legacy)"),
    _v6("fd00:ec2::254/128", C.METADATA, "AWS IMDS over IPv6"),
    _v6("fd00:ec2::123/128", C.METADATA, "AWS time sync over IPv6"),
    _v6("fd20:ce::254/128", C.METADATA, "GCP metadata over IPv6"),
)

# Names of metadata services; refused even when an operator name rule would allow them.
METADATA_NAMES: Final[frozenset[str]] = frozenset(
    {
        "metadata",
        "metadata.google.internal",
        "metadata.goog",
        "instance-data",
        "instance-data.ec2.internal",
        "metadata.tencentyun.com",
    }
)

# Special-use and private-use domains (RFC 6761, 6762, 7686, 8375, 9476, ICANN .internal)
# and the private namespaces in wide use; a name in them never names a public web page.
SPECIAL_USE_SUFFIXES: Final[tuple[str, ...]] = (
    "localhost",
    "localdomain",
    "local",
    "internal",
    "invalid",
    "onion",
    "alt",
    "home.arpa",
    "lan",
    "home",
    "corp",
)

del C

_MAPPED: Final = ipaddress.IPv6Network("::ffff:0:0/96")
_COMPAT: Final = ipaddress.IPv6Network("::/96")
_NAT64: Final = ipaddress.IPv6Network("64:ff9b::/96")
_SIX_TO_FOUR: Final = ipaddress.IPv6Network("2002::/16")
_TEREDO: Final = ipaddress.IPv6Network("2001::/32")


def _by_specificity(rows: Iterable[Range]) -> tuple[Range, ...]:
    # The most specific row names the category, so 2001:2::/48 reports benchmarking
    # rather than the enclosing protocol-assignments block.
    return tuple(sorted(rows, key=lambda r: r.network.prefixlen, reverse=True))


_TABLE_V4: Final = _by_specificity(FORBIDDEN_V4)
_TABLE_V6: Final = _by_specificity(FORBIDDEN_V6)
_META_V4: Final = tuple(r for r in METADATA_ADDRESSES if r.network.version == 4)
_META_V6: Final = tuple(r for r in METADATA_ADDRESSES if r.network.version == 6)


def canonical(address: IPAddress) -> IPAddress:
    """The address to judge and to connect to: IPv4-mapped IPv6 becomes IPv4 (REQ-SEC-006)."""
    if isinstance(address, ipaddress.IPv6Address):
        mapped = address.ipv4_mapped
        if mapped is not None:
            return mapped
    return address


def embedded_ipv4(address: ipaddress.IPv6Address) -> tuple[ipaddress.IPv4Address, ...]:
    """The IPv4 addresses an IPv4-compatible, NAT64, 6to4 or Teredo address embeds."""
    found: list[ipaddress.IPv4Address] = []
    bare = ipaddress.IPv6Address(int(address))  # drop any scope before the range tests
    # :: and ::1 lie in ::/96 but are the unspecified and loopback addresses, not embeddings.
    if (bare in _COMPAT and int(bare) > 1) or bare in _NAT64:
        found.append(ipaddress.IPv4Address(int(bare) & 0xFFFFFFFF))
    if bare in _SIX_TO_FOUR and bare.sixtofour is not None:
        found.append(bare.sixtofour)
    if bare in _TEREDO and bare.teredo is not None:
        server, client = bare.teredo
        found.extend((client, server))
    return tuple(found)


def metadata_row(address: IPAddress) -> Range | None:
    """The metadata row of an address, or None."""
    address = canonical(address)
    rows = _META_V4 if address.version == 4 else _META_V6
    return next((r for r in rows if address in r.network), None)


def table_row(address: IPAddress) -> Range | None:
    """The most specific forbidden-range row that holds the address, or None.

    This is the production table alone, without operator rules and without embedded views.
    """
    address = canonical(address)
    if isinstance(address, ipaddress.IPv6Address):
        address = ipaddress.IPv6Address(int(address))
        return next((r for r in _TABLE_V6 if address in r.network), None)
    return next((r for r in _TABLE_V4 if address in r.network), None)


def special_name_category(host: str) -> Category | None:
    """Why the built-in table refuses a host name (ASCII, lower case), or None."""
    if host in METADATA_NAMES:
        return Category.METADATA
    if any(host == s or host.endswith("." + s) for s in SPECIAL_USE_SUFFIXES):
        return Category.SPECIAL_USE_NAME
    if "." not in host:
        # A single label is completed by the resolver's search list: an internal name.
        return Category.SINGLE_LABEL
    return None


@dataclass(frozen=True, slots=True)
class _NameRule:
    name: str
    subdomains: bool

    def matches(self, host: str) -> bool:
        if self.subdomains:
            return host.endswith("." + self.name)
        return host == self.name


def _ascii_name(name: str) -> str:
    name = name.strip().lower()
    if not name.isascii():
        name = idna.encode(name, uts46=True, transitional=False).decode("ascii")
    return name


def _normalize_network(network: IPNetwork) -> IPNetwork:
    # A rule written as ::ffff:a.b.c.d/n means IPv4, as addresses are canonicalized.
    if (
        isinstance(network, ipaddress.IPv6Network)
        and network.prefixlen >= 96
        and network.subnet_of(_MAPPED)
    ):
        base = ipaddress.IPv4Address(int(network.network_address) & 0xFFFFFFFF)
        return ipaddress.IPv4Network(f"{base}/{network.prefixlen - 96}")
    return network


def check_rules(rules: Iterable[str]) -> None:
    """Raise ValueError when a rule is neither a CIDR nor a host name the policy accepts."""
    _parse_rules(rules)


def _parse_rules(rules: Iterable[str]) -> tuple[tuple[IPNetwork, ...], tuple[_NameRule, ...]]:
    networks: list[IPNetwork] = []
    names: list[_NameRule] = []
    for raw in rules:
        rule = raw.strip().lower()
        if not rule:
            raise ValueError("an egress rule is empty")
        try:
            networks.append(_normalize_network(ipaddress.ip_network(rule, strict=False)))
            continue
        except ValueError:
            pass
        subdomains = rule.startswith(("*.", "."))
        name = rule.lstrip("*").lstrip(".")
        try:
            name = _ascii_name(name)
        except idna.IDNAError:
            raise ValueError("an egress rule is neither a CIDR nor a host name") from None
        if not name or any(c.isspace() or c in "/@:*%\\" for c in name) or ".." in name:
            raise ValueError("an egress rule is neither a CIDR nor a host name")
        names.append(_NameRule(name, subdomains))
    return tuple(networks), tuple(names)


def _in_any(address: IPAddress, networks: Sequence[IPNetwork]) -> bool:
    return any(address.version == n.version and address in n for n in networks)


class AddressPolicy:
    """The production table plus the operator's allow and deny rules.

    Methods raise :class:`EgressError` (``name_denied`` or ``address_denied``) or return the
    canonical form of what passed.
    """

    def __init__(self, allow: Iterable[str] = (), deny: Iterable[str] = ()) -> None:
        self._allow_nets, self._allow_names = _parse_rules(allow)
        self._deny_nets, self._deny_names = _parse_rules(deny)

    def name_allowed_by_rule(self, host: str) -> bool:
        """True when an operator allow rule names this host."""
        return any(rule.matches(host) for rule in self._allow_names)

    def check_name(self, host: str, *, trusted: bool = False) -> bool:
        """Judge a host name (ASCII, lower case). Returns True when the name is trusted.

        A trusted name (``trusted=True``, an explicitly configured engine endpoint, or a name
        an allow rule names) may resolve to addresses the table refuses, except metadata.
        A deny rule refuses the name whatever else applies.
        """
        if any(rule.matches(host) for rule in self._deny_names):
            raise EgressError(EgressReason.NAME_DENIED, Category.OPERATOR_DENY)
        if host in METADATA_NAMES:
            raise EgressError(EgressReason.NAME_DENIED, Category.METADATA)
        if trusted or self.name_allowed_by_rule(host):
            return True
        category = special_name_category(host)
        if category is not None:
            raise EgressError(EgressReason.NAME_DENIED, category)
        return False

    def check_address(self, address: IPAddress, *, trusted_name: bool = False) -> IPAddress:
        """Judge one address on all its views; return its canonical form."""
        if isinstance(address, ipaddress.IPv6Address) and address.scope_id is not None:
            raise EgressError(EgressReason.ADDRESS_DENIED, Category.SCOPED)
        primary = canonical(address)
        views: list[IPAddress] = []
        if isinstance(primary, ipaddress.IPv6Address):
            views.extend(embedded_ipv4(primary))
        views.append(primary)
        for view in views:
            if _in_any(view, self._deny_nets):
                raise EgressError(EgressReason.ADDRESS_DENIED, Category.OPERATOR_DENY)
        for view in views:
            if _in_any(view, self._allow_nets):
                continue
            meta = metadata_row(view)
            if meta is not None:
                raise EgressError(EgressReason.ADDRESS_DENIED, meta.category)
            if trusted_name:
                continue
            row = table_row(view)
            if row is not None:
                raise EgressError(EgressReason.ADDRESS_DENIED, row.category)
        return primary

    def check_answer_set(
        self, addresses: Sequence[IPAddress], *, trusted_name: bool = False
    ) -> tuple[IPAddress, ...]:
        """Judge a complete DNS answer set: one refused address refuses the whole set."""
        if not addresses:
            raise EgressError(EgressReason.DNS_FAILURE)
        checked: list[IPAddress] = []
        for address in addresses:
            ok = self.check_address(address, trusted_name=trusted_name)
            if ok not in checked:
                checked.append(ok)
        return tuple(checked)
