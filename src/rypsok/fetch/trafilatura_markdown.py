"""trafilatura's Markdown of a cleaned tree, with what trafilatura gets wrong set right.

trafilatura gets a serialized copy of the tree, prepared so that it keeps what it would lose
or garble, and its Markdown is then finished in two line passes. Each fix was found on a page,
measured on the corpus and the public sets, and is described in ``docs/extraction.md``
("Main content"):

* the copy: every ``&`` written so that trafilatura's unescape restores the page's text; the
  source's indentation removed outside ``pre``, ``code`` and ``textarea``; a link without a
  target made plain text; a link without text before text marked, and removed from the
  output; the text between a container's blocks wrapped in paragraphs; a paragraph ``div``
  that starts with an inline element given text of its own; a paragraph shown twice in a
  row kept twice; a ``<figure>`` of code or text kept; a definition list written as terms
  and definitions; a quote's paragraphs marked; each ``<pre>`` a code block trafilatura
  fences, with its blank lines and the text after it; a paragraph written as a ``div``
  between two ``p`` made a ``p``;
* the output: nested list items indented under their item's text, the quote marks turned into
  ``>`` markers, one blank line between blocks.
"""

from __future__ import annotations

import re
from typing import Any

import lxml.html
import trafilatura
from lxml import etree

from rypsok.fetch.clean import drop, names_its_section
from rypsok.fetch.markdown import (
    LINK_PATTERN,
    LINK_TARGET_PATTERN,
    escape_block_start,
    list_markdown,
    plain_term,
)

