#!/usr/bin/env bash
# Configures and builds kparity into ${KPARITY_BUILD_DIR:-build}. Extra arguments go to `cmake --build`
# (e.g. --target kparity_cli). Parallelism: ${KPARITY_JOBS:-2}, the CI machine's core count.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${KPARITY_BUILD_DIR:-build}"
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release ${KPARITY_CMAKE_ARGS:-}
cmake --build "$build_dir" -j "${KPARITY_JOBS:-2}" "$@"
