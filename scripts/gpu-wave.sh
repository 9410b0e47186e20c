#!/usr/bin/env bash
# One device call's worth of GPU verification from a tree built on the CPU machine (scripts/gpu-pack.sh):
# no CUDA compile on the device; only the Python extension and kparity-fuzz-host are built there (its
# Python is not this machine's), linking the carried static libraries.
#
#   scripts/gpu-wave.sh PHASE...      carry .gpu (bundle), .deps (Debian .debs), .peers (upstream phase)
#     python    build the package on the carried libraries, then EVERY Python test (pytest -n 8; none may
#               skip for want of a GPU) and python/bench/perf.py           (scripts/gpu-python.sh)
#     pybuild   build the package on the carried libraries only (for the phases below that use it)
#     symbols   the built extension's dynamic symbol table: defined symbols, std:: among them
#     ctest     ctest -L gpu
#     sanitize  compute-sanitizer memcheck (leak check) and racecheck on the GPU test binaries
#     pysan     the Python GPU tests (tests/python/test_gpu.py) under memcheck and racecheck
#     campaign  kparity fuzz --backend cuda, a fresh seed, FUZZ_CASES (default 2000) per CUDA property
#     contracts scripts/deep-contracts.sh: every contract and hostile-input property, CONTRACT_CASES
#               (default 10^6) each, a fresh seed each, --jobs $(nproc); CONTRACT_PROPS: only these
#     impls     check_implementation on each of kparity's kernels (impls.kernels), IMPL_CASES (default
#               2000) per property, one process per op, a fresh seed each
#     upstream  bench/fuzz/upstream.py (UPSTREAM_ARGS) on the upstream kernels in .peers
#     accuracy  issue 30: fla chunk_kda's outputs captured on kparity's generated calls (upstream.py with
#               KPARITY_CAPTURE_DIR; after pybuild, .peers carried), then bench/kda_chunk_accuracy on them
#               and on tests/data/fla_chunk_kda: kparity's CUDA kda/chunk kernel and the kparity-chunk
#               model beside fla, against the oracle (CAPTURE_BUDGET seconds per capture run, default 120)
# Everything lands in $OUT: wave.md (a line per phase, rewritten after each) and wave-logs.tar.gz (every
# log and report; also rewritten after each phase, so a call stopped at its limit still returns them).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${OUT:-$ROOT/gpu-wave-out}
W=${WAVE_DIR:-/tmp/wave}
mkdir -p "$OUT" "$W"
export PYTHONUNBUFFERED=1 KPARITY_EXPECT_GPU=1

