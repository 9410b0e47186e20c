#!/usr/bin/env bash
# The test suite (scripts/test.sh: build, ctest, the Python package) on a deliberately loaded machine
# (issue 32): KPARITY_LOAD_LOOPS busy loops (default 2, one per core of the CI machine) spin beside
# it from start to end, so every test runs with half the CPU or less it would have on an idle
# machine. A test that waits on a short clock instead of on what it waits for fails here; the suite
# must be green. Arguments go to scripts/test.sh's environment as usual (KPARITY_BUILD_DIR, KPARITY_JOBS,
# KPARITY_CMAKE_ARGS). The loops stop when the suite ends, however it ends.
set -euo pipefail
cd "$(dirname "$0")/.."
loops=${KPARITY_LOAD_LOOPS:-2}
pids=()
stop_loops() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
}
trap stop_loops EXIT
for _ in $(seq "$loops"); do
  (while :; do :; done) &
  pids+=($!)
done
echo "test-under-load: $loops busy loops (pids ${pids[*]}) beside scripts/test.sh, $(nproc) cores"
start=$(date +%s)
status=0
bash scripts/test.sh || status=$?
echo "test-under-load: scripts/test.sh exited $status after $(( $(date +%s) - start )) s beside $loops busy loops"
exit "$status"
