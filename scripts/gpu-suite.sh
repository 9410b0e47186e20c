#!/usr/bin/env bash
# GPU suite for the lent H200 (/work/.library/device): build with CUDA, the GPU tests, compute-sanitizer
# memcheck and racecheck, a fresh-seed CUDA fuzz campaign, the corpus replay on the kernels, and the
# benchmarks next to their peers measured in the same call; a short table last. One device command
# runs at most 600 s, so the phases are chosen by argument and grouped into calls that fit; the build
# directory persists between calls on a warm machine.
#
#   scripts/gpu-suite.sh [phase ...]        phases run in the order below, whatever the order given
#     build      configure + build (CUDA on, all cores) the kernels, GPU tests, CLI and benchmarks
#     tests      ctest -L gpu
#     memcheck   compute-sanitizer memcheck (--leak-check full) on the GPU test binaries
#     racecheck  compute-sanitizer racecheck on the same
#     campaign   kparity fuzz --backend cuda, fresh seed (printed), FUZZ_CASES (>= 2000) passing cases per
#                CUDA property, --jobs $(nproc); its JSON report goes to $RESULTS for committing
#     replay     the corpus (fuzz/corpus) on the kernels; REPRO_DIR's dumps too, as information only
#     bench      the peers (bench/peers/run_peers.py, .peers carried), then kparity's benchmarks
#     gtest, sweep   extras: the KDA GPU test binary run directly (a tree built elsewhere), and the
#                decode bench once per forced ReplaySSM V tile (SWEEP_VTILES, default "32 64 128")
#   groups: all (default) = build tests memcheck racecheck campaign replay bench; sanitize = memcheck
#   racecheck; fuzz = campaign replay.
#   Calls that fit the 600 s limit (16 cores; the campaign's time depends on --jobs reaching its target):
#     scripts/gpu-suite.sh build tests          then   scripts/gpu-suite.sh sanitize
#     scripts/gpu-suite.sh campaign replay      then   scripts/gpu-suite.sh bench
#   (split the campaign by family if it does not fit: OPS=kda ... campaign, OPS=sparse ... campaign)
#
# Environment: OUT (results and logs; default ./gpu-suite-out), RESULTS (campaign report; default $OUT),
# BUILD (default build-suite), OPS (kernel families, default "kda sparse"), FUZZ_CASES (default 2000),
# FUZZ_SEED (default: fresh from /dev/urandom), FUZZ_JOBS (default $(nproc); 0 drops --jobs),
# CAMPAIGN_TIMEOUT (seconds, default 480), REPRO_DIR (default .repro, else ../shared/repro beside the checkout),
# PEERS_DIR (default .peers: scripts/fetch-peers.sh fills it; carry it to the device).
# Files in $OUT (the device returns at most 8): suite.md (the closing table), logs.tar.gz (every
# phase's log), campaign-*.json, corpus.tar.gz (shrunk failing calls, if any), peers.json,
# kda_decode_bench.md, sparse_bench.md.
# Exit status: 0 when every phase run passed (informational ones aside), 1 otherwise; the table says
# which phase failed and why; 2 for an unknown phase.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${OUT:-$ROOT/gpu-suite-out}
RESULTS=${RESULTS:-$OUT}
BUILD=${BUILD:-build-suite}
OPS=${OPS:-kda sparse}
LOGS=$BUILD/suite-logs  # this call's logs (each call's come back in its own $OUT/logs.tar.gz)
rm -rf "$LOGS"
mkdir -p "$OUT" "$RESULTS" "$LOGS"

order=(build tests memcheck racecheck campaign replay bench gtest sweep)
want=()
for a in "${@:-all}"; do
  case $a in
    all) want+=(build tests memcheck racecheck campaign replay bench) ;;
    sanitize) want+=(memcheck racecheck) ;;
    fuzz) want+=(campaign replay) ;;
    test) want+=(tests) ;;  # the old name
    build|tests|memcheck|racecheck|campaign|replay|bench|gtest|sweep) want+=("$a") ;;
    *) echo "gpu-suite: unknown phase '$a' (phases: ${order[*]}; groups: all sanitize fuzz)" >&2; exit 2 ;;
  esac
