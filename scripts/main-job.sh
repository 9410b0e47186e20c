#!/usr/bin/env bash
# The main job: install what is missing, build the CLI, run the default job.
# The default job is a fuzz campaign over every property (references, contracts, and the kernels
# when a GPU is present), seeded from the clock and printed so any failure replays exactly, then a
# catalog look-up.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-deps.sh
bash scripts/configure.sh --target kparity_cli kparity_fuzz
kparity="${KPARITY_BUILD_DIR:-build}/cli/kparity"
"${KPARITY_BUILD_DIR:-build}/fuzz/kparity-fuzz" --seed "${KPARITY_FUZZ_SEED:-$(date +%s)}" --cases "${KPARITY_FUZZ_CASES:-2000}"
"$kparity" explain 066bd06e9ab538bd
"$kparity" explain --list
