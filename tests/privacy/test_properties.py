"""Property tests of the credential check (REQ-PRIV-002, REQ-TEST-013).

Ordinary queries, news URLs, commit hashes and UUIDs are never flagged; fabricated
credentials are found wherever they sit; masking removes them and nothing else.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from rypsok.privacy import REDACTED, CredentialKind, find_credentials, mask

from .samples import BUILDERS, sample

PROPERTY = settings(deadline=None, database=None, max_examples=400)

COMMON_WORDS = (
    "the of and to in is for on with as by at from how what why when where who which best "
    "news weather today python rust javascript error install release date price review "
    "recipe chicken football score election results paris london tokyo stock market map "
    "near me open hours tutorial example documentation api key token secret password login "
    "github aws slack stripe google openai anthropic docker kubernetes linux windows mac "
    "jwt bearer private public ssh certificate pem format convert"
).split()

WORD = st.one_of(
    st.sampled_from(COMMON_WORDS),
    st.from_regex(r"[a-z]{1,14}", fullmatch=True),
    st.from_regex(r"[A-Z][a-z]{1,12}", fullmatch=True),  # names, sentence starts
    st.from_regex(r"[A-Z]{2,6}", fullmatch=True),  # acronyms
    st.from_regex(r"[0-9]{1,8}", fullmatch=True),  # years, versions, numbers
    st.from_regex(r"v?[0-9]{1,2}\.[0-9]{1,2}(\.[0-9]{1,3})?", fullmatch=True),
    st.sampled_from(["?", "!", ",", ".", "-", ":", '"', "(", ")", "C++", "C#", "e-mail"]),
)
QUERY = st.lists(WORD, min_size=1, max_size=25).map(" ".join)

NEWS_HOSTS = st.sampled_from(
    [
        "www.nytimes.com",
        "www.bbc.co.uk",
        "www.theguardian.com",
        "www.reuters.com",
        "apnews.com",
        "www.lemonde.fr",
        "www.spiegel.de",
        "edition.cnn.com",
        "www.aljazeera.com",
        "news.ycombinator.com",
    ]
)
SLUG = st.lists(st.from_regex(r"[a-z0-9]{1,12}", fullmatch=True), min_size=1, max_size=10).map(
    "-".join
)
NEWS_URL = st.builds(
    "https://{}/{}/{:02d}/{:02d}/{}/{}{}".format,
    NEWS_HOSTS,
    st.integers(1995, 2030),
    st.integers(1, 12),
    st.integers(1, 31),
    st.sampled_from(["world", "business", "technology", "sport", "politics", "science"]),
    SLUG,
    st.sampled_from(
        ["", ".html", "?utm_source=rss&utm_medium=feed", "#comments", "?id=1234567&page=2"]
    ),
)
COMMIT = st.one_of(
    st.binary(min_size=20, max_size=20).map(bytes.hex),  # full SHA-1
    st.binary(min_size=32, max_size=32).map(bytes.hex),  # SHA-256
    st.binary(min_size=4, max_size=6).map(lambda b: b.hex()[:7]),  # abbreviated
    st.binary(min_size=20, max_size=20).map(lambda b: b.hex().upper()),
)
UUID = st.uuids().flatmap(lambda u: st.sampled_from([str(u), str(u).upper(), u.hex]))

ORDINARY = st.lists(st.one_of(QUERY, NEWS_URL, COMMIT, UUID), min_size=1, max_size=4).map(" ".join)


@PROPERTY
@given(ORDINARY)
def test_req_priv_002_ordinary_queries_urls_hashes_and_uuids_are_never_flagged(text: str) -> None:
    """REQ-PRIV-002: no false positive on natural-language queries, news URLs, commit
    hashes or UUIDs, alone or mixed."""
    assert find_credentials(text) == []


@PROPERTY
@given(QUERY, QUERY, st.sampled_from(sorted(BUILDERS)), st.integers(0, 10**6))
def test_req_priv_002_a_credential_is_found_anywhere_in_a_query(
    before: str, after: str, name: str, seed: int
) -> None:
    """REQ-PRIV-002: an embedded credential is found with its kind and exact span, and
    masking removes it while keeping the rest of the query."""
    kind, secret = sample(name, seed)
    text = f"{before} {secret} {after}"
    found = find_credentials(text)
    assert [(m.kind, m.start, m.end) for m in found] == [
        (kind, len(before) + 1, len(before) + 1 + len(secret))
    ]
    masked = mask(text, found)
    assert masked == f"{before} {REDACTED} {after}"
    assert secret not in masked


@PROPERTY
@given(st.text(max_size=400))
def test_req_priv_002_matches_are_sorted_disjoint_and_inside_the_text(text: str) -> None:
    """REQ-PRIV-002: for any text the matches are ordered, disjoint, in range and named
    from the fixed vocabulary; masking replaces exactly those spans."""
    found = find_credentials(text)
    previous_end = 0
    for match in found:
        assert previous_end <= match.start < match.end <= len(text)
        assert match.kind in {kind.value for kind in CredentialKind}
        previous_end = match.end
    masked = mask(text, found)
    removed = sum(m.end - m.start for m in found)
    assert len(masked) == len(text) - removed + len(REDACTED) * len(found)
    if not found:
        assert masked == text
