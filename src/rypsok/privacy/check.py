"""The operator's credential-check mode applied to one query or URL (REQ-PRIV-002, LIM-P1).

The check decides; the caller acts: it refuses the call with ``denied`` /
``credential_in_query`` for :attr:`CredentialAction.DENY`, adds the
``credential_detected`` notice for WARN, sends :attr:`CredentialVerdict.text` with the
``credential_masked`` notice for MASK. The notices and the error carry the first match's
kind and start, never the value.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from rypsok.privacy.detect import CredentialMatch, find_credentials, redact


class CredentialMode(StrEnum):
    """The operator's choice for a detected credential (LIM-P1; default deny)."""

    DENY = "deny"
    WARN = "warn"
    MASK = "mask"
    OFF = "off"


class CredentialAction(StrEnum):
    """What the caller does with the checked text."""

    PROCEED = "proceed"  # nothing found, or the check is off: send the text as given
    DENY = "deny"  # refuse the call before any outbound request
    WARN = "warn"  # send the text as given, with a notice
    MASK = "mask"  # send the masked text, with a notice


@dataclass(frozen=True, slots=True)
class CredentialVerdict:
    """The outcome of a check. ``text`` is left out of ``repr``: it may hold the secret."""

    action: CredentialAction
    matches: tuple[CredentialMatch, ...]
    text: str | None = field(repr=False)
    """The text to send: as given, masked under MASK, None under DENY (send nothing)."""

    @property
    def first(self) -> CredentialMatch | None:
        """The match the notice or error names (the earliest one), if any."""
        return self.matches[0] if self.matches else None


_ACTION_FOR_MODE = {
    CredentialMode.DENY: CredentialAction.DENY,
    CredentialMode.WARN: CredentialAction.WARN,
    CredentialMode.MASK: CredentialAction.MASK,
}


@dataclass(frozen=True, slots=True)
class CredentialCheck:
    """The credential check configured with one mode."""

    mode: CredentialMode = CredentialMode.DENY

    def apply(self, text: str) -> CredentialVerdict:
        """Check ``text`` and say what to send (REQ-PRIV-002). ``off`` does not scan."""
        if self.mode is CredentialMode.OFF:
            return CredentialVerdict(CredentialAction.PROCEED, (), text)
        matches = tuple(find_credentials(text))
        if not matches:
            return CredentialVerdict(CredentialAction.PROCEED, (), text)
        action = _ACTION_FOR_MODE[self.mode]
        if action is CredentialAction.DENY:
            return CredentialVerdict(action, matches, None)
        if action is CredentialAction.MASK:
            return CredentialVerdict(action, matches, redact(text))
        return CredentialVerdict(action, matches, text)
