"""Bounded HTML parsing (REQ-PAGE-006, REQ-SEC-014, LIM-F10, LIM-F11).

libxml2's HTML parser drives a parser *target* of ours instead of building its own tree. The
target counts every start tag and the nesting depth as they are parsed and stops building at
LIM-F10 nodes or LIM-F11 levels; the text is fed in chunks and feeding stops as soon as a bound
is hit, so a deeply nested or huge page costs no more parsing than a shallow one of the same
size. The tree that results never exceeds either bound, so later recursive code is bounded too.

Subtrees a browser never renders (script, style, template, noscript, ...) are not built at all;
the text of ``<style>`` elements is kept, bounded, because inline rules can hide elements.
Comments, processing instructions and the doctype are dropped by construction.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import lxml.html
from lxml import etree

from rypsok.config.limits import limit

MAX_NODES = limit("LIM-F10")
MAX_DEPTH = limit("LIM-F11")
_CHUNK_BYTES = 64 * 1024
_STYLE_CHARS = 256 * 1024

# Elements whose content a browser does not render as text.
SKIPPED_SUBTREES = frozenset(
    {
        "script",
        "style",
        "template",
        "noscript",
        "iframe",
        "object",
        "embed",
        "canvas",
        "svg",
        "math",
        "audio",
        "video",
        "picture",
        "source",
        "track",
        "map",
        "select",
        "datalist",
        "frameset",
        "frame",
        "applet",
        "param",
        "link",
    }
)

Stop = Literal["nodes", "depth"]


@dataclass(slots=True)
class ParsedHtml:
    """The bounded tree, how many nodes were seen, the deepest level, and why parsing stopped."""

    root: lxml.html.HtmlElement | None
    nodes: int
    depth: int
    stopped: Stop | None
    style_text: str = ""

    @property
    def partial(self) -> bool:
        """Whether a bound cut the document (notice ``extraction_partial``)."""
        return self.stopped is not None


@dataclass(slots=True)
class _Target:
    """The lxml parser target: counts, bounds and builds (methods are lxml's target protocol)."""

    max_nodes: int
    max_depth: int
    builder: Any = field(
        default_factory=lambda: etree.TreeBuilder(element_factory=lxml.html.html_parser.makeelement)
    )
    nodes: int = 0
    depth: int = 0
    deepest: int = 0
    stopped: Stop | None = None
    open_tags: list[str] = field(default_factory=list)
    skip_depth: int = 0  # >0 while inside a subtree that is not built
    in_style: bool = False
    style: list[str] = field(default_factory=list)
    style_chars: int = 0
    closed: bool = False
    root: lxml.html.HtmlElement | None = None

    def start(self, tag: object, attrib: dict[str, str], nsmap: object = None) -> None:
        if self.stopped is not None:
            return
        self.nodes += 1
        self.depth += 1
        self.deepest = max(self.deepest, self.depth)
        if self.nodes > self.max_nodes:
            self.stopped = "nodes"
            return
        if self.depth > self.max_depth:
            self.stopped = "depth"
            return
        if not isinstance(tag, str):
            tag = "unknown"
        if self.skip_depth:
            self.skip_depth += 1
            return
        name = tag.lower()
        if name in SKIPPED_SUBTREES:
            self.skip_depth = 1
            self.in_style = name == "style"
            return
        self.builder.start(name, {str(k): str(v) for k, v in attrib.items()})
        self.open_tags.append(name)

    def end(self, tag: object) -> None:
        if self.stopped is not None:
            return
        self.depth -= 1
        if self.skip_depth:
            self.skip_depth -= 1
            if not self.skip_depth:
                self.in_style = False
            return
        if self.open_tags:
            self.builder.end(self.open_tags.pop())

    def data(self, text: str) -> None:
        if self.stopped is not None:
            return
        if self.skip_depth:
            if self.in_style and self.style_chars < _STYLE_CHARS:
                self.style.append(text)
                self.style_chars += len(text)
            return
        self.builder.data(text)

    def comment(self, text: str) -> None:
        """Comments are never rendered (REQ-CTX-005): not built."""

    def pi(self, target: str, data: str | None = None) -> None:
        """Processing instructions are not built."""

    def doctype(self, *args: object) -> None:
        """The doctype carries no content."""

    def close(self) -> lxml.html.HtmlElement | None:
        # Called by lxml at the end of a complete parse and by us after a bound stopped it.
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


def parse_html(text: str, *, max_nodes: int = MAX_NODES, max_depth: int = MAX_DEPTH) -> ParsedHtml:
    """Parse ``text`` as HTML under the node and depth bounds, never raising on bad markup."""
    target = _Target(max_nodes=max_nodes, max_depth=max_depth)
    # The text is ours, decoded already: hand it over as UTF-8 and say so, so that a <meta
    # charset> inside cannot make libxml2 decode it a second time.
    parser = etree.HTMLParser(
        target=target,
        encoding="utf-8",
        no_network=True,
        recover=True,
        huge_tree=False,
        remove_comments=True,
        remove_pis=True,
    )
    data = text.encode("utf-8", errors="replace")
    try:
        for offset in range(0, len(data), _CHUNK_BYTES):
            parser.feed(data[offset : offset + _CHUNK_BYTES])
            if target.stopped is not None:
                break
        if target.stopped is None:
            parser.close()
    except (etree.LxmlError, AssertionError, ValueError):
        # libxml2 gave up on the markup; what the target built so far is the partial result.
        pass
    root = target.close()
    return ParsedHtml(
        root=root,
        nodes=target.nodes,
        depth=target.deepest,
        stopped=target.stopped,
        style_text="".join(target.style),
    )
