"""The release checks (REQ-TEST-019): the gate runs every check, none can be ignored.

``scripts/release_gate.sh`` is run for real, in a scratch copy of the parts it needs, with a
fake Python and a fake ``git`` that record every call and fail on demand: so these tests see
what the gate actually runs (two wheel builds of ``git archive HEAD`` with
``SOURCE_DATE_EPOCH``, every fuzz target of ``fuzz/`` in strict mode, the mutation run scored
against the committed exclusion list, the live checks and the advisory check with
``--require``), that its jobs run side by side, and that one failing job turns it red.
``.github/workflows/release.yml`` is read against the same job list: manual, no job allowed
to fail, and the tag needs every check and tags the commit that was checked.

The lists are derived from the repository (the gate's jobs, the fuzz targets, the documented
security modules), so a new fuzz target or gate job that the release checks miss fails here.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
GATE = ROOT / "scripts" / "release_gate.sh"
WORKFLOW = ROOT / ".github" / "workflows" / "release.yml"
FUZZ = ROOT / "fuzz"
COMMIT = "0123456789abcdef0123456789abcdef01234567"
COMMIT_TIME = "1700000000"

pytestmark = [
    pytest.mark.req("REQ-TEST-019"),
    pytest.mark.skipif(shutil.which("bash") is None, reason="the release gate is a bash script"),
]

# The checks REQ-TEST-019 names, by the gate's job names; the gate may have more.
REQUIRED_JOBS = ("reproducible", "fuzz", "mutation", "live", "advisories")


# --- what the repository says ------------------------------------------------------------------


def gate_jobs() -> list[str]:
    """The jobs the gate runs by default, in order (its ``JOBS=(${GATE_JOBS:-...})`` line)."""
    found = re.search(r"^JOBS=\(\$\{GATE_JOBS:-([^}]*)\}\)", GATE.read_text(), re.MULTILINE)
    assert found is not None, "release_gate.sh has no default job list"
    return found.group(1).split()


def gate_job_functions() -> set[str]:
    """The ``job_<name>`` functions the gate defines."""
    return set(re.findall(r"^job_(\w+)\(\)", GATE.read_text(), re.MULTILINE))


def fuzz_targets() -> list[str]:
    """Every fuzz target of fuzz/ (fuzz_<name>.py), by name."""
    return sorted(path.stem.removeprefix("fuzz_") for path in FUZZ.glob("fuzz_*.py"))


def documented_security_modules() -> list[str]:
    """The security modules docs/security.md section 5 names for mutation testing."""
    text = (ROOT / "docs" / "security.md").read_text(encoding="utf-8")
    section = text.split("## 5. Mutation testing", 1)[1].split("\n## ", 1)[0]
    default = re.search(r"\(default:(.*?)\)", section, re.DOTALL)
    assert default is not None, "docs/security.md section 5 names no default module list"
    return ["src/rypsok/" + name for name in re.findall(r"`([^`]+)`", default.group(1))]


def run_sh_modules() -> list[str]:
    """The SECURITY_MODULES array of mutation/run.sh."""
    text = (ROOT / "mutation" / "run.sh").read_text()
    block = re.search(r"^SECURITY_MODULES=\((.*?)^\)", text, re.MULTILINE | re.DOTALL)
    assert block is not None, "mutation/run.sh has no SECURITY_MODULES"
    return re.findall(r'"([^"]+)"', block.group(1))


# --- the gate, run with fakes -------------------------------------------------------------------

_FAKE_PYTHON = r'''#!__PYTHON__
"""A stand-in for the gate's Python: records each call, fails when FAKE_FAIL names its job."""
import json, os, sys, time
from pathlib import Path

args = sys.argv[1:]
fail = os.environ.get("FAKE_FAIL", "")
log = Path(os.environ["FAKE_DIR"])
keep = ("SOURCE_DATE_EPOCH", "RYPSOK_FUZZ_KNOWN", "PYTHONHASHSEED")
with open(log / "calls.jsonl", "a", encoding="utf-8") as out:
    entry = {"args": args, "cwd": os.getcwd(), "env": {k: os.environ.get(k) for k in keep}}
    out.write(json.dumps(entry) + "\n")


def script(name):
    return bool(args) and Path(args[0]).name == name


if args == ["-c", "import atheris"]:
    sys.exit(1)  # the fallback engine: nothing else changes for the gate
if args == ["-c", "import mutmut"]:
    sys.exit(0)
if args[:2] == ["-m", "build"]:
    outdir = Path(args[args.index("--outdir") + 1])
    outdir.mkdir(parents=True, exist_ok=True)
    content = os.environ.get("SOURCE_DATE_EPOCH", "") + Path("archived.txt").read_text()
    if fail == "reproducible":
        content += str(time.time_ns())  # an embedded build time: the builds differ
    (outdir / "rypsok-0.1.0-py3-none-any.whl").write_text(content)
    sys.exit(0)
if args[:2] == ["-m", "pytest"]:
    sys.exit(1 if fail == "tests" else 0)
if args[:3] == ["-m", "mutmut", "run"]:
    (log / "mutmut-pyproject.toml").write_bytes(Path("pyproject.toml").read_bytes())
    sys.exit(0)
if args[:3] == ["-m", "mutmut", "results"]:
    print("    rypsok.egress.urls.x_parse_url__mutmut_1: killed")
    if fail == "mutation":
        print("    rypsok.egress.urls.x_parse_url__mutmut_2: survived")
    sys.exit(0)
if args[:3] == ["-m", "mutmut", "show"]:
    sys.exit(0)
if script("score.py"):
    os.execv("__PYTHON__", ["__PYTHON__", *args])  # the real scoring, the real list
if args and args[0].startswith("fuzz/fuzz_"):
    sys.exit(1 if fail == "fuzz" else 0)
if script("audit_dependencies.py"):
    (log / "advisories-started").touch()
    time.sleep(1)
    sys.exit(1 if fail == "advisories" else 0)
if script("live_check.py"):
    # The jobs run side by side: the advisory check, a later job, starts meanwhile.
    for _ in range(100):
        if (log / "advisories-started").exists():
            break
        time.sleep(0.1)
    else:
        print("the advisory check did not start while the live checks ran")
        sys.exit(1)
    sys.exit(1 if fail == "live" else 0)
