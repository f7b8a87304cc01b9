"""The extraction fixture corpus (REQ-FETCH-002, REQ-PAGE-002, REQ-CTX-005, REQ-FETCH-004).

Every page of ``tests/fetch/corpus`` goes through the production extractor (worker processes,
charset detection, bounded parsing, noise removal, main content). Every expected snippet of
its sidecar must be in the content and every forbidden one (navigation, header, footer,
script, style, hidden text, banners) must be absent; the article comes first.
"""

from __future__ import annotations

import pytest

from rypsok.contract.responses import to_json_text, to_structured
from rypsok.fetch import Extractor, fetch_response, select_and_budget
from rypsok.fetch.media import MediaKind
from tests.fetch.conftest import Fixture, corpus

pytestmark = pytest.mark.anyio

FIXTURES = corpus()


def test_the_corpus_is_varied_enough() -> None:
    names = {f.name for f in FIXTURES}
    assert len(names) >= 12
    assert {
        "news_article",
        "blog_post",
        "docs_page",
        "forum_thread",
        "product_page",
        "wiki_article",
        "german_article",
        "japanese_article",
        "legacy_cp1252",
        "legacy_shift_jis",
        "hidden_injection",
        "cookie_banner",
    } <= names
    for fixture in FIXTURES:
        assert fixture.meta["expected"] and fixture.meta["forbidden"] and fixture.meta["main_text"]


@pytest.mark.req("REQ-FETCH-002")
@pytest.mark.req("REQ-PAGE-002")
@pytest.mark.req("REQ-CTX-005")
@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda f: f.name)
async def test_main_content_present_and_chrome_absent(
    extractor: Extractor, fixture: Fixture
) -> None:
    extraction = await extractor.extract(
        fixture.body, fixture.meta["content_type"], fixture.meta["url"]
    )
    content = extraction.content
    missing = [s for s in fixture.meta["expected"] if s not in content]
    present = [s for s in fixture.meta["forbidden"] if s in content]
    assert not missing, f"expected text missing: {missing}"
    assert not present, f"forbidden text present: {present}"
    assert extraction.title == fixture.meta["title"]
    assert not extraction.charset_replaced
    # The article comes first: the content opens with the page's h1 as a Markdown heading, or
    # with the line a real-world capture names (null: its title block is left out).
    first_line = fixture.meta.get("first_line", "# " + fixture.meta["expected"][0])
    if first_line is not None:
        assert content.splitlines()[0] == first_line


@pytest.mark.req("REQ-FETCH-004")
async def test_content_is_markdown_derived_from_the_structure(extractor: Extractor) -> None:
    docs = next(f for f in FIXTURES if f.name == "docs_page")
    extraction = await extractor.extract(docs.body, docs.meta["content_type"], docs.meta["url"])
    content = extraction.content
    assert "## Cache size" in content
    assert "```\n[cache]\nmax_bytes = 1073741824" in content
    assert "| Setting | Default | Range |" in content
    assert "`cache.max_bytes`" in content
    assert extraction.kind is MediaKind.HTML
    assert [s.heading for s in extraction.sections][:2] == ["Configuring the cache", "Cache size"]


@pytest.mark.req("REQ-FETCH-002")
async def test_links_are_absolute_markdown_links(extractor: Extractor) -> None:
    wiki = next(f for f in FIXTURES if f.name == "wiki_article")
    extraction = await extractor.extract(wiki.body, wiki.meta["content_type"], wiki.meta["url"])
    assert "[Glacial lakes](https://en.openpedia.example.org/wiki/Category:Glacial_lakes)" in (
        extraction.content
    )


@pytest.mark.req("REQ-CTX-005")
@pytest.mark.req("REQ-TEST-007")
async def test_a_hidden_fake_rypsok_notice_never_reaches_the_response(
    extractor: Extractor,
) -> None:
    page = next(f for f in FIXTURES if f.name == "hidden_injection")
    extraction = await extractor.extract(page.body, page.meta["content_type"], page.meta["url"])
    for max_chars in (50, 500, 20_000):
        view = select_and_budget(extraction, focus="rypsok notice continue", max_chars=max_chars)
        text = to_json_text(to_structured(fetch_response(extraction, view, url=page.meta["url"])))
        assert "rypsok notice" not in text.lower()
        assert "continue at" not in text
        assert "evil.example" not in text


@pytest.mark.req("REQ-FETCH-002")
@pytest.mark.parametrize(
    "fixture",
    [f for f in FIXTURES if "sections" in f.meta],
    ids=lambda f: f.name,
)
async def test_fragments_and_focus_select_the_right_section(
    extractor: Extractor, fixture: Fixture
) -> None:
    extraction = await extractor.extract(
        fixture.body, fixture.meta["content_type"], fixture.meta["url"]
    )
    wanted = fixture.meta["sections"]
    if "fragment" in wanted:
        view = select_and_budget(extraction, fragment=wanted["fragment"], max_chars=20_000)
        assert view.section is not None and view.section.heading == wanted["fragment_heading"]
        assert view.content.lstrip("#").strip().startswith(wanted["fragment_heading"])
    view = select_and_budget(extraction, focus=wanted["focus"], max_chars=20_000)
    assert view.section is not None and view.section.heading == wanted["focus_heading"]


async def test_the_digest_names_the_decoded_body(extractor: Extractor) -> None:
    legacy = next(f for f in FIXTURES if f.name == "legacy_cp1252")
    extraction = await extractor.extract(
        legacy.body, legacy.meta["content_type"], legacy.meta["url"]
    )
    import hashlib

    decoded = legacy.body.decode("cp1252")
    assert extraction.sha256 == hashlib.sha256(decoded.encode("utf-8")).hexdigest()
    assert extraction.charset == "cp1252"
    as_utf8 = await extractor.extract(
        decoded.encode("utf-8"), "text/html; charset=utf-8", legacy.meta["url"]
    )
    assert as_utf8.sha256 == extraction.sha256
