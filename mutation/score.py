"""Score a mutmut run against the committed list of accepted survivors (REQ-TEST-019).

usage: score.py --results FILE --accepted FILE [--elapsed SECONDS] [--modules TEXT]

``--results`` is the output of ``mutmut results --all true`` (one ``name: status`` a line).
``--accepted`` lists survivors that were reviewed and accepted, one a line::

    rypsok.egress.addresses.x_canonical__mutmut_3   # equivalent: ... (the reason)

A line without a reason after ``#`` is an error: an accepted survivor must say why.

Score = killed / checked, where killed counts killed, timeout, caught by type check and
segfault, and checked adds the survivors (survived, no tests, suspicious). Exit 0 when every
survivor is accepted, 1 when one is not or when the run is incomplete (a mutant "not checked"
or "check was interrupted by user": an interrupted run proves nothing), 2 on bad input.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from pathlib import Path

_LINE = re.compile(r"^\s*(?P<name>[\w.\-\[\]]+__mutmut_\d+)\s*:\s*(?P<status>.+?)\s*$")
_SURVIVING = frozenset({"survived", "no tests", "suspicious"})
_KILLED = frozenset({"killed", "timeout", "caught by type check", "segfault"})
_INCOMPLETE = frozenset({"not checked", "check was interrupted by user"})


def say(line: str) -> None:
    """One line of the report on standard output."""
    sys.stdout.write(line + "\n")


def read_results(path: Path) -> dict[str, str]:
    """Mutant name to status from ``mutmut results --all true``."""
    found: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        match = _LINE.match(line)
        if match:
            found[match.group("name")] = match.group("status")
    return found


def read_accepted(path: Path) -> tuple[dict[str, str], list[str]]:
    """Accepted survivor name to reason, and the malformed lines."""
    accepted: dict[str, str] = {}
    bad: list[str] = []
    if not path.exists():
        return accepted, bad
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        name, _, reason = line.partition("#")
        name, reason = name.strip(), reason.strip()
        if not name or not reason:
            bad.append(f"{path}:{number}: an accepted survivor needs a name and '# reason'")
            continue
        accepted[name] = reason
    return accepted, bad


def main(argv: list[str] | None = None) -> int:
    """Print the score and the unaccepted survivors; exit 1 when there are any."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, required=True)
    parser.add_argument("--accepted", type=Path, required=True)
    parser.add_argument("--elapsed", type=int, default=0)
    parser.add_argument("--modules", default="")
    args = parser.parse_args(argv)

    results = read_results(args.results)
    accepted, bad = read_accepted(args.accepted)
    if not results:
        sys.stderr.write(f"no mutant results in {args.results}\n")
        return 2
    counts = Counter(results.values())
    killed = sum(n for status, n in counts.items() if status in _KILLED)
    surviving = sorted(name for name, status in results.items() if status in _SURVIVING)
    checked = killed + len(surviving)
    unchecked = len(results) - checked
    unaccepted = [name for name in surviving if name not in accepted]
    incomplete = sorted(name for name, status in results.items() if status in _INCOMPLETE)
    stale = sorted(name for name in accepted if results.get(name, "") in _KILLED)

    score = 100.0 * killed / checked if checked else 0.0
    adjusted = 100.0 * (killed + len(surviving) - len(unaccepted)) / checked if checked else 0.0
    say(f"modules: {args.modules or '(all configured)'}")
    say(f"mutants: {len(results)}; checked {checked}; not checked {unchecked}")
    say("by status: " + ", ".join(f"{status} {n}" for status, n in sorted(counts.items())))
    say(f"mutation score (killed / checked): {score:.1f}%")
    say(f"score with accepted survivors counted as killed: {adjusted:.1f}%")
    if args.elapsed:
        say(f"elapsed: {args.elapsed} s")
    for line in bad:
        say(line)
    for name in stale:
        say(f"accepted survivor is now killed (remove it from the list): {name}")
    for name in unaccepted:
        say(f"UNACCEPTED SURVIVOR: {name} ({results[name]})")
    if incomplete:
        say(f"INCOMPLETE RUN: {len(incomplete)} mutant(s) not checked, e.g. {incomplete[0]}")
    if bad or unaccepted or incomplete:
        unchecked_note = f", {len(incomplete)} mutant(s) not checked" if incomplete else ""
        say(f"FAIL: {len(unaccepted)} survivor(s) not in {args.accepted}{unchecked_note}")
        return 1
    say("OK: every survivor is accepted with a reason")
    return 0


if __name__ == "__main__":
    sys.exit(main())
