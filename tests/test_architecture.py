"""The shape of the code and of the gate (REQ-ARCH-005, REQ-TEST-012, REQ-RUST-002, REQ-ERR-002)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from rypsok.contract.vocabulary import ErrorKind, FailureClass, Outcome

ROOT = Path(__file__).resolve().parents[1]
CORE = (
    "rypsok.config.load",
    "rypsok.contract.tools",
    "rypsok.contract.arguments",
    "rypsok.boundary",
    "rypsok.privacy",
    "rypsok.egress.gateway",
    "rypsok.engines.catalog",
    "rypsok.search.pipeline",
    "rypsok.fetch",
    "rypsok.fetch.retrieve",
    "rypsok.health.monitor",
    "rypsok.services.calls",
    "rypsok.services.search",
    "rypsok.services.fetch",
)


def test_req_arch_005_core_loads_no_protocol_sdk() -> None:
    """REQ-ARCH-005: importing the whole core loads no MCP SDK, ASGI server or web framework."""
    code = (
        "import importlib, sys\n"
        f"for name in {CORE!r}: importlib.import_module(name)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('mcp', 'mcp_types', 'starlette', 'uvicorn', 'sse_starlette', 'fastapi'))\n"
        "print(','.join(bad))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert done.stdout.strip() == ""


def test_req_arch_005_import_contracts_kept() -> None:
    """REQ-ARCH-005, REQ-MAIN-001, REQ-MAIN-002: the import-linter contracts hold."""
    lint_imports = Path(sys.executable).parent / "lint-imports"
    done = subprocess.run(
        [str(lint_imports)], capture_output=True, text=True, cwd=ROOT, check=False, timeout=300
    )
    assert done.returncode == 0, done.stdout[-2000:]
    assert "0 broken" in done.stdout


def test_req_test_012_the_gate_runs_every_check() -> None:
    """REQ-TEST-012, REQ-SEC-020: the CI gate runs formatting, lints including no-print,
    types, the import contracts, the dependency audit, the license check and the tests."""
    gate = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    for step in (
        "ruff format --check",
        "ruff check",
        "mypy",
        "lint-imports",
        "audit_dependencies.py",
        "check_licenses.py",
        "python -m pytest",
    ):
        assert step in gate, step
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert '"T20"' in pyproject and '"S"' in pyproject and "strict = true" in pyproject
    assert '"mcp==2.3.0"' in pyproject  # REQ-ARCH-008: the SDK pinned exactly


def test_req_rust_002_pure_python_package() -> None:
    """REQ-RUST-002 (adapted): the package is pure Python, so one wheel runs everywhere."""
    compiled = [p for p in (ROOT / "src").rglob("*") if p.suffix in (".so", ".pyd", ".c", ".pyx")]
    assert compiled == []


def test_req_err_002_fixed_vocabularies() -> None:
    """REQ-ERR-001, REQ-ERR-002, REQ-ENG-006, REQ-SEC-016: the outcome, error kind and engine
    failure vocabularies are exactly the specified ones."""
    assert {o.value for o in Outcome} == {"ok", "partial", "empty", "error"}
    assert {k.value for k in ErrorKind} == {
        "invalid_request",
        "denied",
        "unavailable",
        "redirected",
        "unsupported_content",
        "too_large",
    }
    assert {c.value for c in FailureClass} == {
        "timeout",
        "rate_limited",
        "blocked",
        "parse_failure",
        "auth_failure",
        "request_failure",
    }


def test_design_document_lists_every_error_kind_and_reason() -> None:
    """The external design (docs/design.md) names every error kind and reason of the code."""
    from rypsok.contract.vocabulary import Reason

    design = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
    missing = [r.value for r in Reason if f"`{r.value}`" not in design]
    missing += [k.value for k in ErrorKind if f"`{k.value}`" not in design]
    assert missing == []
