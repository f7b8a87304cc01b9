"""The two ends of an extracted result, checked against the page it came from.

trafilatura takes an article's text from the element that holds its paragraphs. At the edges
of that element two things go wrong on real pages (docs/extraction.md, "Main content"):

* the start: the article's header above it, the page's ``<h1>`` and the standfirst under it (a
  lede paragraph, a subtitle), is left out. :func:`with_lede` puts the standfirst back in front
  of the result when the header is plainly the article's: the page has one ``<h1>`` with text, it is
  most of the page's title and not a link, and the result holds neither it nor the standfirst;
* the end: a label kept without what it labels, a heading whose section was left out, a line
  that ends with ":" with nothing after it, or the head of a box of links whose links were
  left out ("Weiterführender Link"), or the site's copyright notice ("© 2013 Cable News
  Network. All rights reserved.") at the end of the article's element, unless it is the
  section of a heading (the "Copyright notice" of a site's terms), or a list of links that
  nothing introduces or that a heading names as the site's other stories ("Related
  articles", "関連キーワード"; one under "## See also" or "References:" stays).
  :func:`without_dangling_end` removes them; it never removes the last block there is.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Sequence

from lxml import etree

from rypsok.fetch.markdown import LINK_PATTERN, to_markdown
from rypsok.fetch.parse import single_spaced, text_of

_WORD = re.compile(r"\w+")
# An <h1> shorter than this is a section or site name ("News"), not an article's title.
_TITLE_MIN_CHARS = 10
# How far above the <h1> the article's header may start: a title wrapper inside a header.
_HEADER_LEVELS = 3
_HEADER_LIMITS = ("article", "main", "body", "html")
# A standfirst is a sentence or two: one or two blocks of this size, of few links.
_LEDE_TAGS = ("p", "div", "h2", "h3")
_LEDE_MIN_CHARS = 30
_LEDE_MAX_CHARS = 600
_LEDE_MIN_WORDS = 5
_LEDE_MAX_BLOCKS = 2
_LEDE_MAX_LINK_SHARE = 0.2
_SENTENCE_END = re.compile(r"[.!?\u2026][\"'\u201d\u2019\u00bb)\]]*$")
# Class or id words of the header's other lines: the byline, the date, the image credit.
_META_NAMES = re.compile(r"byline|author|date|time|meta|credit|caption|share|breadcrumb", re.I)
_BLOCK_TAGS = frozenset(
    "address article aside blockquote dd div dl dt figure footer form h1 h2 h3 h4 h5 h6"
    " header hr li main nav ol p pre section table ul".split()
)

_HEADING_LINE = re.compile(r"#{1,6}[ \t]")
_ITEM_LINE = re.compile(r"([-*+>|]|\d{1,9}[.)])[ \t]")
_LABEL_MAX_CHARS = 80
# The head of a box: a few plain words ("Weiterführender Link", "Related articles").
_BOX_HEAD = re.compile(r"\w[\w \t'\u2019-]*\w")
_BOX_HEAD_MAX_CHARS = 60
_BOX_HEAD_MAX_WORDS = 5
# The rest of a box of links is this much link text at least.
_BOX_MIN_LINK_SHARE = 0.8
# A site's copyright notice: a short block that starts with the sign ("™ & © 2013",
# "Copyright © 2014", "Copyright 2023") or says the rights are reserved. A sentence about
# copyright ("Copyright law changed in 2019") does not start so.
_NOTICE_MAX_CHARS = 300
_COPYRIGHT = re.compile(
    r"^\W{0,6}(?:\u00a9|\(c\)|copyright\s*(?:\u00a9|\(c\))?\s*(?:19|20)\d\d\b)"
    r"|\ball rights reserved\b|\btodos los derechos reservados\b"
    r"|\btous droits r\u00e9serv\u00e9s\b|\balle rechte vorbehalten\b"
    r"|\u7248\u6743\u6240\u6709|\u7248\u6b0a\u6240\u6709",  # the same, zh-Hans and zh-Hant
    re.IGNORECASE,
)
# A list of links that nothing introduces, at the very end: the site's links to other stories.
# One that follows a heading or a label ("## See also", "References:") is the author's.
_LINK_LIST_MIN_ITEMS = 3
_ITEM_OTHER_MAX_CHARS = 30  # what an item holds besides its link: a date, a source
# A related story's item is a link and a date, far shorter than this; the caps also keep the
# link search, which is not anchored, short on a hostile item ("\[" many times, no "]").
_ITEM_MAX_CHARS = 2500
_LINK_LIST_MAX_CHARS = 50_000
_ITEM_START = re.compile(r"^[ \t]*(?:[-*+]|\d{1,9}[.)])(?:[ \t]+|$)", re.MULTILINE)
# A heading that is the name of the site's links to other stories ("Related articles", "Read
# more", "関連キーワード"): the list of links under it at the end goes with it. "See also",
# "Further reading" and "Related work in ..." name the author's own references and stay.
_RELATED_HEADING = re.compile(
    r"^#{1,6}[ \t]+\W{0,3}(?:(?:"
    r"related(?: (?:stories|articles|posts|links|news|content|coverage|topics))?"
    r"|more (?:stories|articles|news|posts)(?: (?:from|on|about) [^\n]{1,40})?"
    r"|read (?:more|also|next)|also read|you (?:may|might) also like"
    r"|recommended(?: (?:for you|reading|stories|articles))?|most (?:read|popular|viewed)"
    r"|mehr zum thema|lesen sie auch|weitere artikel"
    r"|(?:\u00e0 )?lire aussi|sur le m\u00eame sujet|articles (?:similaires|li\u00e9s)"
    r"|(?:noticias|art\u00edculos) relacionad[oa]s|(?:tambi\u00e9n )?te puede interesar"
    r"|lee tambi\u00e9n|leia tamb\u00e9m|veja tamb\u00e9m|leggi anche|articoli correlati"
    r"|\u0447\u0438\u0442\u0430\u0439\u0442\u0435 \u0442\u0430\u043a\u0436\u0435"  # ru
    r"|\u0627\u0642\u0631\u0623 \u0623\u064a\u0636\u0627"  # ar
    r")\W*$"
    r"|[^\n]*(?:\u95a2\u9023|\u76f8\u5173|\u76f8\u95dc|\uad00\ub828))",  # ja, zh, zh-Hant, ko
    re.IGNORECASE,
)
_RELATED_HEADING_MAX_CHARS = 80
_ONE_LINK = re.compile(LINK_PATTERN)
_TEXT_NODES = etree.XPath("//text()[normalize-space(.) = $label]")
_HEADINGS = etree.XPath(
    "//*[self::h1 or self::h2 or self::h3 or self::h4 or self::h5 or self::h6]"
    "[normalize-space(.) = $label]"
)


def _key(text: str) -> str:
    """The words of ``text``, case-folded: the same for the page's text and for its Markdown."""
    return " ".join(_WORD.findall(text.casefold()))


