"""What the call runner counts and logs (REQ-OBS-002/003/005/007, REQ-PRIV-004)."""

from __future__ import annotations

import json
import logging

import pytest

from rypsok.app import runtime
from rypsok.config.load import parse_settings
from rypsok.health.metrics import Metrics
from tests.service._fetch_support import Lines

pytestmark = pytest.mark.anyio


async def test_req_obs_007_refused_calls_counted_per_tool_and_reason() -> None:
    """REQ-OBS-007, REQ-OBS-003, REQ-OBS-005: a refused call is counted by tool and reason,
    every call by tool and outcome, and each call leaves one structured log line with its
    request id, tool, outcome, reason and duration, and no argument text."""
    metrics = Metrics()
    lines = Lines()
    logger = logging.getLogger("rypsok.test.observability")
    logger.setLevel(logging.INFO)
    logger.addHandler(lines)
    settings = parse_settings({"schema_version": 1})
    async with runtime(settings, logger, metrics=metrics) as services:
        await services.call("web_search", {"query": "secret words", "max_results": 99})
        await services.call("web_search", {"query": ""})
        await services.call("engine_status", {})
    text = metrics.render_prometheus()
    refused = [
        line for line in text.splitlines() if "refused" in line and "invalid_argument" in line
    ]
    assert refused and refused[0].endswith(" 2")
    calls = [line for line in lines.lines if line["event"] == "call"]
    assert [c["tool"] for c in calls] == ["web_search", "web_search", "engine_status"]
    assert calls[0]["outcome"] == "error" and calls[0]["reason"] == "invalid_argument"
    assert calls[2]["outcome"] == "ok" and isinstance(calls[2]["duration_ms"], float)
    assert all(len(c["request_id"]) == 16 for c in calls)
    assert "secret words" not in json.dumps(lines.lines)


async def test_req_priv_004_query_logging_only_by_explicit_choice() -> None:
    """REQ-PRIV-004, REQ-TEST-008, LIM-P3: query text is logged only when the operator set
    service.log_queries and the level is debug; a credential in it is masked even then."""
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    outputs = {}
    for chosen in (False, True):
        lines = Lines()
        logger = logging.getLogger(f"rypsok.test.querylog.{chosen}")
        logger.setLevel(logging.DEBUG)
        logger.addHandler(lines)
        settings = parse_settings(
            {
                "schema_version": 1,
                "service": {"log_queries": chosen},
                "privacy": {"credential_check": "off"},
            }
        )
        async with runtime(settings, logger) as services:
            await services.call("web_search", {"query": f"tide tables {token}", "max_results": 0})
        outputs[chosen] = json.dumps(lines.lines)
    assert "tide tables" not in outputs[False]
    assert "tide tables" in outputs[True]
    assert token not in outputs[True] and "[REDACTED]" in outputs[True]
