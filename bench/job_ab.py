"""The extraction job against trafilatura, in one process, for several checkouts of rypsok.

bench/fetch_speed.py measures whole calls on one checkout; its ratios move with the host and
its load by more than one change of the extraction costs. This script compares checkouts (a
commit before and after a change, checked out with ``git worktree add``): for each one, a
child process imports rypsok from ``CHECKOUT/src`` and, page by page, runs
``trafilatura.extract(html, output_format="markdown")`` and rypsok's job
(``rypsok.fetch.pipeline.run``) on the same bench page (bench/fetch_pages.py), and reports the
CPU of each and their ratio. trafilatura runs right before each job, so a change of load
weighs on both alike, and the ratio is what to compare; the checkouts run in turn, ``--rounds``
times, so that a drift of the host shows as a spread between rounds.

``--variant favor_recall=false`` (repeatable; several settings joined with ``,``) also runs
each checkout with those of rypsok's trafilatura settings changed (``TRAFILATURA_OPTIONS``,
booleans), in turn with the shipped settings: the cost of a setting, measured the same way.

usage: python bench/job_ab.py CHECKOUT [CHECKOUT ...] [--size 200000] [--pages 30] [--rounds 2]
                              [--variant NAME=true|false[,...]]...
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
from pathlib import Path

_BENCH = Path(__file__).resolve().parent


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def settings(variant: str) -> dict[str, bool]:
    """``name=true,name=false`` as trafilatura settings."""
    found: dict[str, bool] = {}
    for item in filter(None, variant.split(",")):
        name, _, value = item.partition("=")
        if value.lower() not in ("true", "false"):
            raise SystemExit(f"--variant {item!r}: give NAME=true or NAME=false")
        found[name.strip()] = value.lower() == "true"
    return found


def measure(size: int, pages: int, variant: str = "") -> dict[str, float]:
    """CPU per page of trafilatura and of rypsok's job (the rypsok imported), in ms."""
    import trafilatura

    from fetch_pages import article
    from rypsok.fetch import trafilatura_markdown
    from rypsok.fetch.pipeline import run

    trafilatura_markdown.TRAFILATURA_OPTIONS.update(settings(variant))

    bodies = [article(size, seed) for seed in range(pages)]
    job = {"content_type": "text/html; charset=utf-8", "url": "http://bench.test/"}
    run(job, bodies[0])  # imports and first-call costs out of the measurement
    trafilatura.extract(bodies[0].decode("utf-8"), output_format="markdown")
    reference = rypsok = 0.0
    for seed, body in enumerate(bodies):
        start = _cpu()
        trafilatura.extract(body.decode("utf-8"), output_format="markdown")
        reference += _cpu() - start
        start = _cpu()
        run({**job, "url": f"http://bench.test/{seed}"}, body)
        rypsok += _cpu() - start
    return {
        "trafilatura_ms": reference / pages * 1000,
        "job_ms": rypsok / pages * 1000,
        "ratio": rypsok / reference,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkouts", nargs="*", type=Path)
    parser.add_argument("--size", type=int, default=200_000)
    parser.add_argument("--pages", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--variant", action="append", default=[])
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    for variant in args.variant:
        settings(variant)  # a malformed variant fails before any run
    if args.child is not None:
        sys.path[:0] = [str(args.child / "src"), str(_BENCH)]
        print(json.dumps(measure(args.size, args.pages, ",".join(args.variant))))
        return 0
    if not args.checkouts:
        parser.error("give at least one checkout")
    for round_number in range(1, args.rounds + 1):
        for checkout in args.checkouts:
            for variant in ["", *args.variant]:
                child = ["--child", str(checkout.resolve()), "--size", str(args.size)]
                if variant:
                    child += ["--variant", variant]
                out = subprocess.run(
                    [sys.executable, __file__, *child, "--pages", str(args.pages)],
                    check=True,
                    capture_output=True,
                    text=True,
                )
                result = json.loads(out.stdout)
                label = f"{checkout} {variant}".rstrip()
                print(
                    f"round {round_number} {label}: job {result['job_ms']:.2f} ms, "
                    f"trafilatura {result['trafilatura_ms']:.2f} ms, ratio {result['ratio']:.3f}"
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