# Chosen by measurement (bench/extraction_quality.py, docs/extraction.md).
TRAFILATURA_OPTIONS: dict[str, Any] = {
    "output_format": "markdown",
    "include_links": True,
    "include_tables": True,
    "include_formatting": True,
    "include_images": False,
    "include_comments": False,
    "favor_precision": False,
    "favor_recall": True,
    "deduplicate": False,
    "with_metadata": False,
}
# trafilatura deletes every empty line of its output, inside code blocks too, and removes
# U+2424 (its own mark for a line to keep) at the very end: a blank line of a code block
# written as that mark comes out blank.
_KEPT_LINE = "\u2424"
_BLANK_LINE = re.compile(r"^[ \t]*$", re.MULTILINE)
# Two or more blank lines in a row.
_BLANK_RUN = re.compile(r"\n[ \t]*\n(?:[ \t]*\n)+")
_HEADING_LINE = re.compile(r"#{1,6}[ \t]")
# A line break before a heading (a pattern that starts with the line break is searched for
# as a literal; one that starts by looking behind it tries every position, 1.6 ms on 200 KB).
_BREAK_BEFORE_HEADING = re.compile(r"\n(?=#{1,6}[ \t])")
# The opening fence of a code block as trafilatura writes it (at the start of a line, with an
# optional language); the block ends at a line of the same fence alone.
_FENCE = re.compile(r"(`{3,})[^`]*$")
# A list item as trafilatura writes one: two spaces per level of nesting, then its marker.
_LIST_ITEM = re.compile(r"( *)([-*+]|\d{1,9}[.)]) ")
# Blocks some highlighters put around each line of a <pre> (without a newline between them).
_LINE_TAGS = ("div", "p", "li", "tr")
# The page source's indentation: spaces and tabs after a line break (a pattern that starts
# with the line break is searched for as a literal, 25 times faster than one that starts with
# optional spaces). Kept inside elements where spacing is text (pre, code, textarea).
_INDENTATION = re.compile(r"\n[ \t]+")
# lxml writes every element closed and every "<" of text or attributes as "&lt;", so each
# match ends at its own closing tag; the name must end there too (not <code-block>).
_VERBATIM = re.compile(r"(<(pre|code|textarea)(?=[\s>/]).*?</\2>)", re.DOTALL)
_WHITE_SPACE_STYLE = re.compile(r'style="[^"]*white-space')
# Where a <pre> is left to trafilatura as it is: in list items and table cells, which hold no
# fenced block as trafilatura writes them, and in another <pre>, whose text takes its text.
_NO_FENCE_INSIDE = ("pre", "li", "td", "th")
_PARAGRAPH_PARENTS = etree.XPath("//p/..")
# A custom element's start tag: a "-" in its name (searched for in the serialized copy first,
# which costs a tenth of the XPath below on a page without any).
_CUSTOM_TAG = re.compile(r"<[a-zA-Z][a-zA-Z0-9]*-")
_EMPTY_CUSTOM_ELEMENTS = etree.XPath(
    "//*[contains(local-name(), '-')][not(*)][not(normalize-space())]"
)
# U+241E, a printable symbol trafilatura keeps (it deletes private-use characters) and never
# left in the page's text: starts each paragraph of a <blockquote> in trafilatura's copy, once
# per level (:func:`_quotes`), and becomes ">" in its output.
_QUOTE_MARK = "\u241e"
# U+241F, as the quote mark: starts the second of two adjacent blocks with the same text in
# trafilatura's copy (_twins), so that trafilatura keeps both; removed from its output.
_TWIN_MARK = "\u241f"
_TWIN_TAGS = ("p", "div", "li", "dd", "blockquote")
# U+2420, likewise: the text of a paragraph div that starts with an inline element (_inline_starts).
_START_MARK = "\u2420"
# U+2421, likewise: the text of a link that has none (_plain_anchors); the link is removed
# from the output, its target written as trafilatura writes one (plain, or in angle brackets
# with "\\", "<" and ">" escaped).
_EMPTY_LINK_MARK = "\u2421"
_EMPTY_LINK = re.compile(r"\[\u2421\]" + LINK_TARGET_PATTERN)
# An empty link between two spaces takes one of them with it ("a <picture link> b": "a b").
_SPACED_EMPTY_LINK = re.compile(r"(?<=[ \t])" + _EMPTY_LINK.pattern + r"[ \t]")
# A line of three or more links with only separators between; one short item at either end
# may be plain text (the page the bar is on, not linked).
_SEPARATOR = r"[ \t\u00a0]*[|\u00b7\u2022][ \t\u00a0]*"  # no-break spaces too ("&nbsp;|&nbsp;")
_PLAIN_ITEM = r"[^\[\]()|\u00b7\u2022\n]{1,40}"
_LINKS_APART = re.compile(rf"\){_SEPARATOR}\[")
_LINK_BAR = re.compile(
    rf"^[ \t]*(?:{_PLAIN_ITEM}{_SEPARATOR})?{LINK_PATTERN}(?:{_SEPARATOR}{LINK_PATTERN}){{2,}}"
    rf"(?:{_SEPARATOR}{_PLAIN_ITEM})?[ \t]*(?:\n|$)",
    re.MULTILINE,
)
# U+2422 and U+2423, likewise: around the text of each link of a short list whose items say
# more than their links (_listed_links), with the link's number; trafilatura gets the text
# without the link, and the link is written back into its output (_relinked).
_LINK_OPEN = "\u2422"
_LINK_CLOSE = "\u2423"
_MARKED_LINK = re.compile("\u2422(\\d{1,6})\u2422([^\u2422\u2423\n]*)\u2423")
# trafilatura judges a list shorter than this by its links (its link-density test).
_LINK_TESTED_LIST_CHARS = 300
_LISTED_LINKS_MIN = 2
_ITEM_CODE = ("code", "kbd", "samp", "var")
# U+2425, likewise: starts the paragraph that stands in trafilatura's copy for a list whose
# items hold blocks (_block_lists), with the list's number; the list is rendered by rypsok.
_LIST_MARK = "\u2425"
_LIST_LINE = re.compile("^.*\u2425(\\d{1,6})\u2425.*$", re.MULTILINE)
# Blocks that trafilatura runs into their list item's line (a code block loses its lines).
_ITEM_BLOCKS = ("p", "pre", "blockquote", "table", "dl")
# Removed from the page's text before trafilatura sees it, and from trafilatura's output.
_MARKS = (
    _QUOTE_MARK,
    _TWIN_MARK,
    _START_MARK,
    _EMPTY_LINK_MARK,
    _LINK_OPEN,
    _LINK_CLOSE,
    _LIST_MARK,
)
# trafilatura deletes a block that repeats the one before it when longer than this
# (MIN_DUPLICATE_LENGTH in its settings).
_TWIN_MIN_CHARS = 50
_QUOTED_BLOCKS = ("p", "h1", "h2", "h3", "h4", "h5", "h6", "li")
_QUOTED_LINE = re.compile(r"^([ \t]*(?:[-*+]|\d{1,9}[.)]|#{1,6})[ \t]+)?(\u241e+)(.*)$")
# Text blocks that make a <figure> content rather than an illustration.
_FIGURE_CONTENT = ("pre", "blockquote", "p", "ul", "ol", "dl")
# Block containers whose text between blocks is written as paragraphs (_loose_text); list
# items, table cells, quotes and definitions have their own steps or their own reading.
_LOOSE_TEXT_CONTAINERS = ("div", "section", "article", "main", "body", "center")
_LOOSE_TEXT_MIN_CHARS = 20
_HEADING_TAGS = ("h1", "h2", "h3", "h4", "h5", "h6")
# Elements that can sit inside a paragraph: a div holding only these (and text) is one.
_INLINE_TAGS = frozenset(
    "a abbr b bdi bdo br cite code data del dfn em font i img ins kbd mark q s samp small span"
    " strong sub sup time u var wbr".split()
)


def trafilatura_markdown(root: etree._Element, *, framed: bool = False) -> str:
    """trafilatura's Markdown of the main content of ``root`` (left as it is), or "".

    ``framed``: the copy's body is given to trafilatura as its main block (:func:`_framed`).
    """
    # trafilatura wants lxml.html elements and edits the tree it gets; the fallback needs the
    # original. Serializing the bounded tree and reading it back gives both, and the copy can be
    # no larger or deeper than the bounded tree. No URL is passed: every link target is
    # absolute already (clean.absolutize_links), and trafilatura would only resolve each one
    # again, to the same value.
    markup = _without_indentation(_escaped_markup(root))
    for mark in _MARKS:
        if mark in markup:  # the marks are rypsok's, never the page's
            markup = markup.replace(mark, "")
    copy = lxml.html.document_fromstring(markup)
    lists = _block_lists(copy)
    _plain_anchors(copy)
    targets = _listed_links(copy)
    _itemless_lists(copy)
    _loose_text(copy)
    _inline_starts(copy)
    _twins(copy)
    _figures(copy)
    _definition_lists(copy, targets)
    _quotes(copy)
    _code_blocks(copy)
    _paragraph_divs(copy)
    _summaries(copy)
    _anchor_ids(copy)
    _heading_breaks(copy)
    if _CUSTOM_TAG.search(markup):
        _empty_custom_elements(copy)
    if framed:
        _framed(copy)
    result = trafilatura.extract(copy, url=None, **TRAFILATURA_OPTIONS)
    if not isinstance(result, str):
        return ""
    if targets:
        result = _relinked(result, targets)
    if _EMPTY_LINK_MARK in result:
        result = _EMPTY_LINK.sub("", _SPACED_EMPTY_LINK.sub("", result))
        result = result.replace(_EMPTY_LINK_MARK, "")
    for mark in (_TWIN_MARK, _START_MARK, _LINK_OPEN, _LINK_CLOSE):
        if mark in result:
            result = result.replace(mark, "")
    result = _spaced_blocks(_quoted_lines(_nested_lists(_without_link_bars(result.strip()))))
    if lists:
        result = _LIST_LINE.sub(lambda m: _listed(lists, m), result)
    return result.replace(_LIST_MARK, "") if _LIST_MARK in result else result


