#!/usr/bin/env bash
# The sanitized CPU suite (issue 18 item 6): every CPU target built with AddressSanitizer and
# UndefinedBehaviorSanitizer (cmake/KparitySanitize.cmake, CUDA off) into its own build directory,
# then ctest, the fuzz tier included. Any ASan or UBSan report fails the test that triggered it.
# Left out: the package tests (they build examples/host_app against the install without the
# sanitizer runtime), and nothing else. The fuzz tier runs ${KPARITY_SANITIZE_FUZZ_CASES:-30}
# cases per property instead of 100 (same pinned seed) to keep CI within its time.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${KPARITY_SANITIZE_BUILD_DIR:-build-sanitize}"
KPARITY_BUILD_DIR="$build_dir" \
KPARITY_CMAKE_ARGS="-DKPARITY_SANITIZE=ON -DKPARITY_CUDA=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo ${KPARITY_CMAKE_ARGS:-}" \
  bash scripts/configure.sh
# detect_leaks: LeakSanitizer too; abort_on_error/halt_on_error: a report is a failure, never a warning.
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
export KPARITY_FUZZ_CASES="${KPARITY_SANITIZE_FUZZ_CASES:-30}"
ctest --test-dir "$build_dir" --output-on-failure -j "${KPARITY_JOBS:-2}" -E '^package\.'
