"""The HTTP service under load: web_search calls per second, latency and server CPU per call.

Three simulated science engines (arXiv, Crossref, Europe PMC answering the drivers' fixtures
after DELAY ms, bench/sim_engines.py) run in their own process on loopback. rypsok runs as
``rypsok serve --transport http`` in a third process (or, with ``--replicas N``, N processes,
each a replica on its own port, the way docs/http.md scales rypsok), started through this
file's ``--serve`` mode, which only raises the provider limits before handing over to the real
command line: every engine's admitted rate and concurrency become the load's (the admission
records would otherwise allow Crossref 5 requests a second, as they must in production), and
the config raises the invocation limit (LIM-C6) and the process's engine requests in flight
(LIM-C1). Everything else — uvicorn, the middleware, the SDK, the call runner, the pipeline,
logging at info — is what production runs.

The load comes from N clients, each one HTTP/1.1 keep-alive connection sending one
web_search after another: 2026-07-28 requests (sessionless) by default, or handshake-era
requests in one session per client with ``--era legacy``. The clients are a few lines of
raw asyncio so that the load generator costs little CPU next to the server it measures.

Measured per concurrency level: calls per second, latency percentiles, the latency rypsok
adds over the engines' delay, and the servers' CPU per call from /proc/<pid>/stat (user +
system, all replicas) before and after; at the end each server's RSS. With replicas, the
clients' connections are spread over them in turn, as a layer-4 load balancer would.

With ``--rate R`` the load is open loop instead: calls arrive at R per second (a seeded Poisson
process) and go to the next free client, and a call's latency runs from its arrival, waiting
for a free client included. That measures the latency at a given load; the closed loop
measures the most calls per second the clients can get.

usage: python bench/http_load.py [--delay-ms 50] [--calls 2000] [--levels 1,16,64]
                                 [--era 2026|legacy] [--replicas 1] [--rate R] [--json out.json]
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import random
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import sim_engines

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "engines" / "fixtures"
ENGINES = {
    "arxiv": ("/arxiv/api/query", FIXTURES / "arxiv" / "success.xml"),
    "crossref": ("/crossref/works", FIXTURES / "crossref" / "success.json"),
    "europepmc": ("/europepmc/search", FIXTURES / "europepmc" / "success.json"),
}
MODERN = "2026-07-28"
LEGACY = "2025-11-25"
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
}
RAISED_CAP = 512


# --- the server side ------------------------------------------------------------------------


def serve(config: str) -> int:
    """Run ``rypsok serve --transport http`` with the provider limits raised (see above)."""
    from rypsok.cli import main
    from rypsok.engines.base import RateLimit
    from rypsok.health.provider_limits import ProviderLimits

    original = ProviderLimits.from_admissions

    def raised(records: Any, **kw: Any) -> ProviderLimits:
        records = [
            dataclasses.replace(r, rate=RateLimit(10**9, 1.0), max_in_flight=RAISED_CAP)
            for r in records
        ]
        kw["engine_cap"] = RAISED_CAP
        return original(records, **kw)

    ProviderLimits.from_admissions = raised  # type: ignore[method-assign]
    return main(["serve", "--transport", "http", "--config", config])


def write_config(directory: Path, bases: dict[str, str]) -> Path:
    """The server's configuration: the three simulated engines, limits for the load."""
    from rypsok.engines.registry import DRIVER_MODULES

    lines = [
        "schema_version = 1",
        "[service]",
        "calls_per_minute_web_search = 100000",
        "[search]",
        "requests_in_flight = 1024",
        "[http]",
        "port = 0",
        "max_sessions = 1000",
    ]
    for engine in DRIVER_MODULES:
        if engine in ENGINES:
            lines += [
                f"[engines.{engine}]",
                "enabled = true",
                f'endpoint = "{bases[engine]}{ENGINES[engine][0]}"',
            ]
        else:
            lines += [f"[engines.{engine}]", "enabled = false"]
    path = directory / "rypsok.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def cpu_ticks(pid: int) -> int:
    """utime + stime of a process, in clock ticks."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def rss_mib(pid: int) -> float:
    """Resident set size of a process."""
    match = re.search(r"VmRSS:\s+(\d+) kB", Path(f"/proc/{pid}/status").read_text())
    return round(int(match.group(1)) / 1024, 1) if match else float("nan")


def wait_listening(server: subprocess.Popen[bytes], log: Path) -> int:
    """The port a starting server listens on, from its "listening" log line."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        found = re.search(rb'"event":"listening".*?"port":(\d+)', log.read_bytes())
        if found:
            return int(found.group(1))
        if server.poll() is not None:
            sys.exit(log.read_text())
        time.sleep(0.1)
    sys.exit("the server did not start within 60 s")


