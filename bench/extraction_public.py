"""Main-content extraction on public benchmark sets kept out of the repository (issue 4).

bench/extraction_quality.py scores web_fetch on rypsok's own labelled corpus; this script scores
it on the public sets other extractors are compared on, read from checkouts of their
repositories (never copied into this one):

* ``--trafilatura-repo PATH``: a checkout of https://github.com/adbar/trafilatura. Its
  evaluation set is ``tests/evaldata.py`` (the dict ``EVAL_PAGES``: per page a ``file`` under
  ``tests/cache/``, ``with`` snippets the main text must contain and ``without`` snippets it
  must not) and the pages in ``tests/cache/``. The file is parsed, never executed: the dict is
  read with :func:`ast.literal_eval`. Pages whose file is missing are counted and skipped.
  Scored as trafilatura's own comparison scripts score it: per page, a ``with`` snippet found in
  the output is a true positive, missing a false negative; a ``without`` snippet found is a
  false positive, absent a true negative; an empty output finds nothing. Counts are summed over
  the pages; precision = TP / (TP + FP), recall = TP / (TP + FN), accuracy = (TP + TN) / all.
  ``comments`` snippets are not counted: they judge comment extraction, which neither rypsok
  nor trafilatura as run here does (trafilatura's comparison scripts leave them out too).
* ``--scrapinghub-repo PATH``: a checkout of
  https://github.com/scrapinghub/article-extraction-benchmark (``html/<id>.html.gz`` and
  ``ground-truth.json``, id -> ``articleBody`` and ``url``). Scored with that benchmark's
  metric, as its ``evaluate.py`` defines it: the text is split into ``\\w+`` tokens (case kept),
  every run of 4 consecutive tokens is a shingle, and per page true positives, false positives
  and false negatives are counted over the shingle multisets and divided by their sum; a page's
  precision is TP / (TP + FP) and its recall TP / (TP + FN) (1 when FP and FN are both 0, 0
  when the numerator and the other term are 0), each averaged over the pages where it is
  defined, and F1 is taken from the two means.

* ``--readability-repo PATH``: a checkout of https://github.com/mozilla/readability. Its test
  pages are ``test/test-pages/<name>/source.html`` with ``expected.html``, the article
  Readability.js takes from the page, reviewed by its maintainers; every folder that holds both
  is a page (the ``extraction/`` and ``detection/`` folders, which hold no such pair, are left
  out). The expected text is the text of ``expected.html``, block elements separated by a
  line break; scored with the ScrapingHub metric above. The pages are read with the base URL
  Readability's own tests give them, ``http://fakehost/test/page.html``. The reference is one
  extractor's output, so this set measures agreement with Readability.js as much as quality.
* ``--newspaper-sdist PATH``: the source distribution of newspaper4k, unpacked
  (``pip download --no-deps --no-binary :all: newspaper4k==0.9.6``; PyPI, not GitHub). Its
  test pages are ``tests/data/html/<name>.html`` with ``tests/data/txt/<name>.txt``, the
  article text newspaper4k's own tests expect (news in English, Arabic, Chinese, Japanese,
  Thai, Spanish, Burmese and Latvian); a page's URL is the ``url`` of
  ``tests/data/metadata/<name>.json`` where there is one. Scored with the ScrapingHub metric.
  Like Readability's, this set measures agreement with one extractor (newspaper4k, which is
  not run here: it would be scored against its own output).

Matching is on plain text. Markdown output (rypsok's, and trafilatura's when asked for it) has
its syntax stripped first (:func:`markdown_text`: link targets, emphasis and code markers, block
markers at line starts, table pipes, backslash escapes); then both the output and each snippet
are NFC-normalised with every run of whitespace written as one space.

Systems, on the same bytes in the same run:

* ``rypsok``: the production pipeline in worker processes through :class:`rypsok.fetch.Extractor`,
  as web_fetch runs it, with the response's media type ``text/html; charset=utf-8`` (the pages
  are read from a checkout as UTF-8 files; a server sending them would say so);
* ``trafilatura``: ``trafilatura.extract`` with plain-text output, tables and no comments, the
  way its own comparison scripts run it;
* ``readability-lxml`` and ``resiliparse`` (bench/extraction_quality.py's calls), when installed
  (``pip install readability-lxml resiliparse``);
* with ``--variants``, rypsok's pipeline in this process with other trafilatura settings than
  the shipped ones (:data:`VARIANTS`), to weigh a change of setting on public pages.

usage: python bench/extraction_public.py (--trafilatura-repo PATH | --scrapinghub-repo PATH
                                          | --readability-repo PATH | --newspaper-sdist PATH)...
                                         [--variants] [--no-optional] [--json FILE]
"""

