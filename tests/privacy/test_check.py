"""The modes of the credential check (REQ-PRIV-002, REQ-TEST-008, LIM-P1).

The check decides and the caller acts; these tests hold the decision for each mode, and
that the credential's value never shows in a repr, an exception or a log record.
"""

from __future__ import annotations

import logging

import pytest

from rypsok.config.limits import LIMITS
from rypsok.privacy import (
    REDACTED,
    CredentialAction,
    CredentialCheck,
    CredentialMatch,
    CredentialMode,
    find_credentials,
    mask,
    redact,
)

from .samples import sample

KIND, SECRET = sample("github_token")
QUERY = f"why is {SECRET} rejected"
CLEAN_QUERY = "why is my token rejected"


def test_req_test_008_default_mode_is_the_limits_table_value() -> None:
    """REQ-TEST-008, LIM-P1: without configuration the check denies."""
    assert CredentialCheck().mode == LIMITS["LIM-P1"].value == CredentialMode.DENY


def test_req_test_008_deny_refuses_and_sends_nothing() -> None:
    """REQ-TEST-008, REQ-PRIV-002: deny names kind and position and offers no text to send.

    Proves THR-04.
    """
    verdict = CredentialCheck(CredentialMode.DENY).apply(QUERY)
    assert verdict.action is CredentialAction.DENY
    assert verdict.text is None
    assert verdict.first == CredentialMatch(KIND, 7, 7 + len(SECRET))


def test_req_test_008_warn_sends_the_text_as_given() -> None:
    """REQ-TEST-008: warn lets the call proceed unchanged; the caller adds a notice."""
    verdict = CredentialCheck(CredentialMode.WARN).apply(QUERY)
    assert verdict.action is CredentialAction.WARN
    assert verdict.text == QUERY
    assert verdict.first is not None
    assert verdict.first.kind == KIND


def test_req_test_008_mask_sends_the_masked_text() -> None:
    """REQ-TEST-008: mask replaces the credential before any request."""
    verdict = CredentialCheck(CredentialMode.MASK).apply(QUERY)
    assert verdict.action is CredentialAction.MASK
    assert verdict.text == f"why is {REDACTED} rejected"
    assert verdict.first is not None
    assert verdict.first.start == 7


def test_req_test_008_off_does_not_check_at_all() -> None:
    """REQ-TEST-008: off proceeds with the text as given and reports nothing."""
    verdict = CredentialCheck(CredentialMode.OFF).apply(QUERY)
    assert verdict.action is CredentialAction.PROCEED
    assert verdict.text == QUERY
    assert verdict.matches == ()


@pytest.mark.parametrize("mode", list(CredentialMode))
def test_req_test_008_a_clean_query_proceeds_in_every_mode(mode: CredentialMode) -> None:
    """REQ-TEST-008: without a credential every mode proceeds with the text unchanged."""
    verdict = CredentialCheck(mode).apply(CLEAN_QUERY)
    assert verdict.action is CredentialAction.PROCEED
    assert verdict.text == CLEAN_QUERY
    assert verdict.first is None


@pytest.mark.parametrize("mode", ["deny", "warn", "mask", "off"])
def test_req_test_008_modes_accept_the_configuration_strings(mode: str) -> None:
    """LIM-P1: the configuration's literal values name the modes."""
    assert CredentialCheck(CredentialMode(mode)).mode.value == mode


@pytest.mark.parametrize("mode", list(CredentialMode))
def test_req_priv_002_the_value_never_appears_in_a_repr(mode: CredentialMode) -> None:
    """REQ-PRIV-002: verdicts and matches print kind and position, never the credential.

    Proves THR-04.
    """
    verdict = CredentialCheck(mode).apply(QUERY)
    assert SECRET not in repr(verdict)
    assert SECRET not in str(verdict)
    assert all(SECRET not in repr(match) for match in verdict.matches)


def test_req_priv_002_the_value_never_appears_in_an_exception() -> None:
    """REQ-PRIV-002: a bad span is refused with positions only."""
    with pytest.raises(ValueError) as refused:
        mask(QUERY, [CredentialMatch(KIND, 7, len(QUERY) + 5)])
    assert SECRET not in str(refused.value)
    assert QUERY not in str(refused.value)


def test_req_test_008_no_query_reaches_the_logs(caplog: pytest.LogCaptureFixture) -> None:
    """REQ-TEST-008, REQ-PRIV-004: checking, finding and masking log nothing of the query,
    at any level.

    Proves THR-34.
    """
    with caplog.at_level(logging.DEBUG):
        for mode in CredentialMode:
            CredentialCheck(mode).apply(QUERY)
        mask(QUERY, find_credentials(QUERY))
    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert SECRET not in logged
    assert "rejected" not in logged


def test_req_priv_002_overlapping_formats_are_masked_as_one_span() -> None:
    """REQ-PRIV-002: a private-key block whose bounded match ends inside a JWT and the JWT
    become one match, so masking leaves no tail of the JWT behind (SEC-13, found by fuzzing).

    Proves THR-04.
    """
    jwt = (
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
        "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
    )
    block = "-----BEGIN PRIVATE KEY-----" + "A" * 40 + "=" + jwt
    found = find_credentials(block)
    assert [(m.start, m.end) for m in found] == [(0, len(block))]
    assert mask(block, found) == REDACTED


def test_req_priv_002_mask_mode_re_checks_until_no_credential_is_left() -> None:
    """REQ-PRIV-002: masking shortens the text, which can bring a base64 run into reach of the
    private-key pattern's bounded gap; the mask mode checks again until nothing is found, so
    what is sent holds no credential (SEC-13, found by fuzzing).

    Proves THR-04.
    """
    header = "-----BEGIN PRIVATE KEY-----"
    jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0"
    # The gap to the base64 run is too long for the block pattern until the JWTs are masked.
    text = header + " " + (jwt + ". ") * 6 + " " * 20 + "Q" * 48
    once = mask(text, find_credentials(text))
    assert find_credentials(once), "the case needs a second round to mean anything"
    verdict = CredentialCheck(CredentialMode.MASK).apply(text)
    assert verdict.text is not None
    assert not find_credentials(verdict.text)
    assert redact(text) == verdict.text


def test_req_priv_002_redaction_gives_up_safely_after_its_rounds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """REQ-PRIV-002: when the rounds run out, a text still holding a credential is redacted
    whole, and a text that is clean by then is returned as masked (SEC-13).

    Proves THR-04.
    """
    import rypsok.privacy.detect as detect

    monkeypatch.setattr(detect, "_MAX_MASKING_ROUNDS", 1)
    header = "-----BEGIN PRIVATE KEY-----"
    jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0"
    two_rounds = header + " " + (jwt + ". ") * 6 + " " * 20 + "Q" * 48
    assert redact(two_rounds) == REDACTED
    assert redact(QUERY) == f"why is {REDACTED} rejected"
    assert redact(CLEAN_QUERY) == CLEAN_QUERY
