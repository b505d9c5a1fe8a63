#!/usr/bin/env bash
# Installs Debian's chromium for the `browser` ctest label (tests/browser/,
# docs/publish.md "The browser test"): headless Chromium renders a site
# written by `nightjar publish`. Idempotent and non-interactive like
# ci/install-deps.sh: apt-get runs only when chromium is missing.
set -euo pipefail

if command -v chromium >/dev/null 2>&1; then
  echo "ci/install-browser.sh: chromium present ($(chromium --version 2>/dev/null || echo unknown version))" >&2
  exit 0
fi

echo "ci/install-browser.sh: installing chromium" >&2
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core
