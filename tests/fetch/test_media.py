"""Media type decision (REQ-FETCH-008, REQ-PAGE-005)."""

from __future__ import annotations

import pytest

from rypsok.contract.vocabulary import ErrorKind, Reason
from rypsok.fetch import ExtractionError, Extractor
from rypsok.fetch.media import MediaKind, UnsupportedMedia, decide, parse_content_type, xml_root

HTML = b"<!doctype html><html><body><p>x</p></body></html>"


@pytest.mark.req("REQ-FETCH-008")
@pytest.mark.parametrize(
    ("header", "kind", "media_type"),
    [
        ("text/html", MediaKind.HTML, "text/html"),
        ("TEXT/HTML; charset=ISO-8859-1", MediaKind.HTML, "text/html"),
        ("application/xhtml+xml", MediaKind.XHTML, "application/xhtml+xml"),
        ("text/plain; charset=utf-8", MediaKind.TEXT, "text/plain"),
        ("text/markdown", MediaKind.MARKDOWN, "text/markdown"),
        ("text/x-markdown", MediaKind.MARKDOWN, "text/x-markdown"),
        ("application/rss+xml", MediaKind.FEED, "application/rss+xml"),
        ("application/atom+xml", MediaKind.FEED, "application/atom+xml"),
        ("application/xml", MediaKind.XML, "application/xml"),
        ("text/xml", MediaKind.XML, "text/xml"),
    ],
)
def test_eligible_types_are_taken_from_the_header(
    header: str, kind: MediaKind, media_type: str
) -> None:
    media = decide(header, HTML)
    assert (media.kind, media.media_type, media.sniffed) == (kind, media_type, False)


@pytest.mark.req("REQ-FETCH-008")
@pytest.mark.parametrize(
    "header", ["application/pdf", "image/png", "application/json", "video/mp4", "text/css"]
)
def test_other_types_are_refused_naming_the_type(header: str) -> None:
    with pytest.raises(UnsupportedMedia) as refused:
        decide(header, b"%PDF-1.7 ...")
    assert refused.value.media_type == header


@pytest.mark.req("REQ-PAGE-005")
def test_the_charset_parameter_is_read() -> None:
    assert parse_content_type('text/html; charset="Shift_JIS"').charset == "shift_jis"
    assert parse_content_type("text/plain;charset=utf-8;format=flowed").charset == "utf-8"
    assert parse_content_type(None).essence is None


@pytest.mark.req("REQ-PAGE-005")
@pytest.mark.parametrize("header", [None, "", "garbage", "text/html extra/junk", "a" * 300])
def test_sniffing_only_distinguishes_html_from_text(header: str | None) -> None:
    assert decide(header, b"  <!DOCTYPE html><title>x</title>").kind is MediaKind.HTML
    assert decide(header, b"<p>hello</p>").kind is MediaKind.HTML
    assert decide(header, b"Just some words.\nMore words.").kind is MediaKind.TEXT
    # Sniffing never yields a feed or XML.
    assert decide(header, b'<?xml version="1.0"?><rss version="2.0"/>').kind is MediaKind.TEXT


@pytest.mark.req("REQ-PAGE-005")
def test_binary_bytes_are_refused() -> None:
    with pytest.raises(UnsupportedMedia) as refused:
        decide(None, b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    assert refused.value.media_type == "application/octet-stream"
    with pytest.raises(UnsupportedMedia) as lying:
        decide("text/html", b"\x00\x01\x02\x03binary")
    assert lying.value.media_type == "text/html"
    # UTF-16 text has NUL bytes by design.
    assert decide("text/plain", "\ufeffhello".encode("utf-16-le")).kind is MediaKind.TEXT


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ('<?xml version="1.0"?>\n<rss version="2.0"><channel/></rss>', MediaKind.FEED),
        ('<feed xmlns="http://www.w3.org/2005/Atom"><title>t</title></feed>', MediaKind.FEED),
        ("<!-- c --><?xml-stylesheet href='x'?><rss><channel/></rss>", MediaKind.FEED),
        ('<html xmlns="http://www.w3.org/1999/xhtml"><body/></html>', MediaKind.XHTML),
        ("<feed><title>not atom</title></feed>", None),
        ("<svg xmlns='http://www.w3.org/2000/svg'/>", None),
        ("not xml at all", None),
    ],
)
def test_generic_xml_is_decided_by_its_root(text: str, kind: MediaKind | None) -> None:
    assert xml_root(text) is kind


@pytest.mark.anyio
@pytest.mark.req("REQ-FETCH-008")
async def test_unsupported_content_error_names_the_type(extractor: Extractor) -> None:
    with pytest.raises(ExtractionError) as refused:
        await extractor.extract(b"%PDF-1.7", "application/pdf", "https://example.org/a.pdf")
    failure = refused.value.to_tool_failure()
    assert (failure.kind, failure.reason) == (ErrorKind.UNSUPPORTED_CONTENT, Reason.MEDIA_TYPE)
    assert failure.body.detail.media_type == "application/pdf"
    with pytest.raises(ExtractionError) as xml:
        await extractor.extract(b"<data><x/></data>", "application/xml", "https://e.org/d")
    assert xml.value.media_type == "application/xml"


@pytest.mark.anyio
@pytest.mark.req("REQ-FETCH-008")
async def test_plain_text_and_markdown_pass_through(extractor: Extractor) -> None:
    text = await extractor.extract(b"Line one\r\nLine two\r\n", "text/plain", "https://e.org/t")
    assert text.content == "Line one\nLine two\n"
    assert text.sections == ()
    markdown = b"# Title\n\nIntro.\n\n## Usage\n\nRun it.\n"
    md = await extractor.extract(markdown, "text/markdown", "https://e.org/r.md")
    assert md.content == markdown.decode()
    assert md.title == "Title"
    assert [s.heading for s in md.sections] == ["Title", "Usage"]
