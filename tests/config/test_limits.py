"""The limits table is the one source of every default (REQ-CFG-003)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from rypsok.config.limits import LIMITS, limit
from rypsok.config.schema import Settings
from rypsok.contract.errors import MESSAGE_MAX_CHARS

ROOT = Path(__file__).resolve().parents[2]


def test_req_cfg_003_defaults_equal_the_limits_table() -> None:
    """REQ-CFG-003: every default of the configuration is the value of the limits table."""
    s = Settings()
    pairs = {
        "LIM-S1": s.search.query_max_chars,
        "LIM-S2": s.search.max_results_default,
        "LIM-S2-MAX": s.search.max_results_ceiling,
        "LIM-S3": s.search.results_per_engine,
        "LIM-S4": s.search.deadline_ms,
        "LIM-S5": s.search.engine_timeout_ms,
        "LIM-S6": s.search.reserve_ms,
        "LIM-S7": s.search.ceiling_ms,
        "LIM-S8": s.search.engines_per_search,
        "LIM-S9": s.search.title_max_chars,
        "LIM-S10": s.search.snippet_max_chars,
        "LIM-S12": s.search.connect_timeout_ms,
        "LIM-C1": s.search.requests_in_flight,
        "LIM-C3": s.fetch.fetches_in_flight,
        "LIM-C4": s.fetch.fetches_per_host,
        "LIM-C5": s.fetch.workers,
        "LIM-C6": s.service.calls_per_minute_web_search,
        "LIM-C7": s.service.calls_per_minute_web_fetch,
        "LIM-C8": s.service.calls_per_minute_engine_status,
        "LIM-F1": s.fetch.max_chars_default,
        "LIM-F2": s.fetch.max_chars_ceiling,
        "LIM-F3": s.fetch.max_body_bytes,
        "LIM-F4": s.fetch.total_timeout_ms,
        "LIM-F5": s.fetch.ceiling_ms,
        "LIM-F6": s.fetch.connect_timeout_ms,
        "LIM-F7": s.fetch.max_redirects,
        "LIM-H5": s.http.request_ceiling_ms,
        "LIM-H6": s.http.max_sessions,
    }
    for limit_id, value in pairs.items():
        assert value == limit(limit_id), limit_id
    assert s.privacy.credential_check == LIMITS["LIM-P1"].value
    assert s.service.log_queries is False  # LIM-P3: off
    assert limit("LIM-I4") == MESSAGE_MAX_CHARS


def test_req_cfg_003_search_deadlines_are_consistent() -> None:
    """REQ-AGG-003: LIM-S5 + LIM-S6 <= LIM-S4 <= LIM-S7 in the table itself."""
    assert limit("LIM-S5") + limit("LIM-S6") <= limit("LIM-S4") <= limit("LIM-S7")


def test_generated_reference_pages_are_current() -> None:
    """docs/limits.md and docs/configuration.md are generated from the code and up to date."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen_docs.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
