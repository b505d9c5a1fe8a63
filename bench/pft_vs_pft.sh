#!/usr/bin/env bash
# nightjar's pft against the original pft (gormanm/pft) and, when its path is
# given, will-it-scale page_fault1, interleaved on this machine with the same
# size, mode and task count. For each cell (threads and processes, 1 and 2
# tasks) and round it prints faults/sec of each side and their ratio, then
# the geometric mean of the per-round ratios with a 95% t interval (Student t
# on the log ratios). The goal: nightjar / pft >= 0.99 with an interval that
# holds 1.00 or lies above it; nightjar / page_fault1 per task >= 1.00.
#
#   bench/pft_vs_pft.sh PATH_TO_PFT [SIZE=128M] [ROUNDS=8] [PATH_TO_PAGE_FAULT1]
#
# PATH_TO_PFT is a pft binary the user built (git clone gormanm/pft; make;
# it needs libnuma). PATH_TO_PAGE_FAULT1 is will-it-scale's page_fault1 (its
# page_fault1_processes or page_fault1_threads, or the common prefix; the
# script picks the sibling for each mode). This script never downloads,
# builds or installs anything.
#
# One round of a cell: nightjar `run` of the cell (ITER iterations after one
# warm-up, as jobs/pft.yaml), Hmean of its faults_per_sec; ITER runs of
# `pft -m SIZE -t|-n N`, Hmean of their fault/wsec; and page_fault1 -t N -s
# WIS_SECONDS, its average divided by N (per task). The order of the sides
# rotates each round so drift of the machine hits all alike.
#
# Environment: BUILD (build directory, default build), ITER (default 5),
# CELLS (default "threads:1 processes:1 threads:2 processes:2"),
# WIS_SECONDS (default 3), NICE (e.g. -10: run every side under nice -n NICE,
# to shield all of them alike from a busy machine; default: not used),
# QUIET (e.g. 10: before each round wait until the CPUs are less than 10%
# busy for a second, at most QUIET_WAIT seconds, default 120). Each round
# prints the 1-minute load average and the busy percent of the second before.
set -euo pipefail

usage() {
  echo "usage: $0 PATH_TO_PFT [SIZE=128M] [ROUNDS=8] [PATH_TO_WILL_IT_SCALE_PAGE_FAULT1]" >&2
  exit 2
}
if [ $# -lt 1 ] || [ $# -gt 4 ]; then usage; fi
pft=$1
size=${2:-128M}
rounds=${3:-8}
wis=${4:-}
build=${BUILD:-build}
iter=${ITER:-5}
cells=${CELLS:-"threads:1 processes:1 threads:2 processes:2"}
wis_seconds=${WIS_SECONDS:-3}
nightjar="$build/nightjar"

[ -x "$pft" ] || { echo "$0: $pft is not an executable pft; build gormanm/pft (make) and pass its path" >&2; exit 2; }
[ -x "$nightjar" ] || { echo "$0: $nightjar not built; run: cmake --build $build --target nightjar" >&2; exit 2; }
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "$0: ROUNDS '$rounds' is not a positive integer" >&2; exit 2; }
[[ $iter =~ ^[1-9][0-9]*$ ]] || { echo "$0: ITER '$iter' is not a positive integer" >&2; exit 2; }
[[ $size =~ ^[0-9]+[KMG]$ ]] || { echo "$0: SIZE '$size' is not a size such as 128M (K, M or G; pft -m reads the same)" >&2; exit 2; }

# will-it-scale's binary for a mode: PREFIX_processes / PREFIX_threads.
wis_prefix=""
if [ -n "$wis" ]; then
  wis_prefix=${wis%_processes}
  wis_prefix=${wis_prefix%_threads}
  for m in processes threads; do
    [ -x "${wis_prefix}_$m" ] || { echo "$0: ${wis_prefix}_$m is not executable; build will-it-scale (make) and pass the path of page_fault1_processes" >&2; exit 2; }
  done
fi

prefix=()
[ -n "${NICE:-}" ] && prefix=(nice -n "$NICE")

