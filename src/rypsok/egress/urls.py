"""The URL check of the egress component: one strict parser, no network (REQ-SEC-009, M3).

The URL is parsed once, by this parser only, and anything ambiguous is refused rather than
repaired, because two parsers that disagree about a host are how a guard is bypassed:

* only ``http`` and ``https`` (``http`` only when the caller says so); no ``user:pass@``;
* at most LIM-F9 characters; no whitespace, control or format characters, no backslash, no
  malformed percent escape anywhere;
* the host is an ASCII name of non-empty labels (a trailing dot is an empty label), an IPv6
  literal in brackets without a zone, or an IPv4 address in any spelling the WHATWG URL
  standard accepts (``2130706433``, ``0177.0.0.1``, ``0x7f.1``, ``127.1``), which is judged as
  the address it names; a host with ``%``, U+3002, U+FF0E or U+FF61 is refused;
* a Unicode host is converted to ASCII with UTS 46 (non-transitional, STD3 rules), then
  checked again, so ``１２７.０.０.１`` is judged as 127.0.0.1;
* the port is explicit decimal without leading zeros, else the scheme default;
* non-ASCII characters of the path, query and fragment are percent-encoded as UTF-8; the
  fragment is never sent and is returned separately.

The result is a frozen :class:`CheckedURL`. The host and address policy is applied by
:class:`rypsok.egress.Egress`, not here.
"""

from __future__ import annotations

import ipaddress
import re
import unicodedata
from dataclasses import dataclass
from typing import Final, Literal
from urllib.parse import quote, urljoin

import idna

from rypsok.config.limits import limit
from rypsok.egress.addresses import IPAddress
from rypsok.egress.errors import EgressError, EgressReason

MAX_URL_CHARS: Final = limit("LIM-F9")
DEFAULT_PORTS: Final[dict[str, int]] = {"http": 80, "https": 443}

Scheme = Literal["http", "https"]

_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
_PORT = re.compile(r"[1-9][0-9]{0,4}")
_BAD_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")
_HOST_ASCII = re.compile(r"[a-z0-9._\-]+")
_IPV6_TEXT = re.compile(r"[0-9A-Fa-f:.]+")
_HEX_NUMBER = re.compile(r"0[xX][0-9A-Fa-f]*")
_IDEOGRAPHIC_DOTS: Final = frozenset("\u3002\uff0e\uff61")
# Unicode categories refused anywhere: controls, format (bidi, zero-width), surrogates,
# private use, unassigned, and every kind of space.
_REFUSED_CATEGORIES: Final = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zs", "Zl", "Zp"})
_OCTAL: Final = frozenset("01234567")
_DECIMAL: Final = frozenset("0123456789")
_HEX: Final = frozenset("0123456789abcdefABCDEF")


