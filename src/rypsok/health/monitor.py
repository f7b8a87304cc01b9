"""One object for the search pipeline: circuits, latency windows and engine metrics together.

The pipeline asks :meth:`EngineMonitor.admit` before a request and reports its end exactly once
with :meth:`record_success`, :meth:`record_failure` or, when it ended with no result
(cancelled, deadline passed before an answer), :meth:`release`. The monitor keeps the three
views consistent: the circuit decides, the metrics count every request and transition, the
latency window feeds engine_status.

**Which requests enter the latency window.** Only successes. engine_status reports how fast an
engine answers; a failure's latency says how fast it refuses (a 429 in 20 ms) or equals the
timeout, and either would drag the median away from what a caller can expect. Failures are
still counted by class, and their latency is still in the engine latency histogram.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from rypsok.contract.responses import EngineHealth
from rypsok.contract.vocabulary import FailureClass
from rypsok.health.circuits import (
    Admission,
    CircuitBreaker,
    CircuitSettings,
    Transition,
    TransitionListener,
)
from rypsok.health.clock import Clock
from rypsok.health.latency import LatencyWindows
from rypsok.health.metrics import Metrics
from rypsok.health.status import engine_status


class EngineMonitor:
    """The health state of every engine (REQ-OBS-001) and its metrics."""

    def __init__(
        self,
        *,
        clock: Clock,
        metrics: Metrics,
        circuit_settings: CircuitSettings | None = None,
        latency_window: int | None = None,
        listener: TransitionListener | None = None,
    ) -> None:
        """``listener`` is told of every circuit transition (the service logs them)."""
        self.metrics = metrics
        self._listener = listener
        self.circuits = CircuitBreaker(clock, circuit_settings, listener=self._on_transition)
        self.latency = LatencyWindows(latency_window)

    def admit(self, engine: str) -> Admission:
        """Whether a request to ``engine`` may go out now (see :meth:`CircuitBreaker.admit`)."""
        return self.circuits.admit(engine)

    def record_success(
        self,
        engine: str,
        latency_ms: float,
        admission: Admission | None = None,
        *,
        requests: int = 1,
    ) -> None:
        """The engine answered after ``latency_ms``, having been sent ``requests`` requests."""
        self.metrics.engine_request(engine, latency_ms, requests=requests)
        self.latency.record(engine, latency_ms)
        self.circuits.record_success(engine, admission)

    def record_failure(
        self,
        engine: str,
        failure_class: FailureClass,
        latency_ms: float,
        retry_after_s: float | None = None,
        admission: Admission | None = None,
        *,
        requests: int = 1,
    ) -> None:
        """The engine failed with ``failure_class`` after ``latency_ms`` and ``requests``
        requests."""
        self.metrics.engine_request(engine, latency_ms, failure_class, requests=requests)
        self.circuits.record_failure(engine, failure_class, retry_after_s, admission)

    def release(self, admission: Admission) -> None:
        """A request ended with no result: hand back its probe slot, if it was the probe."""
        self.circuits.release(admission)

    def status(self, configured: Iterable[str], disabled: Collection[str]) -> list[EngineHealth]:
        """The engine_status data of every configured engine (REQ-STATUS-001/002)."""
        return engine_status(configured, disabled, self.circuits, self.latency)

    def _on_transition(self, transition: Transition) -> None:
        self.metrics.circuit_transition(transition.engine, transition.state)
        if self._listener is not None:
            self._listener(transition)
