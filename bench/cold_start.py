"""Cold start and idle memory of the stdio server, against a named reference (REQ-PERF-005).

Measures, for rypsok and for the official Python fetch server (``mcp-server-fetch``, the same
MCP SDK runtime), the wall time from process start to the answer of the first ``tools/list``
over stdio, and the resident memory (VmRSS) one second after that answer, idle.

usage: python bench/cold_start.py [--runs 7] [--reference-venv /tmp/rypsok-bench-reference]

The reference is installed into its own virtual environment on first use (from PyPI); pass
``--no-reference`` to measure rypsok alone. Output: one JSON object on stdout.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REFERENCE = "mcp-server-fetch==2026.10.24"
# Both servers start as installed by pip, which compiles bytecode: a PYTHONDONTWRITEBYTECODE
# in the caller's environment would make every start recompile rypsok's editable sources.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
MESSAGES = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "0"},
        },
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
]


def rss_kib(pid: int) -> int:
    """Resident set size of a process, from /proc."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def measure(command: list[str]) -> tuple[float, float]:
    """Seconds to the tools/list answer, and idle RSS in MiB one second later."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=ENV
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in MESSAGES))
    proc.stdin.flush()
    while True:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError(f"{command[0]} closed stdout")
        if json.loads(line).get("id") == 2:
            break
    first_answer = time.perf_counter() - started
    time.sleep(1.0)
    rss = rss_kib(proc.pid) / 1024
    proc.stdin.close()
    proc.wait(timeout=10)
    return first_answer, rss


def reference_python(venv: Path) -> Path:
    """The reference server's interpreter, installing it on first use."""
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run(
            [str(python), "-m", "pip", "install", "-q", REFERENCE, "mcp==2.3.0"], check=True
        )
    return python


def summarize(name: str, command: list[str], runs: int) -> dict[str, object]:
    """Median and spread over ``runs`` measurements, after one warm-up run."""
    measure(command)  # warm the page cache: every later run starts the same way
    samples = [measure(command) for _ in range(runs)]
    times = sorted(s[0] for s in samples)
    rss = sorted(s[1] for s in samples)
    return {
        "server": name,
        "runs": runs,
        "first_tools_list_s_median": round(statistics.median(times), 3),
        "first_tools_list_s_min": round(times[0], 3),
        "first_tools_list_s_max": round(times[-1], 3),
        "idle_rss_mib_median": round(statistics.median(rss), 1),
    }


def main() -> int:
    """Measure and print the results as JSON."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument(
        "--reference-venv",
        type=Path,
        default=Path(tempfile.gettempdir()) / "rypsok-bench-reference",
    )
    parser.add_argument("--no-reference", action="store_true")
    args = parser.parse_args()
    import rypsok

    compileall.compile_dir(Path(rypsok.__file__).parent, quiet=1)
    results = [summarize("rypsok", [sys.executable, "-m", "rypsok", "serve"], args.runs)]
    if not args.no_reference:
        python = reference_python(args.reference_venv)
        results.append(summarize(REFERENCE, [str(python), "-m", "mcp_server_fetch"], args.runs))
        ours, ref = results
        results.append(
            {
                "ratio_first_answer": round(
                    float(ours["first_tools_list_s_median"])
                    / float(ref["first_tools_list_s_median"]),
                    2,
                ),
                "ratio_idle_rss": round(
                    float(ours["idle_rss_mib_median"]) / float(ref["idle_rss_mib_median"]), 2
                ),
            }
        )
    print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
