"""Circuit tests: opening, cooldown growth, probing, closing, Retry-After (REQ-TEST-017)."""

from __future__ import annotations

import anyio
import pytest

from rypsok.config.limits import limit
from rypsok.contract.vocabulary import FailureClass
from rypsok.health.circuits import (
    OPENING_CLASSES,
    Admission,
    CircuitBreaker,
    CircuitSettings,
    CircuitState,
    Decision,
    SkipReason,
    Transition,
)
from rypsok.health.clock import ManualClock

E = "wikipedia"
B1 = limit("LIM-B1")
B2 = float(limit("LIM-B2"))
B3 = limit("LIM-B3")
B3_MAX = float(limit("LIM-B3-MAX"))
B4 = float(limit("LIM-B4"))
LEASE_S = limit("LIM-S7") / 1000


class Recorder:
    """A transition listener that keeps what it hears."""

    def __init__(self) -> None:
        self.transitions: list[Transition] = []

    def __call__(self, transition: Transition) -> None:
        self.transitions.append(transition)

    @property
    def last(self) -> Transition:
        return self.transitions[-1]


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def breaker(clock: ManualClock, recorder: Recorder) -> CircuitBreaker:
    return CircuitBreaker(clock, listener=recorder)


def fail(breaker: CircuitBreaker, times: int, cls: FailureClass = FailureClass.TIMEOUT) -> None:
    for _ in range(times):
        assert breaker.admit(E).allowed
        breaker.record_failure(E, cls)


def test_settings_default_to_the_limits_table() -> None:
    """REQ-RES-004: LIM-B1..B5 are read from the table, not copied."""
    s = CircuitSettings()
    assert (s.failures_to_open, s.first_cooldown_s, s.growth) == (B1, B2, B3)
    assert (s.max_cooldown_s, s.max_retry_after_s, s.probes) == (B3_MAX, B4, limit("LIM-B5"))


def test_req_res_004_opens_after_lim_b1_consecutive_failures(
    breaker: CircuitBreaker, recorder: Recorder
) -> None:
    """REQ-RES-004, REQ-TEST-017: LIM-B1 failures open the circuit; it is then skipped."""
    fail(breaker, B1 - 1)
    assert breaker.state(E) is CircuitState.CLOSED
    fail(breaker, 1)
    assert breaker.state(E) is CircuitState.OPEN
    assert recorder.transitions == [
        Transition(E, CircuitState.CLOSED, CircuitState.OPEN, B2, FailureClass.TIMEOUT)
    ]
    admission = breaker.admit(E)
    assert admission.decision is Decision.SKIP
    assert admission.reason is SkipReason.CIRCUIT_OPEN
    assert admission.retry_in_s == B2


@pytest.mark.parametrize("cls", sorted(OPENING_CLASSES))
def test_req_res_004_every_opening_class_counts(breaker: CircuitBreaker, cls: FailureClass) -> None:
    """REQ-RES-004: timeout, rate_limited, blocked and parse_failure each count."""
    fail(breaker, B1, cls)
    assert breaker.state(E) is CircuitState.OPEN


def test_req_res_004_opening_classes_are_the_four_of_the_spec() -> None:
    """REQ-RES-004 names exactly four classes."""
    assert {c.value for c in OPENING_CLASSES} == {
        "timeout",
        "rate_limited",
        "blocked",
        "parse_failure",
    }


def test_req_res_004_a_success_in_between_resets_the_count(breaker: CircuitBreaker) -> None:
    """REQ-RES-004: the failures must be consecutive."""
    fail(breaker, B1 - 1)
    breaker.record_success(E)
    fail(breaker, B1 - 1)
    assert breaker.state(E) is CircuitState.CLOSED
    fail(breaker, 1)
    assert breaker.state(E) is CircuitState.OPEN


