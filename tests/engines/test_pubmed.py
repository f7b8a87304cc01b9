"""The PubMed driver against hand-written fixtures in the E-utilities' documented JSON shapes.

Fixture shape: https://www.ncbi.nlm.nih.gov/books/NBK25499/ (ESearch ``esearchresult`` with
``count``, ``retmax``, ``retstart``, ``idlist``, ``translationset``, ``querytranslation``,
``errorlist``/``warninglist`` when nothing matched; ESummary ``result.uids`` and one document
summary per PMID with ``uid``, ``title``, ``pubdate``, ``epubdate``, ``source``,
``fulljournalname``, ``authors[]{name, authtype}``, ``sortpubdate``, …), the usage guidelines at
https://www.ncbi.nlm.nih.gov/books/NBK25497/ (``tool``, ``email``, ``api_key``) and NLM support
articles KA-05317 / KA-05510 (3 and 10 requests/s, 429 ``{"error": "API rate limit
exceeded"}``). Errors inside 200 answers (``esearchresult.ERROR``, a top-level ``ERROR`` or
``error``, ``esummaryresult``, a per-record ``{"uid", "error"}``) and the 400 answer to a bad key
are written in the shapes public E-utilities clients record; docs/engines/pubmed.md lists them.
REQ-TEST-002, REQ-ENG-004/005/006/009/010/011/012, REQ-RES-002, REQ-CMP-001/002, REQ-CFG-004.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import pytest

from rypsok.config.load import parse_settings
from rypsok.config.secrets import Secret
from rypsok.contract.vocabulary import Category, FailureClass, TimeRange
from rypsok.engines import pubmed
from rypsok.engines.base import (
    MAX_REQUESTS_PER_SEARCH,
    EngineQuery,
    EngineRequest,
    EngineResponse,
    RateLimit,
    RawResult,
)
from rypsok.engines.catalog import resolve_engines
from rypsok.engines.registry import DRIVER_MODULES, load_driver
from tests.engines.helpers_a import (
    DOCS,
    NOW,
    assert_ranks,
    common_failures,
    expect_failure,
    fixture,
    fixture_json,
    http_date,
    make_query,
    origin_of,
    params_of,
    respond,
)
from tests.engines.helpers_c import KEY, assert_key_only_in, assert_reads_no_clock
from tests.engines.helpers_d import expect_refusal

ENGINE = "pubmed"
PROVIDER_TEXT = "PUBMED-PROVIDER-TEXT"
PMIDS = ["39000004", "39000001", "39000003", "39000002"]


def query(**changes: Any) -> EngineQuery:
    """A query on the E-utilities base, English by default."""
    changes.setdefault("text", "malaria vaccine")
    return make_query(pubmed.ADMISSION.endpoint, **changes)


def json_fixture(name: str, status: int = 200, headers: dict[str, str] | None = None) -> Any:
    return respond(fixture(ENGINE, name), status, headers=headers)


def summary_request(response: EngineResponse, **changes: Any) -> EngineRequest:
    """The follow-up of an ESearch answer, checked to be a request."""
    step = pubmed.follow_up(query(**changes), response)
    assert isinstance(step, EngineRequest)
    return step


def first_step(response: EngineResponse) -> list[RawResult]:
    """``follow_up`` in the shape of ``parse``, for the shared failure checks."""
    step = pubmed.follow_up(query(), response)
    assert isinstance(step, list), "a failure was expected, not a second request"
    return step


# --- admission record ---------------------------------------------------------------------


def test_req_eng_010_admission_record() -> None:
    """REQ-ENG-010, REQ-CMP-001: the record carries NCBI's obligations and the decision."""
    record = pubmed.ADMISSION
    assert record.engine_id == ENGINE
    assert record.categories == (Category.SCIENCE,)
    assert record.endpoint == "https://eutils.ncbi.nlm.nih.gov/entrez/eutils/"
    assert record.documentation == "https://www.ncbi.nlm.nih.gov/books/NBK25499/"
    # 3 requests/s keyless, 10/s with a key; one search spends two of them.
    assert record.rate == RateLimit(3, 1.0)
    assert record.keyed_rate == RateLimit(10, 1.0)
    assert record.max_in_flight == 1
    # Keyless use is permitted, but the engine is the operator's choice (docs/engines/pubmed.md).
    assert record.key == "optional"
    assert record.enabled_by_default is False
    assert record.attribution_required is True
    assert record.cacheable is True
    assert record.time_ranges == frozenset(TimeRange)
    assert record.languages is not None and "en" in record.languages
    assert record.max_results == 20
    assert "tool" in record.user_agent_note and "email" in record.user_agent_note


