#!/usr/bin/env bash
# GPU suite for the KDA kernels, for the lent H200 (device README): configure and build with CUDA,
# run the gpu-labelled ctest, compute-sanitizer memcheck and racecheck on the GPU tests, the
# benchmarks, then a short table last. Logs go to $OUT (or ./gpu-suite-out). Builds only the
# kernel targets and what they need, so other in-progress areas cannot break the run.
#   scripts/gpu-suite.sh [phases...]   phases: build test memcheck racecheck bench (default: all)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-suite-out}
mkdir -p "$OUT"
BUILD=${BUILD:-build-suite}
PHASES=${*:-build test memcheck racecheck bench}
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
  phase configure 120 cmake -S . -B "$BUILD" "${gen[@]}" -DKPARITY_CUDA=ON -DKPARITY_BUILD_FUZZ=OFF \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$PWD/.deps/root/usr"
  phase build 420 cmake --build "$BUILD" -j"$(nproc)" --target kparity_kernels test_gpu_kda kda_decode_bench kda_host_bench
fi
TEST="$BUILD/tests/test_gpu_kda"
if has test; then
  phase ctest 240 ctest --test-dir "$BUILD" -L gpu -R 'Packed|Replay|Recurrent|Launchers' -j 8 --output-on-failure
fi
# The sanitizers replay the suite minus the 320-launch equivalence run (same kernels, same code
# paths as the protocol tests) to fit the device-time budget.
SAN_FILTER='-ReplaySsmProtocol.EquivalentToPackedDecode'
if has memcheck; then
  phase memcheck 300 compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 "$TEST" --gtest_filter="$SAN_FILTER"
fi
if has racecheck; then
  phase racecheck 300 compute-sanitizer --tool racecheck --error-exitcode 9 "$TEST" --gtest_filter="$SAN_FILTER"
fi
if has bench; then
  phase bench_decode 240 "$BUILD/bench/kda_decode_bench" "$OUT/kda_decode_bench.md"
  phase bench_host 60 "$BUILD/bench/kda_host_bench" --benchmark_min_time=0.2
fi

echo
echo "| phase | result |"
echo "|---|---|"
for k in configure build ctest memcheck racecheck bench_decode bench_host; do
  [ -n "${RESULT[$k]:-}" ] && echo "| $k | ${RESULT[$k]} |"
done
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" "$OUT"/memcheck.log "$OUT"/racecheck.log 2>/dev/null
grep -h "tests passed\|tests failed" "$OUT"/ctest.log 2>/dev/null
[ -f "$OUT/kda_decode_bench.md" ] && cat "$OUT/kda_decode_bench.md"
grep -h "^BM_" "$OUT"/bench_host.log 2>/dev/null
exit 0
