"""engine_status data and the engine monitor (REQ-STATUS-001/002, REQ-OBS-001..004)."""

from __future__ import annotations

from rypsok.config.limits import limit
from rypsok.contract.responses import EngineHealth, StatusResponse
from rypsok.contract.vocabulary import FailureClass, Outcome
from rypsok.health.circuits import CircuitBreaker, CircuitState, Transition
from rypsok.health.clock import ManualClock
from rypsok.health.latency import LatencyWindows
from rypsok.health.metrics import Metrics
from rypsok.health.monitor import EngineMonitor
from rypsok.health.status import engine_status

B1 = limit("LIM-B1")
B2 = float(limit("LIM-B2"))


def test_req_status_001_every_configured_engine_with_its_state(clock: ManualClock) -> None:
    """REQ-STATUS-001: identifier, state (disabled, closed, open, half_open), median or null."""
    circuits = CircuitBreaker(clock)
    latency = LatencyWindows()
    for _ in range(B1):
        circuits.record_failure("gdelt", FailureClass.TIMEOUT)
        circuits.record_failure("arxiv", FailureClass.TIMEOUT)
    clock.advance(B2)
    for _ in range(B1):
        circuits.record_failure("gdelt", FailureClass.TIMEOUT)  # reopened; arxiv cooled down
    latency.record("wikipedia", 100)
    latency.record("wikipedia", 300)
    latency.record("github", 50)

    status = engine_status(
        ["wikipedia", "gdelt", "arxiv", "github", "wikipedia"], {"github"}, circuits, latency
    )
    assert status == [
        EngineHealth(engine="wikipedia", state="closed", median_latency_ms=200),
        EngineHealth(engine="gdelt", state="open", median_latency_ms=None),
        EngineHealth(engine="arxiv", state="half_open", median_latency_ms=None),
        EngineHealth(engine="github", state="disabled", median_latency_ms=50),
    ]


def test_req_status_002_only_the_allowed_keys(clock: ManualClock) -> None:
    """REQ-STATUS-002: nothing but engine, state and median latency; no endpoint, no text."""
    status = engine_status(["wikipedia", "arxiv"], set(), CircuitBreaker(clock), LatencyWindows())
    response = StatusResponse(outcome=Outcome.OK, engines=status)
    dumped = response.model_dump(mode="json")
    assert set(dumped) == {"outcome", "engines"}
    for entry in dumped["engines"]:
        assert set(entry) == {"engine", "state", "median_latency_ms"}
        assert entry["state"] in {"disabled", "closed", "open", "half_open"}


def test_req_obs_001_004_monitor_keeps_circuit_metrics_and_latency_together(
    clock: ManualClock,
) -> None:
    """REQ-OBS-001..004: transitions reach listener and metrics; status shows them."""
    heard: list[Transition] = []
    metrics = Metrics()
    monitor = EngineMonitor(clock=clock, metrics=metrics, listener=heard.append)

    monitor.record_success("wikipedia", 120, monitor.admit("wikipedia"))
    for _ in range(B1):
        admission = monitor.admit("wikipedia")
        monitor.record_failure("wikipedia", FailureClass.TIMEOUT, 3500, admission=admission)
    assert [t.state for t in heard] == [CircuitState.OPEN]
    assert not monitor.admit("wikipedia").allowed
    assert monitor.status(["wikipedia"], set())[0].state == "open"

    clock.advance(B2)
    probe = monitor.admit("wikipedia")
    assert probe.is_probe
    monitor.record_success("wikipedia", 80, admission=probe)
    assert [t.state for t in heard] == [
        CircuitState.OPEN,
        CircuitState.HALF_OPEN,
        CircuitState.CLOSED,
    ]

    snap = metrics.snapshot()
    assert snap["engine_requests"] == {"wikipedia": 2 + B1}
    assert snap["engine_errors"] == {"wikipedia/timeout": B1}
    assert snap["circuit_transitions"] == {
        "wikipedia/closed": 1,
        "wikipedia/half_open": 1,
        "wikipedia/open": 1,
    }
    # Only successes enter the latency window: failures would drag the median to the timeout.
    assert monitor.status(["wikipedia"], set()) == [
        EngineHealth(engine="wikipedia", state="closed", median_latency_ms=100)
    ]


def test_req_res_005_monitor_release_frees_a_probe(clock: ManualClock) -> None:
    """REQ-RES-005: a cancelled probe handed back through the monitor frees the slot."""
    monitor = EngineMonitor(clock=clock, metrics=Metrics())
    for _ in range(B1):
        monitor.record_failure("arxiv", FailureClass.BLOCKED, 10)
    clock.advance(B2)
    probe = monitor.admit("arxiv")
    assert not monitor.admit("arxiv").allowed
    monitor.release(probe)
    assert monitor.admit("arxiv").is_probe
