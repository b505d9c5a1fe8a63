#!/usr/bin/env bash
# Installs Debian's chromium for the `browser` ctest label (tests/browser/,
# docs/publish.md "The browser test"): headless Chromium renders a site
# written by `nightjar publish`. Through ci/install-deps.sh, so idempotent and
# non-interactive the same way: apt-get runs only when something is missing.
set -euo pipefail
exec "$(dirname "$0")/install-deps.sh" chromium fonts-dejavu-core
