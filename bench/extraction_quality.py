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
  directly on the raw bytes with Markdown output and links, as a library user would;
* ``readability-lxml``: the Python port of Arc90's Readability, ``Document(raw bytes,
  url=...).summary()`` (its own charset detection), the HTML it returns turned into text by
  :func:`html_text`;
* ``resiliparse``: ``extract_plain_text(tree, main_content=True)`` on
  ``HTMLTree.parse_from_bytes(raw bytes, detect_encoding(raw bytes, from_html_meta=True))``,
  as its documentation shows (without ``from_html_meta`` its detector reads two UTF-8 pages of
  the corpus that declare their charset as windows-1250 and ISO 8859-11).

The two alternatives are references only, not dependencies of rypsok; a system whose package
is missing is skipped with a note on standard error. Install them into the venv for the
measurement with::

    pip install readability-lxml resiliparse

The Markdown tables (precision and recall per page for every system, F1 per page, means) go
to standard output; ``--json`` also writes the scores, the means, the library versions and the
skipped systems.

usage: python bench/extraction_quality.py [--json docs/data/extraction_quality.json]
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import json
import platform
import re
import sys
import unicodedata
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import lxml.etree
import lxml.html
import trafilatura

from rypsok.fetch import Extractor
from rypsok.fetch import trafilatura_markdown as rypsok_trafilatura
from rypsok.fetch.pipeline import run as run_pipeline

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "fetch" / "corpus"

_LINK_TARGET = re.compile(r"\]\([^)\s]*\)")
# A backslash escape of Markdown (any ASCII punctuation): "ttl\_seconds" reads "ttl_seconds".
_ESCAPED = re.compile(r"\\([!-/:-@\[-`{-~])")
_WORD = re.compile(r"\w+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")


def tokens(text: str) -> list[str]:
    """Tokens of a text: Markdown link targets and backslash escapes dropped, words
    case-folded, CJK per character."""
    text = _ESCAPED.sub(r"\1", _LINK_TARGET.sub("]", text))
    text = unicodedata.normalize("NFKC", text).casefold()
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


# Elements after which text continues on a new line (so words of adjacent blocks never merge);
# inline elements join their neighbours' text as a browser renders it.
_BLOCKS = frozenset(
    "address article aside blockquote br dd details div dl dt figcaption figure footer form "
    "h1 h2 h3 h4 h5 h6 header hr li main nav ol p pre section summary table td th tr ul".split()
)
_NOT_TEXT = ("script", "style", "template", "noscript")


def html_text(html: str) -> str:
    """Visible text of an HTML fragment that an extractor returned as HTML."""
    if not html.strip():
        return ""
    root = lxml.html.fromstring(html)
    lxml.etree.strip_elements(root, *_NOT_TEXT, with_tail=False)
    for element in root.iter():
        if isinstance(element.tag, str) and element.tag.lower() in _BLOCKS:
            element.tail = "\n" + (element.tail or "")
    return str(root.text_content())


def fixtures() -> list[tuple[str, dict[str, Any], bytes]]:
    """(name, sidecar, page bytes) for every fixture of the corpus."""
    found = []
    for sidecar in sorted(CORPUS.glob("*.json")):
        page = next(p for p in CORPUS.glob(sidecar.stem + ".*") if p.suffix != ".json")
        found.append((sidecar.stem, json.loads(sidecar.read_text("utf-8")), page.read_bytes()))
    return found


def _in_process(favor: str) -> Callable[[dict[str, Any], bytes], str]:
    return with_options(
        {"favor_recall": favor == "recall", "favor_precision": favor == "precision"}
    )


def with_options(overrides: dict[str, bool]) -> Callable[[dict[str, Any], bytes], str]:
    """rypsok's extraction job in this process with these trafilatura settings changed."""

    def extract(meta: dict[str, Any], body: bytes) -> str:
        saved = dict(rypsok_trafilatura.TRAFILATURA_OPTIONS)
        rypsok_trafilatura.TRAFILATURA_OPTIONS.update(overrides)
        try:
            result = run_pipeline({"content_type": meta["content_type"], "url": meta["url"]}, body)
        finally:
            rypsok_trafilatura.TRAFILATURA_OPTIONS.clear()
            rypsok_trafilatura.TRAFILATURA_OPTIONS.update(saved)
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


def _readability() -> Callable[[dict[str, Any], bytes], str] | None:
    try:
        readability = importlib.import_module("readability")
    except ImportError:
        return None

    def extract(meta: dict[str, Any], body: bytes) -> str:
        return html_text(readability.Document(body, url=meta["url"]).summary())

    return extract


def _resiliparse() -> Callable[[dict[str, Any], bytes], str] | None:
    try:
        html2text = importlib.import_module("resiliparse.extract.html2text")
        encoding = importlib.import_module("resiliparse.parse.encoding")
        html = importlib.import_module("resiliparse.parse.html")
    except ImportError:
        return None

    def extract(meta: dict[str, Any], body: bytes) -> str:
        charset = encoding.detect_encoding(body, from_html_meta=True) or "utf-8"
        tree = html.HTMLTree.parse_from_bytes(body, charset)
        return str(html2text.extract_plain_text(tree, main_content=True))

    return extract


# Reference systems from packages that are not rypsok dependencies: (system, package, factory).
OPTIONAL = (
    ("readability-lxml", "readability-lxml", _readability),
    ("resiliparse", "resiliparse", _resiliparse),
)

Scores = dict[str, dict[str, tuple[float, float, float]]]


