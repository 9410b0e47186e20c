#!/usr/bin/env bash
# One device call's worth of KDA decode measurement (issue 31: kda/packed_decode and
# kda/replayssm_decode at B = 1-8) from a bundle packed HERE (scripts/gpu-pack.sh, or any tar of a
# CUDA build holding bench/kda_decode_bench and tests/test_gpu_kda):
#   on the device (carry .gpu, .deps, .peers):  OUT=$OUT BUILD=<tree> scripts/gpu-decode.sh [phase...]
#   peers   sglang's ReplaySSM decode and fla's fused_recurrent_kda serving form on the same shapes
#           (bench/peers/run_peers.py --only replayssm,fla_decode) -> decode-peers.json
#   bench   bench/kda_decode_bench with those peers beside it (B = 1, 2, 4, 8, 64, 256; HV = 32, 12)
#   ncu     Nsight Compute (clocks as found) on the packed and ReplaySSM kernels at B = 1 and 8,
#           HV = 32: duration, the speed-of-light, warp-state and scheduler sections and the source
#           counters, one launch each (after three warm-up launches)
# Default: peers bench ncu. Logs in $OUT/decode-*.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${OUT:-$ROOT/gpu-decode-out}
BUILD=${BUILD:-build}
mkdir -p "$OUT"
export KPARITY_EXPECT_GPU=1 PYTHONUNBUFFERED=1
[ -x "$BUILD/bench/kda_decode_bench" ] || { echo "gpu-decode: no $BUILD/bench/kda_decode_bench" >&2; exit 2; }
source scripts/lib/deps-env.sh
B=$BUILD/bench/kda_decode_bench
for ph in ${*:-peers bench ncu}; do
  t0=$SECONDS
  case $ph in
    peers)
      timeout "${PEER_TIMEOUT:-240}" python3 bench/peers/run_peers.py --out "$OUT/decode-peers.json" --peers .peers \
        --only replayssm,fla_decode > "$OUT/decode-peers.log" 2>&1
      echo "peers rc=$? $((SECONDS - t0)) s: $(tail -n1 "$OUT/decode-peers.log")"
      ;;
    bench)
      [ -f "$OUT/decode-peers.json" ] && export KPARITY_PEERS_JSON=$OUT/decode-peers.json
      timeout "${BENCH_TIMEOUT:-150}" "$B" "$OUT/decode-bench.md" > "$OUT/decode-bench.log" 2>&1
      echo "bench rc=$? $((SECONDS - t0)) s"
      grep -E '^\| (1|2|4|8|64|256) \| 32 ' "$OUT/decode-bench.md" | cut -c1-160
      ;;
    ncu)
      for shape in 1:32 8:32; do
        for k in packed replayssm; do
          # KDA_BENCH_REPLAY_ONLY skips the packed kernel (set, even empty, it counts).
          only=(); [ $k = replayssm ] && only=(KDA_BENCH_REPLAY_ONLY=1)
          env KDA_BENCH_SHAPES=$shape "${only[@]}" timeout 90 \
            ncu --clock-control none -k regex:$k --launch-skip 3 --launch-count 1 \
            --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section Occupancy \
            --section LaunchStats --section SourceCounters "$B" > "$OUT/decode-ncu-$k-${shape%%:*}.txt" 2>&1
          echo "ncu $k B=${shape%%:*} rc=$?: $(grep -m1 -E '^ +Duration' "$OUT/decode-ncu-$k-${shape%%:*}.txt" | tr -s ' ')"
        done
      done
      ;;
    *) echo "gpu-decode: unknown phase $ph (peers, bench, ncu)" >&2 ;;
  esac
done