# --- the load -----------------------------------------------------------------------------


class Connection:
    """One keep-alive HTTP/1.1 connection speaking just enough HTTP for this benchmark."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.session: str | None = None
        self.reader: asyncio.StreamReader
        self.writer: asyncio.StreamWriter

    async def open(self) -> None:
        self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)

    async def post(self, body: bytes, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        head = f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\n"
        head += "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
        head += "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        head += f"Content-Length: {len(body)}\r\n\r\n"
        self.writer.write(head.encode() + body)
        status_line = await self.reader.readline()
        status = int(status_line.split()[1])
        response_headers: dict[str, str] = {}
        while (line := await self.reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode("latin-1").partition(":")
            response_headers[name.strip().lower()] = value.strip()
        if "content-length" in response_headers:
            data = await self.reader.readexactly(int(response_headers["content-length"]))
        elif response_headers.get("transfer-encoding") == "chunked":
            chunks = []
            while True:
                size = int((await self.reader.readline()).strip(), 16)
                chunk = await self.reader.readexactly(size + 2)
                if size == 0:
                    break
                chunks.append(chunk[:-2])
            data = b"".join(chunks)
        else:
            data = b""
        return status, response_headers, data

    async def close(self) -> None:
        self.writer.close()
        await self.writer.wait_closed()


def _outcome(data: bytes) -> str | None:
    """The web_search outcome in a JSON or SSE answer."""
    text = data.decode()
    if text.startswith("{"):
        payloads = [text]
    else:
        payloads = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")]
    for payload in payloads:
        if not payload:
            continue
        message = json.loads(payload)
        result = message.get("result")
        if isinstance(result, dict) and isinstance(result.get("structuredContent"), dict):
            outcome = result["structuredContent"].get("outcome")
            return str(outcome) if outcome is not None else None
    return None


async def client_session(conn: Connection, era: str) -> None:
    """Open a handshake-era session on this connection (legacy only)."""
    if era != "legacy":
        return
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": LEGACY,
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "0"},
        },
    }
    status, headers, _ = await conn.post(json.dumps(init).encode(), {})
    assert status == 200, status
    conn.session = headers["mcp-session-id"]
    note = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode()
    await conn.post(note, {"Mcp-Session-Id": conn.session, "MCP-Protocol-Version": LEGACY})


async def one_call(conn: Connection, era: str, request_id: int) -> bool:
    """One web_search; True when it answered with results."""
    params: dict[str, Any] = {
        "name": "web_search",
        "arguments": {"query": "graphene", "category": "science"},
    }
    if era == "legacy":
        headers = {"Mcp-Session-Id": conn.session or "", "MCP-Protocol-Version": LEGACY}
    else:
        params["_meta"] = ENVELOPE
        headers = {
            "MCP-Protocol-Version": MODERN,
            "Mcp-Method": "tools/call",
            "Mcp-Name": "web_search",
        }
    body = json.dumps(
        {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
    )
    status, _, data = await conn.post(body.encode(), headers)
    return status == 200 and _outcome(data) == "ok"


async def open_clients(ports: list[int], era: str, concurrency: int) -> list[Connection]:
    """``concurrency`` open clients, spread over the replicas' ports in turn (as a layer-4
    load balancer would), each with its session in the legacy era."""
    connections = [Connection(ports[n % len(ports)]) for n in range(concurrency)]
    for conn in connections:
        await conn.open()
        await client_session(conn, era)
    return connections


async def call_or_reconnect(conn: Connection, era: str, request_id: int) -> bool:
    """One call; a broken connection counts as an error and is opened again."""
    try:
        return await one_call(conn, era, request_id)
    except (OSError, asyncio.IncompleteReadError, ValueError):
        await conn.close()
        await conn.open()
        await client_session(conn, era)
        return False


async def drive(
    ports: list[int], era: str, calls: int, concurrency: int, stagger_s: float
) -> tuple[list[float], int, float]:
    """``calls`` calls from ``concurrency`` clients: latencies (s), errors, wall time (s).

    With several replicas the clients' connections are spread over them in turn, as a
    layer-4 load balancer would.
    """
    connections = await open_clients(ports, era, concurrency)
    latencies: list[float] = []
    errors = 0
    todo = iter(range(calls))

    async def worker(index: int, conn: Connection) -> None:
        nonlocal errors
        # Staggered starts (see bench/search_overhead.py's drive): no lockstep waves.
        await asyncio.sleep(index * stagger_s / concurrency)
        for n in todo:
            started = time.perf_counter()
            ok = await call_or_reconnect(conn, era, n + 1)
            latencies.append(time.perf_counter() - started)
            errors += not ok

    wall0 = time.perf_counter()
    await asyncio.gather(*(worker(n, c) for n, c in enumerate(connections)))
    wall = time.perf_counter() - wall0
    for conn in connections:
        await conn.close()
    return latencies, errors, wall


async def drive_rate(
    ports: list[int], era: str, calls: int, concurrency: int, rate: float
) -> tuple[list[float], int, float]:
    """``calls`` calls offered at ``rate`` per second (open loop) to ``concurrency`` clients.

    Arrivals are a Poisson process (seeded: the same schedule every run). Each arrival goes
    to the next free client; when all are busy it waits for one. A call's latency runs from
    its scheduled arrival, so waiting for a free client counts (no coordinated omission).
    """
    connections = await open_clients(ports, era, concurrency)
    arrivals: asyncio.Queue[tuple[int, float] | None] = asyncio.Queue()
    latencies: list[float] = []
    errors = 0

    async def worker(conn: Connection) -> None:
        nonlocal errors
        while (item := await arrivals.get()) is not None:
            n, scheduled = item
            ok = await call_or_reconnect(conn, era, n + 1)
            latencies.append(time.perf_counter() - scheduled)
            errors += not ok

    workers = [asyncio.create_task(worker(c)) for c in connections]
    schedule = random.Random(20261203)
    wall0 = next_at = time.perf_counter()
    for n in range(calls):
        next_at += schedule.expovariate(rate)
        pause = next_at - time.perf_counter()
        if pause > 0:
            await asyncio.sleep(pause)
        arrivals.put_nowait((n, next_at))
    for _ in workers:
        arrivals.put_nowait(None)
    await asyncio.gather(*workers)
    wall = time.perf_counter() - wall0
    for conn in connections:
        await conn.close()
    return latencies, errors, wall


def percentile(values: list[float], q: float) -> float:
    """The q-quantile of sorted ``values`` (nearest rank)."""
    return values[min(len(values) - 1, max(0, round(q * len(values)) - 1))]


async def measure(
    args: argparse.Namespace, ports: list[int], pids: list[int], sim_pid: int
) -> list[dict[str, Any]]:
    """Every concurrency level in turn."""
    delay_s = args.delay_ms / 1000
    tick = os.sysconf("SC_CLK_TCK")
    rows = []
    for concurrency in args.levels:
        calls = args.calls if concurrency > 1 else max(100, args.calls // 10)
        await drive(
            ports, args.era, min(200, calls), concurrency, delay_s
        )  # warm-up: pools, caches
        cpu0 = sum(cpu_ticks(pid) for pid in pids)
        sim0, own0 = cpu_ticks(sim_pid), time.process_time()
        if args.rate:
            latencies, errors, wall = await drive_rate(
                ports, args.era, calls, concurrency, args.rate
            )
        else:
            latencies, errors, wall = await drive(ports, args.era, calls, concurrency, delay_s)
        cpu_s = (sum(cpu_ticks(pid) for pid in pids) - cpu0) / tick
        sim_s = (cpu_ticks(sim_pid) - sim0) / tick
        own_s = time.process_time() - own0
        ordered = sorted(latencies)
        added = [(v - delay_s) * 1000 for v in ordered]
        rows.append(
            {
                "era": args.era,
                "replicas": len(pids),
                "concurrency": concurrency,
                "offered_calls_per_s": args.rate,
                "calls": len(ordered),
                "errors": errors,
                "calls_per_s": round(len(ordered) / wall, 1),
                "latency_ms_p50": round(statistics.median(ordered) * 1000, 1),
                "latency_ms_p99": round(percentile(ordered, 0.99) * 1000, 1),
                "added_ms_p50": round(statistics.median(added), 1),
                "added_ms_p99": round(percentile(added, 0.99), 1),
                "server_cpu_ms_per_call": round(cpu_s * 1000 / len(ordered), 2),
                "server_cpu_utilisation": round(cpu_s / wall, 2),
                "load_generator_cpu_ms_per_call": round(own_s * 1000 / len(ordered), 2),
                "engines_cpu_ms_per_call": round(sim_s * 1000 / len(ordered), 2),
                "machine_load_1min": round(os.getloadavg()[0], 2),
            }
        )
    return rows


def main() -> int:
    """Run the measurement (or, with --serve, the server it measures)."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--serve", metavar="CONFIG", help=argparse.SUPPRESS)
    parser.add_argument("--delay-ms", type=int, default=50)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--levels", default="1,16,64")
    parser.add_argument("--era", choices=("2026", "legacy"), default="2026")
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--replicas",
        type=int,
        default=1,
        help="server processes, each its own replica on its own port (clients spread over them)",
    )
    parser.add_argument(
        "--rate",
        type=float,
        help="offer this many calls per second (open loop, Poisson arrivals) instead of "
        "each client calling again as soon as it has its answer",
    )
    parser.add_argument(
        "--profile", type=Path, help="record the server with py-spy (raw folded stacks) to PATH"
    )
    args = parser.parse_args()
    if args.serve:
        return serve(args.serve)
    args.levels = [int(n) for n in args.levels.split(",")]

    sim, bases = sim_engines.start(args.delay_ms, ENGINES)
    servers: list[subprocess.Popen[bytes]] = []
    with tempfile.TemporaryDirectory() as tmp:
        config = write_config(Path(tmp), bases)
        try:
            logs = [Path(tmp) / f"server-{n}.log" for n in range(args.replicas)]
            for log in logs:
                with log.open("wb") as sink:
                    servers.append(
                        subprocess.Popen(
                            [sys.executable, __file__, "--serve", str(config)],
                            stderr=sink,
                            stdin=subprocess.DEVNULL,
                        )
                    )
            ports = [wait_listening(server, log) for server, log in zip(servers, logs, strict=True)]
            profiler = None
            if args.profile:
                # Profiling only: py-spy samples the server from outside (pip install py-spy).
                profiler = subprocess.Popen(
                    [
                        "py-spy",
                        "record",
                        "--pid",
                        str(servers[0].pid),
                        "--format",
                        "raw",
                        "--output",
                        str(args.profile),
                        "--nonblocking",
                        "--rate",
                        "250",
                    ],
                    stdout=subprocess.DEVNULL,
                )
            rows = asyncio.run(measure(args, ports, [s.pid for s in servers], sim.pid))
            if profiler is not None:
                profiler.send_signal(signal.SIGINT)
                profiler.wait(30)
            rows.append({"server_rss_mib_at_end": [rss_mib(s.pid) for s in servers]})
        finally:
            for server in servers:
                server.terminate()
                server.wait(10)
            sim.terminate()
            sim.wait(10)
    text = json.dumps(rows, indent=2)
    if args.json:
        args.json.write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
