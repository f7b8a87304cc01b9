"""Simulated search engines for benchmarks: one HTTP/1.1 server process on loopback.

Every engine gets its own listening port, so its own origin and connection pool in rypsok, as
real engines have. Every request answers 200 with the body of the engine's file, after a
fixed delay, with keep-alive. Run as a separate process so that its CPU is not counted as
rypsok's.

usage: python bench/sim_engines.py DELAY_MS PATH=FILE [PATH=FILE ...]
Prints one line "ready URL URL ..." once listening: the base URL of each PATH, in order.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path


def start(
    delay_ms: int, engines: dict[str, tuple[str, Path]]
) -> tuple[subprocess.Popen[str], dict[str, str]]:
    """Start the simulator for ``engines`` (id -> (path, file)): the process and each base URL."""
    process = subprocess.Popen(
        [
            sys.executable,
            __file__,
            str(delay_ms),
            *(f"{path}={file}" for path, file in engines.values()),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    _, *bases = process.stdout.readline().split()
    return process, dict(zip(engines, bases, strict=True))


def main() -> int:
    """Serve until killed."""
    delay_s = int(sys.argv[1]) / 1000
    bodies = [Path(mapping.partition("=")[2]).read_bytes() for mapping in sys.argv[2:]]

    def handler(
        body: bytes,
    ) -> Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]:
        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                while True:
                    line = await reader.readline()
                    if not line:
                        return
                    while (await reader.readline()) not in (b"\r\n", b""):
                        pass
                    await asyncio.sleep(delay_s)
                    writer.write(
                        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                        b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body
                    )
                    await writer.drain()
            except (ConnectionError, asyncio.IncompleteReadError):
                return
            finally:
                writer.close()

        return handle

    async def serve() -> None:
        servers = [
            await asyncio.start_server(handler(body), "127.0.0.1", 0, backlog=1024)
            for body in bodies
        ]
        bases = [f"http://127.0.0.1:{s.sockets[0].getsockname()[1]}" for s in servers]
        print("ready", *bases, flush=True)
        await asyncio.gather(*(s.serve_forever() for s in servers))

    asyncio.run(serve())
    return 0


if __name__ == "__main__":
    sys.exit(main())
