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
#   forms   kda/packed_decode's two forms side by side (KPARITY_PACKED_DECODE_FORM unset and "wide";
#           docs/kda_decode_kernel_forms.md): the packed-decode gtests of test_gpu_kda under each (wide
#           with KPARITY_DECODE_VARIANT=2, so the plain calls take the small-batch path too;
#           DecodeVariants then compares variant 2 = wide with variant 1 = established byte for byte),
#           memcheck and racecheck of them under wide, a bad value that must be refused,
#           kda_decode_bench at B = 1, 2, 4, 8, 64, 256 (HV = 32) per form, then B <= 8 again, in
#           turns, and ncu of the wide kernel beside the verified small-batch kernel at B = 1 and 8
#           -> decode-forms.md (the verdicts and a side-by-side table of the packed rows)
#   formsvt the wide form's V tile by hand (KPARITY_PACKED_DECODE_WIDE_VT) at B = 1 and 8 -> decode-formsvt.md
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
T=$BUILD/tests/test_gpu_kda
# The packed-decode gtests: every test that calls kda/packed_decode (ctest -R Packed's) and the
# variant-equality tests of the packed op (compare variant 2 with variant 1 byte for byte: instances
# /0-/9 are packed at B = 1, 2, 8, 16, 160 x fp32, bf16; the layouts test runs both ops).
PACKED_TESTS='States/PackedContract.*:PackedDecode.*:Serving/DecodeVariants.SameBytesEagerAndGraph/?:DecodeVariantsLayouts.*'
PACKED_TESTS+=':EmptyOptionals.PackedDecode*:ReplaySsmProtocol.EquivalentToPackedDecode'
# gtest's verdict lines of a log: the totals and every failed test.
verdict() { grep -E "^\[  (PASSED|SKIPPED) |^\[  FAILED  \] [^(]*$|tests? ran" "$1" | head -40; }
# The packed rows of a kda_decode_bench table, "B variant graph eager" a line.
packed_rows() { grep -E '^\| [0-9]+ \| 32 \| packed \|' "$1" | awk -F'|' '{gsub(/ /, ""); print $2, $5, $6, $7}'; }
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
    forms)
      S=$OUT/decode-forms.md
      { echo "## kda/packed_decode forms, $(date -u '+%Y-%m-%d %H:%M UTC')"
        nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader 2>/dev/null; echo; } > "$S"
      timeout 200 "$T" --gtest_filter="$PACKED_TESTS" > "$OUT/decode-forms-tests-0.log" 2>&1; rc=$?
      { echo "### tests, form unset (rc $rc)"; verdict "$OUT/decode-forms-tests-0.log"; } >> "$S"
      KPARITY_PACKED_DECODE_FORM=wide KPARITY_DECODE_VARIANT=2 timeout 200 "$T" --gtest_filter="$PACKED_TESTS" \
        > "$OUT/decode-forms-tests-wide.log" 2>&1; rc=$?
      { echo "### tests, KPARITY_PACKED_DECODE_FORM=wide KPARITY_DECODE_VARIANT=2 (rc $rc)"; verdict "$OUT/decode-forms-tests-wide.log"
        grep -B2 -A14 "Failure$" "$OUT/decode-forms-tests-wide.log" | head -60; } >> "$S"
      # Under the wide form: memcheck (leaks too) on every packed test; racecheck (the shared tile,
      # the one barrier, the mbarriers) on the contract tests (B = 3) and the variant tests at B = 1
      # fp32 and B = 8 bf16 (4 copy stages).
      for tool in memcheck racecheck; do
        filter=$PACKED_TESTS extra="--leak-check full"
        [ $tool = racecheck ] && extra="" \
          filter='States/PackedContract.*:Serving/DecodeVariants.SameBytesEagerAndGraph/0:Serving/DecodeVariants.SameBytesEagerAndGraph/5'
        KPARITY_PACKED_DECODE_FORM=wide KPARITY_DECODE_VARIANT=2 timeout "${FORMS_SAN_TIMEOUT:-240}" \
          compute-sanitizer --tool $tool $extra --error-exitcode 9 "$T" --gtest_filter="$filter" \
          > "$OUT/decode-forms-$tool.log" 2>&1; rc=$?
        { echo "### $tool under wide (rc $rc)"
          grep -E "ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY|^\[  (PASSED|FAILED) " "$OUT/decode-forms-$tool.log" | tail -6; } >> "$S"
      done
      # Must fail, naming the variable (prepare_packed_decode refuses every call).
      KPARITY_PACKED_DECODE_FORM=wides timeout 60 "$T" --gtest_filter='PackedDecode.ExactArithmeticInputsGiveExactResults' \
        > "$OUT/decode-forms-bad-value.log" 2>&1; rc=$?
      echo "KPARITY_PACKED_DECODE_FORM=wides: exit $rc, $(grep -c KPARITY_PACKED_DECODE_FORM "$OUT/decode-forms-bad-value.log") lines name it" >> "$S"
      # The bench per form, A B A B (variant 2 rows: the small-batch instance unset, the wide form
      # under wide where it applies, B <= 8 here; variant 1 rows: the established launches both times);
      # the second round at B <= 8 only (B = 64 and 256 run the same kernels under both values).
      for r in 1 2; do
        shapes=1:32,2:32,4:32,8:32,64:32,256:32; [ $r = 2 ] && shapes=1:32,2:32,4:32,8:32
        for f in 0 wide; do
          KPARITY_PACKED_DECODE_FORM=$f KDA_BENCH_SHAPES=$shapes timeout "${FORMS_BENCH_TIMEOUT:-120}" \
            "$B" "$OUT/decode-forms-bench-$f-$r.md" > "$OUT/decode-forms-bench-$f-$r.log" 2>&1; rc=$?
          echo "bench form $f run $r rc=$rc" >> "$S"
        done
      done
      { echo; echo "### packed rows, graph replay us (eager us), HV = 32, K = V = 128, fp32 state"
        echo "| B | v1 established (unset) | v2 small-batch (unset) | v1 established (wide run) | v2 (wide run) |"
        echo "|---|---|---|---|---|"
        for bb in 1 2 4 8 64 256; do
          line="| $bb |"
          for f in 0 wide; do
            for v in 1 2; do
              cell=""
              for r in 1 2; do
                cell+=$(packed_rows "$OUT/decode-forms-bench-$f-$r.md" 2>/dev/null | awk -v b=$bb -v v=$v '$1 == b && $2 == v {printf "%s (%s); ", $3, $4}')
              done
              line+=" ${cell:--} |"
            done
          done
          echo "$line"
        done; echo; } >> "$S"
      # ncu: the wide kernel and the verified small-batch kernel, one launch each after three.
      for shape in 1:32 8:32; do
        for k in packed_decode_wide packed_decode_early; do
          f=0; [ $k = packed_decode_wide ] && f=wide
          env KPARITY_PACKED_DECODE_FORM=$f KDA_BENCH_SHAPES=$shape timeout 90 \
            ncu --clock-control none -k regex:$k --launch-skip 3 --launch-count 1 \
            --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section Occupancy \
            --section LaunchStats --section SourceCounters "$B" > "$OUT/decode-forms-ncu-$k-${shape%%:*}.txt" 2>&1; rc=$?
          echo "ncu $k B=${shape%%:*} rc=$rc: $(grep -m1 -E '^ +Duration' "$OUT/decode-forms-ncu-$k-${shape%%:*}.txt" | tr -s ' ')" >> "$S"
        done
      done
      cat "$S"
      ;;
    formsvt)
      S=$OUT/decode-formsvt.md
      echo "## wide form, V tile by hand (graph us of the variant 2 packed row)" > "$S"
      for shape in 1:32 8:32; do
        for vt in 0 4 8 16 32 64; do
          # VT 0: the launcher's rule (the variable set but empty is ignored).
          want=""; [ $vt = 0 ] || want=$vt
          KPARITY_PACKED_DECODE_FORM=wide KDA_BENCH_SHAPES=$shape KPARITY_PACKED_DECODE_WIDE_VT=$want \
            timeout 60 "$B" "$OUT/decode-formsvt-${shape%%:*}-$vt.md" > "$OUT/decode-formsvt-${shape%%:*}-$vt.log" 2>&1
          rc=$?
          echo "B=${shape%%:*} VT=${want:-rule} rc=$rc: $(packed_rows "$OUT/decode-formsvt-${shape%%:*}-$vt.md" | awk '$2 == 2 {print $3 " us graph, " $4 " us eager"}')" >> "$S"
        done
      done
      cat "$S"
      ;;
    *) echo "gpu-decode: unknown phase $ph (peers, bench, ncu, forms, formsvt)" >&2 ;;
  esac
done
