#!/usr/bin/env bash
# Installs Debian's headless-capable Chromium (and a font for readable screenshots) for the site's
# browser test, tests/site/browser_test.py (ctest: Site.SearchesInHeadlessChromium), when missing.
# Measured on the 2-core CI machine: about 2 minutes to install, about 12 s to run the test.
# KPARITY_NO_BROWSER=1 skips the install; the test then reports "skipped: chromium not installed".
set -euo pipefail
if [ "${KPARITY_NO_BROWSER:-0}" = 1 ] || command -v chromium >/dev/null 2>&1; then exit 0; fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
echo "kparity: installing chromium for the site's browser test"
$sudo apt-get update
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends chromium fonts-dejavu-core
