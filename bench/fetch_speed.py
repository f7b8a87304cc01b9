"""web_fetch speed: pages per second, MB/s, wall and CPU time per page, by page size.

Article-like pages of about 20 KB, 200 KB and 2 MB (bench/fetch_pages.py, deterministic) are
served on loopback by a server in a separate process, so its CPU is not counted. rypsok's whole
contained pipeline serves web_fetch in this process through ``runtime()`` and
``services.call("web_fetch", {"url": ...})``: call runner, privacy check, egress policy,
robots.txt, retrieval with byte limits, extraction in worker processes, boundary cleaning,
focus and budget (default max_chars). The only departure from production is the explicit
allow rule for 127.0.0.0/8 and ``[fetch] allow_http``, ``ports``, as in the service tests.

Every page is a distinct URL (no cache is involved). The page server builds a page on its first
request; each page is requested once outside the measured windows first (``warm``), so that
the page's generation is not counted as rypsok's time. Two passes per size:

* sequential, one call at a time: wall time per call (median, p90), and CPU per page of
  rypsok's process (``RUSAGE_SELF``, all its threads) and of its worker processes (see
  bench/fetch_common.py: live descendants from /proc/<pid>/stat plus ``RUSAGE_CHILDREN`` for
  reaped ones), taken around each call, summed over the pass and divided by the pages
  (per-call values are in clock ticks of 10 ms; the sum is what is reported);
* concurrent, ``--concurrency`` calls at once over distinct loopback hosts: pages/s and MB/s.

The workers are started and warmed before the passes (``Extractor.start()`` plus a few calls),
as in a service that has been running; worker (re)starts inside a pass are counted and reported.

References, same pages, same run:

* ``trafilatura.extract(html, output_format="markdown")`` in this process on the decoded page
  (CPU and wall per page) -- the target is the whole pipeline within 1.3x of it;
* rypsok's own extraction job (``rypsok.fetch.pipeline.run``) in this process, no containment,
  no network: what the containment and the service around it add;
* a plain fetch and trafilatura: ``urllib.request`` GET of the same URL over loopback (a new
  connection, no proxy, no checks) and ``trafilatura.extract`` on the decoded body, in this
  process: what the simplest script that fetches and extracts a page costs, the like-for-like
  counterpart of a whole web_fetch call (the reference of the target fetches nothing).

All three run on each page right after rypsok's call for it in the sequential pass (interleaved, so
that the varying load of a shared machine weighs on all three alike); their CPU is not part of
rypsok's, which is measured per call.
* the official fetch server (``mcp-server-fetch``) in its own virtual environment
  (bench/fetch_reference.py): its conversion ``extract_content_from_html`` on the same
  decoded pages, and its whole ``fetch_url`` over loopback. ``--no-reference`` skips it.

usage: python bench/fetch_speed.py [--pages 40,12,6] [--concurrency 4] [--sandbox auto|none]
                                   [--no-reference] [--json out.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from fetch_common import (
    HOSTS,
    children_cpu,
    load_average,
    machine,
    page_server,
    page_url,
    rypsok,
    self_cpu,
    warm,
)
from fetch_pages import article

REFERENCE = "mcp-server-fetch==2026.10.24"
SIZES = {"20 KB": 20_000, "200 KB": 200_000, "2 MB": 2_000_000}
WARM_SEED = 10_000  # warm-up pages use seeds from here, measured ones from 0
FETCH_AND_TRAFILATURA = "urllib GET + trafilatura.extract (plain fetch, reference)"


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def ms(x: float) -> float:
    return round(x * 1000, 2)


async def rypsok_passes(
    port: int, server_pid: int, args: argparse.Namespace, references: InProcess
) -> list[dict]:
    rows: list[dict[str, Any]] = []
    exclude = {server_pid}
    async with rypsok(port, args.sandbox) as (services, extractor):
        await extractor.start()
        rows.append({"containment": extractor.containment(), "workers": extractor.pool.size})

        async def call(url: str) -> dict[str, Any]:
            result = await services.call("web_fetch", {"url": url})
            return result.structured

        for size in SIZES.values():  # warm-up: robots.txt cache, pools, both workers
            await asyncio.gather(
                *(call(page_url(port, size, WARM_SEED + i, HOSTS[i])) for i in range(2))
            )
        for label, size in SIZES.items():
            n = args.pages[label]
            body_bytes = sum(len(article(size, seed)) for seed in range(n))
            started = extractor.pool.stats.started
            walls, errors, chars = [], 0, 0
            cpu = kids = 0.0
            for seed in range(n):
                warm(page_url(port, size, seed))
                kids0 = children_cpu(exclude)
                cpu0, t0 = self_cpu(), time.perf_counter()
                data = await call(page_url(port, size, seed))
                walls.append(time.perf_counter() - t0)
                cpu += self_cpu() - cpu0
                kids += children_cpu(exclude) - kids0
                if data.get("outcome") != "ok":
                    errors += 1
                chars += len(data.get("content", ""))
                # The in-process references on the same page right after, so that the load
                # of the shared machine weighs on both alike.
                references.measure(label, size, seed)
            wall = sum(walls)
            rows.append(
                {
                    "system": "rypsok web_fetch",
                    "run": "sequential",
                    "size": label,
                    "pages": n,
                    "mean_page_bytes": round(body_bytes / n),
                    "errors": errors,
                    "mean_content_chars_returned": round(chars / n),
                    "wall_ms_median": ms(statistics.median(walls)),
                    "wall_ms_p90": ms(pct(walls, 0.9)),
                    "cpu_ms_per_page_process": ms(cpu / n),
                    "cpu_ms_per_page_workers": ms(kids / n),
                    "cpu_ms_per_page_total": ms((cpu + kids) / n),
                    "pages_per_s": round(n / wall, 2),
                    "mb_per_s": round(body_bytes / wall / 1e6, 2),
                    "worker_starts": extractor.pool.stats.started - started,
                    "load_average": load_average(),
                }
            )
            # Concurrent pass: other seeds, spread over hosts (LIM-C4 is per host).
            c = args.concurrency
            seeds = list(range(n, 2 * n))
            started = extractor.pool.stats.started
            todo = iter(enumerate(seeds))
            errors = 0

            async def worker() -> None:
                nonlocal errors
                for i, seed in todo:
                    data = await call(page_url(port, size, seed, HOSTS[i % len(HOSTS)]))
                    errors += data.get("outcome") != "ok"

            body_bytes = sum(len(article(size, seed)) for seed in seeds)
            warm(
                *(page_url(port, size, seed, HOSTS[i % len(HOSTS)]) for i, seed in enumerate(seeds))
            )
            cpu0, kids0, wall0 = self_cpu(), children_cpu(exclude), time.perf_counter()
            await asyncio.gather(*(worker() for _ in range(c)))
            wall = time.perf_counter() - wall0
            cpu, kids = self_cpu() - cpu0, children_cpu(exclude) - kids0
            rows.append(
                {
                    "system": "rypsok web_fetch",
                    "run": f"{c} at once",
                    "size": label,
                    "pages": n,
                    "errors": errors,
                    "pages_per_s": round(n / wall, 2),
                    "mb_per_s": round(body_bytes / wall / 1e6, 2),
                    "cpu_ms_per_page_total": ms((cpu + kids) / n),
                    "cpu_cores_used": round((cpu + kids) / wall, 2),
                    "worker_starts": extractor.pool.stats.started - started,
                    "load_average": load_average(),
                }
            )
    return rows


class InProcess:
    """trafilatura.extract and rypsok's extraction job, in this process, page by page."""

    def __init__(self, port: int) -> None:
        import trafilatura

        from rypsok.fetch.pipeline import run

        self._port = port
        self._extract = trafilatura.extract
        self._run = run
        # No proxy from the environment: the page server is on loopback.
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        self._extract("<html><body><p>warm up</p></body></html>", output_format="markdown")
        self.samples: dict[tuple[str, str], list[tuple[float, float]]] = {}
        self.methods: dict[str, set[str]] = {}

    def measure(self, label: str, size: int, seed: int) -> None:
        body = article(size, seed)
        html = body.decode("utf-8")
        c0, w0 = self_cpu(), time.perf_counter()
        self._extract(html, output_format="markdown")
        self._add("trafilatura", label, c0, w0)
        c0, w0 = self_cpu(), time.perf_counter()
        job = {"content_type": "text/html; charset=utf-8", "url": page_url(0, size, seed)}
        self.methods.setdefault(label, set()).add(self._run(job, body).method)
        self._add("rypsok", label, c0, w0)
        c0, w0 = self_cpu(), time.perf_counter()
        with self._opener.open(page_url(self._port, size, seed), timeout=60) as answer:
            fetched = answer.read()
        self._extract(fetched.decode("utf-8"), output_format="markdown")
        self._add("fetch+trafilatura", label, c0, w0)

    def _add(self, which: str, label: str, cpu0: float, wall0: float) -> None:
        wall = time.perf_counter() - wall0
        self.samples.setdefault((which, label), []).append((self_cpu() - cpu0, wall))

    def rows(self) -> list[dict[str, Any]]:
        rows = []
        for label in SIZES:
            for which, name in (
                ("trafilatura", "trafilatura.extract (direct, reference)"),
                ("rypsok", "rypsok extraction job in process (no containment)"),
                ("fetch+trafilatura", FETCH_AND_TRAFILATURA),
            ):
                samples = self.samples[(which, label)]
                wall = [w for _, w in samples]
                row = {
                    "system": name,
                    "run": "sequential",
                    "size": label,
                    "pages": len(samples),
                    "wall_ms_median": ms(statistics.median(wall)),
                    "wall_ms_p90": ms(pct(wall, 0.9)),
                    "cpu_ms_per_page_total": ms(sum(c for c, _ in samples) / len(samples)),
                }
                if which == "rypsok":
                    row["method"] = ",".join(sorted(self.methods[label]))
                rows.append(row)
        return rows


