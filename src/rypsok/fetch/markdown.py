"""A small DOM-to-Markdown renderer, used when trafilatura finds no main content.

It renders headings as ``#``, paragraphs, nested lists, links, inline code, fenced code blocks,
block quotes, tables and definition lists (each term a bold paragraph, then its definition).
Recursion follows the tree, whose depth the parser bounded to LIM-F11
(:mod:`rypsok.fetch.parse`). A paragraph that starts with Markdown block syntax is escaped so
that page text cannot pose as a heading of the outline.
"""

from __future__ import annotations

import re

from lxml import etree

from rypsok.fetch.parse import single_spaced, text_of

_BLOCK_TAGS = frozenset(
    {
        "address",
        "article",
        "aside",
        "blockquote",
        "body",
        "center",
        "dd",
        "details",
        "dialog",
        "dir",
        "div",
        "dl",
        "dt",
        "fieldset",
        "figcaption",
        "figure",
        "footer",
        "form",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "header",
        "hgroup",
        "hr",
        "html",
        "li",
        "main",
        "menu",
        "nav",
        "ol",
        "p",
        "pre",
        "section",
        "summary",
        "table",
        "tbody",
        "td",
        "tfoot",
        "th",
        "thead",
        "tr",
        "ul",
        "caption",
    }
)
_HEADING_LEVEL = {f"h{n}": n for n in range(1, 7)}
# A link as this renderer and trafilatura write one: its text with "\\", "[" and "]" escaped,
# its target plain or in angle brackets.
LINK_TARGET_PATTERN = r"\((?:<(?:\\.|[^\\>\n])*>|[^\s()<>]*)\)"
LINK_PATTERN = r"\[(?:\\.|[^\]\\\n])*\]" + LINK_TARGET_PATTERN
_BLOCK_START = re.compile(r"^(#{1,6}\s|[-*+]\s|\d{1,9}[.)]\s|>|```|~~~|={3,}\s*$|-{3,}\s*$)")


_MAY_START_BLOCK = frozenset("#-*+>`~=0123456789")
_LIST_START = re.compile(r"(?:[-*+]|\d{1,9}[.)]) ")
_BACKTICKS = re.compile(r"`+")


def escape_block_start(text: str) -> str:
    """``text`` with a backslash before a start that Markdown would read as block syntax."""
    if text[:1] in _MAY_START_BLOCK and _BLOCK_START.match(text):
        return "\\" + text
    return text


def _inline(el: etree._Element) -> str:
    """The inline Markdown of an element and its descendants (without its tail)."""
    if not len(el):
        return el.text or ""
    parts: list[str] = [el.text or ""]
    for child in el:
        parts.append(_inline_child(child))
        parts.append(child.tail or "")
    return "".join(parts)


def _inline_child(el: etree._Element) -> str:
    tag = el.tag if isinstance(el.tag, str) else ""
    if tag == "br":
        return "\n"
    inner = _inline(el)
    text = single_spaced(inner)
    if not text:
        return " " if inner else ""
    if tag == "a" and el.get("href"):
        return f"[{text}]({el.get('href')})"
    if tag in ("strong", "b"):
        return f"**{text}**"
    if tag in ("em", "i"):
        return f"*{text}*"
    if tag in ("code", "kbd", "samp", "tt"):
        return _code_span(text)
    if tag == "q":
        return f"\u201c{text}\u201d"  # the quotation marks a browser adds
    return inner