def with_lede(markdown: str, root: etree._Element, title: str | None) -> str:
    """``markdown`` with the article's standfirst in front when it was left out (see above)."""
    if not markdown or not title:
        return markdown
    headings = [h for h in root.iter("h1") if _key(text_of(h))]
    if len(headings) != 1:
        return markdown
    h1 = headings[0]
    heading = single_spaced(text_of(h1))
    if not _is_article_title(h1, _key(heading), _key(title)):
        return markdown
    if heading in markdown:
        return markdown  # the result starts at the header or above it (the common case)
    candidates: list[etree._Element] = []
    for block in _under(h1):
        text = single_spaced(text_of(block))
        if not text:
            continue  # a picture, an empty wrapper
        if not _is_lede(block, text) or text in markdown:
            break
        candidates.append(block)
        if len(candidates) == _LEDE_MAX_BLOCKS:
            break
    if not candidates:
        return markdown
    # The same checks on the words alone (Markdown escapes and writes links its own way): one
    # pass over the whole result, made only where a standfirst may be missing.
    found = _key(markdown)
    if _key(heading) in found:
        return markdown
    ledes: list[etree._Element] = []
    for block in candidates:
        if _key(text_of(block)) in found:
            break
        ledes.append(block)
    if not ledes:
        return markdown
    return "\n\n".join([*(_as_paragraph(block) for block in ledes), markdown])


def _is_article_title(h1: etree._Element, heading: str, page_title: str) -> bool:
    """Whether ``h1`` (its words ``heading``) is the article's title: most of the page's title
    (which adds the site's name before or after it), not a link (a logo that names the site)."""
    if len(heading) < _TITLE_MIN_CHARS or 2 * len(heading) < len(page_title):
        return False
    if not (
        page_title.startswith(heading) or page_title.endswith(heading) or page_title in heading
    ):
        return False
    link_chars = sum(len(_key(text_of(a))) for a in h1.iter("a"))
    return 2 * link_chars < len(heading)


def _under(heading: etree._Element) -> Sequence[etree._Element]:
    """The elements after ``heading`` in its header: its next siblings, or those of the title
    wrapper it is alone in."""
    node = heading
    for _ in range(_HEADER_LEVELS):
        siblings = [s for s in node.itersiblings() if isinstance(s.tag, str)]
        if any(single_spaced(text_of(s)) for s in siblings):
            return siblings
        parent = node.getparent()
        if parent is None or parent.tag in _HEADER_LIMITS:
            break
        node = parent
    return []


