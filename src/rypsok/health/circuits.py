"""The circuit of every engine: closed, open, half_open (REQ-RES-004/005, REQ-OBS-001/004).

* **closed**: requests pass. LIM-B1 consecutive failures of an *opening* class open it.
* **open**: requests are skipped until the cooldown ends. The first cooldown is LIM-B2; each
  reopening without a close in between multiplies it by LIM-B3, up to LIM-B3-MAX.
* **half_open**: the cooldown is over; LIM-B5 real requests are let through as probes and
  every other caller is told to skip. A probe's success closes the circuit and resets the growth;
  a probe's failure reopens it with the longer cooldown. rypsok sends no synthetic probe.

A ``rate_limited`` failure that carries a Retry-After (seconds, at most LIM-B4) opens the
circuit at once, for max(cooldown, Retry-After), and extends an open circuit whose cooldown
would end sooner: the provider said when to come back (REQ-CMP-002).

**Which failures open a circuit.** Only ``timeout``, ``rate_limited``, ``blocked`` and
``parse_failure`` count (the four classes REQ-RES-004 names): they say the provider is slow,
overloaded, walling us off or serving something else, and backing off helps it and us.
``auth_failure`` is the operator's configuration (a missing or revoked key) and the
configuration is fixed for the life of the process, so a cooldown cannot heal it; opening would
only replace the precise ``auth_failure`` notice by a vaguer ``circuit open`` one.
``request_failure`` covers answers to one particular request (a 4xx for an odd query, one reset
connection); one caller's odd query must not take an engine away from every other caller. Both
classes are *neutral*: they neither count towards opening nor reset the count, and a neutral
failure of a probe hands the probe slot back without deciding anything.

Results of requests admitted before the circuit opened that arrive while it is open change
nothing (the cooldown stands), except that a Retry-After is still honoured.

**Cancellation.** A probe whose call is cancelled must be handed back with :meth:`release`
(call it in a ``finally``); as a second line of defence a probe slot that was neither recorded
nor released lapses after ``probe_lease_s`` (LIM-S7, the longest a web_search call may last),
so the circuit can never be wedged in half_open.

All state lives in memory and is lost at restart (REQ-RES-009). The methods never await, so
each is atomic on the event loop; the breaker is not meant to be shared across threads.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum

from rypsok.config.limits import limit
from rypsok.contract.vocabulary import FailureClass
from rypsok.health.clock import Clock


class CircuitState(StrEnum):
    """The three states of a circuit; the values are those of engine_status."""

    CLOSED = "closed"
    OPEN = "open"
    HALF_OPEN = "half_open"


OPENING_CLASSES: frozenset[FailureClass] = frozenset(
    {
        FailureClass.TIMEOUT,
        FailureClass.RATE_LIMITED,
        FailureClass.BLOCKED,
        FailureClass.PARSE_FAILURE,
    }
)
"""The failure classes that count towards opening a circuit (REQ-RES-004)."""


class Decision(StrEnum):
    """What a caller may do with an engine right now."""

    ALLOW = "allow"
    PROBE = "probe"
    SKIP = "skip"


class SkipReason(StrEnum):
    """Why a caller must skip an engine; both become the ``engine_skipped_circuit_open`` notice."""

    CIRCUIT_OPEN = "circuit_open"
    PROBE_IN_FLIGHT = "probe_in_flight"


@dataclass(frozen=True, slots=True)
class Admission:
    """The answer of :meth:`CircuitBreaker.admit`; hand it back to the record methods."""

    engine: str
    decision: Decision
    reason: SkipReason | None = None
    retry_in_s: float | None = None
    """For a skip of an open circuit: seconds until the cooldown ends."""
    ticket: int | None = None
    """For a probe: identifies its slot, so :meth:`CircuitBreaker.release` frees that one."""

    @property
    def allowed(self) -> bool:
        """Whether the request may be sent (as an ordinary request or as the probe)."""
        return self.decision is not Decision.SKIP

    @property
    def is_probe(self) -> bool:
        """Whether the request is the probe of a half-open circuit."""
        return self.decision is Decision.PROBE


@dataclass(frozen=True, slots=True)
class Transition:
    """One change of state, reported to the listener (REQ-OBS-004)."""

    engine: str
    previous: CircuitState
    state: CircuitState
    cooldown_s: float | None = None
    """For an opening: how long the circuit stays open."""
    cause: FailureClass | None = None
    """For an opening: the failure class that opened it."""


TransitionListener = Callable[[Transition], None]


def _float_limit(limit_id: str) -> float:
    return float(limit(limit_id))


@dataclass(frozen=True, slots=True)
class CircuitSettings:
    """The circuit's numbers; every default is read from the limits table."""

    failures_to_open: int = field(default_factory=lambda: limit("LIM-B1"))
    first_cooldown_s: float = field(default_factory=lambda: _float_limit("LIM-B2"))
    growth: float = field(default_factory=lambda: _float_limit("LIM-B3"))
    max_cooldown_s: float = field(default_factory=lambda: _float_limit("LIM-B3-MAX"))
    max_retry_after_s: float = field(default_factory=lambda: _float_limit("LIM-B4"))
    probes: int = field(default_factory=lambda: limit("LIM-B5"))
    probe_lease_s: float = field(default_factory=lambda: limit("LIM-S7") / 1000)

    def __post_init__(self) -> None:
        if self.failures_to_open < 1 or self.probes < 1:
            raise ValueError("failures_to_open and probes must be at least 1")
        if not 0 < self.first_cooldown_s <= self.max_cooldown_s:
            raise ValueError("first_cooldown_s must be positive and at most max_cooldown_s")
        if self.growth < 1:
            raise ValueError("growth must be at least 1: a reopened circuit never cools less")
        if self.max_retry_after_s < 0 or self.probe_lease_s <= 0:
            raise ValueError("max_retry_after_s must be >= 0 and probe_lease_s > 0")


