"""RSS 2.0 and Atom feeds (spec 002 "Feeds", README section 3).

A feed yields its title, link and summary and at most :data:`MAX_ITEMS` items (title, link,
summary with markup stripped, date as ISO 8601). Refused before and while parsing:

* a DOCTYPE, an entity, element or attribute-list declaration, or a processing instruction
  other than the XML declaration (checked in the text with CDATA sections and comments masked,
  then again by the parser target, which raises on ``doctype`` and ``pi`` events);
* anything beyond LIM-F10 nodes or LIM-F11 levels (partial result, like HTML).

lxml parses with ``resolve_entities=False``, ``no_network=True``, ``load_dtd=False`` and
``huge_tree=False``, so no entity is ever expanded (billion laughs) and nothing is loaded.
"""

from __future__ import annotations

import email.utils
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import urljoin, urlsplit

from lxml import etree

from rypsok.fetch.clean import find_noise, remove_invisible
from rypsok.fetch.parse import MAX_DEPTH, MAX_NODES, parse_html, text_of
from rypsok.search.normalize import returned_url

MAX_ITEMS = 100
MAX_URL_CHARS = 2048  # LIM-F9
_ATOM = "{http://www.w3.org/2005/Atom}"
_CONTENT_ENCODED = "{http://purl.org/rss/1.0/modules/content/}encoded"
_DC_DATE = "{http://purl.org/dc/elements/1.1/}date"
_CHUNK_BYTES = 64 * 1024
_MASKED = re.compile(r"<!\[CDATA\[.*?\]\]>|<!--.*?-->", re.DOTALL)
_XML_DECLARATION = re.compile(r"\A\ufeff?<\?xml\s[^>]{0,200}\?>")
_FORBIDDEN = re.compile(r"<!DOCTYPE|<!ENTITY|<!ELEMENT|<!ATTLIST|<!NOTATION|<\?", re.IGNORECASE)


class FeedRefused(Exception):
    """The feed declares a DTD, an entity or a processing instruction, or is no RSS/Atom."""


@dataclass(frozen=True, slots=True)
class Item:
    """One item of a feed (all external data)."""

    title: str
    link: str | None
    summary: str
    date: str | None


@dataclass(frozen=True, slots=True)
class Feed:
    """A parsed feed: channel fields, at most MAX_ITEMS items, how many items there were."""

    title: str | None
    link: str | None
    summary: str
    items: tuple[Item, ...]
    total_items: int
    partial: bool


@dataclass(slots=True)
class _Target:
    """lxml parser target: refuses DTDs and PIs, bounds nodes and depth, builds a tree."""

    max_nodes: int
    max_depth: int
    builder: Any = field(default_factory=etree.TreeBuilder)
    nodes: int = 0
    depth: int = 0
    stopped: bool = False
    refused: bool = False
    open_tags: list[str] = field(default_factory=list)
    closed: bool = False
    root: Any = None

    def start(self, tag: str, attrib: dict[str, str], nsmap: object = None) -> None:
        if self.stopped or self.refused:
            return
        self.nodes += 1
        self.depth += 1
        if self.nodes > self.max_nodes or self.depth > self.max_depth:
            self.stopped = True
            return
        self.builder.start(tag, dict(attrib))
        self.open_tags.append(tag)

    def end(self, tag: str) -> None:
        if self.stopped or self.refused:
            return
        self.depth -= 1
        if self.open_tags:
            self.builder.end(self.open_tags.pop())

    def data(self, text: str) -> None:
        if not (self.stopped or self.refused):
            self.builder.data(text)

    def doctype(self, *args: object) -> None:
        self.refused = True

    def pi(self, target: str, data: str | None = None) -> None:
        self.refused = True

    def comment(self, text: str) -> None:
        """Comments carry nothing for a reader."""

    def close(self) -> Any:
        if self.closed:
            return self.root
        self.closed = True
        while self.open_tags:
            self.builder.end(self.open_tags.pop())
        try:
            self.root = self.builder.close()
        except (AssertionError, etree.LxmlError):
            self.root = None
        return self.root


def refuses(text: str) -> bool:
    """Whether the text declares a DTD, an entity or a processing instruction (prescan)."""
    body = _XML_DECLARATION.sub("", text, count=1)
    return _FORBIDDEN.search(_MASKED.sub("", body)) is not None


def _parse_tree(text: str, max_nodes: int, max_depth: int) -> tuple[Any, bool]:
    if refuses(text):
        raise FeedRefused("declaration")
    target = _Target(max_nodes=max_nodes, max_depth=max_depth)
    parser = etree.XMLParser(
        target=target,
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        dtd_validation=False,
        huge_tree=False,
        recover=True,
        remove_pis=False,
        encoding="utf-8",
    )
    data = _XML_DECLARATION.sub("", text, count=1).encode("utf-8", errors="replace")
    try:
        for offset in range(0, len(data), _CHUNK_BYTES):
            parser.feed(data[offset : offset + _CHUNK_BYTES])
            if target.stopped or target.refused:
                break
        if not (target.stopped or target.refused):
            parser.close()
    except (etree.LxmlError, AssertionError, ValueError):
        pass
    if target.refused:
        raise FeedRefused("declaration")
    return target.close(), target.stopped