def _block_lists(copy: etree._Element) -> list[str]:
    """Render each list whose items hold blocks, and put a marked paragraph of its text in its
    place in trafilatura's copy; return the lists' Markdown, in the order of their numbers.

    trafilatura writes a list item on one line: a tutorial's steps lost the lines of their
    code blocks ("1. Install it: pip install rypsok" for a step and its ``<pre>``), and an
    FAQ's answers ran into their questions. Such a list (a ``<pre>``, or two blocks, in one of
    its items; not inside a table cell or a quote, whose Markdown cannot hold it) is written
    by :mod:`rypsok.fetch.markdown`, which keeps each block of an item; trafilatura still
    judges its text, as the paragraph that stands in for it.
    """
    rendered: list[str] = []
    for items in list(copy.iter("ul", "ol")):
        if (
            items.getparent() is None
            or next(items.iterancestors("li", "td", "th", "blockquote"), None) is not None
            or not any(_holds_blocks(item) for item in items.iter("li"))
        ):
            continue
        # The copy carries each "&" of the page as "&amp;" (_escaped_markup).
        markdown = list_markdown(items).replace("&amp;", "&")
        if not markdown.strip():
            continue
        stand_in = etree.Element("p")
        stand_in.text = f"{_LIST_MARK}{len(rendered)}{_LIST_MARK} " + " ".join(
            "".join(items.itertext()).split()
        )
        stand_in.tail = items.tail
        items.getparent().replace(items, stand_in)
        rendered.append(markdown)
    return rendered


def _holds_blocks(item: etree._Element) -> bool:
    """Whether a list item holds a ``<pre>`` or two blocks of its own."""
    blocks = [child for child in item if child.tag in _ITEM_BLOCKS]
    return len(blocks) > 1 or any(block.tag == "pre" for block in blocks)


def _listed(lists: list[str], match: re.Match[str]) -> str:
    number = int(match.group(1))
    return lists[number] if number < len(lists) else ""


def _escaped_markup(root: etree._Element) -> str:
    """The tree serialized with every '&' of its text and attribute values written as '&amp;'.

    trafilatura HTML-unescapes its whole output, which would turn page text like "&lt;b&gt;"
    into markup and "&section=1" in a link into "§ion=1"; read back, this markup gives the
    page's text with each '&' as '&amp;', so that unescaping restores exactly the page's text.
    libxml2 writes a '&' of text or of an attribute as "&amp;" and never writes "&amp;" for
    anything else, so one replacement on the string escapes them all (a Python pass over every
    element did the same at a few percent of the job).
    """
    markup: str = etree.tostring(root, encoding="unicode")
    return markup.replace("&amp;", "&amp;amp;")


def _only_wrapper(el: etree._Element) -> bool:
    """A ``div`` or ``section`` whose one child is all it holds (no text before or after)."""
    return (
        el.tag in ("div", "section")
        and len(el) == 1
        and not (el.text or "").strip()
        and not (el[0].tail or "").strip()
    )


