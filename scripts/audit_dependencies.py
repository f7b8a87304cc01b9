"""Dependency vulnerability audit with an honest verdict (REQ-SEC-020).

pip-audit prints "No known vulnerabilities found" even when it could not reach the advisory
service and skipped every package. This wrapper reads its JSON report and says which happened:

* AUDITED, no known vulnerabilities      -> exit 0
* VULNERABLE (packages and advisories)   -> exit 1
* NOT AUDITED (N of M packages skipped)  -> exit 0, or exit 1 with --require (the release gate)

The project itself is not a dependency: CI, the release gate and release.yml install it editable,
and pip-audit (``--skip-editable``) reports it as skipped, "distribution marked as editable".
That one entry, the project's own distribution by its normalized name, is left out of the
count and reported on its own line; any other skipped package, editable or not, still makes
the verdict NOT AUDITED.

usage: python scripts/audit_dependencies.py [--require] [--timeout SECONDS]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def normalized(name: str) -> str:
    """A distribution name as PEP 503 compares them (``Rypsok_X`` is ``rypsok-x``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def project_name(pyproject: Path = PYPROJECT) -> str:
    """The normalized name of this project's own distribution (``[project] name``)."""
    with pyproject.open("rb") as handle:
        return normalized(tomllib.load(handle)["project"]["name"])


def is_own_editable(entry: dict[str, Any], own: str) -> bool:
    """Whether ``entry`` is the project itself, skipped by pip-audit for being editable.

    Only that exact case is ours: the project installed otherwise, or skipped for any other
    reason, is not excluded, and neither is any other editable package (which would be a
    dependency nobody audited).
    """
    return normalized(str(entry.get("name", ""))) == own and "editable" in str(
        entry.get("skip_reason", "")
    )


def main() -> int:
    """Run pip-audit on the current environment and print one verdict line."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--require", action="store_true", help="fail when not audited")
    parser.add_argument("--timeout", type=float, default=300.0)
    args = parser.parse_args()
    command = [
        sys.executable,
        "-m",
        "pip_audit",
        "--local",
        "--format",
        "json",
        "--progress-spinner",
        "off",
        "--skip-editable",
    ]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=args.timeout, check=False
        )
    except subprocess.TimeoutExpired:
        print("DEPENDENCY AUDIT: NOT AUDITED (pip-audit timed out)")
        return 1 if args.require else 0
    try:
        report = json.loads(done.stdout or "{}")
    except ValueError:
        print(f"DEPENDENCY AUDIT: NOT AUDITED (pip-audit gave no report, exit {done.returncode})")
        return 1 if args.require else 0
    own = project_name()
    listed = report.get("dependencies", [])
    deps = [d for d in listed if not is_own_editable(d, own)]
    if len(deps) != len(listed):
        # Said on its own line, so nobody reads the verdict as covering our own code.
        print(f"  not audited as a dependency: {own} (the project itself, installed editable)")
    skipped = [d["name"] for d in deps if d.get("skip_reason")]
    vulnerable = [
        (d["name"], d["version"], [v["id"] for v in d.get("vulns", [])])
        for d in deps
        if d.get("vulns")
    ]
    for name, version, ids in vulnerable:
        print(f"  vulnerable: {name} {version}: {', '.join(ids)}")
    if vulnerable:
        print(f"DEPENDENCY AUDIT: VULNERABLE ({len(vulnerable)} packages)")
        return 1
    if skipped or not deps:
        editable = [d["name"] for d in deps if "editable" in str(d.get("skip_reason", ""))]
        for name in editable:
            # Another editable install is a dependency pip-audit never looked at, whatever the
            # network: name it, since "not reachable" would send the operator the wrong way.
            print(f"  skipped, installed editable: {name}")
        why = (
            f"{len(editable)} installed editable"
            if editable
            else "the advisory service was not reachable"
        )
        print(
            f"DEPENDENCY AUDIT: NOT AUDITED ({len(skipped)} of {len(deps)} packages skipped; "
            f"{why}). Run it where it is: python scripts/audit_dependencies.py --require"
        )
        return 1 if args.require else 0
    print(f"DEPENDENCY AUDIT: AUDITED, {len(deps)} packages, no known vulnerabilities")
    return 0


if __name__ == "__main__":
    sys.exit(main())
