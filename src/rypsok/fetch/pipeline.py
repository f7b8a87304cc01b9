"""The extraction job a worker process runs (REQ-PAGE-001 from "media type check" on).

Order: media type -> charset decoding -> digest -> bounded parsing -> invisible elements out ->
title -> login-form evidence -> links resolved -> heading anchors -> chrome out -> main content
-> section index. Feeds go to :mod:`rypsok.fetch.feeds`; plain text and Markdown pass through.

The digest is the SHA-256 of the decoded body text (after charset decoding, without a byte
order mark, undecodable bytes as U+FFFD) encoded as UTF-8: the same page gives the same digest
whatever its transfer or charset encoding.

Runs in a worker only: it is the CPU work that must stay off the event loop.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any, NamedTuple

from rypsok.fetch import charset, clean, signals
from rypsok.fetch.controls import settle_controls
from rypsok.fetch.extract import bound_title, main_markdown, page_title
from rypsok.fetch.feeds import FeedRefused, parse_feed
from rypsok.fetch.media import Media, MediaKind, UnsupportedMedia, decide, xml_root
from rypsok.fetch.parse import ParsedHtml, parse_html
from rypsok.fetch.protocol import (
    MAX_CONTENT_CHARS,
    WireFailure,
    WireItem,
    WireResult,
    WireSection,
    WireSignals,
    encode_reply,
)
from rypsok.fetch.sections import index_sections

_SURROGATE = re.compile(r"[\ud800-\udfff]")
_NEWLINES = re.compile(r"\r\n?")
_HAS_WORD = re.compile(r"\w")


class _Charset(NamedTuple):
    """What the response needs of the decoding once the text itself is gone."""

    encoding: str
    replaced: bool


def _failure(reason: str, media_type: str | None = None) -> WireFailure:
    return WireFailure(status="error", reason=reason, media_type=media_type)  # type: ignore[arg-type]


def _bounded(content: str) -> tuple[str, bool]:
    content = _SURROGATE.sub("\ufffd", content)
    if len(content) <= MAX_CONTENT_CHARS:
        return content, False
    return content[:MAX_CONTENT_CHARS], True


def _result(
    media: Media,
    kind: MediaKind,
    decoded: _Charset,
    digest: str,
    *,
    title: str | None,
    content: str,
    heading_ids: list[tuple[str, tuple[str, ...]]],
    partial: bool,
    access: WireSignals | None,
    method: str,
    items: list[WireItem] | None = None,
    items_total: int = 0,
    javascript_may_be_required: bool = False,
) -> WireResult:
    content, cut = _bounded(content)
    bounded_title, title_cut = bound_title(title)
    sections = index_sections(content, heading_ids) if kind is not MediaKind.TEXT else ()
    return WireResult(
        status="ok",
        media_type=media.media_type,
        kind=kind,
        title=bounded_title,
        title_truncated=title_cut,
        content=content,
        sections=[
            WireSection(
                heading=s.heading,
                level=s.level,
                start_char=s.start_char,
                body_start=s.body_start,
                end_char=s.end_char,
                anchors=list(s.anchors),
                slug=s.slug,
                toc=s.toc,
            )
            for s in sections
        ],
        heading_ids=[(key, list(ids)) for key, ids in heading_ids],
        items=items,
        items_total=items_total,
        sha256=digest,
        charset=decoded.encoding,
        partial=partial or cut,
        charset_replaced=decoded.replaced,
        signals=access,
        method=method,
        javascript_may_be_required=javascript_may_be_required,
    )


class _Page(NamedTuple):
    """What extraction took from an HTML tree, so that the tree can go before the rest."""

    title: str | None
    content: str
    heading_ids: list[tuple[str, tuple[str, ...]]]
    signals: WireSignals
    method: str
    javascript_may_be_required: bool


def _html(parsed: ParsedHtml, url: str) -> _Page | WireFailure:
    root = parsed.root
    if root is None:
        return _failure("extraction_failed")
    noise = clean.find_noise(root, parsed.style_text)
    clean.remove_invisible(noise)
    title = page_title(root)
    clean.drop_head(root)
    form = signals.login_form(root)
    clean.absolutize_links(root, url)
    ids = clean.heading_ids(root)  # before chrome removal, which drops anchor links in headings
    clean.remove_chrome(root, noise)
    clean.unwrap_layout_tables(root)
    settle_controls(root, url)  # after chrome removal, which drops the headings' marks
    evidence = signals.collect(root, form)
    main = main_markdown(root, title)
    if not _HAS_WORD.search(main.markdown):
        # No text of its own: with a script to run, the browser builds the content (an
        # application shell); the caller learns that no other call of web_fetch will read it.
        return _failure("javascript_required" if parsed.has_scripts else "extraction_failed")
    return _Page(
        title=title,
        content=main.markdown,
        heading_ids=ids,
        signals=WireSignals(
            password_control=evidence.password_control,
            identity_form=evidence.identity_form,
            form_in_main=evidence.form_in_main,
            usable_content=evidence.usable_content,
        ),
        method=main.method,
        # Little visible text (too little to count as usable content) and scripts to run: the
        # rest of the page may be built in the browser. A login form has its own verdict.
        javascript_may_be_required=(
            parsed.has_scripts and not evidence.usable_content and not evidence.password_control
        ),
    )


def _feed(
    media: Media, decoded: charset.Decoded, digest: str, url: str
) -> WireResult | WireFailure:
    try:
        feed = parse_feed(decoded.text, url)
    except FeedRefused:
        return _failure("extraction_failed")
    head = f"[{feed.title or feed.link}]({feed.link})" if feed.link else ""
    content = "\n\n".join(part for part in (head, feed.summary) if part)
    items = [
        WireItem(title=i.title, link=i.link, summary=i.summary, date=i.date) for i in feed.items
    ]
    return _result(
        media,
        MediaKind.FEED,
        _Charset(decoded.encoding, decoded.replaced),
        digest,
        title=feed.title,
        content=content,
        heading_ids=[],
        partial=feed.partial,
        access=None,
        method="feed",
        items=items,
        items_total=feed.total_items,
    )


def _text(media: Media, kind: MediaKind, decoded: charset.Decoded, digest: str) -> WireResult:
    content = _NEWLINES.sub("\n", decoded.text)
    title = None
    if kind is MediaKind.MARKDOWN:
        sections = index_sections(content[:MAX_CONTENT_CHARS])
        first = min(sections, key=lambda s: (s.level, s.start_char), default=None)
        title = first.heading if first else None
    return _result(
        media,
        kind,
        _Charset(decoded.encoding, decoded.replaced),
        digest,
        title=title,
        content=content,
        heading_ids=[],
        partial=False,
        access=None,
        method="passthrough",
    )


def run(job: dict[str, Any], body: bytes | bytearray) -> WireResult | WireFailure:
    """Extract one body: ``job`` holds ``content_type`` (str or None) and ``url``.

    A ``bytearray`` body is cleared as soon as it is decoded (the worker passes its own buffer).
    """
    content_type = job.get("content_type")
    url = job.get("url")
    if not isinstance(url, str) or not (content_type is None or isinstance(content_type, str)):
        return _failure("extraction_failed")
    try:
        media = decide(content_type, body)
    except UnsupportedMedia as refused:
        return _failure("media_type", refused.media_type)
    decoded = charset.decode(body, header_charset=media.charset, kind=media.kind)
    if isinstance(body, bytearray):
        body.clear()  # the worker's copy: the text is all that is needed from here on
    digest = hashlib.sha256(decoded.text.encode("utf-8", errors="replace")).hexdigest()
    kind = media.kind
    if kind in (MediaKind.XML, MediaKind.FEED):
        root = xml_root(decoded.text)
        if root is None:
            if kind is MediaKind.XML:
                return _failure("media_type", media.media_type)
            return _failure("extraction_failed")
        kind = root
    if kind is MediaKind.FEED:
        return _feed(media, decoded, digest, url)
    if kind in (MediaKind.TEXT, MediaKind.MARKDOWN):
        return _text(media, kind, decoded, digest)
    parsed = parse_html(decoded.text)
    # The text goes once the tree is built, and the tree once the content is taken from it,
    # before the section index: the worker holds one of them at a time (REQ-PERF-003).
    info = _Charset(decoded.encoding, decoded.replaced)
    del decoded
    page = _html(parsed, url)
    partial = parsed.partial
    del parsed
    if isinstance(page, WireFailure):
        return page
    return _result(
        media,
        kind,
        info,
        digest,
        title=page.title,
        content=page.content,
        heading_ids=page.heading_ids,
        partial=partial,
        access=page.signals,
        method=page.method,
        javascript_may_be_required=page.javascript_may_be_required,
    )


def handle(job: dict[str, Any], body: bytes | bytearray) -> bytes:
    """The worker's job handler: the JSON payload of :func:`run` (a bytearray body is cleared
    once decoded)."""
    return encode_reply(run(job, body))


def warm_up() -> None:
    """Run one tiny extraction so lazy imports and data files load before the limits apply."""
    sample = (
        b"<!doctype html><html><head><title>t</title></head><body><main><h1>Warm up</h1>"
        + b"<p>"
        + b"The worker loads its modules and data before the limits apply. " * 8
        + b"</p></main></body></html>"
    )
    run({"content_type": "text/html; charset=utf-8", "url": "https://example.invalid/"}, sample)
    run(
        {"content_type": None, "url": "https://example.invalid/"},
        "Zürich 東京".encode("cp932", errors="replace") + b"\xe9\xe8 caf\xe9",
    )
    run(
        {"content_type": "application/rss+xml", "url": "https://example.invalid/"},
        b"<rss version='2.0'><channel><title>t</title><item><title>i</title>"
        b"<pubDate>Mon, 01 Jan 2024 00:00:00 GMT</pubDate></item></channel></rss>",
    )
