"""Contained extraction: worker processes, limits, replacement, concurrency (spec 002).

REQ-PAGE-006/008, REQ-SEC-012, REQ-SEC-014, REQ-TEST-006. No test asserts a duration: the
hostile jobs prove what happens (the call fails, the worker is replaced, the next call works).
"""

from __future__ import annotations

import json
import sys

import anyio
import pytest

from rypsok.contract.vocabulary import ErrorKind, NoticeCode, Reason
from rypsok.fetch import ExtractionError, Extractor, select_and_budget
from rypsok.fetch.pool import WorkerFailure, WorkerPool
from rypsok.fetch.sandbox import WORKER_ENV, WorkerLimits, worker_command
from tests.fetch.conftest import HOSTILE_PROGRAM

pytestmark = pytest.mark.anyio

URL = "https://example.org/page"
NORMAL = (
    b"<html><head><title>Normal</title></head><body><article><h1>A normal page</h1>"
    + b"<p>"
    + b"Ordinary article text that any extractor can read. " * 12
    + b"</p>"
    + b"</article></body></html>"
)


async def _normal_page_works(extractor: Extractor) -> None:
    extraction = await extractor.extract(NORMAL, "text/html", URL)
    assert "A normal page" in extraction.content
    assert extraction.title == "Normal"


@pytest.mark.req("REQ-PAGE-006")
@pytest.mark.req("REQ-TEST-006")
async def test_a_100000_deep_page_ends_its_call_and_not_the_next(extractor: Extractor) -> None:
    intro = b"<p>" + b"Text before the nesting starts. " * 20 + b"</p>"
    deep = b"<html><body>" + intro + b"<div>" * 100_000 + b"x" + b"</div>" * 100_000
    extraction = await extractor.extract(deep + b"</body></html>", "text/html", URL)
    assert extraction.partial
    assert "Text before the nesting starts." in extraction.content
    assert NoticeCode.EXTRACTION_PARTIAL in {n.code for n in extraction.notices()}
    bare = b"<html><body>" + b"<div>" * 100_000 + b"x" + b"</div>" * 100_000 + b"</body></html>"
    with pytest.raises(ExtractionError) as refused:
        await extractor.extract(bare, "text/html", URL)
    assert refused.value.reason is Reason.EXTRACTION_FAILED
    await _normal_page_works(extractor)


@pytest.mark.req("REQ-PAGE-006")
@pytest.mark.req("REQ-TEST-006")
async def test_a_million_node_page_is_cut_at_the_node_bound(extractor: Extractor) -> None:
    body = b"<html><body>" + b"<p>a" * 1_000_000 + b"</body></html>"
    assert len(body) <= 4 * 1024 * 1024  # LIM-F3
    try:
        extraction = await extractor.extract(body, "text/html", URL)
    except ExtractionError as refused:
        assert refused.reason is Reason.EXTRACTION_FAILED
    else:
        assert extraction.partial
        assert extraction.content.count("a") <= 200_000  # LIM-F10
    await _normal_page_works(extractor)


@pytest.mark.req("REQ-PAGE-006")
@pytest.mark.req("REQ-TEST-006")
async def test_a_page_of_100000_headings_is_indexed_within_bounds(extractor: Extractor) -> None:
    body = b"<html><body>" + b"<h2>Heading</h2><p>text</p>" * 100_000 + b"</body></html>"
    try:
        extraction = await extractor.extract(body, "text/html", URL)
    except ExtractionError as refused:
        assert refused.reason is Reason.EXTRACTION_FAILED
    else:
        assert len(extraction.sections) <= 10_000
        view = select_and_budget(extraction, focus="heading", max_chars=20_000)
        assert view.external_chars() <= 20_000
    await _normal_page_works(extractor)


@pytest.mark.req("REQ-SEC-014")
@pytest.mark.req("REQ-TEST-006")
async def test_a_crashing_worker_is_replaced(hostile: Extractor) -> None:
    started = hostile.pool.stats.started
    with pytest.raises(ExtractionError) as failed:
        await hostile.extract(b"HOSTILE:exit", "text/plain", URL)
    assert failed.value.reason is Reason.EXTRACTION_FAILED
    assert failed.value.to_tool_failure().kind is ErrorKind.UNSUPPORTED_CONTENT
    for _ in range(3):
        await _normal_page_works(hostile)
    assert hostile.pool.stats.started > started


@pytest.mark.req("REQ-SEC-014")
@pytest.mark.req("REQ-TEST-006")
async def test_a_worker_beyond_its_memory_limit_is_replaced(hostile: Extractor) -> None:
    stopped = hostile.pool.stats.stopped
    with pytest.raises(ExtractionError):
        await hostile.extract(b"HOSTILE:allocate:4000000000", "text/plain", URL)
    await _normal_page_works(hostile)
    assert hostile.pool.stats.stopped > stopped


