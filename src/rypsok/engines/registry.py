"""The registry: engine identifier to driver, validated at start (REQ-ENG-004).

Adding an engine means adding its module name here, its module, its admission record page and
its configuration entry, and nothing else (REQ-MAIN-004).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable

from rypsok.engines.base import DriverSpec

# Identifier -> module under rypsok.engines. Order is the default preference order: the
# engines an operator pays for or runs come first, since they were chosen deliberately; the
# keyless defaults follow. [engines.<id>] preference overrides it.
DRIVER_MODULES: dict[str, str] = {
    "brave": "brave",
    "brave_news": "brave_news",
    "kagi": "kagi",
    "exa": "exa",
    "tavily": "tavily",
    "you": "you",
    "mojeek": "mojeek",
    "marginalia": "marginalia",
    "searxng": "searxng",
    "wikipedia": "wikipedia",
    "wikidata": "wikidata",
    "hackernews": "hackernews",
    "gdelt": "gdelt",
    "arxiv": "arxiv",
    "crossref": "crossref",
    "europepmc": "europepmc",
    "openalex": "openalex",
    "semanticscholar": "semanticscholar",
    "pubmed": "pubmed",
    "github": "github",
    "stackexchange": "stackexchange",
    "duckduckgo": "duckduckgo",
}


class UnknownEngineError(KeyError):
    """A configured engine identifier has no driver."""


def load_driver(engine_id: str) -> DriverSpec:
    """Import one driver module and return its spec."""
    module_name = DRIVER_MODULES.get(engine_id)
    if module_name is None:
        raise UnknownEngineError(engine_id)
    module = importlib.import_module(f"rypsok.engines.{module_name}")
    return DriverSpec(
        admission=module.ADMISSION,
        build_request=module.build_request,
        parse=module.parse,
        scraping=bool(getattr(module, "SCRAPING", False)),
        follow_up=getattr(module, "follow_up", None),
    )


def check_identifiers(identifiers: Iterable[str]) -> list[str]:
    """The identifiers that have no driver, in the order given."""
    return [i for i in identifiers if i not in DRIVER_MODULES]
