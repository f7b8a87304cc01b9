"""Secrets: given by reference only (REQ-CFG-004), held in a type that never shows its value."""

from __future__ import annotations

import hmac
import os
from pathlib import Path
from typing import Final

_REDACTED: Final = "Secret('***')"


class Secret:
    """A credential value that redacts itself in ``repr``, ``str``, logs and exceptions."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        """The value, for the one place that sends it (a request header)."""
        return self._value

    def __repr__(self) -> str:
        return _REDACTED

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        # Constant time, so that no comparison ever leaks a prefix of the value.
        return isinstance(other, Secret) and hmac.compare_digest(
            other._value.encode(), self._value.encode()
        )

    def __hash__(self) -> int:
        return hash(self._value)

    def __reduce__(self) -> tuple[object, ...]:
        raise TypeError("a Secret cannot be pickled")


class SecretError(ValueError):
    """A secret reference that cannot be resolved; the message names the reference, not a value."""


def resolve(env_name: str | None, file_path: str | None) -> Secret | None:
    """Resolve an ``*_env`` or ``*_file`` reference; None when neither is given or it is unset."""
    if env_name:
        value = os.environ.get(env_name, "")
        return Secret(value) if value.strip() else None
    if file_path:
        path = Path(file_path)
        try:
            value = path.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise SecretError(
                f"cannot read the secret file {file_path}: {type(exc).__name__}"
            ) from None
        return Secret(value) if value else None
    return None