def _text(el: Any) -> str:
    return " ".join("".join(el.itertext()).split()) if el is not None else ""


def _strip_markup(value: str) -> str:
    """Markup removed from an (escaped) HTML fragment, invisible elements dropped."""
    if "<" not in value:
        return " ".join(value.split())
    parsed = parse_html(value, max_nodes=MAX_NODES, max_depth=MAX_DEPTH)
    if parsed.root is None:
        return ""
    remove_invisible(find_noise(parsed.root, parsed.style_text))
    return " ".join(text_of(parsed.root).split())


def _link(value: str | None, base: str) -> str | None:
    if not value:
        return None
    try:
        target = urljoin(base, value.strip())
        scheme = urlsplit(target).scheme
    except ValueError:
        return None
    if scheme not in ("http", "https") or len(target) > MAX_URL_CHARS:
        return None
    # The same test as a search result's URL: a host web_fetch would accept, no control or
    # white space characters, within the bound (SEC-11).
    return returned_url(target, MAX_URL_CHARS)


def iso_date(value: str) -> str | None:
    """An RFC 822 or RFC 3339 date as ISO 8601; ``None`` when it is neither."""
    value = value.strip()
    if not value:
        return None
    try:
        parsed = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        try:
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
        except (ValueError, OverflowError):
            return None
    try:
        return parsed.isoformat()
    except (ValueError, OverflowError):  # an offset or year out of range: no date
        return None


def _child(el: Any, *names: str) -> Any:
    for name in names:
        found = el.find(name)
        if found is not None:
            return found
    return None


def _atom_link(el: Any, base: str) -> str | None:
    links = el.findall(f"{_ATOM}link")
    for link in links:
        if (link.get("rel") or "alternate") == "alternate":
            return _link(link.get("href"), base)
    return _link(links[0].get("href"), base) if links else None


def _atom_text(el: Any) -> str:
    if el is None:
        return ""
    kind = (el.get("type") or "text").lower()
    if kind in ("html", "text/html"):
        return _strip_markup(_text(el) if len(el) else (el.text or ""))
    return _text(el)


def _rss(channel: Any, base: str) -> tuple[str | None, str | None, str, list[Any]]:
    title = _strip_markup(_text(channel.find("title"))) or None
    link = _link(_text(channel.find("link")), base)
    summary = _strip_markup(_text(channel.find("description")))
    return title, link, summary, channel.findall("item")


def _rss_item(el: Any, base: str) -> Item:
    description = _child(el, "description", _CONTENT_ENCODED)
    date = _child(el, "pubDate", _DC_DATE)
    return Item(
        title=_strip_markup(_text(el.find("title"))),
        link=_link(_text(el.find("link")), base) or _link(_text(el.find("guid")), base),
        summary=_strip_markup(_text(description)),
        date=iso_date(_text(date)) if date is not None else None,
    )


def _atom_item(el: Any, base: str) -> Item:
    date = _child(el, f"{_ATOM}updated", f"{_ATOM}published")
    return Item(
        title=_atom_text(el.find(f"{_ATOM}title")),
        link=_atom_link(el, base),
        summary=_atom_text(_child(el, f"{_ATOM}summary", f"{_ATOM}content")),
        date=iso_date(_text(date)) if date is not None else None,
    )


def parse_feed(
    text: str, base_url: str, *, max_nodes: int = MAX_NODES, max_depth: int = MAX_DEPTH
) -> Feed:
    """Parse an RSS 2.0 or Atom document; raise :class:`FeedRefused` for anything else."""
    root, partial = _parse_tree(text, max_nodes, max_depth)
    if root is None:
        raise FeedRefused("empty")
    if root.tag == "rss":
        channel = root.find("channel")
        if channel is None:
            raise FeedRefused("no channel")
        title, link, summary, elements = _rss(channel, base_url)
        items = [_rss_item(el, base_url) for el in elements[:MAX_ITEMS]]
    elif root.tag == f"{_ATOM}feed":
        title = _atom_text(root.find(f"{_ATOM}title")) or None
        link = _atom_link(root, base_url)
        summary = _atom_text(root.find(f"{_ATOM}subtitle"))
        elements = root.findall(f"{_ATOM}entry")
        items = [_atom_item(el, base_url) for el in elements[:MAX_ITEMS]]
    else:
        raise FeedRefused("root")
    return Feed(
        title=title,
        link=link,
        summary=summary,
        items=tuple(i for i in items if i.title or i.summary or i.link),
        total_items=len(elements),
        partial=partial,
    )
