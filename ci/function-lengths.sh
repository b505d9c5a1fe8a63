#!/usr/bin/env bash
# Lists the longest functions of nightjar's non-test sources (harness/,
# workloads/, results/, plots/), longest first, as "LINES FILE:LINE NAME",
# from Universal Ctags' start and end lines (Debian: universal-ctags;
# ci/install-deps.sh installs it).
#   ci/function-lengths.sh [COUNT] [LIMIT]
# With LIMIT, also lists every function longer than LIMIT lines and exits 1
# when there is one. The ctest test code_lengths runs it with LIMIT 100
# (tests/CMakeLists.txt), beside ci/file-lengths.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
count=${1:-20}
limit=${2:-}
command -v ctags >/dev/null || { echo "ctags not found; apt-get install universal-ctags" >&2; exit 4; }
list=$(ctags -R --languages=C++ --kinds-C++=f --fields=+ne -x --_xformat='%{end} %{line} %F %N' \
         harness workloads results plots 2>/dev/null |
       awk '$1 ~ /^[0-9]+$/ {print $1 - $2 + 1, $3 ":" $2, $4}' | sort -rn)
# A here-string, not a pipe: head closing its input early must not become
# SIGPIPE (exit 141) under pipefail.
head -n "$count" <<<"$list"
if [ -n "$limit" ]; then
  over=$(awk -v l="$limit" '$1 > l' <<<"$list")
  if [ -z "$over" ]; then
    echo "functions over $limit lines: 0"
  else
    echo "functions over $limit lines: $(wc -l <<<"$over")"
    echo "$over"
    exit 1
  fi
fi
