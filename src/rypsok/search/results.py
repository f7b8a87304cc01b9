"""From raw engine results to cleaned results, counting every change for the notices.

The content boundary runs here, in the pipeline and not in the drivers (REQ-ENG-012): the URL
becomes the returned URL (REQ-RANK-003) or the result is dropped (REQ-CTX-006); title and
snippet are cleaned and bounded (REQ-CTX-004, REQ-SEC-015); instruction-like text is noticed,
or dropped when the operator says so (REQ-SEC-003); a date that is not a calendar date written
``YYYY-MM-DD`` is dropped, whatever its source (a driver, or a value read back from a shared
cache, SEC-16), so that ``date`` never carries text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date as calendar_date

from rypsok.boundary import clean_field
from rypsok.contract.notices import Notice, notice
from rypsok.contract.vocabulary import NoticeCode
from rypsok.engines.base import RawResult
from rypsok.search.fuse import EngineResult
from rypsok.search.normalize import returned_url

_ISO_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def checked_date(value: str | None) -> str | None:
    """``value`` when it is a calendar date written ``YYYY-MM-DD``, else None (SEC-16)."""
    if value is None or not _ISO_DATE.fullmatch(value):
        return None
    try:
        calendar_date.fromisoformat(value)
    except ValueError:  # 2026-02-30 and the like
        return None
    return value


@dataclass(slots=True)
class CleaningTally:
    """How many external texts each cleaning step changed, over one call."""

    dropped_url: int = 0
    dropped_instruction_like: int = 0
    titles_truncated: int = 0
    snippets_truncated: int = 0
    markup_removed: int = 0
    invisible_removed: int = 0
    instruction_like: int = 0

    def notices(self) -> list[Notice]:
        """One notice per kind of change, in a fixed order (CLR-11)."""
        pairs = (
            (NoticeCode.RESULTS_DROPPED_URL, self.dropped_url),
            (NoticeCode.RESULTS_DROPPED_INSTRUCTION_LIKE, self.dropped_instruction_like),
            (NoticeCode.TITLE_TRUNCATED, self.titles_truncated),
            (NoticeCode.SNIPPET_TRUNCATED, self.snippets_truncated),
            (NoticeCode.MARKUP_REMOVED, self.markup_removed),
            (NoticeCode.INVISIBLE_CHARACTERS_REMOVED, self.invisible_removed),
            (NoticeCode.INSTRUCTION_LIKE_TEXT, self.instruction_like),
        )
        return [notice(code, count=count) for code, count in pairs if count]


def clean_results(
    raw: Sequence[RawResult],
    *,
    title_max_chars: int,
    snippet_max_chars: int,
    url_max_chars: int,
    drop_instruction_like: bool,
    tally: CleaningTally,
) -> list[EngineResult]:
    """Clean one engine's results; ranks are kept as the engine gave them."""
    cleaned: list[EngineResult] = []
    for result in raw:
        url = returned_url(result.url, url_max_chars)
        if url is None:
            tally.dropped_url += 1
            continue
        title = clean_field(result.title, title_max_chars)
        snippet = clean_field(result.snippet, snippet_max_chars)
        instruction_like = title.instruction_like or snippet.instruction_like
        if instruction_like and drop_instruction_like:
            tally.dropped_instruction_like += 1
            continue
        tally.titles_truncated += title.truncated
        tally.snippets_truncated += snippet.truncated
        tally.markup_removed += title.markup_removed + snippet.markup_removed
        tally.invisible_removed += title.invisible_removed + snippet.invisible_removed
        tally.instruction_like += instruction_like
        cleaned.append(
            EngineResult(
                url=url,
                title=title.text,
                snippet=snippet.text,
                date=checked_date(result.date),
                rank=result.rank,
            )
        )
    return cleaned
