#!/usr/bin/env bash
# Lists the longest functions of nightjar's non-test sources (harness/,
# workloads/, results/, plots/), longest first, as "LINES FILE:LINE NAME",
# from Universal Ctags' start and end lines (Debian: universal-ctags).
#   ci/function-lengths.sh [COUNT] [LIMIT]
# With LIMIT, exits 1 when a function is longer than LIMIT lines.
set -euo pipefail
cd "$(dirname "$0")/.."
count=${1:-20}
limit=${2:-}
command -v ctags >/dev/null || { echo "ctags not found; apt-get install universal-ctags" >&2; exit 4; }
list=$(ctags -R --languages=C++ --kinds-C++=f --fields=+ne -x --_xformat='%{end} %{line} %F %N' \
         harness workloads results plots 2>/dev/null |
       awk '$1 ~ /^[0-9]+$/ {print $1 - $2 + 1, $3 ":" $2, $4}' | sort -rn)
echo "$list" | head -n "$count"
if [ -n "$limit" ]; then
  over=$(echo "$list" | awk -v l="$limit" '$1 > l' | wc -l)
  echo "functions over $limit lines: $over"
  [ "$over" -eq 0 ]
fi