def _code_span(text: str) -> str:
    """``text`` as a code span: fenced by one backtick more than its longest run of them, and
    padded with a space where it starts or ends with one (CommonMark)."""
    if "`" not in text:
        return f"`{text}`"
    fence = "`" * (max(len(run) for run in _BACKTICKS.findall(text)) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _paragraph(text: str) -> str:
    if "\n" not in text:
        return escape_block_start(single_spaced(text))
    lines = [single_spaced(line) for line in text.split("\n")]
    return "\n".join(escape_block_start(line) for line in lines if line)


def _blocks(el: etree._Element) -> list[str]:
    """The Markdown blocks of an element's content."""
    if not len(el):
        # A leaf: the most common element of all, and the cheapest case.
        text = _paragraph(el.text or "")
        return [text] if text else []
    blocks: list[str] = []
    run: list[str] = [el.text or ""]
    for child in el:
        tag = child.tag if isinstance(child.tag, str) else ""
        if tag in _BLOCK_TAGS:
            text = _paragraph("".join(run))
            if text:
                blocks.append(text)
            run = []
            blocks.extend(_block(child, tag))
        else:
            run.append(_inline_child(child))
        run.append(child.tail or "")
    text = _paragraph("".join(run))
    if text:
        blocks.append(text)
    return blocks


def _list(el: etree._Element, ordered: bool) -> list[str]:
    items: list[str] = []
    number = 1
    for child in el:
        if child.tag != "li":
            continue
        marker = f"{number}. " if ordered else "- "
        number += 1
        # An item's blocks are set apart by a blank line, as between other blocks; a nested
        # list follows its item's text directly (a tight list).
        blocks = _blocks(child)
        body = "".join(
            ("\n" if index == 0 or _LIST_START.match(block) else "\n\n") + block
            for index, block in enumerate(blocks)
        )[1:].split("\n")
        if not body or not body[0].strip():
            continue
        indent = " " * len(marker)
        items.append(
            marker + body[0] + "".join("\n" + (indent + line if line else "") for line in body[1:])
        )
    return ["\n".join(items)] if items else []


def _table(el: etree._Element) -> list[str]:
    rows: list[list[str]] = []
    for tr in el.iter("tr"):
        cells = [
            single_spaced(_inline(cell)).replace("|", "\\|")
            for cell in tr
            if cell.tag in ("td", "th")
        ]
        if cells:
            rows.append(cells)
    if not rows:
        return []
    width = max(len(r) for r in rows)
    lines = ["| " + " | ".join(r + [""] * (width - len(r))) + " |" for r in rows]
    lines.insert(1, "|" + "---|" * width)
    return ["\n".join(lines)]


def _block(el: etree._Element, tag: str) -> list[str]:
    if tag in _HEADING_LEVEL:
        text = single_spaced(_inline(el))
        return [f"{'#' * _HEADING_LEVEL[tag]} {text}"] if text else []
    if tag in ("ul", "ol", "menu", "dir"):
        return _list(el, ordered=tag == "ol")
    if tag == "pre":
        code = text_of(el).strip("\n")
        fence = "````" if "```" in code else "```"
        return [f"{fence}\n{code}\n{fence}"] if code.strip() else []
    if tag == "table":
        return _table(el)
    if tag == "blockquote":
        inner = "\n\n".join(_blocks(el))
        if not inner:
            return []
        return ["\n".join("> " + line if line else ">" for line in inner.split("\n"))]
    if tag == "hr":
        return ["---"]
    if tag == "dt" and plain_term(el):
        text = single_spaced(_inline(el))
        return [f"**{text}**"] if text else []
    return _blocks(el)


def plain_term(dt: etree._Element) -> bool:
    """A ``<dt>`` of text and inline elements with no bold of its own: written as a bold
    paragraph, the term of its definition list (on both paths, trafilatura's and this one)."""
    return not any(
        child.tag in _BLOCK_TAGS or child.tag in ("b", "strong") for child in dt.iterdescendants()
    )


def to_markdown(el: etree._Element) -> str:
    """Render ``el`` and its descendants as Markdown."""
    return "\n\n".join(b for b in _blocks(el) if b.strip())


def list_markdown(el: etree._Element) -> str:
    """Render a ``<ul>`` or ``<ol>`` as a Markdown list, each block of an item kept."""
    return "\n\n".join(_list(el, ordered=el.tag == "ol"))
