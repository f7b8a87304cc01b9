"""Bounded HTML parsing (REQ-PAGE-006, REQ-SEC-014, LIM-F10, LIM-F11).

libxml2's HTML parser runs as a pull parser: the decoded text is fed in chunks and the start
and end events of every chunk are counted as they arrive. At the first element beyond LIM-F10
nodes or LIM-F11 levels, feeding stops and that element and everything after it in document
order is cut from the tree, so the tree never exceeds either bound and a deeply nested or huge
page costs no more parsing than a shallow one of the same size. Later recursive code is
bounded by the same depth. The tree is made of plain lxml elements: the HTML element classes of
``lxml.html`` cost a Python call per element on every later pass.

Comments and processing instructions are dropped by the parser. Subtrees a browser never
renders as text (script, style, template, noscript, ...) are removed right after parsing. A
formula (``<math>``) is rendered but is not text: it becomes a ``<span>`` of its TeX source
between ``\\(`` and ``\\)`` (``\\[`` and ``\\]`` for a block), which trafilatura turns into
Markdown math, or of the text it shows when it carries no TeX that matches it. The text of
``<style>`` elements is kept, bounded, because inline rules can hide elements, and whether the
page had a script to run is noted, because a page without text of its own but with scripts
builds its content in the browser.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from lxml import etree

from rypsok.config.limits import limit

MAX_NODES = limit("LIM-F10")
MAX_DEPTH = limit("LIM-F11")
_CHUNK_CHARS = 32 * 1024
_STYLE_CHARS = 256 * 1024

# Elements whose content a browser does not render as text.
SKIPPED_SUBTREES = (
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
)

Stop = Literal["nodes", "depth", "error"]
_TEX_ANNOTATION = etree.XPath('.//annotation[@encoding="application/x-tex"]')
# What a browser shows of a formula: its text outside annotations.
_SHOWN_TEXT = etree.XPath(
    ".//text()[not(ancestor::annotation or ancestor::*[local-name()='annotation-xml'])]",
    smart_strings=False,
)
_TEX_COMMAND = re.compile(r"\\[A-Za-z]+")
_DISPLAY_STYLE = re.compile(r"\{\\(?:display|text)style\s*(.*)\}", re.DOTALL)
# The type attribute of a script a browser runs (besides none at all): the JavaScript media
# types of the HTML standard's list and "module". JSON-LD, templates and data blocks run nothing.
_RUN_TYPES = frozenset(
    {
        "module",
        "text/javascript",
        "application/javascript",
        "text/ecmascript",
        "application/ecmascript",
        "application/x-javascript",
        "text/x-javascript",
    }
)


@dataclass(slots=True)
class ParsedHtml:
    """The bounded tree, how many nodes were seen, the deepest level, and why parsing stopped."""

    root: etree._Element | None
    nodes: int
    depth: int
    stopped: Stop | None
    style_text: str = ""
    has_scripts: bool = False

    @property
    def partial(self) -> bool:
        """Whether a bound cut the document (notice ``extraction_partial``)."""
        return self.stopped is not None


# Characters the HTML parser lets into text and attribute values but lxml refuses to store.
XML_UNSAFE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def xml_safe(text: str) -> str:
    """``text`` without the characters lxml refuses to store (SEC-12)."""
    return XML_UNSAFE.sub("", text)


def text_of(el: etree._Element) -> str:
    """The text of ``el`` and its descendants, without its tail (serialized by libxml2)."""
    text: str = etree.tostring(el, method="text", encoding="unicode", with_tail=False)
    return text


def single_spaced(text: str) -> str:
    """``text`` trimmed, each run of white space in it written as one space."""
    return " ".join(text.split())


def _cut_from(el: etree._Element) -> None:
    """Remove ``el`` and everything after it in document order."""
    node = el
    while True:
        parent = node.getparent()
        if parent is None:
            return
        for sibling in list(node.itersiblings()):
            parent.remove(sibling)
        if node is el:
            parent.remove(el)  # its tail goes with it
        else:
            node.tail = None
        node = parent


def _style_text(root: etree._Element) -> str:
    parts: list[str] = []
    size = 0
    for style in root.iter("style"):
        text = style.text or ""
        parts.append(text[: _STYLE_CHARS - size])
        size += len(parts[-1])
        if size >= _STYLE_CHARS:
            break
    return "\n".join(parts)


def _shows(shown: str, tex: str) -> bool:
    """Whether the letters and digits of ``tex`` outside its commands are all shown, in order.

    A browser renders a formula's MathML, never its annotation or alttext; a TeX source that
    held words the formula does not show would be a channel for text no reader sees.
    """
    rendered = iter(char for char in shown if char.isalnum())
    return all(char in rendered for char in _TEX_COMMAND.sub(" ", tex) if char.isalnum())


def _formulas_as_text(root: etree._Element) -> None:
    """Make each ``<math>`` a ``<span>`` of its text, with the attributes it had.

    The TeX source is the ``application/x-tex`` annotation (LaTeXML on arXiv, MediaWiki,
    KaTeX) or else the ``alttext`` attribute; MediaWiki's ``{\\displaystyle ...}`` wrapper is
    dropped. It is used only when the formula shows every letter and digit of it
    (:func:`_shows`), else the span holds what the formula shows. A hidden formula stays
    hidden: the span keeps the formula's own ``hidden`` and ``style``, and is judged like any
    element by the noise removal that follows.
    """
    for math in list(root.iter("math")):
        annotation = _TEX_ANNOTATION(math)
        tex = " ".join(
            ((annotation[0].text if annotation else None) or math.get("alttext") or "").split()
        )
        styled = _DISPLAY_STYLE.fullmatch(tex)
        if styled:
            tex = styled.group(1).strip()
        shown = " ".join("".join(_SHOWN_TEXT(math)).split())
        if tex and _shows(shown, tex):
            text = f"\\[{tex}\\]" if math.get("display") == "block" else f"\\({tex}\\)"
        else:
            text = shown
        for child in list(math):
            math.remove(child)
        math.text = xml_safe(text)  # an alttext may hold what no text node can
        math.tag = "span"


def _has_scripts(root: etree._Element) -> bool:
    """Whether the tree holds a ``<script>`` a browser would run (not JSON-LD or data)."""
    for script in root.iter("script"):
        kind = (script.get("type") or "").split(";")[0].strip().lower()
        if not kind or kind in _RUN_TYPES:
            return True
    return False


def _parser() -> etree.HTMLPullParser:
    # The text is ours, decoded already: hand it over as UTF-8 and say so, so that a <meta
    # charset> inside cannot make libxml2 decode it a second time.
    return etree.HTMLPullParser(
        events=("start", "end"),
        encoding="utf-8",
        no_network=True,
        recover=True,
        huge_tree=False,
        remove_comments=True,
        remove_pis=True,
    )


def parse_html(text: str, *, max_nodes: int = MAX_NODES, max_depth: int = MAX_DEPTH) -> ParsedHtml:
    """Parse ``text`` as HTML under the node and depth bounds, never raising on bad markup."""
    parser = _parser()
    root: etree._Element | None = None
    nodes = depth = deepest = 0
    stopped: Stop | None = None
    try:
        for offset in range(0, len(text), _CHUNK_CHARS):
            # Encoded a slice at a time: a whole encoded copy of a 4 MiB page would sit in
            # memory beside the text and the tree being built.
            parser.feed(text[offset : offset + _CHUNK_CHARS].encode("utf-8", errors="replace"))
            for event, el in parser.read_events():
                if event == "end":
                    depth -= 1
                    continue
                nodes += 1
                depth += 1
                deepest = max(deepest, depth)
                if root is None:
                    root = el
                if nodes > max_nodes or depth > max_depth:
                    stopped = "nodes" if nodes > max_nodes else "depth"
                    if el is root:
                        root = None
                    else:
                        _cut_from(el)
                    break
            if stopped:
                break
        if stopped is None:
            closed = parser.close()
            root = closed if closed is not None else root
    except (etree.LxmlError, AssertionError, ValueError):
        # libxml2 gave up on the markup; what it built so far is the partial result.
        stopped = stopped or "error"
    if root is None:
        return ParsedHtml(None, nodes, deepest, stopped)
    style = _style_text(root)
    scripts = _has_scripts(root)
    _formulas_as_text(root)
    etree.strip_elements(root, *SKIPPED_SUBTREES, with_tail=False)
    return ParsedHtml(root, nodes, deepest, stopped, style, scripts)
