"""Each credential format against its documented shape (REQ-PRIV-002)."""

from __future__ import annotations

import pytest

from rypsok.privacy import CredentialKind, CredentialMatch, find_credentials, mask

from .samples import BUILDERS, sample

SAMPLES = sorted(BUILDERS)


@pytest.mark.parametrize("name", SAMPLES)
@pytest.mark.parametrize("seed", range(5))
def test_req_priv_002_each_format_is_found_with_its_kind_and_position(name: str, seed: int) -> None:
    """REQ-PRIV-002: a credential in a query is found, named by kind, located exactly."""
    kind, secret = sample(name, seed)
    text = f"why does {secret} not work"
    assert find_credentials(text) == [CredentialMatch(kind, 9, 9 + len(secret))]


@pytest.mark.parametrize("name", SAMPLES)
def test_req_priv_002_a_credential_alone_or_in_a_url_is_found(name: str) -> None:
    """REQ-PRIV-002: a credential is found at either end of a text and in a query string."""
    kind, secret = sample(name)
    assert [m.kind for m in find_credentials(secret)] == [kind]
    url = f"https://example.com/search?q=x&key={secret}&page=2"
    assert [m.kind for m in find_credentials(url)] == [kind]


def test_req_sec_016_kinds_come_from_the_fixed_vocabulary() -> None:
    """REQ-SEC-016: every reported kind is a member of the fixed vocabulary."""
    kinds = {sample(name)[0] for name in SAMPLES}
    assert kinds == {kind.value for kind in CredentialKind}


@pytest.mark.parametrize(
    "text",
    [
        "AKIA" + "IOSFODNN7EXAMPLE",  # AWS's documented example key id
        "AKIA" + "X" * 16,  # placeholder
        "sk_" + "test_" + "x" * 24,
        "hooks.slack.com/services/T00000000/B00000000/" + "X" * 24,
        "-----BEGIN RSA " + "PRIVATE KEY-----",  # a header alone: someone asks about PEM
        "what does -----BEGIN " + "PRIVATE KEY----- mean in my pem file and how do I convert it",
        "-----BEGIN PUBLIC KEY-----\n" + "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA" * 2,
        "-----BEGIN CERTIFICATE-----\n" + "MIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUF" * 2,
        "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC7 user@host",
        "xo" + "xb-my-bot-token",
        "gh" + "p_" + "a1B2" * 8,  # 32 characters: too short
        "AKIA" + "ABCDEFGHJKLMNOPQR",  # 17 characters: too long
        "xAKIA" + "QWERTYUIOPASDFGH",  # part of a longer word
        "AIza" + "SyD-short",
        "ey" + "JhbGciOiJIUzI1NiJ9 only a header",
        "pk_" + "live_" + "51H8s7Kx2ZyQ3abCDefGHij",  # publishable key: public by design
        "AC" + "0123456789abcdef0123456789abcdef",  # Twilio account SID: an identifier
        "scikit-learn sk-learn tutorial",
        "https://example.com:8443/Abcdefghijklmnopqrstuvwxyz0123456789",
    ],
)
def test_req_priv_002_near_misses_and_placeholders_are_not_flagged(text: str) -> None:
    """REQ-PRIV-002: only high-confidence formats count; placeholders and look-alikes pass."""
    assert find_credentials(text) == []


def test_req_priv_002_a_telegram_token_in_an_api_url_is_found() -> None:
    """REQ-PRIV-002: the bot token after "/bot" in a Telegram API URL is found."""
    _, token = sample("telegram_bot_token")
    url = f"https://api.telegram.org/bot{token}/getMe"
    assert find_credentials(url) == [CredentialMatch("telegram_bot_token", 28, 28 + len(token))]


def test_req_priv_002_an_azure_key_inside_a_connection_string_is_found() -> None:
    """REQ-PRIV-002: the AccountKey of a storage connection string is found and masked."""
    _, key = sample("azure_storage_key")
    text = f"DefaultEndpointsProtocol=https;AccountName=acct;{key};EndpointSuffix=core.windows.net"
    found = find_credentials(text)
    assert [m.kind for m in found] == ["azure_storage_key"]
    assert mask(text, found) == (
        "DefaultEndpointsProtocol=https;AccountName=acct;[REDACTED];EndpointSuffix=core.windows.net"
    )


def test_req_priv_002_a_url_encoded_private_key_is_found() -> None:
    """REQ-PRIV-002: a PEM key pasted into a URL (spaces and newlines encoded) is found."""
    _, pem = sample("private_key")
    encoded = pem.replace(" ", "%20").replace("\n", "%0A").replace("+", "%2B").replace("/", "%2F")
    found = find_credentials("https://paste.example/?text=" + encoded)
    assert [m.kind for m in found] == ["private_key"]


def test_req_priv_002_several_credentials_are_found_in_order() -> None:
    """REQ-PRIV-002: matches are sorted by start and do not overlap."""
    _, aws = sample("aws_access_key_id")
    _, gh = sample("github_token")
    text = f"{gh} and {aws}"
    found = find_credentials(text)
    assert [(m.kind, m.start) for m in found] == [
        ("github_token", 0),
        ("aws_access_key_id", len(gh) + 5),
    ]
    assert mask(text, found) == "[REDACTED] and [REDACTED]"
