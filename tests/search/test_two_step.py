"""A two-step engine (PubMed: ESearch, then ESummary) through the real search pipeline.

The first part runs the whole service (real drivers, real egress, the engine profile) against a
simulated E-utilities server on loopback; the second drives the pipeline with a stub sender to
count what the provider limits see. REQ-AGG-002/003/004/007/008, REQ-ENG-006, REQ-CMP-002,
REQ-CMP-004, REQ-TEST-004; fixtures: tests/engines/fixtures/pubmed (docs/engines/pubmed.md).
"""

from __future__ import annotations

import json
import time
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
import pytest

from rypsok import __version__
from rypsok.config.load import parse_settings
from rypsok.contract.arguments import SearchArguments
from rypsok.contract.context import CallContext
from rypsok.contract.errors import ToolFailure
from rypsok.contract.vocabulary import Category
from rypsok.engines.base import EngineRequest, EngineResponse, RateLimit
from rypsok.engines.catalog import resolve_engines
from rypsok.engines.registry import DRIVER_MODULES
from rypsok.health.clock import ManualClock
from rypsok.health.metrics import Metrics
from rypsok.health.monitor import EngineMonitor
from rypsok.health.provider_limits import EngineLimit, ProviderLimits
from rypsok.search.pipeline import SearchPipeline
from tests.cache.support import capture_logger
from tests.fakes.http_server import Reply, fake_http_server
from tests.search.test_pipeline import json_reply, search, search_services

pytestmark = pytest.mark.anyio

ESEARCH = "/eutils/esearch.fcgi"
ESUMMARY = "/eutils/esummary.fcgi"
EPMC = "/epmc/search"
PMIDS = ["39000004", "39000001", "39000003", "39000002"]
PUBMED_URLS = [
    "https://pubmed.ncbi.nlm.nih.gov/39000004/",
    "https://pubmed.ncbi.nlm.nih.gov/39000001/",
    "https://pubmed.ncbi.nlm.nih.gov/39000002/",
]


def pubmed_reply(name: str, **kw: Any) -> Reply:
    return json_reply("pubmed", name, **kw)


def query_of(target: str) -> dict[str, list[str]]:
    return parse_qs(urlsplit(target).query)


# --- the whole service on loopback ---------------------------------------------------------


@pytest.mark.req("REQ-AGG-001")
async def test_two_requests_in_order_give_the_records_in_rank_order() -> None:
    """REQ-AGG-001, REQ-CMP-004: ESearch then ESummary of its PMIDs in relevance order, both
    under the engine profile (identifying User-Agent, tool and email); the results are
    ESummary's records in ESearch's order, cleaned by the pipeline."""
    with fake_http_server() as server:
        server.replies[ESEARCH] = pubmed_reply("esearch_success.json")
        server.replies[ESUMMARY] = pubmed_reply("esummary_success.json")
        async with search_services(server, ["pubmed"]) as (services, _):
            data = await search(services, query="malaria vaccine", category="science")
    assert [r.path for r in server.requests] == [ESEARCH, ESUMMARY]
    first, second = (query_of(r.target) for r in server.requests)
    assert first["term"] == ["(malaria vaccine) AND english[la]"]
    assert second["id"] == [",".join(PMIDS)]
    for sent in (first, second):
        assert sent["tool"] == ["rypsok"] and sent["email"] == ["ops@example.org"]
        assert sent["db"] == ["pubmed"] and sent["retmode"] == ["json"]
    for request in server.requests:
        assert request.headers["user-agent"].startswith(f"rypsok/{__version__} (+https://")
        assert "cookie" not in request.headers
    assert data["outcome"] == "ok"
    assert [r["url"] for r in data["results"]] == PUBMED_URLS
    assert data["results"][0]["title"].startswith("Efficacy of a Plasmodium falciparum vaccine")
    assert data["results"][0]["date"] == "2024-03-07"
    assert all(r["engines"] == ["pubmed"] for r in data["results"])  # attribution required


async def test_nothing_found_sends_no_second_request() -> None:
    """An ESearch that matched nothing ends the engine's part: the outcome is empty and no
    ESummary is sent."""
    with fake_http_server() as server:
        server.replies[ESEARCH] = pubmed_reply("esearch_empty.json")
        server.replies[ESUMMARY] = pubmed_reply("esummary_success.json")
        async with search_services(server, ["pubmed"]) as (services, _):
            data = await search(services, query="qwzxvbnm", category="science")
    assert data["outcome"] == "empty" and data["results"] == []
    assert [r.path for r in server.requests] == [ESEARCH]