from __future__ import annotations

import argparse
import ast
import gzip
import importlib.metadata
import json
import re
import sys
import unicodedata
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

import anyio
import lxml.html
import trafilatura
from lxml import etree

from extraction_quality import optional_systems, with_options
from rypsok.fetch import ExtractionError, Extractor

RYPSOK_MEDIA_TYPE = "text/html; charset=utf-8"
SHINGLE_TOKENS = 4
# Settings of rypsok's trafilatura call that were not chosen, measured with --variants.
VARIANTS: dict[str, dict[str, bool]] = {
    "rypsok/balanced": {"favor_recall": False},
    "rypsok/with comments": {"include_comments": True},
}


@dataclass(frozen=True, slots=True)
class Page:
    """One page of a public set: its bytes and what it is scored against."""

    name: str
    url: str
    html: bytes
    with_snippets: tuple[str, ...] = ()
    without_snippets: tuple[str, ...] = ()
    article_body: str | None = None


@dataclass(frozen=True, slots=True)
class Dataset:
    """The pages of one set found in a checkout, and how many the set lists."""

    name: str
    pages: tuple[Page, ...]
    listed: int
    scoring: Literal["snippets", "shingles"]


def _eval_pages_node(source: str) -> ast.expr:
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "EVAL_PAGES" for t in node.targets
        ):
            return node.value
    raise ValueError("no EVAL_PAGES assignment in evaldata.py")


def load_trafilatura_eval(repo: Path) -> Dataset:
    """trafilatura's evaluation set from a checkout (the file is parsed, never run)."""
    source = (repo / "tests" / "evaldata.py").read_text("utf-8")
    entries = ast.literal_eval(_eval_pages_node(source))
    if not isinstance(entries, dict):
        raise ValueError("EVAL_PAGES is not a dict")
    pages = []
    for url, entry in entries.items():
        path = repo / "tests" / "cache" / str(entry["file"])
        if not path.is_file():
            continue
        pages.append(
            Page(
                name=str(entry["file"]),
                url=str(url),
                html=path.read_bytes(),
                with_snippets=tuple(str(s) for s in entry.get("with", ())),
                without_snippets=tuple(str(s) for s in entry.get("without", ())),
            )
        )
    pages.sort(key=lambda p: p.name)
    return Dataset("trafilatura evaluation", tuple(pages), len(entries), "snippets")


def load_scrapinghub(repo: Path) -> Dataset:
    """The ScrapingHub article extraction benchmark from a checkout."""
    truth = json.loads((repo / "ground-truth.json").read_text("utf-8"))
    pages = []
    for key, entry in sorted(truth.items()):
        path = repo / "html" / f"{key}.html.gz"
        if not path.is_file():
            continue
        pages.append(
            Page(
                name=key,
                url=str(entry.get("url") or "https://example.invalid/"),
                html=gzip.decompress(path.read_bytes()),
                article_body=str(entry.get("articleBody") or ""),
            )
        )
    return Dataset("ScrapingHub articles", tuple(pages), len(truth), "shingles")


READABILITY_BASE_URL = "http://fakehost/test/page.html"
_BLOCKS = (
    "address", "article", "aside", "blockquote", "br", "dd", "div", "dl", "dt", "figcaption",
    "figure", "footer", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "li", "main", "nav",
    "ol", "p", "pre", "section", "table", "td", "th", "tr", "ul",
)  # fmt: skip


def html_text(markup: bytes) -> str:
    """The text of an HTML fragment, a line break after each block element (so that words of
    two blocks never run together) and none inside inline markup."""
    root = lxml.html.fragment_fromstring(markup.decode("utf-8"), create_parent="div")
    for element in root.iter(*_BLOCKS):
        element.tail = "\n" + (element.tail or "")
    return str(etree.tostring(root, method="text", encoding="unicode"))


