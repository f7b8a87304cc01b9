"""A pool of worker processes driven from the event loop (REQ-PAGE-008, REQ-SEC-012/014).

The pool runs at most ``size`` jobs at once (LIM-C5, a capacity limiter) and keeps idle workers
for reuse. Every job has a wall-clock timeout; a worker that times out, crashes, exceeds a
limit, sends a malformed reply, or whose call is cancelled is killed (its whole process group)
and reaped. Nothing here blocks the event loop: the pipes are non-blocking and all waiting is
asynchronous. The pool never raises anything but :class:`WorkerFailure` for a job, so one bad
page cannot poison later calls.

Workers are ready before the calls that need them, as far as the pool can arrange it:

* :meth:`WorkerPool.start` launches all of them at once (the service calls it at warm-up);
* a discarded worker is replaced at once: its successor's process is launched before the failed
  call returns and boots (about 1.7 s) while nobody waits; the job that takes it reads its ready
  frame then, or waits for it.

A job that cannot finish before its caller's deadline because of the work queued ahead of it is
refused with ``capacity`` instead of waiting until the deadline passes (REQ-SEC-012: "further
work waits or, when the deadline would be missed, ends with unavailable"): at once, when the
estimated work ahead (:class:`JobCosts`) leaves too little time, otherwise as soon as its wait
for a worker has used up the time its own job needs.

Bodies and replies cross the pipes without extra copies (REQ-PERF-003): a job is written from a
``memoryview`` of the body in the pieces the pipe accepts, and a reply is read into one buffer
of its announced size. The pipes are the pool's own rather than asyncio's transports, which copy
every byte the pipe does not take at once into a buffer of their own.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import signal
import statistics
import subprocess
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import anyio
from anyio.abc import Process

from rypsok.fetch.body import Body
from rypsok.fetch.protocol import FAILED, MAX_REPLY_BYTES, READY, REPLY_HEADER, RETIRE, job_head

_log = logging.getLogger(__name__)

Cause = Literal[
    "timeout", "deadline", "crashed", "failed", "start_failed", "protocol", "closed", "capacity"
]
_REAP_SECONDS = 5.0
# Linux lets a pipe hold up to /proc/sys/fs/pipe-max-size (1 MiB by default): a 4 MiB body then
# crosses in a few writes instead of sixty-four wake-ups. Where refused, the default stays.
_PIPE_BYTES = 1024 * 1024
# Job costs: jobs of at least this many bytes teach the estimate, the median of the last few is
# used (a typical job: a refusal should be right, and a page admitted should make it). Until
# such a job has been seen it assumes 20 MB/s, faster than any page measured here
# (docs/performance.md), so that nothing is refused on a guess.
_COST_MIN_BYTES = 256 * 1024
_COST_SAMPLES = 8
_DEFAULT_SECONDS_PER_BYTE = 1 / 20e6
_LAUNCH_POLL_S = 0.01
_FIRST_READ_BYTES = 256 * 1024
_READY_READ_S = 1.0  # the five bytes of a ready frame arrive together; this only bounds a fault


class WorkerFailure(Exception):
    """A job did not produce a reply; ``cause`` says why (never page text).

    ``timeout`` is the job's own time limit, ``deadline`` the caller's time running out first.
    ``retry_after_s`` comes with ``capacity``: when the work queued now should be done.
    """

    def __init__(self, cause: Cause, *, retry_after_s: float | None = None) -> None:
        super().__init__(cause)
        self.cause = cause
        self.retry_after_s = retry_after_s


class _FellBack(Exception):
    """The sandboxed command could not start a worker; the pool now uses its fallback."""


@dataclass(slots=True)
class PoolStats:
    """Counters for tests and the start-up log."""

    started: int = 0
    stopped: int = 0
    jobs: int = 0
    in_flight: int = 0
    peak_in_flight: int = 0
    refused: int = 0


class JobCosts:
    """Estimates of a job's duration from the size of its body (typical, not worst case)."""

    def __init__(self) -> None:
        self._rates: deque[float] = deque(maxlen=_COST_SAMPLES)

    def observe(self, size: int, seconds: float) -> None:
        """Record a completed job of ``size`` bytes that took ``seconds``."""
        if size >= _COST_MIN_BYTES and seconds > 0:
            self._rates.append(seconds / size)

    def estimate(self, size: int) -> float:
        """The seconds a job of ``size`` bytes takes, as the recent jobs tell (their median)."""
        if not self._rates:
            return size * _DEFAULT_SECONDS_PER_BYTE
        return size * statistics.median(self._rates)