def test_req_cmp_001_admission_page_records_the_decision() -> None:
    """REQ-CMP-001: the page names the endpoints, the limits, the sources and the decision."""
    page = (DOCS / "pubmed.md").read_text(encoding="utf-8")
    for needle in (
        "esearch.fcgi",
        "esummary.fcgi",
        "api_key",
        "tool",
        "email",
        "3 requests",
        "10",
        "NBK25499",
        "NBK25497",
        "KA-05510",
        "REQ-ENG-008",
        "enabled = true",
    ):
        assert needle in page, needle
    assert "not admitted" not in page and "no driver" not in page.lower()


@pytest.mark.req("REQ-ENG-004")
def test_req_eng_004_registry_resolves_the_two_step_driver() -> None:
    """REQ-ENG-004: ``pubmed`` resolves to its driver, follow-up included."""
    assert "pubmed" in DRIVER_MODULES
    spec = load_driver(ENGINE)
    assert spec.admission is pubmed.ADMISSION
    assert spec.build_request is pubmed.build_request
    assert spec.parse is pubmed.parse
    assert spec.follow_up is pubmed.follow_up
    assert load_driver("europepmc").follow_up is None  # one-step drivers stay one step
    assert MAX_REQUESTS_PER_SEARCH == 2


@pytest.mark.req("REQ-CFG-004")
def test_req_cfg_004_a_key_puts_the_keyed_rate_in_force(monkeypatch: pytest.MonkeyPatch) -> None:
    """REQ-CFG-004, REQ-CMP-002: with the key configured by reference the engine runs at the
    keyed rate (10/s); without it at the keyless rate (3/s)."""
    monkeypatch.setenv("RYPSOK_TEST_NCBI_KEY", KEY)

    def configured(entry: dict[str, Any]) -> Any:
        settings = parse_settings({"schema_version": 1, "engines": {ENGINE: entry}})
        return next(e for e in resolve_engines(settings) if e.engine_id == ENGINE)

    keyless = configured({"enabled": True})
    keyed = configured({"enabled": True, "api_key_env": "RYPSOK_TEST_NCBI_KEY"})
    default = configured({})
    assert keyless.active and keyless.driver.admission.rate == RateLimit(3, 1.0)
    assert keyed.active and keyed.driver.admission.rate == RateLimit(10, 1.0)
    assert keyed.credential == Secret(KEY)
    assert not default.active
    assert default.inactive_reason == "off by default; set enabled = true"
    # Engines without a keyed rate keep their record as it is.
    other = parse_settings(
        {
            "schema_version": 1,
            "engines": {"semanticscholar": {"api_key_env": "RYPSOK_TEST_NCBI_KEY"}},
        }
    )
    scholar = next(e for e in resolve_engines(other) if e.engine_id == "semanticscholar")
    assert scholar.credential is not None
    assert scholar.driver.admission.rate == load_driver("semanticscholar").admission.rate


# --- the ESearch request ------------------------------------------------------------------


@pytest.mark.req("REQ-ENG-011")
def test_req_eng_011_esearch_parameters() -> None:
    """REQ-ENG-011: one GET of esearch.fcgi for LIM-S3 PMIDs by relevance, as JSON, naming
    the tool; no email without an e-mail contact and no key without one."""
    request = pubmed.build_request(query())
    parts = urlsplit(request.url)
    assert request.method == "GET"
    assert (parts.scheme, parts.netloc, parts.path) == (
        "https",
        "eutils.ncbi.nlm.nih.gov",
        "/entrez/eutils/esearch.fcgi",
    )
    assert params_of(request) == {
        "db": "pubmed",
        "term": "(malaria vaccine) AND english[la]",
        "retmode": "json",
        "retmax": "10",
        "sort": "relevance",
        "tool": "rypsok",
    }
    assert ("Accept", "application/json") in request.headers
    assert request.credential_headers == frozenset()
    assert request.body is None