def load_readability(repo: Path) -> Dataset:
    """Readability's test pages from a checkout: each folder with a source and an expected page."""
    pages = []
    folders = sorted(p for p in (repo / "test" / "test-pages").iterdir() if p.is_dir())
    for folder in folders:
        source, expected = folder / "source.html", folder / "expected.html"
        if not (source.is_file() and expected.is_file()):
            continue
        pages.append(
            Page(
                name=folder.name,
                url=READABILITY_BASE_URL,
                html=source.read_bytes(),
                article_body=html_text(expected.read_bytes()),
            )
        )
    return Dataset("Readability test pages", tuple(pages), len(pages), "shingles")


NEWSPAPER_BASE_URL = "http://www.test.com/"  # what newspaper4k's own tests give the pages


def load_newspaper(sdist: Path) -> Dataset:
    """newspaper4k's test pages from its unpacked sdist: each page with an expected text."""
    data = sdist / "tests" / "data"
    pages = []
    for source in sorted((data / "html").glob("*.html")):
        expected = data / "txt" / f"{source.stem}.txt"
        if not expected.is_file():
            continue
        metadata = data / "metadata" / f"{source.stem}.json"
        url = NEWSPAPER_BASE_URL
        if metadata.is_file():
            url = str(json.loads(metadata.read_text("utf-8")).get("url") or url)
        pages.append(
            Page(
                name=source.stem,
                url=url,
                html=source.read_bytes(),
                article_body=expected.read_text("utf-8"),
            )
        )
    return Dataset("newspaper4k test pages", tuple(pages), len(pages), "shingles")


_LINK = re.compile(r"!?\[((?:\\.|[^\]\\])*)\]\((?:<(?:\\.|[^\\>\n])*>|[^)\s]*)\)")
_LINE_MARK = re.compile(r"^[ \t]*(?:#{1,6}[ \t]+|>[ \t]?|[-*+][ \t]+|\d{1,9}[.)][ \t]+)", re.M)
_TABLE_RULE = re.compile(r"^[ \t]*\|?(?:[ \t]*:?-{3,}:?[ \t]*\|)+[ \t]*$", re.M)
_FENCE = re.compile(r"^[ \t]*(?:`{3,}|~{3,}).*$", re.M)
_UNESCAPED_MARKS = re.compile(r"(?<!\\)(?:\*+|~~|`+)")
_UNESCAPED_PIPE = re.compile(r"(?<!\\)\|")
_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")
_SPACE = re.compile(r"\s+")


def markdown_text(markdown: str) -> str:
    """The text of Markdown output, its syntax stripped (the module docstring's list)."""
    text = _FENCE.sub("", _TABLE_RULE.sub("", markdown))
    text = _LINK.sub(r"\1", text)
    text = _LINE_MARK.sub("", text)
    text = _UNESCAPED_PIPE.sub(" ", _UNESCAPED_MARKS.sub("", text))
    return _ESCAPE.sub(r"\1", text)


def normalized(text: str) -> str:
    """NFC, every run of whitespace one space, no space at either end."""
    return _SPACE.sub(" ", unicodedata.normalize("NFC", text)).strip()


@dataclass(frozen=True, slots=True)
class SnippetCounts:
    """Snippet judgements of one page (trafilatura's evaluation)."""

    tp: int
    fn: int
    fp: int
    tn: int


def snippet_counts(output: str, page: Page) -> SnippetCounts:
    """Count ``with`` snippets found (TP) or missing (FN) and ``without`` ones found (FP) or
    absent (TN) in the normalised plain-text ``output``."""
    text = normalized(output)
    found_with = sum(1 for s in page.with_snippets if text and normalized(s) in text)
    found_without = sum(1 for s in page.without_snippets if text and normalized(s) in text)
    return SnippetCounts(
        tp=found_with,
        fn=len(page.with_snippets) - found_with,
        fp=found_without,
        tn=len(page.without_snippets) - found_without,
    )


