#!/usr/bin/env bash
# Packs what a GPU-machine call runs from a CUDA build made HERE (nvcc needs no GPU), so that device
# minutes go to runs, not compiles: the GPU test binaries and their ctest files, the CLI, the static
# libraries and CMake package files the Python extension links on the device (scripts/gpu-python.sh
# reuses them), the CUDA example plugin. Stripped and xz-compressed: the device's carry limit is 64 MiB
# for the whole working tree, and a full tree's GPU binaries are about 90 MiB stripped.
#
#   scripts/gpu-pack.sh [BUILD]      BUILD defaults to build (configured with -DKPARITY_CUDA=ON)
#   ONLY="tests/test_gpu_kda bench/kda_prefill_bench" scripts/gpu-pack.sh BUILD
#                                    the light bundle: those binaries alone (stripped), no static
#                                    libraries, ctest or package files, no sources; what gpu-call.sh's
#                                    chunk, decode and sparse phases need. On 2026-12-05 the full bundle
#                                    was 73 MB, over the carry limit with .deps and the tree; the light
#                                    one of the six phase binaries 33 MB (kda_chunk_accuracy alone adds 15).
#
# Writes .gpu/bundle.tar.xz and .gpu/src.tar.xz (HEAD's sources; git-ignored); carry `.gpu` and `.deps` (scripts/gpu-wave.sh unpacks both).
# The ctest files hold this checkout's absolute paths: gpu-wave.sh links them to the device's copy.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
[ -f "$BUILD/CMakeCache.txt" ] || { echo "gpu-pack: $BUILD is not a build tree" >&2; exit 2; }
[ -f "$BUILD/kernels/libkparity_kernels.a" ] || { echo "gpu-pack: $BUILD has no CUDA kernels" >&2; exit 2; }
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
dst=$stage/$BUILD
mkdir -p "$dst"
if [ -n "${ONLY:-}" ]; then
  for f in $ONLY; do
    [ -e "$BUILD/$f" ] || { echo "gpu-pack: missing $BUILD/$f" >&2; exit 2; }
    (cd "$BUILD" && cp --parents "$f" "$dst")
    strip --strip-unneeded "$dst/$f" 2>/dev/null || true
  done
  mkdir -p .gpu
  rm -f .gpu/src.tar.xz
  tar -C "$stage" -cf - "$BUILD" | xz -T2 ${XZ_LEVEL:--4} > .gpu/bundle.tar.xz
  echo "gpu-pack: light .gpu/bundle.tar.xz $(du -h .gpu/bundle.tar.xz | cut -f1) from $BUILD at $(git rev-parse --short HEAD)"
  exit 0
fi
# ctest's files (every directory's, so that the top-level CTestTestfile includes resolve) and the
# CMake package files of the build tree.
(cd "$BUILD" && find . \( -name CTestTestfile.cmake -o -name '*_tests.cmake' -o -name '*_include.cmake' \
   -o -name 'kparity-*.cmake' -o -name CMakeCache.txt \) -print0 | xargs -0 cp --parents -t "$dst")
# Generated headers the package files name (diagnostics/gen: the catalog ids).
(cd "$BUILD" && find . -path '*/CMakeFiles' -prune -o -type d -name gen -print0 | xargs -0 -r cp -r --parents -t "$dst")
# Static libraries and the binaries the GPU phases run.
(cd "$BUILD" && find . -name '*.a' -print0 | xargs -0 cp --parents -t "$dst")
for f in tests/test_gpu_kda tests/test_gpu_sparse tests/test_gpu_dispatch tests/test_gpu_cli cli/kparity \
         abi/libkparity_example_cuda_impl.so abi/libkparity_example_cpu_impl.so bench/bench_sparse \
         bench/kda_decode_bench bench/kda_prefill_bench bench/memory_probe bench/kda_chunk_accuracy; do
  [ -e "$BUILD/$f" ] || { echo "gpu-pack: missing $BUILD/$f (skipped)"; continue; }
  (cd "$BUILD" && cp --parents "$f" "$dst")
  strip --strip-unneeded "$dst/$f" 2>/dev/null || true
done
# Where the package and ctest files say the sources are (gpu-wave.sh links that path to the device's copy).
pwd > "$dst/.source-root"
mkdir -p .gpu
tar -C "$stage" -cf - "$BUILD" | xz -T2 -6 > .gpu/bundle.tar.xz
# The committed sources the bundle was built from: the device's extension build must compile against the
# same headers, whatever the carrying checkout's working tree holds (unpack it and run from there).
git archive --format=tar HEAD | xz -T2 -6 > .gpu/src.tar.xz
echo "gpu-pack: .gpu/bundle.tar.xz $(du -h .gpu/bundle.tar.xz | cut -f1) from $BUILD at $(git rev-parse --short HEAD)$(git diff --quiet || echo ' (uncommitted changes)')"
