"""Distribution (REQ-DEP-005, REQ-MAIN-006).

The build itself (sdist and wheel, installed into a fresh virtual environment, ``rypsok
--version`` run) is scripts/check_dist.sh, a CI step: too slow for the test suite. These tests
keep what it relies on true: one source of the version, a changelog entry for it that states
the tag rule, the supported protocol revisions and the contract-versioning rule.
"""

from __future__ import annotations

import os
import re
import subprocess
import tomllib

from rypsok import __version__
from tests.support import ROOT

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
CHANGELOG = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")


def test_req_dep_005_version_has_one_source() -> None:
    """REQ-DEP-005: the package version is read from rypsok.__version__ and written nowhere
    else in the package's sources."""
    assert "version" not in PYPROJECT["project"]
    assert "version" in PYPROJECT["project"]["dynamic"]
    assert PYPROJECT["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "rypsok.__version__"}
    literal = re.compile(rf"[\"']{re.escape(__version__)}[\"']")
    copies = [
        p.relative_to(ROOT).as_posix()
        for p in (ROOT / "src").rglob("*.py")
        if p.name != "__init__.py" or p.parent.name != "rypsok"
        if literal.search(p.read_text(encoding="utf-8"))
    ]
    assert copies == []


def test_req_dep_005_changelog_has_the_version_and_the_tag_rule() -> None:
    """REQ-DEP-005: the changelog (Keep a Changelog) has an entry for the current version and
    says that tags carry no ``v`` prefix."""
    assert "## [Unreleased]" in CHANGELOG
    assert re.search(rf"^## \[{re.escape(__version__)}\]", CHANGELOG, re.MULTILINE)
    assert "without a\n`v` prefix" in CHANGELOG or "without a `v` prefix" in CHANGELOG


def test_req_main_006_changelog_states_contract_versioning_and_revisions() -> None:
    """REQ-MAIN-006: the changelog states that a change of a tool name, parameter, response
    field, outcome or error kind is breaking, and names the protocol revisions of the pinned
    SDK."""
    text = " ".join(CHANGELOG.split())
    for word in ("Tool names", "parameters", "response fields", "outcomes", "error kinds"):
        assert word in text
    assert "breaking change" in text and "major version" in text
    pins = [d for d in PYPROJECT["project"]["dependencies"] if d.startswith("mcp==")]
    assert len(pins) == 1 and f"`{pins[0]}`" in text
    for revision in ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"):
        assert revision in text


def test_req_dep_005_distribution_check_script() -> None:
    """REQ-DEP-005: the CI's distribution check exists, is executable and is valid bash."""
    script = ROOT / "scripts" / "check_dist.sh"
    assert os.access(script, os.X_OK)
    done = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    text = script.read_text(encoding="utf-8")
    assert "-m build" in text and "-m venv" in text and "--version" in text
