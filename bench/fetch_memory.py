"""web_fetch memory: peak resident memory of rypsok's process plus its extraction workers,
against the formula of REQ-PERF-003, and a compression bomb.

A sampler thread reads VmRSS of this process and of every live descendant (the workers, and
the bubblewrap processes around them when bubblewrap is in use) from /proc every 10 ms and
keeps the peak of the sum; the page server (bench/fetch_pages.py, its own process) is not
counted. rypsok runs as the service builds it (``runtime()``, loopback reached through an
explicit allow rule, default limits: LIM-C3 = 8 fetches in flight, LIM-C4 = 2 per host,
LIM-C5 = 2 workers, LIM-F3 = 4 MiB bodies).

Steps, in one process:

1. base: RSS of rypsok's process idle (1 s) after start (the warm-up that starts the
   workers) and one small (20 KB) fetch; the idle workers are reported apart;
2. bomb: one fetch of a 1 MiB gzip body that inflates to 1 GiB, served with
   ``Content-Encoding: gzip``; it must end with ``too_large``, the process's RSS staying under
   150 MiB (the issue's target), shown by the sampler's peak and by VmHWM before and after;
3. parse cost: fetches of 4 MiB pages (just under LIM-F3) alone, one at a time, two per
   worker; the parse cost is the highest high-water mark (VmHWM) of a worker after them (a
   worker's first page leaves a lower mark, reported as well: a worker in service has done
   more than one);
4. 8 fetches at once of distinct 4 MiB pages from 8 loopback hosts (LIM-C4 is per host), three
   rounds; peak of the sum, compared with base + LIM-C3 x LIM-F3 + LIM-C5 x parse cost. The
   page server builds each round's pages before the round, so that all 8 bodies arrive at
   once (it builds a page on its first request, which otherwise staggers them).

Reference: the official fetch server's own ``fetch_url`` (bench/fetch_reference.py) on the same
bomb, in a subprocess whose address space is limited to ``--reference-as-gib`` (default 4) with
``RLIMIT_AS``, so that it cannot take the shared machine down; its peak is its ``ru_maxrss``
from ``wait4``. ``--no-reference`` skips it.

usage: python bench/fetch_memory.py [--rounds 3] [--no-reference] [--json out.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from fetch_common import (
    HOSTS,
    descendants,
    load_average,
    machine,
    page_server,
    page_url,
    rypsok,
    status_kib,
    warm,
)
from fetch_pages import gzip_bomb
from rypsok.config.limits import limit

MIB = 1024 * 1024
BIG = 4 * MIB - 8 * 1024  # a page just under LIM-F3 (4 MiB)
SINGLE_SEED = 1000  # the pages of step 3, distinct from those of the rounds (seeds from 1)
SMALL = 20_000


class Sampler:
    """Peak of VmRSS summed over this process and its descendants, every ``period_s``."""

    def __init__(self, exclude: set[int], period_s: float = 0.01) -> None:
        self._exclude = exclude
        self._period_s = period_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.reset()

    def reset(self) -> None:
        self.peak_sum_kib = 0
        self.peak_self_kib = 0
        self.peak_descendants_kib = 0
        self.samples = 0

    def sample(self) -> tuple[int, int]:
        own = status_kib(os.getpid(), "VmRSS")
        others = sum(status_kib(pid, "VmRSS") for pid, _ in descendants(self._exclude))
        return own, own + others

    def _run(self) -> None:
        while not self._stop.is_set():
            own, total = self.sample()
            self.peak_self_kib = max(self.peak_self_kib, own)
            self.peak_sum_kib = max(self.peak_sum_kib, total)
            self.peak_descendants_kib = max(self.peak_descendants_kib, total - own)
            self.samples += 1
            self._stop.wait(self._period_s)

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def mib(kib: float) -> float:
    return round(kib / 1024, 1)


def worker_kib(exclude: set[int], key: str) -> dict[int, int]:
    """VmRSS or VmHWM of each descendant that is an extraction worker (not bwrap itself)."""
    out = {}
    for pid, _ in descendants(exclude):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if (
            b"rypsok.fetch.worker" in cmdline
            and not cmdline.startswith(b"bwrap")
            and (b"/bwrap" not in cmdline.split(b"\0")[0])
        ):
            out[pid] = status_kib(pid, key)
    return out


async def measure(port: int, server_pid: int, bomb_url: str, args: argparse.Namespace) -> dict:
    exclude = {server_pid}
    result: dict[str, Any] = {}
    me = os.getpid()
    with Sampler(exclude) as sampler:
        async with rypsok(port, args.sandbox) as (services, extractor):
            result["containment"] = extractor.containment()

            async def call(url: str) -> dict[str, Any]:
                return (await services.call("web_fetch", {"url": url})).structured

            # 1. base
            small = await call(page_url(port, SMALL, 0))
            await asyncio.sleep(1.0)
            own, total = sampler.sample()
            idle_workers = worker_kib(exclude, "VmRSS")
            result["base"] = {
                "small_fetch_outcome": small.get("outcome"),
                "process_rss_mib": mib(own),
                "process_and_descendants_rss_mib": mib(total),
                "idle_worker_rss_mib": [mib(v) for v in idle_workers.values()],
                "load_average": load_average(),
            }
            base_kib = own
            # 2. bomb
            hwm_before = status_kib(me, "VmHWM")
            sampler.reset()
            t0 = time.perf_counter()
            bomb = await call(bomb_url)
            wall = time.perf_counter() - t0
            await asyncio.sleep(0.05)
            error = bomb.get("error") or {}
            result["bomb"] = {
                "inflated_bytes": 1 << 30,
                "compressed_bytes": args.bomb_size,
                "outcome": bomb.get("outcome"),
                "error_kind": error.get("kind"),
                "error_reason": error.get("reason"),
                "wall_ms": round(wall * 1000, 1),
                "process_rss_peak_mib": mib(sampler.peak_self_kib),
                "process_and_descendants_rss_peak_mib": mib(sampler.peak_sum_kib),
                "process_vmhwm_before_mib": mib(hwm_before),
                "process_vmhwm_after_mib": mib(status_kib(me, "VmHWM")),
                "target_mib": 150,
                "samples": sampler.samples,
            }
            # 3. parse cost: 4 MiB pages alone, one at a time, two per worker (the pool hands
            # sequential jobs to its workers in turn); the highest VmHWM of a worker after its
            # second page is the parse cost of a worker in service, the first page's is lower.
            warm(*(page_url(port, BIG, SINGLE_SEED + seed) for seed in range(2 * limit("LIM-C5"))))
            sampler.reset()
            singles = []
            after_each: list[list[float]] = []
            for seed in range(2 * limit("LIM-C5")):
                t0 = time.perf_counter()
                single = await call(page_url(port, BIG, SINGLE_SEED + seed))
                singles.append((single.get("outcome"), round((time.perf_counter() - t0) * 1000)))
                after_each.append([mib(v) for v in worker_kib(exclude, "VmHWM").values()])
            hwm = worker_kib(exclude, "VmHWM")
            parse_kib = max(hwm.values()) if hwm else 0
            result["single_4mib"] = {
                "pages": len(singles),
                "outcomes": [o for o, _ in singles],
                "wall_ms": [w for _, w in singles],
                "worker_vmhwm_after_each_page_mib": after_each,
                "worker_vmhwm_mib": [mib(v) for v in hwm.values()],
                "parse_cost_mib": mib(parse_kib),
                "process_and_descendants_rss_peak_mib": mib(sampler.peak_sum_kib),
            }
            result["process_rss_before_rounds_mib"] = mib(status_kib(me, "VmRSS"))
            # 4. LIM-C3 fetches at once, distinct pages and hosts.
            concurrency = limit("LIM-C3")
            rounds = []
            # Built by the page server beforehand, so that the 8 bodies of a round arrive
            # together, as from 8 sites that answer at once (the worst case for the bodies).
            warm(
                *(
                    page_url(port, BIG, 1 + r * concurrency + i, HOSTS[i % len(HOSTS)])
                    for r in range(args.rounds)
                    for i in range(concurrency)
                )
            )
            sampler.reset()
            for r in range(args.rounds):
                walls: list[float] = []

                async def timed(url: str) -> dict[str, Any]:
                    answer = await call(url)
                    walls.append(round(time.perf_counter() - t0, 2))
                    return answer

                started = extractor.pool.stats.started
                urls = [
                    page_url(port, BIG, 1 + r * concurrency + i, HOSTS[i % len(HOSTS)])
                    for i in range(concurrency)
                ]
                t0 = time.perf_counter()
                answers = await asyncio.gather(*(timed(url) for url in urls))
                rounds.append(
                    {
                        "wall_s": round(time.perf_counter() - t0, 2),
                        "answered_after_s": sorted(walls),
                        "worker_starts": extractor.pool.stats.started - started,
                        "outcomes": sorted(
                            a.get("outcome") + ("/" + a["error"]["reason"] if "error" in a else "")
                            for a in answers
                        ),
                    }
                )
            hwm = worker_kib(exclude, "VmHWM")
            peak_worker_kib = max([parse_kib, *hwm.values()])
            formula_kib = (
                base_kib + concurrency * limit("LIM-F3") / 1024 + limit("LIM-C5") * parse_kib
            )
            result["concurrent_4mib"] = {
                "fetches_at_once": concurrency,
                "rounds": rounds,
                "peak_process_and_descendants_rss_mib": mib(sampler.peak_sum_kib),
                "peak_process_rss_mib": mib(sampler.peak_self_kib),
                "peak_descendants_rss_mib": mib(sampler.peak_descendants_kib),
                "process_vmhwm_mib": mib(status_kib(me, "VmHWM")),
                "worker_vmhwm_mib": [mib(v) for v in hwm.values()],
                "samples": sampler.samples,
                "load_average": load_average(),
            }
            result["req_perf_003"] = {
                "formula": "base + LIM-C3 x LIM-F3 + LIM-C5 x parse cost",
                "base_mib": mib(base_kib),
                "bodies_mib": round(concurrency * limit("LIM-F3") / MIB, 1),
                "parse_cost_mib": mib(parse_kib),
                "workers": limit("LIM-C5"),
                "formula_mib": mib(formula_kib),
                "measured_peak_mib": mib(sampler.peak_sum_kib),
                "measured_over_formula": round(sampler.peak_sum_kib / formula_kib, 2),
                "worker_peak_seen_mib": mib(peak_worker_kib),
            }
    return result


def reference_bomb(args: argparse.Namespace, bomb_url: str) -> dict[str, Any]:
    """The official server's fetch_url on the bomb, under RLIMIT_AS; peak from wait4."""
    python = args.reference_venv / "bin" / "python"
    if not python.exists():
        return {"skipped": f"no reference interpreter at {python} (run bench/fetch_speed.py)"}
    cap = args.reference_as_gib * 1024**3

    def limit_memory() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    script = Path(__file__).resolve().parent / "fetch_reference.py"
    proc = subprocess.Popen(
        [str(python), str(script), "bomb", bomb_url],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        preexec_fn=limit_memory,  # the sampler thread has ended by now
    )
    deadline = time.monotonic() + args.reference_timeout_s
    timed_out = False
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() > deadline:
            proc.kill()
            timed_out = True
        time.sleep(0.1)
    proc.returncode = os.waitstatus_to_exitcode(status)
    assert proc.stdout is not None
    out = proc.stdout.read().decode().strip()
    report = json.loads(out) if out.startswith("{") else {}
    return {
        "address_space_limit_gib": args.reference_as_gib,
        "exit_code": proc.returncode,
        "timed_out": timed_out,
        "outcome": report.get("outcome", "no report (killed or crashed)"),
        "wall_s": report.get("wall_s"),
        "peak_rss_mib": round(usage.ru_maxrss / 1024, 1),
        "hit_the_limit": report.get("outcome") == "MemoryError" or proc.returncode != 0,
    }


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    bomb = gzip_bomb(Path(tempfile.gettempdir()) / "rypsok-bench-bomb-1gib.gz")
    args.bomb_size = bomb.stat().st_size
    result: dict[str, Any] = {"benchmark": "fetch_memory", "machine": machine()}
    with page_server(bomb) as (port, server):
        bomb_url = f"http://{HOSTS[0]}:{port}/bomb"
        result["rypsok"] = await measure(port, server.pid, bomb_url, args)
        if not args.no_reference:
            result["reference_bomb"] = {
                "system": "mcp-server-fetch==2026.10.24 fetch_url",
                **reference_bomb(args, bomb_url),
            }
    result["machine"]["load_average_1_5_15_at_end"] = load_average()
    return result


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sandbox", choices=["auto", "bwrap", "none"], default="auto")
    parser.add_argument("--no-reference", action="store_true")
    parser.add_argument(
        "--reference-venv",
        type=Path,
        default=Path(tempfile.gettempdir()) / "rypsok-bench-reference",
    )
    parser.add_argument("--reference-as-gib", type=int, default=4)
    parser.add_argument("--reference-timeout-s", type=float, default=180.0)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    result = asyncio.run(main_async(args))
    text = json.dumps(result, indent=2)
    if args.json:
        args.json.write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
