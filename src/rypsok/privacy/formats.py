"""The credential formats rypsok recognises in queries and URLs (REQ-PRIV-002).

Only high-confidence formats: each has a fixed prefix or structure published by its issuer,
so ordinary queries, news URLs, commit hashes and UUIDs never match. Formats that are a
bare run of hex or base64 (Twilio account SIDs, AWS secret keys, generic API keys) are
left out on purpose: they cannot be told from ordinary identifiers.

Each pattern marks the random part of the credential as the group ``secret``; a match
whose random part has fewer than six distinct letters and digits is a documentation
placeholder ("AKIAXXXXXXXXXXXXXXXX", "sk_test_xxxxxxxx...") and is ignored, as are AWS's
documented example key ids, which end in "EXAMPLE".

All patterns start with a literal or a lookbehind followed by one, use bounded or
non-overlapping repetitions, and so run in linear time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Final


class CredentialKind(StrEnum):
    """The fixed vocabulary of credential kinds (REQ-SEC-016): it names, never quotes."""

    # The values are names of kinds; the security linter reads "*_TOKEN" as a password.
    AWS_ACCESS_KEY_ID = "aws_access_key_id"
    GITHUB_TOKEN = "github_token"  # noqa: S105
    GITLAB_TOKEN = "gitlab_token"  # noqa: S105
    SLACK_TOKEN = "slack_token"  # noqa: S105
    SLACK_WEBHOOK = "slack_webhook"
    STRIPE_KEY = "stripe_key"
    GOOGLE_API_KEY = "google_api_key"
    PRIVATE_KEY = "private_key"
    JWT = "jwt"
    OPENAI_API_KEY = "openai_api_key"
    ANTHROPIC_API_KEY = "anthropic_api_key"
    NPM_TOKEN = "npm_token"  # noqa: S105
    PYPI_TOKEN = "pypi_token"  # noqa: S105
    SENDGRID_API_KEY = "sendgrid_api_key"
    TWILIO_API_KEY = "twilio_api_key"
    TELEGRAM_BOT_TOKEN = "telegram_bot_token"  # noqa: S105
    DISCORD_WEBHOOK = "discord_webhook"
    AZURE_STORAGE_KEY = "azure_storage_key"


@dataclass(frozen=True, slots=True)
class CredentialFormat:
    """One credential format: its kind and the pattern that finds it."""

    kind: CredentialKind
    pattern: re.Pattern[str]


# Boundaries: a credential is not part of a longer token. "_" and "-" (the rest of the
# base64url alphabet) count as token characters where the format itself uses them.
_START_ALNUM: Final = r"(?<![A-Za-z0-9])"
_START_WORD: Final = r"(?<![A-Za-z0-9_])"
_START_B64URL: Final = r"(?<![A-Za-z0-9_-])"
_END_ALNUM: Final = r"(?![A-Za-z0-9])"
_END_WORD: Final = r"(?![A-Za-z0-9_])"
_END_B64URL: Final = r"(?![A-Za-z0-9_-])"
# A space inside a PEM armour line, as typed, or encoded in a URL.
_SP: Final = r"(?:[ +]|%20)"
# A base64 character, also percent-encoded as a URL carries "+" and "/".
_B64: Final = r"[A-Za-z0-9+/]|%2[BbFf]"
# The scheme of a webhook URL is optional; the host must not continue a longer name.
_URL_START: Final = r"(?:https?://)?(?<![A-Za-z0-9.-])"

_SOURCES: Final[tuple[tuple[CredentialKind, str], ...]] = (
    # IAM unique ids: AKIA (long-term), ASIA (STS), ABIA (STS bearer), ACCA (context),
    # then 16 base32 characters (A-Z, 2-7).
    (
        CredentialKind.AWS_ACCESS_KEY_ID,
        rf"{_START_ALNUM}(?:AKIA|ASIA|ABIA|ACCA)(?P<secret>[A-Z2-7]{{16}}){_END_ALNUM}",
    ),
    # Classic tokens: prefix and 36 base62 characters (GitHub may lengthen them);
    # fine-grained tokens: github_pat_, 22 characters, "_", 59 characters.
    (
        CredentialKind.GITHUB_TOKEN,
        rf"{_START_WORD}(?:gh[pousr]_(?P<secret>[A-Za-z0-9]{{36,251}})"
        rf"|github_pat_(?P<pat>[A-Za-z0-9_]{{40,244}})){_END_WORD}",
    ),
    # Personal access tokens: glpat- and 20 characters; the routable format adds
    # ".<2 version><7 checksum>".
    (
        CredentialKind.GITLAB_TOKEN,
        rf"{_START_B64URL}glpat-(?P<secret>[A-Za-z0-9_-]{{20,300}})"
        rf"(?:\.[0-9a-z]{{9}})?{_END_B64URL}",
    ),
    # Bot, user, workspace and legacy tokens: xox?- and one to four numeric ids before
    # the random tail (xoxb-<team>-<bot>-<24>, xoxp-<3 ids>-<32 hex>, xoxa-2-...).
    (
        CredentialKind.SLACK_TOKEN,
        rf"{_START_B64URL}xox[abprs]-(?P<secret>(?:[0-9]{{1,13}}-){{1,4}}[A-Za-z0-9]{{8,64}})"
        rf"{_END_B64URL}",
    ),
    (
        CredentialKind.SLACK_WEBHOOK,
        rf"{_URL_START}hooks\.slack\.com/(?:services|workflows|triggers)/"
        rf"(?P<secret>[A-Za-z0-9+/_-]{{20,250}})",
    ),
    # Secret and restricted keys, live and test; publishable keys (pk_) are public.
    (
        CredentialKind.STRIPE_KEY,
        rf"{_START_WORD}[sr]k_(?:live|test)_(?P<secret>[A-Za-z0-9]{{16,247}}){_END_WORD}",
    ),
    (
        CredentialKind.GOOGLE_API_KEY,
        rf"{_START_B64URL}AIza(?P<secret>[A-Za-z0-9_-]{{35}}){_END_B64URL}",
    ),
    # A PEM private key: the armour header, then a run of at least 40 base64 characters
    # (a header alone, or a header followed by prose, is someone asking about the
    # format), then the rest of the body and the footer if present. Encrypted keys carry
    # "Proc-Type:" lines before the body; in a URL the body arrives percent-encoded.
    (
        CredentialKind.PRIVATE_KEY,
        rf"-----BEGIN{_SP}(?:[A-Z0-9]{{1,10}}{_SP}){{0,3}}PRIVATE{_SP}KEY(?:{_SP}BLOCK)?-----"
        rf"(?P<secret>(?:[^-]|-(?!----)){{0,200}}?(?:{_B64}){{40,}}(?:{_B64}|[=\s]|%[0-9A-Fa-f]{{2}})*)"
        rf"(?:-----END{_SP}(?:[A-Z0-9]{{1,10}}{_SP}){{0,3}}PRIVATE{_SP}KEY(?:{_SP}BLOCK)?-----)?",
    ),
    # Header and payload are base64url JSON objects, so both start with "eyJ" ('{"');
    # the signature may be empty (alg "none").
    (
        CredentialKind.JWT,
        rf"{_START_B64URL}(?P<secret>eyJ[A-Za-z0-9_-]{{5,}}\.eyJ[A-Za-z0-9_-]{{5,}}"
        rf"\.[A-Za-z0-9_-]*){_END_B64URL}",
    ),
    # Anthropic before OpenAI in meaning only: "sk-ant-" never matches the OpenAI forms.
    (
        CredentialKind.ANTHROPIC_API_KEY,
        rf"{_START_B64URL}sk-ant-(?P<secret>[A-Za-z0-9_-]{{32,300}}){_END_B64URL}",
    ),
    # Project, service-account and admin keys; keys of every generation embed
    # "T3BlbkFJ" (base64 of "OpenAI").
    (
        CredentialKind.OPENAI_API_KEY,
        rf"{_START_B64URL}sk-(?:(?:proj|svcacct|admin)-(?P<secret>[A-Za-z0-9_-]{{20,300}})"
        rf"|(?P<legacy>[A-Za-z0-9_-]{{10,150}}T3BlbkFJ[A-Za-z0-9_-]{{10,150}})){_END_B64URL}",
    ),
    (
        CredentialKind.NPM_TOKEN,
        rf"{_START_WORD}npm_(?P<secret>[A-Za-z0-9]{{36}}){_END_WORD}",
    ),
    # Macaroons whose first caveat names pypi.org (or test.pypi.org), base64-encoded.
    (
        CredentialKind.PYPI_TOKEN,
        rf"{_START_B64URL}pypi-Ag(?:EIcHlwaS5vcmc|ENdGVzdC5weXBpLm9yZw)"
        rf"(?P<secret>[A-Za-z0-9_-]{{50,1000}}){_END_B64URL}",
    ),
    # SG.<22 key id>.<43 secret>
    (
        CredentialKind.SENDGRID_API_KEY,
        rf"(?<![A-Za-z0-9_.-])SG\.(?P<secret>[A-Za-z0-9_-]{{22}}\.[A-Za-z0-9_-]{{43}})"
        rf"{_END_B64URL}",
    ),
    # API key SIDs: SK and 32 lower-case hex digits. Account SIDs (AC...) are identifiers,
    # not secrets, and are not matched.
    (
        CredentialKind.TWILIO_API_KEY,
        rf"{_START_WORD}SK(?P<secret>[0-9a-f]{{32}}){_END_WORD}",
    ),
    # <bot id>:<35 characters starting with A>; in an API URL it follows "/bot".
    (
        CredentialKind.TELEGRAM_BOT_TOKEN,
        rf"(?:(?<=bot)|(?<![A-Za-z0-9_:-]))(?P<secret>[0-9]{{5,16}}:A[A-Za-z0-9_-]{{34}})"
        rf"{_END_B64URL}",
    ),
    (
        CredentialKind.DISCORD_WEBHOOK,
        rf"{_URL_START}(?:(?:ptb|canary)\.)?discord(?:app)?\.com/api(?:/v[0-9]{{1,2}})?/webhooks/"
        rf"(?P<secret>[0-9]{{17,20}}/[A-Za-z0-9_-]{{40,100}})",
    ),
    # AccountKey=<88 base64 characters> in a storage connection string.
    (
        CredentialKind.AZURE_STORAGE_KEY,
        rf"{_START_ALNUM}(?i:accountkey)=(?P<secret>[A-Za-z0-9+/]{{86}}==)",
    ),
)

FORMATS: Final = tuple(CredentialFormat(kind, re.compile(source)) for kind, source in _SOURCES)
"""Every recognised format, in a fixed order."""

_MIN_DISTINCT: Final = 6


def is_placeholder(match: re.Match[str]) -> bool:
    """Whether a pattern's match is a documentation placeholder rather than a credential."""
    secret = next(
        (value for value in match.groupdict().values() if value is not None), match.group()
    )
    distinct = {char for char in secret if char.isascii() and char.isalnum()}
    return len(distinct) < _MIN_DISTINCT or match.group().endswith("EXAMPLE")