@dataclass(slots=True)
class _Circuit:
    next_cooldown_s: float
    state: CircuitState = CircuitState.CLOSED
    failures: int = 0
    open_until: float = 0.0
    probes: dict[int, float] = field(default_factory=dict)  # ticket -> lease expiry


class CircuitBreaker:
    """One circuit per engine, created on first use; unknown engines read as closed."""

    def __init__(
        self,
        clock: Clock,
        settings: CircuitSettings | None = None,
        listener: TransitionListener | None = None,
    ) -> None:
        self._clock = clock
        self._settings = settings or CircuitSettings()
        self._listener = listener
        self._circuits: dict[str, _Circuit] = {}
        self._tickets = itertools.count(1)

    @property
    def settings(self) -> CircuitSettings:
        """The numbers in force."""
        return self._settings

    def admit(self, engine: str) -> Admission:
        """Whether a request to ``engine`` may go out now: allow, allow as the probe, or skip."""
        now = self._clock.monotonic()
        circuit = self._refresh(engine, now)
        if circuit is None or circuit.state is CircuitState.CLOSED:
            return Admission(engine, Decision.ALLOW)
        if circuit.state is CircuitState.OPEN:
            return Admission(
                engine,
                Decision.SKIP,
                SkipReason.CIRCUIT_OPEN,
                retry_in_s=circuit.open_until - now,
            )
        if len(circuit.probes) < self._settings.probes:
            ticket = next(self._tickets)
            circuit.probes[ticket] = now + self._settings.probe_lease_s
            return Admission(engine, Decision.PROBE, ticket=ticket)
        return Admission(engine, Decision.SKIP, SkipReason.PROBE_IN_FLIGHT)

    def record_success(self, engine: str, admission: Admission | None = None) -> None:
        """A request answered: resets the failure count, or closes a half-open circuit.

        ``admission`` is accepted for symmetry with :meth:`record_failure`; any success seen
        in half_open closes the circuit, because only probes are let through then.
        """
        del admission
        circuit = self._refresh(engine, self._clock.monotonic())
        if circuit is None:
            return
        if circuit.state is CircuitState.CLOSED:
            circuit.failures = 0
        elif circuit.state is CircuitState.HALF_OPEN:
            self._close(engine, circuit)
        # OPEN: a request admitted before the opening; the cooldown stands.

    def record_failure(
        self,
        engine: str,
        failure_class: FailureClass,
        retry_after_s: float | None = None,
        admission: Admission | None = None,
    ) -> None:
        """A request failed with one class; ``retry_after_s`` is a parsed Retry-After, if any.

        Pass the probe's ``admission`` so a neutral failure hands back exactly its slot;
        without it, a neutral failure in half_open hands back every probe slot.
        """
        now = self._clock.monotonic()
        circuit = self._circuit(engine)
        self._refresh(engine, now)
        retry_after = None
        if failure_class is FailureClass.RATE_LIMITED and retry_after_s is not None:
            retry_after = min(max(0.0, retry_after_s), self._settings.max_retry_after_s)

        if circuit.state is CircuitState.OPEN:
            if retry_after is not None:
                circuit.open_until = max(circuit.open_until, now + retry_after)
            return
        if retry_after is not None:
            self._open(engine, circuit, now, failure_class, retry_after)
            return
        if failure_class not in OPENING_CLASSES:
            if circuit.state is CircuitState.HALF_OPEN:
                self._hand_back(circuit, admission)
            return
        if circuit.state is CircuitState.HALF_OPEN:
            self._open(engine, circuit, now, failure_class, 0.0)
            return
        circuit.failures += 1
        if circuit.failures >= self._settings.failures_to_open:
            self._open(engine, circuit, now, failure_class, 0.0)

    def release(self, admission: Admission) -> None:
        """Hand back a probe slot whose request ended with no result (cancelled, abandoned).

        Harmless for an ordinary admission or a slot already settled; call it in a ``finally``.
        """
        if admission.ticket is None:
            return
        circuit = self._circuits.get(admission.engine)
        if circuit is not None and circuit.state is CircuitState.HALF_OPEN:
            circuit.probes.pop(admission.ticket, None)

    def state(self, engine: str) -> CircuitState:
        """The engine's state now; an open circuit whose cooldown is over reads half_open."""
        circuit = self._refresh(engine, self._clock.monotonic())
        return CircuitState.CLOSED if circuit is None else circuit.state

    # --- internals ------------------------------------------------------------------------

    def _circuit(self, engine: str) -> _Circuit:
        circuit = self._circuits.get(engine)
        if circuit is None:
            circuit = _Circuit(next_cooldown_s=self._settings.first_cooldown_s)
            self._circuits[engine] = circuit
        return circuit

    def _refresh(self, engine: str, now: float) -> _Circuit | None:
        """Apply what the passage of time decides: end of cooldown, lapsed probe leases.

        Done lazily on every read, which is equivalent to a timer firing at the exact moment.
        """
        circuit = self._circuits.get(engine)
        if circuit is None:
            return None
        if circuit.state is CircuitState.OPEN and now >= circuit.open_until:
            circuit.state = CircuitState.HALF_OPEN
            circuit.probes.clear()
            self._notify(Transition(engine, CircuitState.OPEN, CircuitState.HALF_OPEN))
        if circuit.state is CircuitState.HALF_OPEN and circuit.probes:
            circuit.probes = {t: until for t, until in circuit.probes.items() if until > now}
        return circuit

    def _open(
        self,
        engine: str,
        circuit: _Circuit,
        now: float,
        cause: FailureClass,
        at_least_s: float,
    ) -> None:
        cooldown = max(circuit.next_cooldown_s, at_least_s)
        circuit.next_cooldown_s = min(
            circuit.next_cooldown_s * self._settings.growth, self._settings.max_cooldown_s
        )
        previous = circuit.state
        circuit.state = CircuitState.OPEN
        circuit.open_until = now + cooldown
        circuit.failures = 0
        circuit.probes.clear()
        self._notify(Transition(engine, previous, CircuitState.OPEN, cooldown, cause))

    def _close(self, engine: str, circuit: _Circuit) -> None:
        circuit.state = CircuitState.CLOSED
        circuit.failures = 0
        circuit.next_cooldown_s = self._settings.first_cooldown_s
        circuit.probes.clear()
        self._notify(Transition(engine, CircuitState.HALF_OPEN, CircuitState.CLOSED))

    @staticmethod
    def _hand_back(circuit: _Circuit, admission: Admission | None) -> None:
        if admission is None:
            circuit.probes.clear()
        elif admission.ticket is not None:
            circuit.probes.pop(admission.ticket, None)

    def _notify(self, transition: Transition) -> None:
        if self._listener is not None:
            self._listener(transition)
