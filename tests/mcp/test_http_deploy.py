"""The container file and the example deployment, checked without Docker (REQ-DEP-002,
REQ-DEP-004): structural checks of the files, and the replicas' configuration validated by
rypsok's own loader and listener policy."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from rypsok.config.load import parse_settings
from rypsok.mcp.http import check_listener, listener_policy

ROOT = Path(__file__).resolve().parents[2]
CONTAINERFILE = ROOT / "Containerfile"
DEPLOY = ROOT / "deploy"


def _instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of a Containerfile, continuation lines joined, comments out."""
    logical = re.sub(r"\\\n", " ", text)
    out = []
    for line in logical.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def test_req_dep_002_containerfile() -> None:
    """REQ-DEP-002, REQ-DEP-005: python:3.11-slim, the wheel built from this repository
    installed with the lock, a non-root user, the HTTP transport as the command."""
    steps = _instructions(CONTAINERFILE.read_text(encoding="utf-8"))
    froms = [args for word, args in steps if word == "FROM"]
    assert froms and all(f.startswith("python:3.11-slim") for f in froms)
    runs = " ".join(args for word, args in steps if word == "RUN")
    assert "pip wheel" in runs and "pip install" in runs and ".whl" in runs
    assert "constraints.txt" in runs
    users = [args for word, args in steps if word == "USER"]
    assert users and users[-1].split(":")[0] not in ("root", "0")
    command = " ".join(args for word, args in steps if word in ("ENTRYPOINT", "CMD"))
    assert all(part in command for part in ('"rypsok"', '"serve"', '"--transport"', '"http"'))
    env = " ".join(args for word, args in steps if word == "ENV")
    assert "PYTHONDONTWRITEBYTECODE=1" in env  # read-only filesystem friendly
    assert not any(word == "VOLUME" for word, _ in steps)
    assert "token" not in " ".join(args for word, args in steps if word in ("ENV", "ARG")).lower()


def _top_level_keys(text: str) -> list[str]:
    return [m.group(1) for m in re.finditer(r"^([A-Za-z0-9_.-]+):", text, re.MULTILINE)]


def _service_blocks(text: str) -> dict[str, str]:
    """The text of each service under ``services:`` (two-space indented keys)."""
    body = text.split("\nservices:\n", 1)[1]
    body = re.split(r"^\S", body, maxsplit=1, flags=re.MULTILINE)[0]
    parts = re.split(r"^  ([A-Za-z0-9_.-]+):\n", body, flags=re.MULTILINE)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def test_req_dep_004_compose_two_replicas_behind_a_load_balancer() -> None:
    """REQ-DEP-002, REQ-DEP-004: two rypsok replicas, read-only, unprivileged, with memory,
    CPU, process and file limits, the configuration mounted read-only, tokens as secrets,
    and a load balancer as the only published port."""
    text = (DEPLOY / "compose.yaml").read_text(encoding="utf-8")
    assert "\t" not in text
    assert {"services", "secrets"} <= set(_top_level_keys(text))
    services = _service_blocks(text)
    replicas = [name for name, block in services.items() if "<<: *rypsok" in block]
    assert len(replicas) == 2
    anchor = text.split("x-rypsok: &rypsok\n", 1)[1].split("\nservices:\n", 1)[0]
    for setting in (
        "read_only: true",
        'user: "10001:10001"',
        "mem_limit:",
        "cpus:",
        "pids_limit:",
        "nofile:",
        "cap_drop: [ALL]",
        "stop_signal: SIGTERM",
    ):
        assert setting in anchor, setting
    assert "rypsok.toml:/etc/rypsok/rypsok.toml:ro" in anchor
    assert "dockerfile: Containerfile" in anchor and "ports:" not in anchor
    balancers = [name for name, block in services.items() if "ports:" in block]
    assert balancers == ["lb"]
    assert "haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro" in services["lb"]
    assert re.search(r'"127\.0\.0\.1:8080:8080"', services["lb"])
    for secret in ("rypsok_agent_token", "rypsok_research_token"):
        assert f"  {secret}:\n    file: ./secrets/" in text


def test_compose_parses_as_yaml_when_a_parser_is_available() -> None:
    """The same file through a real YAML parser, where one is installed."""
    yaml = pytest.importorskip("yaml")
    data = yaml.safe_load((DEPLOY / "compose.yaml").read_text(encoding="utf-8"))
    rypsok = [s for s in data["services"].values() if "haproxy" not in s.get("image", "")]
    assert len(rypsok) == 2
    for service in rypsok:
        assert service["read_only"] is True and service["user"] == "10001:10001"
        assert service["command"][:3] == ["serve", "--transport", "http"]


def test_req_dep_002_load_balancer_sticks_sessions_and_checks_health() -> None:
    """REQ-DEP-002: the balancer routes a handshake-era session to the replica that created it
    (learned from Mcp-Session-Id) and checks health on the operator port."""
    text = (DEPLOY / "haproxy.cfg").read_text(encoding="utf-8")
    assert "stick store-response res.hdr(mcp-session-id)" in text
    assert "stick match req.hdr(mcp-session-id)" in text
    servers = re.findall(r"^\s*server (\S+) (\S+):8000 check port 9100", text, re.MULTILINE)
    assert [name for name, _ in servers] == ["rypsok-1", "rypsok-2"]
    assert "httpchk GET /metrics" in text


def test_req_sec_018_replica_configuration_is_valid_and_protected() -> None:
    """REQ-SEC-018: the replicas' configuration loads, binds beyond loopback only with callers
    whose tokens are files, and accepts exactly the load balancer's Host values."""
    data = tomllib.loads((DEPLOY / "rypsok.toml").read_text(encoding="utf-8"))
    settings = parse_settings(data, source="deploy/rypsok.toml")
    http = settings.http
    check_listener(http)  # raises when the listener would be unprotected
    assert http.bind == "0.0.0.0" and http.callers
    assert all(c.token_file and c.token_file.startswith("/run/secrets/") for c in http.callers)
    policy = listener_policy(http, http.port)
    assert not policy.loopback
    assert "localhost:8080" in policy.allowed_hosts
    assert http.metrics_port == 9100
    compose = (DEPLOY / "compose.yaml").read_text(encoding="utf-8")
    for caller in http.callers:
        assert caller.token_file is not None
        assert Path(caller.token_file).name in compose
