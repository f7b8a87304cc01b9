"""Draw the figures of docs/performance.md from the benchmark outputs committed in docs/data/.

* docs/data/cold_start.json       (python bench/cold_start.py > docs/data/cold_start.json)
* docs/data/search_overhead.json
  (python bench/search_overhead.py --json docs/data/search_overhead.json)
* docs/data/fetch_speed.json      (python bench/fetch_speed.py --json docs/data/fetch_speed.json)
* docs/data/fetch_memory.json     (python bench/fetch_memory.py --json docs/data/fetch_memory.json)

usage: python scripts/plot_performance.py   (needs the docs extra: pip install -e '.[docs]')
Writes docs/img/cold_start.png, docs/img/search_overhead.png, docs/img/fetch_speed.png and
docs/img/fetch_memory.png.
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


def _load_object(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((DATA / name).read_text(encoding="utf-8"))
    return data


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


# web_fetch: the systems drawn, in order, with their short names and colours.
_FETCH_SYSTEMS = [
    ("rypsok web_fetch", "rypsok web_fetch (whole pipeline)", RYPSOK),
    ("rypsok extraction job in process (no containment)", "rypsok extraction only", "#8cb4f0"),
    ("trafilatura.extract (direct, reference)", "trafilatura.extract", "#5b6470"),
    ("mcp-server-fetch==2026.10.24 fetch_url", "mcp-server-fetch fetch_url", REFERENCE),
]


def _duration(ms: float) -> str:
    return f"{ms / 1000:.1f} s" if ms >= 1000 else f"{ms:.0f} ms"


def fetch_speed() -> Path:
    """Wall and CPU time per page by page size, rypsok against the references (log scale)."""
    data = _load_object("fetch_speed.json")
    rows = [r for r in data["rows"] if r["run"] == "sequential"]
    sizes = list(dict.fromkeys(r["size"] for r in rows))
    by = {(r["system"], r["size"]): r for r in rows}
    systems = [s for s in _FETCH_SYSTEMS if any((s[0], z) in by for z in sizes)]
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.4))
    width = 0.8 / len(systems)
    panels = [
        (left, "wall_ms_median", "Wall time per page, median"),
        (right, "cpu_ms_per_page_total", "CPU time per page\n(rypsok: its process + its workers)"),
    ]
    for ax, key, title in panels:
        for i, (system, name, color) in enumerate(systems):
            xs = [j + (i - (len(systems) - 1) / 2) * width for j in range(len(sizes))]
            values = [by[(system, z)][key] if (system, z) in by else 0 for z in sizes]
            bars = ax.bar(xs, values, width=width, color=color, label=name)
            for bar, value in zip(bars, values, strict=True):
                if value:
                    ax.annotate(
                        _duration(value),
                        (bar.get_x() + bar.get_width() / 2, value),
                        xytext=(0, 2),
                        textcoords="offset points",
                        ha="center",
                        va="bottom",
                        fontsize=7,
                        rotation=90,
                    )
        ax.set_yscale("log")
        ax.set_ylim(top=ax.get_ylim()[1] * 12)
        ax.set_xticks(range(len(sizes)), [f"{z} page" for z in sizes])
        ax.set_ylabel("ms per page (log scale)")
        ax.set_title(title)
    left.legend(loc="upper left", fontsize=8, frameon=False)
    load = data["machine"]["load_average_1_5_15_at_start"][0]
    fig.suptitle(
        "web_fetch on article-like pages served on loopback, one call at a time\n"
        f"({data['rypsok']['containment']}, 2 cores shared with other jobs: "
        f"load average {load:.1f} at start)",
        fontsize=11,
    )
    fig.tight_layout()
    return _save(fig, "fetch_speed.png")


def fetch_memory() -> Path:
    """The compression bomb's peak memory, and REQ-PERF-003's formula against the peak."""
    data = _load_object("fetch_memory.json")
    ours = data["rypsok"]
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4.2))
    # Left: one 1 MiB gzip body inflating to 1 GiB.
    bomb = ours["bomb"]
    names = ["rypsok\n(too_large)"]
    # The process's high-water mark after the call bounds the peak the sampler may miss.
    values = [max(bomb["process_rss_peak_mib"], bomb["process_vmhwm_after_mib"])]
    colors = [RYPSOK]
    reference = data.get("reference_bomb")
    if reference and "peak_rss_mib" in reference:
        names.append(
            f"mcp-server-fetch\n({reference['outcome']} at the\n"
            f"{reference['address_space_limit_gib']} GiB address-space cap)"
        )
        values.append(reference["peak_rss_mib"])
        colors.append(REFERENCE)
    bars = left.bar(names, values, color=colors, width=0.55)
    _label_bars(left, bars, "{:.0f} MiB")
    left.axhline(bomb["target_mib"], color="#d1242f", linestyle="--", linewidth=1)
    left.annotate(
        f"target {bomb['target_mib']} MiB",
        (1, bomb["target_mib"]),
        xycoords=("axes fraction", "data"),
        xytext=(-4, 4),
        textcoords="offset points",
        ha="right",
        fontsize=8,
        color="#d1242f",
    )
    left.set_yscale("log")
    left.set_ylim(top=max(values) * 3)
    left.set_ylabel("peak resident memory, MiB (log scale)")
    left.set_title("Gzip bomb: 1 MiB on the wire, 1 GiB inflated")
    # Right: the formula's terms against the measured peak, stacked.
    formula = ours["req_perf_003"]
    peak = ours["concurrent_4mib"]
    workers = formula["workers"]
    stacks = [
        (
            "REQ-PERF-003 formula",
            [
                (formula["base_mib"], "fixed base (idle process)", "#c9d7ee"),
                (formula["bodies_mib"], "LIM-C3 x LIM-F3 bodies", "#8cb4f0"),
                (workers * formula["parse_cost_mib"], f"LIM-C5 ({workers}) x parse cost", RYPSOK),
            ],
        ),
        (
            "measured peak\n(8 fetches of 4 MiB at once)",
            [
                (peak["peak_process_rss_mib"], "rypsok process", "#5b6470"),
                (
                    formula["measured_peak_mib"] - peak["peak_process_rss_mib"],
                    "workers (+ bwrap)",
                    REFERENCE,
                ),
            ],
        ),
    ]
    for x, (_, parts) in enumerate(stacks):
        bottom = 0.0
        for value, label, color in parts:
            right.bar(x, value, bottom=bottom, color=color, width=0.55, label=label)
            right.annotate(
                f"{value:.0f}",
                (x, bottom + value / 2),
                ha="center",
                va="center",
                fontsize=8,
                color="black",
            )
            bottom += value
        right.annotate(
            f"{bottom:.0f} MiB", (x, bottom), xytext=(0, 3), textcoords="offset points", ha="center"
        )
    right.set_xticks(range(len(stacks)), [name for name, _ in stacks])
    right.set_ylabel("MiB")
    right.margins(y=0.15)
    right.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)
    right.set_title("Process + workers: formula and peak")
    fig.suptitle("web_fetch memory (VmRSS of rypsok and its workers, sampled every 10 ms)")
    fig.tight_layout()
    return _save(fig, "fetch_memory.png")


def _save(fig: Any, name: str) -> Path:
    IMG.mkdir(parents=True, exist_ok=True)
    path = IMG / name
    fig.savefig(path, dpi=110, metadata={"Software": None})
    plt.close(fig)
    return path


def main() -> int:
    """Draw every figure; print the files written."""
    for path in (cold_start(), search_overhead(), fetch_speed(), fetch_memory()):
        print(path.relative_to(ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
