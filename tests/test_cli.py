"""The command line (REQ-OPS-001, REQ-OPS-003, REQ-CFG-003)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from rypsok import __version__
from tests.support import server_env, write_config


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rypsok", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=server_env(env),
        check=False,
    )


def test_req_ops_001_version() -> None:
    """REQ-OPS-001: --version prints the version and exits 0."""
    done = run("--version")
    assert done.returncode == 0 and done.stdout.strip() == f"rypsok {__version__}"


def test_req_ops_001_usage_errors_exit_2() -> None:
    """REQ-OPS-001: usage errors exit with code 2."""
    assert run().returncode == 2
    assert run("launch").returncode == 2
    assert run("serve", "--transport", "carrier-pigeon").returncode == 2


def test_req_ops_001_configuration_errors_exit_1(tmp_path: Path) -> None:
    """REQ-OPS-001, REQ-CFG-005, REQ-ENG-004: configuration errors (an unknown key, an engine
    identifier with no driver) exit with code 1 and name the key."""
    bad = write_config(tmp_path, "[search]\nmax_resluts_default = 3\n")
    for command in ("check", "serve"):
        done = run(command, "--config", str(bad))
        assert done.returncode == 1, command
        assert "search.max_resluts_default" in done.stderr
        assert done.stdout == ""
    unknown_engine = write_config(tmp_path, "[engines.altavista]\nenabled = true\n")
    done = run("check", "--config", str(unknown_engine))
    assert done.returncode == 1 and "engines.altavista" in done.stderr


def test_req_cfg_003_check_with_zero_configuration() -> None:
    """REQ-CFG-003, REQ-OPS-003: with no file, check reports defaults and keyless engines."""
    done = run("check")
    assert done.returncode == 0, done.stderr
    assert "zero configuration" in done.stdout
    for engine in ("wikipedia", "hackernews", "arxiv", "github"):
        assert engine in done.stdout


def test_req_eng_003_check_names_inactive_engines(tmp_path: Path) -> None:
    """REQ-ENG-003, REQ-OPS-003: an engine switched off is reported inactive with the reason."""
    config = write_config(tmp_path, "[engines.gdelt]\nenabled = false\n")
    done = run("check", "--config", str(config))
    assert done.returncode == 0
    gdelt = next(line for line in done.stdout.splitlines() if line.strip().startswith("gdelt"))
    assert "inactive (disabled by configuration)" in gdelt


def test_req_sec_018_check_runs_the_http_start_up_checks(tmp_path: Path) -> None:
    """REQ-SEC-018, REQ-OPS-003: ``check --transport http`` refuses what ``serve`` would refuse
    (an unauthenticated non-loopback bind, a caller whose token is unset) before a deployment,
    and accepts a protected listener."""
    exposed = write_config(tmp_path, '[http]\nbind = "192.0.2.10"\n')
    done = run("check", "--transport", "http", "--config", str(exposed))
    assert done.returncode == 1 and "authentication is required" in done.stderr
    assert run("check", "--config", str(exposed)).returncode == 0  # stdio does not listen

    callers = (
        '[http]\nbind = "192.0.2.10"\n[[http.callers]]\nname = "agent"\n'
        'token_env = "RYPSOK_TEST_CHECK_TOKEN"\n'
    )
    protected = write_config(tmp_path, callers)
    unset = run("check", "--transport", "http", "--config", str(protected))
    assert unset.returncode == 1 and "RYPSOK_TEST_CHECK_TOKEN" in unset.stderr
    token = {"RYPSOK_TEST_CHECK_TOKEN": "t" * 40}
    done = run("check", "--transport", "http", "--config", str(protected), env=token)
    assert done.returncode == 0, done.stderr
    assert "http: 192.0.2.10 port 8000, 1 caller(s) with a token" in done.stdout
