#!/usr/bin/env bash
# One device call for the chunked KDA kernel (kda/chunk, issue 30) from a bundle packed HERE:
#   cmake -S . -B build -DKPARITY_CUDA=ON -DKPARITY_CHUNK_KERNEL=ON ... && cmake --build build -j2 \
#     --target test_gpu_kda test_gpu_dispatch kda_prefill_bench kda_chunk_accuracy kparity_kernels && scripts/gpu-pack.sh build
# then on the device (carry .gpu, and .peers for the fla side):  OUT=$OUT scripts/gpu-chunk.sh [phase...]
#   tests    the kda/chunk GPU tests on tensor cores, then again with KPARITY_CHUNK_SIMT=1 (the mma
#            fragment-layout emulation: if only the first run fails, the fragment layout is wrong)
#   sanitize compute-sanitizer memcheck and racecheck on the small kda/chunk tests
#   bench    bench/kda_prefill_bench, then fla's chunk_kda and fused_recurrent_kda on the same shapes
#            (bench/peers/fla_prefill_shapes.py, .peers/fla carried)
#   accuracy bench/kda_chunk_accuracy: the kernel's errors against the oracle beside fla chunk_kda's on the
#            twelve captured calls of tests/data/fla_chunk_kda (issue 30's bar; scripts/gpu-wave.sh accuracy
#            captures more)
#   ncuforms every chunk kernel's duration (ncu, clocks as found, the quick bench) under each chain form
#            (verified, spread) and prep instance (generic, auto): chunk-ncuforms-<form>-<prep>.csv
#   overlap  bench/kda_chunk_overlap_bench: two independent calls (1x8192 and 1x32768 at H = 32, 1x8192 at
#            H = 64) one after the other on one stream, then on two streams at once -> chunk-overlap.md
#   ncusrc   Nsight Compute's SASS source page (per-instruction stall samples) of the chain and the
#            prep kernel, one launch each (1x8192, H = 32), as CSV, with the full sections
#   ncu      Nsight Compute (clocks not locked): every chunk kernel's duration over the quick bench
#            (which of the two kernels the time goes to, per shape), then the full sections of the first
#            prep and chain launches (1x8192, H = 32)
#   forms    issue 30 step 1, the chain's spread form (KPARITY_CHUNK_FORM=spread, docs/kda_chunk_kernel.md
#            section 5) beside the verified one: the Chunk tests under spread (tensor cores, then SIMT); the
#            kernel's errors on the twelve captured fla calls under both forms (the JSON must be equal:
#            the forms store the same bits); a bad KPARITY_CHUNK_FORM refused; kda_prefill_bench under
#            each form, in turns, twice; chunk-forms-summary.log has the 1x8192 and 1x32768 rows (H = 32)
#   formsan  compute-sanitizer memcheck and racecheck on the small kda/chunk tests under spread
#   prep     issue 30 step 2, the prep kernel's specialised instance (KPARITY_CHUNK_PREP=auto: bf16 q/k/v,
#            fp32 g, vectorisable rows, V == K): the Chunk tests and the quick bench under
#            KPARITY_CHUNK_PREP=check (both instances, their workspaces compared word for word on the
#            device: a difference traps); the Chunk tests under auto; kda_prefill_bench under generic and
#            auto, in turns, twice; chunk-prep-summary.log has every row's chunk ms
# Default: tests sanitize bench accuracy. Logs in $OUT/chunk-*.log.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-chunk-out}
mkdir -p "$OUT"
export KPARITY_EXPECT_GPU=1
[ -d build/tests ] || tar -xJf .gpu/bundle.tar.xz
# gpu-pack.sh names the bundle's folder after the build tree it packed (build, build-cuda, ...).
[ -d build/tests ] || { b=$(tar -tJf .gpu/bundle.tar.xz | head -1 | cut -d/ -f1); [ -n "$b" ] && [ "$b" != build ] && ln -sfn "$b" build; }
phases=${*:-tests sanitize bench accuracy}
T=build/tests/test_gpu_kda
for ph in $phases; do
  case $ph in
    tests)
      timeout 200 $T --gtest_filter='Chunk*' 2>&1 | tail -80 > "$OUT/chunk-tests-mma.log"
      KPARITY_CHUNK_SIMT=1 timeout 200 $T --gtest_filter='Chunk.*' 2>&1 | tail -80 > "$OUT/chunk-tests-simt.log"
      timeout 60 build/tests/test_gpu_dispatch > "$OUT/chunk-dispatch.log" 2>&1
      ;;
    sanitize)
      for tool in memcheck racecheck; do
        timeout 240 compute-sanitizer --tool $tool --error-exitcode 9 $T \
          --gtest_filter='Chunk.RefusedCallWritesNothing:Chunk.GraphCaptureReplaysTheLaunch:Chunk.GateExtremes' \
          > "$OUT/chunk-$tool.log" 2>&1; echo "exit $?" >> "$OUT/chunk-$tool.log"
      done
      ;;
    accuracy)
      # The kernel, then its precision model on the same calls (how close the model's errors are to
      # the kernel's: the differential rule's bound is twice the model's).
      for impl in cuda kparity-chunk; do
        timeout 120 build/bench/kda_chunk_accuracy --impl $impl --json "$OUT/chunk-accuracy-$impl.json" \
          tests/data/fla_chunk_kda > "$OUT/chunk-accuracy-$impl.log" 2>&1
      done
      ;;
    ncu)
      timeout 150 ncu --clock-control none -k regex:chunk --metrics gpu__time_duration.sum --csv \
        build/bench/kda_prefill_bench --quick > "$OUT/chunk-ncu-times.csv" 2>&1
      timeout 150 ncu --clock-control none -k regex:chunk --launch-count 2 --set detailed \
        --section WarpStateStats --section SchedulerStats build/bench/kda_prefill_bench --quick \
        > "$OUT/chunk-ncu.log" 2>&1
      ;;
    ncuforms)
      # Which kernel the time goes to under each chain form and prep instance (clocks as found, the
      # quick bench): one CSV per configuration, gpu__time_duration of every chunk kernel launch.
      for cfg in 0:generic spread:generic 0:auto spread:auto; do
        f=${cfg%%:*}; p=${cfg#*:}
        KPARITY_CHUNK_FORM=$f KPARITY_CHUNK_PREP=$p timeout 150 ncu --clock-control none -k regex:chunk \
          --metrics gpu__time_duration.sum --csv build/bench/kda_prefill_bench --quick \
          > "$OUT/chunk-ncuforms-$f-$p.csv" 2>&1
      done
      ;;
    overlap)
      # Two independent calls on one stream and on two (bench/kda_chunk_overlap_bench.cpp): the bound on
      # what a phased launch (prep of the next token range beside the chain of this one) can gain.
      timeout 120 build/bench/kda_chunk_overlap_bench 10 > "$OUT/chunk-overlap.md" 2>&1
      echo "exit $?" >> "$OUT/chunk-overlap.md"
      ;;
    ncusrc)
      # Where each kernel's cycles go, instruction by instruction: one launch of the chain and one of
      # the prep (1x8192, H = 32, the bench's first shape), full sections with the SASS source page
      # (per-instruction warp-stall samples) printed as CSV; the reports come back too.
      for k in chunk_kernel chunk_prep_kernel; do
        timeout 150 ncu --clock-control none -k regex:"^$k" --launch-count 1 --set full --import-source yes \
          -o "$OUT/ncu-$k" -f build/bench/kda_prefill_bench --quick > "$OUT/chunk-ncusrc-$k.log" 2>&1
        timeout 60 ncu -i "$OUT/ncu-$k.ncu-rep" --page source --csv --print-source sass > "$OUT/chunk-sass-$k.csv" 2>&1
        timeout 60 ncu -i "$OUT/ncu-$k.ncu-rep" --page details > "$OUT/chunk-ncu-details-$k.txt" 2>&1
      done
      ;;
    forms)
      S=$OUT/chunk-forms-summary.log
      KPARITY_CHUNK_FORM=spread timeout 200 $T --gtest_filter='Chunk*' 2>&1 | tail -80 > "$OUT/chunk-forms-tests-spread.log"
      KPARITY_CHUNK_FORM=spread KPARITY_CHUNK_SIMT=1 timeout 200 $T --gtest_filter='Chunk.*' 2>&1 | tail -80 \
        > "$OUT/chunk-forms-tests-spread-simt.log"
      { echo "## tests under spread (mma, then SIMT)"; tail -3 "$OUT/chunk-forms-tests-spread.log" "$OUT/chunk-forms-tests-spread-simt.log"; } > "$S"
      # nlohmann's JSON prints every error with all its digits: equal files = the same errors on all twelve calls.
      for f in 0 spread; do
        KPARITY_CHUNK_FORM=$f timeout 120 build/bench/kda_chunk_accuracy --impl cuda --json "$OUT/chunk-forms-accuracy-$f.json" \
          tests/data/fla_chunk_kda > "$OUT/chunk-forms-accuracy-$f.log" 2>&1
      done
      if cmp -s "$OUT/chunk-forms-accuracy-0.json" "$OUT/chunk-forms-accuracy-spread.json"; then
        echo "accuracy JSON of the two forms: identical" >> "$S"
      else
        echo "accuracy JSON of the two forms: DIFFERENT (or missing)" >> "$S"
      fi
      # Must fail, naming KPARITY_CHUNK_FORM (prepare_chunk refuses the call).
      KPARITY_CHUNK_FORM=spreads timeout 60 $T --gtest_filter='Chunk.GateExtremes' > "$OUT/chunk-forms-bad-value.log" 2>&1
      echo "KPARITY_CHUNK_FORM=spreads: exit $?, $(grep -c KPARITY_CHUNK_FORM "$OUT/chunk-forms-bad-value.log") lines name it" >> "$S"
      # The whole bench (it has no shape filter) per form, A B A B; the rows that matter picked out.
      for r in 1 2; do
        for f in 0 spread; do
          KPARITY_CHUNK_FORM=$f timeout 300 build/bench/kda_prefill_bench > "$OUT/chunk-forms-bench-$f-$r.md" 2>&1
        done
      done
      for r in 1 2; do
        for f in 0 spread; do
          echo "## KPARITY_CHUNK_FORM=$f, run $r"
          grep -E '^\| (1x8192|1x32768) \| 32 \|' "$OUT/chunk-forms-bench-$f-$r.md"
          grep 'chunk kernel:' "$OUT/chunk-forms-bench-$f-$r.md"
        done
      done >> "$S"
      cat "$S"
      ;;
    formsan)
      for tool in memcheck racecheck; do
        KPARITY_CHUNK_FORM=spread timeout 240 compute-sanitizer --tool $tool --error-exitcode 9 $T \
          --gtest_filter='Chunk.RefusedCallWritesNothing:Chunk.GraphCaptureReplaysTheLaunch:Chunk.GateExtremes' \
          > "$OUT/chunk-forms-$tool.log" 2>&1; echo "exit $?" >> "$OUT/chunk-forms-$tool.log"
      done
      ;;
    prep)
      S=$OUT/chunk-prep-summary.log
      KPARITY_CHUNK_PREP=check timeout 200 $T --gtest_filter='Chunk*' 2>&1 | tail -80 > "$OUT/chunk-prep-tests-check.log"
      KPARITY_CHUNK_PREP=auto timeout 200 $T --gtest_filter='Chunk*' 2>&1 | tail -80 > "$OUT/chunk-prep-tests-auto.log"
      # Every bench call matches the specialised instance: under check each one is compared.
      KPARITY_CHUNK_PREP=check timeout 200 build/bench/kda_prefill_bench --quick > "$OUT/chunk-prep-bench-check.md" 2>&1
      echo "exit $?" >> "$OUT/chunk-prep-bench-check.md"
      { echo "## tests under check, then auto; the quick bench under check (a trap names the word)"
        tail -3 "$OUT/chunk-prep-tests-check.log" "$OUT/chunk-prep-tests-auto.log"
        grep -iE 'differs|exit|error|fail|chunk kernel:' "$OUT/chunk-prep-bench-check.md"; } > "$S"
      for r in 1 2; do
        for m in generic auto; do
          KPARITY_CHUNK_PREP=$m timeout 300 build/bench/kda_prefill_bench > "$OUT/chunk-prep-bench-$m-$r.md" 2>&1
        done
      done
      for r in 1 2; do
        for m in generic auto; do
          echo "## KPARITY_CHUNK_PREP=$m, run $r"
          grep -E '^\| [0-9a-z]+ \| (32|64) \|' "$OUT/chunk-prep-bench-$m-$r.md" | cut -d'|' -f2-5
          grep 'chunk kernel:' "$OUT/chunk-prep-bench-$m-$r.md"
        done
      done >> "$S"
      cat "$S"
      ;;
    bench)
      timeout 300 build/bench/kda_prefill_bench > "$OUT/chunk-bench.md" 2>&1
      # fla at the same five shapes and both head counts (bench/peers/fla_prefill_shapes.py; the shared
      # peer script stops at 4x4096, H = 32).
      [ -d .peers/fla ] && PYTHONPATH=.peers timeout ${PEER_TIMEOUT:-240} python3 bench/peers/fla_prefill_shapes.py \
        --json "$OUT/chunk-peers.json" > "$OUT/chunk-peers.log" 2>&1
      ;;
  esac
  tail -3 "$OUT"/chunk-*.log 2>/dev/null | head -40
done