@pytest.mark.req("REQ-ENG-011")
@pytest.mark.parametrize(("count", "retmax"), [(4, "4"), (1000, "20"), (0, "1")])
def test_req_eng_011_retmax_bounded_by_the_record(count: int, retmax: str) -> None:
    """REQ-ENG-011: never more PMIDs than the record's max_results, never fewer than one."""
    assert params_of(pubmed.build_request(query(count=count)))["retmax"] == retmax


@pytest.mark.parametrize(
    ("contact", "email"),
    [
        ("ops@example.org", "ops@example.org"),
        ("mailto:ops@example.org", "ops@example.org"),
        ("https://example.org/contact", None),
        ("", None),
    ],
)
def test_email_is_the_operator_contact_when_it_is_an_address(
    contact: str, email: str | None
) -> None:
    """NCBI asks for tool and email (NBK25497): email is [service] contact, if an address."""
    params = params_of(pubmed.build_request(query(contact=contact)))
    assert params["tool"] == "rypsok"
    assert params.get("email") == email


@pytest.mark.req("REQ-CFG-004")
def test_req_cfg_004_api_key_only_in_the_url_of_both_requests() -> None:
    """REQ-CFG-004, REQ-SEC-017: the operator's key is the api_key parameter of both requests
    (NCBI takes it nowhere else) and appears in no repr."""
    keyed = query(credential=Secret(KEY))
    search = pubmed.build_request(keyed)
    assert params_of(search)["api_key"] == KEY
    assert_key_only_in(search, "url")
    summary = pubmed.follow_up(keyed, json_fixture("esearch_success.json"))
    assert isinstance(summary, EngineRequest)
    assert params_of(summary)["api_key"] == KEY
    assert_key_only_in(summary, "url")


@pytest.mark.req("REQ-ENG-010")
@pytest.mark.parametrize(
    ("time_range", "days"),
    [(TimeRange.DAY, "1"), (TimeRange.WEEK, "7"), (TimeRange.MONTH, "31"), (TimeRange.YEAR, "366")],
)
def test_req_eng_010_time_range_is_a_publication_date_window(
    time_range: TimeRange, days: str
) -> None:
    """REQ-ENG-010: a time range becomes datetype=pdat with reldate in days."""
    params = params_of(pubmed.build_request(query(time_range=time_range)))
    assert (params["datetype"], params["reldate"]) == ("pdat", days)


@pytest.mark.req("REQ-ENG-010")
@pytest.mark.parametrize(
    ("language", "term"),
    [
        ("de", "(malaria vaccine) AND german[la]"),
        ("fr-CA", "(malaria vaccine) AND french[la]"),
        ("xx", "malaria vaccine"),
    ],
)
def test_req_eng_010_language_is_the_la_field(language: str, term: str) -> None:
    """REQ-ENG-010: an honoured language becomes <name>[la]; an unknown one adds nothing."""
    assert params_of(pubmed.build_request(query(language=language)))["term"] == term
    record_languages = pubmed.ADMISSION.languages
    assert record_languages is not None
    assert (language.split("-")[0] in record_languages) == (language != "xx")


def test_unbalanced_syntax_cannot_escape_the_group() -> None:
    """Unpaired parentheses or quotes are dropped, so the language filter stays ANDed."""
    term = params_of(pubmed.build_request(query(text='malaria) OR (x "vaccine')))["term"]
    assert term == "(malaria OR x vaccine) AND english[la]"


def test_query_of_nothing_but_syntax_is_refused() -> None:
    """Text that is empty once unbalanced syntax is dropped is refused before contact."""
    expect_refusal(pubmed.build_request, query(text='( "'), FailureClass.REQUEST_FAILURE)


