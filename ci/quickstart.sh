#!/usr/bin/env bash
# README command (1): install what is missing, build, run the default job
# (jobs/pft-quick.yaml: a small pft matrix) into the default database and
# print the per-cell summary. Extra arguments go to `nightjar run`.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
"$here/ci/build.sh" "$here/build"
exec "$here/build/nightjar" run "$here/jobs/pft-quick.yaml" "$@"
