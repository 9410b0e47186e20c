#!/usr/bin/env bash
# The Python package's tests: a virtual environment under the checkout (build-python/venv, on Debian's
# /usr/bin/python3 with --system-site-packages, so Debian's python3-torch (CPU) and python3-numpy are
# the frameworks tested), the package installed from this checkout by pip, then pytest (tests/python).
#
# How the extension is built (KPARITY_PYTHON_BUILD):
#   reuse (default when ${KPARITY_BUILD_DIR:-build} holds a configured kparity build, as after
#          scripts/configure.sh): the extension alone is compiled and linked against that build's
#          libraries through find_package(kparity) (scikit-build-core's cmake.source-dir=python), so
#          the CUDA kernels are compiled once, by the build ctest runs;
#   full:  plain `pip install .`, which compiles every library (and the kernels when nvcc is found)
#          into build-python/<wheel tag>/ (persistent: later runs are incremental).
# The build tools (scikit-build-core, nanobind) come from PyPI into the venv; builds run without
# isolation so the persistent build folders stay valid.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PY=${KPARITY_PYTHON:-/usr/bin/python3}
VENV=$ROOT/build-python/venv
BUILD_DIR=${KPARITY_BUILD_DIR:-build}
JOBS=${KPARITY_JOBS:-2}

if [ ! -x "$VENV/bin/python" ]; then
  "$PY" -m venv --system-site-packages "$VENV"
fi
"$VENV/bin/python" -m pip install -q --disable-pip-version-check "scikit-build-core>=0.10" "nanobind>=2.2"

mode=${KPARITY_PYTHON_BUILD:-}
if [ -z "$mode" ]; then
  if [ -f "$BUILD_DIR/kparity-config.cmake" ]; then mode=reuse; else mode=full; fi
fi
settings=()
export CMAKE_BUILD_PARALLEL_LEVEL="$JOBS"
case "$mode" in
  reuse)
    settings+=(--config-settings=cmake.source-dir=python
               --config-settings=build-dir="build-python/reuse-{wheel_tag}"
               --config-settings=cmake.define.kparity_DIR="$ROOT/$BUILD_DIR") ;;
  full)
    if [ -n "${KPARITY_CUDA:-}" ]; then settings+=(--config-settings=cmake.define.KPARITY_CUDA="$KPARITY_CUDA"); fi ;;
  *) echo "KPARITY_PYTHON_BUILD must be reuse or full, got '$mode'" >&2; exit 2 ;;
esac
echo "kparity: building the Python package ($mode)"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-build-isolation --no-deps "${settings[@]}" .

cli="$BUILD_DIR/cli/kparity"
if [ -z "${KPARITY_CLI:-}" ] && [ -x "$cli" ]; then export KPARITY_CLI="$ROOT/$cli"; fi
# From outside the checkout, so the installed package is the one imported (not python/kparity).
cd "$ROOT/build-python"
"$VENV/bin/python" -m pytest -q -rs -p no:cacheprovider "$ROOT/tests/python" "$@"
