#!/usr/bin/env bash
# Run every fuzz target of fuzz/ for a fixed budget (REQ-SEC-023, REQ-TEST-013).
#
#   bash scripts/fuzz.sh [SECONDS_PER_TARGET] [--strict] [--jobs N] [TARGET ...]
#
# SECONDS_PER_TARGET defaults to 10. TARGET is a name like clean or fuzz_clean (default: all).
# Targets run under atheris (libFuzzer) when it is installed, else under the harness's own
# mutational loop (fuzz/_harness.py). Seeds come from fuzz/corpus/<target>/ and, where one
# exists, the test fixtures of the parser; inputs the fuzzer finds go to a scratch corpus, so
# the checkout is never written. A crash is written to $FUZZ_ARTIFACTS (default: a scratch
# folder, printed) and fails the run: copy it to tests/security/crashes/ and add a test.
#
# Without --strict the crashes listed in fuzz/known-crashes.txt (reported, not fixed yet) are
# skipped, so CI still finds new ones; --strict (the release gate) skips nothing.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
PY="${PYTHON:-}"
if [ -z "$PY" ]; then
    if [ -n "${VIRTUAL_ENV:-}" ]; then PY="$VIRTUAL_ENV/bin/python"
    elif [ -x "$ROOT/.venv/bin/python" ]; then PY="$ROOT/.venv/bin/python"
    else PY=python3; fi
fi

SECONDS_PER_TARGET=10
STRICT=0
JOBS=$(nproc 2>/dev/null || echo 1)
TARGETS=()
while [ "$#" -gt 0 ]; do
    case "$1" in
        --strict) STRICT=1 ;;
        --jobs) shift; JOBS="$1" ;;
        --jobs=*) JOBS="${1#--jobs=}" ;;
        ''|*[!0-9]*) TARGETS+=("${1#fuzz_}") ;;
        *) SECONDS_PER_TARGET="$1" ;;
    esac
    shift
done
if [ "${#TARGETS[@]}" -eq 0 ]; then
    for file in fuzz/fuzz_*.py; do
        name=$(basename "$file" .py)
        TARGETS+=("${name#fuzz_}")
    done
fi

# Seeds beyond fuzz/corpus/<target>: the fixtures the parser's own tests use.
extra_seeds() {
    case "$1" in
        engines) echo "tests/engines/fixtures" ;;
        html_pipeline) echo "tests/fetch/corpus" ;;
        feeds) echo "tests/engines/fixtures/arxiv" ;;
        *) echo "" ;;
    esac
}
max_len() {
    case "$1" in
        html_pipeline|engines|feeds) echo 65536 ;;
        charset|robots) echo 16384 ;;
        *) echo 4096 ;;
    esac
}

SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/rypsok-fuzz.XXXXXX")
ARTIFACTS="${FUZZ_ARTIFACTS:-$SCRATCH/artifacts}"
mkdir -p "$ARTIFACTS"
if [ "$STRICT" = 1 ]; then KNOWN=""; else KNOWN="$ROOT/fuzz/known-crashes.txt"; fi
if [ "${RYPSOK_FUZZ_ENGINE:-}" = fallback ]; then
    engine="fallback (RYPSOK_FUZZ_ENGINE=fallback)"
else
    engine=$("$PY" -c 'import atheris' 2>/dev/null && echo atheris || echo "fallback (atheris not installed)")
fi
echo "fuzzing ${#TARGETS[@]} targets, ${SECONDS_PER_TARGET} s each, ${JOBS} at a time, engine: $engine"
[ "$STRICT" = 1 ] && echo "strict: known crashes are not skipped"

run_target() {
    local name="$1" file="fuzz/fuzz_$1.py" corpus="$SCRATCH/corpus-$1" log="$SCRATCH/$1.log"
    local seeds=("$SCRATCH/seeds-$1") extra
    # The fuzzer gets a copy of the committed seeds: libFuzzer may rewrite inputs in the
    # directories it is given, and the checkout must stay as committed (the release gate
    # refuses a tree that changed while it ran).
    mkdir -p "$corpus" "$SCRATCH/seeds-$1"
    if [ -d "$ROOT/fuzz/corpus/$1" ]; then
        cp -R "$ROOT/fuzz/corpus/$1/." "$SCRATCH/seeds-$1/"
    fi
    extra=$(extra_seeds "$1")
    if [ -n "$extra" ] && [ -d "$extra" ]; then
        mkdir -p "$SCRATCH/fixtures-$1"
        cp -R "$ROOT/$extra/." "$SCRATCH/fixtures-$1/"
        seeds+=("$SCRATCH/fixtures-$1")
    fi
    local started=$SECONDS status
    RYPSOK_FUZZ_INSTRUMENT=1 RYPSOK_FUZZ_KNOWN="$KNOWN" PYTHONHASHSEED=0 \
        timeout --kill-after=10 $(( SECONDS_PER_TARGET * 3 + 120 )) \
        "$PY" "$file" "$corpus" "${seeds[@]}" \
        -max_total_time="$SECONDS_PER_TARGET" -timeout=30 -rss_limit_mb=3072 \
        -max_len="$(max_len "$1")" -artifact_prefix="$ARTIFACTS/$1-" \
        -print_final_stats=1 > "$log" 2>&1
    status=$?
    local runs
    runs=$(grep -Eo 'stat::number_of_executed_units: *[0-9]+|fallback fuzzer \(no atheris\): [0-9]+ runs' "$log" \
        | grep -Eo '[0-9]+' | tail -n 1)
    if [ "$status" -eq 0 ]; then
        printf 'ok     %-16s %6s runs  %3d s\n' "$name" "${runs:-?}" $(( SECONDS - started ))
    else
        printf 'CRASH  %-16s exit %d after %d s; log: %s\n' "$name" "$status" \
            $(( SECONDS - started )) "$log"
        grep -E -A12 'Uncaught Python exception|Traceback|InvariantBroken' "$log" | head -n 40 | sed 's/^/    /'
        ls "$ARTIFACTS"/"$name"-* 2>/dev/null | sed 's/^/    crash input: /'
    fi
    return "$status"
}

failed=0
running=0
for name in "${TARGETS[@]}"; do
    if [ ! -f "fuzz/fuzz_$name.py" ]; then
        echo "no fuzz target fuzz/fuzz_$name.py"; failed=1; continue
    fi
    run_target "$name" &
    running=$((running + 1))
    if [ "$running" -ge "$JOBS" ]; then
        wait -n || failed=1
        running=$((running - 1))
    fi
done
while [ "$running" -gt 0 ]; do
    wait -n || failed=1
    running=$((running - 1))
done

if [ "$failed" -ne 0 ]; then
    echo "FUZZING FAILED: crash inputs are in $ARTIFACTS (logs in $SCRATCH)"
    exit 1
fi
rm -rf "$SCRATCH"
echo "fuzzing passed: no crash in ${#TARGETS[@]} targets"
