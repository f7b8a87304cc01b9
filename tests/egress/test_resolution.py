"""Resolution and connect-time enforcement with a local DNS server (REQ-SEC-006/007, REQ-TEST-005).

The DNS server runs on 127.0.0.1 and answers from a function, so answers can change between
questions: the classic DNS rebinding attack. The connection must go to the address that was
checked, and the name is never resolved a second time for the same request.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable

import anyio
import pytest

from rypsok.egress import EgressError, EgressReason
from rypsok.egress.addresses import Category
from rypsok.egress.resolver import DnsResolver, SystemResolver

from ._support import DNSServer, HTTPServer, make_settings, respond_each, serving
from .conftest import MakeEgress

pytestmark = pytest.mark.anyio

StartDNS = Callable[..., DNSServer]
ip = ipaddress.ip_address


async def fetch_status(
    make_egress: MakeEgress, dns: DNSServer, port: int, url: str, **allow: object
) -> int:
    egress = make_egress(make_settings(ports=[port], dns_server=dns.address), **allow)
    checked = egress.check_url(url, allow_http=True)
    with anyio.fail_after(30):
        response = await egress.get(
            checked, accept="*/*", max_bytes=1 << 20, connect_timeout_s=2, total_timeout_s=10
        )
    return response.status


# --- the resolver ----------------------------------------------------------------------------


async def test_complete_answer_set_of_both_families(dns_zone: Callable[..., DNSServer]) -> None:
    dns = dns_zone({"both.test": ["192.0.2.1", "192.0.2.2", "2001:db8::1"]})
    answer = await DnsResolver([dns.address]).resolve("both.test", 2)
    assert sorted(answer[:2]) == [ip("192.0.2.1"), ip("192.0.2.2")]  # an RRset has no order
    assert answer[2] == ip("2001:db8::1")
    assert sorted(t for _, t in dns.queries) == ["A", "AAAA"]


@pytest.mark.req("REQ-SEC-006")
@pytest.mark.parametrize("result", ["NXDOMAIN", "SERVFAIL", None, []])
async def test_req_sec_006_unresolvable_names_fail_closed(
    dns_server: StartDNS, result: str | list[str] | None
) -> None:
    """NXDOMAIN, SERVFAIL, no reply at all and an empty answer all end in dns_failure."""
    dns = dns_server(lambda _name, _type, _n: result)
    with anyio.fail_after(30), pytest.raises(EgressError) as caught:
        await DnsResolver([dns.address]).resolve("gone.test", 0.5)
    assert caught.value.reason == EgressReason.DNS_FAILURE


async def test_one_failed_family_fails_the_lookup(dns_server: StartDNS) -> None:
    dns = dns_server(lambda _name, rdtype, _n: ["192.0.2.1"] if rdtype == "A" else "SERVFAIL")
    with pytest.raises(EgressError) as caught:
        await DnsResolver([dns.address]).resolve("half.test", 1)
    assert caught.value.reason == EgressReason.DNS_FAILURE


async def test_oversized_answer_set_refused(dns_zone: Callable[..., DNSServer]) -> None:
    dns = dns_zone({"many.test": [f"192.0.2.{i}" for i in range(1, 70)]})
    with pytest.raises(EgressError) as caught:
        await DnsResolver([dns.address]).resolve("many.test", 2)
    assert caught.value.reason == EgressReason.DNS_FAILURE


async def test_system_resolver_answers_localhost() -> None:
    """The system resolver path (getaddrinfo); localhost comes from the hosts file."""
    answer = await SystemResolver().resolve("localhost", 2)
    assert all(a.is_loopback for a in answer) and answer


# --- answer sets through the egress component --------------------------------------------------


@pytest.mark.req("REQ-SEC-006")
@pytest.mark.parametrize(
    ("addresses", "category"),
    [
        (["127.0.0.1", "10.0.0.1"], Category.PRIVATE),
        (["127.0.0.1", "::1"], Category.LOOPBACK),
        (["127.0.0.1", "169.254.169.254"], Category.METADATA),
        (["127.0.0.1", "::ffff:127.0.0.2"], Category.LOOPBACK),
        (["127.0.0.1", "64:ff9b::a00:1"], Category.PRIVATE),
        (["fd00:ec2::254"], Category.METADATA),
    ],
)
async def test_req_sec_006_mixed_answers_refused_before_any_connection(
    make_egress: MakeEgress,
    dns_zone: Callable[..., DNSServer],
    addresses: list[str],
    category: Category,
) -> None:
    """One forbidden address in the answer refuses the call; the allowed one is not tried.

    Proves THR-03.
    """
    dns = dns_zone({"mixed.test": addresses})
    with serving(respond_each()) as server, pytest.raises(EgressError) as caught:
        await fetch_status(make_egress, dns, server.port, f"http://mixed.test:{server.port}/")
    assert (caught.value.reason, caught.value.category) == (EgressReason.ADDRESS_DENIED, category)
    assert server.connections == 0


@pytest.mark.req("REQ-SEC-006")
async def test_req_sec_006_unresolvable_name_fails_closed_in_a_fetch(
    make_egress: MakeEgress, dns_server: StartDNS
) -> None:
    dns = dns_server(lambda _name, _type, _n: None)  # never answers
    with serving(respond_each()) as server, pytest.raises(EgressError) as caught:
        await fetch_status(make_egress, dns, server.port, f"http://silent.test:{server.port}/")
    assert caught.value.reason == EgressReason.DNS_FAILURE
    assert server.connections == 0


@pytest.mark.req("REQ-SEC-007")
async def test_req_sec_007_dns_rebinding_connects_to_the_checked_address(
    make_egress: MakeEgress, dns_server: StartDNS, loopback_only: list[str]
) -> None:
    """The first answer (127.0.0.1, allowed in code) is checked; every later answer points at
    127.0.0.2, where a trap listens on the same port. The connection goes to 127.0.0.1, the
    name is asked once per family, and the trap is never contacted (REQ-TEST-005).

    Proves THR-03.
    """

    def rebind(_name: str, rdtype: str, n: int) -> list[str]:
        if rdtype == "AAAA":
            return []
        return ["127.0.0.1"] if n == 0 else ["127.0.0.2"]

    dns = dns_server(rebind)
    with serving(respond_each(body=b"checked")) as server:
        trap = HTTPServer(respond_each(body=b"trap"), host="127.0.0.2", port=server.port).start()
        try:
            egress = make_egress(make_settings(ports=[server.port], dns_server=dns.address))
            checked = egress.check_url(f"http://rebind.test:{server.port}/", allow_http=True)
            with anyio.fail_after(30):
                response = await egress.get(
                    checked, accept="*/*", max_bytes=1024, connect_timeout_s=2, total_timeout_s=10
                )
            assert (response.body, str(response.peer)) == (b"checked", "127.0.0.1")
            assert dns.count("rebind.test", "A") == 1
            assert loopback_only == ["127.0.0.1"]
            # The next hop resolves again and is judged again: 127.0.0.2 is refused.
            with anyio.fail_after(30), pytest.raises(EgressError) as caught:
                await egress.get(
                    checked, accept="*/*", max_bytes=1024, connect_timeout_s=2, total_timeout_s=10
                )
            assert caught.value.category == Category.LOOPBACK
        finally:
            trap.stop()
    assert trap.connections == 0
    assert loopback_only == ["127.0.0.1"]


@pytest.mark.req("REQ-SEC-007")
async def test_req_sec_007_rebinding_with_both_addresses_allowed_still_pins(
    make_egress: MakeEgress, dns_server: StartDNS
) -> None:
    """Even when the later answer would pass the policy, the request does not resolve again:
    it connects to the address of the one answer set it judged."""

    def rebind(_name: str, rdtype: str, n: int) -> list[str]:
        if rdtype == "AAAA":
            return []
        return ["127.0.0.1"] if n == 0 else ["127.0.0.2"]

    dns = dns_server(rebind)
    with serving(respond_each(body=b"checked")) as server:
        trap = HTTPServer(respond_each(body=b"trap"), host="127.0.0.2", port=server.port).start()
        try:
            egress = make_egress(
                make_settings(ports=[server.port], dns_server=dns.address),
                allow=["127.0.0.1", "127.0.0.2"],
            )
            checked = egress.check_url(f"http://rebind.test:{server.port}/", allow_http=True)
            with anyio.fail_after(30):
                response = await egress.get(
                    checked, accept="*/*", max_bytes=1024, connect_timeout_s=2, total_timeout_s=10
                )
        finally:
            trap.stop()
    assert response.body == b"checked"
    assert trap.connections == 0


async def test_next_address_tried_when_the_first_refuses(
    make_egress: MakeEgress, dns_zone: Callable[..., DNSServer], loopback_only: list[str]
) -> None:
    """Every address of the checked set may be tried, and only those."""
    with serving(respond_each(body=b"second"), host="::1") as server:
        dns = dns_zone({"two.test": ["127.0.0.3", "::1"]})  # nothing listens on 127.0.0.3
        status = await fetch_status(
            make_egress,
            dns,
            server.port,
            f"http://two.test:{server.port}/",
            allow=["::1", "127.0.0.3"],
        )
    assert status == 200
    assert loopback_only == ["127.0.0.3", "::1"]


async def test_operator_name_allow_rule_opens_an_intranet_name(
    make_egress: MakeEgress, dns_zone: Callable[..., DNSServer]
) -> None:
    """An allow rule for a name lets it resolve to a private address (not metadata)."""
    dns = dns_zone({"wiki.corp": ["127.0.0.1"], "meta.corp": ["169.254.169.254"]})
    with serving(respond_each()) as server:
        assert (
            await fetch_status(
                make_egress,
                dns,
                server.port,
                f"http://wiki.corp:{server.port}/",
                allow=[".corp"],
            )
            == 200
        )
        with pytest.raises(EgressError) as caught:
            await fetch_status(
                make_egress, dns, server.port, f"http://meta.corp:{server.port}/", allow=[".corp"]
            )
    assert caught.value.category == Category.METADATA
