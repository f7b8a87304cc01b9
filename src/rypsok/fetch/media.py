"""Media type decision (REQ-FETCH-008, REQ-PAGE-005).

The type comes from the ``Content-Type`` header. Sniffing happens only when the header is
missing or unparsable, and then only distinguishes HTML from text (and refuses bytes that are
not text at all). ``application/xml`` and ``text/xml`` are decided later by their root element
(:func:`xml_root`): ``rss`` is RSS, Atom's ``feed`` is Atom, ``html`` is XHTML.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum


class MediaKind(StrEnum):
    """How a body is extracted."""

    HTML = "html"
    XHTML = "xhtml"
    TEXT = "text"
    MARKDOWN = "markdown"
    FEED = "feed"  # RSS 2.0 or Atom, decided by the root element
    XML = "xml"  # generic XML: a feed or XHTML by its root element, otherwise unsupported


@dataclass(frozen=True, slots=True)
class ContentType:
    """A parsed ``Content-Type`` value: the lower-cased essence and the charset parameter."""

    essence: str | None
    charset: str | None


@dataclass(frozen=True, slots=True)
class Media:
    """The decided media: the kind, the type reported in the response, and the header charset."""

    kind: MediaKind
    media_type: str
    charset: str | None
    sniffed: bool


class UnsupportedMedia(Exception):
    """The media type is not one web_fetch extracts; ``media_type`` is valid or ``None``."""

    def __init__(self, media_type: str | None) -> None:
        super().__init__("unsupported media type")
        self.media_type = media_type


_RFC7230_TCHARS = r"[a-z0-9!#$&^_.+-]{1,64}"
_ESSENCE = re.compile(rf"{_RFC7230_TCHARS}/{_RFC7230_TCHARS}")
_CHARSET_PARAM = re.compile(r";\s*charset\s*=\s*(\"[^\"]{0,40}\"|[^;\s]{1,40})", re.IGNORECASE)

_BY_TYPE: dict[str, MediaKind] = {
    "text/html": MediaKind.HTML,
    "application/xhtml+xml": MediaKind.XHTML,
    "text/plain": MediaKind.TEXT,
    "text/markdown": MediaKind.MARKDOWN,
    "text/x-markdown": MediaKind.MARKDOWN,
    "application/rss+xml": MediaKind.FEED,
    "application/atom+xml": MediaKind.FEED,
    "application/xml": MediaKind.XML,
    "text/xml": MediaKind.XML,
}

# The HTML signatures of the WHATWG MIME sniffing standard, each followed by a space or '>'.
_HTML_SIGNATURE = re.compile(
    rb"<(?:!doctype\s+html|html|head|script|iframe|h1|div|font|table|a|style|title|b|body|br|p"
    rb"|!--)[\s>]",
    re.IGNORECASE,
)
# Bytes that never occur in text (WHATWG "binary data byte"), checked in the first bytes.
_BINARY = re.compile(rb"[\x00-\x08\x0b\x0e-\x1a\x1c-\x1f]")
_SNIFF_BYTES = 1024
_XML_DECLARATION = re.compile(rb"\A<\?xml\s[^>]{0,200}\?>")
_BOMS = (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")


def valid_media_type(value: str) -> bool:
    """Whether ``value`` is a syntactically valid, bounded media type essence (REQ-SEC-001)."""
    return _ESSENCE.fullmatch(value) is not None


def parse_content_type(value: str | None) -> ContentType:
    """Parse a ``Content-Type`` header value; anything unparsable yields ``essence=None``."""
    if value is None:
        return ContentType(None, None)
    essence = value.split(";", 1)[0].strip().lower()
    charset = None
    match = _CHARSET_PARAM.search(value)
    if match:
        charset = match.group(1).strip('"').strip().lower() or None
    if not valid_media_type(essence):
        return ContentType(None, charset)
    return ContentType(essence, charset)


def decide(content_type: str | None, body: bytes | bytearray) -> Media:
    """Decide how ``body`` is extracted from its header, or raise :class:`UnsupportedMedia`."""
    parsed = parse_content_type(content_type)
    if parsed.essence is None:
        return _sniff(body, parsed.charset)
    kind = _BY_TYPE.get(parsed.essence)
    if kind is None:
        raise UnsupportedMedia(parsed.essence)
    if kind is not MediaKind.FEED and kind is not MediaKind.XML and _looks_binary(body):
        # A text type whose bytes are not text: the header lies and nothing can be read.
        raise UnsupportedMedia(parsed.essence)
    return Media(kind, parsed.essence, parsed.charset, sniffed=False)


def _looks_binary(body: bytes | bytearray) -> bool:
    head = body[:_SNIFF_BYTES]
    if head.startswith(_BOMS[1:]):
        return False  # UTF-16 text has NUL bytes by design
    return _BINARY.search(head) is not None


def _sniff(body: bytes | bytearray, charset: str | None) -> Media:
    if _looks_binary(body):
        raise UnsupportedMedia("application/octet-stream")
    head = body[:_SNIFF_BYTES]
    for bom in _BOMS:
        if head.startswith(bom):
            head = head[len(bom) :]
            break
    head = _XML_DECLARATION.sub(b"", head.lstrip(b" \t\r\n\x0c"), count=1)
    if _HTML_SIGNATURE.match(head.lstrip(b" \t\r\n\x0c")):
        return Media(MediaKind.HTML, "text/html", charset, sniffed=True)
    return Media(MediaKind.TEXT, "text/plain", charset, sniffed=True)


_PROLOG_SKIP = re.compile(
    r"\A(?:\ufeff)?(?:\s+|<\?xml\s[^>]{0,500}\?>|<!--.{0,4096}?-->|<\?[^>]{0,500}\?>"
    r"|<!DOCTYPE[^>\[]{0,500}(?:\[.{0,4096}?\])?\s*>)*",
    re.DOTALL | re.IGNORECASE,
)
_ROOT = re.compile(
    r"<([A-Za-z_][\w.-]{0,100}:)?([A-Za-z_][\w.-]{0,100})([^>]{0,2000})>?", re.DOTALL
)
_ATOM_NS = "http://www.w3.org/2005/Atom"


def xml_root(text: str) -> MediaKind | None:
    """The kind an XML document's root element names: FEED, XHTML, or ``None`` for others.

    Only the prolog is scanned, with bounded patterns; DTDs and processing instructions are
    skipped here so that the feed parser, which refuses them, sees the document.
    """
    prolog = _PROLOG_SKIP.match(text[:20000])
    position = prolog.end() if prolog else 0
    match = _ROOT.match(text, position)
    if match is None:
        return None
    name = match.group(2).lower()
    if name == "rss":
        return MediaKind.FEED
    if name == "feed" and _ATOM_NS in match.group(3):
        return MediaKind.FEED
    if name == "html":
        return MediaKind.XHTML
    return None
