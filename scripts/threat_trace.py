"""Traceability of the threat register: every threat is proven by a test that names it.

Reads the rows of docs/threats.md (``| THR-nn | boundary | flow | threat | control | tests |``)
and the tests under tests/: a test names a threat in its docstring (``Proves THR-07.``), its
class's docstring, or a ``@pytest.mark.thr("THR-07")`` marker. Reports

* rows that no test names (the threat is not proven);
* tests a row lists (``tests/x/test_y.py::test_z``) that do not exist or do not name the row;
* THR ids that tests name but the register does not hold (a stale or mistyped id).

usage: python scripts/threat_trace.py [--register FILE] [--tests DIR] [--list]
exit: 0 every row is proven and every listed test names it; 1 otherwise.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_ROW = re.compile(r"^\|\s*(THR-\d{2,3})\s*\|(?P<cells>.*)\|\s*$")
_THR = re.compile(r"\bTHR-\d{2,3}\b")
_REF = re.compile(r"(tests/[\w/.\-]+\.py)::(\w+)")


def register_rows(path: Path) -> dict[str, list[tuple[str, str]]]:
    """THR id to the tests its row lists, as (file, function) pairs."""
    rows: dict[str, list[tuple[str, str]]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        match = _ROW.match(line.strip())
        if match is None:
            continue
        thr = match.group(1)
        if thr in rows:
            raise SystemExit(f"{path}: {thr} appears in two rows")
        cells = match.group("cells").split("|")
        rows[thr] = _REF.findall(cells[-1]) if cells else []
    return rows


def _marker_ids(decorators: list[ast.expr]) -> set[str]:
    found: set[str] = set()
    for decorator in decorators:
        if not isinstance(decorator, ast.Call):
            continue
        func = decorator.func
        if isinstance(func, ast.Attribute) and func.attr == "thr":
            for arg in decorator.args:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    found |= set(_THR.findall(arg.value))
    return found


def naming_tests(tests: Path) -> dict[str, set[str]]:
    """THR id to the tests (``file::function``) that name it."""
    named: dict[str, set[str]] = defaultdict(set)
    for path in sorted(tests.rglob("test_*.py")):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        except SyntaxError as error:
            raise SystemExit(f"{path}: cannot be parsed: {error}") from None
        relative = path.relative_to(tests.parent).as_posix()

        def visit(body: list[ast.stmt], inherited: set[str], relative: str = relative) -> None:
            for node in body:
                if isinstance(node, ast.ClassDef):
                    own = set(_THR.findall(ast.get_docstring(node) or ""))
                    visit(node.body, inherited | own | _marker_ids(node.decorator_list), relative)
                elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    if not node.name.startswith("test"):
                        continue
                    ids = set(_THR.findall(ast.get_docstring(node) or ""))
                    ids |= _marker_ids(node.decorator_list) | inherited
                    for thr in ids:
                        named[thr].add(f"{relative}::{node.name}")

        module_marks: set[str] = set()
        for node in tree.body:
            # pytestmark = pytest.mark.thr("THR-nn") marks every test of the module.
            if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets
            ):
                values = node.value.elts if isinstance(node.value, ast.List) else [node.value]
                module_marks |= _marker_ids([v for v in values if isinstance(v, ast.expr)])
        visit(tree.body, module_marks)
    return named


def main(argv: list[str] | None = None) -> int:
    """Print the trace and exit 1 when a threat is not proven by a naming test."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--register", type=Path, default=ROOT / "docs" / "threats.md")
    parser.add_argument("--tests", type=Path, default=ROOT / "tests")
    parser.add_argument("--list", action="store_true", help="print every row and its tests")
    args = parser.parse_args(argv)

    rows = register_rows(args.register)
    if not rows:
        sys.stdout.write(f"no THR rows in {args.register}\n")
        return 1
    named = naming_tests(args.tests)
    problems: list[str] = []
    for thr, listed in rows.items():
        proving = named.get(thr, set())
        if not proving:
            problems.append(f"{thr}: no test names it")
        for file, function in listed:
            if f"{file}::{function}" not in proving:
                problems.append(f"{thr}: listed test {file}::{function} is missing or silent")
        if args.list:
            sys.stdout.write(f"{thr}: {', '.join(sorted(proving)) or '-'}\n")
    for thr in sorted(set(named) - set(rows)):
        problems.append(f"{thr}: named by {sorted(named[thr])[0]} but not in the register")
    for problem in problems:
        sys.stdout.write(problem + "\n")
    proven = sum(1 for thr in rows if named.get(thr))
    verdict = "FAILED" if problems else "PASSED"
    sys.stdout.write(
        f"THREAT TRACE: {verdict} ({proven} of {len(rows)} threats proven by a naming test, "
        f"{len(problems)} problems)\n"
    )
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