def _code_blocks(copy: etree._Element) -> None:
    """Hand each ``<pre>`` to trafilatura as a code block it fences, with its text intact.

    A ``<pre>`` is preformatted text, so it becomes a fenced block: trafilatura fences one only
    when it recognises code by its own markers (a ``highlight`` class on the parent, a ``lang``
    attribute, a single ``<code>`` child, code-like first words) and otherwise renders it as
    prose, with its ``_`` and ``*`` escaped (``override\\_settings``) and its lines run
    together. Each ``<pre>`` is given the ``highlight`` parent and only its text: markup inside
    (syntax-highlighting spans, links) has no place in a fenced block; a ``<br>`` or a line's
    block element ends its line, and blank lines are written as trafilatura's kept-line mark
    (``_KEPT_LINE``). trafilatura drops the text that follows a code block in the same parent,
    so that text becomes a paragraph of its own. A link without text beside the block (rustdoc's
    "Run" link, an icon) is removed: trafilatura drops a short block whose links have no text,
    and the code with it. A ``<pre>`` in a list item or a table cell is
    left as it was: trafilatura cannot put a fenced block there.
    """
    for pre in list(copy.iter("pre")):
        if next(pre.iterancestors(*_NO_FENCE_INSIDE), None) is not None:
            continue
        if not "".join(pre.itertext()).strip():
            drop(pre)  # nothing to fence (an empty fence would be all trafilatura writes)
            continue
        for br in pre.iter("br"):
            br.tail = "\n" + (br.tail or "")
        for line in pre.iter(*_LINE_TAGS):
            line.tail = "\n" + (line.tail or "")
        text = _BLANK_LINE.sub(_KEPT_LINE, "".join(pre.itertext()).strip("\n"))
        for child in list(pre):
            pre.remove(child)
        pre.attrib.clear()
        # A newline makes trafilatura fence even a one-line block (it would write an inline
        # code span, run into the next paragraph); the empty line it leaves is deleted.
        pre.text = text + "\n"
        block = etree.Element("div", {"class": "highlight"})
        pre.addprevious(block)
        block.tail, pre.tail = pre.tail, None
        block.append(pre)
        # The text after the block is the tail of the outermost wrapper holding nothing else.
        top = block
        while (parent := top.getparent()) is not None and _only_wrapper(parent):
            top = parent
        for sibling in [*top.itersiblings("a"), *top.itersiblings("a", preceding=True)]:
            if not "".join(sibling.itertext()).strip():
                drop(sibling)
        if top.tail and top.tail.strip():
            after = etree.Element("p")
            after.text, top.tail = top.tail, None
            top.addnext(after)


def _paragraph_runs(block: etree._Element) -> None:
    """Wrap each run of text and inline elements among ``block``'s children in a ``p``.

    Block elements stay where they are, between the new paragraphs; whitespace between two
    inline elements stays inside their paragraph.
    """
    children = list(block)
    lead, block.text = block.text, None
    for child in children:
        block.remove(child)  # its tail goes with it
    kept: list[etree._Element] = []
    run: etree._Element | None = None

    def add_text(text: str) -> None:
        nonlocal run
        if run is None:
            if text.isspace():
                return
            run = etree.Element("p")
            kept.append(run)
        if len(run):
            run[-1].tail = (run[-1].tail or "") + text
        else:
            run.text = (run.text or "") + text

    if lead:
        add_text(lead)
    for child in children:
        tail, child.tail = child.tail, None
        if child.tag in _INLINE_TAGS:
            if run is None:
                run = etree.Element("p")
                kept.append(run)
            run.append(child)
        else:
            run = None
            kept.append(child)
        if tail:
            add_text(tail)
    block.extend(kept)


def _plain_anchors(copy: etree._Element) -> None:
    """Make a ``span`` of each ``<a>`` that has no target (any more), and give a text to each
    link that has none.

    trafilatura writes a link without a target as its text in brackets, ``[text]``: a
    ``mailto:``, ``tel:`` or ``javascript:`` link, whose target ``clean.absolutize_links``
    removed, or a plain anchor. Its text is what a reader sees. A link without text (around an
    image, which the content leaves out) takes the text after it as its own: a paragraph after
    a linked picture became one link to the picture. Such a link, when text follows it, gets
    ``_EMPTY_LINK_MARK`` as its text and is removed from the output. Removing it from the copy
    instead, or marking every empty link, changes what trafilatura keeps elsewhere: it weighs
    the links of a block (measured: ads and breadcrumbs of image links came back).
    """
    for anchor in copy.iter("a"):
        if anchor.get("href") is None:
            anchor.tag = "span"
        elif (
            not (anchor.text or "").strip()  # most links: their text comes first
            and (anchor.tail or "").strip()
            and not "".join(anchor.itertext()).strip()
        ):
            anchor.text = _EMPTY_LINK_MARK + (anchor.text or "")


def _listed_links(copy: etree._Element) -> list[str]:
    """Hand trafilatura the links of short lists whose items say more than their links as
    marked text; return their targets, in the order of their numbers.

    trafilatura deletes a list of under 300 characters with two or more links of under ten
    characters each as navigation, whatever else its items say. API references write their
    parameters so: "``value`` <any> The input that is checked.", "``message`` <string> |
    <Error>", each type a link; a tenth of the parameter lists of Node.js's API pages was
    lost. A list keeps its links when at least half of its text is outside them, or when each
    item names something in code outside its links; a menu, whose items are their links, is
    still judged by trafilatura.
    """
    targets: list[str] = []
    for items in copy.iter("ul", "ol"):
        # Links with text only (the others are marked already, _plain_anchors); a nested
        # list's links are spans once its outer list's are marked.
        links = [link for link in items.iter("a") if "".join(link.itertext()).strip()]
        if len(links) < _LISTED_LINKS_MIN:
            continue
        text_chars = len("".join(items.itertext()).strip())
        if text_chars >= _LINK_TESTED_LIST_CHARS:
            continue
        entries = items.findall("li")
        if not entries or not all(_says_more(item) for item in entries):
            continue  # a menu: some items are their links
        link_chars = sum(len("".join(link.itertext()).strip()) for link in links)
        if 2 * link_chars > text_chars and not all(_names_code(item) for item in entries):
            continue
        _mark_links(links, targets)
    return targets