@pytest.mark.parametrize(
    "endpoint",
    [
        "https://eutils.ncbi.nlm.nih.gov/entrez/eutils",
        "https://eutils.ncbi.nlm.nih.gov/entrez/eutils/esearch.fcgi",
    ],
)
def test_endpoint_is_the_folder_of_the_utilities(endpoint: str) -> None:
    """An endpoint with or without the trailing slash, or naming a utility, is its folder."""
    search = pubmed.build_request(make_query(endpoint, text="malaria"))
    summary = pubmed.follow_up(
        make_query(endpoint, text="malaria"), json_fixture("esearch_success.json")
    )
    assert isinstance(summary, EngineRequest)
    assert urlsplit(search.url).path == "/entrez/eutils/esearch.fcgi"
    assert urlsplit(summary.url).path == "/entrez/eutils/esummary.fcgi"


def test_build_request_reads_no_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """The request is a pure function of the query (the range is relative: reldate)."""
    assert_reads_no_clock(pubmed.build_request, query(time_range=TimeRange.WEEK), monkeypatch)


# --- the ESearch answer: follow_up ----------------------------------------------------------


def test_follow_up_asks_esummary_for_the_pmids_in_rank_order() -> None:
    """The second request is one GET of esummary.fcgi for the PMIDs ESearch ranked, in that
    order, on the endpoint's origin, naming the tool and the contact."""
    endpoint = pubmed.ADMISSION.endpoint
    request = summary_request(json_fixture("esearch_success.json"), contact="ops@example.org")
    assert request.method == "GET" and request.body is None
    assert origin_of(request.url) == origin_of(endpoint)
    assert urlsplit(request.url).path == "/entrez/eutils/esummary.fcgi"
    assert params_of(request) == {
        "db": "pubmed",
        "id": ",".join(PMIDS),
        "retmode": "json",
        "tool": "rypsok",
        "email": "ops@example.org",
    }
    assert ("Accept", "application/json") in request.headers


def test_follow_up_asks_for_no_more_than_the_count() -> None:
    """ESearch may answer more PMIDs than asked: ESummary is asked for the first count only."""
    request = summary_request(json_fixture("esearch_success.json"), count=2)
    assert params_of(request)["id"] == "39000004,39000001"


def test_follow_up_sends_only_pmids() -> None:
    """Only PMIDs (digits, no leading zero) reach the second request, each once: an idlist
    entry cannot add a parameter or change the path of the ESummary request."""
    body = fixture_json(ENGINE, "esearch_success.json")
    body["esearchresult"]["idlist"] = [
        "39000004",
        "39000004",
        "0123",
        "12a",
        "1&api_key=evil",
        "../x",
        7,
        None,
        "39000001",
    ]
    request = summary_request(respond(body))
    assert params_of(request)["id"] == "39000004,39000001"
    assert "evil" not in request.url and urlsplit(request.url).path.endswith("/esummary.fcgi")


@pytest.mark.req("REQ-TEST-002")
def test_req_test_002_nothing_found_ends_the_search_without_a_second_request() -> None:
    """REQ-TEST-002: an ESearch with count 0 and an empty idlist is an empty answer: no
    ESummary is sent."""
    assert pubmed.follow_up(query(), json_fixture("esearch_empty.json")) == []


def test_an_idlist_of_no_pmid_at_all_is_parse_failure() -> None:
    """Identifiers that are none of them PMIDs are not an answer to trust."""
    body = fixture_json(ENGINE, "esearch_success.json")
    body["esearchresult"]["idlist"] = ["abc", "0", ""]
    expect_failure(first_step, respond(body), FailureClass.PARSE_FAILURE)


@pytest.mark.parametrize(
    "body",
    [
        {"header": {"type": "esearch"}},
        {"esearchresult": []},
        {"esearchresult": {"count": "3", "idlist": "39000004"}},
        {"esearchresult": {"count": "3"}},
    ],
    ids=["no-esearchresult", "esearchresult-list", "idlist-string", "no-idlist"],
)
def test_malformed_esearch_answer_is_parse_failure(body: Any) -> None:
    """REQ-ENG-006: an ESearch answer without a usable idlist is parse_failure."""
    expect_failure(first_step, respond(body), FailureClass.PARSE_FAILURE)


@pytest.mark.req("REQ-ENG-006")
@pytest.mark.parametrize("name", ["esearch_error.json", "esearch_top_error.json"])
def test_req_eng_006_esearch_error_in_a_200_answer(name: str) -> None:
    """REQ-ENG-006: ``esearchresult.ERROR`` or a top-level ``ERROR`` with status 200 is
    request_failure, carrying none of NCBI's text."""
    failure = expect_failure(first_step, json_fixture(name), FailureClass.REQUEST_FAILURE)
    assert PROVIDER_TEXT not in repr(failure)


