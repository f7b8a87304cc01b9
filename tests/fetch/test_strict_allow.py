"""The strict-mode allow list (REQ-SEC-021): what ``[fetch] strict_allow`` accepts at start and
what each rule matches.

A rule is a host only: a name (exactly that name), ``*.name`` (every name below it, not the
name itself) or an IP address (URLs written with that address). Invalid entries stop the start
with a message naming the key; a list without ``strict = true`` is refused too.
"""

from __future__ import annotations

import pytest

from rypsok.config.load import ConfigError, parse_settings
from rypsok.config.schema import FetchSettings
from rypsok.egress.urls import parse_url
from rypsok.fetch.strict import HostRules


def strict_allow(*rules: str) -> list[str]:
    """The normalized list the configuration keeps for ``rules``."""
    data = {"schema_version": 1, "fetch": {"strict": True, "strict_allow": list(rules)}}
    return parse_settings(data).fetch.strict_allow


@pytest.mark.req("REQ-SEC-021")
def test_req_sec_021_strict_allow_entries_are_normalized_like_url_hosts() -> None:
    """Entries are compared in the form the URL parser gives a host: lower case, a Unicode
    name in its ASCII (UTS 46) form, an IPv6 address compressed."""
    assert strict_allow(
        " Docs.Python.org ", "*.Example.ORG", "*.bücher.example", "2001:DB8:0::1", "127.0.0.1"
    ) == ["docs.python.org", "*.example.org", "*.xn--bcher-kva.example", "2001:db8::1", "127.0.0.1"]


@pytest.mark.req("REQ-SEC-021")
@pytest.mark.parametrize(
    "entry",
    [
        "https://docs.python.org",  # a scheme: a rule is a host only
        "docs.python.org/3/",  # a path
        "docs.python.org:443",  # a port
        "[::1]",  # brackets
        "*",  # everything is no rule
        "*.",
        "*.*.example.org",  # a star only as the leading label
        "docs.*.org",
        "example..org",  # an empty label
        "example.org.",  # a trailing dot (the URL parser refuses such hosts)
        "-example.org",
        "127.1",  # a URL parser reads this as 127.0.0.1: the rule could never match
        "example.0x10",
        "",
        "exa mple.org",
    ],
)
def test_req_sec_021_invalid_strict_allow_entries_stop_the_start_naming_the_key(entry: str) -> None:
    """An entry that is no host rule is refused at start; the message names
    fetch.strict_allow and the entry, and says what a rule looks like."""
    with pytest.raises(ConfigError) as refused:
        strict_allow("docs.python.org", entry)
    message = str(refused.value)
    assert "invalid value for fetch.strict_allow" in message
    assert repr(entry) in message and "*.example.org" in message


@pytest.mark.req("REQ-SEC-021")
def test_req_sec_021_strict_allow_without_strict_is_refused() -> None:
    """Without strict mode every URL is fetched, so a list the operator believes limits
    fetches would limit nothing: the start is refused, naming both keys."""
    with pytest.raises(ConfigError, match="strict_allow has effect only with strict = true"):
        parse_settings({"schema_version": 1, "fetch": {"strict_allow": ["docs.python.org"]}})
    assert FetchSettings(strict=True, strict_allow=["docs.python.org"]).strict_allow


def host(url: str) -> str:
    """The host of ``url`` as the egress URL parser gives it (what the rules are matched on)."""
    return parse_url(url, allow_http=True, ports=None).host


@pytest.mark.req("REQ-SEC-021")
@pytest.mark.parametrize(
    ("url", "allowed"),
    [
        ("https://docs.python.org/3/library/", True),
        ("http://docs.python.org:8080/x?y#z", True),  # any scheme, port, path: host only
        ("https://DOCS.python.org/", True),
        ("https://www.docs.python.org/", False),  # a name rule is that name only
        ("https://python.org/", False),
        ("https://docs.python.org.evil.example/", False),
        ("https://a.example.org/", True),
        ("https://a.b.example.org/", True),
        ("https://example.org/", False),  # *.name is below the name, not the name
        ("https://badexample.org/", False),
        ("https://example.org.evil.example/", False),
        ("https://xn--bcher-kva.example/", False),
        ("https://shop.bücher.example/", True),  # the URL's Unicode host, in ASCII form
        ("https://[2001:db8:0:0::1]/", True),
        ("https://127.0.0.1/", True),
        ("https://2130706433/", True),  # another spelling of 127.0.0.1 is the same host
        ("https://127.0.0.2/", False),
    ],
)
def test_req_sec_021_a_rule_matches_the_host_and_nothing_else(url: str, allowed: bool) -> None:
    """Each rule kind matches exactly what the configuration reference says."""
    rules = HostRules(
        strict_allow(
            "docs.python.org", "*.example.org", "*.bücher.example", "2001:db8::1", "127.0.0.1"
        )
    )
    assert rules.matches(host(url)) is allowed


def test_a_suffix_rule_never_matches_an_address() -> None:
    """``*.0.0.1`` is refused at start (its last label is a number); a rule list built in code
    with such a suffix still does not let an address literal through."""
    assert HostRules(["*.0.0.1"]).matches("127.0.0.1") is False
    assert HostRules([]).matches("docs.python.org") is False
