#!/usr/bin/env bash
# GPU suite for the lent H200 (device README): configure and build with CUDA, run the gpu-labelled
# ctest, compute-sanitizer memcheck and racecheck on the GPU tests, the CUDA fuzz campaign (kernel vs
# reference properties), the benchmarks, then a short table last. Logs go to $OUT (or
# ./gpu-suite-out). Builds only the kernel targets and what they need.
#   OPS="kda sparse" scripts/gpu-suite.sh [phases...]
#   phases: build test memcheck racecheck fuzz bench (default: all); OPS picks the kernel families.
#   Extra phases: gtest (the KDA GPU test binary run directly, for a tree built elsewhere and carried,
#   whose ctest files name another path; e.g. BUILD=build-pre OPS=kda ... gtest memcheck racecheck
#   bench) and sweep (the decode bench once per forced ReplaySSM V tile: KPARITY_REPLAY_VTILE in
#   SWEEP_VTILES, default "32 64 128").
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-suite-out}
mkdir -p "$OUT"
BUILD=${BUILD:-build-suite}
PHASES=${*:-build test memcheck racecheck fuzz bench}
OPS=${OPS:-kda sparse}
ops_has() { [[ " $OPS " == *" $1 "* ]]; }
targets=(kparity_kernels test_gpu_dispatch kparity_cli)
ops_has kda && targets+=(test_gpu_kda kda_decode_bench kda_host_bench memory_probe)
ops_has sparse && targets+=(test_gpu_sparse bench_sparse)
declare -A RESULT

if [ -d .deps ] && ls .deps/*.deb >/dev/null 2>&1; then
  mkdir -p .deps/root
  for f in .deps/*.deb; do dpkg -x "$f" .deps/root; done
  export LD_LIBRARY_PATH=$PWD/.deps/root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
has() { [[ " $PHASES " == *" $1 "* ]]; }
phase() {  # name, timeout seconds, command...
  local name=$1 t=$2; shift 2
  local t0=$SECONDS
  timeout "$t" "$@" >"$OUT/$name.log" 2>&1
  local rc=$?
  RESULT[$name]="rc=$rc $((SECONDS - t0))s"
  echo "== $name: rc=$rc ($((SECONDS - t0)) s)"; tail -n 25 "$OUT/$name.log"
  return $rc
}

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader >"$OUT/gpu.txt" 2>&1
if has build; then
  phase configure 120 cmake -S . -B "$BUILD" "${gen[@]}" -DKPARITY_CUDA=ON -DKPARITY_BUILD_FUZZ=ON \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$PWD/.deps/root/usr"
  phase build 420 cmake --build "$BUILD" -j"$(nproc)" --target "${targets[@]}"
fi
if has gtest && ops_has kda; then
  phase gtest_kda 240 "$BUILD/tests/test_gpu_kda"
fi
if has test; then
  phase ctest 240 ctest --test-dir "$BUILD" -L gpu -j 8 --output-on-failure
fi
# The sanitizers replay the suite minus the 320-launch equivalence run (same kernels, same code
# paths as the protocol tests) to fit the device-time budget.
SAN_FILTER=${SAN_FILTER:-'-ReplaySsmProtocol.EquivalentToPackedDecode'}  # override to narrow (e.g. '*Replay*:-...')
# Sparse: the random-shape sweep (T up to 4096) is the slow part under the sanitizers; the other
# tests reach the same kernel paths (both head tiles, split-K, D and head tails) on small shapes.
SPARSE_SAN_FILTER='-GpuSparsePrefill.RandomShapesMatchOracle'
for tool in memcheck racecheck; do
  has $tool || continue
  extra=(); [ $tool = memcheck ] && extra=(--leak-check full)
  ops_has kda && phase ${tool}_kda 300 compute-sanitizer --tool $tool "${extra[@]}" --error-exitcode 9 \
    "$BUILD/tests/test_gpu_kda" --gtest_filter="$SAN_FILTER"
  ops_has sparse && phase ${tool}_sparse 300 compute-sanitizer --tool $tool "${extra[@]}" --error-exitcode 9 \
    "$BUILD/tests/test_gpu_sparse" --gtest_filter="$SPARSE_SAN_FILTER"
done
if has fuzz; then
  ops=(); for o in $OPS; do ops+=(--op "$o"); done
  phase fuzz 240 "$BUILD/cli/kparity" fuzz --backend cuda "${ops[@]}" --cases "${FUZZ_CASES:-100}" \
    --seed "${FUZZ_SEED:-$(date +%s)}" --report "$OUT/fuzz_report.json" --corpus "$OUT/corpus"
  phase replay 120 "$BUILD/cli/kparity" fuzz --backend all --replay fuzz/corpus  # the regression dumps, on the kernels
fi
if has bench; then
  ops_has kda && phase bench_decode 240 "$BUILD/bench/kda_decode_bench" "$OUT/kda_decode_bench.md"
  ops_has kda && phase memory_probe 90 "$BUILD/bench/memory_probe"  # whole vs half lines, bytes in flight
  ops_has kda && [ -x "$BUILD/bench/kda_host_bench" ] && phase bench_host 60 "$BUILD/bench/kda_host_bench" --benchmark_min_time=0.2
  ops_has sparse && phase bench_sparse 240 "$BUILD/bench/bench_sparse"
fi
if has sweep && ops_has kda; then
  for vt in ${SWEEP_VTILES:-32 64 128}; do
    KPARITY_REPLAY_VTILE=$vt phase sweep_vt$vt 240 "$BUILD/bench/kda_decode_bench" "$OUT/kda_decode_bench_vt$vt.md"
  done
fi

echo
echo "| phase | result |"
echo "|---|---|"
for k in configure build gtest_kda ctest memcheck_kda memcheck_sparse racecheck_kda racecheck_sparse fuzz replay bench_decode memory_probe bench_host bench_sparse sweep_vt16 sweep_vt32 sweep_vt64 sweep_vt128 sweep_vt256; do
  [ -n "${RESULT[$k]:-}" ] && echo "| $k | ${RESULT[$k]} |"
done
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" "$OUT"/memcheck_*.log "$OUT"/racecheck_*.log 2>/dev/null
grep -h "properties held" "$OUT"/fuzz.log 2>/dev/null
grep -h "corpus dumps replayed" "$OUT"/replay.log 2>/dev/null
grep -h "tests passed\|tests failed" "$OUT"/ctest.log 2>/dev/null
grep -h "^\[  PASSED  \]\|^\[  FAILED  \]" "$OUT"/gtest_kda.log 2>/dev/null
[ -f "$OUT/kda_decode_bench.md" ] && cat "$OUT/kda_decode_bench.md"
for f in "$OUT"/kda_decode_bench_vt*.md; do
  [ -f "$f" ] && { echo "${f##*/}:"; grep replayssm "$f"; }
done
grep -h "^BM_" "$OUT"/bench_host.log 2>/dev/null
exit 0
