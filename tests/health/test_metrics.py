"""Metrics tests: counters, latency histograms, Prometheus text, snapshot (REQ-OBS-002/003/004/007).

The Prometheus output is checked twice: an exact text for a small hand-made family, and a
small parser of the 0.0.4 text format run over everything :class:`Metrics` renders.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field

import pytest

from rypsok.contract.vocabulary import ErrorKind, FailureClass, Outcome, Reason, ToolName
from rypsok.health.circuits import CircuitState
from rypsok.health.metrics import CALL_BUCKETS_S, ENGINE_BUCKETS_S, Metrics
from rypsok.health.prometheus import (
    MetricFamily,
    Sample,
    escape_help,
    escape_label_value,
    render,
)

# --- a tiny parser of the text exposition format 0.0.4 ----------------------------------------

_NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
_SAMPLE = re.compile(rf"^({_NAME})(?:\{{(.*)\}})? (\S+)$")
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"(,|$)')
_HELP = re.compile(rf"^# HELP ({_NAME}) (.*)$")
_TYPE = re.compile(rf"^# TYPE ({_NAME}) (counter|gauge|histogram|summary|untyped)$")


def _unescape(value: str) -> str:
    return re.sub(r"\\(.)", lambda m: {"n": "\n"}.get(m.group(1), m.group(1)), value)


@dataclass
class Parsed:
    """One family as read back from the text."""

    help: str
    type: str = ""
    samples: list[tuple[str, dict[str, str], float]] = field(default_factory=list)


def parse(text: str) -> dict[str, Parsed]:
    """Parse exposition text strictly; fail on anything the format does not allow."""
    assert text.endswith("\n")
    families: dict[str, Parsed] = {}
    current: str | None = None
    for line in text[:-1].split("\n"):
        if m := _HELP.match(line):
            assert m.group(1) not in families, "a family appears once"
            current = m.group(1)
            families[current] = Parsed(help=_unescape(m.group(2)))
            continue
        if m := _TYPE.match(line):
            assert current is not None and m.group(1) == current, "TYPE follows its HELP"
            assert not families[current].type
            families[current].type = m.group(2)
            continue
        m = _SAMPLE.match(line)
        assert m, f"not a sample line: {line!r}"
        assert current is not None and families[current].type, "samples follow HELP and TYPE"
        name, body, value = m.group(1), m.group(2) or "", m.group(3)
        suffixes = ("_bucket", "_sum", "_count") if families[current].type == "histogram" else ("",)
        assert any(name == current + s for s in suffixes), f"{name} outside its family"
        labels: dict[str, str] = {}
        pos = 0
        while pos < len(body):
            lm = _LABEL.match(body, pos)
            assert lm, f"bad labels: {body!r}"
            assert lm.group(1) not in labels
            labels[lm.group(1)] = _unescape(lm.group(2))
            pos = lm.end()
        families[current].samples.append((name, labels, float(value)))
    for name, family in families.items():
        if family.type == "counter":
            assert name.endswith("_total")
        if family.type == "histogram":
            _check_histogram(name, family)
    return families


def _check_histogram(name: str, family: Parsed) -> None:
    series: dict[tuple[tuple[str, str], ...], list[tuple[str, dict[str, str], float]]] = {}
    for sample in family.samples:
        key = tuple(sorted((k, v) for k, v in sample[1].items() if k != "le"))
        series.setdefault(key, []).append(sample)
    for samples in series.values():
        buckets = [(float(s[1]["le"]), s[2]) for s in samples if s[0] == name + "_bucket"]
        counts = [s[2] for s in samples if s[0] == name + "_count"]
        sums = [s[2] for s in samples if s[0] == name + "_sum"]
        assert len(counts) == 1 and len(sums) == 1
        assert [b for b, _ in buckets] == sorted(b for b, _ in buckets)
        assert buckets[-1][0] == math.inf
        values = [v for _, v in buckets]
        assert values == sorted(values), "buckets are cumulative"
        assert values[-1] == counts[0]


def value_of(families: dict[str, Parsed], sample: str, **labels: str) -> float:
    """The one value of ``sample`` with exactly these labels."""
    base = re.sub(r"_(bucket|sum|count)$", "", sample)
    family = families[base] if base in families else families[sample]
    hits = [v for n, lab, v in family.samples if n == sample and lab == labels]
    assert len(hits) == 1, (sample, labels, family.samples)
    return hits[0]


# --- tests ------------------------------------------------------------------------------------


@pytest.fixture
def metrics() -> Metrics:
    m = Metrics()
    m.engine_request("wikipedia", 120)
    m.engine_request("wikipedia", 3600, FailureClass.TIMEOUT)
    m.engine_request("arxiv", 80, FailureClass.PARSE_FAILURE)
    m.call(ToolName.WEB_SEARCH, Outcome.OK, 250)
    m.call(ToolName.WEB_SEARCH, Outcome.PARTIAL, 3900)
    m.call(ToolName.WEB_FETCH, Outcome.ERROR, 40, ErrorKind.DENIED)
    m.refused_call(ToolName.WEB_SEARCH, Reason.RATE_LIMITED)
    m.refused_call(ToolName.WEB_SEARCH, Reason.RATE_LIMITED)
    m.circuit_transition("wikipedia", CircuitState.OPEN)
    m.circuit_transition("wikipedia", CircuitState.HALF_OPEN)
    return m


def test_prometheus_render_exact_text() -> None:
    """The renderer writes HELP, TYPE and samples exactly as format 0.0.4 has them."""
    families = [
        MetricFamily(
            "demo_total",
            "Demo counter\\with a backslash\nand a line feed.",
            "counter",
            (Sample("demo_total", (("engine", "a"), ("class", "timeout")), 3),),
        ),
        MetricFamily(
            "demo_seconds",
            "Demo histogram.",
            "histogram",
            (
                Sample("demo_seconds_bucket", (("le", "0.5"),), 1),
                Sample("demo_seconds_bucket", (("le", "+Inf"),), 2),
                Sample("demo_seconds_sum", (), 1.25),
                Sample("demo_seconds_count", (), 2),
            ),
        ),
        MetricFamily("demo_empty_total", "Nothing yet.", "counter"),
    ]
    assert render(families) == (
        "# HELP demo_total Demo counter\\\\with a backslash\\nand a line feed.\n"
        "# TYPE demo_total counter\n"
        'demo_total{engine="a",class="timeout"} 3\n'
        "# HELP demo_seconds Demo histogram.\n"
        "# TYPE demo_seconds histogram\n"
        'demo_seconds_bucket{le="0.5"} 1\n'
        'demo_seconds_bucket{le="+Inf"} 2\n'
        "demo_seconds_sum 1.25\n"
        "demo_seconds_count 2\n"
        "# HELP demo_empty_total Nothing yet.\n"
        "# TYPE demo_empty_total counter\n"
    )


def test_label_values_are_escaped() -> None:
    """Backslash, double quote and line feed are escaped in label values, and parse back."""
    raw = 'a\\b"c\nd'
    assert escape_label_value(raw) == 'a\\\\b\\"c\\nd'
    assert escape_help("x\\y\nz") == "x\\\\y\\nz"
    text = render([MetricFamily("t_total", "h", "counter", (Sample("t_total", (("v", raw),), 1),))])
    assert parse(text)["t_total"].samples == [("t_total", {"v": raw}, 1.0)]


def test_render_refuses_invalid_names() -> None:
    """A metric or label name outside the format's alphabet is a programming error."""
    with pytest.raises(ValueError):
        render([MetricFamily("bad-name", "h", "counter")])
    with pytest.raises(ValueError):
        render(
            [MetricFamily("ok_total", "h", "counter", (Sample("ok_total", (("b-d", "x"),), 1),))]
        )


