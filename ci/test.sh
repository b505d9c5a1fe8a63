#!/usr/bin/env bash
# README command (2): install what is missing, build, and run the whole ctest
# suite. Tests that need root or a kernel feature skip (77) with the reason.
#   ci/test.sh              normal build in build/ with -DNIGHTJAR_STATIC=ON
#                           (nightjar-static and the static needs-root test
#                           binary for the guests: links of the same objects),
#                           the Debian generic and PREEMPT_RT kernels fetched
#                           into build/kernels (ci/fetch-kernels.sh: apt-get
#                           download, cached there), every test: the vm label
#                           boots them under qemu, the needs-root tests among
#                           them inside a cgroup v2 guest (docs/qemu.md "In CI")
#                           and lava-dispatcher with rendered qemu devices in
#                           build/lava (ci/install-lava.sh): the lava label
#                           runs the same kernels through LAVA's lava-run
#                           (docs/lava.md "In CI"); not the optional label
#                           lab-server (a real lava-server and PostgreSQL,
#                           about 3 min: `ctest -L lab-server` runs it), nor
#                           kernel-bisect (ci/kernel-bisect-demo.sh, tens of
#                           minutes of kernel builds: `ctest -L kernel-bisect`)
#   ci/test.sh --sanitize   AddressSanitizer + UBSan build in build-asan/,
#                           every test except those labelled slow, vm
#                           (its guests need the static build of stage 1,
#                           where they ran), lab-server or kernel-bisect
#   ci/test.sh --fuzz       the libFuzzer targets (clang++, build-fuzz/): each
#                           job, csv and gbench target 60 s on its seed corpus
#                           (bench/fuzz.sh; docs/input.md "Fuzzing")
#   ci/test.sh --vm         the same build, only the qemu tests (label vm)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
if [ "${1:-}" = "--vm" ]; then
  build=$here/build
  "$here/ci/build.sh" "$build" -DNIGHTJAR_WERROR=ON -DNIGHTJAR_STATIC=ON
  NIGHTJAR_KERNELS=${NIGHTJAR_KERNELS:-$build/kernels} "$here/ci/fetch-kernels.sh" \
    "${NIGHTJAR_KERNELS:-$build/kernels}" amd64 rt-amd64
  cd "$build" && exec ctest --output-on-failure -j 1 -L vm
elif [ "${1:-}" = "--fuzz" ]; then
  "$here/ci/install-deps.sh"
  exec "$here/bench/fuzz.sh" "${FUZZ_SECONDS:-60}" "$here/build-fuzz"
elif [ "${1:-}" = "--sanitize" ]; then
  build=$here/build-asan
  "$here/ci/build.sh" "$build" -DNIGHTJAR_SANITIZE=ON -DNIGHTJAR_WERROR=ON -DNIGHTJAR_BUILD_BENCH=OFF
  "$here/ci/install-browser.sh"  # the `browser` label (docs/publish.md)
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  cd "$build" && ctest --output-on-failure -j 2 --label-exclude '^(slow|vm|lab-server|kernel-bisect)$'
else
  build=$here/build
  "$here/ci/build.sh" "$build" -DNIGHTJAR_WERROR=ON -DNIGHTJAR_STATIC=ON
  "$here/ci/install-browser.sh"  # the `browser` label (docs/publish.md)
  "$here/ci/fetch-kernels.sh" "${NIGHTJAR_KERNELS:-$build/kernels}" amd64 rt-amd64
  "$here/ci/install-lava.sh" "$build/lava"  # the `lava` label (docs/lava.md "In CI")
  cd "$build" && ctest --output-on-failure -j 2 --label-exclude '^(lab-server|kernel-bisect)$'
fi
