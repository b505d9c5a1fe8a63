#!/usr/bin/env bash
# nightjar tcp_sendfile against a bare sendfile loop and iperf3, interleaved
# on this machine with the same clients, send size and duration. Prints each
# round's mean throughput per client (Mbps), then the headline: the median
# per-round ratio with its distribution-free 95% interval (bench/ratios.sh),
# and the geometric mean with its t interval; the goal is nightjar >= 0.98 x
# the bare loop.
#
#   bench/tcp_sendfile_vs_bare.sh [CLIENTS=1] [SEND_SIZE=10240] [SECONDS=5] [ROUNDS=3]
#
# BUILD=dir selects the build directory (default: build). iperf3 (Debian
# package iperf3) is used when it is installed; this script installs
# nothing: without it that column is skipped and the script says how to get
# it. Everything stays on loopback (::1).
set -euo pipefail

clients=${1:-1}
send_size=${2:-10240}
seconds=${3:-5}
rounds=${4:-3}
build=${BUILD:-build}
nightjar="$build/nightjar"
bare="$build/bench/bare_sendfile"
for b in "$nightjar" "$bare"; do
  [ -x "$b" ] || { echo "$0: $b not built; run: cmake --build $build" >&2; exit 2; }
done

source "$(dirname "$0")/ratios.sh"
have_iperf=0
if command -v iperf3 >/dev/null 2>&1; then
  have_iperf=1
else
  echo "$0: iperf3 is not installed: its column is skipped (apt-get install iperf3 to add it)" >&2
fi

tmp=$(mktemp -d /tmp/nightjar-bench-XXXXXX)
iperf_pid=""
cleanup() {
  if [ -n "$iperf_pid" ]; then
    kill "$iperf_pid" 2>/dev/null || true
    wait "$iperf_pid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

cat >"$tmp/job.yaml" <<JOB
workload: tcp_sendfile
params:
  clients: $clients
  send_size: $send_size
  duration: ${seconds}s
  family: ipv6
  cpu_util: off
iterations: 1
warmup: 0
JOB

# Mean of the netperf result lines' throughput (last field) = mean per client.
run_nightjar() {
  "$nightjar" run "$tmp/job.yaml" --db "$tmp/bench.db" --format netperf 2>"$tmp/nj.err" |
    awk 'NF == 5 && $1 ~ /^[0-9]+$/ { s += $5; n++ } END { if (n) printf "%.2f\n", s / n }'
}
run_bare() {
  "$bare" "$clients" "$send_size" "$seconds" ipv6 | sed -n 's/.*mean_mbps=\([0-9.]*\).*/\1/p'
}
# One iperf3 server for all rounds, started here in the main shell (not in
# the $(...) subshell of a round) so that the EXIT trap stops it.
if [ $have_iperf -eq 1 ]; then
  iperf_port=$(( 20000 + RANDOM % 20000 ))
  iperf3 -s -B ::1 -p "$iperf_port" >/dev/null 2>&1 &
  iperf_pid=$!
  sleep 0.5
fi
run_iperf() {
  # -P streams in one client; the receiver's SUM (or single) line, in Mbits/sec.
  iperf3 -c ::1 -p "$iperf_port" -Z -l "$send_size" -t "$seconds" -P "$clients" -f m 2>/dev/null |
    awk -v p="$clients" '/receiver/ && (p == 1 || /SUM/) { for (i = 1; i <= NF; i++) if ($(i+1) == "Mbits/sec") v = $i }
                         END { if (v != "") printf "%.2f\n", v / p }'
}

echo "tcp_sendfile vs bare sendfile loop vs iperf3 -Z -l $send_size: clients=$clients seconds=$seconds rounds=$rounds" >&2
sum_nj=0 sum_bare=0 sum_ip=0 ratios=""
for r in $(seq 1 "$rounds"); do
  # Rotate the order so that drift of the machine hits every side alike.
  case $(( r % 3 )) in
    1) order="nj bare ip" ;;
    2) order="bare ip nj" ;;
    0) order="ip nj bare" ;;
  esac
  for side in $order; do
    case $side in
      nj) nj=$(run_nightjar) ;;
      bare) b=$(run_bare) ;;
      ip) if [ $have_iperf -eq 1 ]; then ip=$(run_iperf); else ip=0; fi ;;
    esac
  done
  [ -n "$nj" ] || { echo "$0: nightjar produced no result:" >&2; cat "$tmp/nj.err" >&2; exit 4; }
  printf 'round %d: nightjar %10.2f  bare %10.2f  iperf3 %10.2f  Mbps per client  nightjar/bare %.3f\n' \
    "$r" "$nj" "$b" "${ip:-0}" "$(awk -v a="$nj" -v b="$b" 'BEGIN { print a / b }')"
  ratios="$ratios $(awk -v a="$nj" -v b="$b" 'BEGIN { print a / b }')"
  sum_nj=$(awk -v a="$sum_nj" -v b="$nj" 'BEGIN { print a + b }')
  sum_bare=$(awk -v a="$sum_bare" -v b="$b" 'BEGIN { print a + b }')
  sum_ip=$(awk -v a="$sum_ip" -v b="${ip:-0}" 'BEGIN { print a + b }')
done
awk -v nj="$sum_nj" -v bare="$sum_bare" -v ip="$sum_ip" -v n="$rounds" -v have="$have_iperf" 'BEGIN {
  printf "mean:    nightjar %10.2f  bare %10.2f  iperf3 %10.2f  Mbps per client\n", nj / n, bare / n, ip / n
  if (have) printf "ratio iperf3/bare of the means = %.3f\n", ip / bare
  else print "iperf3: not installed, skipped"
}'
# The headline: the median of the per-round ratios, robust against one
# disturbed round, with its interval (goal >= 0.98).
echo "nightjar/bare per round: median $(echo $ratios | tr ' ' '\n' | median_ci); geometric mean $(echo $ratios | tr ' ' '\n' | gmean_ci) (goal >= 0.98)"
