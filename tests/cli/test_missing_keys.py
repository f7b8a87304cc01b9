"""A keyed engine enabled without its key: what ``check`` and ``serve`` tell the operator.

Both run as real processes (``python -m rypsok``) with the allow-listed environment of
``tests.support.server_env``, as in ``tests/test_cli.py``. REQ-OPS-003, REQ-ENG-003,
REQ-CFG-004.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support import server_env, write_config
from tests.test_cli import run

KEY_VARIABLE = "RYPSOK_TEST_BRAVE_KEY_ABSENT"
KEY_VALUE = "bsk-test-" + "k" * 24  # what a configured key looks like; never to be printed


def keyed_config(tmp_path: Path) -> Path:
    """brave by environment variable, kagi by file (left empty), exa with no reference."""
    empty = tmp_path / "kagi.key"
    empty.write_text("", encoding="utf-8")
    return write_config(
        tmp_path,
        f'[engines.brave]\nenabled = true\napi_key_env = "{KEY_VARIABLE}"\n'
        f'[engines.kagi]\nenabled = true\napi_key_file = "{empty}"\n'
        "[engines.exa]\nenabled = true\n",
    )


def engine_line(output: str, engine: str) -> str:
    return next(line for line in output.splitlines() if line.strip().startswith(f"{engine} "))


def test_req_ops_003_check_names_the_missing_key_variable(tmp_path: Path) -> None:
    """REQ-OPS-003, REQ-ENG-003: ``rypsok check`` reports a keyed engine that is enabled but
    has no key as inactive, naming what to set: the unset environment variable, the empty key
    file, or the configuration keys when no reference is given. Once the variable is set the
    engine is active and its value is never printed. Exit code 0 either way: a missing key
    is not a configuration error."""
    config = keyed_config(tmp_path)
    done = run("check", "--config", str(config))
    assert done.returncode == 0, done.stderr
    assert engine_line(done.stdout, "brave").endswith(
        f"inactive (no key: environment variable {KEY_VARIABLE} is unset or empty)"
    )
    assert engine_line(done.stdout, "kagi").endswith(
        f"inactive (no key: the file {tmp_path / 'kagi.key'} is empty)"
    )
    assert engine_line(done.stdout, "exa").endswith(
        "inactive (no key; set engines.exa.api_key_env or api_key_file)"
    )
    assert engine_line(done.stdout, "hackernews").endswith("active")  # keyless engines run

    keyed = run("check", "--config", str(config), env={KEY_VARIABLE: KEY_VALUE})
    assert keyed.returncode == 0, keyed.stderr
    assert engine_line(keyed.stdout, "brave").endswith(" active")
    assert KEY_VALUE not in keyed.stdout + keyed.stderr


def serve_log(config: Path, env: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """The JSON log lines of ``rypsok serve`` started and ended at once (stdin at EOF)."""
    done = subprocess.run(
        [sys.executable, "-m", "rypsok", "serve", "--config", str(config)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        env=server_env(env),
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""  # stdout is the protocol's; nothing was asked
    return [json.loads(line) for line in done.stderr.splitlines()]


def test_req_ops_003_serve_logs_engine_inactive_at_start(tmp_path: Path) -> None:
    """REQ-OPS-003: at start ``rypsok serve`` writes one ``engine_inactive`` line per engine
    that will not run, with the same reason ``check`` gives (naming the unset variable); an
    engine whose key is set has no such line, and the key's value is never logged."""
    config = keyed_config(tmp_path)
    lines = serve_log(config)
    inactive = {e["engine"]: e["reason"] for e in lines if e.get("event") == "engine_inactive"}
    assert inactive["brave"] == f"no key: environment variable {KEY_VARIABLE} is unset or empty"
    assert inactive["exa"] == "no key; set engines.exa.api_key_env or api_key_file"
    assert "kagi" in inactive
    assert not {"wikipedia", "hackernews", "arxiv", "github"} & set(inactive)
    assert all(e["level"] == "info" for e in lines if e.get("event") == "engine_inactive")
    assert lines[0]["event"] == "start"

    keyed = serve_log(config, env={KEY_VARIABLE: KEY_VALUE})
    assert "brave" not in {e["engine"] for e in keyed if e.get("event") == "engine_inactive"}
    assert KEY_VALUE not in json.dumps(keyed)
