#!/usr/bin/env bash
# Configures and builds nightjar into a build directory (default: build/).
#   ci/build.sh [BUILD_DIR] [extra cmake -D options...]
# Installs missing Debian packages first (ci/install-deps.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
shift || true
"$here/ci/install-deps.sh"
cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
cmake --build "$build" -j "$(nproc)"
