#!/usr/bin/env bash
# The official MCP conformance suite against `rypsok serve --transport http`
# (REQ-MCP-006, REQ-TEST-009), for revisions 2025-11-25 and 2026-07-28.
#
# Installs the pinned suite and Node 22 (the npm package `node`, since the suite needs
# Node >= 22) into a cache directory, starts rypsok on a free loopback port with zero
# engines (nothing leaves the machine), runs each revision's requirement set
# (`--requirements`, which runs every scenario at its revision's wire) and compares the
# outcome with tests/conformance/baseline.json: a failing check that is not in the
# baseline fails the run, and so does a baseline entry that now passes (stale).
# The baseline lists only checks that need the suite's own fixture server (its test_*
# tools, prompts, resources, completions, logging), each with its reason.
#
# usage: scripts/conformance.sh
# env:   RYPSOK_CONFORMANCE_CACHE  cache dir (default ~/.cache/rypsok-conformance)
#        RYPSOK_CONFORMANCE_OUT    results dir (default: a new temporary directory)
#        PYTHON                    interpreter with rypsok installed (default: the active
#                                  virtual environment's, else .venv/bin/python)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"

SUITE_VERSION="0.2.0-alpha.12"   # the first release line with the 2026-07-28 requirement set
NODE_VERSION="22.23.3"
REVISIONS=("2025-11-25" "2026-07-28")
CACHE="${RYPSOK_CONFORMANCE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rypsok-conformance}"
OUT="${RYPSOK_CONFORMANCE_OUT:-$(mktemp -d -t rypsok-conformance.XXXXXX)}"
if [[ -n "${PYTHON:-}" ]]; then :
elif [[ -n "${VIRTUAL_ENV:-}" ]]; then PYTHON="$VIRTUAL_ENV/bin/python"
elif [[ -x .venv/bin/python ]]; then PYTHON="$ROOT/.venv/bin/python"
else PYTHON=python3
fi

say() { printf '== %s\n' "$*" >&2; }

# --- the suite and Node, cached per version ------------------------------------------------
STAMP="$CACHE/installed-$SUITE_VERSION-node-$NODE_VERSION"
if [[ ! -f "$STAMP" ]]; then
    say "installing @modelcontextprotocol/conformance@$SUITE_VERSION and node@$NODE_VERSION into $CACHE"
    mkdir -p "$CACHE"
    if ! npm install --prefix "$CACHE" --no-audit --no-fund --loglevel=error \
        "@modelcontextprotocol/conformance@$SUITE_VERSION" "node@$NODE_VERSION" >&2; then
        say "the npm registry did not serve the suite or node; cannot run conformance here"
        exit 3
    fi
    touch "$STAMP"
fi
NODE="$CACHE/node_modules/node/bin/node"
SUITE="$CACHE/node_modules/@modelcontextprotocol/conformance/dist/index.js"
"$NODE" --version >/dev/null

# --- the server: zero engines, free loopback port ----------------------------------------
mkdir -p "$OUT"
CONFIG="$OUT/rypsok.toml"
"$PYTHON" - "$CONFIG" <<'EOF'
import sys
from rypsok.engines.registry import DRIVER_MODULES

lines = ["schema_version = 1", "[http]", 'bind = "127.0.0.1"', "port = 0"]
for engine in DRIVER_MODULES:
    lines += [f"[engines.{engine}]", "enabled = false"]
open(sys.argv[1], "w", encoding="utf-8").write("\n".join(lines) + "\n")
EOF

LOG="$OUT/server.log"
"$PYTHON" -m rypsok serve --transport http --config "$CONFIG" 2>"$LOG" &
SERVER=$!
cleanup() {
    if kill -0 "$SERVER" 2>/dev/null; then
        kill -TERM "$SERVER" 2>/dev/null || true
        wait "$SERVER" 2>/dev/null || true
    fi
}
trap cleanup EXIT

PORT=""
for _ in $(seq 1 150); do
    PORT="$(grep -a -o '"event":"listening"[^}]*"port":[0-9]*' "$LOG" 2>/dev/null | grep -o '[0-9]*$' || true)"
    [[ -n "$PORT" ]] && break
    kill -0 "$SERVER" 2>/dev/null || { say "rypsok exited at start:"; cat "$LOG" >&2; exit 1; }
    sleep 0.2
done
[[ -n "$PORT" ]] || { say "rypsok did not start listening"; cat "$LOG" >&2; exit 1; }
URL="http://127.0.0.1:$PORT/mcp"
say "rypsok listening at $URL"

# --- each revision against the baseline --------------------------------------------------
status=0
for revision in "${REVISIONS[@]}"; do
    expected="$OUT/expected-$revision.yaml"
    "$PYTHON" - "$ROOT/tests/conformance/baseline.json" "$revision" "$expected" <<'EOF'
import json, sys

baseline_path, revision, out = sys.argv[1:]
baseline = json.load(open(baseline_path, encoding="utf-8"))
entries = baseline["revisions"][revision]
lines = ["server:"]
for entry in entries:
    if not entry.get("reason", "").strip():
        sys.exit(f"baseline entry without a reason: {entry}")
    lines.append(f"  - {entry['scenario']}:{entry['check']}")
open(out, "w", encoding="utf-8").write("\n".join(lines) + "\n")
EOF
    say "revision $revision"
    if "$NODE" "$SUITE" server --url "$URL" --requirements "$revision" \
        --expected-failures "$expected" -o "$OUT/results-$revision" >"$OUT/suite-$revision.txt" 2>&1; then
        say "revision $revision: every scored check passes or is a baselined fixture check"
    else
        status=1
        say "revision $revision: FAILED (full output: $OUT/suite-$revision.txt)"
    fi
    sed -n '/=== SUMMARY ===/,$p' "$OUT/suite-$revision.txt" >&2
done

cleanup
trap - EXIT
say "results in $OUT"
exit "$status"
