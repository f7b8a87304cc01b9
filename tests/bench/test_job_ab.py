"""bench/job_ab.py: the settings a ``--variant`` names, and a whole run of one checkout."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import job_ab  # noqa: E402


def test_a_variant_names_boolean_settings() -> None:
    assert job_ab.settings("favor_recall=false,fast=TRUE") == {
        "favor_recall": False,
        "fast": True,
    }
    assert job_ab.settings("") == {}


@pytest.mark.parametrize("variant", ["favor_recall", "favor_recall=0", "fast=yes"])
def test_a_malformed_variant_says_what_to_give(variant: str) -> None:
    with pytest.raises(SystemExit, match="NAME=true or NAME=false"):
        job_ab.settings(variant)


def test_a_run_reports_the_shipped_job_and_each_variant() -> None:
    root = BENCH.parent
    options = ["--size", "20000", "--pages", "2", "--rounds", "1", "--variant", "fast=true"]
    out = subprocess.run(
        [sys.executable, str(BENCH / "job_ab.py"), str(root), *options],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.splitlines()
    assert [line.split(":")[0] for line in out] == [f"round 1 {root}", f"round 1 {root} fast=true"]
    assert all("ratio" in line for line in out)
