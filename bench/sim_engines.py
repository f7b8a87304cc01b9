"""Simulated search engines for benchmarks: one HTTP/1.1 server process on loopback.

Every path answers 200 with the body of the file mapped to it, after a fixed delay, with
keep-alive. Run as a separate process so that its CPU is not counted as rypsok's.

usage: python bench/sim_engines.py PORT DELAY_MS PATH=FILE [PATH=FILE ...]
Prints "ready" on stdout once listening.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path


def main() -> int:
    """Serve until killed."""
    port, delay_ms = int(sys.argv[1]), int(sys.argv[2])
    bodies = {}
    for mapping in sys.argv[3:]:
        path, _, file = mapping.partition("=")
        bodies[path] = Path(file).read_bytes()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                line = await reader.readline()
                if not line:
                    return
                target = line.split(b" ")[1].decode()
                while (await reader.readline()) not in (b"\r\n", b""):
                    pass
                await asyncio.sleep(delay_ms / 1000)
                body = bodies.get(target.split("?")[0], b"{}")
                writer.write(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body
                )
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            return
        finally:
            writer.close()

    async def serve() -> None:
        server = await asyncio.start_server(handle, "127.0.0.1", port, backlog=1024)
        print("ready", flush=True)
        async with server:
            await server.serve_forever()

    asyncio.run(serve())
    return 0


if __name__ == "__main__":
    sys.exit(main())
