#!/usr/bin/env bash
# Mutation testing of the security modules (REQ-TEST-019), for the release gate, never CI.
#
#   bash mutation/run.sh [MODULE_GLOB ...]
#
# With no argument every security module is mutated (see SECURITY_MODULES). A MODULE_GLOB is a
# path under src/, e.g. src/rypsok/egress/addresses.py or 'src/rypsok/privacy/*'.
#
# mutmut 3 is configured in pyproject.toml's [tool.mutmut] and writes a mutants/ tree next to
# it; to leave the checkout untouched the run happens in a scratch copy of src/ and tests/
# whose pyproject.toml gets the [tool.mutmut] table appended. The result is compared with
# mutation/accepted-survivors.txt: a surviving mutant that is not listed there (with its
# reason) fails the run. The score and the survivors are written to $MUTATION_OUT
# (default: $TMPDIR/rypsok-mutation-last-run, outside the checkout).
#
# Environment: MUTMUT_CHILDREN (default: number of cores), MUTATION_KEEP=1 keeps the scratch copy.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
PY="${PYTHON:-$ROOT/.venv/bin/python}"
[ -x "$PY" ] || PY=python
OUT="${MUTATION_OUT:-${TMPDIR:-/tmp}/rypsok-mutation-last-run}"
CHILDREN="${MUTMUT_CHILDREN:-$(nproc)}"

SECURITY_MODULES=(
    "src/rypsok/egress/addresses.py"
    "src/rypsok/egress/urls.py"
    "src/rypsok/search/normalize.py"
    "src/rypsok/boundary/*"
    "src/rypsok/privacy/*"
    "src/rypsok/fetch/robots.py"
    "src/rypsok/services/privacy_gate.py"
    "src/rypsok/egress/gateway.py"
)
if [ "$#" -gt 0 ]; then
    MODULES=("$@")
else
    MODULES=("${SECURITY_MODULES[@]}")
fi

# The tests that exercise the security modules; mutmut picks, per mutated function, the
# tests among these that call it. A test outside these is never run against a mutant: a new
# test file of a security module must match one of them.
TESTS=()
for candidate in tests/egress tests/privacy tests/boundary tests/search/test_normalize*.py \
    tests/fetch/test_robots*.py tests/security tests/service/test_web_fetch.py \
    tests/service/test_credential_notices.py; do
    [ -e "$candidate" ] && TESTS+=("$candidate")
done

"$PY" -c "import mutmut" 2>/dev/null || {
    echo "mutmut is not installed: pip install -c requirements/constraints.txt -e '.[security]'" >&2
    exit 2
}

WORK=$(mktemp -d "${TMPDIR:-/tmp}/rypsok-mutation.XXXXXX")
cleanup() { [ "${MUTATION_KEEP:-0}" = 1 ] || rm -rf "$WORK"; }
trap cleanup EXIT
# Copy what the tests need, without caches or build metadata.
tar -C "$ROOT" --exclude='__pycache__' --exclude='*.egg-info' -cf - src tests docs fuzz requirements \
    scripts mutation .github pyproject.toml \
    | tar -C "$WORK" -xf -

# Tests that fail without any mutant (a broken baseline) would stop mutmut before it starts;
# they are deselected here, named in the output, and still fail the gate's "tests" job.
BASELINE_FAILURES=()
echo "baseline: running the selected tests once without mutants"
baseline_log="$WORK/baseline.log"
( cd "$WORK" && "$PY" -m pytest -q -p no:cacheprovider -rf "${TESTS[@]}" ) > "$baseline_log" 2>&1 || true
while IFS= read -r node; do
    [ -n "$node" ] && BASELINE_FAILURES+=("$node")
done < <(sed -n -E 's/^(FAILED|ERROR) ([^ ]+)( - .*)?$/\2/p' "$baseline_log")
if [ "${#BASELINE_FAILURES[@]}" -gt 0 ]; then
    echo "deselected ${#BASELINE_FAILURES[@]} test(s) that fail without any mutant:"
    printf '    %s\n' "${BASELINE_FAILURES[@]}"
fi

toml_escape() { local text="${1//\\/\\\\}"; printf '%s' "${text//\"/\\\"}"; }
toml_list() {
    local first=1 item
    printf '['
    for item in "$@"; do
        [ $first = 1 ] || printf ', '
        printf '"%s"' "$(toml_escape "$item")"
        first=0
    done
    printf ']'
}
{
    echo
    echo "[tool.mutmut]"
    echo "source_paths = [\"src\"]"
    echo "only_mutate = $(toml_list "${MODULES[@]}")"
    echo "pytest_add_cli_args_test_selection = $(toml_list "${TESTS[@]}")"
    deselect=("-q")
    for node in "${BASELINE_FAILURES[@]}"; do deselect+=("--deselect" "$node"); done
    echo "pytest_add_cli_args = $(toml_list "${deselect[@]}")"
    echo "use_git_change_detection = false"
    # Fork each mutant's tests from a server that only collected them, not from mutmut's main
    # process: that one ran the whole suite for the stats, and a mutant forked from it would
    # inherit its caches (search/normalize._to_ascii_host is an lru_cache), so the mutated
    # code under a cached call would never run and its mutants would survive unseen.
    echo 'process_isolation = "forkserver"'
    echo 'also_copy = ["docs", "fuzz", "requirements", "scripts", "mutation", ".github"]'
} >> "$WORK/pyproject.toml"

started=$(date +%s)
cd "$WORK"
set +e
"$PY" -m mutmut run --max-children "$CHILDREN" > "$WORK/run.log" 2>&1
run_status=$?
set -e
elapsed=$(( $(date +%s) - started ))
mkdir -p "$OUT"
cp "$WORK/run.log" "$OUT/run.log"
"$PY" -m mutmut results --all true > "$OUT/results.txt" 2>&1 || true
# The diff of every survivor, for the review that accepts or kills it (a run without
# survivors has none: grep finding nothing must not end the script under pipefail).
: > "$OUT/survivors.diff"
{ grep -E ': (survived|no tests)$' "$OUT/results.txt" || true; } | sed -E 's/^ *([^:]+):.*/\1/' \
    | while read -r name; do "$PY" -m mutmut show "$name" >> "$OUT/survivors.diff" 2>&1 || true; done
cd "$ROOT"
"$PY" mutation/score.py --results "$OUT/results.txt" \
    --accepted mutation/accepted-survivors.txt --elapsed "$elapsed" \
    --modules "${MODULES[*]}" | tee "$OUT/score.txt"
score_status=${PIPESTATUS[0]}
if [ "$run_status" -ne 0 ]; then
    echo "mutmut run exited $run_status (see $OUT/run.log)" >&2
    exit "$run_status"
fi
exit "$score_status"
