"""A page's controls, read as a reader reads them (REQ-FETCH-002/004).

Documentation sites put controls in and next to their text: a "copy" button inside each code
block (Node.js), a button that reveals a section under its heading (the accordion of an FAQ),
a "Copy item path" button beside a title (rustdoc), a heading that is a link to itself (mdBook,
so that readers can copy its address), a "§" or "↩" that links to a place on the page, the same
example in two module systems in one ``<pre>``
of which the page shows one at a time (Node.js's ESM and CommonJS). Read as text, they put a
"copy" at the end of code, lose an FAQ's questions (trafilatura drops every button), join two
programs into one line, or write each heading as a link. :func:`settle_controls` makes each
read as the reader sees it; it runs on the cleaned tree, after the headings' anchors were
taken (:func:`rypsok.fetch.clean.heading_ids`) and the links made absolute.
"""

from __future__ import annotations

from lxml import etree

from rypsok.fetch.clean import drop
from rypsok.fetch.parse import text_of

_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")


def settle_controls(root: etree._Element, page_url: str) -> None:
    """Remove buttons from code blocks and from beside a heading's text, make a button that
    is all of a heading's text that text, split a ``<pre>`` of several ``<code>`` blocks,
    unlink a heading's link to its own place on the page, and remove the marks that link to
    a place on the page ("§", "¶", "↩")."""
    page = page_url.partition("#")[0]
    for pre in list(root.iter("pre")):
        for button in list(pre.iter("button")):
            drop(button)
        _split_variants(pre)
    for heading in root.iter(*_HEADINGS):
        if next(heading.iter("button"), None) is not None:
            _heading_buttons(heading)
    for link in list(root.iter("a")):
        if not _here(link, page):
            continue
        if next(link.iterancestors(*_HEADINGS), None) is not None:
            unwrap(link)
        elif not any(char.isalnum() for char in text_of(link)):
            # A permalink beside a heading that is not inside it (rustdoc's "§"), a
            # footnote's way back ("↩"), "back to top" ("↑"): a way around the page.
            drop(link)


def _here(link: etree._Element, page: str) -> bool:
    """Whether a link (its target made absolute) leads to a place on the page itself."""
    href = link.get("href") or ""
    return "#" in href and href.partition("#")[0] == page


def unwrap(el: etree._Element) -> None:
    """Replace ``el`` by its content: its text, children and tail stay where it was."""
    parent = el.getparent()
    if parent is None:
        return
    previous = el.getprevious()
    lead = (el.text or "") if len(el) else (el.text or "") + (el.tail or "")
    if previous is not None:
        previous.tail = (previous.tail or "") + lead
    else:
        parent.text = (parent.text or "") + lead
    if len(el):
        last = el[-1]
        last.tail = (last.tail or "") + (el.tail or "")
        for child in list(el):
            el.addprevious(child)
    parent.remove(el)


def _heading_buttons(heading: etree._Element) -> None:
    """A button that holds all of its heading's text is the heading (an accordion's section
    title); a button beside other text of the heading is a control ("Copy item path")."""
    buttons = list(heading.iter("button"))
    if not buttons:
        return
    text = text_of(heading).strip()
    if len(buttons) == 1 and text and text_of(buttons[0]).strip() == text:
        unwrap(buttons[0])
        return
    for button in buttons:
        drop(button)


def _split_variants(pre: etree._Element) -> None:
    """A ``<pre>`` of two or more ``<code>`` children and no other text becomes one ``<pre>``
    per ``<code>``, in order: each is a program of its own, shown one at a time."""
    codes = [child for child in pre if child.tag == "code"]
    if len(codes) < 2 or (pre.text or "").strip():
        return
    for child in pre:
        if (child.tail or "").strip() or (child.tag != "code" and text_of(child).strip()):
            return
    tail, pre.tail = pre.tail, None
    last = pre
    for code in codes[1:]:
        code.tail = None
        block = etree.Element("pre", dict(pre.attrib))
        last.addnext(block)
        block.append(code)
        last = block
    last.tail = tail
