#!/usr/bin/env bash
# The test suite: install what is missing, build everything, run ctest. GPU tests (label gpu) skip
# visibly on a machine without a device.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-deps.sh
bash scripts/configure.sh
# Issue 17: Chromium for the site's browser test (ctest Site.SearchesInHeadlessChromium).
bash tests/site/setup-browser.sh
ctest --test-dir "${KPARITY_BUILD_DIR:-build}" --output-on-failure -j "${KPARITY_JOBS:-2}"
# The gpu-labelled tests are listed as Skipped above when there is no device; let the GPU test
# binary itself say so in one line (it prints nothing of the kind when a device is present).
gpu_probe="${KPARITY_BUILD_DIR:-build}/tests/test_gpu_dispatch"
if [ -x "$gpu_probe" ]; then "$gpu_probe" 2>/dev/null | grep -m1 "skipped: no CUDA device" || true; fi