def _pipe() -> tuple[int, int]:
    """A pipe (read end, write end), close-on-exec, as large as the system allows."""
    read_end, write_end = os.pipe()
    with contextlib.suppress(OSError):
        fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, _PIPE_BYTES)
    return read_end, write_end


async def _write_all(fd: int, data: memoryview) -> None:
    """Write ``data`` to a non-blocking descriptor, waiting whenever the pipe is full."""
    while data:
        try:
            written = os.write(fd, data)
        except BlockingIOError:
            await anyio.wait_writable(fd)
            continue
        data = data[written:]


async def _read_into(fd: int, view: memoryview) -> None:
    """Fill ``view`` from a non-blocking descriptor; EndOfStream when the writer is gone."""
    while view:
        try:
            got = os.readv(fd, [view])
        except BlockingIOError:
            await anyio.wait_readable(fd)
            continue
        if not got:
            raise anyio.EndOfStream
        view = view[got:]


_STREAM_ERRORS = (anyio.EndOfStream, OSError)


class _Worker:
    """One worker process and the parent's ends of its two pipes."""

    def __init__(self, process: Process, to_worker: int, from_worker: int, primary: bool) -> None:
        self.process = process
        self.to_worker = to_worker
        self.from_worker = from_worker
        self.primary = primary  # started with the first command, which may still fall back
        self.ready = False
        self.launched = time.monotonic()
        self._closed = False

    @property
    def alive(self) -> bool:
        return self.process.returncode is None

    async def _header(self) -> tuple[int, int]:
        header = bytearray(REPLY_HEADER.size)
        await _read_into(self.from_worker, memoryview(header))
        size, flags = REPLY_HEADER.unpack(header)
        if size > MAX_REPLY_BYTES:
            raise WorkerFailure("protocol")
        return size, flags

    async def read_frame(self) -> tuple[int, bytearray]:
        """One reply: its flags and its payload, read into one buffer.

        The buffer grows (at most doubling, never beyond the announced size) as the bytes
        arrive: a size announced by a confused worker costs memory only once it is sent.
        """
        size, flags = await self._header()
        payload = bytearray(min(size, _FIRST_READ_BYTES))
        filled = 0
        while filled < size:
            if filled == len(payload):
                payload += bytes(min(len(payload), size - len(payload)))
            # The views go before the buffer grows (a buffer with views cannot be resized).
            with memoryview(payload) as whole, whole[filled:] as window:
                try:
                    got = os.readv(self.from_worker, [window])
                except BlockingIOError:
                    got = -1
            if got < 0:
                await anyio.wait_readable(self.from_worker)
                continue
            if not got:
                raise anyio.EndOfStream
            filled += got
        return flags, payload

    async def wait_ready(self) -> bool:
        """Read the ready frame; False when the worker sends anything else, or exits.

        Only the wait for data may be cancelled: the frame is five bytes, which a pipe delivers
        in one piece (writes up to PIPE_BUF bytes are atomic), so a cancelled wait has consumed
        nothing and the worker can go back to the pool, still booting.
        """
        await anyio.wait_readable(self.from_worker)
        size = flags = 0
        with anyio.CancelScope(shield=True), anyio.move_on_after(_READY_READ_S):
            try:
                size, flags = await self._header()
            except (WorkerFailure, *_STREAM_ERRORS):
                return False
        self.ready = bool(flags & READY) and size == 0
        return self.ready

    async def send(self, head: bytes, body: Body) -> None:
        await _write_all(self.to_worker, memoryview(head))
        with memoryview(body.data) as view:
            await _write_all(self.to_worker, view)
        body.release()  # the worker has it; the caller's fetch need not hold it any longer

    def signal(self) -> None:
        """SIGKILL to the worker's process group (its descendants too), unless it has exited.

        Never ``Process.kill()``: its ``poll()`` can reap the worker behind the event loop's
        child watcher, which then logs "Unknown child process pid" and loses the exit status.
        """
        if self.process.returncode is None:
            # The worker leads its own session; ESRCH means the group has exited already.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.process.pid, signal.SIGKILL)

    async def kill(self) -> None:
        """Kill, reap and close the pipes. Only the task that uses the worker calls this."""
        self.signal()
        with (
            anyio.CancelScope(shield=True),
            anyio.move_on_after(_REAP_SECONDS),
            contextlib.suppress(Exception),
        ):
            await self.process.wait()
        if not self._closed:
            self._closed = True
            os.close(self.to_worker)
            os.close(self.from_worker)