@pytest.mark.req("REQ-RES-002")
@pytest.mark.parametrize("status", [429, 200])
def test_req_res_002_rate_limit_answer_in_either_request(status: int) -> None:
    """REQ-RES-002: ``{"error": "API rate limit exceeded"}`` is rate_limited, with 429 and
    with 200 alike, in the ESearch and the ESummary answer; Retry-After is kept."""
    headers = {"Retry-After": "2"}
    for step in (first_step, pubmed.parse):
        response = json_fixture("esearch_rate_limited.json", status, headers)
        failure = expect_failure(step, response, FailureClass.RATE_LIMITED)
        assert failure.retry_after_s == 2.0


@pytest.mark.req("REQ-CMP-002")
def test_req_cmp_002_http_date_retry_after_counts_from_the_answers_date() -> None:
    """REQ-CMP-002, LIM-B4: an HTTP-date Retry-After is measured against the answer's Date,
    not the local clock."""
    headers = {"Date": http_date(NOW), "Retry-After": http_date(NOW + 45)}
    response = json_fixture("esearch_rate_limited.json", 429, headers)
    failure = expect_failure(first_step, response, FailureClass.RATE_LIMITED)
    assert failure.retry_after_s == 45.0


@pytest.mark.req("REQ-ENG-006")
def test_req_eng_006_refused_key_is_auth_failure_in_either_request() -> None:
    """REQ-ENG-006: NCBI's 400 ``{"error": "API key invalid", ...}`` is auth_failure; the key
    it quotes back is not kept."""
    for step in (first_step, pubmed.parse):
        response = json_fixture("api_key_invalid.json", 400)
        failure = expect_failure(step, response, FailureClass.AUTH_FAILURE)
        assert PROVIDER_TEXT not in repr(failure)


@pytest.mark.req("REQ-ENG-006")
def test_req_eng_006_other_400_is_request_failure() -> None:
    """REQ-ENG-006: any other 400 with a JSON error is request_failure."""
    response = respond({"error": f"Invalid query {PROVIDER_TEXT}"}, 400)
    expect_failure(first_step, response, FailureClass.REQUEST_FAILURE)
    expect_failure(pubmed.parse, response, FailureClass.REQUEST_FAILURE)


@pytest.mark.req("REQ-ENG-006")
@pytest.mark.parametrize(
    ("response", "expected"),
    [pytest.param(r, c, id=i) for i, r, c in common_failures(ENGINE)],
)
def test_req_eng_006_common_failures_of_both_answers(
    response: EngineResponse, expected: FailureClass
) -> None:
    """REQ-ENG-006, REQ-ENG-009, REQ-RES-002: each failure has one class and no provider text,
    whether it answers the ESearch or the ESummary."""
    expect_failure(first_step, response, expected)
    expect_failure(pubmed.parse, response, expected)


# --- the ESummary answer: parse -----------------------------------------------------------


@pytest.mark.req("REQ-TEST-002")
def test_req_test_002_esummary_success() -> None:
    """REQ-TEST-002, REQ-ENG-005: records in the order of ``uids``; a record ESummary cannot
    give costs itself; URL, raw title, a snippet of journal, date and authors, a full date."""
    results = pubmed.parse(json_fixture("esummary_success.json"))
    assert_ranks(results)
    assert [r.url for r in results] == [
        "https://pubmed.ncbi.nlm.nih.gov/39000004/",
        "https://pubmed.ncbi.nlm.nih.gov/39000001/",
        "https://pubmed.ncbi.nlm.nih.gov/39000002/",
    ]
    first, second, third = results
    assert first.title == (
        "Efficacy of a <i>Plasmodium falciparum</i> vaccine in children: a phase 3 trial."
    )
    assert first.snippet == (
        "The Lancet. Infectious diseases, 2024 Mar 7. Okafor AN, Lindqvist M, Tanaka H, et al."
    )
    assert first.date == "2024-03-07"
    assert second.snippet == "Malaria journal, 2023 Jun. Sithole T, Ferreira LB."
    assert second.date == "2023-05-31"  # pubdate names a month only: the epubdate is full
    assert third.title == "Vaccines against malaria: a review for clinicians"  # booktitle
    assert third.snippet == "J Trop Med, 2022 Winter."
    assert third.date is None  # a season, and sortpubdate's invented day is not used