def reference_python(venv: Path) -> Path:
    """The official server's interpreter, installed on first use (as bench/cold_start.py)."""
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run(
            [str(python), "-m", "pip", "install", "-q", REFERENCE, "mcp==2.3.0"], check=True
        )
    return python


def official_reference(args: argparse.Namespace, port: int) -> list[dict[str, Any]]:
    python = reference_python(args.reference_venv)
    script = str(Path(__file__).resolve().parent / "fetch_reference.py")
    rows = []
    with tempfile.TemporaryDirectory(prefix="rypsok-fetch-bench-") as tmp:
        for label, size in SIZES.items():
            n = min(args.pages[label], args.reference_pages)
            files = []
            for seed in range(n):
                path = Path(tmp) / f"{size}-{seed}.html"
                path.write_bytes(article(size, seed))
                files.append(str(path))
            for mode, targets in (
                ("convert", files),
                ("fetch", [page_url(port, size, seed) for seed in range(n)]),
            ):
                out = subprocess.run(
                    [str(python), script, mode, *targets],
                    capture_output=True,
                    text=True,
                    check=True,
                    timeout=3600,
                )
                pages = json.loads(out.stdout)["pages"]
                cpu = [p["cpu_s"] for p in pages]
                wall = [p["wall_s"] for p in pages]
                rows.append(
                    {
                        "system": f"{REFERENCE} "
                        + ("extract_content_from_html" if mode == "convert" else "fetch_url"),
                        "run": "sequential",
                        "size": label,
                        "pages": n,
                        "wall_ms_median": ms(statistics.median(wall)),
                        "wall_ms_p90": ms(pct(wall, 0.9)),
                        "cpu_ms_per_page_total": ms(sum(cpu) / n),
                    }
                )
    return rows