class WorkerPool:
    """Worker processes started by ``command()``; ``fallback()`` is tried, for good, if the
    first command cannot start a worker (bubblewrap that cannot create namespaces)."""

    def __init__(
        self,
        *,
        size: int,
        command: Callable[[], Sequence[str]],
        env: Mapping[str, str],
        start_timeout_s: float = 30.0,
        fallback: Callable[[], Sequence[str]] | None = None,
        limiter: anyio.CapacityLimiter | None = None,
    ) -> None:
        """``limiter``, when given, is the process's parse limiter of ``size`` tokens, shared
        with the other parsing tasks of the process (REQ-SEC-012); by default the pool has its
        own."""
        if size < 1:
            raise ValueError("a pool needs at least one worker")
        if limiter is not None and limiter.total_tokens != size:
            raise ValueError("a shared parse limiter must have as many tokens as the pool workers")
        self._command = command
        self._fallback = fallback
        self._env = dict(env)
        self._start_timeout_s = start_timeout_s
        self._limiter = limiter if limiter is not None else anyio.CapacityLimiter(size)
        self._idle: list[_Worker] = []  # ready or booting, nobody waits on them
        self._busy: set[_Worker] = set()  # taken by a task (running a job or awaited)
        self._launching = 0
        self._closed = False
        # The estimated seconds of each job waiting for a worker, and (start, estimate) of each
        # running job, by job.
        self._waiting: dict[object, float] = {}
        self._running: dict[object, tuple[float, float]] = {}
        self.costs = JobCosts()
        self.size = size
        self.stats = PoolStats()
        self.fell_back = False

    # --- workers -------------------------------------------------------------------------

    def _count(self) -> int:
        return len(self._idle) + len(self._busy) + self._launching

    async def _launch(self) -> _Worker:
        """Start a worker process; it boots on its own and sends a ready frame."""
        primary = not self.fell_back
        command = list(self._command())
        to_read, to_write = _pipe()
        from_read, from_write = _pipe()
        self._launching += 1
        try:
            process = await anyio.open_process(
                command,
                stdin=to_read,
                stdout=from_write,
                stderr=subprocess.DEVNULL,  # a worker never writes to our streams
                env=self._env,
                start_new_session=True,
            )
        except BaseException as failed:  # cancellation included: no descriptor is left open
            os.close(to_write)
            os.close(from_read)
            if isinstance(failed, OSError):
                raise WorkerFailure("start_failed") from None
            raise
        finally:
            self._launching -= 1
            # The child has its ends now (or never will): only the parent's stay open here.
            os.close(to_read)
            os.close(from_write)
        os.set_blocking(to_write, False)
        os.set_blocking(from_read, False)
        self.stats.started += 1
        return _Worker(process, to_write, from_read, primary)

    async def _discard(self, worker: _Worker) -> None:
        self.stats.stopped += 1
        await worker.kill()

    async def _replace(self) -> None:
        """Launch a successor for a discarded worker, so that the next job need not wait for a
        whole boot. Shielded: it also runs while a cancelled call unwinds."""
        if self._closed or self._count() >= self.size:
            return
        with anyio.CancelScope(shield=True), contextlib.suppress(WorkerFailure):
            await self._park(await self._launch())

    async def _await_ready(self, worker: _Worker) -> None:
        """Wait for a booting worker this task holds in ``_busy``.

        Raises :class:`WorkerFailure` (``start_failed``) after discarding a worker that failed
        to start, or :class:`_FellBack` when that made the pool switch to its fallback command.
        A cancelled wait leaves the worker booting, for the caller to return to the pool.
        """
        left = self._start_timeout_s - (time.monotonic() - worker.launched)
        with anyio.move_on_after(max(left, 0.0)):
            if await worker.wait_ready():
                return
        self._busy.discard(worker)
        await self._discard(worker)
        if worker.primary and self._fallback is not None:
            if not self.fell_back:
                _log.warning("extraction worker could not start under the sandbox; falling back")
                self.fell_back = True
                self._command = self._fallback
            raise _FellBack
        raise WorkerFailure("start_failed")

    async def _take_booting(self, worker: _Worker) -> None:
        """Move a booting idle worker to ``_busy`` and wait until it is ready (see above).

        On cancellation, a worker still booting goes back to the idle list.
        """
        self._idle.remove(worker)
        self._busy.add(worker)
        try:
            await self._await_ready(worker)
        except BaseException:
            if worker in self._busy:
                self._busy.discard(worker)
                if worker.alive and not self._closed:
                    self._idle.append(worker)
            raise

    async def start(self) -> None:
        """Launch the workers up to the pool size, all at once, and wait until they are ready.

        Raises :class:`WorkerFailure` (``start_failed``) when a worker cannot start.
        """
        while not self._closed:
            while self._count() < self.size and not self._closed:
                await self._park(await self._launch())
            booting = next((w for w in self._idle if not w.ready), None)
            if booting is None:
                return
            try:
                await self._take_booting(booting)
            except _FellBack:
                continue
            self._busy.discard(booting)
            await self._park(booting)

    async def _park(self, worker: _Worker) -> None:
        """Return a worker nobody uses to the idle list, or stop it when the pool is closed."""
        if self._closed:
            await self._discard(worker)
        else:
            self._idle.append(worker)

    async def _take(self) -> _Worker:
        """A worker for a job, held in ``_busy``: a ready one, else one that is booting (the
        job waits for it), else a new one."""
        while True:
            if self._closed:
                raise WorkerFailure("closed")
            for dead in [w for w in self._idle if not w.alive]:
                self._idle.remove(dead)
                await self._discard(dead)
            ready = next((w for w in self._idle if w.ready), None)
            if ready is not None:
                self._idle.remove(ready)
                self._busy.add(ready)
                return ready
            if self._idle:
                worker = self._idle[0]
            elif self._count() < self.size:
                worker = await self._launch()
                await self._park(worker)  # stopped at once if the pool closed meanwhile
                continue
            else:
                # Every slot is a launch in progress (start() beside this job): it lands soon.
                await anyio.sleep(_LAUNCH_POLL_S)
                continue
            try:
                await self._take_booting(worker)
            except _FellBack:
                continue
            return worker

    # --- jobs ----------------------------------------------------------------------------

    def queued_seconds(self) -> float:
        """Estimated seconds until a worker is free for a new job (work ahead / workers)."""
        now = time.monotonic()
        running = sum(max(0.0, est - (now - start)) for start, est in self._running.values())
        return (running + sum(self._waiting.values())) / self.size

    def _refuse(self) -> WorkerFailure:
        self.stats.refused += 1
        return WorkerFailure("capacity", retry_after_s=self.queued_seconds())

    async def run(
        self,
        header_json: bytes,
        body: bytes | Body,
        *,
        timeout_s: float,
        budget_s: float | None = None,
    ) -> bytearray:
        """Run one job and return the reply payload, or raise :class:`WorkerFailure`.

        ``timeout_s`` bounds the job once it has a worker. ``budget_s``, when given, is the
        time the caller has left for waiting and running together: a job that the work queued
        ahead of it keeps from finishing in time is refused with ``capacity`` (module docstring).
        A :class:`Body` is released once the worker has read it.
        """
        if not isinstance(body, Body):
            body = Body(body)
        own = self.costs.estimate(body.size)
        deadline = None if budget_s is None else time.monotonic() + budget_s
        token = object()
        try:
            self._limiter.acquire_nowait()
        except anyio.WouldBlock:
            await self._queue(token, own, deadline)
        try:
            if self._closed:
                raise WorkerFailure("closed")
            self.stats.in_flight += 1
            self.stats.peak_in_flight = max(self.stats.peak_in_flight, self.stats.in_flight)
            try:
                left = timeout_s if deadline is None else deadline - time.monotonic()
                return await self._run(
                    header_json,
                    body,
                    min(timeout_s, left),
                    token,
                    own,
                    by_deadline=left < timeout_s,
                )
            finally:
                self.stats.in_flight -= 1
        finally:
            self._limiter.release()

    async def _queue(self, token: object, own: float, deadline: float | None) -> None:
        """Wait for a worker behind the jobs queued already; refuse what cannot be in time.

        Queued work is the only reason to refuse: a job that finds a free worker always runs.
        """
        if deadline is not None and self.queued_seconds() + own > deadline - time.monotonic():
            raise self._refuse()
        self._waiting[token] = own
        acquired = False
        try:
            if deadline is None:
                await self._limiter.acquire()
                acquired = True
            else:
                # Wait only while the job itself would still fit before the deadline.
                with anyio.move_on_after(deadline - own - time.monotonic()):
                    await self._limiter.acquire()
                    acquired = True
        finally:
            del self._waiting[token]
        if not acquired:
            raise self._refuse()

    async def _run(
        self,
        header_json: bytes,
        body: Body,
        timeout_s: float,
        token: object,
        own: float,
        *,
        by_deadline: bool,
    ) -> bytearray:
        worker: _Worker | None = None
        sent = False
        keep = False
        try:
            try:
                with anyio.fail_after(max(timeout_s, 0.0)):
                    worker = await self._take()
                    started = time.monotonic()
                    self._running[token] = (started, own)
                    await worker.send(job_head(header_json, body.size), body)
                    sent = True
                    flags, payload = await worker.read_frame()
            except TimeoutError:
                if not sent:
                    # No worker could take the job in time (they were booting or busy).
                    raise self._refuse() from None
                raise WorkerFailure("deadline" if by_deadline else "timeout") from None
            except _STREAM_ERRORS:
                raise WorkerFailure("closed" if self._closed else "crashed") from None
            self.stats.jobs += 1
            if flags & FAILED:
                raise WorkerFailure("failed")
            self.costs.observe(body.size, time.monotonic() - started)
            keep = not flags & RETIRE
            return payload
        finally:
            self._running.pop(token, None)
            if worker is not None:
                # Any other way out (cancellation included) leaves the worker in an unknown
                # state: it is killed, and a successor launched at once.
                self._busy.discard(worker)
                if keep and not self._closed:
                    self._idle.append(worker)
                else:
                    await self._discard(worker)
                    await self._replace()

    async def aclose(self) -> None:
        """Kill every worker; later jobs fail with ``closed``.

        Idle workers are reaped here. A worker in use is only signalled: the task using it
        sees its pipes end, and reaps it and closes them (closing a descriptor another task
        waits on would leave that task's wait to a descriptor number that may be reused).
        """
        self._closed = True
        idle = list(self._idle)
        self._idle.clear()
        for worker in self._busy:
            worker.signal()
        for worker in idle:
            self.stats.stopped += 1
            await worker.kill()