@pytest.mark.parametrize("cls", [FailureClass.AUTH_FAILURE, FailureClass.REQUEST_FAILURE])
def test_req_res_004_neutral_classes_neither_open_nor_reset(
    breaker: CircuitBreaker, cls: FailureClass
) -> None:
    """REQ-RES-004: auth_failure and request_failure do not count, and do not reset the count."""
    fail(breaker, 10 * B1, cls)
    assert breaker.state(E) is CircuitState.CLOSED
    fail(breaker, B1 - 1)
    fail(breaker, 1, cls)
    assert breaker.state(E) is CircuitState.CLOSED
    fail(breaker, 1)
    assert breaker.state(E) is CircuitState.OPEN


def test_circuits_are_per_engine(breaker: CircuitBreaker) -> None:
    """REQ-OBS-001: one health state per engine."""
    fail(breaker, B1)
    assert breaker.state(E) is CircuitState.OPEN
    assert breaker.state("arxiv") is CircuitState.CLOSED
    assert breaker.admit("arxiv").decision is Decision.ALLOW


def test_req_res_005_exactly_one_probe_after_the_cooldown(
    breaker: CircuitBreaker, clock: ManualClock, recorder: Recorder
) -> None:
    """REQ-RES-005, REQ-TEST-017: after the cooldown one real request probes; others skip."""
    fail(breaker, B1)
    clock.advance(B2 - 0.001)
    assert breaker.admit(E).reason is SkipReason.CIRCUIT_OPEN
    clock.advance(0.001)
    assert breaker.state(E) is CircuitState.HALF_OPEN
    assert recorder.last == Transition(E, CircuitState.OPEN, CircuitState.HALF_OPEN)
    probe = breaker.admit(E)
    assert probe.decision is Decision.PROBE and probe.is_probe and probe.allowed
    for _ in range(5):
        other = breaker.admit(E)
        assert other.decision is Decision.SKIP
        assert other.reason is SkipReason.PROBE_IN_FLIGHT
    assert breaker.state(E) is CircuitState.HALF_OPEN


def test_req_res_005_probe_success_closes_and_resets_growth(
    breaker: CircuitBreaker, clock: ManualClock, recorder: Recorder
) -> None:
    """REQ-RES-005: success closes the circuit; the next opening starts again at LIM-B2."""
    fail(breaker, B1)
    clock.advance(B2)
    probe = breaker.admit(E)
    breaker.record_failure(E, FailureClass.TIMEOUT, admission=probe)  # reopen: 2 * B2
    clock.advance(B2 * B3)
    probe = breaker.admit(E)
    breaker.record_success(E, admission=probe)
    assert breaker.state(E) is CircuitState.CLOSED
    assert recorder.last == Transition(E, CircuitState.HALF_OPEN, CircuitState.CLOSED)
    assert breaker.admit(E).decision is Decision.ALLOW
    fail(breaker, B1)
    assert recorder.last.cooldown_s == B2


def test_req_res_005_probe_failure_reopens_longer(
    breaker: CircuitBreaker, clock: ManualClock, recorder: Recorder
) -> None:
    """REQ-RES-005: a failed probe reopens the circuit with the longer cooldown."""
    fail(breaker, B1)
    clock.advance(B2)
    probe = breaker.admit(E)
    breaker.record_failure(E, FailureClass.BLOCKED, admission=probe)
    assert breaker.state(E) is CircuitState.OPEN
    assert recorder.last == Transition(
        E, CircuitState.HALF_OPEN, CircuitState.OPEN, B2 * B3, FailureClass.BLOCKED
    )
    clock.advance(B2 * B3 - 0.001)
    assert breaker.state(E) is CircuitState.OPEN
    clock.advance(0.001)
    assert breaker.state(E) is CircuitState.HALF_OPEN


