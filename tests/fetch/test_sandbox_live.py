"""Extraction workers under bubblewrap, for real (spec README section 3: contained extraction).

With ``[fetch] sandbox = "bwrap"`` a worker has no network and none of the host's files but
the interpreter and rypsok. The probe below is a worker with the production loop and limits
whose handler tries to connect to a listener of the test and to read a file the test wrote;
the same probe without the sandbox succeeds at both, which shows the probe can tell.
A worker that hangs is killed with every process it started, inside the sandbox or not.
"""

from __future__ import annotations

import os
import shutil
import socket
import sys
import time
import uuid
from pathlib import Path

import anyio
import pytest

from rypsok.contract.vocabulary import Reason
from rypsok.fetch import ExtractionError, Extractor
from rypsok.fetch.sandbox import SandboxMode

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed"),
]

PROBE = """
import socket, subprocess, sys, time
from rypsok.fetch.worker import main

def _load():
    from rypsok.fetch import pipeline

    def handle(job, body):
        command, _, argument = body.decode().partition(":")
        if command == "spawn":
            # A descendant that outlives the job, then a job that never ends.
            subprocess.Popen(
                [sys.executable, "-c", "import time; time.sleep(300)", argument],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )
            time.sleep(300)
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


async def probe(sandbox: SandboxMode, body: bytes) -> str:
    async with Extractor(workers=1, sandbox=sandbox, program=PROGRAM) as extractor:
        result = await extractor.extract(body, "text/plain", "https://x.invalid/")
        return result.content.strip()


def processes_with(marker: str) -> list[int]:
    """The pids of the processes whose command line holds ``marker``."""
    found: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            command = (entry / "cmdline").read_bytes()
        except OSError:
            continue  # gone meanwhile
        if marker.encode() in command:
            found.append(int(entry.name))
    return found


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


@pytest.mark.parametrize("sandbox", ["none", "bwrap"])
async def test_a_hung_worker_dies_with_everything_it_started(
    sandbox: SandboxMode, tmp_path: Path
) -> None:
    """Contained extraction: a worker that outlives its job's time is killed and replaced, and
    no process it started survives it, with bubblewrap (its own PID namespace) or without (its
    process group). The replacement serves the next page."""
    marker = f"rypsok-descendant-{uuid.uuid4().hex}"
    readable = tmp_path / "file.txt"
    readable.write_text("x", encoding="utf-8")
    outcome: list[BaseException] = []

    async def hang(extractor: Extractor) -> None:
        try:
            await extractor.extract(f"spawn:{marker}".encode(), "text/plain", "https://x.invalid/")
        except ExtractionError as ended:
            outcome.append(ended)

    async with Extractor(workers=1, sandbox=sandbox, program=PROGRAM, timeout_s=2.0) as extractor:
        await extractor.start()
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(hang, extractor)
            for _ in range(150):  # the descendant exists while the job hangs: the probe can tell
                if processes_with(marker):
                    break
                await anyio.sleep(0.01)
            assert processes_with(marker), "the worker did not start its descendant"
        assert len(outcome) == 1
        assert isinstance(outcome[0], ExtractionError)
        assert outcome[0].reason in (Reason.TIMEOUT, Reason.EXTRACTION_FAILED)
        left = processes_with(marker)
        for _ in range(50):  # a SIGKILL is delivered at once; reaping may take a moment
            if not left:
                break
            time.sleep(0.1)
            left = processes_with(marker)
        assert left == [], f"processes left behind: {left}"
        answer = await extractor.extract(b"connect:1", "text/plain", "https://x.invalid/")
        assert answer.content.strip() in ("refused", "connected")