def _is_lede(block: etree._Element, text: str) -> bool:
    if block.tag not in _LEDE_TAGS:
        return False
    if not _LEDE_MIN_CHARS <= len(text) <= _LEDE_MAX_CHARS or len(text.split()) < _LEDE_MIN_WORDS:
        return False
    if _META_NAMES.search(f"{block.get('class') or ''} {block.get('id') or ''}"):
        return False
    descendants = [d for d in block.iterdescendants() if isinstance(d.tag, str)]
    if any(d.tag == "time" or d.tag in _BLOCK_TAGS for d in descendants):
        return False
    link_chars = sum(len(single_spaced(text_of(a))) for a in descendants if a.tag == "a")
    if link_chars > _LEDE_MAX_LINK_SHARE * len(text):
        return False
    # A subtitle is a heading; a lede paragraph is written in sentences.
    return block.tag in ("h2", "h3") or bool(_SENTENCE_END.search(text))


def _as_paragraph(block: etree._Element) -> str:
    paragraph = copy.deepcopy(block)
    paragraph.tag = "p"  # a subtitle stands first as a paragraph: the outline starts below it
    paragraph.tail = None
    return to_markdown(paragraph)


def without_dangling_end(markdown: str, root: etree._Element) -> str:
    """``markdown`` without the labels at its end that label nothing (see above)."""
    kept = markdown
    while True:
        before, blank, last = kept.rpartition("\n\n")  # the result's blocks end so
        last = last.strip()
        if not blank or not last:
            return kept
        if _link_list(last):
            if not _introduced(before):
                kept = before
                continue
            heading = _last_block(before)
            if len(heading) <= _RELATED_HEADING_MAX_CHARS and _RELATED_HEADING.match(heading):
                kept = before.rpartition("\n\n")[0]
                continue
        if "\n" in last:
            return kept
        if not (
            _left_section(last, root)
            or (
                len(last) <= _LABEL_MAX_CHARS
                and not _ITEM_LINE.match(last)
                and last.strip("*_ \t").endswith(":")
            )
            or _box_head(last.strip("*_ \t"), root)
            or (_copyright_notice(last) and not _under_heading(before))
        ):
            return kept
        kept = before


def _copyright_notice(block: str) -> bool:
    """Whether a block of one line is a copyright notice (see ``_COPYRIGHT``)."""
    return len(block) <= _NOTICE_MAX_CHARS and _COPYRIGHT.search(block) is not None


def _under_heading(before: str) -> bool:
    """Whether the last block of ``before`` is a heading: what follows it is its section (the
    "Copyright notice" section of a site's terms)."""
    return _HEADING_LINE.match(_last_block(before)) is not None


def _introduced(before: str) -> bool:
    """Whether the last block of ``before`` is a heading or a label ending with ":"."""
    return _under_heading(before) or _last_block(before).strip("*_ \t").endswith(":")


def _last_block(markdown: str) -> str:
    return markdown.rpartition("\n\n")[2].strip()


def _link_list(block: str) -> bool:
    """Whether a Markdown block is a list of at least ``_LINK_LIST_MIN_ITEMS`` items, each one
    link and at most a few characters besides (a date)."""
    if len(block) > _LINK_LIST_MAX_CHARS:
        return False
    starts = [m.start() for m in _ITEM_START.finditer(block)]
    if len(starts) < _LINK_LIST_MIN_ITEMS or starts[0] != 0:
        return False
    for start, end in zip(starts, [*starts[1:], len(block)], strict=True):
        if end - start > _ITEM_MAX_CHARS:
            return False
        item = _ITEM_START.sub("", block[start:end], count=1)
        links = _ONE_LINK.findall(item)
        if len(links) != 1:
            return False
        if len("".join(_ONE_LINK.sub("", item).split())) > _ITEM_OTHER_MAX_CHARS:
            return False
    return True


def _left_section(line: str, root: etree._Element) -> bool:
    """Whether ``line`` is a Markdown heading whose section in ``root`` has text after it
    (left out of the result). A heading with nothing but pictures after it, or with nothing
    at all, is the page's own; it stays."""
    heading = _HEADING_LINE.match(line)
    if heading is None:
        return False
    label = line[heading.end() :].strip()
    if not _BOX_HEAD.fullmatch(label):
        return False  # Markdown syntax in it: not compared with the page's text
    for element in _HEADINGS(root, label=label):
        if any(single_spaced(text_of(after)) for after in element.itersiblings()):
            return True
    return False


def _box_head(label: str, root: etree._Element) -> bool:
    """Whether ``label`` is the text of the head of a box of links, in ``root``: the rest of
    the box (the head's parent) is link text."""
    if (
        len(label) > _BOX_HEAD_MAX_CHARS
        or len(label.split()) > _BOX_HEAD_MAX_WORDS
        or not _BOX_HEAD.fullmatch(label)
    ):
        return False
    for node in _TEXT_NODES(root, label=label):
        if not getattr(node, "is_text", False):
            continue
        head = node.getparent()
        box = head.getparent() if head is not None else None
        if box is None:
            continue
        rest = len(single_spaced(text_of(box))) - len(label)
        link_chars = sum(
            len(single_spaced(text_of(a)))
            for a in box.iter("a")
            if a.get("href") and head not in a.iterancestors()
        )
        if rest > 0 and link_chars >= _BOX_MIN_LINK_SHARE * rest:
            return True
    return False
