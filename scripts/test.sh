#!/usr/bin/env bash
# The test suite: install what is missing, build everything, run ctest, then the Python package's
# tests (scripts/test-python.sh: a venv under the checkout, pip install of the package, pytest). GPU
# tests (label gpu, pytest marker gpu) skip visibly on a machine without a device.
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
# The Python package, built against the libraries above (see scripts/test-python.sh).
bash scripts/test-python.sh
