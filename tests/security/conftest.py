"""Security tests: the ``thr`` marker names the threat of docs/threats.md a test proves."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FUZZ = ROOT / "fuzz"


def pytest_configure(config: pytest.Config) -> None:
    """Register ``@pytest.mark.thr("THR-nn", ...)`` (scripts/threat_trace.py reads it)."""
    config.addinivalue_line("markers", "thr(*ids): the threats of docs/threats.md a test proves")


@pytest.fixture(scope="session")
def fuzz_path() -> Path:
    """The fuzz/ folder, importable (its targets import their harness as a sibling)."""
    if str(FUZZ) not in sys.path:
        sys.path.insert(0, str(FUZZ))
    return FUZZ
