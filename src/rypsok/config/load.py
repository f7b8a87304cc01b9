"""Loading the configuration file: one TOML file via --config or RYPSOK_CONFIG (REQ-CFG-001).

Every failure is a :class:`ConfigError` whose message names the key or the file and says what
to change; the command line turns it into exit code 1 (REQ-CFG-005, REQ-OPS-001).
"""

from __future__ import annotations

import os
import tomllib
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from rypsok.config.schema import SCHEMA_VERSION, Settings

ENV_VAR = "RYPSOK_CONFIG"
MAX_FILE_BYTES = 1024 * 1024
# Keys that would hold a credential inline; each has a by-reference form (REQ-CFG-004).
_INLINE_SECRET_KEYS = frozenset(
    {"api_key", "token", "password", "secret", "key", "bearer", "engine_proxy_auth"}
)


class ConfigError(Exception):
    """The configuration cannot be used; the message names the key and what to change."""


def config_path(cli_value: str | None) -> Path | None:
    """The file to read: --config first, then RYPSOK_CONFIG, else none (zero configuration)."""
    value = cli_value if cli_value is not None else os.environ.get(ENV_VAR)
    return Path(value) if value else None


def _read(path: Path) -> dict[str, Any]:
    if path.is_dir():
        raise ConfigError(f"{path}: is a directory; give the path of a TOML file")
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file; check --config or {ENV_VAR}") from None
    except OSError as exc:
        raise ConfigError(
            f"{path}: cannot be read ({type(exc).__name__}); check its permissions"
        ) from None
    if len(raw) > MAX_FILE_BYTES:
        raise ConfigError(f"{path}: larger than {MAX_FILE_BYTES} bytes; this is not a config file")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 (byte {exc.start}); save it as UTF-8") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None


def _find_inline_secret(data: Mapping[str, Any], prefix: str = "") -> str | None:
    for key, value in data.items():
        dotted = f"{prefix}{key}"
        if key.lower() in _INLINE_SECRET_KEYS:
            return dotted
        if isinstance(value, Mapping):
            found = _find_inline_secret(value, f"{dotted}.")
            if found:
                return found
        if isinstance(value, list):
            for index, item in enumerate(value):
                if isinstance(item, Mapping):
                    found = _find_inline_secret(item, f"{dotted}[{index}].")
                    if found:
                        return found
    return None


def _valid_keys(location: tuple[int | str, ...]) -> list[str]:
    """The keys of the table at ``location`` in the schema (for an unknown-key message)."""
    model: type[BaseModel] = Settings
    parts = list(location)
    while parts:
        part = parts.pop(0)
        if isinstance(part, int):
            continue  # an index into an array of tables
        field = model.model_fields.get(part)
        if field is None:
            break
        # A table, a dict of tables (engines.<id>) or an array of tables (http.callers).
        for candidate in (field.annotation, *typing.get_args(field.annotation)):
            if isinstance(candidate, type) and issubclass(candidate, BaseModel):
                model = candidate
                if typing.get_origin(field.annotation) is dict and parts:
                    parts.pop(0)  # the engine identifier
                break
    return list(model.model_fields)


def _describe(error: ValidationError) -> str:
    first = error.errors()[0]
    key = ".".join(str(p) for p in first["loc"]) or "(top level)"
    if first["type"] == "extra_forbidden":
        valid = _valid_keys(first["loc"][:-1])
        return f"unknown key {key}; valid keys here are: {', '.join(valid)}"
    message = first["msg"].removeprefix("Value error, ")
    return f"invalid value for {key}: {message}"


def parse_settings(data: Mapping[str, Any], *, source: str = "configuration") -> Settings:
    """Validate a parsed configuration mapping; a given file must carry ``schema_version``."""
    if "schema_version" not in data:
        raise ConfigError(
            f"{source}: schema_version is missing; add 'schema_version = {SCHEMA_VERSION}' "
            "as the first line (REQ-MAIN-003)"
        )
    version = data["schema_version"]
    if version != SCHEMA_VERSION or isinstance(version, bool):
        raise ConfigError(
            f"{source}: schema_version {version!r} is not supported; this release reads "
            f"schema_version = {SCHEMA_VERSION}"
        )
    inline = _find_inline_secret(data)
    if inline:
        raise ConfigError(
            f"{source}: key {inline} holds a secret inline; give it by reference instead "
            f'({inline}_env = "VARIABLE" or {inline}_file = "/path")'
        )
    try:
        return Settings.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(f"{source}: {_describe(exc)}") from None


def load_settings(cli_value: str | None) -> tuple[Settings, Path | None]:
    """Read and validate the configuration; zero configuration when no file is named."""
    path = config_path(cli_value)
    if path is None:
        return Settings(), None
    return parse_settings(_read(path), source=str(path)), path
