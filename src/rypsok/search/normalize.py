"""URL normalization: the returned URL and the comparison key (REQ-RANK-002, -003, REQ-CTX-006).

Two functions, both pure and deterministic, called on every result URL of a search:

* :func:`returned_url` is the URL the caller receives: the engine's URL with known tracking
  parameters removed and the host in its lower-case ASCII (IDNA) form, nothing else changed;
  None when the result must be dropped (and counted in a notice by the caller).
* :func:`comparison_key` is the internal identity used to merge results of several engines.
  Its rules are conservative: each one holds for every HTTP server, so two URLs get the same
  key only if they name the same resource. The key is never returned and never fetched.

The rules, the tracking-parameter list and what is deliberately not normalized are documented
in ``docs/ranking.md``; the tests in ``tests/search/test_normalize.py`` pin each rule.

The parser is a strict reading of RFC 3986 (appendix B for the split, section 3.2 for the
authority) rather than ``urllib.parse``, whose lenient repairs (stripping control characters,
accepting backslashes, splitting userinfo loosely) are the parser differentials an attacker
uses to make a checker and a fetcher see different hosts.
"""

from __future__ import annotations

import functools
import ipaddress
import re
import unicodedata
from dataclasses import dataclass
from typing import Final

import idna

__all__ = [
    "TRACKING_PARAMETERS",
    "TRACKING_PREFIXES",
    "comparison_key",
    "is_tracking_parameter",
    "returned_url",
]

# Query parameters whose only known use is click or campaign attribution. A name is listed
# only when no site is known to use it to select content, so removing it never changes the
# resource. Matching is exact and case-sensitive: trackers emit these spellings only, and a
# parameter called ``UTM_SOURCE`` or ``ref`` may well mean something to its site.
TRACKING_PARAMETERS: Final[frozenset[str]] = frozenset(
    {
        # Google Ads / Analytics / Shopping
        "gclid",
        "gclsrc",
        "dclid",
        "gbraid",
        "wbraid",
        "_ga",
        "_gl",
        "srsltid",
        # Meta
        "fbclid",
        "igshid",
        # Microsoft Advertising
        "msclkid",
        # Yandex
        "yclid",
        # X / Twitter
        "twclid",
        "ref_src",
        # TikTok
        "ttclid",
        # LinkedIn
        "li_fat_id",
        # Mailchimp
        "mc_cid",
        "mc_eid",
        # HubSpot
        "_hsenc",
        "_hsmi",
        "__hssc",
        "__hstc",
        "__hsfp",
        "hsCtaTracking",
        # Marketo
        "mkt_tok",
        # Vero
        "vero_id",
        "vero_conv",
    }
)

# Prefixes reserved by one tracking product each: ``utm_`` (Urchin / Google Analytics
# campaign tags) and ``oly_`` (Omeda: oly_anon_id, oly_enc_id).
TRACKING_PREFIXES: Final[tuple[str, ...]] = ("utm_", "oly_")

_DEFAULT_PORTS: Final[dict[str, int]] = {"http": 80, "https": 443}

# RFC 3986 appendix B, anchored; the scheme is checked separately against http/https.
_URI_RE: Final = re.compile(r"([^:/?#]+):(//([^/?#]*))?([^?#]*)(\?([^#]*))?(#(.*))?", re.DOTALL)
# What the ASCII fast path refuses: C0 controls, space, DEL and the backslash (which WHATWG
# parsers read as "/" in http URLs, so a checker and a fetcher could see different hosts).
_ASCII_REFUSED_RE: Final = re.compile(r"[\x00-\x20\x7f\\]")
# Unicode categories refused anywhere in a URL: controls, format characters (invisible ones
# such as bidirectional overrides and zero-width joiners that let a URL look like another),
# surrogates, private use, and every kind of space or line separator.
_REFUSED_CATEGORIES: Final[frozenset[str]] = frozenset({"Cc", "Cf", "Cs", "Co", "Zs", "Zl", "Zp"})

