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
case "$1" in
    rev-parse) echo "__COMMIT__" ;;
    status) ;;
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


def run_gate(tmp_path: Path, *, fail: str = "", jobs: str | None = None) -> GateRun:
    """Run the real gate script in a scratch tree with the fakes; return what happened."""
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
    }
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


@pytest.fixture
def live_check(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """scripts/live_check.py, imported as a module."""
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