def test_req_obs_002_003_metrics_parse_and_count(metrics: Metrics) -> None:
    """REQ-OBS-002/003/004/007: every metric is present, parses, and holds the counts."""
    families = parse(metrics.render_prometheus())
    assert list(families) == [
        "rypsok_engine_requests_total",
        "rypsok_engine_request_duration_seconds",
        "rypsok_engine_errors_total",
        "rypsok_calls_total",
        "rypsok_call_duration_seconds",
        "rypsok_call_errors_total",
        "rypsok_calls_refused_total",
        "rypsok_circuit_transitions_total",
    ]
    v = value_of
    assert v(families, "rypsok_engine_requests_total", engine="wikipedia") == 2
    assert v(families, "rypsok_engine_requests_total", engine="arxiv") == 1
    assert (
        v(families, "rypsok_engine_errors_total", engine="wikipedia", **{"class": "timeout"}) == 1
    )
    assert (
        v(families, "rypsok_engine_errors_total", engine="arxiv", **{"class": "parse_failure"}) == 1
    )
    assert v(families, "rypsok_engine_request_duration_seconds_count", engine="wikipedia") == 2
    assert v(families, "rypsok_engine_request_duration_seconds_sum", engine="wikipedia") == 3.72
    assert (
        v(families, "rypsok_engine_request_duration_seconds_bucket", engine="wikipedia", le="0.25")
        == 1
    )
    assert v(families, "rypsok_calls_total", tool="web_search", outcome="ok") == 1
    assert v(families, "rypsok_calls_total", tool="web_search", outcome="partial") == 1
    assert v(families, "rypsok_calls_total", tool="web_fetch", outcome="error") == 1
    assert v(families, "rypsok_call_duration_seconds_count", tool="web_search") == 2
    assert v(families, "rypsok_call_errors_total", tool="web_fetch", kind="denied") == 1
    assert v(families, "rypsok_calls_refused_total", tool="web_search", reason="rate_limited") == 2
    assert v(families, "rypsok_circuit_transitions_total", engine="wikipedia", state="open") == 1


