"""Noise removal on the bounded tree (REQ-CTX-005, REQ-FETCH-002, REQ-PAGE-002).

One scan over the tree (:func:`find_noise`) finds two kinds of noise, removed in this order:

* :func:`remove_invisible` drops everything a browser would not render: elements with the
  ``hidden`` attribute, ``aria-hidden="true"``, closed ``<dialog>``, hidden inputs, inline styles
  that hide (``display:none``, ``visibility:hidden``, ``opacity:0``, ``font-size:0``, off-screen
  or clipped boxes), and elements whose class or id a top-level ``<style>`` rule hides with a
  simple selector. Script, style, template, noscript and comments never reach the tree
  (:mod:`rypsok.fetch.parse`). Stylesheets loaded from elsewhere are not evaluated: nothing is
  fetched, so a page can still hide text with rules rypsok never sees.
* :func:`remove_chrome` drops site chrome: navigation, banners, page headers and footers and
  complementary asides outside the article, search forms, cookie and consent banners, dialogs,
  blocks whose id or class names chrome (Readability's "unlikely candidates", when they hold a
  small share of the text and no ``h1``), related-posts widgets even inside the article (they
  are inserted into the post's content), and the link columns of table layouts;
  :func:`unwrap_layout_tables` then turns layout tables into plain blocks.

:func:`absolutize_links` resolves link targets against the page URL and keeps only http(s)
targets; :func:`heading_ids` collects the anchors of headings for fragment matching before the
extractor throws the attributes away.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import urljoin, urlsplit

from lxml import etree

from rypsok.fetch.parse import XML_UNSAFE, text_of, xml_safe
from rypsok.fetch.sections import heading_key

MAX_URL_CHARS = 2048  # LIM-F9
_MAX_HEADING_IDS = 2000
_MAX_ID_CHARS = 128

_HIDDEN_CLASSES = frozenset(
    {
        "hidden",
        "d-none",
        "is-hidden",
        "hide",
        "invisible",
        "u-hidden",
        "visually-hidden",
        "visuallyhidden",
        "sr-only",
        "screen-reader-text",
        "screenreader-only",
        "display-none",
    }
)
_ZERO = r"(?:0|0?\.0+|0+(?:\.0+)?(?:px|em|rem|pt|%|vh|vw)?)"
_HIDING_DECLARATION = re.compile(
    rf"^(?:display:none|visibility:(?:hidden|collapse)|content-visibility:hidden"
    rf"|opacity:{_ZERO}|font-size:{_ZERO}|max-height:{_ZERO}|clip:rect\(0[^)]*\)"
    rf"|clip-path:inset\(50%\)|(?:left|top|text-indent|margin-left):-\d{{4,}}(?:px|em|rem)?)$"
)
_RULE = re.compile(r"([^{}@;]{1,400})\{([^{}]{0,4000})\}")
_SIMPLE_SELECTOR = re.compile(r"^(?:[a-z][a-z0-9]*)?([.#])([A-Za-z_][\w-]{0,100})$")
_BANNER = re.compile(
    r"(?:^|[-_ ])(?:cookies?|consent|gdpr|cmp|onetrust|cookiebot|cc-window|cc-banner"
    r"|privacy-banner|cookie-notice|newsletter-popup)(?:$|[-_ ])",
    re.IGNORECASE,
)
_CHROME_ROLES = frozenset(
    {"navigation", "banner", "contentinfo", "search", "menubar", "menu", "toolbar"}
)
_DIALOG_ROLES = frozenset({"dialog", "alertdialog"})
_CHROME_TAGS = ("nav", "header", "footer", "aside", "form")
_BARE_CANDIDATES = frozenset({"dialog", "td", *_CHROME_TAGS})
_HEADING_TAGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
_TOKEN_SPLIT = re.compile(r"[^a-z0-9]+")
# Readability's "unlikely candidates", as whole id/class tokens, minus its "maybe" words.
_CHROME_TOKENS = frozenset(
    {
        "footer",
        "foot",
        "copyright",
        "header",
        "masthead",
        "menu",
        "nav",
        "navbar",
        "navigation",
        "sidebar",
        "breadcrumb",
        "breadcrumbs",
        "topbar",
        "toolbar",
        "bottom",
        "share",
        "social",
        "related",
        "sponsor",
        "advert",
        "ads",
        "promo",
        "newsletter",
        "subscribe",
        "pagination",
        "pager",
        "userbar",
    }
)
# Related-posts widgets are inserted into the post's own content (Jetpack's
# "jp-relatedposts", YARPP's "yarpp-related"), so they are dropped inside the article too; a
# section merely named "related" (say, a paper's related work) is not such a widget.
_RELATED_WIDGET_TOKENS = frozenset(
    {"relatedposts", "relatedarticles", "relatedstories", "relatedlinks", "yarpp"}
)
# News sites' "recirculation" modules (links to other stories, TIME's "inline-article-recirc"):
# the word names nothing else, so a content word beside it ("article") does not keep them.
_RECIRCULATION_TOKENS = frozenset({"recirc", "recirculation"})
# A breadcrumb trail and a table of contents are navigation wherever they are: inside the
# article (rustdoc's "std::fs" trail, npm's "Table of contents" section) too. The response's
# outline lists the headings; a contents block that is most of the page stays by the share
# rule below.
_NAVIGATION_TOKENS = frozenset({"breadcrumb", "breadcrumbs", "toc", "tableofcontents"})
_RELATED_ITEMS = frozenset({"posts", "articles", "stories", "links"})
# Readers' comments and the form to add one sit inside the article on many sites (an
# <article> holding the post and its thread), so they are dropped there too. Only a block
# container named as the whole section counts: highlight.js and Prism mark a code comment
# with the class "comment" ("hljs-comment", "token comment"), so the word alone does not.
# Content words do not veto these names: the section is named after what it follows
# ("post-comments", "entry-comments", "article-comments"); a thread that is the page's text
# stays by the share rule below.
_COMMENT_SECTION_TOKENS = frozenset({"comments", "commentlist", "commentform", "disqus"})
_COMMENT_PARTS = frozenset({"list", "area", "form", "section", "thread", "container", "respond"})
_COMMENT_SECTION_TAGS = frozenset({"div", "section", "ol", "ul", "aside", "form", "footer"})
# Self-links and edit links next to headings ("¶", "#", "[edit]"): dropped even in the article.
_DECORATION_TOKENS = frozenset({"headerlink", "editsection", "anchorjs"})
_CONTENT_TOKENS = frozenset(
    {"content", "article", "main", "post", "entry", "body", "story", "text", "page"}
)
# Every word that makes an id or class name chrome, whatever the rule.
_MARKED_WORDS = (
    _CHROME_TOKENS
    | _DECORATION_TOKENS
    | _RELATED_WIDGET_TOKENS
    | _RECIRCULATION_TOKENS
    | _NAVIGATION_TOKENS
    | _COMMENT_SECTION_TOKENS
    | {"related", "comment", "table"}
)
# Words of a heading that names chrome ("Table of contents", "Share this", "Related posts").
_CHROME_WORDS = (
    _MARKED_WORDS
    | _RELATED_ITEMS
    | {"contents", "comments", "more"}
    | frozenset("a an and the of on in to for this that our your with us me".split())
)
_WORDS = re.compile(r"[^\W\d_]+")
_NAMED_CHROME_SHARE = 0.3  # a block named like chrome holds at most this share of the text
_LAYOUT_CELLS = 200  # table cells examined as possible navigation columns
_NAV_CELL_CHARS = 300
_MAIN_XPATH = ".//main | .//article | .//*[@role='main']"
_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
_BANNER_MAX_CHARS = 3000


def _declarations(style: str) -> list[str]:
    return [
        "".join(part.split()).lower().replace("!important", "")
        for part in style.split(";")
        if part.strip()
    ]


def _style_hides(style: str) -> bool:
    return any(_HIDING_DECLARATION.match(d) for d in _declarations(style))


def hidden_selectors(style_text: str) -> tuple[frozenset[str], frozenset[str]]:
    """Classes and ids that top-level rules of the page's ``<style>`` elements hide.

    Only simple selectors (``.name``, ``#name``, ``tag.name``) of rules outside at-rule blocks
    count: ``@media print { .x { display: none } }`` hides nothing on a screen.
    """
    classes: set[str] = set()
    ids: set[str] = set()
    depth = 0
    top_level: list[str] = []
    start = 0
    # Keep only text at brace depth 0 and 1 outside at-rules, by a single bounded scan.
    for match in re.finditer(r"[{}]", style_text):
        brace = match.group()
        if brace == "{":
            if depth == 0:
                top_level.append(style_text[start : match.end()])
            depth += 1
        else:
            if depth == 1:
                top_level.append(style_text[start : match.end()])
            depth = max(depth - 1, 0)
        start = match.end()
    flat = "".join(top_level)
    flat = re.sub(r"@[^{}]*\{[^{}]*\}", "", flat)  # at-rule heads keep no inner rules here
    for rule in _RULE.finditer(flat):
        if not _style_hides(rule.group(2)):
            continue
        for selector in rule.group(1).split(","):
            simple = _SIMPLE_SELECTOR.match(selector.strip())
            if simple:
                (classes if simple.group(1) == "." else ids).add(simple.group(2))
    return frozenset(classes), frozenset(ids)


def _class_hidden(value: str, hidden_classes: frozenset[str]) -> bool:
    tokens = value.split()
    if any(":" in t for t in tokens):
        # Responsive utilities ("hidden md:block") show the element on some screens.
        return False
    return any(t in hidden_classes or t.lower() in _HIDDEN_CLASSES for t in tokens)


def _invisible(el: etree._Element, classes: frozenset[str], ids: frozenset[str]) -> bool:
    get = el.get
    if get("hidden") is not None:
        return True
    if (get("aria-hidden") or "").strip().lower() == "true":
        return True
    tag = el.tag
    if tag == "dialog" and get("open") is None:
        return True
    if tag == "input" and (get("type") or "").strip().lower() == "hidden":
        return True
    style = get("style")
    if style and _style_hides(style):
        return True
    cls = get("class")
    if cls and _class_hidden(cls, classes):
        return True
    ident = get("id")
    return bool(ident and ident in ids)


def drop(el: etree._Element) -> None:
    """Remove ``el`` and its subtree but keep its tail text, which belongs to the parent."""
    parent = el.getparent()
    if parent is None:
        return
    tail = el.tail
    if tail:
        previous = el.getprevious()
        # lxml refuses to store characters XML cannot hold, which the HTML parser let in.
        if previous is not None:
            previous.tail = xml_safe((previous.tail or "") + tail)
        else:
            parent.text = xml_safe((parent.text or "") + tail)
    parent.remove(el)


@dataclass(slots=True)
class Noise:
    """What one scan found: elements a browser would not render, and chrome candidates."""

    invisible: list[etree._Element] = field(default_factory=list)
    chrome: list[etree._Element] = field(default_factory=list)


def _marker_tokens(el: etree._Element) -> set[str]:
    ident = (el.get("id") or "").lower()
    tokens = set(_TOKEN_SPLIT.split(f"{ident} {el.get('class') or ''}".lower())) - {""}
    if ident and tokens & _MARKED_WORDS and names_its_section(el):
        tokens = set(_TOKEN_SPLIT.split((el.get("class") or "").lower())) - {""}
    return tokens


def names_its_section(el: etree._Element) -> bool:
    """Whether ``el``'s id is the name of the section it is: made of the words of the heading
    it opens with, which says more than chrome's words.

    Sphinx and other generators give each section the slug of its heading as its id:
    "editing-and-navigation" for "Editing and Navigation", "file-menu" for "File menu". Such
    an id names what the section is about, not what part of the page it is; a section headed
    "Table of contents", "Comments" or "Navigation" is still named as chrome.
    """
    ident = el.get("id")
    heading = _opening_heading(el) if ident else None
    if heading is None or ident is None:
        return False
    words = set(_WORDS.findall(text_of(heading).lower()))
    return set(_WORDS.findall(ident.lower())) <= words and bool(words - _CHROME_WORDS)


def _opening_heading(el: etree._Element) -> etree._Element | None:
    """The heading ``el`` opens with: its first child after empty elements only (the anchors
    Sphinx puts before a section's heading), with no text before it."""
    if (el.text or "").strip():
        return None
    for child in el:
        if child.tag in _HEADING_TAGS:
            return child
        if len(child) or (child.text or "").strip() or (child.tail or "").strip():
            return None
    return None


def _names_chrome(tokens: set[str]) -> bool:
    """Tokens that name chrome ("footer", "sidebar"...) and no content word."""
    return bool(tokens & (_CHROME_TOKENS | _DECORATION_TOKENS)) and not tokens & _CONTENT_TOKENS


def _names_related_widget(tokens: set[str]) -> bool:
    """Tokens that name a related-posts widget and no content word, or a recirculation
    module."""
    named = bool(tokens & _RELATED_WIDGET_TOKENS) or (
        "related" in tokens and bool(tokens & _RELATED_ITEMS)
    )
    return (named and not tokens & _CONTENT_TOKENS) or bool(tokens & _RECIRCULATION_TOKENS)


def _names_navigation(tokens: set[str]) -> bool:
    """Tokens that name a breadcrumb trail or a table of contents."""
    return bool(tokens & _NAVIGATION_TOKENS) or {"table", "of", "contents"} <= tokens


def _names_comment_section(tokens: set[str]) -> bool:
    """Tokens that name a section of readers' comments (or its form)."""
    return bool(tokens & _COMMENT_SECTION_TOKENS) or (
        "comment" in tokens and bool(tokens & _COMMENT_PARTS)
    )


def _chrome_named(el: etree._Element) -> bool:
    """An element (not a heading) whose id or class names chrome."""
    return el.tag not in _HEADING_TAGS and _names_chrome(_marker_tokens(el))


def _names_chrome_in_article(tokens: set[str], tag: str) -> bool:
    """Tokens of a related-posts widget, or of a block container that holds a section of
    readers' comments: chrome even inside the article."""
    return (
        _names_related_widget(tokens)
        or _names_navigation(tokens)
        or (tag in _COMMENT_SECTION_TAGS and _names_comment_section(tokens))
    )


def _chrome_in_article(el: etree._Element) -> bool:
    """An element (not a heading) named as chrome that is dropped even inside the article."""
    return el.tag not in _HEADING_TAGS and _names_chrome_in_article(_marker_tokens(el), el.tag)


def _decoration(el: etree._Element) -> bool:
    return el.tag not in _HEADING_TAGS and bool(_marker_tokens(el) & _DECORATION_TOKENS)


def _chrome_candidate(el: etree._Element, tag: str) -> bool:
    if tag in _CHROME_TAGS or tag == "td":
        return True
    get = el.get
    if get("role") is not None or get("aria-modal") is not None:
        return True
    if get("id") is None and get("class") is None:
        return False
    if _banner_like(el):
        return True
    if tag in _HEADING_TAGS:
        return False
    tokens = _marker_tokens(el)  # once: this runs for every element with an id or class
    return _names_chrome(tokens) or _names_chrome_in_article(tokens, tag)


def find_noise(root: etree._Element, style_text: str) -> Noise:
    """Scan the tree once (a Python call per element is the cost that matters on big pages)."""
    classes, ids = hidden_selectors(style_text)
    noise = Noise()
    for el in root.iter(etree.Element):
        tag = el.tag
        if not el.attrib and tag not in _BARE_CANDIDATES:
            continue
        if _invisible(el, classes, ids):
            noise.invisible.append(el)
        elif _chrome_candidate(el, tag):
            noise.chrome.append(el)
    return noise


def remove_invisible(noise: Noise) -> int:
    """Drop every element a browser would not render; return how many were dropped."""
    for el in noise.invisible:
        drop(el)
    return len(noise.invisible)


def drop_head(root: etree._Element) -> None:
    """Drop ``<head>``: nothing in it is rendered (read the title before)."""
    head = root.find("head")
    if head is not None:
        drop(head)


def _inside_main(el: etree._Element) -> bool:
    for ancestor in el.iterancestors():
        if ancestor.tag in ("main", "article") or ancestor.get("role") == "main":
            return True
    return False


def _holds_main(el: etree._Element) -> bool:
    return bool(el.xpath(_MAIN_XPATH))


def _text_length(el: etree._Element) -> int:
    return len(" ".join(text_of(el).split()))


def _banner_like(el: etree._Element) -> bool:
    marker = f"{el.get('id') or ''} {el.get('class') or ''}"
    return bool(_BANNER.search(marker))


def _search_form(el: etree._Element) -> bool:
    return el.tag == "form" and bool(el.xpath(".//input[@type='search']"))


def _overlay(el: etree._Element, role: str) -> bool:
    """A dialog, modal or cookie/consent banner outside the article, of banner size."""
    if not (role in _DIALOG_ROLES or el.get("aria-modal") == "true" or _banner_like(el)):
        return False
    return not _inside_main(el) and not _holds_main(el) and _text_length(el) <= _BANNER_MAX_CHARS


def _link_chars(el: etree._Element) -> int:
    return sum(_text_length(a) for a in el.iter("a"))


def _navigation_cell(td: etree._Element) -> bool:
    """A table-layout column of links next to a cell with far more text (1990s navigation)."""
    row = td.getparent()
    if row is None or row.tag != "tr":
        return False
    cells = [c for c in row if c.tag in ("td", "th")]
    if len(cells) < 2:
        return False
    length = _text_length(td)
    if not length or length > _NAV_CELL_CHARS or _link_chars(td) < 0.5 * length:
        return False
    return max(_text_length(c) for c in cells if c is not td) >= 3 * length


def _named_chrome(el: etree._Element, body_chars: int) -> bool:
    if _holds_main(el):
        return False
    if not _chrome_in_article(el) and (not _chrome_named(el) or _inside_main(el)):
        return False
    if el.find(".//h1") is not None:
        return False
    return _text_length(el) <= _NAMED_CHROME_SHARE * body_chars


def remove_chrome(root: etree._Element, noise: Noise) -> int:
    """Drop navigation, banners, page header/footer, asides, search forms, cookie banners,
    blocks whose id or class names chrome, related-posts widgets, and navigation columns of
    layout tables."""
    has_main = _holds_main(root)
    body_chars = int(root.xpath("string-length(normalize-space(//body))"))
    doomed: list[etree._Element] = []
    cells = 0
    for el in noise.chrome:
        tag = el.tag
        if tag in ("html", "body", "main", "article"):
            continue
        role = (el.get("role") or "").strip().lower()
        if tag == "td":
            cells += 1
            if cells <= _LAYOUT_CELLS and not has_main and _navigation_cell(el):
                doomed.append(el)
        elif tag == "nav" or role in _CHROME_ROLES:
            if not _holds_main(el):
                doomed.append(el)
        elif tag in ("header", "footer", "aside") or role == "complementary":
            if _inside_main(el) or _holds_main(el):
                continue
            if tag == "header" and not has_main and el.find(".//h1") is not None:
                continue  # without an article, a header with the page's h1 carries content
            doomed.append(el)
        elif (
            _decoration(el)
            or _search_form(el)
            or _overlay(el, role)
            or _named_chrome(el, body_chars)
        ):
            doomed.append(el)
    doomed.extend(_heading_marks(root))
    for el in doomed:
        drop(el)
    return len(doomed)


def _heading_mark(link: etree._Element) -> bool:
    """A link in a heading that holds no letter or digit (see :func:`_heading_marks`)."""
    return not any(char.isalnum() for char in text_of(link))


def _heading_text(heading: etree._Element) -> str:
    """A heading's text as the content will have it: without its permalink and edit marks,
    which chrome removal drops, so that its key matches the heading of the Markdown."""
    if next(heading.iter("a", "span"), None) is None:
        return text_of(heading)
    parts = [heading.text or ""]
    for child in heading:
        if not ((child.tag == "a" and _heading_mark(child)) or _decoration(child)):
            parts.append(_heading_text(child))
        parts.append(child.tail or "")
    return "".join(parts)


def _heading_marks(root: etree._Element) -> list[etree._Element]:
    """Links in headings that hold no letter or digit: the "#", "¶" or "🔗" permalinks and
    edit icons that site generators put next to every heading, whatever their class.

    Kept, each heading of the content (and of its outline) ends in a link like ``[#](...)``.
    """
    return [
        link
        for heading in root.iter(*_HEADINGS)
        for link in heading.iter("a")
        if _heading_mark(link)
    ]


_LAYOUT_XPATH = (
    "(./tr | ./*/tr)/*[self::td or self::th]//*[self::h1 or self::h2 or self::h3 or self::p][1]"
)
_TABLE_PARTS = ("thead", "tbody", "tfoot", "tr", "td", "th", "caption")


def unwrap_layout_tables(root: etree._Element) -> int:
    """Turn layout tables (cells that hold headings or paragraphs) into plain blocks, so the
    page's text is not rendered as one big Markdown table; data tables stay tables."""
    count = 0
    for table in list(root.iter("table")):
        if not table.xpath(_LAYOUT_XPATH):
            continue
        count += 1
        table.tag = "div"
        for part in table.iter(*_TABLE_PARTS):
            if next(part.iterancestors("table"), None) is None:
                part.tag = "div"
        for attribute in ("width", "border", "cellpadding", "cellspacing"):
            table.attrib.pop(attribute, None)
    return count


# A root-relative link that urljoin would return as origin + link, unchanged: no "//" start, no
# ";" (a bare one is dropped), no space or control character (some are removed), no empty
# query or fragment (both are dropped); dot segments are excluded by the caller.
_ROOT_RELATIVE = re.compile(
    r"/(?!/)[^?#;\x00-\x20\x7f]*(?:\?[^#\x00-\x20\x7f]+)?(?:#[^\x00-\x20\x7f]+)?"
)


_NOT_IN_URL = str.maketrans({" ": "%20", '"': "%22", "<": "%3C", ">": "%3E"})
_NOT_IN_URL_CHARS = re.compile(r'[ "<>]')


def _origin(base_url: str) -> str | None:
    """``scheme://netloc`` of an http(s) base URL, the prefix of its root-relative links."""
    try:
        parts = urlsplit(base_url)
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return None
    return f"{parts.scheme}://{parts.netloc}"


def _as_requested(target: str) -> str:
    """``target`` with the characters no URL may hold (space, ``"``, ``<``, ``>``) percent-encoded,
    as a browser encodes them before it sends the request (WHATWG URL, in path, query and
    fragment alike); so written, a link target needs no angle brackets in Markdown."""
    return target.translate(_NOT_IN_URL) if _NOT_IN_URL_CHARS.search(target) else target


def _resolve(base_url: str, href: str, origin: str | None = None) -> str | None:
    href = href.strip()
    if origin is not None and _ROOT_RELATIVE.fullmatch(href) and "/." not in href:
        # The most common link of all, resolved without urljoin's parse and rebuild (a few
        # microseconds each); the result is the same string (tested against urljoin).
        target = _as_requested(origin + href)
        return target if len(target) <= MAX_URL_CHARS else None
    try:
        target = urljoin(base_url, href)
        scheme = urlsplit(target).scheme
    except ValueError:
        return None
    target = _as_requested(target)
    if scheme not in ("http", "https") or len(target) > MAX_URL_CHARS:
        return None
    return target


def absolutize_links(root: etree._Element, base_url: str) -> None:
    """Resolve ``href`` against the page URL; drop targets that are not bounded http(s) URLs.

    The page's ``<base>`` element is ignored: page markup confers no authority (spec 002).
    """
    resolved: dict[str, str | None] = {}
    origin = _origin(base_url)
    for el in root.xpath("//a[@href] | //area[@href]"):
        href = el.get("href")
        if href not in resolved:
            # Link farms repeat targets; resolving each distinct target once keeps this linear.
            resolved[href] = _resolve(base_url, href, origin)
        target = resolved[href]
        if target is None or XML_UNSAFE.search(target):
            del el.attrib["href"]
        elif target != href:
            el.set("href", target)


def _anchor_of(el: etree._Element) -> str | None:
    value = el.get("id") or (el.get("name") if el.tag == "a" else None)
    if isinstance(value, str) and 0 < len(value.strip()) <= _MAX_ID_CHARS:
        return value.strip()
    return None


def heading_ids(root: etree._Element) -> list[tuple[str, tuple[str, ...]]]:
    """For each heading that has anchors: its normalized text and its ids, in document order.

    An anchor is the heading's own id, the id or name of an anchor inside it, the id of a
    section that the heading opens, or an empty anchor element right before it.
    """
    found: list[tuple[str, tuple[str, ...]]] = []
    for h in root.iter(*_HEADINGS):
        ids: list[str] = []
        own = _anchor_of(h)
        if own:
            ids.append(own)
        for inner in h.iter("a", "span"):
            if inner is not h:
                anchor = _anchor_of(inner)
                if anchor:
                    ids.append(anchor)
        parent = h.getparent()
        if (
            parent is not None
            and parent.tag not in ("body", "html")
            # The heading opens its parent. len(parent) walks every child: quadratic on a flat
            # page with many headings; the previous sibling is one step.
            and h.getprevious() is None
        ):
            anchor = _anchor_of(parent)
            if anchor:
                ids.append(anchor)
        previous = h.getprevious()
        if previous is not None and not text_of(previous).strip():
            anchor = _anchor_of(previous)
            if anchor:
                ids.append(anchor)
        key = heading_key(_heading_text(h))
        unique = tuple(dict.fromkeys(ids))[:4]
        if unique and key:
            found.append((key, unique))
            if len(found) >= _MAX_HEADING_IDS:
                break
    return found
