"""The URL check without network (REQ-SEC-009, REQ-FETCH-007, REQ-FETCH-010, REQ-TEST-005).

The checks run through ``Egress.check_url`` with the production policy and no allow rule.
"""

from __future__ import annotations

import contextlib
import ipaddress

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rypsok.config.limits import limit
from rypsok.egress import Egress, EgressError, EgressReason
from rypsok.egress.addresses import Category
from rypsok.egress.urls import CheckedURL, parse_url, parse_whatwg_ipv4

from ._support import USER_AGENT, make_settings


@pytest.fixture(scope="module")
def egress() -> Egress:
    # No connection is ever opened by check_url, so nothing needs closing.
    return Egress(make_settings(), USER_AGENT)


def reason_of(egress: Egress, url: str, *, allow_http: bool = True) -> EgressReason:
    with pytest.raises(EgressError) as refused:
        egress.check_url(url, allow_http=allow_http)
    return refused.value.reason


# --- alternate numeric spellings ---------------------------------------------------------------


@pytest.mark.req("REQ-TEST-005")
@pytest.mark.parametrize(
    ("url", "address", "category"),
    [
        ("https://2130706433/", "127.0.0.1", Category.LOOPBACK),  # decimal
        ("https://0177.0.0.1/", "127.0.0.1", Category.LOOPBACK),  # octal
        ("https://0177.1/", "127.0.0.1", Category.LOOPBACK),
        ("https://017700000001/", "127.0.0.1", Category.LOOPBACK),
        ("https://0x7f.1/", "127.0.0.1", Category.LOOPBACK),  # hexadecimal
        ("https://0x7F000001/", "127.0.0.1", Category.LOOPBACK),
        ("https://0x7f.0x0.0x0.0x1/", "127.0.0.1", Category.LOOPBACK),
        ("https://127.1/", "127.0.0.1", Category.LOOPBACK),  # short forms
        ("https://127.0.1/", "127.0.0.1", Category.LOOPBACK),
        ("https://127.000.000.001/", "127.0.0.1", Category.LOOPBACK),
        ("https://0/", "0.0.0.0", Category.UNSPECIFIED),
        ("https://0x/", "0.0.0.0", Category.UNSPECIFIED),
        ("https://2852039166/", "169.254.169.254", Category.METADATA),
        ("https://0xa9.0xfe.0xa9.0xfe/", "169.254.169.254", Category.METADATA),
        ("https://0251.0376.0251.0376/", "169.254.169.254", Category.METADATA),
        ("https://169.254.43518/", "169.254.169.254", Category.METADATA),
        ("https://100.100.100.200/", "100.100.100.200", Category.METADATA),
        ("https://012.1/", "10.0.0.1", Category.PRIVATE),
        ("https://１２７.０.０.１/", "127.0.0.1", Category.LOOPBACK),  # fullwidth, via UTS 46
        ("https://[::1]/", "::1", Category.LOOPBACK),
        ("https://[::]/", "::", Category.UNSPECIFIED),
        ("https://[::ffff:127.0.0.1]/", "::ffff:7f00:1", Category.LOOPBACK),  # mapped
        ("https://[0:0:0:0:0:ffff:7f00:1]/", "::ffff:7f00:1", Category.LOOPBACK),
        ("https://[::ffff:a9fe:a9fe]/", "::ffff:a9fe:a9fe", Category.METADATA),
        ("https://[fd00:ec2::254]/", "fd00:ec2::254", Category.METADATA),
        ("https://[2002:7f00:1::]/", "2002:7f00:1::", Category.LOOPBACK),
        ("https://[64:ff9b::7f00:1]/", "64:ff9b::7f00:1", Category.LOOPBACK),
        ("https://[fe80::1]/", "fe80::1", Category.LINK_LOCAL),
    ],
)
def test_req_test_005_address_literals_in_every_notation(
    egress: Egress, url: str, address: str, category: Category
) -> None:
    """Decimal, octal, hexadecimal, short, fullwidth and IPv6 spellings are judged as the
    address they name (REQ-SEC-006, REQ-SEC-007).

    Proves THR-02.
    """
    checked = parse_url(url, allow_http=False, ports=None)
    assert checked.address == ipaddress.ip_address(address)
    assert checked.is_literal_address
    with pytest.raises(EgressError) as refused:
        egress.check_url(url, allow_http=False)
    assert refused.value.reason == EgressReason.ADDRESS_DENIED
    assert refused.value.category == category


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("1.2.3.4", "1.2.3.4"),
        ("16909060", "1.2.3.4"),
        ("1.131844", "1.2.3.4"),
        ("1.2.772", "1.2.3.4"),
        ("0x1.0x2.0x3.0x4", "1.2.3.4"),
        ("01.02.03.04", "1.2.3.4"),
        ("4294967295", "255.255.255.255"),
        ("4294967296", None),
        ("1.2.3.256", None),
        ("256.1.1.1", None),
        ("256.1", None),  # a part above 255 before the last one of a short form
        ("1.256.1", None),
        ("1.2.3.4.5", None),
        ("09.1.1.1", None),
        ("0x1g.1.1.1", None),
        ("1..1", None),
    ],
)
def test_whatwg_ipv4_parser(host: str, expected: str | None) -> None:
    """The IPv4 parser follows the WHATWG URL standard, including its failures."""
    result = parse_whatwg_ipv4(host)
    assert result == (ipaddress.IPv4Address(expected) if expected else None)