@pytest.mark.req("REQ-AGG-004")
@pytest.mark.parametrize(
    ("reply", "failure"),
    [
        (Reply(status=500, body=b"PUBMED-PROVIDER-TEXT"), "request_failure"),
        (pubmed_reply("esummary_error.json"), "request_failure"),
        (pubmed_reply("truncated.json"), "parse_failure"),
        (pubmed_reply("wrong_shape.json"), "parse_failure"),
        (
            pubmed_reply(
                "esearch_rate_limited.json",
                status=429,
                headers=(("Content-Type", "application/json"), ("Retry-After", "30")),
            ),
            "rate_limited",
        ),
    ],
    ids=["500", "esummary-error", "truncated", "wrong-shape", "429"],
)
async def test_req_agg_004_a_failed_second_request_fails_the_engine(
    reply: Reply, failure: str
) -> None:
    """REQ-AGG-004, REQ-ENG-006, REQ-AGG-008: when the ESummary fails, PubMed fails as a
    whole (no PMIDs without records reach the caller), the other engine's results stay, the
    outcome is partial, each request was sent once and no provider text leaks."""
    with fake_http_server() as server:
        server.replies[ESEARCH] = pubmed_reply("esearch_success.json")
        server.replies[ESUMMARY] = reply
        server.replies[EPMC] = json_reply("europepmc")
        async with search_services(server, ["pubmed", "europepmc"]) as (services, logs):
            data = await search(services, query="malaria vaccine", category="science")
    assert data["outcome"] == "partial"
    assert data["results"]
    assert not any("pubmed.ncbi.nlm.nih.gov" in r["url"] for r in data["results"])
    failed = [n for n in data["notices"] if n["code"] == "engine_failed"]
    assert [n["engine"] for n in failed] == ["pubmed"]
    assert failure in failed[0]["message"]
    assert sorted(r.path for r in server.requests) == sorted([ESEARCH, ESUMMARY, EPMC])
    assert "PUBMED-PROVIDER-TEXT" not in json.dumps(data) + "\n".join(logs.lines)


@pytest.mark.req("REQ-ENG-006")
async def test_req_eng_006_esearch_error_in_a_200_answer_sends_no_second_request() -> None:
    """REQ-ENG-006: ``esearchresult.ERROR`` in a 200 answer fails the engine as
    request_failure before any ESummary."""
    with fake_http_server() as server:
        server.replies[ESEARCH] = pubmed_reply("esearch_error.json")
        server.replies[ESUMMARY] = pubmed_reply("esummary_success.json")
        async with search_services(server, ["pubmed"]) as (services, logs):
            data = await search(services, query="malaria vaccine", category="science")
    assert data["error"]["reason"] == "no_engine_answered"
    assert [r.path for r in server.requests] == [ESEARCH]
    assert any(json.loads(line).get("failure") == "request_failure" for line in logs.lines)


@pytest.mark.req("REQ-AGG-002")
async def test_req_agg_002_both_requests_share_one_engine_timeout() -> None:
    """REQ-AGG-002, REQ-AGG-006: a hanging ESummary is cut at the per-engine timeout counted
    from the start of the ESearch, not given a timeout of its own."""
    settings = '{"deadline_ms": 3000, "engine_timeout_ms": 1000, "reserve_ms": 500}'
    with fake_http_server() as server:
        server.replies[ESEARCH] = pubmed_reply("esearch_success.json", delay_s=0.3)
        server.replies[ESUMMARY] = Reply(hang=True)
        async with search_services(server, ["pubmed"], settings) as (services, logs):
            started = time.monotonic()
            data = await search(services, query="malaria vaccine", category="science")
            elapsed = time.monotonic() - started
    assert data["error"]["reason"] == "no_engine_answered"
    assert [r.path for r in server.requests] == [ESEARCH, ESUMMARY]
    assert any(json.loads(line).get("failure") == "timeout" for line in logs.lines)
    # One shared second: about 1.0 s. A timeout of its own would end at about 1.3 s or later.
    assert 0.9 <= elapsed < 1.25


@pytest.mark.req("REQ-AGG-002")
async def test_req_agg_002_no_second_request_without_time_for_it() -> None:
    """REQ-AGG-002: when the ESearch used the engine's timeout but for less than a useful
    request, the ESummary is not started and the engine fails as timeout."""
    settings = '{"deadline_ms": 2000, "engine_timeout_ms": 1000, "reserve_ms": 500}'
    with fake_http_server() as server:
        server.replies[ESEARCH] = pubmed_reply("esearch_success.json", delay_s=0.6)
        server.replies[ESUMMARY] = pubmed_reply("esummary_success.json")
        async with search_services(server, ["pubmed"], settings) as (services, logs):
            data = await search(services, query="malaria vaccine", category="science")
    assert data["error"]["reason"] == "no_engine_answered"
    assert [r.path for r in server.requests] == [ESEARCH]
    assert any(json.loads(line).get("failure") == "timeout" for line in logs.lines)


# --- what the provider limits see (stub sender, manual clock) -------------------------------


