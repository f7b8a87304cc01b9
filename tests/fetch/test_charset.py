"""Charset decoding (REQ-PAGE-007)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rypsok.fetch.charset import codec_for_label, decode
from rypsok.fetch.media import MediaKind

GERMAN = "<p>Die Straße über den Fluß wird für „große“ Fahrzeuge gesperrt: 5 € Bußgeld.</p>"
JAPANESE = "<p>東京の天気は晴れのち曇り、最高気温は二十五度の見込みです。週末は雨です。</p>" * 3


@pytest.mark.req("REQ-PAGE-007")
def test_the_header_charset_is_used_first() -> None:
    decoded = decode(GERMAN.encode("cp1252"), header_charset="windows-1252", kind=MediaKind.HTML)
    assert (decoded.text, decoded.source, decoded.replaced) == (GERMAN, "header", False)
    # ISO-8859-1 means windows-1252, as in browsers.
    assert decode("€".encode("cp1252"), header_charset="iso-8859-1", kind=MediaKind.TEXT).text == (
        "€"
    )


@pytest.mark.req("REQ-PAGE-007")
def test_a_byte_order_mark_wins() -> None:
    decoded = decode("\ufeffhallo".encode("utf-8"), header_charset="cp1252", kind=MediaKind.TEXT)
    assert (decoded.text, decoded.source) == ("hallo", "bom")
    utf16 = decode(
        b"\xff\xfe" + "grüß".encode("utf-16-le"), header_charset=None, kind=MediaKind.TEXT
    )
    assert utf16.text == "grüß"


@pytest.mark.req("REQ-PAGE-007")
@pytest.mark.parametrize(
    "head",
    [
        '<meta charset="shift_jis">',
        "<meta http-equiv='Content-Type' content='text/html; charset=Shift_JIS'>",
        "<META CHARSET=sjis>",
    ],
)
def test_a_meta_declaration_is_used_without_a_header(head: str) -> None:
    body = (f"<html><head>{head}</head><body>" + JAPANESE + "</body></html>").encode("cp932")
    decoded = decode(body, header_charset=None, kind=MediaKind.HTML)
    assert decoded.source == "document"
    assert JAPANESE in decoded.text


@pytest.mark.req("REQ-PAGE-007")
def test_the_xml_declaration_is_used_for_xml() -> None:
    body = '<?xml version="1.0" encoding="ISO-8859-15"?><rss><channel>€</channel></rss>'
    decoded = decode(body.encode("iso8859-15"), header_charset=None, kind=MediaKind.FEED)
    assert decoded.source == "document"
    assert "€" in decoded.text


@pytest.mark.req("REQ-PAGE-007")
@pytest.mark.parametrize(("text", "codec"), [(GERMAN * 3, "cp1252"), (JAPANESE, "shift_jis")])
def test_legacy_encodings_are_detected(text: str, codec: str) -> None:
    decoded = decode(text.encode(codec), header_charset=None, kind=MediaKind.HTML)
    assert decoded.source == "detected"
    assert decoded.text == text
    assert not decoded.replaced


@pytest.mark.req("REQ-PAGE-007")
def test_undecodable_bytes_are_replaced_not_fatal() -> None:
    decoded = decode(
        b"caf\xc3\xa9 and \xff\xfe broken", header_charset="utf-8", kind=MediaKind.TEXT
    )
    assert decoded.replaced
    assert decoded.text.startswith("café and ")
    assert "\ufffd" in decoded.text


@pytest.mark.req("REQ-PAGE-007")
@pytest.mark.parametrize(
    "label",
    [
        "utf-7",
        "unicode_escape",
        "rot13",
        "base64",
        "x-user-defined",
        "raw_unicode_escape",
        "nonsense",
    ],
)
def test_only_encodings_of_the_standard_are_honoured(label: str) -> None:
    assert codec_for_label(label) is None
    body = b"plain \\u0041 +AGEAYgBj- text"
    decoded = decode(body, header_charset=label, kind=MediaKind.TEXT)
    assert decoded.text == body.decode("ascii")


@pytest.mark.req("REQ-PAGE-007")
@pytest.mark.req("REQ-SEC-014")
@settings(max_examples=200, deadline=None)
@given(
    st.binary(max_size=600),
    st.one_of(st.none(), st.sampled_from(["utf-8", "shift_jis", "utf-16", "koi8-r", "bogus"])),
    st.sampled_from(list(MediaKind)),
)
def test_decoding_never_fails(body: bytes, label: str | None, kind: MediaKind) -> None:
    decoded = decode(body, header_charset=label, kind=kind)
    assert isinstance(decoded.text, str)
    assert not any("\ud800" <= ch <= "\udfff" for ch in decoded.text)