def test_req_test_017_cooldown_grows_to_the_cap(
    breaker: CircuitBreaker, clock: ManualClock, recorder: Recorder
) -> None:
    """REQ-RES-004, REQ-TEST-017: LIM-B2, times LIM-B3 at each reopening, at most LIM-B3-MAX."""
    fail(breaker, B1)
    cooldowns = [recorder.last.cooldown_s]
    for _ in range(8):
        assert recorder.last.cooldown_s is not None
        clock.advance(recorder.last.cooldown_s)
        probe = breaker.admit(E)
        assert probe.is_probe
        breaker.record_failure(E, FailureClass.TIMEOUT, admission=probe)
        cooldowns.append(recorder.last.cooldown_s)
    expected = [min(B2 * B3**n, B3_MAX) for n in range(9)]
    assert cooldowns == expected
    assert cooldowns[-1] == B3_MAX


def test_req_cmp_002_retry_after_opens_at_once_for_at_least_its_length(
    breaker: CircuitBreaker, clock: ManualClock, recorder: Recorder
) -> None:
    """REQ-CMP-002, REQ-TEST-017: a Retry-After opens at once, for max(cooldown, Retry-After)."""
    breaker.record_failure(E, FailureClass.RATE_LIMITED, retry_after_s=B2 * 4)
    assert breaker.state(E) is CircuitState.OPEN
    assert recorder.last.cooldown_s == B2 * 4
    clock.advance(B2 * 4 - 0.001)
    assert breaker.admit(E).reason is SkipReason.CIRCUIT_OPEN
    clock.advance(0.001)
    assert breaker.admit(E).is_probe


def test_req_test_017_short_retry_after_keeps_the_cooldown(
    breaker: CircuitBreaker, recorder: Recorder
) -> None:
    """REQ-TEST-017: a Retry-After shorter than the cooldown does not shorten it."""
    breaker.record_failure(E, FailureClass.RATE_LIMITED, retry_after_s=1.0)
    assert breaker.state(E) is CircuitState.OPEN
    assert recorder.last.cooldown_s == B2


def test_req_test_017_retry_after_is_capped_at_lim_b4(
    breaker: CircuitBreaker, recorder: Recorder
) -> None:
    """REQ-CMP-002: a Retry-After is honoured up to LIM-B4.

    Proves THR-15.
    """
    breaker.record_failure(E, FailureClass.RATE_LIMITED, retry_after_s=B4 * 100)
    assert recorder.last.cooldown_s == B4


def test_req_test_017_retry_after_extends_an_open_circuit(
    breaker: CircuitBreaker, clock: ManualClock, recorder: Recorder
) -> None:
    """REQ-CMP-002: a late 429 with a longer Retry-After keeps the circuit open that long."""
    fail(breaker, B1)
    breaker.record_failure(E, FailureClass.RATE_LIMITED, retry_after_s=B2 * 3)
    assert len(recorder.transitions) == 1  # still the one opening
    clock.advance(B2)
    assert breaker.state(E) is CircuitState.OPEN
    clock.advance(B2 * 2)
    assert breaker.state(E) is CircuitState.HALF_OPEN


def test_retry_after_ignored_on_other_classes(breaker: CircuitBreaker) -> None:
    """REQ-RES-004: only rate_limited carries a Retry-After worth honouring."""
    breaker.record_failure(E, FailureClass.REQUEST_FAILURE, retry_after_s=100.0)
    assert breaker.state(E) is CircuitState.CLOSED


def test_retry_after_on_a_probe_reopens_longer(
    breaker: CircuitBreaker, clock: ManualClock, recorder: Recorder
) -> None:
    """REQ-RES-005, REQ-CMP-002: a probe answered with 429 + Retry-After reopens at once."""
    fail(breaker, B1)
    clock.advance(B2)
    probe = breaker.admit(E)
    breaker.record_failure(E, FailureClass.RATE_LIMITED, retry_after_s=500.0, admission=probe)
    assert recorder.last.previous is CircuitState.HALF_OPEN
    assert recorder.last.cooldown_s == 500.0