def test_global_literals_pass(egress: Egress) -> None:
    checked = egress.check_url("https://134744072/", allow_http=False)  # 8.8.8.8
    assert checked.host == "8.8.8.8"
    assert checked.url == "https://8.8.8.8/"
    assert egress.check_url("https://[2606:4700:4700::1111]/", allow_http=False).host_header == (
        "[2606:4700:4700::1111]"
    )


# --- parser confusion --------------------------------------------------------------------------


@pytest.mark.req("REQ-SEC-009")
@pytest.mark.parametrize(
    "url",
    [
        "https://example.com\\@evil.example/",
        "https://evil.example\\.example.com/",
        "https://example.com/a\\b",
        "https://exa mple.com/",
        "https://example.com/a b",
        " https://example.com/",
        "https://example.com/\n",
        "https://exa\tmple.com/",
        "https://exa\x00mple.com/",
        "https://example.com/\x7f",
        "https://ex%61mple.com/",
        "https://127%2e0%2e0%2e1/",
        "https://%31%32%37.0.0.1/",
        "https://example。com/",
        "https://example．com/",
        "https://example｡com/",
        "https://example..com/",
        "https://.example.com/",
        "https://example.com./",
        "https://-example.com/",
        "https://example-.com/",
        "https://a<b.example/",
        "https://a$b.example/",
        "https://exa\u200bmple.com/",  # zero-width space
        "https://exa\u00a0mple.com/",  # no-break space
        "https://example.com/\u202e",  # bidi override
        "https://[::1/",
        "https://[::1]x/",
        "https://[::1]:/",
        "https://[fe80::1%25eth0]/",
        "https://[v1.x]/",
        "https://[127.0.0.1]/",
        "https://example.com:80:80/",
        "https://example.com:+443/",
        "https://example.com:0443/",
        "https://example.com:0/",
        "https://example.com:65536/",
        "https://example.com:99999999999/",
        "https://example.com:/",
        "https://example.com:８０/",
        "https:example.com",
        "https:/example.com",
        "https:///example.com",
        "https://",
        "https://?x",
        "//example.com/",
        "example.com",
        "https://example.com/%zz",
        "https://example.com/%4",
        "https://example.com/?q=%",
        "https://1.2.3.4.5/",
        "https://256.0.0.1/",
        "https://1.2.3.256/",
        "https://example.0x1/",
        "https://example.123/",
        "https://09.0.0.1/",
        "https://xn--a.example/",
        "https://" + "a" * 64 + ".example/",
        "https://" + "a." * 127 + "example/",
    ],
)
def test_req_sec_009_ambiguous_url_refused(egress: Egress, url: str) -> None:
    """Anything a second parser could read differently is refused, not repaired."""
    assert reason_of(egress, url) == EgressReason.INVALID_URL


