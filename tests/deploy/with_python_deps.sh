#!/usr/bin/env bash
# Runs a tests/deploy Python script after installing what it imports, when missing: the PyPI package
# kubernetes-validate (the Kubernetes JSON schemas, offline) and PyYAML, which it pulls in.
#   with_python_deps.sh SCRIPT.py [args...]
set -euo pipefail
python="${KPARITY_PYTHON:-python3}"
if ! "$python" -c 'import kubernetes_validate, yaml' 2>/dev/null; then
  echo "tests/deploy: installing kubernetes-validate from PyPI"
  "$python" -m pip install --quiet --disable-pip-version-check kubernetes-validate==1.37.0
fi
exec "$python" "$@"
