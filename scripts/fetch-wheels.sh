#!/usr/bin/env bash
# Fills .deps/wheels/ (git-ignored) with the Python build tools of the package for a machine without
# network (the lent GPU machine, whose Python version is its own): pure-Python wheels only
# (py3-none-any), so they install on any CPython >= 3.9. scripts/gpu-python.sh installs from there.
# Run here, where PyPI is reachable; carry .deps/wheels to the device.
set -euo pipefail
cd "$(dirname "$0")/.."
dest=.deps/wheels
mkdir -p "$dest"
py=$(command -v python3)
# nanobind and scikit-build-core, and scikit-build-core's own requirements (packaging, pathspec).
"$py" -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: \
  --implementation py --abi none --platform any --python-version 3.12 -d "$dest" \
  "nanobind>=2.2" "scikit-build-core>=0.10" "packaging>=21.3" "pathspec>=0.10.1"
ls -1 "$dest"
