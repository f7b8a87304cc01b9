"""License check of everything rypsok ships with: its runtime dependency closure (REQ-SEC-020).

Each package's license (License-Expression, else License, else the classifiers) must be on the
allow-list in requirements/licenses.toml, or the package must be listed there as an exception
with the reason it is acceptable. Prints one line per package and a verdict; exit 1 on failure.
"""

from __future__ import annotations

import re
import sys
import tomllib
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement

POLICY = Path(__file__).resolve().parent.parent / "requirements" / "licenses.toml"


def closure(root: str) -> set[str]:
    """Names of the installed runtime dependencies of ``root`` (extras excluded), recursively."""
    seen: set[str] = set()
    todo = [root]
    while todo:
        name = todo.pop()
        key = re.sub(r"[-_.]+", "-", name).lower()
        if key in seen:
            continue
        seen.add(key)
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        for line in requires:
            req = Requirement(line)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(req.name)
    seen.discard(re.sub(r"[-_.]+", "-", root).lower())
    return seen


def license_of(name: str) -> str:
    """The declared license of an installed distribution."""
    meta = metadata.metadata(name)
    expression = meta.get("License-Expression")
    if expression:
        return expression.strip()
    classifiers = [
        c.split(" :: ")[-1] for c in meta.get_all("Classifier") or [] if c.startswith("License ::")
    ]
    if classifiers:
        return " OR ".join(classifiers)
    return (meta.get("License") or "UNKNOWN").strip().splitlines()[0][:80]


def acceptable(found: str, allowed: set[str]) -> bool:
    """Whether a declaration is allowed: one alternative of an OR (or ;) whose AND terms all are."""
    if found in allowed:
        return True
    for alternative in re.split(r"\s+OR\s+|;", found):
        terms = [
            t.strip().removeprefix("(").removesuffix(")")
            for t in re.split(r"\s+AND\s+", alternative.strip())
        ]
        if terms and all(t in allowed for t in terms):
            return True
    return False


def main() -> int:
    """Check every runtime dependency's license against the policy."""
    policy = tomllib.loads(POLICY.read_text(encoding="utf-8"))
    allowed = set(policy["allowed"])
    exceptions = policy.get("exceptions", {})
    failures = 0
    for name in sorted(closure("rypsok")):
        found = license_of(name)
        if name in exceptions:
            verdict = f"exception: {exceptions[name]}"
        elif acceptable(found, allowed):
            verdict = "allowed"
        else:
            verdict = "NOT ALLOWED"
            failures += 1
        print(f"  {name:<28} {found:<40} {verdict}")
    print(f"LICENSE CHECK: {'FAILED' if failures else 'PASSED'} ({failures} not allowed)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
