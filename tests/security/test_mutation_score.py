"""The scoring of a mutation run (REQ-TEST-019): mutation/score.py fails the release gate on
a survivor nobody reviewed, on an acceptance without a reason and on an incomplete run.

Run on small fake ``mutmut results`` outputs, and on the committed list of accepted survivors.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
ACCEPTED = ROOT / "mutation" / "accepted-survivors.txt"

pytestmark = pytest.mark.req("REQ-TEST-019")

MUTANT = "rypsok.egress.urls.x_parse_url__mutmut_{}"
METHOD_MUTANT = "rypsok.egress.addresses.xǁAddressPolicyǁcheck_address__mutmut_{}"


@pytest.fixture
def score(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """mutation/score.py, imported as a module."""
    spec = importlib.util.spec_from_file_location("mutation_score", ROOT / "mutation" / "score.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "mutation_score", module)
    spec.loader.exec_module(module)
    return module


def _scored(
    score: ModuleType,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    results: dict[str, str],
    accepted: str = "",
) -> tuple[int, str]:
    """Score ``results`` against ``accepted``: the exit status and the report."""
    results_file = tmp_path / "results.txt"
    # The layout of `mutmut results --all true`: a header line, then indented entries.
    lines = ["To apply a mutant on disk: mutmut apply <name>"]
    lines += [f"    {name}: {status}" for name, status in results.items()]
    results_file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    accepted_file = tmp_path / "accepted.txt"
    accepted_file.write_text(accepted, encoding="utf-8")
    status: int = score.main(["--results", str(results_file), "--accepted", str(accepted_file)])
    return status, capsys.readouterr().out


def test_every_survivor_accepted_passes_with_the_score(
    score: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Three killed, one accepted survivor: exit 0, 75 % killed, 100 % with the accepted."""
    results = {MUTANT.format(n): "killed" for n in (1, 2, 3)}
    results[MUTANT.format(4)] = "survived"
    status, out = _scored(
        score, tmp_path, capsys, results, f"{MUTANT.format(4)}  # equivalent: the reason\n"
    )
    assert status == 0
    assert "mutation score (killed / checked): 75.0%" in out
    assert "score with accepted survivors counted as killed: 100.0%" in out
    assert "OK: every survivor is accepted" in out


@pytest.mark.parametrize("status_text", ["survived", "no tests", "suspicious"])
def test_an_unaccepted_survivor_fails_the_run(
    score: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str], status_text: str
) -> None:
    """A survivor (or an untested or suspicious mutant) missing from the list fails, named."""
    results = {MUTANT.format(1): "killed", METHOD_MUTANT.format(7): status_text}
    status, out = _scored(score, tmp_path, capsys, results, f"{MUTANT.format(9)}  # other\n")
    assert status == 1
    assert f"UNACCEPTED SURVIVOR: {METHOD_MUTANT.format(7)} ({status_text})" in out
    assert "FAIL: 1 survivor(s) not in" in out


def test_an_acceptance_without_a_reason_fails(
    score: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Listing a survivor is not enough: the line must say why, after '#'."""
    results = {MUTANT.format(1): "killed", MUTANT.format(2): "survived"}
    for accepted in (f"{MUTANT.format(2)}\n", f"{MUTANT.format(2)}  #   \n"):
        status, out = _scored(score, tmp_path, capsys, results, accepted)
        assert status == 1
        assert "needs a name and '# reason'" in out


@pytest.mark.parametrize("status_text", ["not checked", "check was interrupted by user"])
def test_an_incomplete_run_fails(
    score: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str], status_text: str
) -> None:
    """Mutants left unchecked (an interrupted run) fail the gate, even with no survivor."""
    results = {MUTANT.format(1): "killed", MUTANT.format(2): status_text}
    status, out = _scored(score, tmp_path, capsys, results)
    assert status == 1
    assert f"INCOMPLETE RUN: 1 mutant(s) not checked, e.g. {MUTANT.format(2)}" in out


@pytest.mark.parametrize("status_text", ["timeout", "caught by type check", "segfault"])
def test_detected_mutants_count_as_killed(
    score: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str], status_text: str
) -> None:
    """A mutant that hangs, fails the type check or crashes the tests was detected."""
    results = {MUTANT.format(1): "killed", MUTANT.format(2): status_text}
    status, out = _scored(score, tmp_path, capsys, results)
    assert status == 0
    assert "mutation score (killed / checked): 100.0%" in out


def test_a_stale_acceptance_is_reported(
    score: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An accepted mutant that tests now kill is named, so the list is pruned."""
    results = {MUTANT.format(1): "killed"}
    status, out = _scored(score, tmp_path, capsys, results, f"{MUTANT.format(1)}  # was equal\n")
    assert status == 0
    assert f"accepted survivor is now killed (remove it from the list): {MUTANT.format(1)}" in out


def test_no_results_is_bad_input(
    score: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An empty or unreadable result (mutmut did not run) is never a pass."""
    status, _ = _scored(score, tmp_path, capsys, {})
    assert status == 2


def test_the_committed_list_is_well_formed(score: ModuleType) -> None:
    """Every accepted survivor has a reason, is listed once and names a security module."""
    accepted, bad = score.read_accepted(ACCEPTED)
    assert bad == []
    assert accepted, "the committed list is empty"
    names = [
        line.split("#", 1)[0].strip()
        for line in ACCEPTED.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    assert len(names) == len(set(names)), "a survivor is listed twice"
    run_sh = (ROOT / "mutation" / "run.sh").read_text()
    block = re.search(r"^SECURITY_MODULES=\((.*?)^\)", run_sh, re.MULTILINE | re.DOTALL)
    assert block is not None
    modules = re.findall(r'"src/(rypsok/[^"*]*)\*?"', block.group(1))
    prefixes = [m.removesuffix(".py").replace("/", ".") for m in modules]
    for name in names:
        assert score._LINE.match(f"{name}: survived"), name
        assert any(name.startswith(prefix) for prefix in prefixes), name
        reason = accepted[name]
        assert re.match(r"(equivalent|import-time|unreachable)", reason), f"{name}: {reason}"
