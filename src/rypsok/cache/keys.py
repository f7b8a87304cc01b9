"""Cache keys: one engine's answer to one request of one caller, under one configuration.

REQ-CACHE-003 makes an entry valid only for the caller, the engine and the request parameters
it was produced for, and for no longer than the configuration; REQ-CACHE-004 keys it by the
authenticated caller over HTTP and makes the process the isolation unit over stdio. A key is
therefore the SHA-256 of a canonical encoding (compact JSON, object keys sorted) of:

* a format tag, so a change of this encoding never reads an old entry;
* the *generation*: the rypsok version and the whole configuration (which names secrets only by
  reference), so a replica of another version or configuration never shares an entry and an
  entry never outlives the configuration it was produced under, even in a shared Redis;
* the isolation unit: ``caller:<name>`` for an authenticated caller, ``process:<token>`` for the
  local caller (stdio, or HTTP without callers), the token being random per process;
* the engine id;
* every request parameter of the :class:`~rypsok.engines.base.EngineQuery` the driver builds
  its request from: the concrete endpoint ({language} substituted), query text, language, time
  range, region, safe-search level, result count, category. Parameters are taken by field, so
  a parameter added to ``EngineQuery`` later splits entries without anyone remembering to; only
  the fields listed in :data:`NOT_IN_KEY` are left out.

Only the digest is stored: the query text is not readable from a key, and keys are never logged.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import secrets
from enum import Enum
from typing import Final

from rypsok import __version__
from rypsok.config.schema import Settings
from rypsok.engines.base import EngineQuery
from rypsok.health.invocation import LOCAL_CALLER

KEY_FORMAT: Final = "rypsok.results/1"

NOT_IN_KEY: Final = frozenset({"credential", "contact", "now"})
"""EngineQuery fields that are not request parameters of their own: the credential and the
contact are fixed by the configuration (part of the generation, by reference), and the clock
must not split entries (a relative time range is resolved against it)."""


def _digest(fields: list[object]) -> str:
    encoded = json.dumps(
        fields, ensure_ascii=False, separators=(",", ":"), sort_keys=True, allow_nan=False
    )
    return hashlib.sha256(encoded.encode("utf-8")).hexdigest()


def generation_of(settings: Settings, version: str = __version__) -> str:
    """A digest of the rypsok version and the configuration; equal on identical replicas."""
    return _digest(["rypsok.generation/1", version, settings.model_dump(mode="json")])


def result_key(*, generation: str, unit: str, engine_id: str, query: EngineQuery) -> str:
    """The key of ``engine_id``'s answer to ``query`` for the isolation ``unit`` (hex SHA-256)."""
    parameters = {
        field.name: _plain(getattr(query, field.name))
        for field in dataclasses.fields(query)
        if field.name not in NOT_IN_KEY
    }
    return _digest([KEY_FORMAT, generation, unit, engine_id, parameters])


def _plain(value: object) -> object:
    return value.value if isinstance(value, Enum) else value


class KeyScope:
    """The parts of every key fixed for the life of the process: generation and process token."""

    __slots__ = ("_generation", "_process")

    def __init__(self, settings: Settings, *, process_token: str | None = None) -> None:
        """``process_token`` exists for tests; production draws a fresh random one."""
        self._generation = generation_of(settings)
        self._process = process_token if process_token is not None else secrets.token_hex(16)

    def key(self, *, caller: str, engine_id: str, query: EngineQuery) -> str:
        """The key of ``engine_id``'s answer to ``query`` for ``caller`` (REQ-CACHE-003/004)."""
        # The local caller is whoever holds this process (stdio), so in a shared Redis it must
        # not meet the local caller of another process: the process is the unit.
        unit = f"process:{self._process}" if caller == LOCAL_CALLER else f"caller:{caller}"
        return result_key(generation=self._generation, unit=unit, engine_id=engine_id, query=query)

    def __repr__(self) -> str:
        return "KeyScope(<generation>, <process>)"
