"""Main-content extraction quality on the fixture corpus (REQ-FETCH-002, REQ-PAGE-002).

For every page of ``tests/fetch/corpus`` the extracted text is compared with the page's
hand-labelled main text (``main_text`` of its sidecar): Markdown syntax and link targets are
stripped, both texts are split into tokens (case-folded words; every CJK character is a token),
and token-level precision, recall and F1 are computed on the token multisets.

Systems, measured in the same run on the same bytes:

* ``rypsok``: the production pipeline (media type, charset, bounded parsing, noise removal,
  trafilatura with rypsok's settings and the readability-like fallback), run in worker
  processes through :class:`rypsok.fetch.Extractor` exactly as web_fetch runs it;
* ``rypsok/default`` and ``rypsok/precision``: the same pipeline in this process with
  trafilatura's ``favor_recall`` replaced by its default or by ``favor_precision`` (the
  settings that were not chosen);
* ``trafilatura``, ``trafilatura/precision``, ``trafilatura/recall``: trafilatura 2 called
  directly on the raw bytes with Markdown output and links, as a library user would.

usage: python bench/extraction_quality.py [--markdown] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import unicodedata
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import trafilatura

from rypsok.fetch import Extractor
from rypsok.fetch import extract as rypsok_extract
from rypsok.fetch.pipeline import run as run_pipeline

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "fetch" / "corpus"

_LINK_TARGET = re.compile(r"\]\([^)\s]*\)")
_WORD = re.compile(r"\w+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")


def tokens(text: str) -> list[str]:
    """Tokens of a text: Markdown link targets dropped, words case-folded, CJK per character."""
    text = unicodedata.normalize("NFKC", _LINK_TARGET.sub("]", text)).casefold()
    found: list[str] = []
    for word in _WORD.findall(text):
        if _CJK.search(word):
            found.extend(ch for ch in word)
        else:
            found.append(word)
    return found


def scores(extracted: str, reference: str) -> tuple[float, float, float]:
    """Token-level precision, recall and F1 of ``extracted`` against ``reference``."""
    got, want = Counter(tokens(extracted)), Counter(tokens(reference))
    overlap = sum((got & want).values())
    precision = overlap / sum(got.values()) if got else 0.0
    recall = overlap / sum(want.values()) if want else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def fixtures() -> list[tuple[str, dict[str, Any], bytes]]:
    """(name, sidecar, page bytes) for every fixture of the corpus."""
    found = []
    for sidecar in sorted(CORPUS.glob("*.json")):
        page = next(p for p in CORPUS.glob(sidecar.stem + ".*") if p.suffix != ".json")
        found.append((sidecar.stem, json.loads(sidecar.read_text("utf-8")), page.read_bytes()))
    return found


def _in_process(favor: str) -> Callable[[dict[str, Any], bytes], str]:
    def extract(meta: dict[str, Any], body: bytes) -> str:
        saved = dict(rypsok_extract.TRAFILATURA_OPTIONS)
        rypsok_extract.TRAFILATURA_OPTIONS.update(
            favor_recall=favor == "recall", favor_precision=favor == "precision"
        )
        try:
            result = run_pipeline({"content_type": meta["content_type"], "url": meta["url"]}, body)
        finally:
            rypsok_extract.TRAFILATURA_OPTIONS.clear()
            rypsok_extract.TRAFILATURA_OPTIONS.update(saved)
        return getattr(result, "content", "")

    return extract


def _trafilatura(favor: str | None) -> Callable[[dict[str, Any], bytes], str]:
    def extract(meta: dict[str, Any], body: bytes) -> str:
        result = trafilatura.extract(
            body,
            url=meta["url"],
            output_format="markdown",
            include_links=True,
            include_tables=True,
            favor_precision=favor == "precision",
            favor_recall=favor == "recall",
        )
        return result or ""

    return extract


async def _rypsok_workers(pages: list[tuple[str, dict[str, Any], bytes]]) -> dict[str, str]:
    out: dict[str, str] = {}
    async with Extractor(workers=2, sandbox="none") as extractor:
        for name, meta, body in pages:
            extraction = await extractor.extract(body, meta["content_type"], meta["url"])
            out[name] = extraction.content
    return out


def measure() -> tuple[list[str], dict[str, dict[str, tuple[float, float, float]]]]:
    """Scores per system and page."""
    pages = fixtures()
    outputs: dict[str, dict[str, str]] = {"rypsok": anyio.run(_rypsok_workers, pages)}
    systems: dict[str, Callable[[dict[str, Any], bytes], str]] = {
        "rypsok/default": _in_process("default"),
        "rypsok/precision": _in_process("precision"),
        "trafilatura": _trafilatura(None),
        "trafilatura/precision": _trafilatura("precision"),
        "trafilatura/recall": _trafilatura("recall"),
    }
    for system, extract in systems.items():
        outputs[system] = {name: extract(meta, body) for name, meta, body in pages}
    table = {
        system: {name: scores(out[name], meta["main_text"]) for name, meta, _ in pages}
        for system, out in outputs.items()
    }
    return [name for name, _, _ in pages], table


def markdown(names: list[str], table: dict[str, dict[str, tuple[float, float, float]]]) -> str:
    """F1 per page and system, then mean precision, recall and F1 per system."""
    systems = list(table)
    lines = ["| page | " + " | ".join(systems) + " |", "|---" * (len(systems) + 1) + "|"]
    for name in names:
        lines.append(
            f"| {name} | " + " | ".join(f"{table[s][name][2]:.3f}" for s in systems) + " |"
        )
    for label, index in (("mean precision", 0), ("mean recall", 1), ("mean F1", 2)):
        means = [sum(table[s][n][index] for n in names) / len(names) for s in systems]
        lines.append(f"| **{label}** | " + " | ".join(f"**{m:.3f}**" for m in means) + " |")
    return "\n".join(lines) + "\n"


def main() -> int:
    """Measure and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="also write the scores as JSON")
    args = parser.parse_args()
    names, table = measure()
    sys.stdout.write(markdown(names, table))
    if args.json:
        args.json.write_text(json.dumps(table, indent=2) + "\n", "utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
