"""The hand-written parts of the book that describe code: they must name what the code does.

The aggregation rules in docs/design.md name their tests, the cleaning steps are listed in the
code's order, and the disclosure statement names every credential format the check knows
(REQ-TEST-001, REQ-CTX-004, REQ-SEC-015, REQ-PRIV-002, REQ-PRIV-005, REQ-AGG-001..009).
"""

from __future__ import annotations

import ast
import re

from rypsok.boundary.pipeline import field_stages
from rypsok.privacy.formats import FORMATS, CredentialKind
from rypsok.search.pipeline import MIN_REQUEST_S
from tests.docs.test_book import page
from tests.support import ROOT

TEST_REFERENCE = re.compile(r"`(tests/[\w/]+\.py)::(test_\w+)`")


def section(text: str, heading: str) -> str:
    """The text of the ``## heading`` section, up to the next ``## ``."""
    start = text.index(f"\n## {heading}")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def defined_functions(path: str) -> set[str]:
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    return {
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    }


def test_req_test_001_aggregation_section_names_tests_that_exist() -> None:
    """REQ-TEST-001: the Aggregation section of the external design covers REQ-AGG-001 to
    REQ-AGG-009 and every test it names as evidence exists under that name."""
    text = section(page("design.md"), "Aggregation")
    for number in range(1, 10):
        assert f"REQ-AGG-00{number}" in text, number
    references = TEST_REFERENCE.findall(text)
    assert len(references) >= 9
    missing = [f"{p}::{n}" for p, n in references if n not in defined_functions(p)]
    assert missing == []


def test_req_agg_003_documented_minimum_request_time_is_the_code_value() -> None:
    """REQ-AGG-003: the time a request needs left of the engine phase to be started, as the
    design page and the configuration reference state it, is the pipeline's."""
    stated = f"{round(MIN_REQUEST_S * 1000)} ms"
    assert stated in section(page("design.md"), "Aggregation")
    deadline_row = next(
        line for line in page("configuration.md").splitlines() if line.startswith("| `deadline_ms`")
    )
    assert stated in deadline_row


def test_req_ctx_004_documented_cleaning_order_is_the_code_order() -> None:
    """REQ-CTX-004, REQ-SEC-015: the numbered steps of "Cleaning of external text" name the
    steps of ``field_stages`` in the order they run; the joiner rule is stated."""
    text = section(page("design.md"), "Cleaning of external text")
    documented = re.findall(r"^\d+\. `(\w+)`", text, re.MULTILINE)
    in_code = [re.sub(r"_\d+$", "", s.step.__name__) for s in field_stages(200)]
    assert documented == in_code
    for needle in ("ZWNJ U+200C", "ZWJ U+200D", "Arabic", "virama", "emoji"):
        assert needle in text, needle


def test_req_priv_002_disclosure_names_every_credential_format() -> None:
    """REQ-PRIV-002, REQ-PRIV-005: the disclosure statement lists every credential kind the
    check recognises, in the check's order, and no other."""
    text = page("disclosure.md")
    text = text[text.index("<!-- generated credential formats: begin") :]
    text = text[: text.index("<!-- generated credential formats: end")]
    header, *listed = re.findall(r"^\| `([a-z0-9_]+)` \|", text, re.MULTILINE)
    assert header == "credential_kind"
    assert listed == [fmt.kind.value for fmt in FORMATS]
    assert set(listed) == {kind.value for kind in CredentialKind}
