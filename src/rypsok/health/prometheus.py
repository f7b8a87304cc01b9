"""Rendering to the Prometheus text exposition format, version 0.0.4.

Generic and small: families of samples in, text out. Every family gets ``# HELP`` and
``# TYPE`` lines even when it has no samples yet, so the set of metrics never depends on
traffic. Order is the caller's: :class:`rypsok.health.metrics.Metrics` sorts its series.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

MetricType = Literal["counter", "gauge", "histogram", "summary", "untyped"]

_METRIC_NAME = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")
_LABEL_NAME = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")


@dataclass(frozen=True, slots=True)
class Sample:
    """One line: a name (the family's, or with a ``_bucket``/``_sum``/``_count`` suffix)."""

    name: str
    labels: tuple[tuple[str, str], ...]
    value: float


@dataclass(frozen=True, slots=True)
class MetricFamily:
    """A metric: its name, help text, type and samples in the order they are written."""

    name: str
    help: str
    type: MetricType
    samples: tuple[Sample, ...] = ()


def escape_label_value(value: str) -> str:
    r"""A label value as the format needs it: ``\`` ``"`` and line feed escaped."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def escape_help(text: str) -> str:
    r"""A help text as the format needs it: ``\`` and line feed escaped."""
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def format_value(value: float) -> str:
    """A sample value: integers without a fraction, infinities as ``+Inf``/``-Inf``."""
    if isinstance(value, int):
        return str(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value.is_integer() and abs(value) < 2**53:
        return str(int(value))
    return repr(value)


def _labels(labels: tuple[tuple[str, str], ...]) -> str:
    if not labels:
        return ""
    for name, _ in labels:
        if not _LABEL_NAME.match(name) or name.startswith("__"):
            raise ValueError(f"invalid label name {name!r}")
    body = ",".join(f'{name}="{escape_label_value(value)}"' for name, value in labels)
    return "{" + body + "}"


def render(families: Iterable[MetricFamily]) -> str:
    """The exposition text of ``families``, one line per sample, ending with a line feed."""
    lines: list[str] = []
    for family in families:
        if not _METRIC_NAME.match(family.name):
            raise ValueError(f"invalid metric name {family.name!r}")
        lines.append(f"# HELP {family.name} {escape_help(family.help)}")
        lines.append(f"# TYPE {family.name} {family.type}")
        for sample in family.samples:
            if not _METRIC_NAME.match(sample.name):
                raise ValueError(f"invalid metric name {sample.name!r}")
            lines.append(f"{sample.name}{_labels(sample.labels)} {format_value(sample.value)}")
    return "\n".join(lines) + "\n" if lines else ""
