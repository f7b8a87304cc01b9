"""web_fetch after the bytes arrived: media type, charset, contained extraction, focus, budget.

Public API (the service calls nothing else)::

    class Extractor:                       # rypsok.fetch.extractor
        def __init__(self, workers: int = 2, sandbox: "auto" | "bwrap" | "none" = "auto",
                     timeout_s: float = 8.0, memory_bytes: int = 1 GiB) -> None
        def containment(self) -> str       # "process+rlimits" or "process+rlimits+bwrap"
        async def start(self) -> None        # at warm-up: every worker boots now
        async def extract(self, body: bytes | Body, content_type: str | None, url: str, *,
                          status: int = 200, headers: Mapping[str, str] | None = None,
                          redirected: bool = False,
                          timeout_s: float | None = None) -> Extraction   # ExtractionError
        async def aclose(self) -> None

    def select_and_budget(extraction: Extraction, *, fragment: str | None = None,
                          focus: str | None = None, start_char: int | None = None,
                          max_chars: int) -> PageView                  # StartCharBeyondEnd
    async def select_and_budget_async(...same...) -> PageView   # in a thread for big pages
    def fetch_response(extraction: Extraction, view: PageView, *, url: str,
                       notices: Sequence[Notice] = ()) -> FetchResponse
    def classify_access(*, status, headers, url, redirected, signals) -> AccessVerdict
    Extraction.map_text(clean: Callable[[str], str]) -> Extraction   # boundary cleaning hook

See ``docs/extraction.md`` for the design, the measurements and the limits.

Modules, one reason to change each: ``media`` (type decision), ``charset`` (decoding),
``parse`` (bounded HTML parsing), ``clean`` (noise removal), ``extract``, ``readability`` and
``markdown`` (main content), ``feeds`` (RSS/Atom), ``signals`` and ``access`` (access
classification), ``sections`` and ``focus`` (section index and selection), ``budget``
(projection-first budget), ``pipeline`` (the job a worker runs), ``protocol`` (parent/worker
frames), ``worker`` (the worker process), ``pool`` (worker processes), ``sandbox``
(containment), ``extractor`` (the entry point), ``model`` (:class:`Extraction`), ``response``
(FetchResponse assembly), ``body`` (a body handed to extraction once), ``memory`` (big buffers
returned to the system).
"""

from __future__ import annotations

from rypsok.fetch.access import AccessSignals, AccessVerdict, classify_access
from rypsok.fetch.budget import PageView, select_and_budget, select_and_budget_async
from rypsok.fetch.errors import ExtractionError, StartCharBeyondEnd
from rypsok.fetch.extractor import Extractor
from rypsok.fetch.model import Extraction
from rypsok.fetch.response import fetch_response

__all__ = [
    "AccessSignals",
    "AccessVerdict",
    "Extraction",
    "ExtractionError",
    "Extractor",
    "PageView",
    "StartCharBeyondEnd",
    "classify_access",
    "fetch_response",
    "select_and_budget",
    "select_and_budget_async",
]
