#!/usr/bin/env bash
# The release gate (REQ-TEST-019): every release check, on the current commit, in one command.
#
#   bash scripts/release_gate.sh
#
# Jobs (each logs to $GATE_DIR/<job>.log; all run, none is ignored, the exit is non-zero when
# any fails):
#   reproducible  two wheel builds of `git archive HEAD` with SOURCE_DATE_EPOCH, same SHA-256
#   fuzz          every fuzz target for $RELEASE_FUZZ_SECONDS (default 300) each, --strict:
#                 a known, reported crash is a No-Go too (REQ-SEC-023)
#   mutation      mutation testing of the security modules against
#                 mutation/accepted-survivors.txt (mutation/run.sh)
#   live          one real request per engine (scripts/live_check.py --require): no network is
#                 a failure here, not a skip
#   advisories    the dependency audit with --require: "not audited" is a failure
#   threats       every row of docs/threats.md is proven by a test (scripts/threat_trace.py)
#   tests         the test suite (python -m pytest -q)
#
# The CPU-heavy jobs (fuzz, mutation) run side by side with the light ones; the wheel builds
# run one after the other inside their job. A release is tagged (no "v" prefix) only on the
# commit of a green run (docs/security.md). A work tree that differs from HEAD (changed or
# untracked files, at the start or the end) ends the gate with exit 1 and "NOT on <commit>",
# whatever the jobs said: they checked the work tree, not the commit.
#
# Environment: PYTHON (default .venv/bin/python), RELEASE_FUZZ_SECONDS, GATE_DIR (default: a
# scratch folder, printed), GATE_JOBS (space-separated subset of the jobs above).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
PY="${PYTHON:-$ROOT/.venv/bin/python}"
[ -x "$PY" ] || PY=python3
export PYTHON="$PY"
FUZZ_SECONDS="${RELEASE_FUZZ_SECONDS:-300}"
GATE_DIR="${GATE_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/rypsok-gate.XXXXXX")}"
mkdir -p "$GATE_DIR"
JOBS=(${GATE_JOBS:-reproducible fuzz mutation live advisories threats tests})
COMMIT=$(git rev-parse HEAD)
# Every job but reproducible checks the work tree, so a verdict names HEAD only when the tree
# is HEAD: no changed or untracked file (an untracked test or module is collected and imported
# too), at the start and again at the end, since the tree may change while the jobs run.
# A failing `git status` counts as dirty: the gate cannot tell.
tree_changes() { git status --porcelain 2>/dev/null || echo "?? (git status failed)"; }
DIRTY=$(tree_changes)
if [ -n "$DIRTY" ]; then
    echo "note: the work tree differs from HEAD ($COMMIT); reproducible checks HEAD only, the"
    echo "      other jobs check the work tree, so this run cannot clear the commit for a tag:"
    printf '%s\n' "$DIRTY" | head -n 10 | sed 's/^/      /'
fi
echo "release gate on $COMMIT; logs in $GATE_DIR"

job_reproducible() {
    local work epoch a b
    work=$(mktemp -d "${TMPDIR:-/tmp}/rypsok-repro.XXXXXX")
    epoch=$(git log -1 --format=%ct HEAD)
    for run in a b; do
        mkdir -p "$work/src-$run" "$work/dist-$run"
        git archive --format=tar HEAD | tar -x -C "$work/src-$run"
        ( cd "$work/src-$run" && SOURCE_DATE_EPOCH="$epoch" PYTHONHASHSEED=0 \
            "$PY" -m build --wheel --outdir "$work/dist-$run" . ) || return 1
    done
    a=$(cd "$work/dist-a" && sha256sum ./*.whl)
    b=$(cd "$work/dist-b" && sha256sum ./*.whl)
    echo "first build:  $a"
    echo "second build: $b"
    rm -rf "$work"
    if [ "$a" != "$b" ] || [ -z "$a" ]; then
        echo "NOT REPRODUCIBLE: the two wheels differ"
        return 1
    fi
    echo "REPRODUCIBLE: identical SHA-256"
}
job_fuzz() { bash scripts/fuzz.sh "$FUZZ_SECONDS" --strict; }
job_mutation() { MUTATION_OUT="$GATE_DIR/mutation" bash mutation/run.sh; }
job_live() { "$PY" scripts/live_check.py --require; }
job_advisories() { "$PY" scripts/audit_dependencies.py --require; }
job_threats() { "$PY" scripts/threat_trace.py; }
job_tests() { "$PY" -m pytest -q; }

declare -A PIDS=()
declare -A STARTED=()
for job in "${JOBS[@]}"; do
    if ! declare -F "job_$job" > /dev/null; then
        echo "unknown job: $job"; exit 2
    fi
    STARTED[$job]=$SECONDS
    ( "job_$job" ) > "$GATE_DIR/$job.log" 2>&1 &
    PIDS[$job]=$!
done

failed=()
for job in "${JOBS[@]}"; do
    wait "${PIDS[$job]}"
    status=$?
    elapsed=$(( SECONDS - STARTED[$job] ))
    last=$(grep -v '^\s*$' "$GATE_DIR/$job.log" | tail -n 1)
    if [ "$status" -eq 0 ]; then
        printf 'PASS  %-13s %5d s  %s\n' "$job" "$elapsed" "$last"
    else
        printf 'FAIL  %-13s %5d s  exit %d: %s\n' "$job" "$elapsed" "$status" "$last"
        failed+=("$job")
    fi
done

if [ "${#failed[@]}" -ne 0 ]; then
    echo "RELEASE GATE: RED (${failed[*]}); do not tag $COMMIT. Logs: $GATE_DIR"
    exit 1
fi
# Checked again: a commit or an edit while the jobs ran means they did not all see one tree.
# A file a job itself wrote into the checkout shows here too, and is listed: fix that job.
AFTER=$(tree_changes)
if [ -n "$DIRTY" ] || [ -n "$AFTER" ] || [ "$(git rev-parse HEAD)" != "$COMMIT" ]; then
    if [ -z "$DIRTY" ] && [ -n "$AFTER" ]; then
        echo "note: the work tree changed while the gate ran:"
        printf '%s\n' "$AFTER" | head -n 10 | sed 's/^/      /'
    fi
    ran=$([ -n "${GATE_JOBS:-}" ] && echo "the selected jobs (${JOBS[*]})" || echo "every job")
    echo "RELEASE GATE: $ran passed on the work tree, NOT on $COMMIT: commit or stash first and"
    echo "run the gate again on the clean tree; do not tag."
    exit 1
fi
if [ -n "${GATE_JOBS:-}" ]; then
    echo "RELEASE GATE: the selected jobs passed on $COMMIT (${JOBS[*]}); a release needs all"
    exit 0
fi
echo "RELEASE GATE: GREEN on $COMMIT; it may be tagged (no v prefix)."
