#!/usr/bin/env bash
# Distribution check (REQ-DEP-005): build the sdist and the wheel, check their names and
# contents, install the wheel with its locked dependencies into a fresh virtual environment and
# run the installed command. Usage: bash scripts/check_dist.sh   (from any directory)
#
# Needs: Python >= 3.11 (PYTHON, default python3) and the package index, for the build frontend,
# the isolated build backend and the wheel's dependencies, each at its locked version. Takes
# about a minute with a warm pip cache.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export PIP_DISABLE_PIP_VERSION_CHECK=1

quietly() {  # run a command, show its output only when it fails
    "$@" >"$work/step.log" 2>&1 || {
        cat "$work/step.log"
        exit 1
    }
}

# The one source of the version (pyproject.toml reads it dynamically).
version="$(PYTHONPATH=src "$PYTHON" -c 'import rypsok; print(rypsok.__version__)')"
echo "version: $version (src/rypsok/__init__.py)"

# 1. Build, with the locked `build` frontend in a virtual environment of its own: the sdist
#    first, then the wheel from the sdist (so a file missing from the sdist breaks the wheel
#    build here rather than for a user).
quietly "$PYTHON" -m venv "$work/build-env"
quietly "$work/build-env/bin/python" -m pip install --no-compile -c requirements/constraints.txt build
quietly "$work/build-env/bin/python" -m build --outdir "$work/dist" .
wheel="$work/dist/rypsok-$version-py3-none-any.whl"
sdist="$work/dist/rypsok-$version.tar.gz"
ls -l "$work/dist"
test -f "$wheel" || { echo "missing wheel $(basename "$wheel")"; exit 1; }
test -f "$sdist" || { echo "missing sdist $(basename "$sdist")"; exit 1; }

# 2. Contents: typed package marker and entry point in the wheel; sources and metadata in the sdist.
"$PYTHON" - "$wheel" "$sdist" "$version" <<'PY'
import sys
import tarfile
import zipfile

wheel, sdist, version = sys.argv[1:]
names = set(zipfile.ZipFile(wheel).namelist())
info = f"rypsok-{version}.dist-info"
for required in ("rypsok/__init__.py", "rypsok/py.typed", "rypsok/cli.py",
                 f"{info}/METADATA", f"{info}/entry_points.txt"):
    assert required in names, f"wheel lacks {required}"
assert not any(n.startswith(("tests/", "docs/", "examples/")) for n in names), "wheel has extras"
entry = zipfile.ZipFile(wheel).read(f"{info}/entry_points.txt").decode()
assert "rypsok = rypsok.cli:main" in entry, entry
metadata = zipfile.ZipFile(wheel).read(f"{info}/METADATA").decode()
assert f"\nVersion: {version}\n" in metadata
members = set(tarfile.open(sdist).getnames())
root = f"rypsok-{version}"
for required in ("pyproject.toml", "README.md", "src/rypsok/__init__.py", "src/rypsok/py.typed"):
    assert f"{root}/{required}" in members, f"sdist lacks {required}"
print("contents: ok")
PY

# 3. A fresh virtual environment: install the wheel with the locked dependencies, run it.
quietly "$PYTHON" -m venv "$work/venv"
quietly "$work/venv/bin/python" -m pip install --no-compile -c requirements/constraints.txt "$wheel"
printed="$("$work/venv/bin/rypsok" --version)"
echo "installed: $printed"
test "$printed" = "rypsok $version" || { echo "expected: rypsok $version"; exit 1; }
# The installed package imports its whole runtime (no source tree on the path) and validates
# the zero configuration; run from the temp dir so ./src cannot be picked up.
(cd "$work" && env -u RYPSOK_CONFIG "$work/venv/bin/rypsok" check >/dev/null)
(cd "$work" && "$work/venv/bin/python" -m rypsok --version >/dev/null)
echo "distribution: ok"
