"""Charset decoding of a fetched body (REQ-PAGE-007).

Order of evidence:

1. a byte order mark (UTF-8, UTF-16LE/BE). It is checked before the header because it cannot
   be wrong about the bytes that follow it, while headers often are; this is the order of the
   WHATWG Encoding standard, which browsers follow;
2. the ``charset`` parameter of the ``Content-Type`` header;
3. a declaration in the first 1024 bytes: ``<meta charset>`` or ``http-equiv`` for HTML, the XML
   declaration for XML, feeds and XHTML;
4. detection: strict UTF-8 first, then charset-normalizer for legacy encodings; windows-1252
   when nothing else is known.

Only the encodings of the WHATWG Encoding standard are accepted as labels, so a page cannot
name a Python codec that is not a text encoding or that rewrites escapes (``unicode_escape``,
``utf-7``, ``rot13``). Undecodable bytes are replaced with U+FFFD and reported, never fatal.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from typing import Literal

import charset_normalizer

from rypsok.fetch.media import MediaKind

Source = Literal["bom", "header", "document", "detected", "default"]

# WHATWG labels -> Python codec. Labels are compared after lower-casing and trimming.
_LABELS: dict[str, str] = {}


def _add(codec: str, *labels: str) -> None:
    for label in labels:
        _LABELS[label] = codec


_add(
    "utf-8",
    "utf-8",
    "utf8",
    "unicode-1-1-utf-8",
    "unicode11utf8",
    "unicode20utf8",
    "x-unicode20utf8",
)
_add("cp866", "866", "cp866", "csibm866", "ibm866")
_add("koi8-r", "cskoi8r", "koi", "koi8", "koi8-r", "koi8_r")
_add("koi8-u", "koi8-ru", "koi8-u")
_add("mac-roman", "csmacintosh", "mac", "macintosh", "x-mac-roman")
_add("mac-cyrillic", "x-mac-cyrillic", "x-mac-ukrainian")
_add("cp874", "dos-874", "iso-8859-11", "iso8859-11", "iso885911", "tis-620", "windows-874")
_add(
    "cp1252",
    "ansi_x3.4-1968",
    "ascii",
    "cp1252",
    "cp819",
    "csisolatin1",
    "ibm819",
    "iso-8859-1",
    "iso-ir-100",
    "iso8859-1",
    "iso88591",
    "iso_8859-1",
    "iso_8859-1:1987",
    "l1",
    "latin1",
    "us-ascii",
    "windows-1252",
    "x-cp1252",
)
_add(
    "cp1254",
    "cp1254",
    "csisolatin5",
    "iso-8859-9",
    "iso-ir-148",
    "iso8859-9",
    "iso88599",
    "iso_8859-9",
    "iso_8859-9:1989",
    "l5",
    "latin5",
    "windows-1254",
    "x-cp1254",
)
for _n in (1250, 1251, 1253, 1255, 1256, 1257, 1258):
    _add(f"cp{_n}", f"cp{_n}", f"windows-{_n}", f"x-cp{_n}")
for _n in (2, 3, 4, 5, 6, 7, 8, 10, 13, 14, 15, 16):
    _add(f"iso8859-{_n}", f"iso-8859-{_n}", f"iso8859-{_n}", f"iso8859{_n}", f"iso_8859-{_n}")
_add("iso8859-2", "latin2", "l2", "csisolatin2")
_add("iso8859-3", "latin3", "l3", "csisolatin3")
_add("iso8859-4", "latin4", "l4", "csisolatin4")
_add("iso8859-5", "cyrillic", "csisolatincyrillic")
_add("iso8859-6", "arabic", "asmo-708", "ecma-114", "csisolatinarabic")
_add("iso8859-7", "greek", "greek8", "elot_928", "ecma-118", "csisolatingreek")
_add("iso8859-8", "hebrew", "iso-8859-8-i", "visual", "logical", "csisolatinhebrew")
_add("iso8859-10", "latin6", "l6", "csisolatin6")
_add("iso8859-15", "latin9", "l9", "csisolatin9")
_add(
    "gbk",
    "chinese",
    "csgb2312",
    "csiso58gb231280",
    "gb2312",
    "gb_2312",
    "gb_2312-80",
    "gbk",
    "iso-ir-58",
    "x-gbk",
)
_add("gb18030", "gb18030")
_add("big5hkscs", "big5", "big5-hkscs", "cn-big5", "csbig5", "x-x-big5")
_add("euc_jp", "cseucpkdfmtjapanese", "euc-jp", "x-euc-jp")
_add("iso2022_jp", "csiso2022jp", "iso-2022-jp")
_add(
    "cp932",
    "csshiftjis",
    "ms932",
    "ms_kanji",
    "shift-jis",
    "shift_jis",
    "sjis",
    "windows-31j",
    "x-sjis",
)
_add(
    "cp949",
    "cseuckr",
    "csksc56011987",
    "euc-kr",
    "iso-ir-149",
    "korean",
    "ks_c_5601-1987",
    "ks_c_5601-1989",
    "ksc5601",
    "ksc_5601",
    "windows-949",
)
_add("utf-16-be", "unicodefffe", "utf-16be")
_add(
    "utf-16-le",
    "csunicode",
    "iso-10646-ucs-2",
    "ucs-2",
    "unicode",
    "unicodefeff",
    "utf-16",
    "utf-16le",
)

# Codecs a detector may name beyond the label table (all plain text encodings).
_DETECTED_EXTRA = (
    "euc_jis_2004",
    "euc_jisx0213",
    "shift_jis",
    "shift_jis_2004",
    "shift_jisx0213",
    "iso2022_jp_2",
    "iso2022_kr",
    "euc_kr",
    "johab",
    "hz",
    "big5",
    "cp1125",
    "latin_1",
    "mac_greek",
    "mac_turkish",
    "mac_latin2",
    "mac_iceland",
    "ptcp154",
    "kz1048",
    "cp737",
    "cp775",
    "cp850",
    "cp852",
    "cp855",
    "cp857",
    "cp858",
    "cp860",
    "cp861",
    "cp862",
    "cp863",
    "cp864",
    "cp865",
    "cp869",
    "ascii",
    "utf_16",
    "utf_32",
    "utf_32_le",
    "utf_32_be",
)
_ALLOWED = frozenset(codecs.lookup(name).name for name in (*_LABELS.values(), *_DETECTED_EXTRA))
_SINGLE_BYTE_PREFIXES = ("cp12", "iso8859", "latin", "mac-", "cp8")

_META = re.compile(
    rb"<meta\s[^>]{0,512}?charset\s*=\s*[\"']?\s*([A-Za-z0-9_.:()-]{1,40})", re.IGNORECASE
)
_XML_DECLARATION = re.compile(
    rb"\A<\?xml\s[^>]{0,200}?encoding\s*=\s*[\"']([A-Za-z0-9_.:-]{1,40})[\"']"
)
_PRESCAN_BYTES = 1024
_DETECT_BYTES = 256 * 1024
_TIE = 1e-6


@dataclass(frozen=True, slots=True)
class Decoded:
    """A decoded body: its text, the codec used, where the codec came from, and whether
    undecodable bytes were replaced (notice ``charset_replaced``)."""

    text: str
    encoding: str
    source: Source
    replaced: bool


def codec_for_label(label: str) -> str | None:
    """The Python codec of a WHATWG encoding label, or ``None`` for an unknown label."""
    return _LABELS.get(label.strip().strip("\"'").lower())


def decode(body: bytes | bytearray, *, header_charset: str | None, kind: MediaKind) -> Decoded:
    """Decode ``body`` following the order of the module docstring; never raises."""
    for bom, codec in (
        (b"\xef\xbb\xbf", "utf-8"),
        (b"\xff\xfe", "utf-16-le"),
        (b"\xfe\xff", "utf-16-be"),
    ):
        if body.startswith(bom):
            return _decode(body[len(bom) :], codec, "bom")
    declared = codec_for_label(header_charset) if header_charset else None
    if declared is not None:
        return _decode(body, declared, "header")
    in_document = _declared_in_document(body[:_PRESCAN_BYTES], kind)
    if in_document is not None:
        return _decode(body, in_document, "document")
    try:
        return Decoded(body.decode("utf-8"), "utf-8", "detected", replaced=False)
    except UnicodeDecodeError:
        pass
    detected = _detect(body)
    if detected is None:
        return _decode(body, "cp1252", "default")
    return _decode(body, detected, "detected")


def _declared_in_document(head: bytes | bytearray, kind: MediaKind) -> str | None:
    if kind in (MediaKind.XML, MediaKind.FEED, MediaKind.XHTML):
        match = _XML_DECLARATION.match(head)
        if match:
            codec = codec_for_label(match.group(1).decode("ascii"))
            if codec is not None:
                return codec
    if kind in (MediaKind.HTML, MediaKind.XHTML):
        match = _META.search(head)
        if match:
            codec = codec_for_label(match.group(1).decode("ascii"))
            if codec is not None and codec.startswith("utf-16"):
                # A page that is readable as ASCII cannot be UTF-16 (WHATWG prescan rule).
                return "utf-8"
            return codec
    return None


def _detect(body: bytes | bytearray) -> str | None:
    matches = charset_normalizer.from_bytes(body[:_DETECT_BYTES])
    best = matches.best()
    if best is None:
        return None
    encoding = best.encoding
    # The detector ties windows-1250/1252/1257 on most Western text (same chaos and coherence);
    # prefer windows-1252, the browsers' default, whenever it is among the tied candidates.
    for match in matches:
        tied = abs(match.chaos - best.chaos) < _TIE and abs(match.coherence - best.coherence) < _TIE
        if tied and "cp1252" in match.could_be_from_charset:
            encoding = "cp1252"
            break
    try:
        codec = codecs.lookup(encoding).name
    except LookupError:
        return None
    if codec not in _ALLOWED:
        return None
    if codec.startswith(_SINGLE_BYTE_PREFIXES) and codec != "cp1252":
        # Single-byte codepages often decode the same text; prefer windows-1252 when it reads
        # the bytes identically.
        try:
            if body.decode("cp1252") == body.decode(codec, errors="replace"):
                return "cp1252"
        except UnicodeDecodeError:
            pass
    return codec


def _decode(body: bytes | bytearray, codec: str, source: Source) -> Decoded:
    try:
        return Decoded(body.decode(codec), codec, source, replaced=False)
    except UnicodeDecodeError:
        return Decoded(body.decode(codec, errors="replace"), codec, source, replaced=True)
