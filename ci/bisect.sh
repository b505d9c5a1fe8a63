#!/usr/bin/env bash
# The bisect flow with git's own driver (docs/bisect.md "git bisect run"):
# measure the good and the bad commit once, then let `git bisect run` call
# `nightjar bisect step` at every commit it checks out. `nightjar bisect run`
# does all of this in one command (and can be resumed); this script shows the
# pieces, for setups where git bisect must stay in charge (e.g. a bisect that
# also boots each kernel on a test machine).
#
# Usage: ci/bisect.sh --repo DIR --good REV --bad REV --job FILE --build-cmd CMD
#                     [--db PATH] [--nightjar BIN] [-- extra `bisect step` options]
#
# Exit: 0 when git named the first bad commit, 3 when it could not (only
# skipped commits left), 2 usage error, 4 environment error, 130 interrupted.
set -uo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
repo="" good="" bad="" job="" build_cmd="" db="" nightjar=""
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --repo) repo=$2; shift 2 ;;
    --good) good=$2; shift 2 ;;
    --bad) bad=$2; shift 2 ;;
    --job) job=$2; shift 2 ;;
    --build-cmd) build_cmd=$2; shift 2 ;;
    --db) db=$2; shift 2 ;;
    --nightjar) nightjar=$2; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bisect.sh: unknown option '$1'; see --help" >&2; exit 2 ;;
  esac
done
for v in repo good bad job build_cmd; do
  [ -n "${!v}" ] || { echo "bisect.sh: --${v//_/-} is required; see --help" >&2; exit 2; }
done
if [ -z "$nightjar" ]; then
  nightjar=$here/build/nightjar
  [ -x "$nightjar" ] || "$here/ci/build.sh" --program "$here/build" >&2 || exit 4
fi
job=$(cd "$(dirname "$job")" && pwd)/$(basename "$job")
dbargs=()
[ -n "$db" ] && dbargs=(--db "$(cd "$(dirname "$db")" && pwd)/$(basename "$db")")
cd "$repo" || exit 2
git rev-parse --show-toplevel >/dev/null 2>&1 || { echo "bisect.sh: $repo is not a git work tree" >&2; exit 2; }
good_sha=$(git rev-parse --verify "$good^{commit}") || exit 2
bad_sha=$(git rev-parse --verify "$bad^{commit}") || exit 2
start=$(git symbolic-ref -q --short HEAD || git rev-parse HEAD)  # to come back to

# 1. The endpoints, measured once and stored with their commit as build label.
for sha in "$good_sha" "$bad_sha"; do
  git checkout --quiet --detach "$sha" || exit 4
  sh -c "$build_cmd" || { echo "bisect.sh: ${sha:0:12} does not build" >&2; git checkout --quiet "$start"; exit 4; }
  "$nightjar" run "$job" --build "$sha" "${dbargs[@]}" >/dev/null || { git checkout --quiet "$start"; exit 4; }
done

git checkout --quiet "$start" || exit 4

# 2. git drives; nightjar decides: 0 good, 1 bad, 125 skip, 128 abort.
git bisect start "$bad_sha" "$good_sha" >/dev/null || exit 4
log=$(mktemp) || exit 4
trap 'rm -f "$log"' EXIT
LC_ALL=C git bisect run "$nightjar" bisect step --job "$job" --base "$good_sha" --bad-base "$bad_sha" \
  --build "$build_cmd" "${dbargs[@]}" "${extra[@]}" | tee "$log"
grep -q "is the first bad commit" "$log"
found=$?
git bisect log
git bisect reset >/dev/null 2>&1
"$nightjar" bisect log "${dbargs[@]}"
[ "$found" = 0 ] && exit 0
exit 3
