"""The SearXNG driver's operator hint: a 403 names JSON output, a 401 does not (issue 7).

The hint is picked from the status alone; the failure still carries its class and nothing of
the provider (REQ-ENG-006). Spec README section 3 (SearXNG engine type).
"""

from __future__ import annotations

from rypsok.contract.vocabulary import FailureClass, OperatorHint
from rypsok.engines import searxng
from tests.engines.helpers_a import HTML, expect_failure, fixture, respond

ENGINE = "searxng"


def test_req_eng_006_searxng_403_carries_the_json_output_hint() -> None:
    """REQ-ENG-006: SearXNG's own 403 page (search.formats lacks json) is auth_failure with
    the fixed hint json_output_disabled; str, repr and args still hold the class only."""
    response = respond(fixture(ENGINE, "forbidden.html"), 403, HTML)
    failure = expect_failure(searxng.parse, response, FailureClass.AUTH_FAILURE)
    assert failure.hint is OperatorHint.JSON_OUTPUT_DISABLED
    assert "SEARXNG-PROVIDER-TEXT" not in repr(failure) + str(vars(failure))


def test_req_eng_006_searxng_json_403_carries_the_json_output_hint() -> None:
    """REQ-ENG-006: a 403 with a JSON body (a proxy's) gets the same hint: the status decides,
    never the body."""
    response = respond(b'{"message": "SEARXNG-PROVIDER-TEXT forbidden"}', 403)
    failure = expect_failure(searxng.parse, response, FailureClass.AUTH_FAILURE)
    assert failure.hint is OperatorHint.JSON_OUTPUT_DISABLED


def test_req_eng_006_searxng_401_has_no_driver_hint() -> None:
    """REQ-ENG-006: a 401 is the credential's, which the pipeline names from the
    configuration; the driver adds nothing."""
    response = respond(b"SEARXNG-PROVIDER-TEXT", 401, HTML)
    failure = expect_failure(searxng.parse, response, FailureClass.AUTH_FAILURE)
    assert failure.hint is None


def test_req_eng_009_searxng_challenge_403_is_blocked_without_hint() -> None:
    """REQ-ENG-009: an anti-bot page served with 403 stays blocked, with no JSON hint."""
    response = respond(fixture(ENGINE, "challenge.html"), 403, HTML)
    failure = expect_failure(searxng.parse, response, FailureClass.BLOCKED)
    assert failure.hint is None
