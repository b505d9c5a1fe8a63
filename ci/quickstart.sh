#!/usr/bin/env bash
# README command (1): install what is missing, build the nightjar program
# (only it: the test suite is README command (2)), run the default job
# (jobs/pft-quick.yaml: a small pft matrix) into the default database and
# print the per-cell summary. Extra arguments go to `nightjar run`.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
start=$SECONDS
say() { echo "quickstart [$(( (SECONDS - start) / 60 ))m$(( (SECONDS - start) % 60 ))s]: $*" >&2; }
say "1/3 installing the Debian packages the nightjar program needs, where missing (ci/install-deps.sh --program)"
"$here/ci/install-deps.sh" --program
say "2/3 building the nightjar program into build/ (not the tests; a few minutes on 2 CPUs with a cold compiler cache)"
"$here/ci/build.sh" --program "$here/build"
say "3/3 running jobs/pft-quick.yaml on this kernel: build/nightjar run jobs/pft-quick.yaml $*"
"$here/build/nightjar" run "$here/jobs/pft-quick.yaml" "$@"
say "done: nightjar run printed the database it wrote; the README's tour shows compare, report and plot"
