"""Extraction workers under bubblewrap, for real (spec README section 3: contained extraction).

With ``[fetch] sandbox = "bwrap"`` a worker has no network and none of the host's files but
the interpreter and rypsok. The probe below is a worker with the production loop and limits
whose handler tries to connect to a listener of the test and to read a file the test wrote;
the same probe without the sandbox succeeds at both, which shows the probe can tell.
"""

from __future__ import annotations

import shutil
import socket
import sys
from pathlib import Path

import pytest

from rypsok.fetch import Extractor

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed"),
]

PROBE = """
import socket, sys
from rypsok.fetch.worker import main

def _load():
    from rypsok.fetch import pipeline

    def handle(job, body):
        command, _, argument = body.decode().partition(":")
        if command == "connect":
            try:
                socket.create_connection(("127.0.0.1", int(argument)), timeout=2).close()
                answer = "connected"
            except OSError:
                answer = "refused"
        else:
            try:
                with open(argument, "rb") as handle_:
                    handle_.read(1)
                answer = "read"
            except OSError:
                answer = "absent"
        return pipeline.handle(
            {"content_type": "text/plain", "url": "https://x.invalid/"}, answer.encode()
        )

    return handle

raise SystemExit(main(sys.argv[1:], load=_load))
"""
PROGRAM = (sys.executable, "-B", "-s", "-P", "-c", PROBE)


async def probe(sandbox: str, body: bytes) -> str:
    async with Extractor(workers=1, sandbox=sandbox, program=PROGRAM) as extractor:
        result = await extractor.extract(body, "text/plain", "https://x.invalid/")
        return result.content.strip()


async def test_sandboxed_worker_has_no_network_and_no_host_files(tmp_path: Path) -> None:
    """REQ-SEC-014, REQ-PAGE-008: under bubblewrap the worker cannot reach a listener on the
    host's loopback nor read a file of the host; without it, the same probe can."""
    secret = tmp_path / "host-file.txt"
    secret.write_text("host data", encoding="utf-8")
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        port = listener.getsockname()[1]
        connect = f"connect:{port}".encode()
        read = f"read:{secret}".encode()
        assert await probe("none", connect) == "connected"
        assert await probe("none", read) == "read"
        assert await probe("bwrap", connect) == "refused"
        assert await probe("bwrap", read) == "absent"


async def test_containment_reported() -> None:
    """The service states at start which containment is in force."""
    extractor = Extractor(workers=1, sandbox="bwrap")
    assert extractor.containment() == "process+rlimits+bwrap"
    await extractor.aclose()