def _mark_links(links: list[etree._Element], targets: list[str]) -> None:
    """Make each link a span of marked text (see ``_LINK_OPEN``); its target goes to
    ``targets``, under the number the mark carries."""
    for link in links:
        number = f"{_LINK_OPEN}{len(targets)}{_LINK_OPEN}"
        # The copy's text and attributes carry each "&" as "&amp;" (_escaped_markup).
        targets.append((link.get("href") or "").replace("&amp;", "&"))
        link.tag = "span"
        link.attrib.clear()
        link.text = number + (link.text or "")
        if len(link):
            link[-1].tail = (link[-1].tail or "") + _LINK_CLOSE
        else:
            link.text += _LINK_CLOSE


def _says_more(item: etree._Element) -> bool:
    """Whether a list item holds letters outside its links (or no link at all)."""

    def letters(element: etree._Element) -> int:
        return sum(char.isalpha() for char in "".join(element.itertext()))

    links = item.findall(".//a")
    return not links or letters(item) > sum(letters(link) for link in links)


def _names_code(item: etree._Element) -> bool:
    """Whether a list item holds code outside its links (a parameter's name)."""
    return any(next(code.iterancestors("a"), None) is None for code in item.iter(*_ITEM_CODE))


def _relinked(markdown: str, targets: list[str]) -> str:
    """trafilatura's output with each marked link text written as the link it was."""

    def link(match: re.Match[str]) -> str:
        number = int(match.group(1))
        if number >= len(targets):
            return match.group(2)
        target = targets[number]
        if any(char in target for char in " <>()"):
            # As trafilatura writes such a target: in angle brackets, "\", "<", ">" escaped.
            inner = target.replace("\\", "\\\\").replace("<", "\\<").replace(">", "\\>")
            target = f"<{inner}>"
        return f"[{match.group(2)}]({target})"

    return _MARKED_LINK.sub(link, markdown)


def _itemless_lists(copy: etree._Element) -> None:
    """Make a ``div`` of each ``<ul>`` or ``<ol>`` that holds no list item at any depth.

    Old pages indent a paragraph by putting it in a list without items, which a browser shows
    as an indented block without a bullet. trafilatura made it a bullet of its own, split into
    pieces at each inline element, glued to the word after each ("*create*video").
    """
    for items in list(copy.iter("ul", "ol")):
        if next(items.iter("li"), None) is None:
            items.tag = "div"


def _loose_text(copy: etree._Element) -> None:
    """Wrap the loose text of each container that also holds blocks in paragraphs.

    A ``div`` may hold text and inline elements (links, emphasis) between its blocks, as a
    browser shows it: paragraphs written with ``<br>`` under a heading, an old page's body.
    trafilatura writes such a container's children one by one and loses what follows an
    inline element there ("Ein Blick in das Inhaltsverzeichnis ([PDF](...)) zeigt aber: ..."
    came out as "Ein Blick in das Inhaltsverzeichnis (", the rest of the paragraph gone) or
    glues it to the next word ("*eigentlichen*Abschluss"). Each run of text and inline
    elements between two blocks becomes a ``p``; a container of inline content only is a
    paragraph trafilatura reads whole and stays as it is, and so does a container whose loose
    text is a label ("Le" before a date), which would stand alone as a paragraph.
    """
    for container in list(copy.iter(*_LOOSE_TEXT_CONTAINERS)):
        blocks = False
        loose = len(text.strip()) if (text := container.text) else 0
        for child in container:
            if isinstance(child.tag, str) and child.tag not in _INLINE_TAGS:
                blocks = True
            if tail := child.tail:
                loose += len(tail.strip())
        if blocks and loose >= _LOOSE_TEXT_MIN_CHARS:
            _paragraph_runs(container)


def _inline_starts(copy: etree._Element) -> None:
    """Give a text of its own to each paragraph ``div`` that starts with an inline element.

    trafilatura writes the children of such a ``div`` one by one and loses the space after
    each ("**Figure 1:**The chart", "[Link](...)text"); with text of its own before them it
    writes the paragraph as a browser shows it. The text is ``_START_MARK``, removed from the
    output.
    """
    for div in copy.iter("div"):
        if len(div) and not (div.text or "").strip() and _holds_a_paragraph(div):
            div.text = (div.text or "") + _START_MARK


def _twins(copy: etree._Element) -> None:
    """Mark the second of two adjacent blocks of the same tag and the same text.

    trafilatura deletes a block of its result that repeats the one before it (over 50
    characters), to undo its own overlapping candidates; a page that shows the same paragraph
    twice in a row lost the second. The mark makes the twins differ for that comparison only;
    a block trafilatura itself took twice still carries the same text twice and still goes, and
    so do twins of different classes, the same text for two screen sizes.
    """
    previous: etree._Element | None = None
    for block in copy.iter(*_TWIN_TAGS):
        if (
            previous is not None
            and block.getprevious() is previous
            and block.tag == previous.tag
            # The same text in two classes is one text for two screen sizes ("md:hidden" and
            # "hidden md:block"), of which a browser shows one: trafilatura may drop that twin.
            and block.get("class") == previous.get("class")
            # Cheap first: twins start with the same text and have as many children.
            and len(block) == len(previous)
            and (block.text or "").strip() == (previous.text or "").strip()
        ):
            text = _text(block)
            if len(text) > _TWIN_MIN_CHARS and text == _text(previous):
                own = block.text or ""
                words = own.lstrip()  # the mark goes before the first word, not the spacing
                block.text = own[: len(own) - len(words)] + _TWIN_MARK + words
        previous = block


