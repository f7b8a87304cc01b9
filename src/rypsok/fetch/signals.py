"""Bounded boolean DOM evidence for access classification, collected inside a worker.

Only booleans leave this module (ADR-0005): whether a visible password control exists, whether
it sits in an identity form, whether that form is outside site chrome, and whether the page
has usable content outside forms. No label, value or text is returned.
"""

from __future__ import annotations

from lxml import etree

from rypsok.fetch.access import AccessSignals

USABLE_CONTENT_CHARS = 280
_IDENTITY_TYPES = frozenset({"", "text", "email", "tel"})
_SUBMIT_TYPES = frozenset({"submit", "image"})
_CHROME = frozenset({"nav", "header", "footer", "aside"})


def _type(el: etree._Element) -> str:
    return (el.get("type") or "").strip().lower()


def login_form(root: etree._Element) -> tuple[bool, bool, bool]:
    """(password control, identity form, form outside chrome) of the visible tree."""
    password = identity = in_main = False
    for field in root.iter("input"):
        if _type(field) != "password":
            continue
        password = True
        form = next(field.iterancestors("form"), None)
        scope = form if form is not None else field.getparent()
        if scope is None:
            continue
        has_identity = (
            any(
                _type(other) in _IDENTITY_TYPES or _type(other) in _SUBMIT_TYPES
                for other in scope.iter("input")
                if other is not field
            )
            or next(scope.iter("button"), None) is not None
        )
        if has_identity:
            identity = True
            if not any(a.tag in _CHROME for a in field.iterancestors()):
                in_main = True
    return password, identity, in_main


def text_outside_forms(root: etree._Element) -> int:
    """Characters of visible text outside forms (whitespace collapsed), counted by libxml2."""
    body = root.find("body")
    scope = body if body is not None else root
    total = int(scope.xpath("string-length(normalize-space(.))"))
    for form in scope.xpath(".//form[not(ancestor::form)]"):
        total -= int(form.xpath("string-length(normalize-space(.))"))
    return max(total, 0)


def collect(root: etree._Element, form: tuple[bool, bool, bool]) -> AccessSignals:
    """Combine the login-form evidence (taken before chrome removal) with usable content."""
    password, identity, in_main = form
    return AccessSignals(
        password_control=password,
        identity_form=identity,
        form_in_main=in_main,
        usable_content=text_outside_forms(root) >= USABLE_CONTENT_CHARS,
    )
