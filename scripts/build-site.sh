#!/usr/bin/env bash
# The catalog as a static website (issue 17): builds the CLI and runs `kparity explain --site`.
#   bash scripts/build-site.sh [DIR] [--catalog PATH] [--force]     (DIR defaults to build/site)
# Open DIR/index.html from disk or serve DIR from any static host. The CMake target kparity_site
# does the same into <build>/site.
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${KPARITY_BUILD_DIR:-build}/site"
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then dir="$1"; shift; fi
bash scripts/setup-deps.sh
bash scripts/configure.sh --target kparity_cli >/dev/null
"${KPARITY_BUILD_DIR:-build}/cli/kparity" explain --site "$dir" "$@"
