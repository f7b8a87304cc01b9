"""Regression tests of review findings fixed without a test of their own (docs/security.md).

SEC-06: a cross-host redirect whose URL, as rypsok would return it, is longer than LIM-F9 is
refused instead of being returned cut. SEC-07: the refusal of a value outside a choice lists at
most ten valid values in its message (LIM-I4), and every one of them in ``detail``.
"""

from __future__ import annotations

import json

import pytest

from rypsok.app import contract_settings
from rypsok.config.load import parse_settings
from rypsok.config.schema import Settings
from rypsok.contract.arguments import parse_search
from rypsok.contract.errors import MESSAGE_MAX_CHARS, ToolFailure
from rypsok.engines.catalog import resolve_engines
from rypsok.fetch.retrieve import URL_MAX_CHARS
from tests.fakes.http_server import Reply, fake_http_server
from tests.search.test_pipeline import search, search_services
from tests.service.test_web_fetch import ARTICLE, HTML, fetch, fetch_services

# 50 languages (the most [service] languages admits), 8 characters each: listed in full, the
# message would be about 540 characters, beyond LIM-I4.
LANGUAGES = [f"{a}{b}{c}-Xyzw" for a in "abcde" for b in "fghij" for c in "kl"]


@pytest.mark.anyio
@pytest.mark.req("REQ-SEC-001", "REQ-FETCH-006")
async def test_thr17_sec06_cross_host_redirect_beyond_lim_f9_is_refused_not_cut() -> None:
    """SEC-06: a Location within LIM-F9 as sent whose URL as rypsok returns it (the fragment
    percent-encoded) exceeds LIM-F9 ends ``denied`` / ``egress_policy`` with no location, rather
    than a cut URL the site never gave. The same redirect with a short fragment is returned
    whole as ``redirected``, so the bound, not the fragment, decides.

    Proves THR-17.
    """
    long_fragment = "\u00e9" * 700  # 700 characters sent, 4200 once percent-encoded
    with fake_http_server() as server:
        away = f"http://127.0.0.2:{server.port}/tides#"
        server.replies["/long"] = Reply(status=302, headers=(("Location", away + long_fragment),))
        server.replies["/short"] = Reply(status=302, headers=(("Location", away + "\u00e9" * 10),))
        server.replies["/tides"] = Reply(body=ARTICLE, headers=HTML)
        async with fetch_services(server) as services:
            long = await fetch(services, url=server.url("/long"))
            short = await fetch(services, url=server.url("/short"))
    assert len(away + long_fragment) < URL_MAX_CHARS < len(away) + 6 * len(long_fragment)
    assert (long["error"]["kind"], long["error"]["reason"]) == ("denied", "egress_policy")
    assert "longer than rypsok returns" in long["error"]["message"]
    assert "location" not in long["error"]["detail"]
    assert "127.0.0.2" not in json.dumps(long)
    assert short["error"]["kind"] == "redirected"
    assert short["error"]["detail"]["location"] == away + "%C3%A9" * 10


def _many_languages() -> Settings:
    return parse_settings(
        {
            "schema_version": 1,
            "service": {"languages": LANGUAGES, "default_language": LANGUAGES[0]},
        }
    )


@pytest.mark.req("REQ-ERR-002", "REQ-MCP-004")
def test_thr01_sec07_choice_refusal_lists_at_most_ten_values() -> None:
    """SEC-07: with 50 configured languages, an unknown language is an ``invalid_request`` whose
    message names ten of them and how many more, within LIM-I4; ``detail.valid_values`` holds
    all 50. Before the fix the message outgrew LIM-I4 and the refusal became an internal error.

    Proves THR-01.
    """
    settings = _many_languages()
    contract = contract_settings(settings, resolve_engines(settings))
    with pytest.raises(ToolFailure) as refused:
        parse_search({"query": "rust", "language": "zz"}, contract)
    body = refused.value.body
    assert (body.kind.value, body.reason.value) == ("invalid_request", "invalid_argument")
    assert len(body.message) <= MESSAGE_MAX_CHARS
    assert sum(code in body.message for code in LANGUAGES) == 10
    assert "and 40 more (see detail)" in body.message
    assert body.detail.valid_values == LANGUAGES
    assert len(", ".join(LANGUAGES)) > MESSAGE_MAX_CHARS  # the full list would not fit


@pytest.mark.anyio
@pytest.mark.req("REQ-ERR-002", "REQ-SEARCH-004")
async def test_thr01_sec07_the_caller_gets_invalid_request_not_internal() -> None:
    """SEC-07, end to end: web_search with an unknown language under 50 configured languages
    answers ``invalid_request`` listing at most ten values, never ``unavailable/internal``.

    Proves THR-01.
    """
    with fake_http_server() as server:
        languages = {"languages": LANGUAGES, "default_language": LANGUAGES[0]}
        async with search_services(server, ["hackernews"], service=languages) as (services, _):
            data = await search(services, query="rust", language="zz")
    assert data["error"]["kind"] == "invalid_request"
    assert sum(code in data["error"]["message"] for code in LANGUAGES) <= 10
    assert data["error"]["detail"]["valid_values"] == LANGUAGES
    assert not server.requests
