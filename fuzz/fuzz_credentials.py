"""Fuzz target: the credential check of queries and URLs (REQ-PRIV-002; THR-04).

``find_credentials``, ``mask`` and ``CredentialCheck`` on any text. Invariants: no exception;
matches are sorted, inside the text, non-overlapping and of the fixed kind vocabulary; masking
never lengthens the text; a redacted text has no credential left; deny sends nothing, mask
sends the redacted text, warn the text;
a verdict's repr never shows a matched value; every pattern runs in linear time (a 4 KiB input
is checked in well under a second).
"""

from __future__ import annotations

import time

from _harness import Input, check, instrumented, main

with instrumented():
    from rypsok.privacy import (
        CredentialAction,
        CredentialCheck,
        CredentialKind,
        CredentialMode,
        find_credentials,
        mask,
        redact,
    )

_KINDS = frozenset(k.value for k in CredentialKind)
_SEEDS = (
    "",
    "ghp_",
    "AKIA",
    "-----BEGIN PRIVATE KEY-----",
    "eyJ",
    "sk-",
    "xoxb-",
    "https://hooks.slack.com/services/",
)


def test_one_input(data: bytes) -> None:
    """Check the input for credentials and check the invariants."""
    source = Input(data)
    text = source.pick(_SEEDS) + source.text()
    started = time.perf_counter()
    matches = find_credentials(text)
    elapsed = time.perf_counter() - started
    check(elapsed < 2.0 or len(text) > 100_000, f"credential scan took {elapsed:.2f} s")
    end = 0
    for match in matches:
        check(match.kind in _KINDS, "kind outside the vocabulary")
        check(end <= match.start < match.end <= len(text), "matches overlap or leave the text")
        end = match.end
    masked = mask(text, matches)
    check(len(masked) <= len(text), "masking lengthened the text")
    redacted = redact(text)
    check(not find_credentials(redacted), "a credential survives redaction")
    for mode in CredentialMode:
        verdict = CredentialCheck(mode).apply(text)
        if mode is CredentialMode.OFF or not matches:
            check(verdict.action is CredentialAction.PROCEED and verdict.text == text, "proceed")
            continue
        if mode is CredentialMode.DENY:
            check(verdict.text is None, "deny must send nothing")
        elif mode is CredentialMode.MASK:
            check(verdict.text == redacted, "mask must send the redacted text")
        else:
            check(verdict.text == text, "warn must send the text as given")
        shown = repr(verdict) + str(verdict)
        for match in matches:
            value = text[match.start : match.end]
            check(len(value) < 8 or value not in shown, "a verdict shows a credential")


if __name__ == "__main__":
    main(test_one_input)
