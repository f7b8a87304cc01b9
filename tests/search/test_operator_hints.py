"""Operator hints of failed engines through whole web_search calls (issue 7, keyed engines).

A keyed engine refused with 401 tells the operator which key setting to check, in the notice
and in a warning log line; a SearXNG instance answering 403 says how to enable JSON output. The
hints are rypsok's fixed sentences: no provider text and no key value reach the caller or the
log. Real drivers and egress, simulated engines on loopback, as in test_pipeline.py.
REQ-ENG-006, REQ-SEC-016, REQ-OBS-005; spec README section 3 (SearXNG engine type).
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from rypsok.app import runtime
from rypsok.config.limits import limit
from rypsok.config.load import parse_settings
from rypsok.contract.notices import notice
from rypsok.contract.vocabulary import FailureClass, NoticeCode, OperatorHint
from rypsok.engines.registry import DRIVER_MODULES
from rypsok.services.calls import Services
from tests.fakes.http_server import FakeHTTPServer, Reply, fake_http_server
from tests.search.test_pipeline import LogCapture, fixture, json_reply, search

pytestmark = pytest.mark.anyio

BRAVE = "/brave/web"
SEARXNG = "/searxng/search"
WIKIPEDIA = "/wp/{language}/api.php"
KEY_VALUE = "brave-handwritten-key-value-0000"
TOKEN_VALUE = "searxng-proxy-handwritten-token-0000"
HTML = (("Content-Type", "text/html; charset=utf-8"),)

KEY_SENTENCE = "The operator should check the key that {setting} refers to."
JSON_SENTENCE = (
    "The instance may have JSON output disabled: the operator should add json to "
    "search.formats in its settings.yml."
)


@asynccontextmanager
async def services_for(
    server: FakeHTTPServer, engines: dict[str, str], **entries: dict[str, Any]
) -> AsyncIterator[tuple[Services, LogCapture]]:
    """The service with only ``engines`` (id -> path on ``server``) on, plus entry settings."""
    config: dict[str, Any] = {e: {"enabled": False} for e in DRIVER_MODULES}
    for engine, path in engines.items():
        config[engine] = {"enabled": True, "endpoint": server.url(path), **entries.get(engine, {})}
    settings = parse_settings(
        {"schema_version": 1, "engines": config, "service": {"contact": "ops@example.org"}}
    )
    logger = logging.getLogger(f"rypsok.test.hints.{id(server)}")
    logger.setLevel(logging.DEBUG)
    logger.handlers[:] = []
    capture = LogCapture()
    logger.addHandler(capture)
    async with runtime(settings, logger) as services:
        yield services, capture


def failed_notice(data: dict[str, Any], engine: str) -> dict[str, Any]:
    return next(
        n for n in data["notices"] if n["code"] == "engine_failed" and n["engine"] == engine
    )


def failed_lines(logs: LogCapture, engine: str) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in logs.lines]
    return [x for x in lines if x["event"] == "engine_failed" and x["engine"] == engine]


# --- a keyed engine refused: which key setting to check -------------------------------------


@pytest.mark.parametrize("reference", ["api_key_env", "api_key_file"])
async def test_req_eng_006_keyed_engine_401_names_the_key_setting_in_notice_and_log(
    reference: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """REQ-ENG-006, REQ-OBS-005 (issue 7: "its message tells the operator which key to
    check"): Brave answering 401 is auth_failure; the engine_failed notice ends with the fixed
    sentence naming the reference in use, and the engine_failed log line is a warning whose
    hint names it too. The provider's words, the key and where it is kept appear in neither."""
    monkeypatch.setenv("RYPSOK_TEST_BRAVE_KEY", KEY_VALUE)
    key_file = tmp_path / "brave.key"
    key_file.write_text(KEY_VALUE + "\n", encoding="utf-8")
    entry = (
        {"api_key_env": "RYPSOK_TEST_BRAVE_KEY"}
        if reference == "api_key_env"
        else {"api_key_file": str(key_file)}
    )
    with fake_http_server() as server:
        server.replies[BRAVE] = json_reply("brave", "unauthorized.json", status=401)
        server.replies[SEARXNG] = json_reply("searxng")
        async with services_for(server, {"brave": BRAVE, "searxng": SEARXNG}, brave=entry) as (
            services,
            logs,
        ):
            data = await search(services, query="rust async runtime")
    assert server.requests[0].headers.get("x-subscription-token") == KEY_VALUE  # key was sent
    assert data["outcome"] == "partial" and data["results"]
    setting = f"[engines.brave] {reference}"
    assert failed_notice(data, "brave")["message"] == (
        "Engine brave failed (auth_failure); its results are missing. "
        + KEY_SENTENCE.format(setting=setting)
    )
    [line] = failed_lines(logs, "brave")
    assert (line["level"], line["failure"]) == ("warning", "auth_failure")
    assert line["hint"] == KEY_SENTENCE.format(setting=setting)
    shown = json.dumps(data)
    logged = "\n".join(logs.lines)
    for secret in (KEY_VALUE, "BRAVE-AUTH-MARKER", "Missing subscription token", "UNAUTHORIZED"):
        assert secret not in shown and secret not in logged, secret
    # Where the key is kept is the operator's business, not the caller's.
    assert "RYPSOK_TEST_BRAVE_KEY" not in shown and str(tmp_path) not in shown


async def test_req_eng_006_keyless_engine_401_has_no_key_hint() -> None:
    """REQ-ENG-006: an engine that takes no key (Wikipedia) refused with 401 is auth_failure
    with the plain notice and an info log line: there is no key setting to point at."""
    with fake_http_server() as server:
        server.replies["/wp/en/api.php"] = Reply(status=401, body=b'{"error": "WP-TEXT"}')
        server.replies[SEARXNG] = json_reply("searxng")
        async with services_for(server, {"wikipedia": WIKIPEDIA, "searxng": SEARXNG}) as (
            services,
            logs,
        ):
            data = await search(services, query="rust async runtime")
    assert failed_notice(data, "wikipedia")["message"] == (
        "Engine wikipedia failed (auth_failure); its results are missing."
    )
    [line] = failed_lines(logs, "wikipedia")
    assert (line["level"], line["failure"], line["hint"]) == ("info", "auth_failure", None)


# --- SearXNG: 403 is JSON output disabled, 401 is the credential ----------------------------


async def test_req_eng_006_searxng_403_without_credential_says_how_to_enable_json() -> None:
    """Spec README section 3, issue 7 ("a 403 because JSON output is disabled on the instance
    gets a message that says how to enable it"), REQ-ENG-006: SearXNG's own 403 page gives
    auth_failure whose notice and warning log line say to add json to search.formats in the
    instance's settings.yml; with no credential configured the key is not blamed, and none of
    the page's text appears."""
    with fake_http_server() as server:
        server.replies[SEARXNG] = Reply(
            status=403, body=fixture("searxng", "forbidden.html"), headers=HTML
        )
        server.replies["/wp/en/api.php"] = json_reply("wikipedia")
        async with services_for(server, {"searxng": SEARXNG, "wikipedia": WIKIPEDIA}) as (
            services,
            logs,
        ):
            data = await search(services, query="rust async runtime")
    assert data["outcome"] == "partial" and data["results"]
    assert failed_notice(data, "searxng")["message"] == (
        "Engine searxng failed (auth_failure); its results are missing. " + JSON_SENTENCE
    )
    [line] = failed_lines(logs, "searxng")
    assert (line["level"], line["hint"]) == ("warning", JSON_SENTENCE)
    everything = json.dumps(data) + "\n".join(logs.lines)
    assert "SEARXNG-PROVIDER-TEXT" not in everything and "permission" not in everything


async def test_req_eng_006_searxng_403_with_credential_names_json_and_the_credential() -> None:
    """Spec README section 3, REQ-ENG-006: with a credential configured, a 403 may also be an
    authenticating proxy refusing it, so the JSON sentence is followed by the key sentence
    naming [engines.searxng] api_key_env; the token itself appears nowhere."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RYPSOK_TEST_SEARXNG_TOKEN", TOKEN_VALUE)
        with fake_http_server() as server:
            server.replies[SEARXNG] = Reply(
                status=403, body=fixture("searxng", "forbidden.html"), headers=HTML
            )
            server.replies["/wp/en/api.php"] = json_reply("wikipedia")
            async with services_for(
                server,
                {"searxng": SEARXNG, "wikipedia": WIKIPEDIA},
                searxng={"api_key_env": "RYPSOK_TEST_SEARXNG_TOKEN"},
            ) as (services, logs):
                data = await search(services, query="rust async runtime")
    sent = next(r for r in server.requests if r.path == SEARXNG)
    assert sent.headers["authorization"] == f"Bearer {TOKEN_VALUE}"
    both = JSON_SENTENCE + " " + KEY_SENTENCE.format(setting="[engines.searxng] api_key_env")
    message = failed_notice(data, "searxng")["message"]
    assert message == "Engine searxng failed (auth_failure); its results are missing. " + both
    assert len(message) <= limit("LIM-I4")
    [line] = failed_lines(logs, "searxng")
    assert (line["level"], line["hint"]) == ("warning", both)
    everything = json.dumps(data) + "\n".join(logs.lines)
    assert TOKEN_VALUE not in everything and "SEARXNG-PROVIDER-TEXT" not in everything


async def test_req_eng_006_searxng_401_points_at_the_credential_only() -> None:
    """Spec README section 3, REQ-ENG-006: a 401 is only ever the credential: the key sentence
    alone, naming both references when neither is configured (either would be read)."""
    with fake_http_server() as server:
        server.replies[SEARXNG] = Reply(status=401, body=b"SEARXNG-PROVIDER-TEXT", headers=HTML)
        server.replies["/wp/en/api.php"] = json_reply("wikipedia")
        async with services_for(server, {"searxng": SEARXNG, "wikipedia": WIKIPEDIA}) as (
            services,
            logs,
        ):
            data = await search(services, query="rust async runtime")
    key = KEY_SENTENCE.format(setting="[engines.searxng] api_key_env or api_key_file")
    assert failed_notice(data, "searxng")["message"].endswith(" " + key)
    assert "JSON" not in failed_notice(data, "searxng")["message"]
    [line] = failed_lines(logs, "searxng")
    assert (line["level"], line["hint"]) == ("warning", key)
    assert "SEARXNG-PROVIDER-TEXT" not in json.dumps(data) + "\n".join(logs.lines)


def test_req_eng_006_longest_hinted_notice_stays_within_lim_i4() -> None:
    """LIM-I4: the longest engine identifier with both hints and the longest setting still
    gives a notice message within the bound."""
    longest = max(DRIVER_MODULES, key=len)
    message = notice(
        NoticeCode.ENGINE_FAILED,
        engine=longest,
        failure=FailureClass.REQUEST_FAILURE,  # the longest class name
        hints=(OperatorHint.JSON_OUTPUT_DISABLED, OperatorHint.CHECK_KEY),
        setting=f"[engines.{longest}] api_key_env or api_key_file",
    ).message
    assert len(message) <= limit("LIM-I4"), len(message)
