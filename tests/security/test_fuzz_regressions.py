"""The fuzz targets in CI: seeds, committed crash inputs and the reported crashes
(REQ-SEC-023, REQ-TEST-013).

``scripts/fuzz.sh`` runs the targets of fuzz/ under atheris for a time budget; these tests run
the same targets on every committed input so that each stays a regression test:

* every seed of fuzz/corpus/<target>/ runs clean (the crashes listed in
  fuzz/known-crashes.txt excepted, as in CI's fuzz run);
* every input of tests/security/crashes/ runs clean, except the ones of a finding that is
  reported and still open, which are strict xfails: they start failing when it is fixed.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
FUZZ = ROOT / "fuzz"
CRASHES = Path(__file__).resolve().parent / "crashes"
TARGETS = sorted(p.stem.removeprefix("fuzz_") for p in FUZZ.glob("fuzz_*.py"))

# Crash inputs of findings that are reported and not fixed yet (docs/security.md).
OPEN_FINDINGS: dict[str, str] = {}

THR_OF_TARGET = {
    "addresses": "THR-03",
    "cache_codec": "THR-43",
    "charset": "THR-20",
    "charset_header": "THR-15",
    "clean": "THR-09",
    "config": "THR-30",
    "credentials": "THR-04",
    "egress_url": "THR-02",
    "engines": "THR-10",
    "feeds": "THR-21",
    "html_pipeline": "THR-18",
    "normalize": "THR-13",
    "retry_after": "THR-15",
    "robots": "THR-23",
}


def _target(fuzz_path: Path, name: str) -> ModuleType:
    assert fuzz_path == FUZZ
    return importlib.import_module(f"fuzz_{name}")


def _known() -> Callable[[BaseException], bool]:
    harness = importlib.import_module("_harness")
    known = harness._known_crashes(str(FUZZ / "known-crashes.txt"))
    return lambda error: bool(harness.is_known(error, known))


def test_every_target_is_traced_to_a_threat() -> None:
    """Each fuzz target names the threat of docs/threats.md whose parser it exercises.

    Proves THR-02, THR-03, THR-04, THR-09, THR-10, THR-13, THR-15, THR-18, THR-20, THR-21,
    THR-23, THR-30, THR-43.
    """
    assert sorted(THR_OF_TARGET) == TARGETS
    for name, thr in THR_OF_TARGET.items():
        assert thr in (FUZZ / f"fuzz_{name}.py").read_text(encoding="utf-8"), name


@pytest.mark.req("REQ-TEST-013")
@pytest.mark.parametrize("name", TARGETS)
def test_seed_corpus_runs_clean(fuzz_path: Path, name: str) -> None:
    """Every seed of the target runs without a crash (known, reported crashes excepted).

    Proves THR-02, THR-03, THR-04, THR-09, THR-10, THR-13, THR-15, THR-18, THR-20, THR-21,
    THR-23, THR-30, THR-43.
    """
    target = _target(fuzz_path, name)
    is_known = _known()
    seeds = sorted((FUZZ / "corpus" / name).glob("*"))
    assert seeds, f"fuzz/corpus/{name} has no seed"
    for seed in [*seeds, None]:
        data = seed.read_bytes() if seed is not None else b""
        try:
            target.test_one_input(data)
        except Exception as error:
            if not is_known(error):
                raise


def _crash_cases() -> list[object]:
    cases: list[object] = []
    for path in sorted(CRASHES.glob("*.bin")):
        marks = []
        if path.name in OPEN_FINDINGS:
            marks.append(pytest.mark.xfail(strict=True, reason=OPEN_FINDINGS[path.name]))
        cases.append(pytest.param(path, marks=marks, id=path.stem))
    return cases


@pytest.mark.req("REQ-SEC-023")
@pytest.mark.parametrize("path", _crash_cases())
def test_committed_crash_inputs(fuzz_path: Path, path: Path) -> None:
    """A crash the fuzzers found, replayed through its target; open findings are xfail.

    Proves THR-10, THR-15, THR-18, THR-21, THR-23, THR-30.
    """
    name = path.name.split("-", 1)[0]
    _target(fuzz_path, name).test_one_input(path.read_bytes())


@pytest.mark.req("REQ-CMP-002", "REQ-SEC-014")
@pytest.mark.parametrize("value", ["\u00b2", "\u00b9\u00b3", "1\u00b2", "\u0663"])
def test_sec01_retry_after_with_non_ascii_digits(value: str) -> None:
    """Retry-After is Latin-1 text: U+00B2 (superscript two) is a "digit" to str.isdigit()
    but not to int(); the value must be ignored (None), not raise ValueError.

    Proves THR-15.
    """
    from rypsok.engines.base import parse_retry_after

    assert parse_retry_after(value, now=0.0) is None


@pytest.mark.req("REQ-CFG-005")
@pytest.mark.parametrize("rule", ["a..b", "%41.example"])
def test_sec02_an_egress_rule_the_egress_refuses_is_a_configuration_error(
    rule: str, tmp_path: Path
) -> None:
    """A rule the schema accepts but the egress component refuses ends the start with a
    configuration error naming the key, never a traceback from ``Egress``.

    Proves THR-30.
    """
    from rypsok.app import ConfigurationError, load

    config = tmp_path / "rypsok.toml"
    config.write_text(f'schema_version = 1\n[egress]\ndeny = ["{rule}"]\n', encoding="utf-8")
    with pytest.raises(ConfigurationError, match=r"egress\.deny"):
        load(str(config))


@pytest.mark.req("REQ-PAGE-006", "REQ-SEC-014")
@pytest.mark.parametrize(
    "value",
    [
        "Mon, 01 Jan 2024 00:00:00 +99999999999999999999",
        "Mon, 01 Jan 9999999999999999999 00:00:00 GMT",
    ],
)
def test_sec04_feed_dates_out_of_range_are_ignored(value: str) -> None:
    """A feed item's date that no calendar holds is dropped (None), not an exception that
    fails the extraction and retires the worker.

    Proves THR-21.
    """
    from rypsok.fetch.feeds import iso_date

    assert iso_date(value) is None


@pytest.mark.req("REQ-SEC-001")
@pytest.mark.parametrize("link", ["http:s//e.org/", "https:\x01x"])
def test_sec11_feed_links_are_absolute_clean_urls(link: str) -> None:
    """A feed link the caller receives is an absolute http(s) URL with a host and without
    control characters, or no link at all.

    Proves THR-21.
    """
    from rypsok.fetch.feeds import _link

    value = _link(link, "https://example.org/feed.xml")
    assert value is None or (
        value.startswith(("http://", "https://")) and value.isprintable() and "//" in value
    )
