"""Access classification of a fetched page (ADR-0005; INV-1, INV-2).

:func:`classify_access` is the one pure classifier. It answers ``restricted`` only on a direct
signal:

* HTTP status 401;
* an authentication challenge header (``WWW-Authenticate``);
* a redirect that ended on a dedicated login route;
* a blocking login form (a password control in an identity form) with no usable content.

Authentication words ("sign in", "log in") never count; a password control next to usable
content, a login-like path that was not reached by a redirect, or too little evidence give
``unknown``. A page with usable content and no direct signal is ``open``.

The evidence a worker contributes is :class:`AccessSignals`: bounded booleans only, never labels,
values or page text.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from urllib.parse import urlsplit

from rypsok.contract.vocabulary import Access


class Evidence(StrEnum):
    """The evidence codes of an access verdict (a fixed vocabulary, for logs and tests)."""

    HTTP_401 = "http_401"
    AUTH_CHALLENGE = "auth_challenge"
    LOGIN_REDIRECT = "login_redirect"
    BLOCKING_LOGIN_FORM = "blocking_login_form"
    USABLE_CONTENT = "usable_content"
    PASSWORD_CONTROL = "password_control"  # noqa: S105 - an evidence code, not a secret
    LOGIN_PATH = "login_path"
    NO_USABLE_CONTENT = "no_usable_content"


@dataclass(frozen=True, slots=True)
class AccessSignals:
    """Bounded boolean DOM evidence collected by a worker (never text or values).

    ``password_control``: a visible password input exists. ``identity_form``: a password input
    shares its form with an identity field (text, e-mail, username) or a submit control.
    ``form_in_main``: such a form is outside site chrome. ``usable_content``: the extracted main
    text is long enough to be an answer on its own.
    """

    password_control: bool = False
    identity_form: bool = False
    form_in_main: bool = False
    usable_content: bool = False


@dataclass(frozen=True, slots=True)
class AccessVerdict:
    """The classification and the evidence that decided it."""

    access: Access
    evidence: tuple[Evidence, ...]


_LOGIN_SEGMENTS = frozenset(
    {
        "login",
        "log-in",
        "log_in",
        "signin",
        "sign-in",
        "sign_in",
        "logon",
        "log-on",
        "sso",
        "authenticate",
        "authorize",
        "wp-login",
        "session",
        "sessions",
        "anmelden",
        "connexion",
        "iniciar-sesion",
        "accedi",
        "inloggen",
        "ログイン",
        "登录",
    }
)


def is_login_route(url: str) -> bool:
    """Whether the path of ``url`` names a dedicated login route (``/login``, ``/users/sign_in``,
    ``/wp-login.php``, ``/session/new``)."""
    try:
        path = urlsplit(url).path
    except ValueError:
        return False
    segments = [s.lower() for s in path.split("/") if s]
    for i, segment in enumerate(segments):
        stem = segment.rsplit(".", 1)[0] if "." in segment else segment
        if stem in _LOGIN_SEGMENTS:
            if stem in ("session", "sessions"):
                # "/session" alone is too generic; "/session/new" is Rails' login route.
                if i + 1 < len(segments) and segments[i + 1] == "new":
                    return True
                continue
            return True
    return False


def classify_access(
    *,
    status: int,
    headers: Mapping[str, str],
    url: str,
    redirected: bool,
    signals: AccessSignals | None,
) -> AccessVerdict:
    """Classify access from the transport facts and the worker's signals (pure)."""
    if status == 401:
        return AccessVerdict(Access.RESTRICTED, (Evidence.HTTP_401,))
    if any(name.lower() == "www-authenticate" for name in headers):
        return AccessVerdict(Access.RESTRICTED, (Evidence.AUTH_CHALLENGE,))
    if redirected and is_login_route(url):
        return AccessVerdict(Access.RESTRICTED, (Evidence.LOGIN_REDIRECT,))
    if signals is None:
        return AccessVerdict(Access.UNKNOWN, ())
    if (
        signals.password_control
        and signals.identity_form
        and signals.form_in_main
        and not signals.usable_content
    ):
        return AccessVerdict(Access.RESTRICTED, (Evidence.BLOCKING_LOGIN_FORM,))
    if signals.usable_content and 200 <= status < 300:
        return AccessVerdict(Access.OPEN, (Evidence.USABLE_CONTENT,))
    evidence: list[Evidence] = [Evidence.NO_USABLE_CONTENT]
    if signals.password_control:
        evidence.append(Evidence.PASSWORD_CONTROL)
    if is_login_route(url):
        evidence.append(Evidence.LOGIN_PATH)
    return AccessVerdict(Access.UNKNOWN, tuple(evidence))
