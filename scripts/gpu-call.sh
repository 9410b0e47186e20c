#!/usr/bin/env bash
# One device call that runs several of the GPU scripts' phases in order under one wall-clock cap, so
# that a call spends its minutes on runs and still returns its logs when a phase runs long:
#
#   WALL=<seconds> OUT=$OUT scripts/gpu-call.sh script:phase[,phase...] ...
#     e.g. scripts/gpu-call.sh chunk:tests,sanitize sparse:bench decode:peers,bench,ncu campaign:kda
#
# script is chunk (gpu-chunk.sh), sparse (gpu-sparse.sh), decode (gpu-decode.sh) or campaign
# (kparity fuzz --backend cuda --op <phase> at a fresh seed, FUZZ_CASES per CUDA property, on every
# core, stopped at the wall). A step starts only while WALL has at least MIN_LEFT (default 30) seconds
# left. The bundle (.gpu/bundle.tar.xz, any build tree's name) is unpacked once and linked as build/.
# $OUT gets call.md (a line a step) and call-logs.tar.gz (every script's files), rewritten after each step.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
FINAL=${OUT:-$ROOT/gpu-call-out}  # gets call.md and call-logs.tar.gz only (a device call returns 8 files)
OUT=${CALL_DIR:-/tmp/gpu-call}    # the scripts' own files
WALL=${WALL:-540}
mkdir -p "$OUT" "$FINAL"
export KPARITY_EXPECT_GPU=1 PYTHONUNBUFFERED=1
if [ ! -d build/tests ] && [ -f .gpu/bundle.tar.xz ]; then
  tar -xJf .gpu/bundle.tar.xz
  b=$(tar -tJf .gpu/bundle.tar.xz | head -1 | cut -d/ -f1)
  [ -n "$b" ] && [ "$b" != build ] && ln -sfn "$b" build
fi
source scripts/lib/deps-env.sh
export BUILD=build
{ echo "## gpu-call, $(date -u '+%Y-%m-%d %H:%M UTC'), $(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet 2>/dev/null || echo ' + working tree')"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader 2>/dev/null; echo; } > "$OUT/call.md"
fresh_seed() { echo "0x$(od -An -N8 -tx8 /dev/urandom | tr -d ' \n')"; }
for item in "$@"; do
  script=${item%%:*}; phases=${item#*:}; phases=${phases//,/ }
  left=$((WALL - SECONDS))
  if [ "$left" -lt "${MIN_LEFT:-30}" ]; then echo "| $item | skipped: ${left} s left |" >> "$OUT/call.md"; continue; fi
  t0=$SECONDS
  case $script in
    chunk)  OUT=$OUT timeout "$left" bash scripts/gpu-chunk.sh $phases > "$OUT/step-$script.log" 2>&1 ;;
    sparse) OUT=$OUT SPARSE_LOGS=$OUT/sparse-logs timeout "$left" bash scripts/gpu-sparse.sh $phases > "$OUT/step-$script.log" 2>&1 ;;
    decode) OUT=$OUT timeout "$left" bash scripts/gpu-decode.sh $phases > "$OUT/step-$script.log" 2>&1 ;;
    campaign)
      seed=${FUZZ_SEED:-$(fresh_seed)}
      timeout "$((left - 10))" build/cli/kparity fuzz --backend cuda --op "$phases" --cases "${FUZZ_CASES:-2000}" \
        --seed "$seed" --jobs "$(nproc)" --report "$OUT/campaign-$phases-$seed.json" > "$OUT/step-campaign-$phases.log" 2>&1 ;;
    *) echo "gpu-call: unknown script $script" >&2; continue ;;
  esac
  rc=$?
  echo "| $item | rc $rc | $((SECONDS - t0)) s |" >> "$OUT/call.md"
  cp "$OUT/call.md" "$FINAL/call.md"; tar -czf "$FINAL/call-logs.tar.gz" -C "$OUT" . 2>/dev/null
done
cp "$OUT/call.md" "$FINAL/call.md"; tar -czf "$FINAL/call-logs.tar.gz" -C "$OUT" . 2>/dev/null
cat "$OUT/call.md"