_ASCII_LABEL_RE: Final = re.compile(r"[a-z0-9_-]{1,63}")
_IPV4_PART_RE: Final = re.compile(r"0|[1-9][0-9]{0,2}")
_PORT_RE: Final = re.compile(r"[0-9]{0,5}")
_HEX_NUMBER_RE: Final = re.compile(r"0[xX][0-9A-Fa-f]*")
_ESCAPE_RE: Final = re.compile(r"%([0-9A-Fa-f]{2})")
_MALFORMED_ESCAPE_RE: Final = re.compile(r"%(?![0-9A-Fa-f]{2})")
_UNRESERVED: Final[frozenset[str]] = frozenset(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
)
_MAX_HOST_CHARS: Final = 253
# The longest host text looked at before mapping: generous for Unicode names (a 63-character
# A-label never comes from more than 63 code points, bar ones UTS #46 ignores).
_MAX_HOST_TEXT_CHARS: Final = 4 * _MAX_HOST_CHARS


@dataclass(frozen=True, slots=True)
class _Parts:
    """A URL that passed every check, split into the pieces both functions rebuild from."""

    scheme: str  # as given (only its case may differ from "http"/"https")
    host: str  # ASCII, lower-case; IPv6 literals keep their brackets
    host_key: str  # the host as the comparison key writes it
    port: str | None  # the digits after ":" as given ("" for a bare ":"), None without ":"
    path: str
    query: str | None  # None without "?"
    fragment: str | None  # None without "#"


def _has_refused_character(url: str) -> bool:
    """Whether ``url`` holds whitespace, a control or invisible character, or a backslash."""
    if _ASCII_REFUSED_RE.search(url):
        return True
    if url.isascii():
        return False
    return any(not ch.isascii() and unicodedata.category(ch) in _REFUSED_CATEGORIES for ch in url)


def _ends_in_number(host: str) -> bool:
    """WHATWG's "ends in a number": such a host is parsed as an IPv4 address, not a name."""
    last = host.rsplit(".", 1)[-1]
    return last.isascii() and (last.isdigit() or _HEX_NUMBER_RE.fullmatch(last) is not None)


def _canonical_ipv4(host: str) -> bool:
    """Whether ``host`` is a dotted-quad IPv4 address in its one canonical spelling.

    Octal, hexadecimal, shortened and integer forms (``0177.0.0.1``, ``0x7f.1``,
    ``2130706433``) are refused: parsers disagree about them, which is how a URL check is
    bypassed, and no search engine needs them.
    """
    parts = host.split(".")
    return len(parts) == 4 and all(
        _IPV4_PART_RE.fullmatch(part) is not None and int(part) <= 255 for part in parts
    )


def _valid_a_label(label: str) -> bool:
    """Whether an ASCII ``xn--`` label is well-formed Punycode of a non-ASCII label.

    The encoding is checked (it must round-trip and decode to something non-ASCII without
    control, invisible or space characters), not IDNA2008's full character policy: an A-label
    given in ASCII is sent to DNS as is, so rypsok need not re-derive it.
    """
    encoded = label[4:]
    try:
        decoded = encoded.encode("ascii").decode("punycode")
    except UnicodeError:
        return False
    return (
        not decoded.isascii()
        and not _has_refused_character(decoded)
        and decoded.encode("punycode").decode("ascii") == encoded
    )


def _ascii_dns_name(host: str) -> bool:
    """Whether a lower-case ASCII host is a name web_fetch accepts: no empty label.

    Letters, digits, hyphen and underscore only (underscore appears in real host names even
    though RFC 952 forbids it); labels of 1 to 63 characters, at most 253 in all.
    """
    if len(host) > _MAX_HOST_CHARS:
        return False
    for label in host.split("."):
        if _ASCII_LABEL_RE.fullmatch(label) is None:
            return False
        if label.startswith("xn--") and not _valid_a_label(label):
            return False
    return True