def test_empty_metrics_still_declare_every_family() -> None:
    """The set of metrics does not depend on traffic."""
    families = parse(Metrics().render_prometheus())
    assert len(families) == 8
    assert all(not f.samples for f in families.values())


def test_render_is_deterministic_whatever_the_order_of_events() -> None:
    """Series are sorted by their labels, so equal contents render equal text."""
    a, b = Metrics(), Metrics()
    a.engine_request("wikipedia", 10)
    a.engine_request("arxiv", 20)
    b.engine_request("arxiv", 20)
    b.engine_request("wikipedia", 10)
    assert a.render_prometheus() == b.render_prometheus()
    assert a.snapshot() == b.snapshot()


def test_buckets_include_the_deadlines() -> None:
    """Latency buckets separate requests that hit the engine timeout and the call ceilings."""
    assert tuple(sorted(ENGINE_BUCKETS_S)) == ENGINE_BUCKETS_S
    assert 3.5 in ENGINE_BUCKETS_S  # LIM-S5
    assert {4.0, 6.0, 15.0} <= set(CALL_BUCKETS_S)  # LIM-S4, LIM-S7, LIM-F5


@pytest.mark.parametrize(
    "bad", ["Wikipedia", "evil\n# TYPE x counter", 'a"b', "https://example.org", "", "x" * 65]
)
def test_req_status_002_engine_label_refuses_foreign_text(bad: str) -> None:
    """REQ-STATUS-002, REQ-OBS-006: only engine identifiers become engine labels."""
    m = Metrics()
    with pytest.raises(ValueError):
        m.engine_request(bad, 10)
    with pytest.raises(ValueError):
        m.circuit_transition(bad, CircuitState.OPEN)


def test_req_status_002_enum_labels_refuse_foreign_text() -> None:
    """REQ-STATUS-002: tool, outcome, kind, reason and class labels are enum values only."""
    m = Metrics()
    with pytest.raises(ValueError):
        m.call("provider says hi", Outcome.OK, 1)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        m.refused_call(ToolName.WEB_SEARCH, "Too Many Requests")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        m.engine_request("wikipedia", 1, "HTTP 500 from upstream")  # type: ignore[arg-type]
    assert "provider" not in m.render_prometheus()


def test_req_obs_003_error_kind_goes_with_the_error_outcome() -> None:
    """REQ-OBS-003: call errors are counted by kind, so an error call must name its kind."""
    m = Metrics()
    with pytest.raises(ValueError):
        m.call(ToolName.WEB_FETCH, Outcome.ERROR, 1)
    with pytest.raises(ValueError):
        m.call(ToolName.WEB_FETCH, Outcome.OK, 1, ErrorKind.DENIED)


def test_req_obs_007_snapshot_is_compact_and_json_ready(metrics: Metrics) -> None:
    """REQ-OBS-007, REQ-OBS-005: a compact snapshot for log lines."""
    snap = metrics.snapshot()
    assert json.loads(json.dumps(snap)) == snap
    assert snap == {
        "engine_requests": {"arxiv": 1, "wikipedia": 2},
        "engine_latency_ms": {
            "arxiv": {"count": 1, "sum": 80},
            "wikipedia": {"count": 2, "sum": 3720},
        },
        "engine_errors": {"arxiv/parse_failure": 1, "wikipedia/timeout": 1},
        "calls": {"web_fetch/error": 1, "web_search/ok": 1, "web_search/partial": 1},
        "call_latency_ms": {
            "web_fetch": {"count": 1, "sum": 40},
            "web_search": {"count": 2, "sum": 4150},
        },
        "call_errors": {"web_fetch/denied": 1},
        "calls_refused": {"web_search/rate_limited": 2},
        "circuit_transitions": {"wikipedia/half_open": 1, "wikipedia/open": 1},
    }
    assert Metrics().snapshot() == {}
