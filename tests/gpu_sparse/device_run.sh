#!/usr/bin/env bash
# One lent-GPU call for the sparse kernels (device README: one script per call). Uses the binaries
# carried from a local build (build-sperf, nvcc 13.0, sm_90a) when they start there, else builds;
# then the gpu_sparse tests, the benchmark, and compute-sanitizer memcheck / racecheck on a subset
# that reaches both kernels (wgmma and mma.sync), split-K and the degenerate rows. Logs under $OUT.
#   tests/gpu_sparse/device_run.sh [test-seconds] [bench-seconds] [sanitizer-seconds]
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-$PWD/sparse-out}
mkdir -p "$OUT"
TT=${1:-80} BT=${2:-90} ST=${3:-90}  # racecheck of the 3-test subset needs more than 33 s
B=build-sperf
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader | tee "$OUT/gpu.txt"
if ! "$B/tests/test_gpu_sparse" --gtest_list_tests >/dev/null 2>&1 || ldd "$B/bench/bench_sparse" | grep -q "not found"; then
  echo "carried binaries do not start here: building"
  mkdir -p .deps/root
  for f in .deps/*.deb; do dpkg -x "$f" .deps/root; done
  B=build-dev
  cmake -S . -B $B -DCMAKE_PREFIX_PATH="$PWD/.deps/root/usr" -DKPARITY_CUDA=ON -DKPARITY_BUILD_FUZZ=OFF \
    -DCMAKE_BUILD_TYPE=Release >"$OUT/configure.log" 2>&1
  cmake --build $B -j"$(nproc)" --target test_gpu_sparse bench_sparse >"$OUT/build.log" 2>&1 || tail -30 "$OUT/build.log"
fi
t0=$SECONDS
timeout "$TT" "$B/tests/test_gpu_sparse" >"$OUT/test.log" 2>&1
echo "== tests rc=$? ($((SECONDS - t0)) s)"
grep -E "^\[  (FAILED|PASSED|SKIPPED) |^\[       OK|^\[  FAILED" "$OUT/test.log" | tail -40
grep -B2 -A12 "Failure" "$OUT/test.log" | head -60
t0=$SECONDS
timeout "$BT" "$B/bench/bench_sparse" "$OUT/sparse_bench.md" >"$OUT/bench.log" 2>&1
echo "== bench rc=$? ($((SECONDS - t0)) s)"
tail -5 "$OUT/bench.log" | grep -v "^|" ; cat "$OUT/sparse_bench.md" 2>/dev/null | grep -v "^$"
SUB='GpuSparsePrefill.WgmmaAndMmaSyncKernelsAgree:GpuSparsePrefill.DegenerateRowsAreExact:GpuSparseDecode.MatchesOracleSinglePassAndSplitK'
for tool in memcheck racecheck; do
  t0=$SECONDS
  timeout "$ST" compute-sanitizer --tool $tool --error-exitcode 9 "$B/tests/test_gpu_sparse" --gtest_filter="$SUB" \
    >"$OUT/$tool.log" 2>&1
  echo "== $tool rc=$? ($((SECONDS - t0)) s)"
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$OUT/$tool.log" | tail -4
done