@pytest.mark.req("REQ-ENG-012")
def test_req_eng_012_title_stays_raw() -> None:
    """REQ-ENG-012: markup in a title is delivered as it came; the pipeline cleans it."""
    (first, *_) = pubmed.parse(json_fixture("esummary_success.json"))
    assert "<i>" in first.title


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2023 Jan 6", "2023-01-06"),
        (" 2019 Dec 31 ", "2019-12-31"),
        ("2023 Feb 30", None),
        ("2023 Jun", None),
        ("2023 Jan-Feb", None),
        ("2023", None),
        ("2023 Foo 3", None),
        ("2023/06/01 00:00", None),
        (None, None),
        (20230106, None),
    ],
)
def test_only_full_dates_become_dates(value: object, expected: str | None) -> None:
    """A PubMed date becomes YYYY-MM-DD only when it names a real day."""
    record = {"uid": "39000004", "title": "t", "pubdate": value}
    body = {"result": {"uids": ["39000004"], "39000004": record}}
    (result,) = pubmed.parse(respond(body))
    assert result.date == expected


def test_records_are_capped_at_max_results() -> None:
    """ESummary answering more records than admitted gives max_results of them."""
    uids = [str(40000000 + i) for i in range(25)]
    body = {"result": {"uids": uids, **{u: {"uid": u, "title": f"Paper {u}"} for u in uids}}}
    results = pubmed.parse(respond(body))
    assert len(results) == pubmed.ADMISSION.max_results
    assert results[-1].url == f"https://pubmed.ncbi.nlm.nih.gov/{uids[19]}/"


def test_malformed_records_cost_themselves() -> None:
    """A record that is no object, lacks a title, names another uid, or whose uid is no
    PMID is skipped; the others keep their order and ranks."""
    body = fixture_json(ENGINE, "esummary_success.json")
    result = body["result"]
    result["uids"] = ["x1", "39000009", "39000004", "39000008", "39000004", "39000007"]
    result["39000009"] = "not a record"
    result["39000008"] = {"uid": "39000008", "title": "  "}
    result["39000007"] = {"uid": "39000006", "title": "Someone else's record"}
    results = pubmed.parse(respond(body))
    assert [r.url for r in results] == ["https://pubmed.ncbi.nlm.nih.gov/39000004/"]
    assert_ranks(results)


@pytest.mark.req("REQ-ENG-006")
@pytest.mark.parametrize(
    "name", ["esummary_error.json", "esummary_complaint.json", "esummary_unavailable.json"]
)
def test_req_eng_006_esummary_error_fails_the_engine(name: str) -> None:
    """REQ-ENG-006: a top-level ``error``, an ``esummaryresult`` complaint, or no record
    available at all is request_failure: the PMIDs alone are never returned as results."""
    failure = expect_failure(pubmed.parse, json_fixture(name), FailureClass.REQUEST_FAILURE)
    assert PROVIDER_TEXT not in repr(failure)


@pytest.mark.req("REQ-ENG-006")
@pytest.mark.parametrize(
    "body",
    [
        fixture(ENGINE, "truncated.json"),
        fixture(ENGINE, "wrong_shape.json"),
        b'{"result": {"uids": []}}',
        b'{"result": {"uids": "39000004"}}',
        b'{"result": {"uids": ["39000004"]}}',
        b'{"header": {"type": "esummary"}}',
        b"[]",
    ],
    ids=[
        "truncated",
        "result-list",
        "no-uids",
        "uids-string",
        "uid-without-record",
        "no-result",
        "array",
    ],
)
def test_req_eng_006_malformed_second_answer_is_parse_failure(body: bytes) -> None:
    """REQ-ENG-006: an ESummary answer with no usable record is parse_failure."""
    expect_failure(pubmed.parse, respond(body), FailureClass.PARSE_FAILURE)
