#!/usr/bin/env bash
# The main job: install what is missing, build the CLI, run the default job.
# Today the default job is the catalog look-up; a fuzz campaign will replace it here.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-deps.sh
bash scripts/configure.sh --target kparity_cli
kparity="${KPARITY_BUILD_DIR:-build}/cli/kparity"
"$kparity" explain 066bd06e9ab538bd
"$kparity" explain --list