def test_req_res_005_released_probe_frees_the_slot(
    breaker: CircuitBreaker, clock: ManualClock
) -> None:
    """REQ-RES-005: a probe handed back (cancelled call) lets the next request probe."""
    fail(breaker, B1)
    clock.advance(B2)
    probe = breaker.admit(E)
    assert breaker.admit(E).reason is SkipReason.PROBE_IN_FLIGHT
    breaker.release(probe)
    assert breaker.state(E) is CircuitState.HALF_OPEN
    assert breaker.admit(E).is_probe


@pytest.mark.anyio
async def test_req_res_005_cancelled_probe_task_releases(
    breaker: CircuitBreaker, clock: ManualClock
) -> None:
    """REQ-RES-005, REQ-TEST-017: a probe whose task is cancelled does not wedge half_open."""
    fail(breaker, B1)
    clock.advance(B2)
    started = anyio.Event()

    async def call() -> None:
        admission = breaker.admit(E)
        assert admission.is_probe
        try:
            started.set()
            await anyio.sleep_forever()  # the engine request
        finally:
            breaker.release(admission)

    async with anyio.create_task_group() as tg:
        tg.start_soon(call)
        await started.wait()
        assert breaker.admit(E).reason is SkipReason.PROBE_IN_FLIGHT
        tg.cancel_scope.cancel()
    assert breaker.admit(E).is_probe


def test_req_res_005_forgotten_probe_lapses(breaker: CircuitBreaker, clock: ManualClock) -> None:
    """REQ-RES-005: a probe neither recorded nor released lapses after LIM-S7."""
    fail(breaker, B1)
    clock.advance(B2)
    assert breaker.admit(E).is_probe
    clock.advance(LEASE_S - 0.001)
    assert breaker.admit(E).reason is SkipReason.PROBE_IN_FLIGHT
    clock.advance(0.001)
    assert breaker.admit(E).is_probe


def test_neutral_probe_failure_hands_the_slot_back(
    breaker: CircuitBreaker, clock: ManualClock
) -> None:
    """REQ-RES-005: a probe that failed with a neutral class decides nothing."""
    fail(breaker, B1)
    clock.advance(B2)
    probe = breaker.admit(E)
    breaker.record_failure(E, FailureClass.AUTH_FAILURE, admission=probe)
    assert breaker.state(E) is CircuitState.HALF_OPEN
    assert breaker.admit(E).is_probe


def test_late_results_while_open_change_nothing(
    breaker: CircuitBreaker, clock: ManualClock
) -> None:
    """REQ-RES-004: requests admitted before the opening do not shorten the cooldown."""
    fail(breaker, B1)
    breaker.record_success(E)
    breaker.record_failure(E, FailureClass.TIMEOUT)
    assert breaker.state(E) is CircuitState.OPEN
    clock.advance(B2)
    assert breaker.state(E) is CircuitState.HALF_OPEN


def test_release_of_an_ordinary_admission_is_harmless(breaker: CircuitBreaker) -> None:
    """A release in a ``finally`` is safe for every admission."""
    admission = breaker.admit(E)
    breaker.release(admission)
    breaker.release(Admission("unknown", Decision.PROBE, ticket=99))
    assert breaker.state(E) is CircuitState.CLOSED


def test_req_obs_004_states_are_engine_status_values() -> None:
    """REQ-OBS-004, REQ-STATUS-001: circuit states are the values engine_status reports."""
    assert {s.value for s in CircuitState} == {"closed", "open", "half_open"}


def test_unknown_engine_reads_closed_and_creates_no_state(breaker: CircuitBreaker) -> None:
    """Reading a state never allocates: engine_status may ask about any configured engine."""
    assert breaker.state("never-used") is CircuitState.CLOSED
    assert breaker._circuits == {}


def test_invalid_settings_are_refused() -> None:
    """A circuit that would cool down less after a failure is a configuration error."""
    with pytest.raises(ValueError):
        CircuitSettings(growth=0.5)
    with pytest.raises(ValueError):
        CircuitSettings(first_cooldown_s=1000.0, max_cooldown_s=10.0)
    with pytest.raises(ValueError):
        CircuitSettings(failures_to_open=0)
