"""The checked examples of the book (REQ-DOC-002).

* every example configuration (examples/config/*.toml) validates and ``rypsok check`` passes
  on it, with the environment variables it references set to dummy values;
* every example call (examples/calls/*.json) matches the published input schema and passes
  rypsok's own argument validation;
* every host entry (examples/hosts/) parses with the shape its host reads and starts
  ``rypsok serve`` with arguments the command line accepts;
* the transcripts of ``rypsok check`` the tutorials show are what the command prints.
"""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import urlsplit

import jsonschema
import pytest

from rypsok import __version__
from rypsok.app import contract_settings
from rypsok.cli import _parser
from rypsok.config.load import parse_settings
from rypsok.config.schema import Settings
from rypsok.contract.arguments import parse_fetch, parse_search, parse_status
from rypsok.contract.tools import ContractSettings, tool_definitions
from rypsok.engines.catalog import resolve_engines
from tests.support import ROOT, server_env

EXAMPLES = ROOT / "examples"
CONFIGS = sorted((EXAMPLES / "config").glob("*.toml"))
CALLS = sorted((EXAMPLES / "calls").glob("*.json"))
HOSTS = sorted(p for p in (EXAMPLES / "hosts").rglob("*") if p.is_file())


def referenced_env(data: Any) -> list[str]:
    """Every environment variable a configuration names with a ``*_env`` key."""
    found: list[str] = []
    if isinstance(data, dict):
        for key, value in data.items():
            if key.endswith("_env") and isinstance(value, str):
                found.append(value)
            else:
                found += referenced_env(value)
    elif isinstance(data, list):
        for item in data:
            found += referenced_env(item)
    return found


def dummy_env(path: Path) -> dict[str, str]:
    """Distinct dummy values, long enough for a bearer token, for every referenced variable."""
    names = referenced_env(tomllib.loads(path.read_text(encoding="utf-8")))
    return {name: f"dummy-value-for-{name.lower()}-0123456789" for name in names}


def run_check(
    config: str | None, env: dict[str, str], cwd: Path
) -> subprocess.CompletedProcess[str]:
    args = [sys.executable, "-m", "rypsok", "check"] + (["--config", config] if config else [])
    return subprocess.run(
        args, capture_output=True, text=True, env=server_env(env), cwd=cwd, timeout=60, check=False
    )


def zero_contract() -> ContractSettings:
    settings = Settings()
    return contract_settings(settings, resolve_engines(settings))


def test_req_doc_002_there_are_examples() -> None:
    """REQ-DOC-002: the book's example sets are not empty (a glob that finds nothing checks
    nothing)."""
    assert len(CONFIGS) >= 5 and len(CALLS) >= 5 and len(HOSTS) >= 5


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_req_doc_002_example_configuration_passes_check(path: Path) -> None:
    """REQ-DOC-002: ``rypsok check --config <example>`` exits 0 and says the configuration is
    valid, with every referenced environment variable set to a dummy value."""
    done = run_check(path.name, dummy_env(path), path.parent)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"rypsok {__version__}: configuration is valid\n")
    assert f"source: {path.name}\n" in done.stdout


def test_req_doc_002_zero_config_example_is_the_default() -> None:
    """REQ-DOC-002: examples/config/zero-config.toml spells out defaults only: it configures
    exactly what running with no configuration does."""
    path = EXAMPLES / "config" / "zero-config.toml"
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    assert parse_settings(data, source=path.name) == Settings()


