"""Name resolution of the egress component: the complete A and AAAA answer set, bounded in time.

Two resolvers share one interface, :class:`Resolver`:

* :class:`SystemResolver` asks the operating system (``getaddrinfo`` through anyio) for every
  address of both families. A multi-label name is asked as an absolute name (trailing dot), so
  the resolver's search list cannot turn ``wiki.corp`` into ``wiki.corp.example.internal``.
  ``getaddrinfo`` runs in a worker thread that cannot be interrupted; the deadline ends the
  wait, and the thread finishes on its own.
* :class:`DnsResolver` asks the servers of ``[egress] dns_servers`` with dnspython's async
  resolver: A and AAAA together, no search list, no cache.

Both fail closed: a name that does not resolve, a failed or timed-out lookup, or an empty
answer raises ``dns_failure``. Judging the answer set is the policy's job; the resolver
returns it whole, in answer order, without duplicates.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Sequence
from typing import Final, Protocol

import anyio
import dns.asyncresolver
import dns.exception
import dns.name
import dns.nameserver
import dns.rdatatype
import dns.resolver

from rypsok.egress.addresses import IPAddress
from rypsok.egress.errors import EgressError, EgressReason

MAX_ANSWERS: Final = 64  # a larger answer set is refused rather than partly judged


class Resolver(Protocol):
    """Resolves a host name to its complete answer set or raises ``dns_failure``."""

    async def resolve(self, host: str, timeout_s: float) -> tuple[IPAddress, ...]:
        """All A and AAAA addresses of ``host`` (ASCII), within ``timeout_s`` seconds."""
        ...


def _answer_set(addresses: Sequence[IPAddress]) -> tuple[IPAddress, ...]:
    unique = tuple(dict.fromkeys(addresses))
    if not unique or len(unique) > MAX_ANSWERS:
        raise EgressError(EgressReason.DNS_FAILURE)
    return unique


class SystemResolver:
    """The operating system's resolver."""

    async def resolve(self, host: str, timeout_s: float) -> tuple[IPAddress, ...]:
        """All addresses ``getaddrinfo`` returns for ``host``, both families."""
        query = host + "." if "." in host else host
        try:
            with anyio.fail_after(timeout_s):
                infos = await anyio.getaddrinfo(
                    query.encode("ascii"), None, family=socket.AF_UNSPEC, type=socket.SOCK_STREAM
                )
        except (TimeoutError, OSError, UnicodeError):
            raise EgressError(EgressReason.DNS_FAILURE) from None
        found: list[IPAddress] = []
        for _family, _type, _proto, _name, sockaddr in infos:
            try:
                found.append(ipaddress.ip_address(sockaddr[0]))
            except ValueError:
                raise EgressError(EgressReason.DNS_FAILURE) from None
        return _answer_set(found)


def _server(text: str) -> dns.nameserver.Do53Nameserver:
    host, _sep, port = text.rpartition(":")
    return dns.nameserver.Do53Nameserver(host.strip("[]"), int(port))


class DnsResolver:
    """dnspython's async resolver against the configured ``ip:port`` servers."""

    def __init__(self, servers: Sequence[str]) -> None:
        if not servers:
            raise ValueError("DnsResolver needs at least one server")
        self._resolver = dns.asyncresolver.Resolver(configure=False)
        self._resolver.nameservers = [_server(s) for s in servers]
        self._resolver.cache = None
        self._resolver.retry_servfail = False

    async def _family(self, name: dns.name.Name, rdtype: str, timeout_s: float) -> list[IPAddress]:
        answer = await self._resolver.resolve(
            name, rdtype, raise_on_no_answer=False, search=False, lifetime=timeout_s
        )
        if answer.rrset is None:
            return []
        return [ipaddress.ip_address(rdata.to_text()) for rdata in answer.rrset]

    async def resolve(self, host: str, timeout_s: float) -> tuple[IPAddress, ...]:
        """All A and AAAA records of ``host``; both lookups must succeed."""
        results: dict[str, list[IPAddress]] = {}
        failed: list[str] = []

        async def lookup(name: dns.name.Name, rdtype: str) -> None:
            # Failures are recorded, not raised, so the sibling lookup is cancelled cleanly
            # and no exception group has to be unpicked.
            try:
                results[rdtype] = await self._family(name, rdtype, timeout_s)
            except (dns.exception.DNSException, ValueError):
                failed.append(rdtype)

        try:
            name = dns.name.from_text(host)  # absolute: no search list
            with anyio.fail_after(timeout_s):
                async with anyio.create_task_group() as group:
                    group.start_soon(lookup, name, "A")
                    group.start_soon(lookup, name, "AAAA")
        except (TimeoutError, dns.exception.DNSException, ValueError):
            raise EgressError(EgressReason.DNS_FAILURE) from None
        if failed:
            raise EgressError(EgressReason.DNS_FAILURE)
        return _answer_set([*results.get("A", []), *results.get("AAAA", [])])


def make_resolver(servers: Sequence[str]) -> Resolver:
    """The resolver for ``[egress] dns_servers``: dnspython when set, else the system's."""
    if servers:
        return DnsResolver(servers)
    return SystemResolver()
