#!/usr/bin/env bash
# One device call for sparse/paged_decode at small T (issue 31: the small-T decode kernel,
# SparseTuning::variant 3, kernels/sparse/decode_small_kernel.cuh) from a bundle packed HERE:
#   cmake -S . -B build -DKPARITY_CUDA=ON -DCMAKE_BUILD_TYPE=Release ... && cmake --build build -j2 \
#     --target test_gpu_sparse test_gpu_dispatch bench_sparse && scripts/gpu-pack.sh build
# then on the device (carry .gpu and .deps, and .peers for sglang's decode):  OUT=$OUT scripts/gpu-sparse.sh [phase...]
#   tests     every sparse GPU test (the small kernel's forced by its tests), then all of them again with
#             KPARITY_SPARSE_SMALL_DECODE=1 (auto picks the small kernel for T * ceil(H / 64) <= SMs / 4:
#             the established decode tests through it), and the kernel-dispatch test
#   cluster   the in-cluster merge's tests (decode_combine 2), memcheck on them, then racecheck on
#             each test in a process of its own (the largest only with CLUSTER_RACE_LARGEST=1)
#   clusterrace  only that racecheck (the tests and memcheck passed on 2026-12-05)
#   sanitize  compute-sanitizer memcheck (leak check) and racecheck on the small kernel's small tests
#   bench     sglang's Triton decode (bench/peers/run_peers.py --only sparse_decode), then bench_sparse
#             (prefill, decode at T = 1, 2, 4, 8, 64, 256 and H = 64, 128: the 64-head kernels and the
#             small-T kernel with both gathers and both head groups, eager and graph replay)
# Default: all three. $OUT gets gpu-sparse.md (the verdict lines and the decode table),
# sparse_bench.md, peers.json and gpu-sparse-logs.tar.gz (every log), rewritten after each phase.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${OUT:-$ROOT/gpu-sparse-out}
BUILD=${BUILD:-build}
L=${SPARSE_LOGS:-/tmp/gpu-sparse-logs}
mkdir -p "$OUT" "$L"
export KPARITY_EXPECT_GPU=1 PYTHONUNBUFFERED=1
[ -d "$BUILD/tests" ] || tar -xJf .gpu/bundle.tar.xz
if ls .deps/*.deb >/dev/null 2>&1; then  # shared libraries the binaries may need (fmt & co.; no registry there)
  mkdir -p .deps/root
  for f in .deps/*.deb; do dpkg -x "$f" .deps/root; done
  export LD_LIBRARY_PATH=$ROOT/.deps/root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
phases=${*:-tests sanitize bench}
T=$BUILD/tests/test_gpu_sparse
SUMMARY=$OUT/gpu-sparse.md
{ echo "## gpu-sparse, $(date -u '+%Y-%m-%d %H:%M UTC'), $(git rev-parse --short HEAD 2>/dev/null)"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader 2>/dev/null; echo; } > "$SUMMARY"
note() { echo "$*" | tee -a "$SUMMARY"; }
pack() { tar -czf "$OUT/gpu-sparse-logs.tar.gz" -C "$(dirname "$L")" "$(basename "$L")" 2>/dev/null; }
# gtest's verdict lines of a log: the totals and every failed test.
verdict() { grep -E "^\[  (PASSED|SKIPPED) |^\[  FAILED  \] [^(]*$|tests? ran" "$1" | head -40; }

# The in-cluster merge's tests under racecheck, one test a process (phases cluster and clusterrace).
cluster_race() {
  # racecheck one test a process, each under its own limit (CLUSTER_RACE_TIMEOUT, default 120 s) and
  # log (cluster-racecheck-<test>.log), so a slow test cannot starve the others: on 2026-12-05 one
  # process ran the largest test to OK in 484 s with no hazard and the other five never started.
  # That largest test runs last and only with CLUSTER_RACE_LARGEST=1 (its own limit,
  # CLUSTER_RACE_LARGEST_TIMEOUT, default 520 s); by default it is skipped as already passed.
  local t limit rc t0
  for t in PartialGroupsNarrowRowsF16AndEmptyLists NeedsNoWorkspace DeterministicAndGraphReplayable \
           SpecialsAndMaskedSplits RefusesWhatItCannotServe BoundedEqualToTheCombineKernelAndGathersBitEqual; do
    limit=${CLUSTER_RACE_TIMEOUT:-120}
    if [ $t = BoundedEqualToTheCombineKernelAndGathersBitEqual ]; then
      if [ "${CLUSTER_RACE_LARGEST:-0}" != 1 ]; then
        note "### cluster racecheck $t: skipped (ran to OK with no hazard on 2026-12-05 in 484 s; CLUSTER_RACE_LARGEST=1 runs it)"
        continue
      fi
      limit=${CLUSTER_RACE_LARGEST_TIMEOUT:-520}
    fi
    t0=$SECONDS
    timeout "$limit" compute-sanitizer --tool racecheck --error-exitcode 9 "$T" \
      --gtest_filter="GpuSparseDecodeCluster.$t" > "$L/cluster-racecheck-$t.log" 2>&1; rc=$?
    note "### cluster racecheck $t (rc $rc$([ $rc = 124 ] && echo ": past its ${limit} s limit"), $((SECONDS - t0)) s)"
    grep -E "RACECHECK SUMMARY|ERROR SUMMARY|^\[  (PASSED|FAILED) |^\[       OK \]" "$L/cluster-racecheck-$t.log" | tail -4 \
      | tee -a "$SUMMARY"
    pack
  done
}

SMALL='GpuSparseDecodeSmall.SpecialValuesFollowUpstreamsFinalisation:GpuSparseDecodeSmall.WithoutWorkspaceRunsSinglePass:GpuSparseDecodeSmall.SpecialsAndMaskedKeysInOneSplit:GpuSparseDecodeSmall.RefusesWhatItCannotServe'
for ph in $phases; do
  t0=$SECONDS
  case $ph in
    tests)
      # The established kernels' tests, then the small-T kernel's in a process of their own (a trap in
      # its bulk gather, bulk_copy.cuh, would fail every later test of the process).
      timeout 240 "$T" --gtest_filter='-GpuSparseDecodeSmall*' > "$L/tests.log" 2>&1; rc=$?
      note "### tests, established kernels (rc $rc, $((SECONDS - t0)) s)"; verdict "$L/tests.log" | tee -a "$SUMMARY"
      grep -B2 -A14 "Failure$" "$L/tests.log" | head -60 >> "$SUMMARY"
      t0=$SECONDS
      timeout 240 "$T" --gtest_filter='GpuSparseDecodeSmall*' > "$L/tests-small.log" 2>&1; rc=$?
      note "### tests, small-T kernel (rc $rc, $((SECONDS - t0)) s)"; verdict "$L/tests-small.log" | tee -a "$SUMMARY"
      grep -B2 -A14 "Failure$" "$L/tests-small.log" | head -80 >> "$SUMMARY"
      t0=$SECONDS
      KPARITY_SPARSE_SMALL_DECODE=1 timeout 240 "$T" --gtest_filter='GpuSparseDecode.*:GpuSparseDecodeSplit.*:GpuSparseEmpty*' > "$L/tests-small-auto.log" 2>&1; rc=$?
      note "### tests with KPARITY_SPARSE_SMALL_DECODE=1 (rc $rc, $((SECONDS - t0)) s)"
      verdict "$L/tests-small-auto.log" | tee -a "$SUMMARY"
      grep -B2 -A14 "Failure$" "$L/tests-small-auto.log" | head -60 >> "$SUMMARY"
      timeout 60 "$BUILD/tests/test_gpu_dispatch" > "$L/dispatch.log" 2>&1
      note "### dispatch test rc $?"
      ;;
    cluster)
      # The in-cluster merge (SparseTuning::decode_combine 2): its tests, memcheck on them, then racecheck.
      timeout 120 "$T" --gtest_filter='GpuSparseDecodeCluster*' > "$L/tests-cluster.log" 2>&1; rc=$?
      note "### tests, in-cluster merge (rc $rc, $((SECONDS - t0)) s)"; verdict "$L/tests-cluster.log" | tee -a "$SUMMARY"
      grep -B2 -A14 "Failure$" "$L/tests-cluster.log" | head -60 >> "$SUMMARY"
      t0=$SECONDS
      timeout 200 compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 "$T" \
        --gtest_filter='GpuSparseDecodeCluster*' > "$L/cluster-memcheck.log" 2>&1; rc=$?
      note "### cluster memcheck (rc $rc, $((SECONDS - t0)) s)"
      grep -E "ERROR SUMMARY|LEAK SUMMARY|^\[  (PASSED|FAILED) " "$L/cluster-memcheck.log" | tail -6 | tee -a "$SUMMARY"
      cluster_race
      ;;
    clusterrace)
      cluster_race
      ;;
    sanitize)
      for tool in memcheck racecheck; do
        t0=$SECONDS
        extra=""; [ $tool = memcheck ] && extra="--leak-check full"
        timeout 280 compute-sanitizer --tool $tool $extra --error-exitcode 9 "$T" --gtest_filter="$SMALL" \
          > "$L/$tool.log" 2>&1; rc=$?
        note "### $tool (rc $rc, $((SECONDS - t0)) s)"
        grep -E "ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY|^\[  (PASSED|FAILED) " "$L/$tool.log" | tail -6 | tee -a "$SUMMARY"
      done
      ;;
    bench)
      if [ -d .peers ]; then
        timeout 300 python3 bench/peers/run_peers.py --out "$OUT/peers.json" --peers .peers --logs "$L" \
          --only sparse_decode > "$L/peers.log" 2>&1
        note "### peers rc $? ($((SECONDS - t0)) s): $(tail -n1 "$L/peers.log")"
        export KPARITY_PEERS_JSON=$OUT/peers.json
      else
        note "### peers: not run (no .peers carried: scripts/fetch-peers.sh)"
      fi
      t0=$SECONDS
      timeout 400 "$BUILD/bench/bench_sparse" "$OUT/sparse_bench.md" > "$L/bench.log" 2>&1; rc=$?
      note "### bench_sparse (rc $rc, $((SECONDS - t0)) s): decode rows"
      echo "| H | config | T | eager ms | graph us | peer us | peer / kparity |" | tee -a "$SUMMARY"
      grep -E "^\| decode " "$L/bench.log" | awk -F'|' '{printf "|%s|%s|%s|%s|%s|%s|%s|\n", $3, $4, $5, $7, $8, $14, $15}' \
        | tee -a "$SUMMARY"
      sed -n '/^Decode cross-check/,$p' "$L/bench.log" | grep -v "e-0[3-9] (0 non-finite)\|^$" | head -40 >> "$SUMMARY"
      ;;
    *) note "unknown phase $ph (tests, cluster, clusterrace, sanitize, bench)" ;;
  esac
  pack
done
