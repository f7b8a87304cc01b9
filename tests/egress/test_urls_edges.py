"""Edges of the URL check that mutation testing showed untested (REQ-SEC-009).

Each test kills surviving mutants of the mutation runs of ``egress/urls.py``
(docs/security.md section 5): C1 controls at the ASCII border, sub-delimiters as data, the
upper-case ``0X`` prefix and five-part hosts of the WHATWG IPv4 parser, the DNS length
limits, a URL without a path, the bounds of the port and of a target grown by
percent-encoding, and the one-byte parts of a shortened IPv4 address.
"""

from __future__ import annotations

import ipaddress

import pytest

from rypsok.egress import EgressError, EgressReason
from rypsok.egress.urls import MAX_URL_CHARS, CheckedURL, parse_url, parse_whatwg_ipv4

pytestmark = pytest.mark.req("REQ-SEC-009")


def check(url: str) -> CheckedURL:
    return parse_url(url, allow_http=True, ports=None)


def refusal(url: str) -> EgressReason:
    with pytest.raises(EgressError) as refused:
        check(url)
    return refused.value.reason


@pytest.mark.parametrize("control", ["\x80", "\x85", "\x9f"])
def test_c1_controls_are_refused_like_c0(control: str) -> None:
    """U+0080..U+009F are controls too (NEL among them): refused in host, path and query.

    Proves THR-24.
    """
    for url in (
        f"https://example.org/a{control}b",
        f"https://example.org/?q={control}",
        f"https://exa{control}mple.org/",
    ):
        assert refusal(url) is EgressReason.INVALID_URL


def test_sub_delimiters_and_tilde_are_data() -> None:
    """``!$&'()*+,;=`` and ``~`` are ordinary URL characters, sent as given (only bytes up to
    the space are refused)."""
    tail = "/a!b$c&d'e(f)g*h+i,j;k=l~m?n!=o&p=(q)"
    checked = check("https://example.org" + tail)
    assert checked.target == tail


@pytest.mark.parametrize(
    ("host", "address"),
    [
        ("0X7F.1", "127.0.0.1"),
        ("0X7f.0X0.0X0.0X1", "127.0.0.1"),
        ("0XA9.0XFE.0XA9.0XFE", "169.254.169.254"),
        ("0X8.0X8.0X8.0X8", "8.8.8.8"),
    ],
)
def test_upper_case_hex_prefix_names_the_address(host: str, address: str) -> None:
    """``0X`` is a hex prefix as ``0x`` is: the host is judged as the address it names.

    Proves THR-02.
    """
    assert parse_whatwg_ipv4(host.lower()) == parse_whatwg_ipv4(host)
    assert parse_whatwg_ipv4(host) == ipaddress.IPv4Address(address)
    checked = check(f"https://{host}/")
    assert checked.host == address
    assert checked.address == ipaddress.IPv4Address(address)


@pytest.mark.parametrize("host", ["1.2.3.4.0", "127.0.0.1.0", "0.0.0.0.0", "1.1.1.1.1"])
def test_more_than_four_parts_is_no_address(host: str) -> None:
    """A host ending in a number with five parts is invalid (WHATWG), never an address.

    Proves THR-02.
    """
    assert parse_whatwg_ipv4(host) is None
    assert refusal(f"https://{host}/") is EgressReason.INVALID_URL


def test_dns_length_limits() -> None:
    """A name of 253 characters and a label of 63 pass; one character more is refused."""
    labels = ["a" * 63, "b" * 63, "c" * 63, "d" * 61]
    longest = ".".join(labels)
    assert len(longest) == 253
    assert check(f"https://{longest}/").host == longest
    assert refusal(f"https://{longest}d/") is EgressReason.INVALID_URL
    label = "e" * 63
    assert check(f"https://{label}.example/").host == f"{label}.example"
    assert refusal(f"https://{label}e.example/") is EgressReason.INVALID_URL


@pytest.mark.parametrize(
    ("url", "requested", "fragment"),
    [
        ("https://example.org", "https://example.org/", None),
        ("https://example.org:8443", "https://example.org:8443/", None),
        ("https://example.org?q=1", "https://example.org/?q=1", None),
        ("https://example.org#top", "https://example.org/", "top"),
    ],
)
def test_a_url_without_a_path_requests_the_root(
    url: str, requested: str, fragment: str | None
) -> None:
    """The authority ends at the end of the URL too: the target is "/" (or "/?query")."""
    checked = check(url)
    assert checked.host == "example.org"
    assert checked.url == requested
    assert checked.fragment == fragment


def test_the_authority_ends_only_at_slash_question_mark_or_hash() -> None:
    """Letters in the host (an upper-case X too) never end the authority."""
    checked = check("https://XEXAMPLE.ORGX/x?X=1")
    assert (checked.host, checked.target) == ("xexample.orgx", "/x?X=1")


def test_the_highest_port_is_accepted() -> None:
    """Port 65535 is a port; 65536 is not."""
    assert check("https://example.org:65535/").port == 65535
    assert refusal("https://example.org:65536/") is EgressReason.INVALID_URL


def test_a_url_grown_by_percent_encoding_may_reach_the_bound() -> None:
    """LIM-F9 bounds the URL as sent, encoded target included: exactly LIM-F9 characters
    pass, one more does not (SEC-15)."""
    prefix = "https://example.org/"
    grown = "é" * 100  # 100 characters, 600 once encoded as %C3%A9
    filler = MAX_URL_CHARS - len(prefix) - 600
    at_bound = check(prefix + grown + "a" * filler)
    assert len(at_bound.url) == MAX_URL_CHARS
    assert at_bound.target.startswith("/%C3%A9%C3%A9")
    assert refusal(prefix + grown + "a" * (filler + 1)) is EgressReason.INVALID_URL


@pytest.mark.parametrize("host", ["1.256.1", "1.1.256.1", "256.1.1", "0x100.1.1.1", "1.0400.1"])
def test_every_part_but_the_last_is_one_byte(host: str) -> None:
    """Each part before the last must be at most 255 in any notation; the last one may fill
    the remaining bytes ("1.65535" is 1.0.255.255) but no more.

    Proves THR-02.
    """
    assert parse_whatwg_ipv4(host) is None
    assert refusal(f"https://{host}/") is EgressReason.INVALID_URL
    assert parse_whatwg_ipv4("1.65535") == ipaddress.IPv4Address("1.0.255.255")
    assert parse_whatwg_ipv4("1.1.65536") is None
