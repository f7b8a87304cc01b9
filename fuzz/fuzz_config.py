"""Fuzz target: configuration parsing (REQ-CFG-001/004, REQ-MAIN-003; THR-30).

Any text through ``tomllib`` and then ``parse_settings``, the function ``load_settings`` uses.
Invariants: no exception but ``tomllib.TOMLDecodeError`` and ``ConfigError``; egress rules of a
configuration that validates are either refused by the start-up check ``rypsok.app.load``
applies (``check_rules``, a ConfigError naming the key) or build the address policy (a rule
that passed both and still failed ``Egress`` would end the start with a traceback: SEC-02).
"""

from __future__ import annotations

import tomllib

from _harness import Input, check, instrumented, main

with instrumented():
    from rypsok.config.load import ConfigError, parse_settings
    from rypsok.egress.addresses import AddressPolicy, check_rules

_HEADS = (
    "",
    "schema_version = 1\n",
    "schema_version = 1\n[egress]\nallow = [",
    "schema_version = 1\n[egress]\ndeny = [",
    "schema_version = 1\n[fetch]\n",
    "schema_version = 1\n[engines.wikipedia]\n",
    "schema_version = 1\n[search]\n",
    "schema_version = 1\n[[http.callers]]\n",
)


def test_one_input(data: bytes) -> None:
    """Parse the input as a configuration file and check the invariants."""
    source = Input(data)
    text = source.pick(_HEADS) + source.text()
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return
    try:
        settings = parse_settings(document, source="fuzz.toml")
    except ConfigError as error:
        check(len(str(error)) < 4096, "unbounded configuration error message")
        return
    try:
        check_rules(settings.egress.allow)
        check_rules(settings.egress.deny)
    except ValueError:
        return  # refused at start with a ConfigError naming egress.allow or egress.deny
    try:
        AddressPolicy(allow=settings.egress.allow, deny=settings.egress.deny)
    except ValueError as error:
        check(False, f"checked egress rules refused by the egress component: {error}")


if __name__ == "__main__":
    main(test_one_input)