def optional_systems() -> tuple[dict[str, Callable[[dict[str, Any], bytes], str]], list[str]]:
    """The reference systems whose package is installed, and the names of the others (each
    skipped one is noted on standard error with its install command)."""
    available: dict[str, Callable[[dict[str, Any], bytes], str]] = {}
    skipped: list[str] = []
    for system, package, factory in OPTIONAL:
        extractor = factory()
        if extractor is None:
            skipped.append(system)
            sys.stderr.write(f"note: {system} skipped: `pip install {package}` to measure it\n")
        else:
            available[system] = extractor
    return available, skipped


async def _rypsok_workers(pages: list[tuple[str, dict[str, Any], bytes]]) -> dict[str, str]:
    out: dict[str, str] = {}
    async with Extractor(workers=2, sandbox="none") as extractor:
        for name, meta, body in pages:
            extraction = await extractor.extract(body, meta["content_type"], meta["url"])
            out[name] = extraction.content
    return out


def measure() -> tuple[list[str], Scores, list[str]]:
    """Scores per system and page, and the systems skipped because their package is missing."""
    pages = fixtures()
    outputs: dict[str, dict[str, str]] = {"rypsok": anyio.run(_rypsok_workers, pages)}
    systems: dict[str, Callable[[dict[str, Any], bytes], str]] = {
        "rypsok/default": _in_process("default"),
        "rypsok/precision": _in_process("precision"),
        "trafilatura": _trafilatura(None),
        "trafilatura/precision": _trafilatura("precision"),
        "trafilatura/recall": _trafilatura("recall"),
    }
    available, skipped = optional_systems()
    systems.update(available)
    for system, extract in systems.items():
        outputs[system] = {name: extract(meta, body) for name, meta, body in pages}
    table = {
        system: {name: scores(out[name], meta["main_text"]) for name, meta, _ in pages}
        for system, out in outputs.items()
    }
    return [name for name, _, _ in pages], table, skipped


def means(names: list[str], table: Scores) -> dict[str, tuple[float, float, float]]:
    """Mean precision, recall and F1 over the pages, per system."""
    return {
        system: (
            sum(scored[n][0] for n in names) / len(names),
            sum(scored[n][1] for n in names) / len(names),
            sum(scored[n][2] for n in names) / len(names),
        )
        for system, scored in table.items()
    }


# Systems of the first precision/recall table; the settings variants get the second one.
MAIN = ("rypsok", "trafilatura", "readability-lxml", "resiliparse")


def _pr_table(names: list[str], table: Scores, systems: list[str]) -> list[str]:
    mean = means(names, table)
    head = ["page", *(f"{s} {m}" for s in systems for m in ("P", "R"))]
    lines = ["| " + " | ".join(head) + " |", "|---" * len(head) + "|"]
    for name in names:
        cells = (f"{table[s][name][i]:.3f}" for s in systems for i in (0, 1))
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    cells = (f"**{mean[s][i]:.3f}**" for s in systems for i in (0, 1))
    lines.append("| **mean** | " + " | ".join(cells) + " |")
    return lines


def markdown(names: list[str], table: Scores) -> str:
    """Precision and recall per page (main systems, then settings variants), then F1."""
    main_systems = [s for s in MAIN if s in table]
    variants = [s for s in table if s not in MAIN]
    systems = list(table)
    mean = means(names, table)
    lines = ["Precision (P) and recall (R) per page:", ""]
    lines += _pr_table(names, table, main_systems)
    lines += ["", "Precision (P) and recall (R) per page, settings not chosen:", ""]
    lines += _pr_table(names, table, variants)
    lines += ["", "F1 per page:", ""]
    lines += ["| page | " + " | ".join(systems) + " |", "|---" * (len(systems) + 1) + "|"]
    for name in names:
        lines.append(
            f"| {name} | " + " | ".join(f"{table[s][name][2]:.3f}" for s in systems) + " |"
        )
    for label, index in (("mean precision", 0), ("mean recall", 1), ("mean F1", 2)):
        cells = (f"**{mean[s][index]:.3f}**" for s in systems)
        lines.append(f"| **{label}** | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _versions() -> dict[str, str | None]:
    found: dict[str, str | None] = {"python": platform.python_version()}
    for package in ("trafilatura", "lxml", "charset-normalizer", "readability-lxml", "resiliparse"):
        try:
            found[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            found[package] = None
    found["libxml2"] = ".".join(map(str, lxml.etree.LIBXML_VERSION))
    return found


def report(names: list[str], table: Scores, skipped: list[str]) -> dict[str, Any]:
    """The JSON document: scores per system and page, means, versions, skipped systems."""
    keys = ("precision", "recall", "f1")
    return {
        "benchmark": "extraction_quality",
        "versions": _versions(),
        "skipped": skipped,
        "pages": names,
        "mean": {s: dict(zip(keys, m, strict=True)) for s, m in means(names, table).items()},
        "scores": {
            system: {name: dict(zip(keys, value, strict=True)) for name, value in scored.items()}
            for system, scored in table.items()
        },
    }


def main() -> int:
    """Measure and print the tables."""
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        usage="python bench/extraction_quality.py [--json docs/data/extraction_quality.json]",
    )
    parser.add_argument("--json", type=Path, help="also write the scores as JSON")
    args = parser.parse_args()
    names, table, skipped = measure()
    sys.stdout.write(markdown(names, table))
    if args.json:
        text = json.dumps(report(names, table, skipped), indent=2, ensure_ascii=False)
        args.json.write_text(text + "\n", "utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
