"""Loading and validating the configuration file (REQ-CFG-001/004/005, REQ-MAIN-003)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rypsok.config.load import ConfigError, load_settings, parse_settings
from rypsok.config.secrets import Secret, resolve


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "rypsok.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_req_cfg_001_file_from_option_and_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """REQ-CFG-001: --config names the file; RYPSOK_CONFIG does when --config is absent."""
    a = write(tmp_path, "schema_version = 1\n[search]\nmax_results_default = 5\n")
    b = tmp_path / "b.toml"
    b.write_text("schema_version = 1\n[search]\nmax_results_default = 7\n", encoding="utf-8")
    monkeypatch.setenv("RYPSOK_CONFIG", str(b))
    assert load_settings(str(a))[0].search.max_results_default == 5
    assert load_settings(None)[0].search.max_results_default == 7
    monkeypatch.delenv("RYPSOK_CONFIG")
    settings, path = load_settings(None)
    assert path is None and settings.search.max_results_default == 10


def test_req_main_003_schema_version_required_and_known(tmp_path: Path) -> None:
    """REQ-MAIN-003: a file without schema_version, or with an unknown one, is refused.

    Proves THR-30.
    """
    with pytest.raises(ConfigError, match="schema_version is missing"):
        load_settings(str(write(tmp_path, "[search]\nmax_results_default = 5\n")))
    with pytest.raises(ConfigError, match="schema_version 2 is not supported"):
        load_settings(str(write(tmp_path, "schema_version = 2\n")))
    with pytest.raises(ConfigError, match="not supported"):
        load_settings(str(write(tmp_path, 'schema_version = "1"\n')))


def test_req_cfg_005_unknown_key_is_named(tmp_path: Path) -> None:
    """REQ-CFG-005: an unknown key stops start-up with a message that names it."""
    with pytest.raises(ConfigError, match=r"unknown key search\.max_result\b"):
        load_settings(str(write(tmp_path, "schema_version = 1\n[search]\nmax_result = 5\n")))
    with pytest.raises(ConfigError, match=r"unknown key colour"):
        load_settings(str(write(tmp_path, 'schema_version = 1\ncolour = "red"\n')))


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("[search]\nmax_results_default = 0\n", "search.max_results_default"),
        ("[search]\nmax_results_default = 30\n", "search"),
        ("[search]\nengine_timeout_ms = 3900\n", "search"),
        ('[privacy]\ncredential_check = "sometimes"\n', "privacy.credential_check"),
        ('[egress]\ndns_servers = ["127.0.0.1"]\n', "egress.dns_servers"),
        ('[egress]\nallow = ["not a host"]\n', "egress.allow"),
        ('[service]\nlanguages = ["en"]\ndefault_language = "de"\n', "service"),
        ('[engines.github]\nendpoint = "ftp://example.org"\n', "engines.github.endpoint"),
    ],
)
def test_req_cfg_005_invalid_values_name_the_key(tmp_path: Path, text: str, key: str) -> None:
    """REQ-CFG-005: an invalid or unsafe value stops start-up naming the key."""
    with pytest.raises(ConfigError, match=f"invalid value for {key}"):
        load_settings(str(write(tmp_path, "schema_version = 1\n" + text)))


def test_req_agg_003_engine_timeout_plus_reserve_above_deadline_refused() -> None:
    """REQ-AGG-003: configuration where LIM-S5 + LIM-S6 exceeds LIM-S4 is refused at start."""
    with pytest.raises(ConfigError, match="engine_timeout_ms \\+ reserve_ms"):
        parse_settings({"schema_version": 1, "search": {"deadline_ms": 3000}})


def test_req_agg_003_engine_phase_too_short_for_any_request_refused() -> None:
    """REQ-AGG-003, REQ-CFG-005: an engine phase (deadline_ms - reserve_ms) too short for any
    engine request to start would make every search end no_engine_answered without contacting
    an engine; it is refused at start, naming the keys, and the shortest allowed one works."""
    search = {"deadline_ms": 600, "engine_timeout_ms": 400, "reserve_ms": 200, "ceiling_ms": 900}
    with pytest.raises(ConfigError, match="deadline_ms - reserve_ms must leave at least 500 ms"):
        parse_settings({"schema_version": 1, "search": search})
    shortest = {**search, "deadline_ms": 700}
    assert parse_settings({"schema_version": 1, "search": shortest}).search.deadline_ms == 700


@pytest.mark.parametrize(
    "text",
    [
        '[engines.github]\napi_key = "ghp_abc"\n',
        '[[http.callers]]\nname = "a"\ntoken = "t0k3n"\n',
        '[egress]\npassword = "hunter2"\n',
    ],
)
def test_req_cfg_004_inline_secret_refused(tmp_path: Path, text: str) -> None:
    """REQ-CFG-004: an inline secret is refused, naming the key, never echoing the value.

    Proves THR-30.
    """
    with pytest.raises(ConfigError) as caught:
        load_settings(str(write(tmp_path, "schema_version = 1\n" + text)))
    message = str(caught.value)
    assert "by reference" in message
    for value in ("ghp_abc", "t0k3n", "hunter2"):
        assert value not in message


def test_req_cfg_004_secret_by_reference(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """REQ-CFG-004: secrets come from an environment variable or a file, and never show."""
    monkeypatch.setenv("RYPSOK_TEST_KEY", "s3cr3t-value")
    secret = resolve("RYPSOK_TEST_KEY", None)
    assert isinstance(secret, Secret) and secret.reveal() == "s3cr3t-value"
    assert "s3cr3t" not in repr(secret) and "s3cr3t" not in str(secret)
    assert "s3cr3t" not in f"{secret!r} {secret}" and "s3cr3t" not in repr([secret])
    key_file = tmp_path / "key"
    key_file.write_text("from-file\n", encoding="utf-8")
    from_file = resolve(None, str(key_file))
    assert from_file is not None and from_file.reveal() == "from-file"
    assert resolve("RYPSOK_TEST_UNSET_VARIABLE", None) is None


@pytest.mark.parametrize("case", ["directory", "missing", "not_toml", "binary", "unreadable"])
def test_req_cfg_005_bad_files_get_clear_errors(tmp_path: Path, case: str) -> None:
    """REQ-CFG-005: a directory, a missing, unreadable or non-TOML file is a clear error.

    Proves THR-30.
    """
    if case == "directory":
        path, expected = tmp_path, "is a directory"
    elif case == "missing":
        path, expected = tmp_path / "nope.toml", "no such file"
    elif case == "not_toml":
        path, expected = write(tmp_path, "this is [not toml\n"), "not valid TOML"
    elif case == "binary":
        path = tmp_path / "bin.toml"
        path.write_bytes(b"\xff\xfe\x00garbage")
        expected = "not UTF-8"
    else:
        # A path through a regular file fails with an OSError even for root.
        path = write(tmp_path, "schema_version = 1\n") / "child.toml"
        expected = "cannot be read"
    with pytest.raises(ConfigError, match=expected):
        load_settings(str(path))
