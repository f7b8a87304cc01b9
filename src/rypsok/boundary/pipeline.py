"""The content boundary: how external text is cleaned before it reaches a caller.

The order of the steps is the contract of REQ-CTX-004 and lives in exactly one place,
:func:`field_stages` (titles and snippets) and :data:`CONTENT_STAGES` (fetched content).
Each step is a pure function ``str -> (str, changed)``; a stage names the flag of
:class:`Cleaned` that the step's change sets, if any.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Final, Literal

from rypsok.boundary.instructions import is_instruction_like
from rypsok.boundary.invisible import remove_invisible
from rypsok.boundary.markup import remove_markup
from rypsok.boundary.text_steps import Step, bounded, collapse_whitespace, decode_entities

Effect = Literal["markup_removed", "invisible_removed", "truncated"]


@dataclass(frozen=True, slots=True)
class Cleaned:
    """A cleaned external text and what cleaning did to it (the source of the notices)."""

    text: str
    markup_removed: bool
    invisible_removed: bool
    truncated: bool
    instruction_like: bool


@dataclass(frozen=True, slots=True)
class Stage:
    """One step of a pipeline, and the flag its change reports (None: not reported)."""

    step: Step
    reports: Effect | None = None


@lru_cache(maxsize=32)
def field_stages(max_chars: int) -> tuple[Stage, ...]:
    """The cleaning of titles and snippets, in the order REQ-CTX-004 prescribes."""
    return (
        Stage(remove_markup, "markup_removed"),
        Stage(decode_entities),
        Stage(collapse_whitespace),
        Stage(remove_invisible, "invisible_removed"),
        # Removing "a \u200b b"'s invisible character leaves two spaces, or a space at an
        # end; collapsing once more keeps the result clean and cleaning idempotent.
        Stage(collapse_whitespace),
        Stage(bounded(max_chars), "truncated"),
    )


_LINE_BREAK: Final = re.compile("\r\n?")


def normalize_line_breaks(text: str) -> tuple[str, bool]:
    """Turn CR LF and a lone CR into LF, so that removing controls never joins two lines."""
    if "\r" not in text:
        return text, False
    return _LINE_BREAK.sub("\n", text), True


# Fetched Markdown keeps its layout: only line breaks are unified and invisible
# characters removed; the bound (max_chars) is applied later, by the fetch pipeline.
CONTENT_STAGES: Final = (
    Stage(normalize_line_breaks),
    Stage(remove_invisible, "invisible_removed"),
)


def run_stages(text: str, stages: tuple[Stage, ...]) -> tuple[str, frozenset[Effect]]:
    """Run ``stages`` over ``text``; return the result and the effects that occurred."""
    effects: set[Effect] = set()
    for stage in stages:
        text, changed = stage.step(text)
        if changed and stage.reports is not None:
            effects.add(stage.reports)
    return text, frozenset(effects)


def _cleaned(text: str, effects: frozenset[Effect]) -> Cleaned:
    return Cleaned(
        text=text,
        markup_removed="markup_removed" in effects,
        invisible_removed="invisible_removed" in effects,
        truncated="truncated" in effects,
        # Judged on what the caller receives: after invisible characters are gone (so they
        # cannot split a phrase) and after markup is gone (removed text is never seen).
        instruction_like=is_instruction_like(text),
    )


def clean_field(raw: str, max_chars: int) -> Cleaned:
    """Clean a title or snippet from an engine and bound it to ``max_chars`` (REQ-CTX-004).

    Markup removed, entities decoded once, whitespace collapsed, invisible and control
    characters removed, length bounded in Unicode scalar values (LIM-U1), in that order.
    ``truncated`` reports the cut (REQ-CTX-007); ``instruction_like`` never changes the
    text (REQ-SEC-003).
    """
    if _is_plain(raw) and len(raw) <= max_chars:
        # Every stage would return it unchanged; most titles and snippets are like this.
        return _cleaned(raw, frozenset())
    return _cleaned(*run_stages(raw, field_stages(max_chars)))


def _is_plain(text: str) -> bool:
    """Printable ASCII with no markup, entity, edge space or double space: nothing to clean."""
    return (
        text.isascii()
        and text.isprintable()
        and "<" not in text
        and "&" not in text
        and "  " not in text
        and not text.startswith(" ")
        and not text.endswith(" ")
    )


def clean_content(text: str) -> Cleaned:
    """Clean fetched Markdown or plain text (REQ-SEC-015, REQ-SEC-003).

    Invisible and control characters are removed (tab and line feed kept, CR LF and CR
    become LF); nothing else is rewritten and nothing is cut, so ``markup_removed`` and
    ``truncated`` are always False: bounding to max_chars is the fetch pipeline's step.
    """
    return _cleaned(*run_stages(text, CONTENT_STAGES))
