"""The public-benchmark harness (bench/extraction_public.py): loading, scoring, a whole run.

The public sets themselves stay out of the repository; these tests build small sets in the
layouts of their checkouts from text written here.
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import extraction_public as ep  # noqa: E402

ARTICLE = (
    "<!doctype html><html><head><title>Harbour news</title></head><body>"
    "<nav><a href='/'>Home</a> <a href='/about'>About us</a> <a href='/imprint'>Imprint</a></nav>"
    "<main><article><h1>The harbour reopens</h1>"
    + "<p>The old harbour reopened on Monday after two years of repairs to its walls. "
    "Fishing boats returned in the morning and the market opened at noon.</p>"
    * 4
    + "</article></main><footer>Imprint and privacy notice</footer></body></html>"
)


def write_trafilatura_checkout(root: Path, marker: Path) -> None:
    (root / "tests" / "cache").mkdir(parents=True)
    (root / "tests" / "cache" / "harbour.html").write_text(ARTICLE, "utf-8")
    (root / "tests" / "evaldata.py").write_text(
        f"import pathlib\npathlib.Path({str(marker)!r}).write_text('ran')\n"
        "EVAL_PAGES = {\n"
        "'https://example.org/harbour': {'file': 'harbour.html',\n"
        "    'with': ['The old harbour reopened on Monday', 'the market opened at noon'],\n"
        "    'without': ['Imprint and privacy notice', 'About us']},\n"
        "'https://example.org/gone': {'file': 'gone.html', 'with': ['x'], 'without': ['y']},\n"
        "}\n",
        "utf-8",
    )


def test_evaldata_is_parsed_not_run_and_missing_pages_are_counted(tmp_path: Path) -> None:
    marker = tmp_path / "executed"
    write_trafilatura_checkout(tmp_path / "traf", marker)
    dataset = ep.load_trafilatura_eval(tmp_path / "traf")
    assert not marker.exists(), "evaldata.py must never be executed"
    assert (dataset.listed, [p.name for p in dataset.pages]) == (2, ["harbour.html"])
    page = dataset.pages[0]
    assert page.url == "https://example.org/harbour"
    assert page.with_snippets[1] == "the market opened at noon"
    assert page.without_snippets == ("Imprint and privacy notice", "About us")


def test_snippet_counts_follow_trafilaturas_evaluation() -> None:
    page = ep.Page(
        name="p",
        url="https://example.org/",
        html=b"",
        with_snippets=("alpha  beta", "gamma", "missing"),
        without_snippets=("delta", "absent"),
    )
    counts = ep.snippet_counts("x alpha\nbeta gamma delta", page)
    assert counts == ep.SnippetCounts(tp=2, fn=1, fp=1, tn=1)
    assert ep.snippet_counts("", page) == ep.SnippetCounts(tp=0, fn=3, fp=0, tn=2)
    scores = ep.snippet_scores([counts, ep.SnippetCounts(tp=1, fn=0, fp=0, tn=3)])
    assert (scores["tp"], scores["fn"], scores["fp"], scores["tn"]) == (3, 1, 1, 4)
    assert scores["precision"] == pytest.approx(3 / 4)
    assert scores["recall"] == pytest.approx(3 / 4)
    assert scores["accuracy"] == pytest.approx(7 / 9)


def test_shingle_metric_counts_4_token_runs_per_page() -> None:
    truth = "one two three four five"  # shingles: (1..4), (2..5)
    assert ep.shingle_counts(truth, truth) == (1.0, 0.0, 0.0)
    # prediction "one two three four six": shingles (1..4) shared, (2,3,4,six) extra.
    tp, fp, fn = ep.shingle_counts(truth, "one two three four six")
    assert (tp, fp, fn) == pytest.approx((1 / 3, 1 / 3, 1 / 3))
    assert ep.shingle_counts(truth, "") == (0.0, 0.0, 1.0)
    scores = ep.shingle_scores([(1.0, 0.0, 0.0), (1 / 3, 1 / 3, 1 / 3), (0.0, 0.0, 1.0)])
    # precision is undefined on the empty prediction (tp + fp == 0) and left out of its mean.
    assert scores["precision"] == pytest.approx((1 + 0.5) / 2)
    assert scores["recall"] == pytest.approx((1 + 0.5 + 0) / 3)


def test_markdown_syntax_is_stripped_before_matching() -> None:
    markdown = (
        "## The *harbour* reopens\n\n- a [link text](https://example.org/a_b) and **bold**\n"
        "1. first\n\n| a | b |\n|---|---|\n| c\\|d | e |\n\n> quoted `code` ttl\\_seconds"
    )
    text = ep.normalized(ep.markdown_text(markdown))
    assert (
        text == "The harbour reopens a link text and bold first a b c|d e quoted code ttl_seconds"
    )


def test_a_link_target_in_angle_brackets_is_stripped_with_its_escapes() -> None:
    # trafilatura writes a target with spaces or brackets in angle brackets, "\\", "<" and
    # ">" escaped; the whole target goes, whatever it holds.
    markdown = (
        "See [Boko Haram](<https://e.org/s?q=Boko Haram&c=A\\>B>) and [x](<https://e.org/(1)>)."
    )
    assert ep.normalized(ep.markdown_text(markdown)) == "See Boko Haram and x."


def test_newspaper_pages_are_the_pages_with_an_expected_text(tmp_path: Path) -> None:
    data = tmp_path / "newspaper4k-0.9.6" / "tests" / "data"
    for folder in ("html", "txt", "metadata"):
        (data / folder).mkdir(parents=True)
    (data / "html" / "harbour.html").write_text(ARTICLE, "utf-8")
    (data / "txt" / "harbour.txt").write_text("The old harbour reopened.", "utf-8")
    (data / "metadata" / "harbour.json").write_text('{"url": "https://e.org/h"}', "utf-8")
    (data / "html" / "no_text.html").write_text(ARTICLE, "utf-8")
    (data / "html" / "no_metadata.html").write_text(ARTICLE, "utf-8")
    (data / "txt" / "no_metadata.txt").write_text("Text.", "utf-8")
    dataset = ep.load_newspaper(tmp_path / "newspaper4k-0.9.6")
    assert [(p.name, p.url) for p in dataset.pages] == [
        ("harbour", "https://e.org/h"),
        ("no_metadata", ep.NEWSPAPER_BASE_URL),
    ]
    assert (dataset.listed, dataset.scoring) == (2, "shingles")
    assert dataset.pages[0].article_body == "The old harbour reopened."


def write_readability_checkout(root: Path) -> None:
    pages = root / "test" / "test-pages"
    (pages / "harbour").mkdir(parents=True)
    (pages / "harbour" / "source.html").write_text(ARTICLE, "utf-8")
    (pages / "harbour" / "expected.html").write_text(
        "<div id='readability-page-1' class='page'><h1>The harbour reopens</h1>"
        + "<p>The old harbour reopened on Monday after two years of repairs to its walls. "
        "Fishing boats returned in the morning and the market opened at noon.</p>" * 4 + "</div>",
        "utf-8",
    )
    (pages / "no-expected").mkdir()
    (pages / "no-expected" / "source.html").write_text(ARTICLE, "utf-8")
    (pages / "extraction").mkdir()


def test_readability_pages_are_the_folders_with_both_files(tmp_path: Path) -> None:
    write_readability_checkout(tmp_path / "readability")
    dataset = ep.load_readability(tmp_path / "readability")
    assert [p.name for p in dataset.pages] == ["harbour"]
    assert (dataset.listed, dataset.scoring) == (1, "shingles")
    page = dataset.pages[0]
    assert page.url == ep.READABILITY_BASE_URL
    assert page.html == ARTICLE.encode("utf-8")
    assert page.article_body is not None
    assert page.article_body.startswith("The harbour reopens\nThe old harbour reopened")


def test_expected_html_text_separates_blocks_and_keeps_inline_words_whole() -> None:
    text = ep.html_text(
        b"<p>one<b>two</b> three</p><ul><li>four</li><li>five</li></ul>six<br>seven"
    )
    assert text.split() == ["onetwo", "three", "four", "five", "six", "seven"]


def test_a_whole_run_scores_every_system_on_every_layout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_trafilatura_checkout(tmp_path / "traf", tmp_path / "executed")
    shub = tmp_path / "shub"
    (shub / "html").mkdir(parents=True)
    (shub / "html" / "a1.html.gz").write_bytes(gzip.compress(ARTICLE.encode("utf-8")))
    body = "The old harbour reopened on Monday after two years of repairs to its walls."
    (shub / "ground-truth.json").write_text(
        json.dumps({"a1": {"articleBody": body, "url": "https://example.org/a1"}}), "utf-8"
    )
    out = tmp_path / "result.json"
    write_readability_checkout(tmp_path / "readability")
    argv = [
        *("--trafilatura-repo", str(tmp_path / "traf")),
        *("--scrapinghub-repo", str(shub)),
        *("--readability-repo", str(tmp_path / "readability")),
    ]
    assert ep.main([*argv, "--no-optional", "--json", str(out)]) == 0
    table = capsys.readouterr().out
    assert "trafilatura evaluation: 1 pages (of 2 listed)" in table
    assert "ScrapingHub articles: 1 pages (of 1 listed)" in table
    report = json.loads(out.read_text("utf-8"))
    traf_set, shub_set, readability_set = report["sets"]
    assert set(traf_set["scores"]) == {"rypsok", "trafilatura"}
    # The page is simple enough that rypsok finds both wanted snippets and no unwanted one.
    assert traf_set["per_page"]["rypsok"]["harbour.html"] == {"tp": 2, "fn": 0, "fp": 0, "tn": 2}
    assert shub_set["scores"]["rypsok"]["recall"] == pytest.approx(1.0)
    assert "Readability test pages: 1 pages (of 1 listed)" in table
    # The four copies of the paragraph come out once, as the expected text has it.
    assert readability_set["scores"]["rypsok"]["f1"] == pytest.approx(1.0)
