"""Fabricated credentials in each documented format, built at run time.

The values are random, never real, and assembled from parts so that this file does not
itself look like a leaked secret to a repository scanner.
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable

ALNUM = string.ascii_letters + string.digits
UPPER_ALNUM = string.ascii_uppercase + string.digits
B64URL = ALNUM + "_-"
B64 = ALNUM + "+/"
HEX = "0123456789abcdef"
DIGITS = string.digits
BASE32 = string.ascii_uppercase + "234567"

Draw = Callable[[str, int], str]


def _pem(r: Draw) -> str:
    body = "\n".join(r(B64, 64) for _ in range(4)) + "\n" + r(B64, 20) + "=="
    return "-----BEGIN RSA " + "PRIVATE KEY-----\n" + body + "\n-----END RSA PRIVATE KEY-----"


# Sample name -> (the kind find_credentials reports, how to build one).
BUILDERS: dict[str, tuple[str, Callable[[random.Random, Draw], str]]] = {
    "aws_access_key_id": (
        "aws_access_key_id",
        lambda g, r: g.choice(["AKIA", "ASIA", "ABIA", "ACCA"]) + r(BASE32, 16),
    ),
    "github_token": ("github_token", lambda g, r: "gh" + g.choice("pousr") + "_" + r(ALNUM, 36)),
    "github_pat": (
        "github_token",
        lambda g, r: "github" + "_pat_" + r(ALNUM, 22) + "_" + r(ALNUM, 59),
    ),
    "gitlab_token": ("gitlab_token", lambda g, r: "gl" + "pat-" + r(ALNUM, 20)),
    "slack_bot_token": (
        "slack_token",
        lambda g, r: "xo" + "xb-" + r(DIGITS, 12) + "-" + r(DIGITS, 13) + "-" + r(ALNUM, 24),
    ),
    "slack_user_token": (
        "slack_token",
        lambda g, r: "xo" + "xp-" + "-".join(r(DIGITS, 11) for _ in range(3)) + "-" + r(HEX, 32),
    ),
    "slack_webhook": (
        "slack_webhook",
        lambda g, r: (
            "https://hooks.slack.com/services/T"
            + r(UPPER_ALNUM, 8)
            + "/B"
            + r(UPPER_ALNUM, 10)
            + "/"
            + r(ALNUM, 24)
        ),
    ),
    "stripe_key": (
        "stripe_key",
        lambda g, r: g.choice(["sk", "rk"]) + "_" + g.choice(["live", "test"]) + "_" + r(ALNUM, 24),
    ),
    "google_api_key": ("google_api_key", lambda g, r: "AI" + "za" + r(B64URL, 35)),
    "private_key": ("private_key", lambda g, r: _pem(r)),
    "jwt": (
        "jwt",
        lambda g, r: "ey" + "JhbGciOiJIUzI1NiJ9.ey" + "J" + r(B64URL, 40) + "." + r(B64URL, 43),
    ),
    "openai_project_key": (
        "openai_api_key",
        lambda g, r: "sk-" + "proj-" + r(B64URL, 74) + "T3Blbk" + "FJ" + r(B64URL, 74),
    ),
    "openai_legacy_key": (
        "openai_api_key",
        lambda g, r: "sk-" + r(ALNUM, 20) + "T3Blbk" + "FJ" + r(ALNUM, 20),
    ),
    "anthropic_api_key": (
        "anthropic_api_key",
        lambda g, r: "sk-" + "ant-api03-" + r(B64URL, 93) + "AA",
    ),
    "npm_token": ("npm_token", lambda g, r: "npm" + "_" + r(ALNUM, 36)),
    "pypi_token": ("pypi_token", lambda g, r: "py" + "pi-AgEIcHlwaS5vcmc" + r(B64URL, 120)),
    "sendgrid_api_key": (
        "sendgrid_api_key",
        lambda g, r: "S" + "G." + r(B64URL, 22) + "." + r(B64URL, 43),
    ),
    "twilio_api_key": ("twilio_api_key", lambda g, r: "S" + "K" + r(HEX, 32)),
    "telegram_bot_token": ("telegram_bot_token", lambda g, r: r(DIGITS, 9) + ":A" + r(B64URL, 34)),
    "discord_webhook": (
        "discord_webhook",
        lambda g, r: "https://discord.com/api/webhooks/" + r(DIGITS, 18) + "/" + r(B64URL, 68),
    ),
    "azure_storage_key": ("azure_storage_key", lambda g, r: "Account" + "Key=" + r(B64, 86) + "=="),
}


def sample(name: str, seed: int = 0) -> tuple[str, str]:
    """The reported kind and one fabricated credential of the sample ``name``."""
    rng = random.Random(f"{name}-{seed}")

    def draw(alphabet: str, n: int) -> str:
        return "".join(rng.choice(alphabet) for _ in range(n))

    kind, build = BUILDERS[name]
    return kind, build(rng, draw)