def ratios(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for label in SIZES:
        seq = {r["system"]: r for r in rows if r.get("size") == label and r["run"] == "sequential"}
        ours = seq["rypsok web_fetch"]
        traf = seq["trafilatura.extract (direct, reference)"]
        plain = seq[FETCH_AND_TRAFILATURA]
        row: dict[str, Any] = {
            "size": label,
            "rypsok_over_trafilatura_wall_median": round(
                ours["wall_ms_median"] / traf["wall_ms_median"], 2
            ),
            "rypsok_over_trafilatura_cpu": round(
                ours["cpu_ms_per_page_total"] / traf["cpu_ms_per_page_total"], 2
            ),
            "rypsok_over_fetch_and_trafilatura_wall_median": round(
                ours["wall_ms_median"] / plain["wall_ms_median"], 2
            ),
            "rypsok_over_fetch_and_trafilatura_cpu": round(
                ours["cpu_ms_per_page_total"] / plain["cpu_ms_per_page_total"], 2
            ),
        }
        for name, r in seq.items():
            if name.startswith("mcp-server-fetch") and name.endswith("extract_content_from_html"):
                row["official_convert_over_trafilatura_cpu"] = round(
                    r["cpu_ms_per_page_total"] / traf["cpu_ms_per_page_total"], 1
                )
            if name.startswith("mcp-server-fetch") and name.endswith("fetch_url"):
                row["official_fetch_over_rypsok_cpu"] = round(
                    r["cpu_ms_per_page_total"] / ours["cpu_ms_per_page_total"], 1
                )
        out.append(row)
    return out


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    result: dict[str, Any] = {"benchmark": "fetch_speed", "machine": machine()}
    with page_server() as (port, server):
        references = InProcess(port)
        rows = await rypsok_passes(port, server.pid, args, references)
        result["rypsok"] = rows.pop(0)
        rows += references.rows()
        if not args.no_reference:
            rows += official_reference(args, port)
    result["rows"] = rows
    result["ratios"] = ratios(rows)
    result["machine"]["load_average_1_5_15_at_end"] = load_average()
    return result


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--pages",
        default="40,12,6",
        help="distinct pages per size, for 20 KB, 200 KB and 2 MB (default 40,12,6)",
    )
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument(
        "--sandbox",
        choices=["auto", "bwrap", "none"],
        default="auto",
        help="[fetch] sandbox (auto: bubblewrap when on PATH, as in production)",
    )
    parser.add_argument("--reference-pages", type=int, default=8, help="at most this many per size")
    parser.add_argument(
        "--reference-venv",
        type=Path,
        default=Path(tempfile.gettempdir()) / "rypsok-bench-reference",
    )
    parser.add_argument("--no-reference", action="store_true")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    args.pages = dict(zip(SIZES, (int(x) for x in args.pages.split(",")), strict=True))
    result = asyncio.run(main_async(args))
    text = json.dumps(result, indent=2)
    if args.json:
        args.json.write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
