"""The credential check of REQ-PRIV-002 applied with the operator's mode (LIM-P1).

Runs before any outbound request (REQ-LIFE-001). ``deny`` refuses the call naming the kind and
position of the credential, never its value; ``warn`` lets it through with a notice; ``mask``
replaces it before the request, with a notice; ``off`` does nothing.
"""

from __future__ import annotations

from typing import Literal

from rypsok.contract.errors import ErrorDetail, ToolFailure
from rypsok.contract.notices import Notice, notice
from rypsok.contract.vocabulary import ErrorKind, NoticeCode, Reason
from rypsok.privacy import CredentialAction, CredentialCheck, CredentialMode

Mode = Literal["deny", "warn", "mask", "off"]


def check_credentials(text: str, *, parameter: str, mode: Mode) -> tuple[str, list[Notice]]:
    """The text to use and the notices owed, or raise ``denied`` in deny mode.

    :class:`CredentialCheck` decides; this acts on its verdict with the error and notices of
    the tool contract.
    """
    verdict = CredentialCheck(CredentialMode(mode)).apply(text)
    first = verdict.first
    if first is None:  # nothing found, or the check is off
        return text, []
    if verdict.text is None:  # deny: nothing may be sent
        reason = Reason.CREDENTIAL_IN_QUERY if parameter == "query" else Reason.CREDENTIALS_IN_URL
        raise ToolFailure(
            ErrorKind.DENIED,
            reason,
            f"The {parameter} contains what looks like a credential ({first.kind}) at character "
            f"{first.start}; remove it and call again.",
            ErrorDetail(parameter=parameter, credential_kind=first.kind, position=first.start),
        )
    code = (
        NoticeCode.CREDENTIAL_DETECTED
        if verdict.action is CredentialAction.WARN
        else NoticeCode.CREDENTIAL_MASKED
    )
    notices = [notice(code, kind=m.kind, position=m.start) for m in verdict.matches]
    return verdict.text, notices
