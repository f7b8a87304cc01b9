"""Edges of URL normalization that mutation testing showed untested (REQ-RANK-003, REQ-RANK-002).

Each test kills surviving mutants of the mutation run of ``search/normalize.py``
(docs/security.md section 5): hosts that end in a number, the one canonical IPv4 spelling and
its bounds, malformed A-labels, the DNS length limits, the port bound, the bound on the host
text before mapping, and the conservative rules for tracking parameters (a malformed escape or
a ";" keeps the parameter).
"""

from __future__ import annotations

import pytest

from rypsok.config.limits import limit
from rypsok.search.normalize import comparison_key, is_tracking_parameter, returned_url

MAX = limit("LIM-F9")

pytestmark = pytest.mark.req("REQ-RANK-003")


@pytest.mark.parametrize(
    "url",
    [
        "http://127.1/",  # shortened
        "http://0x7f.1/",  # hexadecimal, shortened
        "http://0177.0.0.1/",  # octal
        "http://2130706433/",  # one integer
        "http://1.2.3/",  # three parts
        "http://1.2.3.4.5/",  # five parts
        "http://256.0.0.1/",  # a part above 255
        "http://1.2.3.256/",
        "http://01.2.3.4/",  # a leading zero
        "http://a.b.123/",  # a name whose last label is a number
        "http://example.123/",
        "http://example.0x1f/",  # ... or a hexadecimal number
        "http://example.0X1F/",
    ],
)
def test_hosts_ending_in_a_number_must_be_canonical_dotted_quads(url: str) -> None:
    """A host whose last label is a number is an address (WHATWG); only the dotted quad in
    decimal without leading zeros is kept, every other spelling is dropped.

    Proves THR-13.
    """
    assert returned_url(url, MAX) is None
    assert comparison_key(url) == url  # an unacceptable URL is its own key


@pytest.mark.parametrize(
    "url",
    ["http://1.2.3.4/", "http://0.0.0.0/", "http://255.255.255.255/x", "http://8.8.8.8:8080/"],
)
def test_canonical_dotted_quads_are_kept(url: str) -> None:
    """Every part 0..255 in plain decimal: the URL is returned as given."""
    assert returned_url(url, MAX) == url


@pytest.mark.parametrize(
    "url", ["http://localhost/", "http://intranet:8080/a", "https://ex-ample_1/"]
)
def test_single_label_names_are_names(url: str) -> None:
    """A host without a dot is a name (its only label is the last one)."""
    assert returned_url(url, MAX) == url


@pytest.mark.parametrize(
    "label",
    [
        "xn--abc-",  # Punycode of plain ASCII "abc": not an A-label
        "xn--ab-cd-",
        "xn--a",  # decodes to U+0080, a control character
        "xn--99999999999",  # no valid Punycode
    ],
)
def test_malformed_a_labels_are_dropped(label: str) -> None:
    """An ``xn--`` label must be Punycode of a non-ASCII label without controls.

    Proves THR-13.
    """
    url = f"https://{label}.example/"
    assert returned_url(url, MAX) is None
    assert returned_url(f"https://www.{label}.example/", MAX) is None


def test_a_valid_a_label_is_kept() -> None:
    """``xn--pckwg`` is Punycode of Japanese letters: a name like any other."""
    assert returned_url("https://xn--pckwg.example/", MAX) == "https://xn--pckwg.example/"


@pytest.mark.parametrize("host", ["exa$mple.org", "exa*mple.org", "a..b", "a!.example"])
def test_labels_hold_letters_digits_hyphen_and_underscore_only(host: str) -> None:
    """Any other character, or an empty label, drops the result.

    Proves THR-13.
    """
    assert returned_url(f"https://{host}/", MAX) is None


def test_dns_length_limits() -> None:
    """A name of 253 characters passes; 254 is dropped (labels of 63 at most)."""
    name = ".".join(["a" * 63, "b" * 63, "c" * 63, "d" * 61])
    assert len(name) == 253
    assert returned_url(f"https://{name}/", MAX) == f"https://{name}/"
    assert returned_url(f"https://{name}d/", MAX) is None
    assert returned_url(f"https://{'e' * 64}.example/", MAX) is None


def test_the_highest_port_is_kept() -> None:
    """Port 65535 is a port; 65536 is not."""
    assert returned_url("https://example.org:65535/", MAX) == "https://example.org:65535/"
    assert returned_url("https://example.org:65536/", MAX) is None


def test_host_text_is_bounded_before_mapping() -> None:
    """Host text of up to 4 x 253 characters is mapped (UTS #46 drops variation selectors);
    one character more is dropped without mapping."""
    filler = "\ufe0f" * (4 * 253 - len("example.org"))
    at_bound = f"https://example{filler}.org/"
    assert returned_url(at_bound, MAX) == "https://example.org/"
    assert returned_url(f"https://example\ufe0f{filler}.org/", MAX) is None


def test_a_parameter_name_with_a_malformed_escape_is_never_decoded() -> None:
    """``utm%5Fsource%`` is not read as ``utm_source%``: a stray "%" keeps the parameter."""
    assert is_tracking_parameter("utm%5Fsource") is True
    assert is_tracking_parameter("utm%5Fsource%") is False
    url = "https://example.org/?utm%5Fsource%=x&a=1"
    assert returned_url(url, MAX) == url


def test_a_piece_holding_a_semicolon_is_kept() -> None:
    """``utm_source=x;id=5`` may carry a real parameter for servers that split on ";"."""
    url = "https://example.org/?utm_source=x;id=5&a=1&utm_medium=y"
    assert returned_url(url, MAX) == "https://example.org/?utm_source=x;id=5&a=1"
