"""Finding and masking credentials in a query or URL (REQ-PRIV-002).

A match carries the kind and the position only. Nothing here keeps, logs, raises or
reprs the matched value: the caller reports ``kind`` and ``start`` and nothing else.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Final

from rypsok.privacy.formats import FORMATS, is_placeholder

REDACTED: Final = "[REDACTED]"


@dataclass(frozen=True, slots=True)
class CredentialMatch:
    """Where a credential of one kind sits in a text, in Unicode scalar values (LIM-U1)."""

    kind: str
    start: int
    end: int


def find_credentials(text: str) -> list[CredentialMatch]:
    """Find high-confidence credentials in ``text``: sorted by start, non-overlapping.

    Where two formats overlap (a JWT inside a webhook URL, say), they become one match of
    the kind that starts first (of two starting together, the longer one) that covers both:
    dropping the later one would leave its tail unmasked.
    """
    candidates = [
        CredentialMatch(str(fmt.kind), found.start(), found.end())
        for fmt in FORMATS
        for found in fmt.pattern.finditer(text)
        if not is_placeholder(found)
    ]
    candidates.sort(key=lambda match: (match.start, -match.end))
    chosen: list[CredentialMatch] = []
    for match in candidates:
        if not chosen or match.start >= chosen[-1].end:
            chosen.append(match)
        elif match.end > chosen[-1].end:
            chosen[-1] = replace(chosen[-1], end=match.end)
    return chosen


def mask(text: str, matches: Sequence[CredentialMatch]) -> str:
    """Replace each matched span of ``text`` by ``[REDACTED]``.

    Accepts the output of :func:`find_credentials`; overlapping or unsorted spans are
    merged rather than rejected. A span outside the text raises ``ValueError`` (whose
    message names positions only).
    """
    pieces: list[str] = []
    position = 0
    for match in sorted(matches, key=lambda m: (m.start, m.end)):
        if not 0 <= match.start < match.end <= len(text):
            raise ValueError(
                f"credential span {match.start}..{match.end} is not inside a text of "
                f"{len(text)} characters"
            )
        if match.start < position:  # overlaps the previous span: extend it
            if match.end > position:
                position = match.end
            continue
        pieces.append(text[position : match.start])
        pieces.append(REDACTED)
        position = match.end
    pieces.append(text[position:])
    return "".join(pieces)


_MAX_MASKING_ROUNDS: Final = 8


def redact(text: str) -> str:
    """``text`` with every credential masked, re-checked until none is left.

    One masking round is not always enough: a masked span shortens the text, so a pattern
    with a bounded gap (the private-key block) can then reach a base64 run it could not
    reach before. Every format is longer than ``[REDACTED]``, so each round shortens the
    text; a text that still holds a credential after the last round is redacted whole.
    """
    for _ in range(_MAX_MASKING_ROUNDS):
        matches = find_credentials(text)
        if not matches:
            return text
        text = mask(text, matches)
    return text if not find_credentials(text) else REDACTED