tmp=$(mktemp -d /tmp/nightjar-pft-bench-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

# Harmonic mean of the numbers on stdin, one per line.
hmean() { awk '{ s += 1 / $1; n++ } END { if (n) printf "%.1f\n", n / s }'; }

# The values of one metric in `nightjar export` CSV on stdin, one per line
# (columns found by their header names: metric, value).
export_metric() { # metric
  awk -F, -v want="$1" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    $col["metric"] == want { print $col["value"] }'
}

# nightjar's Hmean faults_per_sec and faults_per_cpu of one run of the cell
# (ITER iterations, 1 warm-up): "WALL CPU".
run_nightjar() { # mode tasks
  cat >"$tmp/job.yaml" <<JOB
workload: pft
params:
  clients: $2
  mode: $1
  size: $size
iterations: $iter
warmup: 1
JOB
  rm -f "$tmp/nj.db"
  "${prefix[@]}" "$nightjar" run "$tmp/job.yaml" --db "$tmp/nj.db" >/dev/null 2>"$tmp/nj.err" ||
    { cat "$tmp/nj.err" >&2; echo "$0: nightjar run failed" >&2; exit 4; }
  "$nightjar" export --db "$tmp/nj.db" 2>/dev/null >"$tmp/nj.csv"
  printf '%s %s\n' "$(export_metric faults_per_sec <"$tmp/nj.csv" | hmean)" \
    "$(export_metric faults_per_cpu <"$tmp/nj.csv" | hmean)"
}

# The original pft's Hmean fault/wsec (last field) and flt/cpu/s (the one
# before) over ITER runs: "WALL CPU".
run_pft() { # mode tasks
  local flag=-t i
  [ "$1" = processes ] && flag=-n
  for ((i = 0; i < iter; i++)); do
    "${prefix[@]}" "$pft" -m "$size" "$flag" "$2" | awk 'NF >= 8 { print $(NF - 1), $NF }' | tail -n 1
  done >"$tmp/pft.out"
  printf '%s %s\n' "$(awk '{ print $2 }' "$tmp/pft.out" | hmean)" "$(awk '{ print $1 }' "$tmp/pft.out" | hmean)"
}

# will-it-scale page_fault1's average faults/sec divided by the tasks.
run_wis() { # mode tasks
  "${prefix[@]}" "${wis_prefix}_$1" -t "$2" -s "$wis_seconds" |
    awk -v n="$2" -F: '/^average:/ { printf "%.1f\n", $2 / n }'
}

# gmean_ci: the geometric mean of the ratios with its 95% t interval.
source "$(dirname "$0")/ratios.sh"

load() { cut -d' ' -f1 /proc/loadavg; }

# Percent of all CPUs busy over the next second (/proc/stat: everything but
# idle and iowait), as a whole number.
busy_percent() {
  local a b
  a=$(awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9, $5 + $6 }' /proc/stat)
  sleep 1
  b=$(awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9, $5 + $6 }' /proc/stat)
  awk -v a="$a" -v b="$b" 'BEGIN { split(a, x, " "); split(b, y, " ");
    busy = y[1] - x[1]; idle = y[2] - x[2];
    printf "%d\n", (busy + idle > 0) ? 100 * busy / (busy + idle) : 0 }'
}

# With QUIET=PCT, waits (at most QUIET_WAIT seconds, default 120) until the
# CPUs are less than PCT% busy for a second; prints the last busy percent.
wait_quiet() {
  local pct waited=0
  pct=$(busy_percent)
  while [ -n "${QUIET:-}" ] && [ "$pct" -ge "$QUIET" ] && [ "$waited" -lt "${QUIET_WAIT:-120}" ]; do
    pct=$(busy_percent)
    waited=$((waited + 1))
  done
  echo "$pct"
}

echo "nightjar pft vs pft ($pft)${wis:+ vs will-it-scale page_fault1 (${wis_prefix})}: size $size, $rounds rounds, $iter runs a side, $(nproc) CPUs, $(uname -r), $(date -u +%Y-%m-%dT%H:%MZ)"
summary=()
for cell in $cells; do
  mode=${cell%%:*}
  tasks=${cell##*:}
  echo
  echo "== $mode, $tasks task(s), $size"
  printf '%5s %6s %5s %12s %12s %7s %8s' round load busy% nightjar pft nj/pft "cpu nj/pft"
  [ -n "$wis" ] && printf ' %12s %12s %7s' nj/task wis/task nj/wis
  echo
  : >"$tmp/r_pft"
  : >"$tmp/r_cpu"
  : >"$tmp/r_wis"
  for ((r = 1; r <= rounds; r++)); do
    busy=$(wait_quiet)
    l=$(load)
    nj="" pf="" wi=""
    # Rotate the order: nightjar first, then pft first, then (with
    # will-it-scale) page_fault1 first.
    sides=(nj pf wi)
    [ -n "$wis" ] || sides=(nj pf)
    k=$(((r - 1) % ${#sides[@]}))
    for ((j = 0; j < ${#sides[@]}; j++)); do
      case ${sides[$(((j + k) % ${#sides[@]}))]} in
        nj) nj=$(run_nightjar "$mode" "$tasks") ;;
        pf) pf=$(run_pft "$mode" "$tasks") ;;
        wi) wi=$(run_wis "$mode" "$tasks") ;;
      esac
    done
    read -r nj nj_cpu <<<"$nj"
    read -r pf pf_cpu <<<"$pf"
    ratio=$(awk -v a="$nj" -v b="$pf" 'BEGIN { printf "%.4f", a / b }')
    cpu_ratio=$(awk -v a="$nj_cpu" -v b="$pf_cpu" 'BEGIN { printf "%.4f", a / b }')
    echo "$ratio" >>"$tmp/r_pft"
    echo "$cpu_ratio" >>"$tmp/r_cpu"
    printf '%5d %6s %5s %12.0f %12.0f %7.3f %10.3f' "$r" "$l" "$busy" "$nj" "$pf" "$ratio" "$cpu_ratio"
    if [ -n "$wis" ]; then
      njt=$(awk -v a="$nj" -v n="$tasks" 'BEGIN { printf "%.1f", a / n }')
      wr=$(awk -v a="$njt" -v b="$wi" 'BEGIN { printf "%.4f", a / b }')
      echo "$wr" >>"$tmp/r_wis"
      printf ' %12.0f %12.0f %7.3f' "$njt" "$wi" "$wr"
    fi
    echo
  done
  line="$(printf '%-10s %d task(s) %5s: nightjar/pft %s (per cpu-sec %s)' "$mode" "$tasks" "$size" "$(gmean_ci <"$tmp/r_pft")" "$(gmean_ci <"$tmp/r_cpu")")"
  [ -n "$wis" ] && line+="; nightjar/page_fault1 per task $(gmean_ci <"$tmp/r_wis")"
  line+="; load $(load)"
  echo "gmean $line"
  summary+=("$line")
done
echo
echo "== geometric means of the per-round ratios [95% t interval]"
printf '%s\n' "${summary[@]}"
