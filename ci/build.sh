#!/usr/bin/env bash
# Configures and builds nightjar into a build directory (default: build/).
#   ci/build.sh [--program] [BUILD_DIR] [extra cmake -D options...]
# Installs missing Debian packages first (ci/install-deps.sh).
# --program: only the nightjar program (README command (1), ci/nightly.sh,
# ci/bisect.sh): the packages it needs, configured without the test suite and
# the benchmarks, line tables only (-g1: NIGHTJAR_DEBUG_LINES, about 30% less
# compiling than -g), and only the `nightjar` target built. Without it: every
# package of the test suite, and every target (tests and benchmarks on; a
# build directory first configured with --program gets them now).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
program_only=false
if [ "${1:-}" = "--program" ]; then
  program_only=true
  shift
fi
build=${1:-$here/build}
shift || true
if $program_only; then
  "$here/ci/install-deps.sh" --program
  cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DNIGHTJAR_BUILD_TESTS=OFF -DNIGHTJAR_BUILD_BENCH=OFF -DNIGHTJAR_DEBUG_LINES=ON "$@" >/dev/null
  cmake --build "$build" -j "$(nproc)" --target nightjar
else
  "$here/ci/install-deps.sh"
  cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DNIGHTJAR_BUILD_TESTS=ON -DNIGHTJAR_BUILD_BENCH=ON -DNIGHTJAR_DEBUG_LINES=OFF "$@" >/dev/null
  cmake --build "$build" -j "$(nproc)"
fi
