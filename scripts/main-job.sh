#!/usr/bin/env bash
# The main job: install what is missing, build the CLI, run the default fuzz campaign, then a
# catalog look-up. The campaign (`kparity fuzz`, about 90 s) covers every op and every available
# backend: the references' metamorphic and contract properties, and kernel vs reference when a GPU
# is present. Its seed comes from the clock and is printed, so any failure replays exactly
# (KPARITY_FUZZ_SEED=<seed> bash scripts/main-job.sh); a failure also prints a one-line repro and
# saves the shrunk call under fuzz/corpus/. Extra arguments go to `kparity fuzz`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-deps.sh
bash scripts/configure.sh --target kparity_cli
kparity="${KPARITY_BUILD_DIR:-build}/cli/kparity"
seed="${KPARITY_FUZZ_SEED:-$(date +%s)}"
echo "main job: kparity fuzz --seed $seed $*"
status=0
"$kparity" fuzz --seed "$seed" "$@" || status=$?
"$kparity" explain 066bd06e9ab538bd
exit "$status"