@dataclass(frozen=True, slots=True)
class CheckedURL:
    """A URL that passed the syntax check; the only URL form the egress component sends.

    ``host`` is ASCII: a lower-case name, dotted-quad IPv4 or compressed IPv6 (no brackets).
    ``target`` is the request target (path and query). ``fragment`` is None when the URL
    had no ``#``. ``address`` is the literal address when the host was one.
    """

    scheme: Scheme
    host: str
    port: int
    target: str
    fragment: str | None
    address: IPAddress | None

    @property
    def is_literal_address(self) -> bool:
        """True when the host is an address literal (no DNS is used)."""
        return self.address is not None

    @property
    def origin(self) -> tuple[str, str, int]:
        """The origin (scheme, host, port)."""
        return (self.scheme, self.host, self.port)

    @property
    def host_header(self) -> str:
        """The Host header value: brackets for IPv6, the port when it is not the default."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        if self.port != DEFAULT_PORTS[self.scheme]:
            return f"{host}:{self.port}"
        return host

    @property
    def url(self) -> str:
        """The URL as requested, without the fragment."""
        return f"{self.scheme}://{self.host_header}{self.target}"


def _refuse(reason: EgressReason = EgressReason.INVALID_URL) -> EgressError:
    return EgressError(reason)


def resolve_reference(base: str, reference: str) -> str:
    """``reference`` (a redirect's Location) resolved against ``base``, to be checked next.

    A reference urllib cannot split (``http://[x``: an unclosed or invalid bracketed host)
    is an invalid URL, refused like any other, not a ValueError out of the call.
    """
    try:
        return urljoin(base, reference)
    except ValueError:
        raise _refuse() from None


def _check_characters(text: str) -> None:
    for ch in text:
        code = ord(ch)
        if code < 0x80:
            if code <= 0x20 or code == 0x7F or ch == "\\":
                raise _refuse()
        elif unicodedata.category(ch) in _REFUSED_CATEGORIES:
            raise _refuse()


def _encode_part(text: str) -> str:
    if _BAD_PERCENT.search(text):
        raise _refuse()
    if text.isascii():
        return text
    return "".join(ch if ch.isascii() else quote(ch, safe="") for ch in text)


def _ipv4_number(part: str) -> int | None:
    """One part of a WHATWG IPv4 host: decimal, octal (leading 0) or hex (0x)."""
    if not part:
        return None
    digits = _DECIMAL
    radix = 10
    if part[:2] in ("0x", "0X"):
        part, digits, radix = part[2:], _HEX, 16
    elif len(part) > 1 and part[0] == "0":
        part, digits, radix = part[1:], _OCTAL, 8
    if not part:
        return 0
    if any(c not in digits for c in part):
        return None
    return int(part, radix)


def parse_whatwg_ipv4(host: str) -> ipaddress.IPv4Address | None:
    """The address a host names under the WHATWG IPv4 parser, or None when it is invalid."""
    parts = host.split(".")
    if len(parts) > 4:
        return None
    numbers: list[int] = []
    for part in parts:
        number = _ipv4_number(part)
        if number is None:
            return None
        numbers.append(number)
    if any(n > 255 for n in numbers[:-1]) or numbers[-1] >= 256 ** (5 - len(numbers)):
        return None
    value = numbers[-1]
    for index, number in enumerate(numbers[:-1]):
        value += number * 256 ** (3 - index)
    return ipaddress.IPv4Address(value)


def _ends_in_number(host: str) -> bool:
    last = host.rsplit(".", 1)[-1]
    return last.isdigit() or bool(_HEX_NUMBER.fullmatch(last))


def _to_ascii(host: str) -> str:
    if any(ch in _IDEOGRAPHIC_DOTS for ch in host):
        raise _refuse()
    if host.isascii():
        return host.lower()
    try:
        return idna.encode(host, uts46=True, std3_rules=True, transitional=False).decode("ascii")
    except (idna.IDNAError, UnicodeError, ValueError):
        raise _refuse() from None


def _check_labels(host: str) -> None:
    if len(host) > 253:
        raise _refuse()
    for label in host.split("."):
        if not label or len(label) > 63 or label[0] == "-" or label[-1] == "-":
            raise _refuse()
        if label.startswith("xn--"):
            try:
                idna.decode(label)
            except (idna.IDNAError, UnicodeError, ValueError):
                raise _refuse() from None


def parse_host(text: str, *, bracketed: bool) -> tuple[str, IPAddress | None]:
    """Parse the host of an authority: (ASCII host, literal address or None)."""
    if bracketed:
        if not _IPV6_TEXT.fullmatch(text):
            raise _refuse()  # also refuses a zone ("%25eth0")
        try:
            address6 = ipaddress.IPv6Address(text)
        except ValueError:
            raise _refuse() from None
        return str(address6), address6
    if not text or "%" in text:
        raise _refuse()
    host = _to_ascii(text)
    if not _HOST_ASCII.fullmatch(host):
        raise _refuse()
    _check_labels(host)
    if _ends_in_number(host):
        address4 = parse_whatwg_ipv4(host)
        if address4 is None:
            raise _refuse()
        return str(address4), address4
    return host, None


def parse_url(url: str, *, allow_http: bool, ports: frozenset[int] | None) -> CheckedURL:
    """Check a URL without using the network; raise :class:`EgressError` on any doubt.

    ``ports`` is the set of allowed ports, or None for any port (the engine profile checks
    the port against the endpoint's origin instead).
    """
    if len(url) > MAX_URL_CHARS:
        raise _refuse()
    _check_characters(url)
    match = _SCHEME.match(url)
    if match is None:
        raise _refuse()
    scheme = match.group()[:-1].lower()
    if scheme not in DEFAULT_PORTS or (scheme == "http" and not allow_http):
        raise _refuse(EgressReason.SCHEME)
    rest = url[match.end() :]
    if not rest.startswith("//"):
        raise _refuse()
    rest = rest[2:]
    end = next((i for i, ch in enumerate(rest) if ch in "/?#"), len(rest))
    authority, tail = rest[:end], rest[end:]
    if "@" in authority:
        raise _refuse(EgressReason.CREDENTIALS_IN_URL)

    port_text: str | None = None
    if authority.startswith("["):
        close = authority.find("]")
        if close < 0:
            raise _refuse()
        host_text, after = authority[1:close], authority[close + 1 :]
        if after:
            if not after.startswith(":"):
                raise _refuse()
            port_text = after[1:]
        host, address = parse_host(host_text, bracketed=True)
    else:
        host_text, colon, after = authority.partition(":")
        if colon:
            port_text = after
        host, address = parse_host(host_text, bracketed=False)

    port = DEFAULT_PORTS[scheme]
    if port_text is not None:
        if not _PORT.fullmatch(port_text) or int(port_text) > 65535:
            raise _refuse()
        port = int(port_text)
    if ports is not None and port not in ports:
        raise _refuse(EgressReason.PORT)

    path_query, hash_mark, fragment_text = tail.partition("#")
    target = _encode_part(path_query)
    if not target.startswith("/"):
        target = "/" + target  # "https://h?q" and "https://h" request "/?q" and "/"
    fragment = _encode_part(fragment_text) if hash_mark else None
    checked = CheckedURL(
        scheme="https" if scheme == "https" else "http",
        host=host,
        port=port,
        target=target,
        fragment=fragment,
        address=address,
    )
    if len(checked.url) > MAX_URL_CHARS:
        # Percent-encoding and the canonical host may have grown it: the URL sent (and
        # returned, and checked again on a redirect) stays within LIM-F9 too (SEC-15).
        raise _refuse()
    return checked
