"""The shared harness of rypsok's fuzz targets (REQ-SEC-023, REQ-TEST-013).

Every target module defines ``test_one_input(data: bytes) -> None`` (libFuzzer's name) and ends
with ``main(test_one_input)``. A target raises on a broken invariant (:func:`check`) and lets
any unexpected exception through: both are crashes.

``main`` runs the target under atheris (coverage-guided libFuzzer) when atheris is installed,
passing the command line on to libFuzzer (``-max_total_time=N``, corpus directories, crash
files to replay). Without atheris it runs a small mutational fuzzer of its own over the corpus
directories for ``-max_total_time`` seconds (seeded, so a run can be repeated), and replays files
given on the command line; a crash is written to ``-artifact_prefix`` like libFuzzer does.

Inputs are decoded by :class:`Input`, which is the same with and without atheris, so a crash
file found by one replays identically in the other and in the regression tests.

Coverage instrumentation of rypsok's modules is switched on by ``RYPSOK_FUZZ_INSTRUMENT=1``
(``scripts/fuzz.sh`` sets it); the regression tests import the targets without it.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import random
import struct
import sys
import time
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NoReturn

Target = Callable[[bytes], None]


class InvariantBroken(AssertionError):
    """A target's invariant does not hold: a crash, like an uncaught exception."""


def check(condition: bool, message: str) -> None:
    """Raise :class:`InvariantBroken` when ``condition`` is false (not stripped by ``-O``)."""
    if not condition:
        raise InvariantBroken(message)


def fail(message: str) -> NoReturn:
    """Raise :class:`InvariantBroken` unconditionally."""
    raise InvariantBroken(message)


def _atheris() -> Any | None:
    try:
        import atheris  # type: ignore[import-not-found, import-untyped, unused-ignore]
    except ImportError:
        return None
    return atheris


@contextlib.contextmanager
def instrumented() -> Iterator[None]:
    """Instrument rypsok's modules for coverage when a fuzzing run asked for it."""
    atheris = _atheris() if os.environ.get("RYPSOK_FUZZ_INSTRUMENT") == "1" else None
    if atheris is None:
        yield
        return
    with atheris.instrument_imports(include=["rypsok"]):
        yield