# Cached because the UTS #46 mapping is the costly step and a search sees few hosts many
# times; the function is pure, so the cache cannot change a result.
@functools.lru_cache(maxsize=1024)
def _to_ascii_host(host: str) -> str | None:
    """The lower-case ASCII (IDNA, UTS #46 non-transitional) form of a name, or None."""
    if host.isascii():
        ascii_host = host.lower()
        if _ends_in_number(ascii_host):
            return ascii_host if _canonical_ipv4(ascii_host) else None
        return ascii_host if _ascii_dns_name(ascii_host) else None
    try:
        # The UTS #46 mapping first, on the whole name: it lower-cases, folds width and maps
        # the ideographic and full-width full stops to ".", so labels are split correctly.
        mapped = idna.uts46_remap(host, std3_rules=False, transitional=False)
        labels = [
            label if label.isascii() else idna.alabel(label).decode("ascii")
            for label in mapped.split(".")
        ]
    except (idna.IDNAError, UnicodeError):
        return None
    ascii_host = ".".join(labels).lower()
    # A non-ASCII name that maps to a number ("１２７.０.０.１") is a disguised address.
    if _ends_in_number(ascii_host) or not _ascii_dns_name(ascii_host):
        return None
    return ascii_host


def _split_host(authority: str) -> tuple[str, str | None] | None:
    """Split an authority into host text and port text; None when it is not acceptable."""
    if "@" in authority:
        return None  # userinfo, even empty: credentials never travel in a result URL
    if authority.startswith("["):
        end = authority.find("]")
        if end < 0:
            return None
        host, rest = authority[: end + 1], authority[end + 1 :]
        if rest and not rest.startswith(":"):
            return None
        return host, (rest[1:] if rest else None)
    host, colon, port = authority.partition(":")
    return host, (port if colon else None)


def _parse(url: str) -> _Parts | None:
    """Check ``url`` and split it, or None when web_fetch would not accept it."""
    if _has_refused_character(url):
        return None
    match = _URI_RE.fullmatch(url)
    if match is None or match.group(2) is None:
        return None  # no "//": no host
    scheme = match.group(1)
    if scheme.lower() not in _DEFAULT_PORTS:
        return None  # javascript:, data:, ftp:, ...
    split = _split_host(match.group(3))
    if split is None:
        return None
    host_text, port = split
    if port is not None and (_PORT_RE.fullmatch(port) is None or (port and int(port) > 65535)):
        return None
    if host_text.startswith("["):
        literal = host_text[1:-1]
        # Only plain IPv6: zone identifiers ("%25eth0") and IPvFuture ("v1.x") are refused.
        if not literal.isascii() or "%" in literal or literal[:1] in ("v", "V"):
            return None
        try:
            address = ipaddress.IPv6Address(literal)
        except ValueError:
            return None
        host = f"[{literal.lower()}]"
        host_key = f"[{address.exploded}]"  # one spelling per address, on every Python
    else:
        if not host_text or "%" in host_text:
            return None  # empty host, or a percent-encoded one
        if len(host_text) > _MAX_HOST_TEXT_CHARS:
            return None  # no mapping shrinks it to a valid name; keeps the cache small
        ascii_host = _to_ascii_host(host_text)
        if ascii_host is None:
            return None
        host = host_key = ascii_host
    return _Parts(
        scheme=scheme,
        host=host,
        host_key=host_key,
        port=port,
        path=match.group(4),
        query=match.group(6),
        fragment=match.group(8),
    )


def _decode_unreserved(text: str) -> str:
    """Decode escapes of unreserved characters and upper-case the hex of the others.

    RFC 3986 sections 2.3 and 6.2.2.1: ``%7E`` and ``~`` are the same URI, ``%2f`` and
    ``%2F`` too. Reserved characters stay escaped, since ``%2F`` and ``/`` differ.
    """

    def replace(match: re.Match[str]) -> str:
        char = chr(int(match.group(1), 16))
        return char if char in _UNRESERVED else "%" + match.group(1).upper()

    return _ESCAPE_RE.sub(replace, text)


def _normalize_escapes(component: str) -> str:
    """Percent-encoding normalization of a path or query for the comparison key.

    Non-ASCII characters are written as the percent-encoded UTF-8 bytes every HTTP client
    sends for them (RFC 3987 section 3.1), so an IRI and its URI form share a key. In a
    component holding a "%" that starts no escape, escapes are only upper-cased, never
    decoded: a decoded hex digit next to the stray "%" could forge a new escape ("%%41" would
    become "%A", then read as "%A4" in "%%4141") and change the resource. Encoding non-ASCII
    characters cannot forge one, since every "%" it writes starts a complete escape.
    """
    if "%" in component:
        if _MALFORMED_ESCAPE_RE.search(component):
            component = _ESCAPE_RE.sub(lambda m: m.group(0).upper(), component)
        else:
            component = _decode_unreserved(component)
    if component.isascii():
        return component
    return "".join(
        ch if ch.isascii() else "".join(f"%{byte:02X}" for byte in ch.encode("utf-8"))
        for ch in component
    )


