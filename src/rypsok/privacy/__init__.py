"""The credential check of queries and URLs before any outbound request (REQ-PRIV-002).

:func:`find_credentials` finds high-confidence credential formats, :func:`mask` hides the
spans found, :func:`redact` masks until none is left, :class:`CredentialCheck` applies the
operator's mode (LIM-P1). Personal data is not detected.
"""

from rypsok.privacy.check import (
    CredentialAction,
    CredentialCheck,
    CredentialMode,
    CredentialVerdict,
)
from rypsok.privacy.detect import REDACTED, CredentialMatch, find_credentials, mask, redact
from rypsok.privacy.formats import CredentialKind

__all__ = [
    "REDACTED",
    "CredentialAction",
    "CredentialCheck",
    "CredentialKind",
    "CredentialMatch",
    "CredentialMode",
    "CredentialVerdict",
    "find_credentials",
    "mask",
    "redact",
]
