#!/usr/bin/env bash
# One device call for the ReplaySSM decode work (issue 5): binaries built off-device and carried in
# BIN (default .final-kda), logs and tables to $OUT (at most 8 files come back). Phases, in the
# order given as arguments:
#   gtest          the KDA GPU test binary                                  -> gtest.log
#   gtestenv       the same under other configurations (GTEST_ENVS)         -> gtest_variants.log
#   verify         aligned vs offset state views, bit for bit (VERIFY_ENVS) -> verify.log
#   bench          kda_decode_bench, the full table                         -> bench.md
#   sweep          ReplaySSM-only runs under SWEEP configurations           -> sweep.log
#   ncu            Nsight Compute on one shape (NCU_SHAPES, NCU_ENV, NCU_KERNEL) -> ncu.txt
#   sass           cuobjdump -sass of SASS_FUN (a mangled kernel name)      -> sass.txt
#   memcheck racecheck   compute-sanitizer on the ReplaySSM and launcher tests (SAN_ENVS: again
#                  under other configurations)                              -> memcheck.log, racecheck.log
# Configurations are ';'-separated lists of env assignments, e.g. SWEEP="KPARITY_REPLAY_VTILE=32;
# KPARITY_REPLAY_VTILE=128". Each phase has its own timeout (T_<phase>, seconds) so one slow or
# hung phase cannot eat the call.
set -uo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-.final-kda}
OUT=${OUT:-$PWD/kda-run-out}
mkdir -p "$OUT"
if ls .deps/*.deb >/dev/null 2>&1; then
  mkdir -p .deps/root
  for f in .deps/*.deb; do dpkg -x "$f" .deps/root; done
  export LD_LIBRARY_PATH=$PWD/.deps/root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
SAN_FILTER=${SAN_FILTER:-'*Replay*:Launchers.*:-ReplaySsmProtocol.EquivalentToPackedDecode'}
summary=()
step() {  # name, timeout, command...
  local name=$1 t=$2; shift 2
  local t0=$SECONDS
  timeout "$t" "$@"
  local rc=$?
  summary+=("$name rc=$rc $((SECONDS - t0))s")
  echo "== $name rc=$rc $((SECONDS - t0))s"
}
for phase in "$@"; do
  case $phase in
    gtest) step gtest "${T_gtest:-120}" "$BIN/test_gpu_kda" >"$OUT/gtest.log" 2>&1
           grep -E "^\[  (PASSED|FAILED) |FAILED|Failure" "$OUT/gtest.log" | head -20 ;;
    verify) # VERIFY_ENVS: extra configurations (';'-separated env assignments), appended to the log
            KDA_BENCH_VERIFY=1 step verify "${T_verify:-90}" "$BIN/kda_decode_bench" >"$OUT/verify.log" 2>&1
            IFS=';' read -ra items <<<"${VERIFY_ENVS:-}"
            for it in "${items[@]}"; do
              echo "### $it" >>"$OUT/verify.log"
              env $it KDA_BENCH_VERIFY=1 timeout "${T_verify:-90}" "$BIN/kda_decode_bench" >>"$OUT/verify.log" 2>&1
              echo "rc=$?" >>"$OUT/verify.log"
            done
            grep -E "###|verify:|rc=" "$OUT/verify.log" ;;
    gtestenv) # GTEST_ENVS: the test binary again under other configurations
            IFS=';' read -ra items <<<"${GTEST_ENVS:-}"
            for it in "${items[@]}"; do
              echo "### $it" >>"$OUT/gtest_variants.log"
              env $it timeout "${T_gtest:-120}" "$BIN/test_gpu_kda" >>"$OUT/gtest_variants.log" 2>&1
              echo "rc=$?" >>"$OUT/gtest_variants.log"
            done
            grep -E "###|^\[  (PASSED|FAILED) |rc=" "$OUT/gtest_variants.log" ;;
    bench) step bench "${T_bench:-90}" "$BIN/kda_decode_bench" "$OUT/bench.md" >/dev/null
           cat "$OUT/bench.md" ;;
    sweep) IFS=';' read -ra items <<<"${SWEEP:-}"
           for it in "${items[@]}"; do
             echo "### $it" >>"$OUT/sweep.log"
             env $it KDA_BENCH_REPLAY_ONLY=1 timeout "${T_sweep:-45}" "$BIN/kda_decode_bench" >/tmp/sw.txt 2>&1
             echo "rc=$?" >>"$OUT/sweep.log"
             grep replayssm /tmp/sw.txt | awk -F'|' '{print $2 $3 $5}' | tr -s ' ' >>"$OUT/sweep.log"
           done
           cat "$OUT/sweep.log" ;;
    ncu)   # NCU_ENV: the variant's environment; NCU_SHAPES: the one shape profiled
           env ${NCU_ENV:-} KDA_BENCH_SHAPES=${NCU_SHAPES:-256:32} KDA_BENCH_REPLAY_ONLY=1 timeout "${T_ncu:-120}" \
             ncu --clock-control none -k regex:"${NCU_KERNEL:-replayssm}" --launch-skip 3 --launch-count 1 \
             --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section Occupancy \
             --section MemoryWorkloadAnalysis --section SourceCounters \
             "$BIN/kda_decode_bench" >"$OUT/ncu.txt" 2>&1
           echo "ncu rc=$?"; grep -E "Duration|Throughput|Stall|Warp Cycles|Issued|Eligible|Active Warps" "$OUT/ncu.txt" | head -40 ;;
    sass)  cuobjdump -sass -fun "${SASS_FUN:?SASS_FUN: a mangled kernel name}" \
             "$BIN/kda_decode_bench" >"$OUT/sass.txt" 2>&1; echo "sass rc=$? $(wc -l <"$OUT/sass.txt") lines" ;;
    memcheck|racecheck)
      extra=(); [ "$phase" = memcheck ] && extra=(--leak-check full)
      step "$phase" "${T_san:-150}" compute-sanitizer --tool "$phase" "${extra[@]}" --error-exitcode 9 \
        "$BIN/test_gpu_kda" --gtest_filter="$SAN_FILTER" >"$OUT/$phase.log" 2>&1
      # SAN_ENVS: the same tool again under other configurations, appended to the log
      IFS=';' read -ra items <<<"${SAN_ENVS:-}"
      for it in "${items[@]}"; do
        echo "### $it" >>"$OUT/$phase.log"
        env $it timeout "${T_san:-150}" compute-sanitizer --tool "$phase" "${extra[@]}" --error-exitcode 9 \
          "$BIN/test_gpu_kda" --gtest_filter="$SAN_FILTER" >>"$OUT/$phase.log" 2>&1
        echo "rc=$?" >>"$OUT/$phase.log"
      done
      grep -E "###|ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY|^\[  (PASSED|FAILED) |rc=" "$OUT/$phase.log"
      grep -m5 -E "Error|Race reported|Invalid" "$OUT/$phase.log" ;;
  esac
done
printf '%s\n' "${summary[@]}"
