"""What the web_fetch benchmarks share: the page server process, rypsok's runtime on loopback,
and per-process accounting of CPU and memory from /proc (Linux).

CPU of the worker processes: a worker is a child of the measuring process. Its CPU is read from
``/proc/<pid>/stat`` (utime + stime) while it lives; once it has exited and been reaped, the
kernel adds its whole CPU (with that of its own reaped children) to
``getrusage(RUSAGE_CHILDREN)`` of its parent; a reaped grandchild is likewise in its parent's
cutime + cstime. So at any moment

    children_cpu = sum over live descendants of (utime + stime + cutime + cstime)
                   + RUSAGE_CHILDREN of this process (reaped children and their subtrees)

counts every worker exactly once, whether it lives through a window, starts in it or retires
in it, and the difference over a window is the workers' CPU in it. Under bubblewrap a worker
is a grandchild (bwrap, then the interpreter), so the walk covers all descendants. The page
server (also a child, alive until the end) is left out by its pid; reference processes run
outside the windows.
"""

from __future__ import annotations

import logging
import os
import resource
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

from rypsok.app import runtime
from rypsok.config.load import parse_settings
from rypsok.fetch import Extractor
from rypsok.services.calls import Services

HERE = Path(__file__).resolve().parent
TICK = os.sysconf("SC_CLK_TCK")
# Distinct loopback addresses: LIM-C4 allows 2 fetches in flight per host.
HOSTS = [f"127.0.0.{i}" for i in range(1, 9)]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def self_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def descendants(exclude: set[int]) -> list[tuple[int, list[bytes]]]:
    """(pid, stat fields after the command name) of every live descendant of this process,
    without the processes in ``exclude`` and theirs. A worker under bubblewrap is a grandchild
    (bwrap, then the interpreter), hence descendants and not only children."""
    procs: dict[int, list[bytes]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with Path(f"/proc/{entry.name}/stat").open("rb") as f:
                data = f.read()
        except OSError:
            continue
        procs[int(entry.name)] = data[data.rindex(b")") + 2 :].split()
    found: list[tuple[int, list[bytes]]] = []
    parents = {os.getpid()}
    while True:
        new = [
            (pid, f)
            for pid, f in procs.items()
            if int(f[1]) in parents and pid not in exclude and pid not in parents
        ]
        new = [(pid, f) for pid, f in new if all(pid != p for p, _ in found)]
        if not new:
            return found
        found += new
        parents |= {pid for pid, _ in new}


def children_cpu(exclude: set[int]) -> float:
    """CPU seconds of every descendant so far, live or reaped (see the module docstring)."""
    # utime + stime of each live descendant, plus cutime + cstime: its own reaped children.
    live = sum(sum(int(x) for x in f[11:15]) for _, f in descendants(exclude)) / TICK
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return live + usage.ru_utime + usage.ru_stime


def status_kib(pid: int, key: str) -> int:
    """A ``VmRSS``/``VmHWM`` line of /proc/<pid>/status in KiB, 0 when the process is gone."""
    try:
        with Path(f"/proc/{pid}/status").open("rb") as f:
            for line in f:
                if line.startswith(key.encode() + b":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    import lxml.etree
    import trafilatura

    return {
        "cpus": os.cpu_count(),
        "python": sys.version.split()[0],
        "trafilatura": trafilatura.__version__,
        "libxml2": ".".join(map(str, lxml.etree.LIBXML_VERSION)),
        "load_average_1_5_15_at_start": load_average(),
    }


@contextmanager
def page_server(bomb: Path | None = None) -> Iterator[tuple[int, subprocess.Popen[str]]]:
    """The loopback page server (bench/fetch_pages.py) in its own process, on HOSTS."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, str(HERE / "fetch_pages.py"), str(port), str(bomb or "-"), *HOSTS],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        if proc.stdout.readline().strip() != "ready":
            raise RuntimeError("page server did not start")
        yield port, proc
    finally:
        proc.terminate()
        proc.wait(10)


@asynccontextmanager
async def rypsok(port: int, sandbox: str = "auto") -> AsyncIterator[tuple[Services, Extractor]]:
    """rypsok's runtime as the service builds it, warmed up as the transports warm it up at
    start (the core assembled, the extraction workers started), reaching the loopback server
    through an explicit allow rule (the only departure from production, as in the service
    tests)."""
    settings = parse_settings(
        {
            "schema_version": 1,
            "fetch": {"allow_http": True, "ports": [port], "sandbox": sandbox},
            "service": {"calls_per_minute_web_fetch": 100_000, "log_level": "warning"},
        }
    )
    logger = logging.getLogger("rypsok.bench.fetch")
    logger.setLevel(logging.WARNING)
    async with runtime(settings, logger, extra_allow=["127.0.0.0/8"]) as services:
        # As the transports do right after start: assemble the core and start the workers.
        await services.warm_up()
        yield services, await _extractor(services)


async def _extractor(services: Services) -> Extractor:
    """The extractor behind web_fetch, for its pool statistics and ``start()``.

    Private attributes, read-only, for the benchmark: the FetchService itself, or (when the
    runtime assembles the core lazily) the one the core assembles on first use.
    """
    handler: Any = services._fetch
    if not hasattr(handler, "_extractor"):
        _, handler = await handler.__self__.handlers()
    extractor: Extractor = handler._extractor
    return extractor


def page_url(port: int, size: int, seed: int, host: str = HOSTS[0]) -> str:
    return f"http://{host}:{port}/page/{size}/{seed}.html"


_WARM = """
import sys, urllib.request
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
for url in sys.argv[1:]:
    with opener.open(url, timeout=120) as answer:
        answer.read()
"""


def warm(*urls: str) -> None:
    """Have the page server build these pages now (it builds each on its first request and
    keeps it), outside the measured windows, so that the time a page takes to be generated
    (6 ms for 200 KB, 60 ms for 2 MB) is not counted as rypsok's. In a child process that has
    ended before the caller measures anything, so that neither its memory nor its CPU counts."""
    if urls:
        subprocess.run([sys.executable, "-c", _WARM, *urls], check=True, timeout=600)
