"""Containment in force and how workers are started (spec 002 "Contained extraction")."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from rypsok.fetch import Extractor
from rypsok.fetch.sandbox import (
    BWRAP,
    PROCESS,
    WORKER_ENV,
    WorkerLimits,
    bwrap_command,
    wants_bwrap,
    worker_command,
)

LIMITS = WorkerLimits(memory_bytes=1 << 30, cpu_seconds=9, cpu_lifetime=180)


def test_the_worker_command_carries_the_limits() -> None:
    command = worker_command(LIMITS)
    assert command[:6] == [sys.executable, "-B", "-s", "-P", "-m", "rypsok.fetch.worker"]
    assert command[6:] == [
        "--memory-bytes",
        str(1 << 30),
        "--cpu-seconds",
        "9",
        "--cpu-lifetime",
        "180",
    ]
    assert set(WORKER_ENV) == {"PYTHONHASHSEED", "LC_ALL"}


def test_the_bubblewrap_command_isolates_the_worker() -> None:
    inner = worker_command(LIMITS)
    command = bwrap_command("/usr/bin/bwrap", inner)
    assert command[0] == "/usr/bin/bwrap"
    for flag in (
        "--unshare-all",
        "--unshare-user",
        "--disable-userns",
        "--die-with-parent",
        "--new-session",
        "--clearenv",
    ):
        assert flag in command
    assert command[command.index("--cap-drop") + 1] == "ALL"
    assert "--share-net" not in command
    assert "--bind" not in command  # only read-only binds
    assert command[command.index("--remount-ro") + 1] == "/"
    assert command[-len(inner) :] == inner
    assert "--proc" not in command
    home = str(Path.home())
    binds = [command[i + 1] for i, arg in enumerate(command) if arg == "--ro-bind-try"]
    assert home not in binds


def test_the_containment_mode(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert wants_bwrap("none") is False
    assert wants_bwrap("auto") is False
    with pytest.raises(RuntimeError):
        wants_bwrap("bwrap")
    assert Extractor(workers=1, sandbox="auto").containment() == PROCESS
    assert Extractor(workers=1, sandbox="none").containment() == PROCESS
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\nexit 1\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    assert wants_bwrap("auto") is True
    assert Extractor(workers=1, sandbox="auto").containment() == BWRAP


@pytest.mark.anyio
async def test_auto_falls_back_when_bubblewrap_cannot_start_a_worker(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\nexit 1\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}")
    async with Extractor(workers=1, sandbox="auto") as extractor:
        assert extractor.containment() == BWRAP
        extraction = await extractor.extract(b"hello", "text/plain", "https://e.org/")
        assert extraction.content == "hello"
        assert extractor.containment() == PROCESS
    async with Extractor(workers=1, sandbox="bwrap") as strict:
        from rypsok.fetch import ExtractionError

        with pytest.raises(ExtractionError):
            await strict.extract(b"hello", "text/plain", "https://e.org/")
        assert strict.containment() == BWRAP
