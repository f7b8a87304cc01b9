"""A pool of worker processes driven from the event loop (REQ-PAGE-008, REQ-SEC-012/014).

The pool runs at most ``size`` jobs at once (LIM-C5, a capacity limiter) and keeps idle workers
for reuse. Every job has a wall-clock timeout; a worker that times out, crashes, exceeds a
limit, sends a malformed reply, or whose call is cancelled is killed (its whole process group)
and reaped, and the next job starts a fresh one. Nothing here blocks the event loop: processes
are anyio processes and all waiting is asynchronous. The pool never raises anything but
:class:`WorkerFailure` for a job, so one bad page cannot poison later calls.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import anyio
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream

from rypsok.fetch.protocol import FAILED, MAX_REPLY_BYTES, READY, REPLY_HEADER, RETIRE, job_frame

_log = logging.getLogger(__name__)

Cause = Literal["timeout", "crashed", "failed", "start_failed", "protocol", "closed"]
_REAP_SECONDS = 5.0


class WorkerFailure(Exception):
    """A job did not produce a reply; ``cause`` says why (never page text)."""

    def __init__(self, cause: Cause) -> None:
        super().__init__(cause)
        self.cause = cause


@dataclass(slots=True)
class PoolStats:
    """Counters for tests and the start-up log."""

    started: int = 0
    stopped: int = 0
    jobs: int = 0
    in_flight: int = 0
    peak_in_flight: int = 0


class _Worker:
    def __init__(self, process: Process) -> None:
        self.process = process
        if process.stdin is None or process.stdout is None:
            raise WorkerFailure("start_failed")
        self.stdin = process.stdin
        self.stdout = BufferedByteReceiveStream(process.stdout)

    @property
    def alive(self) -> bool:
        return self.process.returncode is None

    async def reply(self) -> tuple[int, bytes]:
        header = await self.stdout.receive_exactly(REPLY_HEADER.size)
        size, flags = REPLY_HEADER.unpack(header)
        if size > MAX_REPLY_BYTES:
            raise WorkerFailure("protocol")
        payload = await self.stdout.receive_exactly(size) if size else b""
        return flags, payload

    async def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
            # The worker leads its own session: kill the group, descendants included.
            os.killpg(self.process.pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            self.process.kill()
        with (
            anyio.CancelScope(shield=True),
            anyio.move_on_after(_REAP_SECONDS),
            contextlib.suppress(Exception),
        ):
            await self.process.aclose()


_STREAM_ERRORS = (
    anyio.EndOfStream,
    anyio.IncompleteRead,
    anyio.BrokenResourceError,
    anyio.ClosedResourceError,
    OSError,
)


class WorkerPool:
    """Worker processes started by ``command()``; ``fallback()`` is tried once, for good, if
    the first command cannot start a worker (bubblewrap that cannot create namespaces)."""

    def __init__(
        self,
        *,
        size: int,
        command: Callable[[], Sequence[str]],
        env: Mapping[str, str],
        start_timeout_s: float = 30.0,
        fallback: Callable[[], Sequence[str]] | None = None,
    ) -> None:
        if size < 1:
            raise ValueError("a pool needs at least one worker")
        self._command = command
        self._fallback = fallback
        self._env = dict(env)
        self._start_timeout_s = start_timeout_s
        self._limiter = anyio.CapacityLimiter(size)
        self._idle: list[_Worker] = []
        self._busy: set[_Worker] = set()
        self._closed = False
        self.size = size
        self.stats = PoolStats()
        self.fell_back = False

    async def _spawn(self) -> _Worker:
        try:
            return await self._start(self._command())
        except WorkerFailure:
            if self._fallback is None or self.fell_back:
                raise
            _log.warning("extraction worker could not start under the sandbox; falling back")
            self.fell_back = True
            self._command = self._fallback
            return await self._start(self._command())

    async def _start(self, command: Sequence[str]) -> _Worker:
        try:
            process = await anyio.open_process(
                list(command),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,  # a worker never writes to our streams
                env=self._env,
                start_new_session=True,
            )
        except OSError:
            raise WorkerFailure("start_failed") from None
        worker = _Worker(process)
        self.stats.started += 1
        ready = False
        try:
            with anyio.fail_after(self._start_timeout_s):
                flags, _ = await worker.reply()
            ready = bool(flags & READY)
        except (TimeoutError, WorkerFailure, *_STREAM_ERRORS):
            pass
        finally:
            # Also on cancellation: a half-started worker is never left behind.
            if not ready:
                await self._discard(worker)
        if not ready:
            raise WorkerFailure("start_failed")
        return worker

    async def _discard(self, worker: _Worker) -> None:
        self.stats.stopped += 1
        await worker.kill()

    async def start(self) -> None:
        """Start idle workers up to the pool size, so the first calls need not wait."""
        while len(self._idle) + len(self._busy) < self.size and not self._closed:
            self._idle.append(await self._spawn())

    async def run(self, header_json: bytes, body: bytes, *, timeout_s: float) -> bytes:
        """Run one job and return the reply payload, or raise :class:`WorkerFailure`."""
        async with self._limiter:
            if self._closed:
                raise WorkerFailure("closed")
            self.stats.in_flight += 1
            self.stats.peak_in_flight = max(self.stats.peak_in_flight, self.stats.in_flight)
            try:
                return await self._run(header_json, body, timeout_s)
            finally:
                self.stats.in_flight -= 1

    async def _take(self) -> _Worker:
        while self._idle:
            worker = self._idle.pop()
            if worker.alive:
                return worker
            await self._discard(worker)
        return await self._spawn()

    async def _run(self, header_json: bytes, body: bytes, timeout_s: float) -> bytes:
        worker = await self._take()
        self._busy.add(worker)
        keep = False
        try:
            try:
                with anyio.fail_after(timeout_s):
                    await worker.stdin.send(job_frame(header_json, body))
                    flags, payload = await worker.reply()
            except TimeoutError:
                raise WorkerFailure("timeout") from None
            except _STREAM_ERRORS:
                raise WorkerFailure("closed" if self._closed else "crashed") from None
            self.stats.jobs += 1
            if flags & FAILED:
                raise WorkerFailure("failed")
            keep = not flags & RETIRE
            return payload
        finally:
            # Any other way out (cancellation included) leaves the worker in an unknown state.
            self._busy.discard(worker)
            if keep and not self._closed:
                self._idle.append(worker)
            else:
                await self._discard(worker)

    async def aclose(self) -> None:
        """Kill every worker; later jobs fail with ``closed``."""
        self._closed = True
        workers = [*self._idle, *self._busy]
        self._idle.clear()
        for worker in workers:
            await worker.kill()
