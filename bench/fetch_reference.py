"""The reference side of the web_fetch benchmarks, run by the interpreter of the official fetch
server's own virtual environment (``mcp-server-fetch``), never by rypsok's.

Modes (one JSON object on stdout):

* ``convert FILE [FILE ...]``: per page, CPU and wall time of the server's conversion
  ``extract_content_from_html(html)`` (readabilipy, then markdownify) on the decoded page;
* ``fetch URL [URL ...]``: per URL, CPU and wall time of the server's own ``fetch_url`` (httpx
  GET, decode, conversion), with ``allow_private_ips=True`` so that it reaches loopback, after
  its robots.txt check (``check_may_autonomously_fetch_url``), as its tool does;
* ``bomb URL``: ``fetch_url`` once on a compression bomb; the parent reads the peak memory.

readabilipy uses Readability.js only when Node.js *and* its ``node_modules`` are present, and
otherwise tries ``npm install`` on first use (network). A pip install has no ``node_modules``,
so the server's ordinary mode on a host without Node is readabilipy's pure-Python extractor;
it is forced here (``have_node`` answers False) so that nothing is installed from npm. With
Node, every page would also start a ``node`` process, which costs more, not less.

usage: REFERENCE_PYTHON bench/fetch_reference.py MODE ARGS...
"""

from __future__ import annotations

import asyncio
import json
import resource
import sys
import time
from pathlib import Path

import readabilipy.simple_json
from mcp_server_fetch import server

readabilipy.simple_json.have_node = lambda: False
UA = server.DEFAULT_USER_AGENT_AUTONOMOUS


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def convert(files: list[str]) -> dict[str, object]:
    rows = []
    server.extract_content_from_html("<html><body><p>warm up</p></body></html>")
    for name in files:
        html = Path(name).read_bytes().decode("utf-8")
        cpu0, wall0 = _cpu(), time.perf_counter()
        out = server.extract_content_from_html(html)
        rows.append(
            {
                "file": Path(name).name,
                "cpu_s": _cpu() - cpu0,
                "wall_s": time.perf_counter() - wall0,
                "chars": len(out),
            }
        )
    return {"mode": "convert", "pages": rows}


async def _fetch(urls: list[str]) -> dict[str, object]:
    rows = []
    for url in urls:
        cpu0, wall0 = _cpu(), time.perf_counter()
        await server.check_may_autonomously_fetch_url(url, UA, None, True)
        content, _ = await server.fetch_url(url, UA, allow_private_ips=True)
        rows.append(
            {
                "url": url,
                "cpu_s": _cpu() - cpu0,
                "wall_s": time.perf_counter() - wall0,
                "chars": len(content),
            }
        )
    return {"mode": "fetch", "pages": rows}


async def _bomb(url: str) -> dict[str, object]:
    wall0 = time.perf_counter()
    try:
        content, _ = await server.fetch_url(url, UA, allow_private_ips=True)
        outcome = f"returned {len(content)} characters"
    except MemoryError:
        outcome = "MemoryError"
    except Exception as exc:  # any end is a result here
        outcome = f"{type(exc).__name__}: {str(exc)[:200]}"
    return {"mode": "bomb", "outcome": outcome, "wall_s": time.perf_counter() - wall0}


def main() -> int:
    mode, args = sys.argv[1], sys.argv[2:]
    if mode == "convert":
        result = convert(args)
    elif mode == "fetch":
        result = asyncio.run(_fetch(args))
    elif mode == "bomb":
        result = asyncio.run(_bomb(args[0]))
    else:
        raise SystemExit(f"unknown mode {mode}")
    result["maxrss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    sys.stdout.write(json.dumps(result) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