def snippet_scores(counts: Sequence[SnippetCounts]) -> dict[str, float]:
    """Precision, recall, F1 and accuracy of counts summed over pages."""
    tp = sum(c.tp for c in counts)
    fn = sum(c.fn for c in counts)
    fp = sum(c.fp for c in counts)
    tn = sum(c.tn for c in counts)
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    total = tp + fn + fp + tn
    return {
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "accuracy": (tp + tn) / total if total else 0.0,
        "tp": tp,
        "fn": fn,
        "fp": fp,
        "tn": tn,
    }


_WORD = re.compile(r"\w+")


def _shingles(text: str) -> Counter[tuple[str, ...]]:
    words = _WORD.findall(text)
    count = max(1, len(words) - SHINGLE_TOKENS + 1)
    return Counter(
        shingle
        for shingle in (tuple(words[i : i + SHINGLE_TOKENS]) for i in range(count))
        if shingle
    )


def shingle_counts(truth: str, predicted: str) -> tuple[float, float, float]:
    """(TP, FP, FN) over the 4-token shingle multisets, divided by their sum (when not 0)."""
    want, got = _shingles(truth), _shingles(predicted)
    tp = float(sum((want & got).values()))
    fp = float(sum((got - want).values()))
    fn = float(sum((want - got).values()))
    total = tp + fp + fn
    return (tp / total, fp / total, fn / total) if total else (tp, fp, fn)


def _page_precision(tp: float, fp: float, fn: float) -> float:
    if fp == 0 and fn == 0:
        return 1.0
    return 0.0 if tp == 0 and fp == 0 else tp / (tp + fp)


def _page_recall(tp: float, fp: float, fn: float) -> float:
    if fp == 0 and fn == 0:
        return 1.0
    return 0.0 if tp == 0 and fn == 0 else tp / (tp + fn)


def shingle_scores(counts: Sequence[tuple[float, float, float]]) -> dict[str, float]:
    """Mean page precision and recall (where defined) and the F1 of the two means."""
    precisions = [_page_precision(*c) for c in counts if c[0] + c[1] > 0]
    recalls = [_page_recall(*c) for c in counts if c[0] + c[2] > 0]
    precision = sum(precisions) / len(precisions) if precisions else 0.0
    recall = sum(recalls) / len(recalls) if recalls else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": precision, "recall": recall, "f1": f1}


Extract = Callable[[Page], str]


def _trafilatura(page: Page) -> str:
    result = trafilatura.extract(
        page.html, url=page.url, include_comments=False, include_tables=True
    )
    return result or ""


def _on_page(extract: Callable[[dict[str, Any], bytes], str]) -> Extract:
    return lambda page: extract({"url": page.url}, page.html)


def _variant(overrides: dict[str, bool]) -> Extract:
    job = with_options(overrides)
    return lambda page: markdown_text(
        job({"content_type": RYPSOK_MEDIA_TYPE, "url": page.url}, page.html)
    )


async def _rypsok(pages: Sequence[Page]) -> dict[str, str]:
    out: dict[str, str] = {}
    async with Extractor(workers=2, sandbox="none") as extractor:
        for page in pages:
            try:
                extraction = await extractor.extract(page.html, RYPSOK_MEDIA_TYPE, page.url)
            except ExtractionError:  # a refused page scores as an empty output
                out[page.name] = ""
            else:
                out[page.name] = markdown_text(extraction.content)
    return out


def outputs(
    pages: Sequence[Page], with_optional: bool = True, with_variants: bool = False
) -> tuple[dict[str, dict[str, str]], list[str]]:
    """Plain-text output per system and page, and the optional systems skipped."""
    result: dict[str, dict[str, str]] = {"rypsok": anyio.run(_rypsok, pages)}
    systems: dict[str, Extract] = {}
    if with_variants:
        systems.update({name: _variant(o) for name, o in VARIANTS.items()})
    systems["trafilatura"] = _trafilatura
    skipped: list[str] = []
    if with_optional:
        available, skipped = optional_systems()
        systems.update({name: _on_page(extract) for name, extract in available.items()})
    for system, extract in systems.items():
        result[system] = {page.name: extract(page) for page in pages}
    return result, skipped


