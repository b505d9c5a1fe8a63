#!/usr/bin/env bash
# Installs the Debian 12 packages nightjar's build and tests need, and any
# packages named as arguments (ci/install-browser.sh names chromium).
#   ci/install-deps.sh [--program] [PACKAGE...]
# --program: only what building and running the nightjar program needs (README
# command (1), ci/build.sh --program): no test, benchmark or fuzzing tools.
# Idempotent and non-interactive: packages already installed are left alone,
# apt-get runs only when something is missing.
set -euo pipefail

program_only=false
if [ "${1:-}" = "--program" ]; then
  program_only=true
  shift
fi

packages=(
  build-essential cmake pkg-config git
  libsqlite3-dev sqlite3 libsqlitecpp-dev zlib1g-dev
  libcli11-dev libyaml-cpp-dev nlohmann-json3-dev libfmt-dev
  libfccp-dev libgnuplot-iostream-dev gnuplot-nox
  procps
  libkainjow-mustache-dev  # HTML/SVG templates of `nightjar publish` (docs/publish.md)
  libarchive-dev  # the .tar.gz bundles of `nightjar bundle` / `import` (docs/publish.md)
  libcurl4-openssl-dev  # `nightjar lava submit` / `collect`: a LAVA server's REST API (docs/lava.md)
)
if ! $program_only; then
  packages+=(
    libgtest-dev libgmock-dev libbenchmark-dev
    libpng-dev  # the browser test decodes Chromium's screenshots (tests/browser/)
    jq  # tests/vm/guest-tests.sh reads the guest's gtest JSON report
    python3 python3-jsonschema  # validates `export --format kcidb` against the KCIDB schema (tests/fixtures/kcidb/)
    clang-16 libclang-rt-16-dev  # the libFuzzer targets (ci/test.sh --fuzz): C++20 needs clang >= 16
    universal-ctags  # ci/function-lengths.sh, run by the test code_lengths
  )
fi
packages+=("$@")

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "ci/install-deps.sh: all ${#packages[@]} packages present" >&2
  exit 0
fi

echo "ci/install-deps.sh: installing ${missing[*]}" >&2
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
