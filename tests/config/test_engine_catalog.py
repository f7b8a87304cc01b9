"""Which engines run, from the registry and the configuration (REQ-ENG-003/004/013, REQ-OPS-003)."""

from __future__ import annotations

from typing import Any

import pytest

from rypsok.config.load import parse_settings
from rypsok.engines.catalog import EngineConfigError, resolve_engines


def engines(data: dict[str, Any]) -> dict[str, Any]:
    return {e.engine_id: e for e in resolve_engines(parse_settings({"schema_version": 1, **data}))}


def test_req_eng_013_scraping_driver_refused_without_the_switch() -> None:
    """REQ-ENG-013: a scraping driver is refused at validation unless [scraping] enabled = true;
    the message names the engine, the type and the operator's responsibility; it is never part
    of the zero-configuration set."""
    assert engines({})["duckduckgo"].active is False
    with pytest.raises(EngineConfigError) as caught:
        engines({"engines": {"duckduckgo": {"enabled": True}}})
    message = str(caught.value)
    assert "duckduckgo" in message and "scraping" in message and "responsibility" in message
    allowed = engines({"engines": {"duckduckgo": {"enabled": True}}, "scraping": {"enabled": True}})
    assert allowed["duckduckgo"].active is True


def test_req_ops_003_keyed_engines_inactive_without_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """REQ-OPS-003, REQ-CFG-004: an engine whose key is missing is inactive with a reason that
    names the key to set; with the key by reference it becomes active."""
    zero = engines({})
    assert zero["openalex"].active is False
    assert "engines.openalex.api_key_env" in (zero["openalex"].inactive_reason or "")
    assert all(zero[e].active for e in ("wikipedia", "hackernews", "arxiv", "github"))
    monkeypatch.setenv("RYPSOK_TEST_OPENALEX", "k")
    keyed = engines({"engines": {"openalex": {"api_key_env": "RYPSOK_TEST_OPENALEX"}}})
    assert keyed["openalex"].active is True
    assert keyed["openalex"].credential is not None
    assert "k" not in repr(keyed["openalex"].credential)


def test_req_eng_003_self_hosted_engine_needs_its_endpoint() -> None:
    """REQ-ENG-003: the SearXNG engine type is off by default and refuses to be enabled
    without the operator's instance URL."""
    assert engines({})["searxng"].active is False
    with pytest.raises(EngineConfigError, match=r"engines\.searxng\.endpoint"):
        engines({"engines": {"searxng": {"enabled": True}}})
    own = engines(
        {"engines": {"searxng": {"enabled": True, "endpoint": "http://127.0.0.1:8888/search"}}}
    )
    assert own["searxng"].active and own["searxng"].explicit_endpoint
