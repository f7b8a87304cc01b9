"""Draw the figures of docs/performance.md from the benchmark outputs committed in docs/data/.

* docs/data/cold_start.json       (python bench/cold_start.py > docs/data/cold_start.json)
* docs/data/search_overhead.json
  (python bench/search_overhead.py --json docs/data/search_overhead.json)

usage: python scripts/plot_performance.py   (needs the docs extra: pip install -e '.[docs]')
Writes docs/img/cold_start.png and docs/img/search_overhead.png.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # files only, no display

import matplotlib.pyplot as plt
from matplotlib.axes import Axes

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "docs" / "data"
IMG = ROOT / "docs" / "img"
RYPSOK = "#1f6feb"
REFERENCE = "#9aa4b2"
plt.rcParams.update(
    {
        "font.size": 10,
        "axes.spines.top": False,
        "axes.spines.right": False,
        "axes.grid": True,
        "axes.grid.axis": "y",
        "grid.alpha": 0.3,
        "svg.hashsalt": "rypsok",
    }
)


def _load(name: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = json.loads((DATA / name).read_text(encoding="utf-8"))
    return rows


def _label_bars(ax: Axes, bars: Any, fmt: str, *, inside: bool = False) -> None:
    """Write each bar's value above it, or inside near its base (where whiskers would cross)."""
    for bar in bars:
        height = bar.get_height()
        ax.annotate(
            fmt.format(height),
            (bar.get_x() + bar.get_width() / 2, 0 if inside else height),
            xytext=(0, 6 if inside else 3),
            textcoords="offset points",
            ha="center",
            va="bottom",
            fontsize=9,
            color="white" if inside else "black",
            fontweight="bold" if inside else "normal",
        )


def cold_start() -> Path:
    """Time to the first tools/list answer (median, min-max) and idle memory, per server."""
    rows = [r for r in _load("cold_start.json") if "server" in r]
    names = ["rypsok" if r["server"] == "rypsok" else r["server"].split("==")[0] for r in rows]
    colors = [RYPSOK if n == "rypsok" else REFERENCE for n in names]
    runs = rows[0]["runs"]
    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.6))
    medians = [r["first_tools_list_s_median"] for r in rows]
    low = [r["first_tools_list_s_median"] - r["first_tools_list_s_min"] for r in rows]
    high = [r["first_tools_list_s_max"] - r["first_tools_list_s_median"] for r in rows]
    bars = left.bar(names, medians, color=colors, yerr=[low, high], capsize=6, width=0.55)
    _label_bars(left, bars, "{:.2f} s", inside=True)
    left.set_ylabel("seconds")
    left.set_title(f"Start to first tools/list\n(median of {runs}, whiskers min to max)")
    rss = [r["idle_rss_mib_median"] for r in rows]
    bars = right.bar(names, rss, color=colors, width=0.55)
    _label_bars(right, bars, "{:.0f} MiB")
    right.set_ylabel("MiB")
    right.set_title(f"Resident memory, idle\n(median of {runs})")
    for ax in (left, right):
        ax.margins(y=0.18)
    fig.suptitle("Cold start over stdio: rypsok and the reference fetch server", fontsize=11)
    fig.tight_layout()
    return _save(fig, "cold_start.png")


def search_overhead() -> Path:
    """Added latency (median, p99) per concurrency, CPU per call and throughput."""
    rows = [r for r in _load("search_overhead.json") if "system" in r]
    levels = sorted({r["concurrency"] for r in rows})
    systems = list(dict.fromkeys(r["system"] for r in rows))
    by = {(r["system"], r["concurrency"]): r for r in rows}
    names = ["rypsok" if s == "rypsok" else "bare fan-out" for s in systems]
    colors = [RYPSOK if s == "rypsok" else REFERENCE for s in systems]
    fig, grid = plt.subplots(2, len(levels), figsize=(9, 7))
    # Top row: added latency at each concurrency, each on its own scale.
    for ax, level in zip(grid[0], levels, strict=True):
        medians = [by[(s, level)]["added_ms_median"] for s in systems]
        p99 = [by[(s, level)]["added_ms_p99"] for s in systems]
        bars = ax.bar(names, medians, color=colors, width=0.55, label="median")
        _label_bars(ax, bars, "{:.0f} ms", inside=True)
        ax.scatter(names, p99, color="black", marker="_", s=900, linewidths=2, label="p99")
        for x, value in zip(names, p99, strict=True):
            ax.annotate(
                f"p99 {value:.0f} ms",
                (x, value),
                xytext=(0, 5),
                textcoords="offset points",
                ha="center",
                fontsize=9,
            )
        calls = by[(systems[0], level)]["calls"]
        ax.set_title(f"Added latency, {level} at once ({calls} calls)")
        ax.set_ylabel("ms beyond the engines' 50 ms")
        ax.margins(y=0.2)
    # Bottom row: CPU per call and throughput, both concurrencies side by side.
    width = 0.38
    panels = [
        ("cpu_ms_per_call", "CPU ms per call", "{:.1f}"),
        ("calls_per_s", "calls/s", "{:.0f}"),
    ]
    for ax, (key, title, fmt) in zip(grid[1], panels, strict=True):
        for i, system in enumerate(systems):
            xs = [j + (i - 0.5) * width for j in range(len(levels))]
            bars = ax.bar(
                xs,
                [by[(system, c)][key] for c in levels],
                width=width,
                color=colors[i],
                label=names[i],
            )
            _label_bars(ax, bars, fmt)
        ax.set_xticks(range(len(levels)), [f"{c} at once" for c in levels])
        ax.set_title(title)
        ax.margins(y=0.2)
    grid[1][1].legend(loc="upper left", fontsize=9, frameon=False)
    fig.suptitle(
        "web_search over three simulated engines answering after 50 ms:\n"
        "rypsok against a bare fan-out doing nothing but the requests",
        fontsize=11,
    )
    fig.tight_layout()
    return _save(fig, "search_overhead.png")


def _save(fig: Any, name: str) -> Path:
    IMG.mkdir(parents=True, exist_ok=True)
    path = IMG / name
    fig.savefig(path, dpi=110, metadata={"Software": None})
    plt.close(fig)
    return path


def main() -> int:
    """Draw every figure; print the files written."""
    for path in (cold_start(), search_overhead()):
        print(path.relative_to(ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
