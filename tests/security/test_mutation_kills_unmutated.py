"""Code mutmut never mutates, checked by hand-made mutants (REQ-TEST-019).

mutmut 3 mutates plain function bodies only: not decorated functions (``lru_cache``,
``property``) and not module-level tables. docs/security.md section 5 lists the hand-made
mutants tried on the decorated functions of the security modules; these tests kill the ones
that survived the existing tests.
"""

from __future__ import annotations

import pytest

from rypsok.config.limits import limit
from rypsok.privacy import CredentialCheck, CredentialMode
from rypsok.search.normalize import returned_url

AWS = "AKIA" + "QWERTYUI234567AB"
GITHUB = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


@pytest.mark.req("REQ-PRIV-002")
@pytest.mark.parametrize("mode", [CredentialMode.DENY, CredentialMode.WARN, CredentialMode.MASK])
def test_the_verdict_names_the_earliest_credential(mode: CredentialMode) -> None:
    """With two credentials the refusal or notice names the first one in the text.

    Proves THR-04.
    """
    text = f"key {AWS} and token {GITHUB}"
    verdict = CredentialCheck(mode).apply(text)
    assert [m.kind for m in verdict.matches] == ["aws_access_key_id", "github_token"]
    first = verdict.first
    assert first is not None
    assert (first.kind, first.start) == ("aws_access_key_id", text.index(AWS))


@pytest.mark.req("REQ-RANK-003")
@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://ex_ample.рф/", "https://ex_ample.xn--p1ai/"),
        ("https://_dmarc.пример.рф/a", "https://_dmarc.xn--e1afmkfd.xn--p1ai/a"),
    ],
)
def test_underscore_is_a_name_character_in_unicode_hosts_too(url: str, expected: str) -> None:
    """An underscore is accepted in a name (real host names have it) whether or not the
    rest of the name is ASCII: UTS #46 maps without the STD3 rules that would refuse it."""
    assert returned_url(url, limit("LIM-F9")) == expected
