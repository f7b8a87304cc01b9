"""Fixtures of the fetch tests: the anyio backend, the corpus, shared extractors."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from rypsok.fetch import Extractor

CORPUS = Path(__file__).parent / "corpus"
HOSTILE_WORKER = Path(__file__).parent / "hostile_worker.py"
HOSTILE_PROGRAM = (sys.executable, "-B", "-s", "-P", str(HOSTILE_WORKER))


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    """Run async tests on asyncio, the loop rypsok serves on (one loop for the session, so that
    the session's extractor and its worker processes serve every test)."""
    return "asyncio"


@dataclass(frozen=True)
class Fixture:
    """One page of the extraction corpus and its sidecar."""

    name: str
    body: bytes
    meta: dict[str, Any]


def corpus() -> list[Fixture]:
    """Every page of ``tests/fetch/corpus`` with its sidecar."""
    found = []
    for sidecar in sorted(CORPUS.glob("*.json")):
        page = next(p for p in CORPUS.glob(sidecar.stem + ".*") if p.suffix != ".json")
        found.append(Fixture(sidecar.stem, page.read_bytes(), json.loads(sidecar.read_text())))
    return found


@pytest.fixture(scope="session")
async def extractor(anyio_backend: str) -> AsyncIterator[Extractor]:
    """The production extractor with its default limits, without bubblewrap."""
    async with Extractor(workers=2, sandbox="none") as shared:
        yield shared


@pytest.fixture(scope="session")
async def hostile(anyio_backend: str) -> AsyncIterator[Extractor]:
    """An extractor whose workers also obey hostile commands in the body (hostile_worker.py)."""
    async with Extractor(
        workers=2,
        sandbox="none",
        timeout_s=2.0,
        memory_bytes=512 * 1024 * 1024,
        program=HOSTILE_PROGRAM,
    ) as shared:
        yield shared
