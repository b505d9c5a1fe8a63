#!/usr/bin/env bash
# `nightjar import` of a big tidy CSV file against a bare `sqlite3 .import` of
# the same file into a table of its own (the anchor: SQLite's own CSV reader
# and one insert per row, no validation), interleaved round by round.
#
#   bench/import_bench.sh [ROWS=1000000] [ROUNDS=5] [BUILD=build] [RUNS=100]
#
# The file holds RUNS runs of the fake workload, two metrics per iteration
# (as `nightjar export` writes them); RUNS=10000 gives many small runs.
# Prints, over the rounds, the median wall time of each with its
# distribution-free interval (bench/ratios.sh median_ci), the peak RSS of
# nightjar, and the per-round ratio nightjar / sqlite3. Goal (issue 19):
# 1M rows in <= 3 s and <= 200 MB RSS on a quiet 2-CPU machine. Needs
# python3, sqlite3 and /usr/bin/time.
set -euo pipefail
rows=${1:-1000000}
rounds=${2:-5}
build=${3:-build}
runs=${RUNS:-100}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/ratios.sh
. "$here/ratios.sh"
nightjar=$(realpath "$build/nightjar")
for tool in python3 sqlite3 /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "import_bench: needs $tool" >&2; exit 2; }
done

work=$(mktemp -d /tmp/nightjar-import-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
csv=$work/samples.csv
python3 - "$csv" "$rows" "$runs" <<'EOF'
import random, sys
path, rows, runs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
per_run = max(1, rows // runs // 2)
rng = random.Random(1)
with open(path, "w") as f:
    f.write("run,job,workload,param.seed,variant,build,kernel,testbox,started_at,"
            "iteration,metric,unit,direction,mean,value\n")
    for r in range(1, runs + 1):
        start = "2026-11-%02dT%02d:%02d:%02dZ" % (1 + r // 86400 % 28, r // 3600 % 24,
                                                   r // 60 % 60, r % 60)
        lead = f"{r},bench,fake,{r},default,b{r % 30},6.1.0-bench,benchbox,{start}"
        for i in range(1, per_run + 1):
            f.write(f"{lead},{i},latency,ms,lower,amean,{10 + rng.random():.6g}\n")
            f.write(f"{lead},{i},throughput,ops/s,higher,hmean,{100 + rng.random():.6g}\n")
EOF
echo "import_bench: $(($(wc -l <"$csv") - 1)) rows in $runs runs ($(du -h "$csv" | cut -f1)), $rounds rounds, $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"

now() { date +%s.%N; }
: >"$work/nj"; : >"$work/sq"; : >"$work/ratio"; : >"$work/rss"
for ((k = 1; k <= rounds; k++)); do
  rm -f "$work"/a.db*
  t0=$(now)
  /usr/bin/time -f %M -o "$work/rss1" "$nightjar" import "$csv" --db "$work/a.db" >/dev/null 2>&1
  t1=$(now)
  rm -f "$work"/b.db*
  sqlite3 "$work/b.db" 'PRAGMA journal_mode=WAL;' 'PRAGMA synchronous=NORMAL;' \
    '.mode csv' ".import $csv sample" >/dev/null
  t2=$(now)
  a=$(echo "$t1 - $t0" | bc -l)
  b=$(echo "$t2 - $t1" | bc -l)
  echo "$a" >>"$work/nj"
  echo "$b" >>"$work/sq"
  echo "$a / $b" | bc -l >>"$work/ratio"
  echo $(($(cat "$work/rss1") / 1024)) >>"$work/rss"
  printf 'round %d: nightjar %.2f s, sqlite3 .import %.2f s\n' "$k" "$a" "$b"
done
echo "nightjar import wall s: $(median_ci <"$work/nj")"
echo "sqlite3 .import wall s: $(median_ci <"$work/sq")"
echo "ratio nightjar/sqlite3: $(median_ci <"$work/ratio")"
echo "nightjar peak RSS MiB:  $(median_ci <"$work/rss")"
nj=$(sort -g "$work/nj" | awk '{x[NR] = $1} END {print (NR % 2) ? x[(NR + 1) / 2] : (x[NR / 2] + x[NR / 2 + 1]) / 2}')
rss=$(sort -g "$work/rss" | tail -n1)
if [ "$rows" -ne 1000000 ]; then
  echo "goal (1M rows <= 3 s, <= 200 MiB): not judged for $rows rows"
else
  verdict=met
  awk -v t="$nj" -v r="$rss" 'BEGIN { exit !(t <= 3 && r <= 200) }' || verdict="NOT met"
  echo "goal (1M rows <= 3 s, <= 200 MiB): $verdict"
fi