@pytest.mark.req("REQ-SEC-009")
@pytest.mark.parametrize(
    "url",
    [
        "ftp://example.com/",
        "file:///etc/passwd",
        "gopher://example.com/",
        "javascript:alert(1)",
        "data:text/html,hello",
        "ws://example.com/",
        "wss://example.com/",
        "httpx://example.com/",
        "localhost:8080",
    ],
)
def test_req_sec_009_only_http_schemes(egress: Egress, url: str) -> None:
    assert reason_of(egress, url) == EgressReason.SCHEME


@pytest.mark.req("REQ-FETCH-010")
def test_req_fetch_010_http_only_when_allowed(egress: Egress) -> None:
    """Plain http is refused unless the caller's profile allows it."""
    assert reason_of(egress, "http://example.com/", allow_http=False) == EgressReason.SCHEME
    assert egress.check_url("HTTP://example.com/", allow_http=True).scheme == "http"


@pytest.mark.req("REQ-FETCH-007")
@pytest.mark.parametrize(
    "url",
    [
        "https://user:pass@example.com/",
        "https://user@example.com/",
        "https://:@example.com/",
        "https://@example.com/",
        "https://example.com@evil.example/",
        "https://a%40b@example.com/",
        "https://user:pass@[::1]/",
        "http://user:pass@127.0.0.1/",
    ],
)
def test_req_fetch_007_credentials_in_url_refused(egress: Egress, url: str) -> None:
    """A URL carrying credentials is refused with its own reason (REQ-TEST-005)."""
    assert reason_of(egress, url) == EgressReason.CREDENTIALS_IN_URL


def test_at_sign_after_the_authority_is_data(egress: Egress) -> None:
    checked = egress.check_url("https://example.com/@user?a=b@c#x@y", allow_http=False)
    assert checked.host == "example.com"
    assert checked.target == "/@user?a=b@c"


# --- ports and length --------------------------------------------------------------------------


@pytest.mark.req("REQ-SEC-009")
@pytest.mark.parametrize(
    "url", ["https://example.com:8443/", "http://example.com:22/", "https://example.com:8080/"]
)
def test_req_sec_009_forbidden_ports(egress: Egress, url: str) -> None:
    """Only the ports of LIM-F8 and the configured extra ports are allowed (REQ-TEST-005)."""
    assert reason_of(egress, url) == EgressReason.PORT


def test_lim_f8_ports_and_configured_extra_port() -> None:
    plain = Egress(make_settings(), USER_AGENT)
    assert plain.check_url("https://example.com:80/", allow_http=False).port == 80
    assert plain.check_url("http://example.com:443/", allow_http=True).port == 443
    assert plain.check_url("https://example.com:443/", allow_http=False).url == (
        "https://example.com/"
    )
    extra = Egress(make_settings(ports=[8443]), USER_AGENT)
    checked = extra.check_url("https://example.com:8443/x", allow_http=False)
    assert (checked.port, checked.host_header) == (8443, "example.com:8443")


@pytest.mark.req("REQ-FETCH-001")
def test_lim_f9_url_length(egress: Egress) -> None:
    """URLs up to LIM-F9 characters pass; one more is refused."""
    base = "https://example.com/"
    longest = base + "a" * (limit("LIM-F9") - len(base))
    assert egress.check_url(longest, allow_http=False).target.startswith("/aaa")
    assert reason_of(egress, longest + "a") == EgressReason.INVALID_URL


@pytest.mark.req("REQ-FETCH-001", "REQ-SEC-001")
def test_lim_f9_bounds_the_url_as_sent_after_percent_encoding(egress: Egress) -> None:
    """A URL short as given whose percent-encoded form, host included, exceeds LIM-F9 is
    refused, even when its encoded request target alone fits: the URL sent, returned and
    checked again on a redirect stays within LIM-F9 (SEC-15, found by fuzzing).

    Proves THR-02.
    """
    base = "https://example.org"
    path = "/" + "\u00e9" * ((limit("LIM-F9") - 2) // 6)  # each é is sent as %C3%A9
    assert len(path.encode("ascii", "backslashreplace")) < limit("LIM-F9")
    assert reason_of(egress, base + path) == EgressReason.INVALID_URL
    fits = "/" + "\u00e9" * ((limit("LIM-F9") - len(base) - 1) // 6)
    assert len(egress.check_url(base + fits, allow_http=False).url) <= limit("LIM-F9")


# --- names, IDNA, fragments --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("https://Bücher.Example/", "xn--bcher-kva.example"),
        ("https://xn--bcher-kva.example/", "xn--bcher-kva.example"),
        ("https://ＥＸＡＭＰＬＥ.com/", "example.com"),
        ("https://WWW.Example.COM/", "www.example.com"),
        ("https://under_score.example/", "under_score.example"),
        ("https://münchen.de/", "xn--mnchen-3ya.de"),
    ],
)
def test_hosts_converted_to_ascii(egress: Egress, url: str, host: str) -> None:
    assert egress.check_url(url, allow_http=False).host == host