def _text(block: etree._Element) -> str:
    return " ".join("".join(block.itertext()).split())


def _figures(copy: etree._Element) -> None:
    """Make a ``div`` of each ``<figure>`` that holds text blocks, its caption a ``p``.

    trafilatura deletes every ``<figure>`` when images are not asked for, except one that holds
    a table: a code listing in a figure went with it, and Jekyll writes every code block as
    ``<figure class="highlight"><pre>``, as did quotes set in a figure (WordPress's pull
    quote). A figure of images and a caption only is left to trafilatura, which drops it.
    """
    for figure in list(copy.iter("figure")):
        if any(
            next(block.iterancestors("figcaption"), None) is None
            for block in figure.iter(*_FIGURE_CONTENT)
        ):
            figure.tag = "div"
            for caption in figure.iter("figcaption"):
                caption.tag = "p"


def _definition_lists(copy: etree._Element, targets: list[str]) -> None:
    """Write each ``<dl>`` as paragraphs: a term in bold, then its definition's blocks.

    trafilatura renders a definition list as one flat list: every term and every definition
    a bullet of its own, a definition's paragraphs run together, and a code block inside a
    definition flattened into one line of prose. API references (Sphinx), command-line
    options and glossaries are written this way. A term of text and inline elements becomes a
    bold paragraph; a definition becomes a ``div`` of paragraphs and the blocks it holds, so
    that its ``<pre>`` is fenced like any other. A term that is all link (rustdoc's index of a
    module's items: the item's name, then what it is) would be a paragraph of links only,
    which trafilatura drops: its links go to trafilatura marked (``_mark_links``).
    """
    for part in list(copy.iter("dl", "dt", "dd")):
        if part.tag == "dl":
            part.tag = "div"
        elif part.tag == "dt" and plain_term(part):
            if _named_entry(part):
                _mark_links([link for link in part.iter("a") if link.get("href")], targets)
            bold = etree.SubElement(part, "b")
            bold.text, part.text = part.text, None
            for child in list(part)[:-1]:
                bold.append(child)
            part.tag = "p"
        else:
            _paragraph_runs(part)
            part.tag = "div"


def _named_entry(term: etree._Element) -> bool:
    """Whether a ``<dt>`` is all link and the definition after it says something."""
    definition = term.getnext()
    if definition is None or definition.tag != "dd":
        return False
    links = "".join(text for link in term.iter("a") for text in link.itertext()).strip()
    return (
        bool(links)
        and links == "".join(term.itertext()).strip()
        and any(char.isalpha() for char in "".join(definition.itertext()))
    )


def _holds_a_paragraph(div: etree._Element) -> bool:
    """Text of its own (before or between its children), and only inline children."""
    text = div.text
    if not (text and not text.isspace()) and not any(c.tail and not c.tail.isspace() for c in div):
        return False
    return all(c.tag in _INLINE_TAGS for c in div)


def _paragraph_divs(copy: etree._Element) -> None:
    """Make a ``p`` of each ``div`` that holds a paragraph between two ``p`` of its parent.

    trafilatura drops such a ``div`` (a paragraph written without ``<p>``) when ``p`` elements
    stand before and after it in the same parent, in an ``<article>`` or ``<main>``, with any
    setting; next to one ``p`` only, or among ``div`` elements, it keeps it. Each parent's
    children are looked at once, so a parent of many children costs one pass.
    """
    for parent in _PARAGRAPH_PARENTS(copy):
        children = list(parent)
        first = last = -1
        for index, child in enumerate(children):
            if child.tag == "p":
                last = index
                if first < 0:
                    first = index
        for child in children[first + 1 : last]:
            if child.tag == "div" and _holds_a_paragraph(child):
                child.tag = "p"


def _anchor_ids(copy: etree._Element) -> None:
    """Remove the ids of headings, and of sections whose id is the name of the section.

    trafilatura discards any element whose id holds "nav", "menu", "share", "related",
    "tags", "author" and the like, as page chrome. Sphinx and other generators give each
    section the slug of its heading as its id, so a section headed "Editing and Navigation"
    or "File menu" went with its text (half of Python's IDLE page). The cleaning judged the
    page's ids already; these name what the section is about (``clean.names_its_section``).
    """
    for heading in copy.iter(*_HEADING_TAGS):
        if "id" in heading.attrib:
            del heading.attrib["id"]
        parent = heading.getparent()
        if parent is not None and "id" in parent.attrib and names_its_section(parent):
            del parent.attrib["id"]


def _empty_custom_elements(copy: etree._Element) -> None:
    """Remove the custom elements (a ``-`` in the name) that hold nothing.

    Web components that a script fills (rustdoc's ``<rustdoc-toolbar>``) are empty in the
    page as served; trafilatura drops a short block that holds an element it does not know
    together with everything in it: rustdoc's title block, its ``<h1>`` included.
    """
    for element in _EMPTY_CUSTOM_ELEMENTS(copy):
        drop(element)


def _heading_breaks(copy: etree._Element) -> None:
    """Make each line break in a heading a space.

    A browser shows a heading with a ``<br>`` as one heading on two lines; trafilatura ended
    the heading there and made the rest a paragraph, and a heading that starts with one
    (latex2html's Python manuals: ``<h2><a name=...></a><br>1.1.1 Http Objects</h2>``) came
    out as an empty "## " above its own title.
    """
    for heading in copy.iter(*_HEADING_TAGS):
        for line_break in list(heading.iter("br")):
            line_break.tail = " " + (line_break.tail or "")
            drop(line_break)


