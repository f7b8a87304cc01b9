"""How worker processes are started, and which containment is in force (spec 002).

Always: a separate process with a cleared environment, its own session, standard error on
``/dev/null`` and the limits of :mod:`rypsok.fetch.worker` (``process+rlimits``).

With ``[fetch] sandbox = "bwrap"``, or ``"auto"`` when ``bwrap`` is on PATH, the worker also
starts under bubblewrap (``process+rlimits+bwrap``): new user, PID, network, IPC, UTS and cgroup
namespaces (no network at all), nested user namespaces disabled, all capabilities dropped, a
cleared environment, and a root file system that holds only read-only binds of the interpreter,
its libraries and rypsok's code, plus a minimal ``/dev``. No home, no checkout beyond the
package, no host ``/proc``, nothing writable. ``"bwrap"`` without bubblewrap is a start-up error;
``"auto"`` falls back to ``process+rlimits`` when bwrap is missing or cannot start a worker, and
:meth:`rypsok.fetch.extractor.Extractor.containment` reports what is in force.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import rypsok

SandboxMode = Literal["auto", "bwrap", "none"]
PROCESS = "process+rlimits"
BWRAP = "process+rlimits+bwrap"

# Standard locations of the dynamic loader, libraries and certificates of a Linux system.
_SYSTEM_PATHS = (
    "/usr",
    "/lib",
    "/lib64",
    "/lib32",
    "/bin",
    "/sbin",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/alternatives",
)
WORKER_ENV = {"PYTHONHASHSEED": "0", "LC_ALL": "C.UTF-8"}


@dataclass(frozen=True, slots=True)
class WorkerLimits:
    """The limits a worker is started with."""

    memory_bytes: int
    cpu_seconds: int
    cpu_lifetime: int


def bwrap_path() -> str | None:
    """Where ``bwrap`` is, or ``None``."""
    return shutil.which("bwrap")


def wants_bwrap(mode: SandboxMode) -> bool:
    """Whether workers should start under bubblewrap; raises when it is required and missing."""
    if mode == "none":
        return False
    found = bwrap_path() is not None
    if mode == "bwrap" and not found:
        raise RuntimeError('[fetch] sandbox = "bwrap" but bwrap is not on PATH')
    return found


WORKER_PROGRAM = (sys.executable, "-B", "-s", "-P", "-m", "rypsok.fetch.worker")


def worker_command(limits: WorkerLimits, program: Sequence[str] = WORKER_PROGRAM) -> list[str]:
    """The command of a worker: ``program`` (by default the interpreter with ``-B``, no
    bytecode written, ``-s``, no user site, and ``-P``, no current directory on the module
    path; the caller clears the environment) followed by the limit arguments of
    :mod:`rypsok.fetch.worker`."""
    return [
        *program,
        "--memory-bytes",
        str(limits.memory_bytes),
        "--cpu-seconds",
        str(limits.cpu_seconds),
        "--cpu-lifetime",
        str(limits.cpu_lifetime),
    ]


def _read_only_binds() -> list[str]:
    paths: list[str] = []
    for candidate in (
        *_SYSTEM_PATHS,
        sys.prefix,
        sys.base_prefix,
        sys.exec_prefix,
        str(Path(sys.executable).parent),
        str(Path(sys.executable).resolve().parent.parent),
        str(Path(rypsok.__file__).resolve().parent.parent),  # the package, also when editable
    ):
        for path in dict.fromkeys((candidate, str(Path(candidate).resolve()))):
            if path not in paths:
                paths.append(path)
    binds: list[str] = []
    for path in paths:
        binds += ["--ro-bind-try", path, path]
    return binds


def bwrap_command(bwrap: str, inner: list[str]) -> list[str]:
    """Wrap ``inner`` in bubblewrap (see the module docstring)."""
    command = [
        bwrap,
        "--unshare-all",
        "--unshare-user",
        "--disable-userns",
        "--die-with-parent",
        "--new-session",
        "--cap-drop",
        "ALL",
        "--clearenv",
    ]
    for name, value in WORKER_ENV.items():
        command += ["--setenv", name, value]
    command += _read_only_binds()
    command += ["--dev", "/dev", "--remount-ro", "/", "--chdir", "/", "--", *inner]
    return command