@pytest.mark.req("REQ-PAGE-008")
@pytest.mark.req("REQ-TEST-006")
async def test_a_stuck_worker_is_killed_on_timeout_and_replaced(hostile: Extractor) -> None:
    with pytest.raises(ExtractionError) as failed:
        await hostile.extract(b"HOSTILE:spin", "text/plain", URL)
    assert failed.value.reason is Reason.EXTRACTION_FAILED
    await _normal_page_works(hostile)


@pytest.mark.req("REQ-SEC-014")
async def test_a_malformed_reply_is_a_failed_extraction(hostile: Extractor) -> None:
    with pytest.raises(ExtractionError) as failed:
        await hostile.extract(b"HOSTILE:garbage", "text/plain", URL)
    assert failed.value.reason is Reason.EXTRACTION_FAILED
    await _normal_page_works(hostile)


@pytest.mark.req("REQ-PAGE-008")
async def test_a_cancelled_call_kills_its_worker_and_the_pool_stays_healthy(
    hostile: Extractor,
) -> None:
    stopped = hostile.pool.stats.stopped
    with anyio.move_on_after(0.3):
        await hostile.extract(b"HOSTILE:sleep:30", "text/plain", URL)
    assert hostile.pool.stats.stopped > stopped
    assert hostile.pool.stats.in_flight == 0
    await _normal_page_works(hostile)


@pytest.mark.req("REQ-SEC-012")
@pytest.mark.req("REQ-PAGE-008")
async def test_concurrency_never_exceeds_the_worker_count(hostile: Extractor) -> None:
    pids: list[str] = []
    ticks = 0
    done = anyio.Event()

    async def one() -> None:
        extraction = await hostile.extract(b"HOSTILE:sleep:0.3", "text/plain", URL)
        pids.append(extraction.content)

    async def heartbeat() -> None:
        # The event loop keeps running while the workers are busy: nothing blocks it.
        nonlocal ticks
        while not done.is_set():
            ticks += 1
            await anyio.sleep(0.01)

    async with anyio.create_task_group() as group:
        group.start_soon(heartbeat)
        async with anyio.create_task_group() as calls:
            for _ in range(6):
                calls.start_soon(one)
        done.set()
    assert len(pids) == 6
    assert len(set(pids)) <= 2
    assert hostile.pool.stats.peak_in_flight <= 2
    assert ticks > 1


@pytest.mark.req("REQ-SEC-014")
async def test_workers_run_under_the_configured_limits(hostile: Extractor) -> None:
    extraction = await hostile.extract(b"HOSTILE:limits", "text/plain", URL)
    limits = json.loads(extraction.content)
    assert limits["as"] == [512 * 1024 * 1024, 512 * 1024 * 1024]
    assert limits["cpu"][1] > 0
    assert limits["cpu"][0] <= limits["cpu"][1]
    assert limits["core"] == [0, 0]
    assert limits["fsize"] == [0, 0]


async def test_nothing_a_worker_prints_reaches_stdout(
    hostile: Extractor, capfd: pytest.CaptureFixture[str]
) -> None:
    extraction = await hostile.extract(b"HOSTILE:print", "text/plain", URL)
    assert extraction.content == "printed"
    out, err = capfd.readouterr()
    assert "garbage" not in out
    assert "garbage" not in err


@pytest.mark.req("REQ-SEC-014")
async def test_rlimit_cpu_ends_a_spinning_worker() -> None:
    limits = WorkerLimits(memory_bytes=512 * 1024 * 1024, cpu_seconds=1, cpu_lifetime=60)
    pool = WorkerPool(
        size=1, command=lambda: worker_command(limits, HOSTILE_PROGRAM), env=WORKER_ENV
    )
    try:
        job = json.dumps({"content_type": "text/plain", "url": URL}).encode()
        with pytest.raises(WorkerFailure) as failed:
            await pool.run(job, b"HOSTILE:spin", timeout_s=120)
        assert failed.value.cause == "crashed"  # killed by SIGXCPU, not by the wall clock
        reply = await pool.run(job, b"still alive", timeout_s=120)
        assert b"still alive" in reply
    finally:
        await pool.aclose()


async def test_a_closed_extractor_refuses_with_internal() -> None:
    extractor = Extractor(workers=1, sandbox="none")
    await extractor.start()
    await extractor.aclose()
    with pytest.raises(ExtractionError) as refused:
        await extractor.extract(NORMAL, "text/html", URL)
    assert refused.value.reason is Reason.INTERNAL
    assert refused.value.to_tool_failure().kind is ErrorKind.UNAVAILABLE


async def test_a_worker_that_cannot_start_is_an_internal_error() -> None:
    extractor = Extractor(workers=1, sandbox="none", program=(sys.executable, "-c", "pass"))
    try:
        with pytest.raises(ExtractionError) as refused:
            await extractor.extract(NORMAL, "text/html", URL)
        assert refused.value.reason is Reason.INTERNAL
    finally:
        await extractor.aclose()
