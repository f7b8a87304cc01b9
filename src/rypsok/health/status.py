"""The data of engine_status: identifier, state and median latency, nothing else.

REQ-STATUS-001 (every configured engine, its state, the median of its last LIM-S11 completed
requests or null) and REQ-STATUS-002 (no endpoint, no credential, no provider text: the model
has exactly three fields, two of them rypsok's vocabulary and one a number).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from rypsok.contract.responses import EngineHealth
from rypsok.health.circuits import CircuitBreaker
from rypsok.health.latency import LatencyWindows


def engine_status(
    configured: Iterable[str],
    disabled: Collection[str],
    circuits: CircuitBreaker,
    latency: LatencyWindows,
) -> list[EngineHealth]:
    """Health of every configured engine, in the configured order, each engine once.

    A disabled engine reads ``disabled`` whatever its circuit; the others read their
    circuit's state (an open circuit whose cooldown is over reads ``half_open``).
    """
    seen: set[str] = set()
    out: list[EngineHealth] = []
    for engine in configured:
        if engine in seen:
            continue
        seen.add(engine)
        state = "disabled" if engine in disabled else circuits.state(engine).value
        out.append(
            EngineHealth.model_validate(
                {"engine": engine, "state": state, "median_latency_ms": latency.median(engine)}
            )
        )
    return out