def score(dataset: Dataset, texts: dict[str, dict[str, str]]) -> dict[str, Any]:
    """Scores of every system on one set, per page and in all, and the pages each wins."""
    per_page: dict[str, dict[str, Any]] = {}
    totals: dict[str, dict[str, float]] = {}
    for system, by_page in texts.items():
        if dataset.scoring == "snippets":
            counts = {p.name: snippet_counts(by_page[p.name], p) for p in dataset.pages}
            per_page[system] = {k: asdict(c) for k, c in counts.items()}
            totals[system] = snippet_scores(list(counts.values()))
        else:
            shingles = {
                p.name: shingle_counts(p.article_body or "", by_page[p.name]) for p in dataset.pages
            }
            per_page[system] = {k: list(v) for k, v in shingles.items()}
            totals[system] = shingle_scores(list(shingles.values()))
    return {
        "set": dataset.name,
        "pages": len(dataset.pages),
        "listed": dataset.listed,
        "scores": totals,
        "best_pages": best_pages(dataset, per_page),
        "per_page": per_page,
    }


def _page_value(scoring: str, value: Any) -> float:
    if scoring == "snippets":
        total = value["tp"] + value["fn"] + value["fp"] + value["tn"]
        return float(value["tp"] + value["tn"]) / total if total else 0.0
    tp, fp, fn = value
    precision, recall = _page_precision(tp, fp, fn), _page_recall(tp, fp, fn)
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def best_pages(dataset: Dataset, per_page: dict[str, dict[str, Any]]) -> dict[str, int]:
    """Pages on which each system has the best page score (accuracy or F1); ties count for all."""
    wins = dict.fromkeys(per_page, 0)
    for page in dataset.pages:
        values = {s: _page_value(dataset.scoring, per_page[s][page.name]) for s in per_page}
        top = max(values.values())
        for system, value in values.items():
            wins[system] += value == top
    return wins


def markdown(results: Sequence[dict[str, Any]]) -> str:
    """One table per set."""
    lines: list[str] = []
    for result in results:
        lines += [
            f"### {result['set']}: {result['pages']} pages (of {result['listed']} listed)",
            "",
            "| system | precision | recall | F1 | accuracy | best on pages |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        for system, s in result["scores"].items():
            accuracy = f"{s['accuracy']:.3f}" if "accuracy" in s else "-"
            lines.append(
                f"| {system} | {s['precision']:.3f} | {s['recall']:.3f} | {s['f1']:.3f} | "
                f"{accuracy} | {result['best_pages'][system]} |"
            )
        lines.append("")
    return "\n".join(lines)


def _versions() -> dict[str, str | None]:
    found: dict[str, str | None] = {}
    for package in ("trafilatura", "lxml", "readability-lxml", "resiliparse"):
        try:
            found[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            found[package] = None
    return found


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trafilatura-repo", type=Path, action="append", default=[])
    parser.add_argument("--scrapinghub-repo", type=Path, action="append", default=[])
    parser.add_argument("--readability-repo", type=Path, action="append", default=[])
    parser.add_argument("--newspaper-sdist", type=Path, action="append", default=[])
    parser.add_argument("--json", type=Path, help="also write scores, per page, to this file")
    parser.add_argument(
        "--no-optional", action="store_true", help="skip readability-lxml and resiliparse"
    )
    parser.add_argument(
        "--variants", action="store_true", help="also rypsok with the settings of VARIANTS"
    )
    args = parser.parse_args(argv)
    sets = [load_trafilatura_eval(p) for p in args.trafilatura_repo]
    sets += [load_scrapinghub(p) for p in args.scrapinghub_repo]
    sets += [load_readability(p) for p in args.readability_repo]
    sets += [load_newspaper(p) for p in args.newspaper_sdist]
    if not sets:
        parser.error(
            "give at least one --trafilatura-repo, --scrapinghub-repo, --readability-repo "
            "or --newspaper-sdist"
        )
    results, skipped = [], set()
    for dataset in sets:
        if not dataset.pages:
            parser.error(f"{dataset.name}: no page found in the checkout")
        texts, missing = outputs(
            dataset.pages, with_optional=not args.no_optional, with_variants=args.variants
        )
        skipped.update(missing)
        results.append(score(dataset, texts))
    print(markdown(results))
    if args.json:
        report = {"versions": _versions(), "skipped": sorted(skipped), "sets": results}
        args.json.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