class Input:
    """Values drawn from the fuzzer's bytes, front to back; exhausted input yields defaults."""

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._at = 0

    @property
    def remaining(self) -> int:
        """Bytes not consumed yet."""
        return len(self._data) - self._at

    def byte(self) -> int:
        """One byte (0 when exhausted)."""
        if self._at >= len(self._data):
            return 0
        value = self._data[self._at]
        self._at += 1
        return value

    def integer(self, low: int, high: int) -> int:
        """An integer in ``[low, high]`` from up to four bytes."""
        span = high - low + 1
        raw = 0
        for _ in range(4 if span > 65536 else 2 if span > 256 else 1):
            raw = raw * 256 + self.byte()
        return low + raw % span

    def pick(self, options: tuple[Any, ...] | list[Any]) -> Any:
        """One of ``options``."""
        return options[self.integer(0, len(options) - 1)]

    def flag(self) -> bool:
        """A boolean."""
        return bool(self.byte() & 1)

    def raw(self, size: int | None = None) -> bytes:
        """The next ``size`` bytes, or the rest."""
        end = len(self._data) if size is None else min(len(self._data), self._at + size)
        chunk = self._data[self._at : end]
        self._at = end
        return chunk

    def sized_raw(self, max_size: int) -> bytes:
        """A length-prefixed chunk of at most ``max_size`` bytes."""
        return self.raw(self.integer(0, max_size))

    def text(self, size: int | None = None) -> str:
        """A string that can hold any code point: the first byte picks the decoding.

        0: Latin-1; 1: UTF-8 with replacement; 2: UTF-16-LE code units (lone surrogates
        kept, as external JSON can carry them); 3: 32-bit code points modulo 0x110000.
        """
        mode = self.byte() % 4
        chunk = self.raw(size)
        if mode == 0:
            return chunk.decode("latin-1")
        if mode == 1:
            return chunk.decode("utf-8", errors="replace")
        if mode == 2:
            units = struct.unpack(f"<{len(chunk) // 2}H", chunk[: len(chunk) // 2 * 2])
            return "".join(map(chr, units))
        points = struct.unpack(f"<{len(chunk) // 4}I", chunk[: len(chunk) // 4 * 4])
        return "".join(chr(p % 0x110000) for p in points)

    def sized_text(self, max_size: int) -> str:
        """A length-prefixed string of at most ``max_size`` input bytes."""
        return self.text(self.integer(0, max_size))


# --- the run loop -----------------------------------------------------------------------------


def _options(argv: list[str]) -> tuple[dict[str, str], list[str]]:
    options: dict[str, str] = {}
    paths: list[str] = []
    for arg in argv:
        if arg.startswith("-") and "=" in arg:
            key, _, value = arg[1:].partition("=")
            options[key] = value
        elif not arg.startswith("-"):
            paths.append(arg)
    return options, paths


def _seeds(paths: list[str]) -> list[bytes]:
    seeds: list[bytes] = []
    for path in map(Path, paths):
        if path.is_dir():
            seeds.extend(p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file())
    return seeds or [b""]


def _mutate(rng: random.Random, data: bytes, seeds: list[bytes], max_len: int) -> bytes:
    buffer = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        choice = rng.randrange(7)
        at = rng.randrange(len(buffer) + 1)
        if choice == 0 and buffer:
            buffer[min(at, len(buffer) - 1)] ^= 1 << rng.randrange(8)
        elif choice == 1:
            buffer[at:at] = bytes([rng.randrange(256)])
        elif choice == 2 and buffer:
            del buffer[at : at + rng.randint(1, 16)]
        elif choice == 3:
            other = rng.choice(seeds)
            start = rng.randrange(len(other) + 1)
            buffer[at:at] = other[start : start + rng.randint(1, 64)]
        elif choice == 4:
            buffer[at:at] = rng.choice(_INTERESTING)
        elif choice == 5 and buffer:
            end = min(len(buffer), at + rng.randint(1, 32))
            buffer[at:at] = buffer[at:end] * rng.randint(1, 64)
        else:
            buffer[at:at] = rng.randbytes(rng.randint(1, 8))
    return bytes(buffer[:max_len])


_INTERESTING: tuple[bytes, ...] = (
    b"\x00",
    b"\xff",
    b"\x7f",
    b"<",
    b">",
    b"&",
    b"%",
    b"\\",
    b"@",
    b":",
    b"[",
    b"]",
    b"//",
    b"\xe2\x80\x8b",  # ZWSP
    b"\xe2\x80\x8d",  # ZWJ
    b"\xe2\x80\xae",  # RLO
    b"\xf3\xa0\x80\x81",  # a tag character
    b"\xef\xbb\xbf",  # BOM
    b"<!DOCTYPE",
    b"<![CDATA[",
    b"&#x",
    b"0x",
    b"::ffff:",
    b"127.0.0.1",
    b"xn--",
    b"\r\n",
)


def _write_crash(prefix: str, data: bytes) -> Path:
    path = Path(f"{prefix}crash-{hashlib.sha1(data).hexdigest()}")  # noqa: S324 - a file name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def _run_one(target: Target, data: bytes, prefix: str) -> bool:
    try:
        target(data)
    except Exception:
        traceback.print_exc()
        path = _write_crash(prefix, data)
        sys.stderr.write(f"CRASH: input written to {path}\n")
        return False
    return True


def _fallback(target: Target, argv: list[str]) -> int:
    options, paths = _options(argv)
    prefix = options.get("artifact_prefix", "./")
    files = [p for p in paths if Path(p).is_file()]
    if files:  # replay, as libFuzzer does with file arguments
        return 0 if all(_run_one(target, Path(p).read_bytes(), prefix) for p in files) else 1
    budget = float(options.get("max_total_time", "10"))
    max_len = int(options.get("max_len", "4096"))
    rng = random.Random(int(options.get("seed", "1")))  # fuzzing, not secrecy
    seeds = _seeds(paths)
    corpus = list(seeds)
    deadline = time.monotonic() + budget
    runs = 0
    for seed in seeds:
        runs += 1
        if not _run_one(target, seed, prefix):
            return 1
    while time.monotonic() < deadline:
        data = _mutate(rng, rng.choice(corpus), seeds, max_len)
        runs += 1
        if not _run_one(target, data, prefix):
            return 1
        if len(corpus) < 4096 and rng.random() < 0.01:
            corpus.append(data)
    sys.stderr.write(f"fallback fuzzer (no atheris): {runs} runs in {budget:.0f} s, no crash\n")
    return 0


def _known_crashes(path: str | None) -> list[tuple[str, str, str, str]]:
    """(exception name, file suffix, function, message part) of each known crash line."""
    if not path:
        return []
    known: list[tuple[str, str, str, str]] = []
    for raw in Path(path).read_text(encoding="utf-8").splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        name, _, rest = line.partition(" ")
        where, _, message = rest.strip().partition(" ")
        suffix, _, function = where.partition(":")
        known.append((name, suffix, function, message.strip().strip('"')))
    return known


def is_known(error: BaseException, known: list[tuple[str, str, str, str]]) -> bool:
    """Whether ``error`` is a known, reported crash: its type, a frame of its traceback
    (file suffix and function) and a part of its message match one line of the list."""
    frames: list[tuple[str, str]] = []
    tb = error.__traceback__
    while tb is not None:
        frames.append((tb.tb_frame.f_code.co_filename, tb.tb_frame.f_code.co_name))
        tb = tb.tb_next
    return any(
        type(error).__name__ == name
        and message in str(error)
        and any(file.endswith(suffix) and code == function for file, code in frames)
        for name, suffix, function, message in known
    )


def _filtered(target: Target, known: list[tuple[str, str, str, str]]) -> Target:
    if not known:
        return target

    def run(data: bytes) -> None:
        try:
            target(data)
        except Exception as error:
            if not is_known(error, known):
                raise

    return run


def main(target: Target) -> None:
    """Fuzz ``target`` with atheris when installed, else with the fallback loop.

    ``RYPSOK_FUZZ_KNOWN`` names the list of known, reported crashes (fuzz/known-crashes.txt)
    that CI skips so that one reported bug does not hide new ones; the release gate runs
    without it, so a known crash is still a No-Go for a release (REQ-SEC-023).
    """
    target = _filtered(target, _known_crashes(os.environ.get("RYPSOK_FUZZ_KNOWN")))
    atheris = _atheris()
    if atheris is None or os.environ.get("RYPSOK_FUZZ_ENGINE") == "fallback":
        sys.exit(_fallback(target, sys.argv[1:]))
    atheris.Setup(sys.argv, target)
    atheris.Fuzz()
