#!/usr/bin/env bash
# Installs kparity's build dependencies from Debian 12 packages, only those that are missing.
# Sourced by main-job.sh and test.sh; safe to run on its own.
set -euo pipefail

KPARITY_DEBIAN_PACKAGES=(build-essential cmake git librapidcheck-dev nlohmann-json3-dev libfmt-dev libgtest-dev libcli11-dev
                         # Boost.Random's ziggurat normal (header-only; core/src/random.cpp)
                         libboost-dev
                         # DLPack's header: the implementation plugin ABI (abi/, kparity/impl_abi.h)
                         libdlpack-dev
                         # the Python package and its tests (scripts/test-python.sh): PyTorch (CPU) and numpy
                         # from Debian, used through a venv with --system-site-packages
                         python3-dev python3-venv python3-torch python3-numpy python3-pytest)

missing=()
for p in "${KPARITY_DEBIAN_PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if ((${#missing[@]})); then
  echo "kparity: installing ${missing[*]}"
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  $sudo apt-get update
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends "${missing[@]}"
fi