def _summaries(copy: etree._Element) -> None:
    """Replace each ``<summary>`` that holds a heading by that heading.

    trafilatura writes a ``<summary>`` as a heading, the question of an FAQ in ``<details>``.
    One that holds a heading of its own wraps it (rustdoc puts each item's heading, its
    "Source" link and its version in one): as a heading, its links and version became a
    heading of the outline ("## 1.0.0 · [Source](…)") above the item's own; as a block, the
    heading went with its links as a block of short links.
    """
    for summary in list(copy.iter("summary")):
        heading = next(summary.iter(*_HEADING_TAGS), None)
        if heading is not None:
            heading.tail = summary.tail
            summary.getparent().replace(summary, heading)


def _framed(copy: etree._Element) -> None:
    """Wrap the content of the copy's body in a ``<main>``.

    trafilatura first looks for a block that holds the main content (an ``<article>``, a
    ``<main>``, classes like ``post-content``); on a page without one (DocBook manuals, many
    older sites) it gathers the page's paragraphs, lists and tables one by one and leaves out
    every heading. With the body as its ``<main>``, it reads the body in order, headings
    included; the cleaning already removed the page's chrome.
    """
    body = copy.find("body")
    if body is None:
        return
    main = etree.SubElement(body, "main")
    main.text, body.text = body.text, None
    main.extend(body[:-1])


def _without_indentation(markup: str) -> str:
    """The serialized tree with the page source's indentation removed outside ``pre``,
    ``code`` and ``textarea``: no line break is followed by spaces or tabs.

    A browser shows none of it; trafilatura collapses it inside ``<p>`` only, so a ``div``'s own
    text or a ``<b>`` across two source lines came out with the source's indentation (up to an
    eighth of the characters of a hand-written page, counted against ``max_chars``). Line breaks
    stay, where a stylesheet rypsok does not load may make them visible; a page with an inline
    ``white-space`` style is left as it is. One pass over the markup string, in C: the same
    on the tree cost a tenth of the job.
    """
    if _WHITE_SPACE_STYLE.search(markup):
        return markup
    parts = _VERBATIM.split(markup)
    # split() returns [outside, verbatim, tag name, outside, verbatim, tag name, ...].
    return "".join(
        _INDENTATION.sub("\n", part) if index % 3 == 0 else part
        for index, part in enumerate(parts)
        if index % 3 != 2
    )


def _quotes(copy: etree._Element) -> None:
    """Mark the start of each paragraph of a ``<blockquote>``, once per level of quoting.

    trafilatura writes a quote as plain paragraphs, so a quoted person's words read as the
    page's own. Its text and inline elements are first wrapped in paragraphs; each paragraph,
    heading, list item and ``div`` of inline content whose nearest quote is this one then
    starts with ``_QUOTE_MARK``, as many as the quotes around it, which :func:`_quoted_lines`
    turns into ``>`` markers. A code block in a quote is left unmarked (its text is verbatim)
    and stands outside it.
    """
    for inline in list(copy.iter("q")):
        _inline_quote(inline)
    quotes = [q for q in copy.iter("blockquote") if next(q.iterancestors("pre"), None) is None]
    for quote in quotes:
        _paragraph_runs(quote)
    for quote in list(quotes):
        if next(quote.iterancestors("blockquote"), None) is None:
            quotes.extend(_code_out_of(quote))
    for quote in quotes:
        depth = 1 + sum(1 for _ in quote.iterancestors("blockquote"))
        mark = _QUOTE_MARK * depth
        for block in quote.iter(*_QUOTED_BLOCKS, "div"):
            if next(block.iterancestors("blockquote")) is not quote:
                continue
            if block.tag == "div" and not all(c.tag in _INLINE_TAGS for c in block):
                continue  # a div of blocks: its blocks are marked
            block.text = mark + (block.text or "")
            for br in block.iter("br"):  # the line after a break is quoted too
                if next(br.iterancestors("blockquote")) is quote:
                    br.tail = mark + (br.tail or "")


def _inline_quote(inline: etree._Element) -> None:
    """A ``<q>`` as its text between quotation marks, as a browser shows it.

    trafilatura takes a ``<q>`` for a block quote and breaks the sentence around it.
    """
    inline.tag = "span"
    inline.text = "\u201c" + (inline.text or "")
    if len(inline):
        inline[-1].tail = (inline[-1].tail or "") + "\u201d"
    else:
        inline.text += "\u201d"


def _code_out_of(quote: etree._Element) -> list[etree._Element]:
    """Move each ``<pre>`` child of a top-level ``quote`` out of it, splitting the quote there.

    A code block cannot sit in a quote as trafilatura writes one (it runs the code into the
    quote's text), so it stands between the two parts. Returns the new quotes after the first.
    """
    parts: list[etree._Element] = []
    current = quote
    while (pre := next((c for c in current if c.tag == "pre"), None)) is not None:
        rest = etree.Element("blockquote")
        for child in list(current)[list(current).index(pre) + 1 :]:
            rest.append(child)
        rest.tail, current.tail = current.tail, None
        current.addnext(pre)
        pre.tail = None
        if len(rest):
            pre.addnext(rest)
            parts.append(rest)
        elif rest.tail:
            pre.tail = rest.tail
        current = rest
    return parts


