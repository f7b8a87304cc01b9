"""The worker process: ``python -m rypsok.fetch.worker --memory-bytes N --cpu-seconds S``.

A worker reads job frames on standard input and writes reply frames on a private copy of its
original standard output (:mod:`rypsok.fetch.protocol`). Right at start it points its file
descriptor 1 at descriptor 2, which the parent opened on ``/dev/null``: nothing a library prints
can reach the parent's standard output, which is the MCP wire in stdio mode, nor the logs,
which must never carry page content (REQ-OBS-006).

Before the first job it loads everything it needs (a warm-up extraction) and then limits
itself (REQ-PAGE-008, REQ-SEC-014): RLIMIT_AS (address space), RLIMIT_CPU (the soft limit is
raised by ``--cpu-seconds`` before every job, the hard limit ``--cpu-lifetime`` ends a worker
that has used its share; the worker retires itself before it would exceed it), RLIMIT_CORE 0,
RLIMIT_FSIZE 0 (no file writes), RLIMIT_NPROC 0 (no fork, no threads where the kernel enforces
it for the user) and a small RLIMIT_NOFILE. A job that raises makes the worker reply ``FAILED``
and exit, because its state after a MemoryError or RecursionError is not trusted.

:func:`serve` is the loop; tests start it with their own handler to simulate hostile jobs.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import resource
import sys
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from rypsok.fetch.memory import TRIM_AFTER_BYTES, release_large_blocks, trim
from rypsok.fetch.protocol import (
    FAILED,
    JOB_HEADER,
    MAX_BODY_BYTES,
    MAX_JOB_JSON_BYTES,
    READY,
    REPLY_HEADER,
    RETIRE,
    reply_frame,
)

Handler = Callable[[dict[str, Any], bytearray], bytes]
"""A job handler: the job's JSON object and its body, which the handler may clear as soon as
it no longer needs it (the worker's memory, REQ-PERF-003); returns the reply payload."""
Loader = Callable[[], Handler]

_OPEN_FILES = 64
_RECURSION_LIMIT = 20000


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _read_exact(fd: int, size: int) -> bytearray | None:
    """``size`` bytes read straight into one buffer (no chunks to join), or None at the end."""
    data = bytearray(size)
    view = memoryview(data)
    while view:
        got = os.readv(fd, [view])
        if not got:
            return None
        view = view[got:]
    view.release()
    return data


def _cpu_used() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _set(which: int, soft: int, hard: int) -> None:
    try:
        resource.setrlimit(which, (soft, hard))
    except (ValueError, OSError):
        # A limit the platform refuses is skipped; RLIMIT_AS and RLIMIT_CPU are checked below.
        if which in (resource.RLIMIT_AS, resource.RLIMIT_CPU):
            raise


def apply_limits(memory_bytes: int, cpu_lifetime: int) -> None:
    """Set the process limits of this worker (see the module docstring)."""
    _set(resource.RLIMIT_CORE, 0, 0)
    _set(resource.RLIMIT_AS, memory_bytes, memory_bytes)
    _set(resource.RLIMIT_CPU, cpu_lifetime, cpu_lifetime)
    _set(resource.RLIMIT_FSIZE, 0, 0)
    _set(resource.RLIMIT_NOFILE, _OPEN_FILES, _OPEN_FILES)
    _set(resource.RLIMIT_NPROC, 0, 0)


def _arm_cpu(cpu_seconds: int, cpu_lifetime: int) -> None:
    soft = min(math.ceil(_cpu_used()) + cpu_seconds, cpu_lifetime)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, cpu_lifetime))


def _quiet() -> int:
    """Keep a private descriptor for replies and send everything printed to descriptor 2."""
    reply_fd = os.dup(1)
    os.dup2(2, 1)
    logging.disable(logging.CRITICAL)
    warnings.simplefilter("ignore")
    return reply_fd


def serve(load: Loader, *, memory_bytes: int, cpu_seconds: int, cpu_lifetime: int) -> int:
    """Run the job loop until standard input ends or the worker retires; return the exit code.

    ``load`` imports and warms up the job handler; it runs after standard output is diverted
    and before the limits apply.
    """
    reply_fd = _quiet()
    sys.setrecursionlimit(_RECURSION_LIMIT)
    # A worker's high-water mark is then one job's, not the sum of its jobs' leftovers.
    release_large_blocks()
    handler = load()
    apply_limits(memory_bytes, cpu_lifetime)
    trim()  # what the warm-up freed goes back before the first job
    _write_all(reply_fd, reply_frame(READY, b""))
    while True:
        header = _read_exact(0, JOB_HEADER.size)
        if header is None:
            return 0
        json_size, body_size = JOB_HEADER.unpack(header)
        if json_size > MAX_JOB_JSON_BYTES or body_size > MAX_BODY_BYTES:
            return 2
        job_json = _read_exact(0, json_size)
        body = _read_exact(0, body_size)
        if job_json is None or body is None:
            return 0
        flags = 0
        _arm_cpu(cpu_seconds, cpu_lifetime)
        try:
            job = json.loads(job_json)
            if not isinstance(job, dict):
                raise TypeError("job must be an object")
            payload = handler(job, body)
        except Exception:
            # Any failure of a job ends this worker (its state is not trusted), not the service.
            payload, flags = b"", FAILED | RETIRE
        del body
        if _cpu_used() + cpu_seconds >= cpu_lifetime:
            flags |= RETIRE
        # Header and payload in two writes: joining them would copy the payload once more.
        _write_all(reply_fd, REPLY_HEADER.pack(len(payload), flags))
        _write_all(reply_fd, payload)
        del payload
        if flags & RETIRE:
            return 0
        if body_size >= TRIM_AFTER_BYTES:
            # What the job freed goes back to the system, so that the next job starts from
            # the idle worker's memory and the high-water mark stays one job's.
            trim()


def _arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="rypsok.fetch.worker", add_help=False)
    parser.add_argument("--memory-bytes", type=int, required=True)
    parser.add_argument("--cpu-seconds", type=int, required=True)
    parser.add_argument("--cpu-lifetime", type=int, required=True)
    return parser.parse_args(argv)


def _load_pipeline() -> Handler:
    # Imported here, after standard output is diverted, so no import can write to the wire.
    from rypsok.fetch import pipeline

    pipeline.warm_up()
    return pipeline.handle


def main(argv: Sequence[str] | None = None, load: Loader = _load_pipeline) -> int:
    """Entry point of a worker; ``load`` returns the job handler (the production pipeline)."""
    args = _arguments(argv)
    return serve(
        load,
        memory_bytes=args.memory_bytes,
        cpu_seconds=args.cpu_seconds,
        cpu_lifetime=args.cpu_lifetime,
    )


if __name__ == "__main__":
    raise SystemExit(main())
