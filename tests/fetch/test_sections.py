"""Section index and focus (ADR-0006; INV-4, INV-5, INV-6)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from rypsok.fetch.focus import by_focus, by_fragment, choose, terms
from rypsok.fetch.sections import index_sections, plain_text, slugify

DOC = """# Frobnicator manual

Intro paragraph about the tool.

## Contents

- [Installation](#installation)
- [Configuration](#configuration)
- [Troubleshooting](#troubleshooting)

## Installation

Install the package with pip. Requires Python 3.11.

```
# not a heading inside code
pip install frobnicator
```

## Configuration

Settings live in frob.toml. The cache size and the timeout are configurable.

### Cache size

Set cache.max_bytes.

Troubleshooting
---------------

If installation fails, check the compiler.
"""


def test_headings_are_indexed_outside_code() -> None:
    sections = index_sections(DOC)
    assert [(s.heading, s.level) for s in sections] == [
        ("Frobnicator manual", 1),
        ("Contents", 2),
        ("Installation", 2),
        ("Configuration", 2),
        ("Cache size", 3),
        ("Troubleshooting", 2),
    ]
    for s in sections:
        assert DOC[s.start_char :].startswith(("#", s.heading))
        assert s.start_char < s.body_start <= s.end_char
    assert sections[-1].end_char == len(DOC)


def test_anchors_slugs_and_tables_of_contents() -> None:
    sections = index_sections(DOC, [("installation", ("install-anchor",))])
    by_heading = {s.heading: s for s in sections}
    assert by_heading["Installation"].anchors == ("install-anchor",)
    assert by_heading["Cache size"].slug == "cache-size"
    assert by_heading["Contents"].toc
    assert not by_heading["Installation"].toc


def test_a_toc_without_a_toc_heading_is_recognised() -> None:
    doc = (
        "# Guide\n\n## Overview\n\n- Alpha\n- Beta\n- Gamma\n\n"
        "## Alpha\n\na\n\n## Beta\n\nb\n\n## Gamma\n\ng\n"
    )
    assert [s.toc for s in index_sections(doc)] == [False, True, False, False, False]


def test_plain_text_and_slug() -> None:
    assert plain_text("**Bold** [link](https://x) `code` and_snake \\# x") == (
        "Bold link code and_snake # x"
    )
    assert slugify("Hello, World: Ünïcode 2!") == "hello-world-ünïcode-2"


def test_the_fragment_selects_exactly() -> None:
    sections = index_sections(DOC, [("configuration", ("cfg",))])
    assert by_fragment(sections, "cfg").heading == "Configuration"  # type: ignore[union-attr]
    assert by_fragment(sections, "cache-size").heading == "Cache size"  # type: ignore[union-attr]
    assert by_fragment(sections, "Troubleshooting").heading == "Troubleshooting"  # type: ignore[union-attr]
    assert by_fragment(sections, "Cache_size").heading == "Cache size"  # type: ignore[union-attr]
    assert by_fragment(sections, "Cache%20size").heading == "Cache size"  # type: ignore[union-attr]
    assert by_fragment(sections, "nothing-like-it") is None


def test_a_toc_never_outranks_the_section_it_points_to() -> None:
    sections = index_sections(DOC)
    chosen = by_focus(DOC, sections, "installation")
    assert chosen is not None and chosen.heading == "Installation"
    # Body evidence also prefers the real section over the table of contents.
    chosen = by_focus(DOC, sections, "troubleshooting compiler")
    assert chosen is not None and chosen.heading == "Troubleshooting"


def test_focus_uses_heading_then_nearby_text_then_order() -> None:
    sections = index_sections(DOC)
    assert by_focus(DOC, sections, "cache size").heading == "Cache size"  # type: ignore[union-attr]
    assert by_focus(DOC, sections, "frob.toml timeout").heading == "Configuration"  # type: ignore[union-attr]
    assert by_focus(DOC, sections, "how to install").heading == "Installation"  # type: ignore[union-attr]
    assert by_focus(DOC, sections, "quantum entanglement") is None
    tie = "# A\n\nsame words here\n\n# B\n\nsame words here\n"
    assert by_focus(tie, index_sections(tie), "same words").heading == "A"  # type: ignore[union-attr]


def test_cjk_focus() -> None:
    doc = "# 和紙\n\n紹介。\n\n## 観光客向けの体験教室も\n\n紙すき体験。\n\n## 補助金\n\n土産物。\n"
    assert terms("体験教室") == ["体験", "験教", "教室"]
    assert by_focus(doc, index_sections(doc), "体験教室").heading == "観光客向けの体験教室も"  # type: ignore[union-attr]


def test_choose_reports_not_found() -> None:
    sections = index_sections(DOC)
    assert choose(DOC, sections, fragment=None, focus=None).not_found is False
    missed = choose(DOC, sections, fragment="nowhere", focus="nothing matches this")
    assert missed.section is None and missed.not_found
    fallback = choose(DOC, sections, fragment="nowhere", focus="cache size")
    assert fallback.section is not None and fallback.section.heading == "Cache size"


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("#=-`~ \nab1*[]()")), max_size=300))
def test_indexing_arbitrary_markdown_is_consistent(doc: str) -> None:
    sections = index_sections(doc)
    previous = -1
    for s in sections:
        assert previous < s.start_char <= s.body_start <= s.end_char <= len(doc)
        assert 1 <= s.level <= 6
        previous = s.start_char


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.text(alphabet=st.sampled_from(list("#=-`~ >|*+1.ab_\"'(\\\t")), max_size=12),
        max_size=40,
    ),
    st.lists(st.tuples(st.sampled_from(["a", "b", "contents"]), st.just(("x",))), max_size=3),
)
def test_the_prose_shortcut_indexes_exactly_as_the_full_line_patterns(
    lines: list[str], heading_ids: list[tuple[str, tuple[str, ...]]]
) -> None:
    """The index skips the heading, fence and list patterns for lines that start like prose
    (a speed-up of the worker's job); with the shortcut disabled, every section, offset and
    table-of-contents verdict is the same."""
    import rypsok.fetch.sections as sections_module

    doc = "\n".join(lines)
    fast = index_sections(doc, heading_ids)
    saved = sections_module._PROSE_START
    sections_module._PROSE_START = frozenset()
    try:
        full = index_sections(doc, heading_ids)
    finally:
        sections_module._PROSE_START = saved
    assert fast == full
