"""Which engines run: the registry joined with the configuration (REQ-ENG-003/004, REQ-OPS-003)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from urllib.parse import urlsplit

from rypsok.config.schema import Settings
from rypsok.config.secrets import Secret, SecretError, resolve
from rypsok.contract.notices import key_setting
from rypsok.engines.base import DriverSpec
from rypsok.engines.registry import DRIVER_MODULES, check_identifiers, load_driver

# An admission record's endpoint on a reserved name marks an engine the operator runs itself.
_PLACEHOLDERS = frozenset({"searxng.invalid"})


class EngineConfigError(ValueError):
    """An engine entry of the configuration cannot be used; the message names the key."""


@dataclass(frozen=True, slots=True)
class ConfiguredEngine:
    """One engine as configured: its driver, whether it runs, and why not when it does not.

    ``key_setting`` is the configuration key an operator checks when the engine's key is
    refused (``[engines.brave] api_key_env``), None for an engine that takes no key. It names
    the reference, never the value, so it may appear in notices and logs.
    """

    engine_id: str
    driver: DriverSpec
    active: bool
    inactive_reason: str | None
    endpoint: str
    explicit_endpoint: bool
    credential: Secret | None
    preference: int
    key_setting: str | None = None


def resolve_engines(settings: Settings) -> list[ConfiguredEngine]:
    """Every known engine with its state, in preference order; unknown ids are refused."""
    unknown = check_identifiers(settings.engines)
    if unknown:
        raise EngineConfigError(
            f"engines.{unknown[0]}: no engine has this identifier; known engines are "
            f"{', '.join(DRIVER_MODULES)}"
        )
    engines: list[ConfiguredEngine] = []
    for position, engine_id in enumerate(DRIVER_MODULES):
        driver = load_driver(engine_id)
        record = driver.admission
        entry = settings.engines.get(engine_id)
        enabled = (
            record.enabled_by_default if entry is None or entry.enabled is None else entry.enabled
        )
        try:
            credential = resolve(entry.api_key_env, entry.api_key_file) if entry else None
        except SecretError as exc:
            raise EngineConfigError(f"engines.{engine_id}.api_key_file: {exc}") from None
        if credential is not None and record.keyed_rate is not None:
            # The provider grants a key more than the keyless rate: that rate is in force.
            driver = replace(driver, admission=replace(record, rate=record.keyed_rate))
        if driver.scraping and enabled and not settings.scraping.enabled:
            raise EngineConfigError(
                f"engines.{engine_id}: {engine_id} is a scraping driver (it reads a page made "
                "for people, not an API); enabling it needs [scraping] enabled = true, by which "
                "the operator accepts responsibility for the provider's terms"
            )
        explicit = bool(entry and entry.endpoint)
        if enabled and not explicit and urlsplit(record.endpoint).hostname in _PLACEHOLDERS:
            raise EngineConfigError(
                f"engines.{engine_id}.endpoint: {engine_id} has no public endpoint; set the URL "
                "of your own instance"
            )
        reason: str | None = None
        if not enabled:
            reason = (
                "disabled by configuration"
                if entry and entry.enabled is False
                else ("off by default; set enabled = true")
            )
        elif record.key == "required" and credential is None:
            if entry and entry.api_key_env:
                reason = f"no key: environment variable {entry.api_key_env} is unset or empty"
            elif entry and entry.api_key_file:
                reason = f"no key: the file {entry.api_key_file} is empty"
            else:
                reason = f"no key; set engines.{engine_id}.api_key_env or api_key_file"
        endpoint = entry.endpoint if entry and entry.endpoint else record.endpoint
        setting: str | None = None
        if record.key != "none":
            # The reference in use, else both: either would be read (key_setting's rule).
            used = (
                "api_key_env"
                if entry and entry.api_key_env
                else "api_key_file"
                if entry and entry.api_key_file
                else None
            )
            setting = key_setting(engine_id, used)
        engines.append(
            ConfiguredEngine(
                engine_id=engine_id,
                driver=driver,
                active=reason is None,
                inactive_reason=reason,
                endpoint=endpoint,
                explicit_endpoint=bool(entry and entry.endpoint),
                credential=credential,
                preference=entry.preference
                if entry and entry.preference is not None
                else 100 + position,
                key_setting=setting,
            )
        )
    engines.sort(key=lambda e: (e.preference, e.engine_id))
    return engines