done
has() { [[ " ${want[*]} " == *" $1 "* ]]; }
ops_has() { [[ " $OPS " == *" $1 "* ]]; }

if [ -d .deps ] && ls .deps/*.deb >/dev/null 2>&1; then  # RapidCheck & co. (the device has no registry)
  mkdir -p .deps/root
  for f in .deps/*.deb; do dpkg -x "$f" .deps/root; done
  export LD_LIBRARY_PATH=$ROOT/.deps/root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
export KPARITY_EXPECT_GPU=1  # a GPU test that finds no usable device fails here instead of skipping

names=() results=()
failed=()
# The closing table and the logs, rewritten after every phase: a call stopped at the device's limit
# still brings back what ran.
report() {
  {
    echo "## GPU suite, $(date -u '+%Y-%m-%d %H:%M UTC'), $(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet 2>/dev/null || echo ' (uncommitted changes)')"
    echo
    echo "GPU: $(head -n1 "$LOGS/gpu.txt"); ops: $OPS; phases: ${want[*]}"
    echo
    echo "| phase | result | note |"
    echo "|---|---|---|"
    for i in "${!names[@]}"; do echo "| ${names[$i]} | ${results[$i]%%|*} | ${results[$i]#*|} |"; done
    grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" "$LOGS"/memcheck_*.log "$LOGS"/racecheck_*.log 2>/dev/null | sort | uniq -c
    grep -h "properties held" "$LOGS"/campaign.log 2>/dev/null
    grep -h "^\[  PASSED  \]\|^\[  FAILED  \]" "$LOGS"/gtest_kda.log 2>/dev/null
    if [ ${#failed[@]} -gt 0 ]; then echo; echo "FAILED: ${failed[*]}"; else echo; echo "every phase run passed"; fi
  } >"$OUT/suite.md"
  [ -d "$LOGS/corpus" ] && [ -n "$(ls -A "$LOGS/corpus" 2>/dev/null)" ] && tar -czf "$OUT/corpus.tar.gz" -C "$LOGS" corpus
  tar -czf "$OUT/logs.tar.gz" -C "$LOGS" --exclude=corpus . 2>/dev/null
  return 0
}
# record NAME STATUS NOTE: STATUS pass | FAIL | info (informational, never fails the suite)
record() {
  names+=("$1")
  results+=("$2|$3")
  [ "$2" = FAIL ] && failed+=("$1")
  report
}
# phase NAME TIMEOUT COMMAND...: runs it with its log in $LOGS/NAME.log; prints the end of the log
# (more of it on failure); returns the command's status (124: stopped at TIMEOUT).
phase() {
  local name=$1 t=$2; shift 2
  local t0=$SECONDS rc
  timeout "$t" "$@" >"$LOGS/$name.log" 2>&1
  rc=$?
  PHASE_SECONDS=$((SECONDS - t0))
  echo "== $name: rc=$rc (${PHASE_SECONDS} s)"
  if [ $rc -ne 0 ]; then tail -n 25 "$LOGS/$name.log"; else tail -n 4 "$LOGS/$name.log"; fi
  return $rc
}
why() {  # a short reason for a status
  case $1 in 0) echo "${PHASE_SECONDS} s" ;; 124) echo "stopped at its time limit after ${PHASE_SECONDS} s" ;;
    *) echo "rc $1 after ${PHASE_SECONDS} s" ;; esac
}
run_phase() {  # NAME TIMEOUT COMMAND...: phase + record pass/FAIL
  local name=$1
  phase "$@"
  local rc=$?
  if [ $rc -eq 0 ]; then record "$name" pass "$(why 0)"; else record "$name" FAIL "$(why $rc) (log: $LOGS/$name.log)"; fi
  return $rc
}

if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader >"$LOGS/gpu.txt" 2>&1
else
  echo "no nvidia-smi on this machine" >"$LOGS/gpu.txt"
fi
echo "GPU: $(head -n1 "$LOGS/gpu.txt")"

if has build; then
  targets=(kparity_kernels test_gpu_dispatch test_gpu_cli kparity_cli)
  ops_has kda && targets+=(test_gpu_kda kda_decode_bench memory_probe)
  ops_has sparse && targets+=(test_gpu_sparse bench_sparse)
  gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
  [ -f "$BUILD/CMakeCache.txt" ] && gen=()  # the generator of an existing build dir stays
  if run_phase configure 120 cmake -S . -B "$BUILD" "${gen[@]}" -DKPARITY_CUDA=ON -DKPARITY_BUILD_FUZZ=ON \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$ROOT/.deps/root/usr"; then
    # The host-cost bench exists only where Google Benchmark was found.
    ops_has kda && cmake --build "$BUILD" --target help 2>/dev/null | grep -q kda_host_bench && targets+=(kda_host_bench)
    run_phase build 480 cmake --build "$BUILD" -j"$(nproc)" --target "${targets[@]}"
  else
    record build FAIL "not run: configure failed"
  fi
fi

if has tests; then
  phase tests 300 ctest --test-dir "$BUILD" -L gpu -j 8 --output-on-failure
  rc=$?
  counts=$(grep -h "tests passed" "$LOGS/tests.log" | tail -n1)
  if [ $rc -eq 0 ]; then record tests pass "${counts:-?}; $(why 0)"; else record tests FAIL "${counts:-no summary}; $(why $rc)"; fi
fi

# The sanitizers replay the suites minus their slowest members, which reach no other code path: the
# 320-launch ReplaySSM equivalence run and the sparse random-shape sweep (T up to 4096).
SAN_FILTER=${SAN_FILTER:-'-ReplaySsmProtocol.EquivalentToPackedDecode'}
SPARSE_SAN_FILTER=${SPARSE_SAN_FILTER:-'-GpuSparsePrefill.RandomShapesMatchOracle'}
for tool in memcheck racecheck; do
  has $tool || continue
  extra=(); [ $tool = memcheck ] && extra=(--leak-check full)
  ops_has kda && run_phase ${tool}_kda 300 compute-sanitizer --tool $tool "${extra[@]}" --error-exitcode 9 \
    "$BUILD/tests/test_gpu_kda" --gtest_filter="$SAN_FILTER"
  ops_has sparse && run_phase ${tool}_sparse 300 compute-sanitizer --tool $tool "${extra[@]}" --error-exitcode 9 \
    "$BUILD/tests/test_gpu_sparse" --gtest_filter="$SPARSE_SAN_FILTER"
done

KPARITY=$BUILD/cli/kparity
if has campaign; then
  cases=${FUZZ_CASES:-2000}
  seed=${FUZZ_SEED:-0x$(od -An -N8 -tx8 /dev/urandom | tr -d ' \n')}
  jobs=${FUZZ_JOBS:-$(nproc)}
  report=$RESULTS/campaign-$(date -u +%Y-%m-%d)-${OPS// /-}-$seed.json
  echo "campaign: seed $seed, $cases cases per CUDA property, ops: $OPS, jobs: $jobs, report: $report"
  ops=(); for o in $OPS; do ops+=(--op "$o"); done
  jobs_arg=()
  if [ "$jobs" != 0 ]; then jobs_arg=(--jobs "$jobs"); fi
  if [ "$jobs" != 0 ] && ! "$KPARITY" fuzz --help 2>&1 | grep -q -- '--jobs'; then
    record campaign FAIL "this kparity has no 'fuzz --jobs' (issue 18 item 2): $cases cases per property would not fit; FUZZ_JOBS=0 runs it sequentially"
  else
    phase campaign "${CAMPAIGN_TIMEOUT:-480}" "$KPARITY" fuzz --backend cuda "${ops[@]}" --cases "$cases" \
      --seed "$seed" "${jobs_arg[@]}" --report "$report" --corpus "$LOGS/corpus"
    rc=$?
    # The campaign holds only if the CUDA backend was there and every CUDA property ran its budget.
    check=$(python3 - "$report" "$cases" <<'EOF'
import json, sys
path, want = sys.argv[1], int(sys.argv[2])
try:
    r = json.load(open(path))
except Exception as e:
    print(f"no report ({e})"); sys.exit(1)
cuda = [b for b in r.get("backends", []) if b.get("name") == "cuda"]
if not cuda or not cuda[0].get("available"):
    print("CUDA backend unavailable: " + (cuda[0].get("reason", "?") if cuda else "not listed")); sys.exit(1)
props = [p for p in r.get("properties", []) if p.get("backend") == "cuda"]
short = [f"{p['name']} ({p.get('cases')})" for p in props if p.get("passed") and p.get("cases", 0) < want]
bad = [p["name"] for p in props if not p.get("passed")]
rates = sorted(p.get("cases_per_minute", 0) for p in props)
print(f"{len(props) - len(bad)} of {len(props)} CUDA properties held, seed {r.get('seed')}, "
      f"cases/min per property {rates[0]:.0f} to {rates[-1]:.0f}" if props else "no CUDA property ran")
if bad: print("failed: " + ", ".join(bad))
if short: print(f"under {want} cases: " + ", ".join(short))
sys.exit(1 if (bad or short or not props) else 0)
EOF
    )
    crc=$?
    echo "campaign: $check"
    if [ $rc -eq 0 ] && [ $crc -eq 0 ]; then record campaign pass "$check; $(why 0)"
    else record campaign FAIL "$check; $(why $rc)"; fi
  fi
fi

if has replay; then
  phase replay 180 "$KPARITY" fuzz --backend all --replay fuzz/corpus  # regression dumps, on the kernels
  rc=$?
  summary=$(grep -h "corpus dumps replayed" "$LOGS/replay.log" | tail -n1)
  skipped=$(grep -h "^cuda: skipped" "$LOGS/replay.log" | head -n1)
  if [ $rc -ne 0 ]; then record replay FAIL "${summary:-no summary}; $(why $rc)"
  elif [ -n "$skipped" ]; then record replay FAIL "the kernels were not replayed: $skipped"
  else record replay pass "${summary:-?}; $(why 0)"; fi
  repro=${REPRO_DIR:-}
  [ -z "$repro" ] && for d in .repro ../shared/repro ../../shared/repro; do [ -d "$d" ] && { repro=$d; break; }; done
  if [ -n "$repro" ] && [ -d "$repro" ]; then
    phase repro 180 "$KPARITY" fuzz --backend all --replay "$repro"
    rc=$?
    record repro info "$(why $rc): $(grep -h 'corpus dumps replayed\|replayed' "$LOGS/repro.log" | tail -n1) (informational: $repro)"
  else
    record repro info "not run: no REPRO_DIR (.repro or ../shared/repro)"
  fi
fi

if has bench; then
  PEERS_DIR=${PEERS_DIR:-.peers}
  rm -f "$OUT/peers.json"
  phase peers 420 python3 bench/peers/run_peers.py --out "$OUT/peers.json" --peers "$PEERS_DIR" --logs "$LOGS" \
    --timeout 200
  rc=$?
  record peers info "$(why $rc): $(tail -n1 "$LOGS/peers.log")"
  export KPARITY_PEERS_JSON=$OUT/peers.json
  if ops_has kda; then
    run_phase bench_decode 240 "$BUILD/bench/kda_decode_bench" "$OUT/kda_decode_bench.md"
    run_phase memory_probe 90 "$BUILD/bench/memory_probe"  # whole vs half lines, bytes in flight
    [ -x "$BUILD/bench/kda_host_bench" ] && run_phase bench_host 60 "$BUILD/bench/kda_host_bench" --benchmark_min_time=0.2
  fi
  ops_has sparse && run_phase bench_sparse 300 "$BUILD/bench/bench_sparse" "$OUT/sparse_bench.md"
fi

if has gtest && ops_has kda; then
  run_phase gtest_kda 240 "$BUILD/tests/test_gpu_kda"
fi
if has sweep && ops_has kda; then
  for vt in ${SWEEP_VTILES:-32 64 128}; do
    KPARITY_REPLAY_VTILE=$vt run_phase sweep_vt$vt 240 "$BUILD/bench/kda_decode_bench" "$LOGS/kda_decode_bench_vt$vt.md"
  done
fi

report
echo
[ -f "$OUT/kda_decode_bench.md" ] && cat "$OUT/kda_decode_bench.md"
grep -h "^| prefill\|^| decode" "$OUT/sparse_bench.md" 2>/dev/null
echo
cat "$OUT/suite.md"
[ ${#failed[@]} -eq 0 ]
