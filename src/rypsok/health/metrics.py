"""Counters and latency histograms of the process (REQ-OBS-002/003/004/007).

Every label value is rypsok's own vocabulary: an engine identifier (checked against a strict
pattern), a :class:`ToolName`, an :class:`Outcome`, an :class:`ErrorKind`, a :class:`Reason`, a
:class:`FailureClass` or a :class:`CircuitState`. Values are converted through their enum, so
a string that is not a member — provider text, a URL, a caller name — raises instead of
becoming a label (REQ-STATUS-002, REQ-OBS-006).

Metrics leave the process through log lines (:meth:`Metrics.snapshot`) and, where a listener
offers it, the Prometheus text (:meth:`Metrics.render_prometheus`) (REQ-OBS-008).

Latencies are taken in milliseconds, the unit of every timing in rypsok, and exported in
seconds, the base unit Prometheus expects; sums are kept in milliseconds so repeated additions
do not drift.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from rypsok.config.limits import limit
from rypsok.contract.vocabulary import ErrorKind, FailureClass, Outcome, Reason, ToolName
from rypsok.health.circuits import CircuitState
from rypsok.health.prometheus import MetricFamily, Sample, render

ENGINE_ID_PATTERN = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,63}$")
"""What an engine identifier may look like; anything else is refused as a label."""

_GENERIC_BOUNDS_S = (0.05, 0.1, 0.25, 0.5, 1.0, 2.0)

ENGINE_BUCKETS_S: tuple[float, ...] = tuple(
    sorted({*_GENERIC_BOUNDS_S, limit("LIM-S5") / 1000, limit("LIM-S4") / 1000})
)
"""Engine latency buckets: generic bounds plus the engine timeout and the search deadline."""

CALL_BUCKETS_S: tuple[float, ...] = tuple(
    sorted(
        {
            *_GENERIC_BOUNDS_S,
            limit("LIM-S4") / 1000,
            limit("LIM-S7") / 1000,
            limit("LIM-F4") / 1000,
            limit("LIM-F5") / 1000,
        }
    )
)
"""Call latency buckets: generic bounds plus the search and fetch deadlines and ceilings."""


def engine_label(engine: str) -> str:
    """``engine`` if it is a well-formed engine identifier; raises ValueError otherwise."""
    if not ENGINE_ID_PATTERN.match(engine):
        raise ValueError("not an engine identifier")
    return engine


@dataclass(slots=True)
class _Histogram:
    bounds_s: tuple[float, ...]
    counts: list[int] = field(init=False)  # per bucket, not cumulative; last is +Inf
    sum_ms: float = 0.0
    count: int = 0

    def __post_init__(self) -> None:
        self.counts = [0] * (len(self.bounds_s) + 1)

    def observe(self, latency_ms: float) -> None:
        latency_ms = max(0.0, float(latency_ms))
        seconds = latency_ms / 1000
        index = next((i for i, b in enumerate(self.bounds_s) if seconds <= b), len(self.bounds_s))
        self.counts[index] += 1
        self.sum_ms += latency_ms
        self.count += 1


Labels = tuple[str, ...]


@dataclass(slots=True)
class _Family:
    name: str
    help: str
    label_names: tuple[str, ...]
    counters: dict[Labels, int] = field(default_factory=dict)
    histograms: dict[Labels, _Histogram] = field(default_factory=dict)
    bounds_s: tuple[float, ...] | None = None  # set for histograms

    def inc(self, labels: Labels, amount: int = 1) -> None:
        self.counters[labels] = self.counters.get(labels, 0) + amount

    def observe(self, labels: Labels, latency_ms: float) -> None:
        if self.bounds_s is None:
            raise TypeError(f"{self.name} is a counter")
        histogram = self.histograms.get(labels)
        if histogram is None:
            histogram = _Histogram(self.bounds_s)
            self.histograms[labels] = histogram
        histogram.observe(latency_ms)

    def to_family(self) -> MetricFamily:
        if self.bounds_s is None:
            samples = tuple(
                Sample(self.name, tuple(zip(self.label_names, key, strict=True)), value)
                for key, value in sorted(self.counters.items())
            )
            return MetricFamily(self.name, self.help, "counter", samples)
        out: list[Sample] = []
        for key, hist in sorted(self.histograms.items()):
            labels = tuple(zip(self.label_names, key, strict=True))
            cumulative = 0
            for bound, count in zip((*hist.bounds_s, float("inf")), hist.counts, strict=True):
                cumulative += count
                le = "+Inf" if bound == float("inf") else repr(bound)
                out.append(Sample(f"{self.name}_bucket", (*labels, ("le", le)), cumulative))
            out.append(Sample(f"{self.name}_sum", labels, hist.sum_ms / 1000))
            out.append(Sample(f"{self.name}_count", labels, hist.count))
        return MetricFamily(self.name, self.help, "histogram", tuple(out))


class Metrics:
    """The process's counters and histograms; one instance, made by the composition root."""

    def __init__(self) -> None:
        self._engine_requests = _Family(
            "rypsok_engine_requests_total", "Engine requests sent, by engine.", ("engine",)
        )
        self._engine_latency = _Family(
            "rypsok_engine_request_duration_seconds",
            "Latency of engine requests, by engine.",
            ("engine",),
            bounds_s=ENGINE_BUCKETS_S,
        )
        self._engine_errors = _Family(
            "rypsok_engine_errors_total",
            "Failed engine requests, by engine and failure class.",
            ("engine", "class"),
        )
        self._calls = _Family(
            "rypsok_calls_total", "Tool calls, by tool and outcome.", ("tool", "outcome")
        )
        self._call_latency = _Family(
            "rypsok_call_duration_seconds",
            "Latency of tool calls, by tool.",
            ("tool",),
            bounds_s=CALL_BUCKETS_S,
        )
        self._call_errors = _Family(
            "rypsok_call_errors_total",
            "Tool calls that ended with an error, by tool and error kind.",
            ("tool", "kind"),
        )
        self._refused = _Family(
            "rypsok_calls_refused_total",
            "Tool calls refused before any work, by tool and reason. "
            "A rising count is a defect of the interface.",
            ("tool", "reason"),
        )
        self._transitions = _Family(
            "rypsok_circuit_transitions_total",
            "Circuit transitions, by engine and the state entered.",
            ("engine", "state"),
        )

    def _families(self) -> Iterable[_Family]:
        return (
            self._engine_requests,
            self._engine_latency,
            self._engine_errors,
            self._calls,
            self._call_latency,
            self._call_errors,
            self._refused,
            self._transitions,
        )

    # --- recording --------------------------------------------------------------------------

    def engine_request(
        self,
        engine: str,
        latency_ms: float,
        failure: FailureClass | None = None,
        *,
        requests: int = 1,
    ) -> None:
        """One engine's part of a search ended after ``latency_ms``, having sent ``requests``
        requests (two for a two-step driver); ``failure`` is its class if it failed."""
        key = (engine_label(engine),)
        self._engine_requests.inc(key, requests)
        self._engine_latency.observe(key, latency_ms)
        if failure is not None:
            self._engine_errors.inc((key[0], FailureClass(failure).value))

    def call(
        self,
        tool: ToolName,
        outcome: Outcome,
        latency_ms: float,
        error_kind: ErrorKind | None = None,
    ) -> None:
        """One tool call ended; ``error_kind`` is given exactly when the outcome is ``error``."""
        tool_value = ToolName(tool).value
        outcome = Outcome(outcome)
        if (outcome is Outcome.ERROR) != (error_kind is not None):
            raise ValueError("error_kind is given exactly when the outcome is error")
        self._calls.inc((tool_value, outcome.value))
        self._call_latency.observe((tool_value,), latency_ms)
        if error_kind is not None:
            self._call_errors.inc((tool_value, ErrorKind(error_kind).value))

    def refused_call(self, tool: ToolName, reason: Reason) -> None:
        """A call refused before any work, e.g. by the invocation limits (REQ-OBS-007)."""
        self._refused.inc((ToolName(tool).value, Reason(reason).value))

    def circuit_transition(self, engine: str, state: CircuitState) -> None:
        """A circuit entered ``state`` (REQ-OBS-004)."""
        self._transitions.inc((engine_label(engine), CircuitState(state).value))

    # --- reading ----------------------------------------------------------------------------

    def families(self) -> list[MetricFamily]:
        """Every metric with its samples, series sorted by label values."""
        return [family.to_family() for family in self._families()]

    def render_prometheus(self) -> str:
        """The Prometheus text exposition (version 0.0.4); deterministic for equal contents."""
        return render(self.families())

    def snapshot(self) -> dict[str, Any]:
        """A compact, JSON-ready summary for a log line; empty sections are left out.

        Counters map ``label/label`` to a count; latencies map the label to count and sum (ms).
        """
        names = {
            "engine_requests": self._engine_requests,
            "engine_latency_ms": self._engine_latency,
            "engine_errors": self._engine_errors,
            "calls": self._calls,
            "call_latency_ms": self._call_latency,
            "call_errors": self._call_errors,
            "calls_refused": self._refused,
            "circuit_transitions": self._transitions,
        }
        out: dict[str, Any] = {}
        for name, family in names.items():
            section: dict[str, Any]
            if family.bounds_s is None:
                section = {"/".join(k): v for k, v in sorted(family.counters.items())}
            else:
                section = {
                    "/".join(k): {"count": h.count, "sum": round(h.sum_ms)}
                    for k, h in sorted(family.histograms.items())
                }
            if section:
                out[name] = section
        return out