# The bundle's ctest files and CMake package files name the CPU machine's checkout: point that path here.
if [ -f .gpu/bundle.tar.xz ] && [ ! -f build/.source-root ]; then tar -xJf .gpu/bundle.tar.xz -C "$ROOT"; fi
built_at=$(cat build/.source-root 2>/dev/null || echo /work/main)
if [ "$ROOT" != "$built_at" ] && [ ! -e "$built_at" ]; then mkdir -p "$(dirname "$built_at")" && ln -s "$ROOT" "$built_at"; fi
if ls .deps/*.deb >/dev/null 2>&1; then
  # Unpacked once: two waves may run side by side in one call.
  if mkdir .deps/root 2>/dev/null; then for f in .deps/*.deb; do dpkg -x "$f" .deps/root; done; touch .deps/root/.done; fi
  for _ in $(seq 60); do [ -f .deps/root/.done ] && break; sleep 1; done
  export LD_LIBRARY_PATH=$ROOT/.deps/root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
export BUILD=build KPARITY_CLI=$ROOT/build/cli/kparity
SITE=${KPARITY_SITE:-$ROOT/build-python/site}  # in the checkout: a warm machine keeps it for the next call

lines=()
summary() {
  { echo "## GPU wave, $(date -u '+%Y-%m-%d %H:%M UTC'), $(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet 2>/dev/null || echo ' + working tree')"
    echo; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null; echo
    echo "| phase | rc | seconds | note |"; echo "|---|---|---|---|"
    printf '%s\n' "${lines[@]}"; } > "$OUT/wave.md"
  tar -czf "$OUT/wave-logs.tar.gz" -C "$(dirname "$W")" "$(basename "$W")" 2>/dev/null
}
# step NAME TIMEOUT NOTE-COMMAND -- COMMAND...: runs COMMAND with its log in $W/NAME.log.
step() {
  local name=$1 t=$2; shift 2
  local t0=$SECONDS rc
  echo "== $name"
  timeout "$t" "$@" > "$W/$name.log" 2>&1
  rc=$?
  local note; note=$(tail -n 1 "$W/$name.log" | cut -c1-200 | tr '|' '/')
  lines+=("| $name | $rc | $((SECONDS - t0)) | $note |")
  echo "   rc=$rc $((SECONDS - t0)) s: $note"
  summary
  return $rc
}
fresh_seed() { echo "0x$(od -An -N8 -tx8 /dev/urandom | tr -d ' \n')"; }

for phase in "$@"; do
  case $phase in
    python)
      # gpu-python.sh runs pytest itself; -n 8 through KPARITY_PYTEST_ARGS (pytest-xdist is in the image).
      KPARITY_PYTEST_ARGS="-n 8" OUT=$W/python KPARITY_SITE=$SITE step python 420 bash scripts/gpu-python.sh
      grep -hE "passed|failed|skipped|error" "$W/python/pytest.log" | tail -n 3 > "$W/python-counts.txt"
      ;;
    pybuild)
      KPARITY_PY_BUILD_ONLY=1 OUT=$W/python KPARITY_SITE=$SITE step pybuild 300 bash scripts/gpu-python.sh
      ;;
    symbols)
      step symbols 30 bash -c "so=\$(ls $SITE/kparity/_kparity*.so); echo \$so; nm -D --defined-only \$so | tee $W/dynsym.txt | wc -l;
        echo 'std:: among them:' \$(nm -D --defined-only -C \$so | grep -c 'std::'); nm -D --defined-only \$so | awk '{print \$3}' | head -20;
        ls -la /opt/gcc/lib64 /opt/gcc/lib 2>/dev/null | grep -i stdc; /opt/gcc/bin/g++ --version | head -1;
        echo defined: \$(wc -l < $W/dynsym.txt)"
      ;;
    ctest)
      step ctest 300 ctest --test-dir build -L gpu -j 4 --output-on-failure
      ;;
    sanitize)
      for tool in memcheck racecheck; do
        extra=(); [ $tool = memcheck ] && extra=(--leak-check full)
        step ${tool}_kda 240 compute-sanitizer --tool $tool "${extra[@]}" --error-exitcode 9 build/tests/test_gpu_kda \
          --gtest_filter="${SAN_FILTER:--ReplaySsmProtocol.EquivalentToPackedDecode}"
        step ${tool}_sparse 240 compute-sanitizer --tool $tool "${extra[@]}" --error-exitcode 9 build/tests/test_gpu_sparse \
          --gtest_filter="${SPARSE_SAN_FILTER:--GpuSparsePrefill.RandomShapesMatchOracle}"
      done
      ;;
    pysan)
      # PyTorch's caching allocator hides out-of-bounds accesses inside its pools from memcheck.
      for tool in memcheck racecheck; do
        PYTORCH_NO_CUDA_MEMORY_CACHING=1 PYTHONPATH=$SITE step py_$tool 240 compute-sanitizer --tool $tool \
          --error-exitcode 9 python3 -m pytest -q -p no:cacheprovider -x tests/python/test_gpu.py
      done
      ;;
    campaign)
      seed=${FUZZ_SEED:-$(fresh_seed)}
      step campaign "${CAMPAIGN_TIMEOUT:-480}" build/cli/kparity fuzz --backend cuda --cases "${FUZZ_CASES:-2000}" \
        --seed "$seed" --jobs "${FUZZ_JOBS:-$(nproc)}" --report "$W/campaign-$seed.json" --corpus "$W/corpus"
      ;;
    contracts)
      # Issue 32: the contract and hostile-input properties at CONTRACT_CASES (default 10^6) each, a
      # fresh seed each, on every core (scripts/deep-contracts.sh); CONTRACT_PROPS picks some (default
      # all); the record (summary.md, a report and log per property) lands in $W/contracts.
      step contracts "${CONTRACTS_TIMEOUT:-570}" bash scripts/deep-contracts.sh --cases "${CONTRACT_CASES:-1000000}" \
        --jobs "${FUZZ_JOBS:-$(nproc)}" --kparity build/cli/kparity --out "$W/contracts" ${CONTRACT_PROPS:-}
      cp "$W/contracts/summary.md" "$OUT/contracts-summary.md" 2>/dev/null
      ;;
    impls)
      PYTHONPATH=$SITE step impls "${IMPLS_TIMEOUT:-480}" python3 bench/fuzz/kernels_check.py --cases "${IMPL_CASES:-2000}" \
        --out "$W/impls"
      ;;
    upstream)
      # Triton's compiled kernels in the checkout (git-ignored): a warm machine's next call reuses them.
      TRITON_CACHE_DIR=${TRITON_CACHE_DIR:-$ROOT/.triton-cache} KPARITY_PEERS=$ROOT/.peers OUT=$W/upstream PYTHONPATH=$SITE step upstream "${UPSTREAM_TIMEOUT:-480}" \
        python3 bench/fuzz/upstream.py ${UPSTREAM_ARGS:-}
      ;;
    accuracy)
      cap=$W/chunk-captures
      TRITON_CACHE_DIR=${TRITON_CACHE_DIR:-$ROOT/.triton-cache} KPARITY_PEERS=$ROOT/.peers KPARITY_CAPTURE_DIR=$cap \
        OUT=$W/capture PYTHONPATH=$SITE step capture "${CAPTURE_TIMEOUT:-360}" python3 bench/fuzz/upstream.py \
        --targets fla-chunk-kda --profiles fla-chunk --properties differential --shapes small large preset \
        --budget "${CAPTURE_BUDGET:-120}" --seconds-preset "${CAPTURE_BUDGET:-120}" --classes-preset 4 --results ''
      for impl in cuda kparity-chunk fla-chunk; do
        step accuracy_$impl 300 build/bench/kda_chunk_accuracy --impl $impl --json "$W/chunk-accuracy-$impl.json" \
          "$cap" tests/data/fla_chunk_kda
      done
      ;;
    *) echo "gpu-wave: unknown phase $phase" >&2; exit 2 ;;
  esac
done
summary
cat "$OUT/wave.md"