def is_tracking_parameter(name: str) -> bool:
    """Whether a query parameter name (as written in the URL) is a known tracking parameter.

    Escapes of unreserved characters are decoded first (``utm%5Fsource`` is ``utm_source``);
    the comparison is otherwise exact and case-sensitive.
    """
    if "%" in name and not _MALFORMED_ESCAPE_RE.search(name):
        name = _decode_unreserved(name)
    return name in TRACKING_PARAMETERS or name.startswith(TRACKING_PREFIXES)


def _strip_tracking(query: str | None) -> str | None:
    """The query without tracking parameters, every other byte and the order kept.

    When removal leaves no parameter at all, the "?" goes too (None): the URL before the
    tracker added its parameters had no query. A query that was empty to begin with ("?")
    is kept. A piece holding ";" is never removed, since some servers split on ";" too and
    the piece may then carry a real parameter.
    """
    if not query:
        return query
    pieces = query.split("&")
    kept = [
        piece
        for piece in pieces
        if ";" in piece or not is_tracking_parameter(piece.partition("=")[0])
    ]
    if len(kept) == len(pieces):
        return query
    if not any(kept):
        return None
    return "&".join(kept)


def returned_url(url: str, max_chars: int) -> str | None:
    """The URL returned to the caller for an engine's result URL, or None to drop the result.

    The result is ``url`` with known tracking parameters removed and the host in lower-case
    ASCII (IDNA, UTS #46 non-transitional) form; scheme, port, path, other query parameters
    and their order, and the fragment are kept as given (REQ-RANK-003).

    None when the URL is not an ``http``/``https`` URL with a host web_fetch would accept (a
    name without an empty label, a canonical dotted-quad IPv4 address or a bracketed IPv6
    address), when it holds whitespace, control or invisible characters or a backslash, when
    it has userinfo, or when the result is longer than ``max_chars`` characters (LIM-F9,
    REQ-CTX-006). The caller counts dropped results in a notice.
    """
    parts = _parse(url)
    if parts is None:
        return None
    query = _strip_tracking(parts.query)
    result = "".join(
        (
            parts.scheme,
            "://",
            parts.host,
            "" if parts.port is None else ":" + parts.port,
            parts.path,
            "" if query is None else "?" + query,
            "" if parts.fragment is None else "#" + parts.fragment,
        )
    )
    return result if len(result) <= max_chars else None


def comparison_key(url: str) -> str:
    """The comparison key of a URL: equal keys mean the same resource (REQ-RANK-002).

    Scheme and host lower-cased (the host in ASCII form, an IPv6 address in one spelling),
    default port and empty port removed, fragment removed, known tracking parameters removed,
    percent-encoding normalized (unreserved characters decoded, other escapes in upper-case
    hex, non-ASCII characters as escaped UTF-8), and an empty path written "/".

    Deliberately kept apart: http and https, ``www.`` and the bare name, a trailing slash,
    the order of query parameters, dot segments and letter case in path and query
    (``docs/ranking.md`` says why). A string that is no acceptable URL is its own key; it
    cannot equal the key of an acceptable URL, which is always an acceptable URL itself.
    The function is idempotent. The key is never returned to the caller and never fetched.
    """
    parts = _parse(url)
    if parts is None:
        return url
    scheme = parts.scheme.lower()
    port = ""
    if parts.port:
        number = int(parts.port)
        if number != _DEFAULT_PORTS[scheme]:
            port = f":{number}"
    query = _strip_tracking(parts.query)
    return "".join(
        (
            scheme,
            "://",
            parts.host_key,
            port,
            _normalize_escapes(parts.path) or "/",
            "" if query is None else "?" + _normalize_escapes(query),
        )
    )
