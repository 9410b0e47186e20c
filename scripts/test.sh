#!/usr/bin/env bash
# The test suite: install what is missing, build everything, run ctest. GPU tests (label gpu) skip
# visibly on a machine without a device.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-deps.sh
bash scripts/configure.sh
ctest --test-dir "${KPARITY_BUILD_DIR:-build}" --output-on-failure -j "${KPARITY_JOBS:-2}"
