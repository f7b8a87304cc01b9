"""Engine and service health: circuits, provider and invocation limits, latency and metrics.

All state is in memory, driven by an injected :class:`~rypsok.health.clock.Clock`, and lost at
restart (REQ-RES-009). Nothing here is global: the composition root creates one instance of
each component and hands it to the pipelines and the call runner.
"""

from rypsok.health.circuits import (
    OPENING_CLASSES,
    Admission,
    CircuitBreaker,
    CircuitSettings,
    CircuitState,
    Decision,
    SkipReason,
    Transition,
    TransitionListener,
)
from rypsok.health.clock import Clock, ManualClock, Sleep, SystemClock
from rypsok.health.invocation import (
    LOCAL_CALLER,
    InvocationDecision,
    InvocationLimits,
    default_calls_per_minute,
)
from rypsok.health.latency import LatencyWindows
from rypsok.health.metrics import Metrics
from rypsok.health.monitor import EngineMonitor
from rypsok.health.provider_limits import (
    EngineLimit,
    ProviderLimits,
    ProviderLimitSkippedError,
    ProviderSkip,
    ProviderSlot,
    SlotRefusal,
)
from rypsok.health.status import engine_status

__all__ = [
    "LOCAL_CALLER",
    "OPENING_CLASSES",
    "Admission",
    "CircuitBreaker",
    "CircuitSettings",
    "CircuitState",
    "Clock",
    "Decision",
    "EngineLimit",
    "EngineMonitor",
    "InvocationDecision",
    "InvocationLimits",
    "LatencyWindows",
    "ManualClock",
    "Metrics",
    "ProviderLimitSkippedError",
    "ProviderLimits",
    "ProviderSkip",
    "ProviderSlot",
    "SkipReason",
    "Sleep",
    "SlotRefusal",
    "SystemClock",
    "Transition",
    "TransitionListener",
    "default_calls_per_minute",
    "engine_status",
]