def _without_link_bars(markdown: str) -> str:
    """The result without its lines of three or more links and nothing but separators.

    ``[Home](...) | [Video](...) | [World](...)`` is a site's navigation, wherever it stands;
    trafilatura's recall setting keeps such bars when they sit in the block it takes (a news
    site's footer, newspaper4k's set). Links separated by words or commas ("see [A], [B] and
    [C]") are a sentence and stay.
    """
    # The bar's pattern is tried at every line start; two links with a separator between
    # (a literal-led search, in C) are looked for first.
    if _LINKS_APART.search(markdown) is None:
        return markdown
    return _LINK_BAR.sub("", markdown)


def _nested_lists(markdown: str) -> str:
    """Indent each nested list item to the text of the item it belongs to.

    trafilatura indents a nested item by two spaces per level, whatever the marker above it;
    under ``1. `` (three characters) or ``10. `` that is too little, and CommonMark reads the
    item as one of the outer list, so the nesting is lost. The text it writes after a nested
    list, indented to its item's text, moves with that item. Code blocks are left as they are.
    """
    if "\n  " not in markdown:
        return markdown  # no line is nested
    lines = markdown.split("\n")
    written: list[int] = []  # trafilatura's text column of the open item at each level
    columns: list[int] = []  # where that text is now
    fence: str | None = None
    for index, line in enumerate(lines):
        if fence is not None:
            if line.strip() == fence:
                fence = None
            continue
        opening = _FENCE.match(line.lstrip(" "))
        if opening:
            fence = opening.group(1)
            continue
        item = _LIST_ITEM.match(line)
        if item is not None and len(item.group(1)) % 2 == 0:
            level = len(item.group(1)) // 2
            if level > len(columns):
                written, columns = [], []  # deeper than any open item: not trafilatura's
                continue
            del written[level:], columns[level:]
            start = columns[-1] if columns else 0
            lines[index] = " " * start + line[len(item.group(1)) :]
            written.append(len(item.group(0)))
            columns.append(start + len(item.group(2)) + 1)
            continue
        indent = len(line) - len(line.lstrip(" "))
        if not line.strip() or (indent == 0 and index and lines[index - 1].strip()):
            continue  # a blank line, or a line that continues the one before
        if indent in written:  # text after a nested list, in its item
            level = written.index(indent)
            del written[level + 1 :], columns[level + 1 :]
            lines[index] = " " * columns[level] + line[indent:]
        else:
            written, columns = [], []
    return "\n".join(lines)


def _quoted_lines(markdown: str) -> str:
    """Turn the quote marks of :func:`_quotes` into ``>`` markers; any other mark goes.

    A mark at the start of a line, or right after a list item's marker, makes the line a
    quoted one (a block start right after ``>`` is escaped, as in any paragraph); a blank line
    between two quoted lines becomes a quoted blank line, so that the quote stays one.
    """
    if _QUOTE_MARK not in markdown:
        return markdown
    lines: list[str] = []
    blanks: list[str] = []  # blank lines held until the next line says what they are
    last_depth = 0
    for line in markdown.split("\n"):
        if not line.strip():
            blanks.append(line)
            continue
        marked = _QUOTED_LINE.match(line)
        if marked is None:
            depth, text = 0, line.replace(_QUOTE_MARK, "")
        else:
            depth = len(marked.group(2))
            rest = marked.group(3).replace(_QUOTE_MARK, "").strip()
            if not rest:
                continue  # a quoted block with no text of its own (an image, say)
            item = marked.group(1) or ""
            text = "> " * depth + (item + rest if item else escape_block_start(rest))
        if blanks and depth and last_depth:
            blanks = [" ".join(">" * min(depth, last_depth))]
        lines.extend(blanks)
        blanks = []
        lines.append(text)
        last_depth = depth
    lines.extend(blanks)
    return "\n".join(lines)


def _spaced_blocks(markdown: str) -> str:
    """One blank line between blocks: none doubled, one after each closing code fence and one
    before each heading.

    trafilatura leaves two blank lines in places (around a quote or a code block), which cost
    ``max_chars`` and say nothing, and writes the block after a code block, and a heading after
    a line of inline text (a subtitle in a ``<span>``), on the very next line, where every other
    block is set apart by a blank line. Blank lines inside a code block are its own and stay.
    """
    if "```" not in markdown:

        def apart(match: re.Match[str]) -> str:
            start = match.start()
            return "\n\n" if start and markdown[start - 1] != "\n" else "\n"

        return _BLANK_RUN.sub("\n\n", _BREAK_BEFORE_HEADING.sub(apart, markdown))
    lines = markdown.split("\n")
    spaced: list[str] = []
    fence: str | None = None
    for index, line in enumerate(lines):
        if fence is None and not line.strip() and spaced and not spaced[-1].strip():
            continue
        if fence is None and spaced and spaced[-1].strip() and _HEADING_LINE.match(line):
            spaced.append("")
        spaced.append(line)
        if fence is None:
            opening = _FENCE.match(line)
            fence = opening.group(1) if opening else None
        elif line.rstrip() == fence:
            fence = None
            if index + 1 < len(lines) and lines[index + 1].strip():
                spaced.append("")
    return "\n".join(spaced)
