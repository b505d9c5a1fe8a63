#!/usr/bin/env bash
# Checks that no non-test source file (.cpp, .h under harness/, workloads/,
# results/, plots/) is longer than LIMIT lines (default 900), except the
# files ci/length-allow.txt lists, each with the reason it may be longer.
#   ci/file-lengths.sh [LIMIT]
# Prints the longest files, then every file over LIMIT; exits 1 when one is
# not allowed or an entry of the list gives no reason. An entry whose file is
# gone or back under LIMIT is reported, so that the list stays short. The
# ctest test code_lengths runs it (tests/CMakeLists.txt).
set -euo pipefail
cd "$(dirname "$0")/.."
limit=${1:-900}
allow=ci/length-allow.txt
list=$(find harness workloads results plots -name '*.cpp' -o -name '*.h' | sort |
       xargs wc -l | awk '$2 != "total" {print $1, $2}' | sort -rn)
head -n 10 <<<"$list"
declare -A reason=()
bad=0
if [ -f "$allow" ]; then
  while read -r path why; do
    case "$path" in ''|'#'*) continue ;; esac
    if [ -z "$why" ]; then
      echo "$allow: $path: no reason given; write PATH REASON" >&2
      bad=1
    fi
    reason[$path]=$why
  done <"$allow"
fi
over=0
while read -r lines path; do
  [ "$lines" -gt "$limit" ] || continue
  if [ -n "${reason[$path]+set}" ]; then
    echo "allowed over $limit lines: $path ($lines): ${reason[$path]}"
  else
    echo "over $limit lines: $path ($lines): split it, or list it in $allow with the reason"
    over=$((over + 1))
  fi
done <<<"$list"
for path in "${!reason[@]}"; do
  if [ ! -f "$path" ]; then
    echo "note: $allow lists $path, which does not exist: remove the entry"
  elif [ "$(wc -l <"$path")" -le "$limit" ]; then
    echo "note: $allow lists $path, now $(wc -l <"$path") lines: remove the entry"
  fi
done
echo "files over $limit lines not allowed: $over"
[ "$over" -eq 0 ] && [ "$bad" -eq 0 ]