class Harness:
    """The pipeline with only PubMed enabled, a stub sender and limits on a manual clock."""

    def __init__(self, rate: RateLimit, max_in_flight: int = 1, first_delay_s: float = 0.0):
        entries: dict[str, Any] = {e: {"enabled": False} for e in DRIVER_MODULES}
        entries["pubmed"] = {"enabled": True}  # its public endpoint: the sender is a stub
        settings = parse_settings(
            {"schema_version": 1, "engines": entries, "service": {"contact": "ops@example.org"}}
        )
        self.clock = ManualClock(start=time.monotonic())
        self.limits = ProviderLimits(
            {"pubmed": EngineLimit(rate, max_in_flight)}, clock=self.clock, sleep=self.clock.sleep
        )
        self.metrics = Metrics()
        self.monitor = EngineMonitor(clock=self.clock, metrics=self.metrics)
        self.sent: list[tuple[str, int, int, float]] = []  # path, in flight: engine, process
        self.first_delay_s = first_delay_s
        logger, _ = capture_logger(f"two-step-{id(self)}")
        self.pipeline = SearchPipeline(
            settings=settings,
            engines=resolve_engines(settings),
            send=self.send,
            monitor=self.monitor,
            limits=self.limits,
            logger=logger,
        )

    async def send(self, request: EngineRequest, **options: Any) -> EngineResponse:
        path = urlsplit(request.url).path
        self.sent.append(
            (
                path,
                self.limits.in_flight("pubmed"),
                self.limits.in_flight(),
                options["total_timeout_s"],
            )
        )
        assert options["connect_timeout_s"] <= options["total_timeout_s"]
        if path.endswith("/esearch.fcgi"):
            await anyio.sleep(self.first_delay_s)
            name = "esearch_success.json"
        else:
            name = "esummary_success.json"
        body = json_reply("pubmed", name).body
        return EngineResponse(200, {"content-type": "application/json"}, body)

    async def search(self) -> Any:
        args = SearchArguments("malaria vaccine", Category.SCIENCE, 10, "en", None)
        return await self.pipeline.search(args, CallContext(request_id="r", caller="local"))


@pytest.mark.req("REQ-CMP-002")
async def test_req_cmp_002_each_request_takes_its_own_slot_under_a_cap_of_one() -> None:
    """REQ-CMP-002, REQ-AGG-005: with the admitted concurrency of 1, each of the two requests
    is sent holding exactly one engine slot and one process slot (the first is released before
    the second is taken), and none is held after the search."""
    harness = Harness(RateLimit(3, 1.0), max_in_flight=1)
    response = await harness.search()
    assert response.outcome.value == "ok" and len(response.results) == 3
    assert [(p.rsplit("/", 1)[-1], e, t) for p, e, t, _ in harness.sent] == [
        ("esearch.fcgi", 1, 1),
        ("esummary.fcgi", 1, 1),
    ]
    assert harness.limits.in_flight("pubmed") == 0 and harness.limits.in_flight() == 0


@pytest.mark.req("REQ-CMP-002")
async def test_req_cmp_002_both_requests_count_toward_the_rate() -> None:
    """REQ-CMP-002, LIM-C9: a search spends two starts of the engine's rate window. With 2 per
    minute a second search sends nothing; with 3 per minute its ESearch goes out and its
    ESummary is refused, which skips the engine without a verdict on its health."""
    two = Harness(RateLimit(2, 60.0))
    assert (await two.search()).outcome.value == "ok"
    with pytest.raises(ToolFailure):
        await two.search()
    assert [p.rsplit("/", 1)[-1] for p, *_ in two.sent] == ["esearch.fcgi", "esummary.fcgi"]

    three = Harness(RateLimit(3, 60.0))
    assert (await three.search()).outcome.value == "ok"
    with pytest.raises(ToolFailure):
        await three.search()
    assert [p.rsplit("/", 1)[-1] for p, *_ in three.sent] == [
        "esearch.fcgi",
        "esummary.fcgi",
        "esearch.fcgi",
    ]
    assert three.limits.in_flight("pubmed") == 0
    # A refused second slot is no failure of the provider: the circuit stays closed and no
    # engine error is counted.
    (health,) = three.monitor.status(["pubmed"], [])
    assert health.state == "closed"
    assert "engine_errors" not in three.metrics.snapshot()


@pytest.mark.req("REQ-AGG-002")
async def test_req_agg_002_the_second_request_gets_what_is_left_of_the_timeout() -> None:
    """REQ-AGG-002: the ESummary's total timeout is what the ESearch left of the per-engine
    timeout (LIM-S5), not a new one."""
    harness = Harness(RateLimit(3, 1.0), first_delay_s=0.3)
    assert (await harness.search()).outcome.value == "ok"
    (_, _, _, first), (_, _, _, second) = harness.sent
    assert first <= 3.5  # LIM-S5, the default per-engine timeout
    assert first - second >= 0.3


@pytest.mark.req("REQ-OBS-002")
async def test_req_obs_002_both_requests_are_counted_as_sent() -> None:
    """REQ-OBS-002: rypsok_engine_requests_total counts requests sent, so a two-step search
    counts two; its latency is observed once, for the engine's whole answer."""
    harness = Harness(RateLimit(3, 1.0))
    assert (await harness.search()).outcome.value == "ok"
    snapshot = harness.metrics.snapshot()
    assert snapshot["engine_requests"] == {"pubmed": 2}
    assert snapshot["engine_latency_ms"]["pubmed"]["count"] == 1
