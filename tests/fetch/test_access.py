"""Access classification (ADR-0005; INV-1, INV-2)."""

from __future__ import annotations

import pytest

from rypsok.contract.vocabulary import Access
from rypsok.fetch import Extractor
from rypsok.fetch.access import AccessSignals, Evidence, classify_access, is_login_route
from rypsok.fetch.pipeline import run

URL = "https://site.example/articles/1"
CONTENT = AccessSignals(usable_content=True)
LOGIN_FORM = AccessSignals(password_control=True, identity_form=True, form_in_main=True)


def classify(
    status: int = 200,
    headers: dict[str, str] | None = None,
    url: str = URL,
    redirected: bool = False,
    signals: AccessSignals | None = CONTENT,
) -> Access:
    return classify_access(
        status=status, headers=headers or {}, url=url, redirected=redirected, signals=signals
    ).access


def test_direct_signals_make_a_page_restricted() -> None:
    assert classify(status=401) is Access.RESTRICTED
    assert classify(headers={"WWW-Authenticate": 'Basic realm="x"'}) is Access.RESTRICTED
    assert classify(url="https://site.example/users/sign_in?next=%2Fa", redirected=True) is (
        Access.RESTRICTED
    )
    assert classify(signals=LOGIN_FORM) is Access.RESTRICTED
    verdict = classify_access(status=401, headers={}, url=URL, redirected=False, signals=None)
    assert verdict.evidence == (Evidence.HTTP_401,)


def test_indirect_signals_never_make_a_page_restricted() -> None:
    # A login-like path reached without a redirect, with content: open.
    assert classify(url="https://site.example/login-tips") is Access.OPEN
    assert classify(url="https://site.example/login", signals=AccessSignals()) is Access.UNKNOWN
    # A password control next to usable content: open.
    assert (
        classify(
            signals=AccessSignals(
                password_control=True, identity_form=True, form_in_main=True, usable_content=True
            )
        )
        is Access.OPEN
    )
    # A password control in the sidebar of an empty page: unknown, not restricted.
    assert classify(signals=AccessSignals(password_control=True, identity_form=True)) is (
        Access.UNKNOWN
    )
    assert classify(signals=None) is Access.UNKNOWN
    assert classify(signals=AccessSignals()) is Access.UNKNOWN


@pytest.mark.parametrize(
    ("url", "login"),
    [
        ("https://a.example/login", True),
        ("https://a.example/Account/Login?ReturnUrl=/x", True),
        ("https://a.example/wp-login.php", True),
        ("https://a.example/session/new", True),
        ("https://a.example/session/history", False),
        ("https://a.example/blog/how-to-login-faster", False),
        ("https://a.example/catalogue", False),
    ],
)
def test_login_routes(url: str, login: bool) -> None:
    assert is_login_route(url) is login


ARTICLE = "<p>" + "Readable article text with real content for the reader. " * 10 + "</p>"
SIGN_IN_WORDS = f"<main><h1>Sign in to comment</h1>{ARTICLE}<p>Log in or sign in.</p></main>"
LOGIN_PAGE = (
    "<main><h1>Sign in</h1><form action='/session' method='post'>"
    "<label>Email <input type='email' name='email'></label>"
    "<label>Password <input type='password' name='password' value='hunter2'></label>"
    "<button type='submit'>Sign in</button></form><p>Forgot your password?</p></main>"
)
SIDEBAR_LOGIN = (
    f"<aside><form><input name='u'><input type='password'><button>Go</button></form></aside>"
    f"<main><h1>News</h1>{ARTICLE}</main>"
)
HIDDEN_LOGIN = f"<div hidden><form><input name='u'><input type='password'></form></div>{ARTICLE}"


@pytest.mark.parametrize(
    ("page", "access"),
    [
        (SIGN_IN_WORDS, Access.OPEN),
        (LOGIN_PAGE, Access.RESTRICTED),
        (SIDEBAR_LOGIN, Access.OPEN),
        (HIDDEN_LOGIN, Access.OPEN),
    ],
)
@pytest.mark.anyio
async def test_pages_are_classified_from_bounded_worker_signals(
    extractor: Extractor, page: str, access: Access
) -> None:
    extraction = await extractor.extract(page.encode(), "text/html", URL)
    assert extraction.access.access is access


def test_workers_return_only_booleans_as_evidence() -> None:
    result = run({"content_type": "text/html", "url": URL}, LOGIN_PAGE.encode())
    assert result.status == "ok"
    signals = result.signals
    assert signals is not None
    assert all(isinstance(v, bool) for v in signals.model_dump().values())
    assert "hunter2" not in signals.model_dump_json()
