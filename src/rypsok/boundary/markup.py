"""The markup step of title and snippet cleaning (REQ-CTX-004).

Engines deliver titles and snippets with highlighting tags (``<b>``, ``<em>``), stray
comments, and now and then a whole ``<script>`` block. This step removes HTML markup and
keeps everything else as text: ``a < b and c > d``, ``x<y`` and ``List<String>`` are text,
not tags, because an agent reading a code or math snippet needs them.

A tag is recognised only when it is complete (it has its ``>``) and names a known HTML
element, a custom element (``<my-widget>``) or a namespaced one (``<o:p>``). Mixed-case
names such as ``<Image>`` are text: real markup is lower- or upper-case, generic type
parameters are capitalised. ``a<b>c`` stays ambiguous and is read as markup, as a browser
would.

Raw-text elements (script, style, template, noscript) lose their contents too, since a
browser never renders them; like other tags their names must be lower- or upper-case, so
``Vec<Template>`` in a code snippet does not swallow the rest of the text.

Every pattern is linear: no part of a tag can cross a ``<``, so each attempt scans at most
to the next ``<``; comments and raw-text elements that never close run to the end of the
text, once.
"""

from __future__ import annotations

import re
from typing import Final


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Elements of the HTML standard, obsolete ones included (engines still emit <font> and
# <center>), and the two foreign-content roots. Child elements of SVG (<text>, <path>) are
# left out on purpose: as words in angle brackets they are more often code than markup.
_ELEMENTS: Final = _words(
    """
    a abbr acronym address applet area article aside audio b base basefont bdi bdo bgsound
    big blink blockquote body br button canvas caption center cite code col colgroup data
    datalist dd del details dfn dialog dir div dl dt em embed fieldset figcaption figure font
    footer form frame frameset h1 h2 h3 h4 h5 h6 head header hgroup hr html i iframe image img
    input ins isindex kbd keygen label legend li link listing main map mark marquee math menu
    menuitem meta meter multicol nav nextid nobr noembed noframes noscript object ol optgroup
    option output p param picture plaintext pre progress q rb rp rt rtc ruby s samp script
    search section select slot small source spacer span strike strong style sub summary sup
    svg table tbody td template textarea tfoot th thead time title tr track tt u ul var video
    wbr xmp
    """
)

# Elements that separate words when rendered: their tags become a space, so that
# "<p>one</p><p>two</p>" reads "one two" and not "onetwo". Inline tags vanish without one.
_BREAKING: Final = _words(
    """
    address article aside blockquote body br caption center dd details dialog dir div dl dt
    fieldset figcaption figure footer form h1 h2 h3 h4 h5 h6 head header hgroup hr html li
    listing main menu nav ol option p plaintext pre section summary table tbody td tfoot th
    thead title tr ul xmp
    """
)

_NAME: Final = r"[A-Za-z][A-Za-z0-9]*(?:[:-][A-Za-z0-9]+)*"
# Case-sensitive on purpose: "Vec<Template>" is a type, see _is_markup_name.
_RAW_NAME: Final = r"(?-i:script|style|template|noscript|SCRIPT|STYLE|TEMPLATE|NOSCRIPT)"
# Attribute values may hold ">" but never "<": that bound keeps every attempt local.
_ATTRS: Final = r"""(?>(?:\s+[^\s"'<>/=]+(?:\s*=\s*(?:"[^"<]*"|'[^'<]*'|[^\s"'=<>`]+))?)*)"""

_MARKUP: Final = re.compile(
    rf"""
      (?P<comment><!--(?:-?>|.*?(?:--!?>|\Z)))
    | (?P<raw><(?P<rawname>{_RAW_NAME}){_ATTRS}\s*/?>
          .*?(?:</(?P=rawname)(?:\s[^<>]*)?>|\Z))
    | (?P<tag></?(?P<name>{_NAME}){_ATTRS}\s*/?>)
    | (?P<decl><![A-Za-z\[][^<>]*>|<\?[^<>]*>)
    """,
    re.IGNORECASE | re.DOTALL | re.VERBOSE,
)


def _is_markup_name(name: str) -> bool:
    lowered = name.lower()
    if lowered in _ELEMENTS:
        # "<Image>" or "<Option>" is a type name in a code snippet, not an element.
        return name == lowered or name == name.upper()
    # Custom elements need a hyphen, namespaced ones a colon; both are lower-case.
    return name == lowered and ("-" in name or ":" in name)


def _replace(match: re.Match[str]) -> str:
    name = match.group("name")
    if name is None:
        return ""  # a comment, a raw-text element with its contents, or a declaration
    if not _is_markup_name(name):
        return match.group(0)
    return " " if name.lower() in _BREAKING else ""


def remove_markup(text: str) -> tuple[str, bool]:
    """Remove HTML tags, comments, declarations and script/style contents from ``text``.

    Returns the text and whether anything was removed. Entities are left alone: they are
    decoded by the next step, so that ``&lt;b&gt;`` ends as the text ``<b>``.
    """
    if "<" not in text:
        return text, False
    cleaned = _MARKUP.sub(_replace, text)
    return cleaned, cleaned != text
