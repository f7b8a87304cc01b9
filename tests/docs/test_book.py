"""The book under docs/ (REQ-DOC-001, REQ-DOC-003, REQ-DOC-004, REQ-PRIV-005, REQ-CMP-006,
REQ-CTX-010, REQ-DEP-003, REQ-OBS-007, REQ-RES-009).

What can be checked without building the site (CI builds it with ``mkdocs build --strict``):
the tutorials show the checked examples and only commands the command line accepts, and the
pages that must cover a vocabulary or a statement do.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from rypsok.cli import _parser
from rypsok.contract.vocabulary import ErrorKind, NoticeCode, Outcome, Reason
from tests.docs.test_examples import load_gen_docs
from tests.support import ROOT

DOCS = ROOT / "docs"
EXAMPLES = ROOT / "examples"
SNIPPET = re.compile(r'^\s*--8<--\s+"([^"]+)"\s*$', re.MULTILINE)
TUTORIALS = [
    "tutorials/first-search.md",
    "tutorials/fetching-pages.md",
    "tutorials/brave-key.md",
    "tutorials/http-service.md",
    "tutorials/replicas.md",
]


def page(name: str) -> str:
    return (DOCS / name).read_text(encoding="utf-8")


def included() -> dict[str, list[str]]:
    """Snippet path -> the pages that include it."""
    found: dict[str, list[str]] = {}
    for path in sorted(DOCS.rglob("*.md")):
        for target in SNIPPET.findall(path.read_text(encoding="utf-8")):
            found.setdefault(target, []).append(path.relative_to(DOCS).as_posix())
    return found


def test_req_doc_001_tutorials_in_the_order_features_are_met() -> None:
    """REQ-DOC-001: the navigation lists the five tutorials first, in order."""
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    positions = [nav.index(f": {name}") for name in TUTORIALS]
    assert positions == sorted(positions)
    assert nav.index("tutorials/first-search.md") < nav.index("reference/tools.md")


def test_req_doc_001_every_included_file_exists() -> None:
    """REQ-DOC-001: every file a page includes with pymdownx.snippets exists."""
    missing = [target for target in included() if not (ROOT / target).is_file()]
    assert not missing


def test_req_doc_002_every_checked_example_is_shown() -> None:
    """REQ-DOC-002, REQ-DOC-001: every checked example and transcript appears in the book, so
    what the book shows is what CI checks."""
    shown = set(included())
    files = [
        p
        for folder in ("config", "calls", "hosts", "responses")
        for p in (EXAMPLES / folder).rglob("*")
        if p.is_file()
    ]
    files += list((DOCS / "transcripts").glob("*.txt"))
    not_shown = [p.relative_to(ROOT).as_posix() for p in files]
    assert [p for p in not_shown if p not in shown] == []


def shell_lines(text: str) -> list[str]:
    blocks = re.findall(r"```sh\n(.*?)```", text, re.DOTALL)
    return [line.strip() for block in blocks for line in block.splitlines() if line.strip()]


@pytest.mark.parametrize("name", TUTORIALS)
def test_req_doc_001_tutorial_commands_are_the_checked_ones(name: str) -> None:
    """REQ-DOC-001: every ``rypsok`` command a tutorial shows is accepted by the command line,
    and every configuration it names is a checked example (examples/config/)."""
    commands = [line for line in shell_lines(page(name)) if line.startswith("rypsok")]
    for line in commands:
        args = shlex.split(line)[1:]
        if args == ["--version"]:
            continue
        parsed = _parser().parse_args(args)
        if parsed.config is not None:
            assert (EXAMPLES / "config" / parsed.config).is_file(), line
    configs = SNIPPET.findall(page(name))
    for target in configs:
        if target.endswith(".toml"):
            assert target.startswith("examples/config/")


def test_req_doc_003_reading_a_response_covers_every_value() -> None:
    """REQ-DOC-003: every outcome, notice code, error kind and reason is explained, and the
    external-data rule is stated in words a prompt can carry."""
    text = page("reading-a-response.md")
    values = [*Outcome, *NoticeCode, *ErrorKind, *Reason]
    missing = [v.value for v in values if f"`{v.value}`" not in text]
    assert missing == []
    assert "never as\n    instructions" in text
    assert "For the host's prompt" in text


def test_req_doc_004_troubleshooting_uses_every_tool_of_diagnosis() -> None:
    """REQ-DOC-004: symptoms map to causes and fixes through check, engine_status, the log
    lines, the HTTP statuses and the exit codes; every log event it names exists."""
    text = page("troubleshooting.md")
    for needle in ("rypsok check", "engine_status", "| 0 |", "| 1 |", "| 2 |"):
        assert needle in text
    for status in (401, 403, 408, 421, 503):
        assert f"| {status} |" in text
    events = set(load_gen_docs()._log_calls())
    for event in (
        "start",
        "call",
        "engine_failed",
        "circuit",
        "engine_inactive",
        "robots_unreachable",
        "fetch_hop",
    ):
        assert event in events and f"`{event}`" in text, event
    named = set(
        re.findall(r"\| `([a-z_]+)` \| (?:at start|the process|every|an engine|a site)", text)
    )
    assert named <= events


def test_req_priv_005_disclosure_statement() -> None:
    """REQ-PRIV-005, REQ-CMP-006, REQ-RES-009, REQ-CTX-010: the book states what leaves the
    host and to whom, content minimization, ephemeral health and the budget unit."""
    text = " ".join(page("disclosure.md").split())
    for statement in (
        "**the query**",
        "**every enabled engine of the category**",
        "**the URL**",
        "**the site the URL names**",
        "the host's network address",
        "confidentiality hygiene, not anonymity",
        "keeps none of it",
        "lost at every restart",
        "Unicode scalar values",
        "Japanese",
    ):
        assert statement in text, statement


def test_req_dep_003_network_restriction_at_the_os_level() -> None:
    """REQ-DEP-003, REQ-DEP-004: nftables, systemd and Kubernetes fences, and the needs."""
    text = page("network.md")
    for needle in (
        "table inet",
        "tcp dport { 80, 443 } accept",
        "IPAddressDeny=",
        "IPAddressAllow=",
        "kind: NetworkPolicy",
        "MemoryMax=",
        "LimitNOFILE=",
    ):
        assert needle in text, needle


def test_req_obs_007_rising_refusals_named_a_defect_of_the_interface() -> None:
    """REQ-OBS-007: the book names a rising refused-call count a defect of the interface."""
    for name in ("reading-a-response.md", "troubleshooting.md", "reference/metrics.md"):
        assert "defect of the interface" in " ".join(page(name).split()), name


def test_req_doc_001_book_builds_without_network() -> None:
    """The site build fetches nothing: strict, no web fonts, no social cards, no remote assets."""
    lines = (ROOT / "mkdocs.yml").read_text(encoding="utf-8").splitlines()
    config = "\n".join(line.split("#", 1)[0] for line in lines)
    assert "strict: true" in config
    assert re.search(r"^\s+font: false$", config, re.MULTILINE)
    for forbidden in ("social", "extra_javascript", "extra_css", "google", "privacy"):
        assert forbidden not in config, forbidden


def test_generated_pages_are_in_the_book() -> None:
    """Every page scripts/gen_docs.py writes under docs/ is in the navigation or included."""
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    gen_docs = load_gen_docs()
    for name in gen_docs.PAGES:
        path = Path(name)
        if path.parts[0] != "docs":
            continue
        relative = path.relative_to("docs").as_posix()
        assert relative in nav or name in included(), name