if script("threat_trace.py"):
    sys.exit(1 if fail == "threats" else 0)
print("unexpected call:", args)
sys.exit(3)
'''

_FAKE_GIT = r"""#!/usr/bin/env bash
# FAKE_DIRTY: "" a clean tree; "changed" or "untracked" from the start; "later" clean at the
# first look and changed afterwards. FAKE_HEAD_MOVES: HEAD is another commit after the first
# look.
count() {  # how often this git command ran before
    local n
    n=$(cat "$FAKE_DIR/$1.count" 2>/dev/null || echo 0)
    echo $((n + 1)) > "$FAKE_DIR/$1.count"
    echo "$n"
}
case "$1" in
    rev-parse)
        if [ "$(count rev-parse)" -gt 0 ] && [ -n "${FAKE_HEAD_MOVES:-}" ]; then
            echo "fedcba9876543210fedcba9876543210fedcba98"
        else
            echo "__COMMIT__"
        fi ;;
    status)
        seen=$(count status)
        case "${FAKE_DIRTY:-}" in
            changed) echo " M src/rypsok/app.py" ;;
            untracked) echo "?? tests/test_new.py" ;;
            later) if [ "$seen" -gt 0 ]; then echo " M src/rypsok/app.py"; fi ;;
        esac ;;
    log) echo "__COMMIT_TIME__" ;;
    archive) tar -C "$FAKE_DIR/head" -cf - . ;;
    *) echo "unexpected git call: $*" >&2; exit 3 ;;
esac
"""


@dataclass(frozen=True)
class GateRun:
    """One run of the gate: its exit status, its output and the calls the fakes saw."""

    status: int
    output: str
    calls: list[dict[str, Any]]
    fake_dir: Path

    def calls_of(self, prefix: list[str]) -> list[dict[str, Any]]:
        """The recorded Python calls whose arguments start with ``prefix``."""
        return [c for c in self.calls if c["args"][: len(prefix)] == prefix]

    def job_lines(self) -> dict[str, str]:
        """The gate's verdict per job (``PASS`` or ``FAIL``)."""
        found = re.findall(r"^(PASS|FAIL)\s+(\w+)\s", self.output, re.MULTILINE)
        return {job: verdict for verdict, job in found}


def _executable(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def run_gate(
    tmp_path: Path,
    *,
    fail: str = "",
    jobs: str | None = None,
    dirty: str = "",
    head_moves: bool = False,
) -> GateRun:
    """Run the real gate script in a scratch tree with the fakes; return what happened.

    ``dirty`` and ``head_moves`` set what the fake ``git`` says of the work tree and HEAD
    (see ``_FAKE_GIT``).
    """
    tree = tmp_path / "tree"
    fake = tmp_path / "fake"
    (fake / "bin").mkdir(parents=True)
    (fake / "head").mkdir()
    (fake / "head" / "archived.txt").write_text(f"the tree of {COMMIT}\n")
    (tmp_path / "tmp").mkdir()
    for relative in ("scripts/release_gate.sh", "scripts/fuzz.sh", "mutation/run.sh"):
        (tree / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / relative, tree / relative)
    for relative in ("mutation/score.py", "mutation/accepted-survivors.txt"):
        shutil.copy(ROOT / relative, tree / relative)
    # mutation/run.sh appends its [tool.mutmut] table to a copy of this file.
    (tree / "pyproject.toml").write_text('[project]\nname = "rypsok"\n')
    (tree / "fuzz").mkdir()
    for target in FUZZ.glob("fuzz_*.py"):
        shutil.copy(target, tree / "fuzz" / target.name)
    for folder in ("src", "tests", "docs", "requirements", ".github"):
        (tree / folder).mkdir(exist_ok=True)
    python = fake / "bin" / "python"
    _executable(python, _FAKE_PYTHON.replace("__PYTHON__", sys.executable))
    _executable(
        fake / "bin" / "git",
        _FAKE_GIT.replace("__COMMIT__", COMMIT).replace("__COMMIT_TIME__", COMMIT_TIME),
    )
    env = {
        "PATH": f"{fake / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
        "HOME": str(tmp_path),
        "TMPDIR": str(tmp_path / "tmp"),
        "PYTHON": str(python),
        "FAKE_DIR": str(fake),
        "FAKE_FAIL": fail,
        "MUTMUT_CHILDREN": "1",
        "FAKE_DIRTY": dirty,
    }
    if head_moves:
        env["FAKE_HEAD_MOVES"] = "1"
    if jobs is not None:
        env["GATE_JOBS"] = jobs
    done = subprocess.run(
        ["bash", str(tree / "scripts" / "release_gate.sh")],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    calls_file = fake / "calls.jsonl"
    calls = (
        [json.loads(line) for line in calls_file.read_text().splitlines()]
        if calls_file.exists()
        else []
    )
    return GateRun(done.returncode, done.stdout + done.stderr, calls, fake)


@pytest.fixture(scope="module")
def green_run(tmp_path_factory: pytest.TempPathFactory) -> GateRun:
    """The gate run once with every check passing."""
    return run_gate(tmp_path_factory.mktemp("green"))


def test_the_gate_runs_every_required_check_by_default() -> None:
    """Each check REQ-TEST-019 names is a job of the gate, and every job has its function."""
    jobs = gate_jobs()
    for required in REQUIRED_JOBS:
        assert required in jobs, f"release_gate.sh does not run {required}"
    assert set(jobs) == gate_job_functions()
    assert len(jobs) == len(set(jobs))


def test_a_green_gate_ran_every_job_and_says_so(green_run: GateRun) -> None:
    """All checks passing: exit 0, one PASS line per job, GREEN on the commit checked."""
    assert green_run.status == 0, green_run.output
    assert green_run.job_lines() == dict.fromkeys(gate_jobs(), "PASS")
    assert f"RELEASE GATE: GREEN on {COMMIT}" in green_run.output


def test_the_jobs_run_side_by_side(green_run: GateRun) -> None:
    """The live checks finish only once the advisory check, a later job, has started.

    Run one after the other, the fake live check would give up waiting and fail the gate.
    """
    assert (green_run.fake_dir / "advisories-started").exists()
    assert green_run.job_lines().get("live") == "PASS", green_run.output


def test_reproducibility_is_two_wheel_builds_of_the_commit(green_run: GateRun) -> None:
    """Two wheels built from ``git archive HEAD``, each with SOURCE_DATE_EPOCH = commit time."""
    builds = green_run.calls_of(["-m", "build", "--wheel"])
    assert len(builds) == 2
    assert len({build["cwd"] for build in builds}) == 2, "the builds share a tree"
    for build in builds:
        assert build["env"]["SOURCE_DATE_EPOCH"] == COMMIT_TIME
        # The fake build read archived.txt from its tree, which only git archive wrote.
        assert Path(build["cwd"]).name.startswith("src-")


@pytest.mark.req("REQ-SEC-023")
def test_every_fuzz_target_runs_strict_for_the_release_budget(green_run: GateRun) -> None:
    """Each fuzz/fuzz_*.py runs for 300 s, with the known crashes not skipped (--strict)."""
    targets = fuzz_targets()
    assert targets, "no fuzz target in fuzz/"
    runs = {c["args"][0]: c for c in green_run.calls if c["args"][0].startswith("fuzz/fuzz_")}
    assert sorted(runs) == [f"fuzz/fuzz_{name}.py" for name in targets]
    for call in runs.values():
        assert "-max_total_time=300" in call["args"]
        assert call["env"]["RYPSOK_FUZZ_KNOWN"] == "", "known crashes skipped: not --strict"


def test_mutation_covers_the_security_modules_against_the_committed_list(
    green_run: GateRun,
) -> None:
    """mutmut mutates every documented security module; the committed list scores the run."""
    config = tomllib.loads((green_run.fake_dir / "mutmut-pyproject.toml").read_text())
    assert config["tool"]["mutmut"]["only_mutate"] == documented_security_modules()
    scoring = [c for c in green_run.calls if c["args"] and c["args"][0] == "mutation/score.py"]
    assert len(scoring) == 1
    args = scoring[0]["args"]
    assert args[args.index("--accepted") + 1] == "mutation/accepted-survivors.txt"


def test_live_and_advisory_checks_are_required(green_run: GateRun) -> None:
    """The live checks and the advisory check run with --require: skipping is failing."""
    for script in ("scripts/live_check.py", "scripts/audit_dependencies.py"):
        calls = [c for c in green_run.calls if c["args"][:1] == [script]]
        assert len(calls) == 1, f"{script} ran {len(calls)} times"
        assert "--require" in calls[0]["args"]


@pytest.mark.parametrize("job", gate_jobs())
def test_one_failing_job_turns_the_gate_red(tmp_path: Path, job: str) -> None:
    """No job is ignored: any one failing makes the gate exit 1, and the others still run."""
    run = run_gate(tmp_path, fail=job)
    assert run.status == 1, run.output
    expected = dict.fromkeys(gate_jobs(), "PASS") | {job: "FAIL"}
    assert run.job_lines() == expected, run.output
    assert f"RELEASE GATE: RED ({job}); do not tag {COMMIT}" in run.output
    assert "GREEN" not in run.output


def test_a_partial_gate_run_never_says_green(tmp_path: Path) -> None:
    """A run of selected jobs (one workflow leg) passes them, never clears the commit alone."""
    run = run_gate(tmp_path, jobs="threats")
    assert run.status == 0, run.output
    assert run.job_lines() == {"threats": "PASS"}
    assert "GREEN" not in run.output
    assert "a release needs all" in run.output


@pytest.mark.parametrize("dirty", ["changed", "untracked", "later"])
def test_a_dirty_work_tree_is_never_cleared_for_a_tag(tmp_path: Path, dirty: str) -> None:
    """Every job passing on a work tree that differs from HEAD (at the start or by the end)
    clears nothing: exit 1, "NOT on <commit>", never GREEN nor "may be tagged"."""
    run = run_gate(tmp_path, dirty=dirty)
    assert run.status == 1, run.output
    assert run.job_lines() == dict.fromkeys(gate_jobs(), "PASS"), run.output
    assert f"every job passed on the work tree, NOT on {COMMIT}" in run.output
    assert "commit or stash first" in run.output
    assert "GREEN" not in run.output
    assert "may be tagged" not in run.output
    if dirty == "later":  # what changed during the run is named
        assert "the work tree changed while the gate ran:\n       M src/rypsok/app.py" in (
            run.output
        )


def test_a_partial_run_on_a_dirty_tree_fails_too(tmp_path: Path) -> None:
    """A workflow leg's run of one job on a dirty tree does not say it passed on the commit."""
    run = run_gate(tmp_path, jobs="threats", dirty="changed")
    assert run.status == 1, run.output
    assert f"the selected jobs (threats) passed on the work tree, NOT on {COMMIT}" in run.output
    assert f"passed on {COMMIT}" not in run.output


def test_a_commit_made_while_the_gate_ran_clears_nothing(tmp_path: Path) -> None:
    """HEAD moved during the run: the jobs saw different trees, so no commit is cleared."""
    run = run_gate(tmp_path, head_moves=True)
    assert run.status == 1, run.output
    assert f"NOT on {COMMIT}" in run.output
    assert "GREEN" not in run.output


# --- the documented module list (mutation/run.sh) -------------------------------------------


def test_mutation_default_modules_are_the_documented_ones() -> None:
    """run.sh's default modules are the ones docs/security.md names, and each exists."""
    assert run_sh_modules() == documented_security_modules()
    for pattern in run_sh_modules():
        assert sorted(ROOT.glob(pattern)), f"{pattern} matches no file"


def run_sh_test_selection() -> list[str]:
    """The test paths and globs mutation/run.sh lets mutmut run against mutants."""
    text = (ROOT / "mutation" / "run.sh").read_text()
    loop = re.search(r"^for candidate in (.*?); do", text, re.MULTILINE | re.DOTALL)
    assert loop is not None, "mutation/run.sh has no test selection loop"
    return loop.group(1).replace("\\\n", " ").split()


def test_every_test_file_of_a_security_module_runs_against_its_mutants() -> None:
    """A test file of a security module (``test_<module>*.py``, or any test of a mutated
    package) is in the selection mutmut runs: a test outside it kills no mutant."""
    selection = run_sh_test_selection()
    expected: set[Path] = set()
    for pattern in run_sh_modules():
        module = Path(pattern)
        if module.name == "*":
            expected.update((ROOT / "tests" / module.parent.name).rglob("test_*.py"))
        else:
            expected.update((ROOT / "tests").rglob(f"test_{module.stem}*.py"))
    assert expected
    for path in sorted(expected):
        relative = path.relative_to(ROOT).as_posix()
        assert any(
            relative == entry or relative.startswith(entry + "/") or fnmatch(relative, entry)
            for entry in selection
        ), f"{relative} is not in mutation/run.sh's test selection"


# --- the checks that must fail rather than skip ---------------------------------------------


_FAKE_PIP_AUDIT = """import os, sys
sys.stdout.write(os.environ["FAKE_PIP_AUDIT_REPORT"])
sys.exit(int(os.environ.get("FAKE_PIP_AUDIT_EXIT", "0")))
"""


def _audit(tmp_path: Path, report: str, *, require: bool) -> subprocess.CompletedProcess[str]:
    package = tmp_path / "pip_audit"
    package.mkdir(exist_ok=True)
    (package / "__init__.py").write_text("")
    (package / "__main__.py").write_text(_FAKE_PIP_AUDIT)
    env = dict(os.environ, PYTHONPATH=str(tmp_path), FAKE_PIP_AUDIT_REPORT=report)
    command = [sys.executable, str(ROOT / "scripts" / "audit_dependencies.py")]
    return subprocess.run(
        command + (["--require"] if require else []),
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )


_SKIPPED = {
    "dependencies": [
        {"name": "idna", "version": "3.10", "vulns": []},
        {"name": "lxml", "version": "5.3.0", "skip_reason": "could not reach the service"},
    ]
}
_CLEAN = {"dependencies": [{"name": "idna", "version": "3.10", "vulns": []}]}
_VULNERABLE = {
    "dependencies": [{"name": "idna", "version": "3.6", "vulns": [{"id": "PYSEC-2024-60"}]}]
}


@pytest.mark.parametrize(
    ("report", "verdict"),
    [
        (json.dumps(_SKIPPED), "NOT AUDITED (1 of 2 packages skipped"),
        (json.dumps({"dependencies": []}), "NOT AUDITED (0 of 0 packages skipped"),
        ("pip-audit: network unreachable", "NOT AUDITED (pip-audit gave no report"),
    ],
)
def test_the_advisory_check_fails_when_packages_were_not_audited(
    tmp_path: Path, report: str, verdict: str
) -> None:
    """Skipped packages are "NOT AUDITED": a failure with --require, a note without."""
    required = _audit(tmp_path, report, require=True)
    assert required.returncode == 1
    assert verdict in required.stdout
    assert "no known vulnerabilities" not in required.stdout
    assert _audit(tmp_path, report, require=False).returncode == 0


def test_the_advisory_check_passes_only_a_full_clean_audit(tmp_path: Path) -> None:
    """Every package audited and clean passes; a known vulnerability fails, --require or not."""
    clean = _audit(tmp_path, json.dumps(_CLEAN), require=True)
    assert clean.returncode == 0
    assert "AUDITED, 1 packages, no known vulnerabilities" in clean.stdout
    for require in (True, False):
        vulnerable = _audit(tmp_path, json.dumps(_VULNERABLE), require=require)
        assert vulnerable.returncode == 1
        assert "PYSEC-2024-60" in vulnerable.stdout


_OWN_EDITABLE = {"name": "rypsok", "skip_reason": "distribution marked as editable"}


@pytest.mark.parametrize("spelling", ["rypsok", "Rypsok", "RYPSOK"])
def test_the_project_itself_installed_editable_is_no_unaudited_dependency(
    tmp_path: Path, spelling: str
) -> None:
    """pip-audit always skips the editable project: with every dependency audited and clean,
    that one entry (matched by normalized name) leaves the verdict AUDITED, said on its own
    line, and --require passes."""
    report = {"dependencies": [*_CLEAN["dependencies"], _OWN_EDITABLE | {"name": spelling}]}
    done = _audit(tmp_path, json.dumps(report), require=True)
    assert done.returncode == 0, done.stdout
    assert "not audited as a dependency: rypsok (the project itself" in done.stdout
    assert "AUDITED, 1 packages, no known vulnerabilities" in done.stdout
    assert "NOT AUDITED" not in done.stdout


@pytest.mark.parametrize(
    ("entry", "verdict"),
    [
        # Another package installed editable is a dependency nobody audited.
        (
            {"name": "redis", "skip_reason": "distribution marked as editable"},
            "NOT AUDITED (1 of 2 packages skipped; 1 installed editable)",
        ),
        # A name that merely starts like ours is not ours.
        (
            {"name": "rypsok-plugin", "skip_reason": "distribution marked as editable"},
            "NOT AUDITED (1 of 2 packages skipped; 1 installed editable)",
        ),
        # Our own name skipped for another reason is not the editable install.
        (
            {"name": "rypsok", "skip_reason": "Dependency not found on PyPI"},
            "NOT AUDITED (1 of 2 packages skipped; the advisory service",
        ),
    ],
)
def test_only_the_projects_own_editable_entry_is_excluded(
    tmp_path: Path, entry: dict[str, str], verdict: str
) -> None:
    """Any other skipped entry, editable or not, keeps the verdict NOT AUDITED."""
    report = {"dependencies": [*_CLEAN["dependencies"], _OWN_EDITABLE, entry]}
    done = _audit(tmp_path, json.dumps(report), require=True)
    assert done.returncode == 1
    assert verdict in done.stdout, done.stdout
    assert "no known vulnerabilities" not in done.stdout


def test_offline_the_audit_stays_not_audited_despite_the_exclusion(tmp_path: Path) -> None:
    """The report pip-audit gives without the advisory service: every package skipped "not
    found on PyPI", the project skipped as editable. Still NOT AUDITED; --require fails."""
    report = {
        "dependencies": [
            _OWN_EDITABLE,
            *(
                {
                    "name": name,
                    "skip_reason": f"Dependency not found on PyPI and could not be "
                    f"audited: {name} (1.0)",
                }
                for name in ("anyio", "idna", "lxml")
            ),
        ]
    }
    required = _audit(tmp_path, json.dumps(report), require=True)
    assert required.returncode == 1
    assert "NOT AUDITED (3 of 3 packages skipped; the advisory service" in required.stdout
    assert _audit(tmp_path, json.dumps(report), require=False).returncode == 0


@pytest.fixture
def live_check(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """scripts/live_check.py, imported as a module, with no RYPSOK_LIVE_* variable set (keys,
    skips or an instance the developer's shell may hold would change what is checked)."""
    for variable in list(os.environ):
        if variable.startswith("RYPSOK_LIVE_"):
            monkeypatch.delenv(variable)
    spec = importlib.util.spec_from_file_location("live_check", ROOT / "scripts" / "live_check.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "live_check", module)
    spec.loader.exec_module(module)
    return module


def test_the_live_checks_fail_without_network_when_required(
    live_check: ModuleType, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """No network is a skip on demand and a failure with --require (the gate's call)."""
    monkeypatch.setattr(live_check, "network_available", lambda host: False)
    assert live_check.main(["--require"]) == 1
    assert "SKIPPED: no network" in capsys.readouterr().out
    assert live_check.main([]) == 0


def test_the_live_checks_fail_when_required_and_no_engine_was_checked(
    live_check: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every engine skipped (no key, off) proves nothing: --require makes it a failure."""

    async def all_skipped(settings: object, engines: list[Any]) -> list[Any]:
        return [live_check.Verdict(e.engine_id, "skipped", "off", 0, 0) for e in engines]

    monkeypatch.setattr(live_check, "network_available", lambda host: True)
    monkeypatch.setattr(live_check, "run_checks", all_skipped)
    assert live_check.main(["--require"]) == 1
    assert live_check.main([]) == 0


class FakeChecker:
    """Stands in for ``run_checks``: sends nothing, records the engines it was given, and
    answers ``ok`` for each active one (``drift`` for those in ``drift``), ``skipped`` with the
    catalog's reason for the others, as the real one does."""

    def __init__(self, live_check: ModuleType, drift: tuple[str, ...] = ()) -> None:
        self.module = live_check
        self.drift = drift
        self.given: list[Any] = []

    async def __call__(self, settings: object, engines: list[Any]) -> list[Any]:
        self.given.extend(engines)
        verdict = self.module.Verdict
        return [
            verdict(e.engine_id, "skipped", e.inactive_reason, 0, 0)
            if not e.active
            else verdict(e.engine_id, "drift", "parse_failure", 0, 1)
            if e.engine_id in self.drift
            else verdict(e.engine_id, "ok", "HTTP 200", 3, 1)
            for e in engines
        ]

    def queried(self) -> set[str]:
        """The engines the check would have sent a request to."""
        return {e.engine_id for e in self.given if e.active}


def _engines_needing_a_key(live_check: ModuleType) -> list[str]:
    from rypsok.engines.registry import DRIVER_MODULES, load_driver

    return [e for e in DRIVER_MODULES if load_driver(e).admission.key == "required"]


@pytest.fixture
def fake_checker(live_check: ModuleType, monkeypatch: pytest.MonkeyPatch) -> FakeChecker:
    """The network reported up, the checks answered by a FakeChecker: no traffic at all."""
    checker = FakeChecker(live_check)
    monkeypatch.setattr(live_check, "network_available", lambda host: True)
    monkeypatch.setattr(live_check, "run_checks", checker)
    return checker


def _all_keys(live_check: ModuleType, monkeypatch: pytest.MonkeyPatch, *, but: str = "") -> None:
    """Every key variable the live check reads set (to a placeholder), and SearXNG's URL."""
    for engine_id in _engines_needing_a_key(live_check):
        if engine_id != but:
            monkeypatch.setenv(live_check.key_variable(engine_id), "placeholder-key")
    if but != "searxng":
        monkeypatch.setenv(live_check.SEARXNG_URL_VARIABLE, "https://search.example.org/")


@pytest.mark.req("REQ-TEST-003")
def test_required_live_checks_fail_on_every_driver_not_checked_and_name_its_variable(
    live_check: ModuleType, fake_checker: FakeChecker, capsys: pytest.CaptureFixture[str]
) -> None:
    """Defaults without keys: the keyless drivers pass, but the keyed ones and SearXNG were not
    checked and nobody said why, so --require fails and lists each with its variable."""
    assert live_check.main(["--require"]) == 1
    out = capsys.readouterr().out
    keyed = _engines_needing_a_key(live_check)
    assert len(keyed) == 9
    for engine_id in keyed:
        assert re.search(
            rf"^  {engine_id}\s+needs RYPSOK_LIVE_{engine_id.upper()}_API_KEY$", out, re.MULTILINE
        ), out
    assert re.search(r"^  searxng\s+needs RYPSOK_LIVE_SEARXNG_URL ", out, re.MULTILINE)
    assert "LIVE CHECK: FAILED" in out
    assert "10 not checked, each a failure under --require" in out.splitlines()[-1]
    # On demand, without --require, the same run passes and still lists them.
    assert live_check.main([]) == 0
    out = capsys.readouterr().out
    assert "needs RYPSOK_LIVE_BRAVE_API_KEY" in out
    assert out.splitlines()[-1].startswith("LIVE CHECK: PASSED")


@pytest.mark.req("REQ-TEST-003")
def test_every_driver_checked_or_skipped_by_design_passes_the_requirement(
    live_check: ModuleType,
    fake_checker: FakeChecker,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """With every key and the SearXNG instance given, every driver but DuckDuckGo is queried
    (Semantic Scholar and PubMed switched on for the check) and --require passes; DuckDuckGo
    is never queried, and its fixed reason is printed."""
    from rypsok.engines.registry import DRIVER_MODULES

    _all_keys(live_check, monkeypatch)
    assert live_check.main(["--require"]) == 0, capsys.readouterr().out
    assert fake_checker.queried() == set(DRIVER_MODULES) - {"duckduckgo"}
    out = capsys.readouterr().out
    assert re.search(r"^duckduckgo\s+skipped .* by design: a scraping driver", out, re.MULTILINE)
    assert out.splitlines()[-1] == (
        "LIVE CHECK: PASSED (21 ok, 0 failed, 1 skipped for a stated reason, 0 not checked)"
    )
    searxng = next(e for e in fake_checker.given if e.engine_id == "searxng")
    assert searxng.endpoint == "https://search.example.org/"
    assert searxng.explicit_endpoint


@pytest.mark.req("REQ-TEST-003")
def test_drift_fails_whatever_the_coverage(
    live_check: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Full coverage does not hide a drifted driver: exit 1, --require or not."""
    checker = FakeChecker(live_check, drift=("pubmed",))
    monkeypatch.setattr(live_check, "network_available", lambda host: True)
    monkeypatch.setattr(live_check, "run_checks", checker)
    _all_keys(live_check, monkeypatch)
    assert live_check.main(["--require"]) == 1
    assert live_check.main([]) == 1


@pytest.mark.req("REQ-TEST-003")
def test_a_skip_the_operator_states_counts_and_is_not_queried(
    live_check: ModuleType,
    fake_checker: FakeChecker,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Brave's key missing and SearXNG without an instance, each skipped with a reason (one by
    --skip, one by RYPSOK_LIVE_SKIP): --require passes, and neither is queried, even the one
    whose instance is known."""
    _all_keys(live_check, monkeypatch, but="brave")
    monkeypatch.setenv("RYPSOK_LIVE_SKIP", "searxng=instance down for maintenance; ")
    argv = ["--require", "--skip", "brave=no Brave subscription for this release"]
    assert live_check.main(argv) == 0, capsys.readouterr().out
    assert {"brave", "searxng"}.isdisjoint(fake_checker.queried())
    out = capsys.readouterr().out
    assert re.search(r"^brave\s+skipped .* operator: no Brave subscription", out, re.MULTILINE)
    assert re.search(r"^searxng\s+skipped .* operator: instance down", out, re.MULTILINE)
    assert "3 skipped for a stated reason, 0 not checked" in out


@pytest.mark.req("REQ-TEST-003")
def test_searxng_without_an_instance_needs_an_explicit_skip(
    live_check: ModuleType,
    fake_checker: FakeChecker,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Every key given but no RYPSOK_LIVE_SEARXNG_URL: SearXNG alone is unchecked, and fails
    --require until a skip states why."""
    _all_keys(live_check, monkeypatch, but="searxng")
    assert live_check.main(["--require"]) == 1
    out = capsys.readouterr().out
    assert "1 not checked" in out
    assert re.search(r"^  searxng\s+needs RYPSOK_LIVE_SEARXNG_URL", out, re.MULTILINE)
    assert live_check.main(["--require", "--skip", "searxng=no instance yet"]) == 0


@pytest.mark.req("REQ-TEST-003")
def test_a_run_narrowed_by_engine_does_not_meet_the_requirement(
    live_check: ModuleType, fake_checker: FakeChecker, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--engine checks one driver; under --require the others were not checked: a failure."""
    _all_keys(live_check, monkeypatch)
    assert live_check.main(["--require", "--engine", "arxiv"]) == 1
    assert fake_checker.queried() == {"arxiv"}
    assert live_check.main(["--engine", "arxiv"]) == 0


@pytest.mark.parametrize(
    "skip",
    ["brave", "brave=", "brave=   ", "bravo=typo in the engine", "=no engine"],
)
def test_a_skip_without_its_reason_or_engine_is_bad_usage(
    live_check: ModuleType, fake_checker: FakeChecker, skip: str
) -> None:
    """A skip is accepted only as ENGINE=REASON for a known engine: exit 2, nothing checked."""
    assert live_check.main(["--require", "--skip", skip]) == 2
    assert fake_checker.given == []


def test_a_bad_skip_in_the_environment_is_bad_usage_too(
    live_check: ModuleType, fake_checker: FakeChecker, monkeypatch: pytest.MonkeyPatch
) -> None:
    """RYPSOK_LIVE_SKIP is read as strictly as --skip."""
    monkeypatch.setenv("RYPSOK_LIVE_SKIP", "searxng=no instance;brave")
    assert live_check.main([]) == 2


@pytest.mark.req("REQ-TEST-003")
def test_duckduckgo_is_never_queried_even_when_the_configuration_enables_it(
    live_check: ModuleType,
    fake_checker: FakeChecker,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """An operator configuration with scraping on still gets DuckDuckGo skipped by design."""
    config = tmp_path / "rypsok.toml"
    config.write_text(
        "schema_version = 1\n[scraping]\nenabled = true\n[engines.duckduckgo]\nenabled = true\n"
    )
    live_check.main(["--config", str(config)])
    assert "duckduckgo" not in {e.engine_id for e in fake_checker.given}
    out = capsys.readouterr().out
    assert re.search(r"^duckduckgo\s+skipped .* by design", out, re.MULTILINE)
    # With --config the operator's configuration key is what is missing, not RYPSOK_LIVE_*.
    assert re.search(r"^  brave\s+needs \[engines\.brave\] api_key_env$", out, re.MULTILINE)


def test_keyless_drivers_off_by_default_are_switched_on_for_the_check(
    live_check: ModuleType, tmp_path: Path
) -> None:
    """Semantic Scholar and PubMed are active in the check's settings, from defaults and from
    an operator configuration that does not mention them; one the operator switched off
    stays off (and is then reported unchecked)."""
    from rypsok.config.load import load_settings
    from rypsok.engines.catalog import resolve_engines

    def active(settings: Any) -> set[str]:
        return {e.engine_id for e in resolve_engines(settings) if e.active}

    assert {"semanticscholar", "pubmed"} <= active(live_check.live_settings(None))
    config = tmp_path / "rypsok.toml"
    config.write_text("schema_version = 1\n[engines.wikipedia]\npreference = 5\n")
    assert {"semanticscholar", "pubmed"} <= active(
        live_check.live_settings(load_settings(str(config))[0])
    )
    config.write_text("schema_version = 1\n[engines.pubmed]\nenabled = false\n")
    found = active(live_check.live_settings(load_settings(str(config))[0]))
    assert "semanticscholar" in found
    assert "pubmed" not in found


def test_every_keyless_driver_off_by_default_is_switched_on(live_check: ModuleType) -> None:
    """ENABLED_FOR_CHECK is every driver that needs no key, is off by default and has a public
    endpoint (SearXNG runs on the operator's instance, DuckDuckGo is skipped by design): a new
    such driver left out would go unchecked."""
    from rypsok.engines.registry import DRIVER_MODULES, load_driver

    expected = []
    for engine_id in DRIVER_MODULES:
        driver = load_driver(engine_id)
        record = driver.admission
        if record.key == "required" or record.enabled_by_default:
            continue
        if engine_id in live_check.BY_DESIGN or ".invalid" in record.endpoint:
            continue
        expected.append(engine_id)
    assert sorted(live_check.ENABLED_FOR_CHECK) == sorted(expected) == ["pubmed", "semanticscholar"]
    assert set(live_check.BY_DESIGN) == {e for e in DRIVER_MODULES if load_driver(e).scraping}, (
        "a scraping driver the live check would query"
    )


def test_the_coverage_split(live_check: ModuleType) -> None:
    """The required-set logic alone: checked, stated (operator or by design), unexplained; a
    driver without any verdict is unexplained, and a run that checked nothing is incomplete."""
    verdict = live_check.Verdict
    verdicts = [
        verdict("arxiv", "ok", "HTTP 200", 3, 1),
        verdict("crossref", "unreachable", "egress: timeout", 0, 1),
        verdict("brave", "skipped", "no key", 0, 0),
        verdict("kagi", "skipped", "operator: no key", 0, 0),
        verdict("duckduckgo", "skipped", "by design", 0, 0),
    ]
    cover = live_check.coverage(verdicts, {"kagi": "no subscription"})
    assert cover.checked == ["arxiv", "crossref"]
    assert cover.stated == {
        "kagi": "no subscription",
        "duckduckgo": live_check.BY_DESIGN["duckduckgo"],
    }
    unexplained = [v.engine for v in cover.unexplained]
    assert "brave" in unexplained
    assert "wikipedia" in unexplained  # no verdict at all
    assert not cover.complete
    everything = [
        verdict(e, "ok", "", 1, 1) for e in live_check.DRIVER_MODULES if e != "duckduckgo"
    ]
    assert live_check.coverage(everything, {}).complete
    nothing = [verdict(e, "skipped", "x", 0, 0) for e in live_check.DRIVER_MODULES]
    every_skip = dict.fromkeys(live_check.DRIVER_MODULES, "stated")
    assert not live_check.coverage(nothing, every_skip).complete


# --- the workflow ------------------------------------------------------------------------------


def _strip_comment(line: str) -> str:
    quote = ""
    for index, char in enumerate(line):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (index == 0 or line[index - 1] == " "):
            return line[:index].rstrip()
    return line


def _scalar(text: str) -> Any:
    if text[:1] == "[" and text[-1:] == "]":
        return [_scalar(item.strip()) for item in text[1:-1].split(",") if item.strip()]
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1].replace("''", "'") if text[0] == "'" else text[1:-1]
    if text in ("true", "false"):
        return text == "true"
    return int(text) if re.fullmatch(r"-?[0-9]+", text) else text


class _Yaml:
    """A reader of the YAML the workflow uses (block mappings and sequences, flow lists of
    scalars, literal blocks): CI's test environment has no YAML library. Checked against
    PyYAML where that is installed (test_the_workflow_reader_agrees_with_pyyaml)."""

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines()
        self.pos = 0

    def _peek(self) -> tuple[int, str] | None:
        while self.pos < len(self.lines):
            line = self.lines[self.pos]
            content = _strip_comment(line.strip())
            if content:
                return len(line) - len(line.lstrip(" ")), content
            self.pos += 1
        return None

    def block(self, deeper_than: int) -> Any:
        first = self._peek()
        if first is None or first[0] <= deeper_than:
            return None
        if first[1] == "-" or first[1].startswith("- "):
            return self._sequence(first[0])
        return self._mapping(first[0])

    def _mapping(self, indent: int) -> dict[str, Any]:
        found: dict[str, Any] = {}
        while (line := self._peek()) is not None and line[0] == indent:
            content = line[1]
            key, sep, value = content.partition(": ")
            if not sep:
                assert content.endswith(":"), f"line {self.pos + 1}: {content!r}"
                key, value = content[:-1], ""
            self.pos += 1
            if value in ("|", "|-"):
                found[key] = self._literal(indent, keep_end=value == "|")
            else:
                found[key] = _scalar(value) if value else self.block(indent)
        return found

    def _sequence(self, indent: int) -> list[Any]:
        items: list[Any] = []
        while (line := self._peek()) is not None and line[0] == indent and line[1][0] == "-":
            item = line[1][1:].lstrip()
            if re.match(r"[\w-]+:( |$)", item):
                # "- key: value" opens a mapping at the column of its first key.
                column = indent + len(line[1]) - len(item)
                self.lines[self.pos] = " " * column + item
                items.append(self._mapping(column))
            else:
                self.pos += 1
                items.append(_scalar(item) if item else self.block(indent))
        return items

    def _literal(self, indent: int, *, keep_end: bool) -> str:
        body: list[str] = []
        while self.pos < len(self.lines):
            line = self.lines[self.pos]
            if line.strip() and len(line) - len(line.lstrip(" ")) <= indent:
                break
            body.append(line)
            self.pos += 1
        while body and not body[-1].strip():
            body.pop()
        margin = min(len(line) - len(line.lstrip(" ")) for line in body if line.strip())
        text = "\n".join(line[margin:] for line in body)
        return text + "\n" if keep_end else text


def load_workflow() -> dict[str, Any]:
    """The release workflow as data."""
    data = _Yaml(WORKFLOW.read_text(encoding="utf-8")).block(-1)
    assert isinstance(data, dict)
    return data


def test_the_workflow_reader_agrees_with_pyyaml() -> None:
    """The small reader above reads the workflow as PyYAML does (YAML 1.1's "on" aside)."""
    yaml = pytest.importorskip("yaml")
    expected = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    expected["on"] = expected.pop(True)
    assert load_workflow() == expected


# The module each tool of the gate is run as (``"$PY" -m <module>``) -> its distribution.
_GATE_TOOLS = {"build": "build", "pytest": "pytest", "mutmut": "mutmut", "pip_audit": "pip-audit"}


def _requirement_name(requirement: str) -> str:
    return re.split(r"[<>=!~;\[ ]", requirement, maxsplit=1)[0].strip().lower()


def test_the_workflow_installs_every_tool_the_gate_runs() -> None:
    """Each ``-m`` module the gate's scripts run (wheel builds, tests, mutation, audit) comes
    from an extra release.yml installs, and is pinned in the constraints file it installs
    with: without it the job fails with ModuleNotFoundError, not with a finding."""
    scripts = "".join(
        (ROOT / name).read_text()
        for name in ("scripts/release_gate.sh", "mutation/run.sh", "scripts/audit_dependencies.py")
    )
    run_as = set(re.findall(r'"\$PY" -m (\w+)', scripts))
    if "pip_audit" in scripts:
        run_as.add("pip_audit")
    assert {"build", "pytest", "mutmut", "pip_audit"} <= run_as
    assert run_as <= set(_GATE_TOOLS), f"a tool without its distribution here: {run_as}"
    install = " ".join(
        str(step.get("run", ""))
        for job in load_workflow()["jobs"].values()
        for step in job["steps"]
    )
    found = re.search(r"-c (\S+) -e '\.\[([\w,-]+)\]'", install)
    assert found is not None, "release.yml installs the project with no extras or constraints"
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    installed = {
        _requirement_name(requirement)
        for extra in found.group(2).split(",")
        for requirement in extras[extra]
    }
    pinned = {
        _requirement_name(line)
        for line in (ROOT / found.group(1)).read_text().splitlines()
        if "==" in line and not line.startswith("#")
    }
    for module in sorted(run_as):
        distribution = _GATE_TOOLS[module]
        assert distribution in installed, f"release.yml's extras do not install {distribution}"
        assert distribution.replace("-", "_") in {p.replace("-", "_") for p in pinned}, (
            f"{distribution} is not pinned in {found.group(1)}"
        )


@pytest.mark.req("REQ-TEST-003")
def test_the_workflow_gives_the_live_leg_every_key_the_live_check_reads(
    live_check: ModuleType,
) -> None:
    """Every driver that takes a key gets its RYPSOK_LIVE_<ID>_API_KEY secret, SearXNG its
    instance URL, and the operator's stated skips come from a repository variable; each only
    in the live leg, so no other job ever holds a provider key."""
    from rypsok.engines.registry import DRIVER_MODULES, load_driver

    legs = [job for job in load_workflow()["jobs"].values() if "matrix" in job.get("strategy", {})]
    step = next(s for s in legs[0]["steps"] if "release_gate.sh" in str(s.get("run", "")))
    env: dict[str, str] = step["env"]
    keyed = [e for e in DRIVER_MODULES if load_driver(e).admission.key != "none"]
    assert len(keyed) == 14
    expected = {
        **{live_check.key_variable(e): "secrets" for e in keyed},
        live_check.SEARXNG_URL_VARIABLE: "secrets",
        live_check.SKIP_VARIABLE: "vars",
    }
    for variable, store in expected.items():
        assert env.get(variable) == (
            f"${{{{ matrix.job == 'live' && {store}.{variable} || '' }}}}"
        ), f"release.yml does not pass {variable} to the live leg"
    for name, value in env.items():
        if "secrets." in str(value) or name.startswith("RYPSOK_LIVE_"):
            assert name in expected, f"{name} reaches the gate but the live check never reads it"


def test_the_workflow_is_manual_only() -> None:
    """Started by hand (workflow_dispatch), on no push, schedule or other event."""
    assert list(load_workflow()["on"]) == ["workflow_dispatch"]


def test_no_workflow_job_or_step_may_fail_or_be_skipped() -> None:
    """No continue-on-error anywhere, no matrix leg cancelled by another's failure, and no
    job that runs whatever the checks say."""
    text = WORKFLOW.read_text(encoding="utf-8")
    assert "continue-on-error" not in text
    assert not re.search(r"\b(always|failure|cancelled)\s*\(", text)
    jobs = load_workflow()["jobs"]
    for name, job in jobs.items():
        strategy = job.get("strategy")
        if strategy is not None:
            assert strategy.get("fail-fast") is False, f"{name}: one failure cancels the rest"
        for step in job["steps"]:
            assert "continue-on-error" not in step
            assert "|| true" not in str(step.get("run", ""))


def test_the_workflow_runs_every_gate_job_in_parallel() -> None:
    """The matrix has one leg per gate job, each running the gate for exactly that job."""
    jobs = load_workflow()["jobs"]
    legs = [
        job
        for job in jobs.values()
        if any("scripts/release_gate.sh" in str(step.get("run", "")) for step in job["steps"])
    ]
    assert len(legs) == 1, "the gate should run from one matrix job"
    job = legs[0]
    assert job["strategy"]["matrix"]["job"] == gate_jobs()
    gate_steps = [s for s in job["steps"] if "scripts/release_gate.sh" in str(s.get("run", ""))]
    assert gate_steps[0]["run"].strip() == "bash scripts/release_gate.sh"
    assert gate_steps[0]["env"]["GATE_JOBS"] == "${{ matrix.job }}"
    assert "fuzz_seconds" in gate_steps[0]["env"]["RELEASE_FUZZ_SECONDS"]


def test_the_tag_needs_every_check_and_tags_the_commit_checked() -> None:
    """The tag job depends on every other job and tags github.sha, the commit every job
    checked out; it alone may write."""
    workflow = load_workflow()
    jobs = workflow["jobs"]
    tagging = [name for name, job in jobs.items() if "refs/tags/" in json.dumps(job)]
    assert tagging == ["tag"]
    tag = jobs["tag"]
    assert set(tag["needs"]) == set(jobs) - {"tag"}
    assert "GITHUB_SHA" in tag["steps"][-1]["run"]
    assert workflow["permissions"] == {"contents": "read"}
    for name, job in jobs.items():
        if name != "tag":
            assert "permissions" not in job, f"{name} should not widen the token"
        for step in job["steps"]:
            if str(step.get("uses", "")).startswith("actions/checkout@"):
                assert step["with"]["ref"] == "${{ github.sha }}", name
                assert step["with"]["persist-credentials"] is False, name
