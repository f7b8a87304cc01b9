"""A readability-like choice of the main content (the fallback of :mod:`rypsok.fetch.extract`).

After Mozilla's Readability: every paragraph-like element with some text scores by its length
and commas; the score goes to its ancestors up to five levels, divided by the distance; an
ancestor starts from a bonus for its tag and for words like "article" or "content" in its id or
class (and a malus for "sidebar", "footer", "comment"...); the best candidates are discounted by
their link density. The winner and those of its siblings that score close to it are the main
content. A ``<main>``, ``role="main"`` or single ``<article>`` wins outright. The choice also
says whether it rests on several similar blocks (forum posts, FAQ entries): the evidence
:mod:`rypsok.fetch.extract` needs before it prefers this choice to trafilatura's.

Bounded: at most :data:`MAX_SCORED` elements are scored and link density is computed for the
:data:`TOP_CANDIDATES` best only, so the cost stays linear on hostile trees.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lxml import etree

from rypsok.fetch.parse import single_spaced, text_of

MAX_SCORED = 10_000
TOP_CANDIDATES = 20
_ALTERNATIVES = 3
_MIN_CHARS = 25
_LEVELS = 5
_SCORED_TAGS = ("p", "pre", "td", "blockquote", "dd", "li", "div", "section")
_POSITIVE = re.compile(
    r"article|body|content|entry|hentry|h-entry|main|page|post|text|blog|story|thread|topic",
    re.IGNORECASE,
)
_NEGATIVE = re.compile(
    r"hidden|banner|combx|comment|com-|contact|foot|footer|footnote|gdpr|masthead|media|meta"
    r"|outbrain|promo|related|scroll|share|shoutbox|sidebar|skyscraper|sponsor|shopping|tags"
    r"|widget|nav|menu|breadcrumb|pagination|pager|popup|signup|newsletter",
    re.IGNORECASE,
)
_TAG_BONUS = {
    "div": 5,
    "section": 3,
    "pre": 3,
    "td": 3,
    "blockquote": 3,
    "address": -3,
    "ol": -3,
    "ul": -3,
    "dl": -3,
    "dd": -3,
    "dt": -3,
    "li": -3,
    "form": -3,
    "h1": -5,
    "h2": -5,
    "h3": -5,
    "h4": -5,
    "h5": -5,
    "h6": -5,
    "th": -5,
}
_COMMAS = re.compile(r"[,，、،]")
_BLOCK_CHILDREN = frozenset(
    {
        "p",
        "div",
        "section",
        "article",
        "table",
        "ul",
        "ol",
        "pre",
        "blockquote",
        "dl",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "form",
        "header",
        "footer",
        "aside",
        "nav",
        "main",
    }
)


def class_weight(el: etree._Element) -> int:
    """+25 for content-like id/class words, -25 for chrome-like ones (both can apply)."""
    marker = f"{el.get('id') or ''} {el.get('class') or ''}"
    if not marker.strip():
        return 0
    weight = 0
    if _NEGATIVE.search(marker):
        weight -= 25
    if _POSITIVE.search(marker):
        weight += 25
    return weight


def _link_density(el: etree._Element, text_length: int) -> float:
    if not text_length:
        return 1.0
    links = sum(len(single_spaced(text_of(a))) for a in el.iter("a"))
    return min(links / text_length, 1.0)


def _scored(el: etree._Element) -> str | None:
    """The text of a paragraph-like element, or ``None`` when it does not count."""
    if el.tag in ("div", "section") and any(
        isinstance(c.tag, str) and c.tag in _BLOCK_CHILDREN for c in el
    ):
        return None  # a container: its paragraphs count, not itself
    text = single_spaced(text_of(el))
    return text if len(text) >= _MIN_CHARS else None


def _initial(el: etree._Element) -> float:
    return float(_TAG_BONUS.get(el.tag, 0) + class_weight(el))


def candidates(top: etree._Element) -> dict[etree._Element, float]:
    """Every scored ancestor and its score, before link density."""
    scores: dict[etree._Element, float] = {}
    counted = 0
    for el in top.iter(*_SCORED_TAGS):
        text = _scored(el)
        if text is None:
            continue
        counted += 1
        if counted > MAX_SCORED:
            break
        score = 1.0 + len(_COMMAS.findall(text)) + min(len(text) // 100, 3)
        for level, ancestor in enumerate(el.iterancestors()):
            if level >= _LEVELS:
                break
            if ancestor not in scores:
                scores[ancestor] = _initial(ancestor)
            scores[ancestor] += score / (1 if level == 0 else 2 if level == 1 else level * 3)
            if ancestor is top:
                break
    return scores


def _common_ancestor(
    winner: etree._Element, final: dict[etree._Element, float], top: etree._Element
) -> etree._Element:
    """Readability's step for pages of several similar blocks (forum posts, FAQ entries):
    when at least three near-best candidates share an ancestor, that ancestor is the content."""
    near = [el for el in final if el is not winner and final[el] >= 0.75 * final[winner]]
    if len(near) < _ALTERNATIVES:
        return winner
    ancestry = [set(el.iterancestors()) for el in near]
    for ancestor in winner.iterancestors():
        if ancestor is top:
            break
        if sum(ancestor in chain for chain in ancestry) >= _ALTERNATIVES:
            return ancestor
    return winner


@dataclass(frozen=True, slots=True)
class MainChoice:
    """The elements that hold the main content, in document order, and whether they were
    chosen as the shared ancestor of several similar blocks."""

    elements: tuple[etree._Element, ...]
    similar_blocks: bool = False


def main_choice(root: etree._Element) -> MainChoice:
    """The main content's elements and the evidence they were chosen on."""
    for xpath in (".//main", ".//*[@role='main']", ".//article"):
        found = root.xpath(xpath)
        if len(found) == 1:
            return MainChoice((found[0],))
    body = root.find("body")
    top: etree._Element = body if body is not None else root
    scores = candidates(top)
    if not scores:
        return MainChoice((top,))
    best = sorted(scores, key=lambda el: -scores[el])[:TOP_CANDIDATES]
    final = {
        el: scores[el] * (1.0 - _link_density(el, len(single_spaced(text_of(el))))) for el in best
    }
    best_single = max(final, key=lambda el: final[el])
    winner = _common_ancestor(best_single, final, top)
    similar = winner is not best_single
    if winner not in final:
        final[winner] = scores.get(winner, 0.0)
    parent = winner.getparent()
    if parent is None or winner is top:
        return MainChoice((winner,), similar)
    threshold = max(10.0, final[winner] * 0.2)
    chosen: list[etree._Element] = []
    for sibling in parent:
        if sibling is winner:
            chosen.append(sibling)
            continue
        score = scores.get(sibling)
        if score is None:
            continue
        adjusted = score * (1.0 - _link_density(sibling, len(single_spaced(text_of(sibling)))))
        if adjusted + (final[winner] * 0.2 if class_weight(sibling) > 0 else 0) >= threshold:
            chosen.append(sibling)
    return MainChoice(tuple(chosen), similar)