@pytest.mark.parametrize(
    "path",
    [p for p in CONFIGS if "callers" in tomllib.loads(p.read_text()).get("http", {})],
    ids=lambda p: p.name,
)
def test_req_doc_002_http_examples_would_start(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """REQ-DOC-002: the HTTP examples also pass the checks ``serve --transport http`` makes at
    start and ``check`` does not: the listener policy and every caller's token."""
    from rypsok.mcp.http import check_listener
    from rypsok.mcp.http_auth import Authenticator

    for name, value in dummy_env(path).items():
        monkeypatch.setenv(name, value)
    settings = parse_settings(tomllib.loads(path.read_text(encoding="utf-8")))
    check_listener(settings.http)
    authenticator = Authenticator.from_settings(settings.http.callers)
    assert authenticator.required


def load_gen_docs() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_docs", ROOT / "scripts" / "gen_docs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_req_doc_002_check_transcripts_are_what_the_command_prints() -> None:
    """REQ-DOC-002, REQ-DOC-001: the ``rypsok check`` transcripts the tutorials include
    (docs/transcripts/) are what the real command prints, run where the tutorial runs it."""
    gen_docs = load_gen_docs()
    assert gen_docs.TRANSCRIPTS
    for name, (config, env) in gen_docs.TRANSCRIPTS.items():
        shown = (ROOT / "docs" / "transcripts" / name).read_text(encoding="utf-8")
        set_env = {k: v for k, v in env.items() if v is not None}
        done = run_check(config, set_env, EXAMPLES / "config")
        command = "$ rypsok check" + (f" --config {config}" if config else "")
        if done.returncode == 0:
            printed = f"{command}\n{done.stdout}"
        else:
            printed = f"{command}\n{done.stderr}(exit code {done.returncode})\n"
        assert printed == shown, name


# --- calls -----------------------------------------------------------------------------------


@pytest.mark.parametrize("path", CALLS, ids=lambda p: p.name)
def test_req_doc_002_example_call_matches_the_contract(path: Path) -> None:
    """REQ-DOC-002: an example call names a published tool, its arguments validate against the
    published input schema and pass rypsok's own argument validation."""
    call = json.loads(path.read_text(encoding="utf-8"))
    assert set(call) == {"tool", "arguments"}
    contract = zero_contract()
    schemas = {t.name.value: t.input_schema for t in tool_definitions(contract)}
    assert call["tool"] in schemas
    jsonschema.validate(call["arguments"], schemas[call["tool"]])
    if call["tool"] == "web_search":
        parse_search(call["arguments"], contract)
    elif call["tool"] == "web_fetch":
        parse_fetch(call["arguments"], contract)
    else:
        parse_status(call["arguments"])


def test_req_doc_002_call_validation_is_not_vacuous() -> None:
    """REQ-DOC-002: the two validators used above do refuse a call outside the contract."""
    contract = zero_contract()
    schemas = {t.name.value: t.input_schema for t in tool_definitions(contract)}
    bad = {"query": "tides", "max_results": 500}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schemas["web_search"])
    with pytest.raises(Exception, match="max_results"):
        parse_search(bad, contract)


# --- host entries ----------------------------------------------------------------------------


def host_kind(path: Path) -> str:
    """Which host reads this file, from where it sits."""
    relative = path.relative_to(EXAMPLES / "hosts").as_posix()
    if path.name == "claude_desktop_config.json":
        return "claude_desktop"
    if path.name == ".mcp.json":
        return "claude_code"
    if relative.endswith(".vscode/mcp.json"):
        return "vscode"
    if relative.endswith(".cursor/mcp.json"):
        return "cursor"
    if relative.startswith("generic/"):
        return "generic"
    raise AssertionError(f"no host reads {relative}")


def check_stdio_entry(entry: dict[str, Any]) -> None:
    assert entry["command"] == "rypsok"
    args = entry.get("args", [])
    assert isinstance(args, list) and all(isinstance(a, str) for a in args)
    assert args[:1] == ["serve"]
    parsed = _parser().parse_args(args)  # the command line accepts these arguments
    assert parsed.command == "serve"
    if parsed.config is not None:
        assert parsed.config.endswith(".toml")
    env = entry.get("env", {})
    assert isinstance(env, dict) and all(
        isinstance(k, str) and isinstance(v, str) for k, v in env.items()
    )


def check_http_entry(entry: dict[str, Any], inputs: set[str]) -> None:
    url = urlsplit(entry["url"])
    assert url.scheme in ("http", "https") and url.path == "/mcp"
    headers = entry.get("headers", {})
    assert isinstance(headers, dict)
    assert headers["Authorization"].startswith("Bearer ${")
    for ref in re.findall(r"\$\{input:([^}]+)\}", json.dumps(entry)):
        assert ref in inputs, f"undeclared input {ref}"


@pytest.mark.parametrize("path", HOSTS, ids=lambda p: p.relative_to(EXAMPLES / "hosts").as_posix())
def test_req_doc_002_host_entry_has_the_shape_its_host_reads(path: Path) -> None:
    """REQ-DOC-002: Claude Desktop, Claude Code and Cursor read ``mcpServers``; VS Code reads
    ``servers`` with an explicit ``type``; each stdio entry runs ``rypsok serve`` with arguments
    the command line accepts, each HTTP entry names the /mcp endpoint and a bearer token."""
    kind = host_kind(path)
    data = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    key = "servers" if kind == "vscode" else "mcpServers"
    allowed_top = {"servers", "inputs"} if kind == "vscode" else {"mcpServers"}
    assert set(data) <= allowed_top and key in data
    inputs = {i["id"] for i in data.get("inputs", [])}
    assert isinstance(data[key], dict) and "rypsok" in data[key]
    for entry in data[key].values():
        kind_of_entry = entry.get("type", "stdio")
        if kind == "vscode":
            assert "type" in entry, "VS Code needs the transport type"
        if kind == "claude_desktop":
            assert kind_of_entry == "stdio" and "url" not in entry
        if kind_of_entry == "stdio":
            assert "url" not in entry
            check_stdio_entry(entry)
        else:
            assert kind_of_entry == "http" and "command" not in entry
            check_http_entry(entry, inputs)
