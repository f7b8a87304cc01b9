"""What the call runner counts and logs (REQ-OBS-002/003/005/007, REQ-PRIV-004)."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from rypsok.app import runtime
from rypsok.config.load import parse_settings
from rypsok.health.metrics import Metrics
from rypsok.logs import JsonLineFormatter

pytestmark = pytest.mark.anyio


class Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[dict[str, Any]] = []
        self.setFormatter(JsonLineFormatter())

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(json.loads(self.format(record)))


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
