"""Helpers for end-to-end tests: start the real ``rypsok serve`` process over stdio."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters

ROOT = Path(__file__).resolve().parents[1]


def server_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The child's environment: the SDK passes only an allow-list, so give PATH and HOME."""
    env = {k: os.environ[k] for k in ("PATH", "HOME", "LANG") if k in os.environ}
    env.update(extra or {})
    return env


def serve_params(
    config: Path | None = None, env: dict[str, str] | None = None
) -> StdioServerParameters:
    """Parameters that start ``python -m rypsok serve`` with an optional configuration."""
    args = ["-m", "rypsok", "serve"]
    if config is not None:
        args += ["--config", str(config)]
    return StdioServerParameters(command=sys.executable, args=args, env=server_env(env))


@asynccontextmanager
async def rypsok_client(
    config: Path | None = None, *, mode: Any = "auto", env: dict[str, str] | None = None
) -> AsyncIterator[Client]:
    """A connected SDK client to a fresh rypsok process."""
    async with Client(serve_params(config, env), mode=mode, read_timeout_seconds=30) as client:
        yield client


def write_config(tmp_path: Path, text: str) -> Path:
    """A configuration file with schema_version = 1 and the given body."""
    path = tmp_path / "rypsok.toml"
    path.write_text("schema_version = 1\n" + text, encoding="utf-8")
    return path