@pytest.mark.req("REQ-SEC-006")
@pytest.mark.parametrize(
    ("url", "category"),
    [
        ("https://localhost/", Category.SPECIAL_USE_NAME),
        ("https://LOCALHOST./", None),
        ("https://metadata.google.internal/computeMetadata/v1/", Category.METADATA),
        ("http://metadata/", Category.METADATA),
        ("https://intranet/", Category.SINGLE_LABEL),
        ("https://printer.local/", Category.SPECIAL_USE_NAME),
    ],
)
def test_req_sec_006_names_refused_without_dns(
    egress: Egress, url: str, category: Category | None
) -> None:
    with pytest.raises(EgressError) as refused:
        egress.check_url(url, allow_http=True)
    if category is None:
        assert refused.value.reason == EgressReason.INVALID_URL
    else:
        assert refused.value.reason == EgressReason.NAME_DENIED
        assert refused.value.category == category


def test_fragment_stripped_and_returned(egress: Egress) -> None:
    checked = egress.check_url("https://example.com/a/b?x=1&y=ü#Section-2", allow_http=False)
    assert checked == CheckedURL(
        scheme="https",
        host="example.com",
        port=443,
        target="/a/b?x=1&y=%C3%BC",
        fragment="Section-2",
        address=None,
    )
    assert "#" not in checked.url
    assert egress.check_url("https://example.com#", allow_http=False).fragment == ""
    assert egress.check_url("https://example.com", allow_http=False).fragment is None
    assert egress.check_url("https://example.com?q", allow_http=False).target == "/?q"


def test_checked_url_is_frozen(egress: Egress) -> None:
    checked = egress.check_url("https://example.com/", allow_http=False)
    with pytest.raises(AttributeError):
        checked.host = "127.0.0.1"  # type: ignore[misc]


# --- properties (REQ-TEST-013) -----------------------------------------------------------------


@settings(
    max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.text(max_size=120))
def test_any_text_is_checked_or_refused_never_crashes(egress: Egress, text: str) -> None:
    """Arbitrary text either passes or raises EgressError; nothing else escapes."""
    for candidate in (text, "https://" + text, "https://example.com/" + text):
        with contextlib.suppress(EgressError):
            egress.check_url(candidate, allow_http=True)


_label = st.from_regex(r"[a-z0-9]([a-z0-9-]{0,10}[a-z0-9])?", fullmatch=True)
_host = st.one_of(
    st.lists(_label, min_size=2, max_size=4).map(".".join),
    st.integers(0, 2**32 - 1).map(str),
    st.ip_addresses(v=6).map(lambda a: f"[{a}]"),
)
_tail = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cc", "Cs", "Zs", "Cf", "Co", "Cn")),
    max_size=40,
).map(lambda t: t.replace("\\", "").replace("%", "%25"))


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["http", "https", "HTTPS"]), _host, _tail)
def test_checked_url_is_stable_under_a_second_check(scheme: str, host: str, tail: str) -> None:
    """Checking the URL a CheckedURL sends gives the same CheckedURL (no parser drift)."""
    try:
        first = parse_url(f"{scheme}://{host}/{tail}", allow_http=True, ports=None)
    except EgressError:
        return
    second = parse_url(first.url, allow_http=True, ports=None)
    assert (second.scheme, second.host, second.port, second.target, second.address) == (
        first.scheme,
        first.host,
        first.port,
        first.target,
        first.address,
    )
