#!/usr/bin/env bash
# What each monitor costs the headline metric (issue 34's goal: <= 2% at the
# default sampling rate; docs/monitors.md "Overhead, measured"). The anchor
# is the same cell with `monitors: []`, measured in the same rounds: each
# round runs every configuration once, in an order rotated from round to
# round, so a slow minute of a shared machine falls on all of them. Each
# configuration's runs are then compared with the anchor's by `nightjar
# compare` (ROUNDS runs per side: runs are the unit, Welch on the run
# means; docs/statistics.md "Runs as the unit"), and the script prints per
# configuration the %change of the headline metric (negative = slower with
# the monitor), its 95% interval (the comparison's ratio CI), the
# comparison's verdict, and whether the goal holds (the interval's lower
# end >= -2%: "met"; the interval straddles -2%: "unsure"; wholly below:
# "missed").
#
#   bench/monitor_overhead.sh [ROUNDS=8]
#
# Two workloads: pft (faults/sec; CELL, default "clients=1 mode=processes
# size=128M", ITER iterations of it per run, default 5) for every monitor
# but memcg, each alone, the default set and everything; and tcp_sendfile
# (Mbps; 2 clients, 3 s, in a depth-3 memory cgroup tree per client, 3
# iterations) with `monitors: []`, `[memcg]` and `[net]`, the monitors that
# only see something there. NET=0 leaves tcp_sendfile out. Needs root for
# perf-profile's kernel frames and for the cgroups (it says so and goes on
# without them otherwise). Environment: BUILD (default build), KEEP (a
# directory to keep the database and job files in). Leaves nothing behind
# but KEEP: each run cleans up its cgroups as `nightjar run` always does.
set -euo pipefail

rounds=${1:-8}
here=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$here/build}
nj=$build/nightjar
cell=${CELL:-clients=1 mode=processes size=128M}
iter=${ITER:-5}
[ -x "$nj" ] || {
  echo "$0: $nj not built (cmake --build build)" >&2
  exit 2
}
((rounds >= 3)) || {
  echo "$0: ROUNDS must be at least 3 (runs per side)" >&2
  exit 2
}
work=${KEEP:-$(mktemp -d)}
mkdir -p "$work"
[ -n "${KEEP:-}" ] || trap 'rm -rf "$work"' EXIT
db=$work/overhead.db
rm -f "$db" "$db-wal" "$db-shm"

# One job file per configuration, all named overhead.yaml (the job name is
# the file's stem, so every configuration is the same job and cell).
pft_configs=(none vmstat cpu perf-stat meminfo softirqs schedstat interrupts net perf-profile default all)
net_configs=(none memcg net)
monitors_of() {
  case $1 in
  none) echo "monitors: []" ;;
  default) echo "" ;; # no monitors: key = the default set (docs/jobs.md)
  all) echo "monitors: [vmstat, cpu, perf-stat, meminfo, softirqs, schedstat, interrupts, net, perf-profile]" ;;
  *) echo "monitors: [$1]" ;;
  esac
}
params=""
for kv in $cell; do params+="  ${kv%%=*}: ${kv#*=}"$'\n'; done
for c in "${pft_configs[@]}"; do
  mkdir -p "$work/pft-$c"
  printf 'workload: pft\nparams:\n%siterations: %s\nwarmup: 1\n%s\n' "$params" "$iter" \
    "$(monitors_of "$c")" >"$work/pft-$c/overhead.yaml"
done
net=${NET:-1}
if [ "$net" = 1 ]; then
  for c in "${net_configs[@]}"; do
    mkdir -p "$work/net-$c"
    cat >"$work/net-$c/overhead.yaml" <<EOF
workload: tcp_sendfile
params:
  clients: 2
  duration: 3s
  send_size: 10K
iterations: 3
warmup: 1
cgroup:
  depth: 3
  per_client: true
$(monitors_of "$c")
EOF
  done
fi

echo "monitor_overhead: $rounds rounds; pft '$cell', $iter iterations per run; tcp_sendfile: $([ "$net" = 1 ] && echo yes || echo no)"
echo "monitor_overhead: start $(date -u +%H:%M:%S), load $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs"
run_round() { # $1 = prefix (pft|net), $2 = round, rest = configs
  local prefix=$1 r=$2
  shift 2
  local cs=("$@") n=$#
  for ((k = 0; k < n; k++)); do
    local c=${cs[$(((k + r) % n))]}
    "$nj" run "$work/$prefix-$c/overhead.yaml" --db "$db" --build "$prefix-$c" >/dev/null \
      2>>"$work/run.err" || echo "monitor_overhead: run $prefix-$c of round $r failed (see $work/run.err)" >&2
  done
}
for ((r = 0; r < rounds; r++)); do
  run_round pft "$r" "${pft_configs[@]}"
  [ "$net" = 1 ] && run_round net "$r" "${net_configs[@]}"
  echo "monitor_overhead: round $((r + 1)) of $rounds done $(date -u +%H:%M:%S), load $(cut -d' ' -f1 /proc/loadavg)"
done
echo "monitor_overhead: end $(date -u +%H:%M:%S), load $(cut -d' ' -f1-3 /proc/loadavg)"

compare_one() { # $1 = prefix, $2 = config
  "$nj" compare "build=$1-none" "build=$1-$2" --db "$db" --format json 2>/dev/null >"$work/cmp-$1-$2.json" || true
}
for c in "${pft_configs[@]:1}"; do compare_one pft "$c"; done
if [ "$net" = 1 ]; then for c in "${net_configs[@]:1}"; do compare_one net "$c"; done; fi

python3 - "$work" "${pft_configs[*]:1}" "$([ "$net" = 1 ] && echo "${net_configs[*]:1}")" <<'EOF'
import json, sys
work, pft, net = sys.argv[1], sys.argv[2].split(), sys.argv[3].split()
print(f"{'workload':<13} {'monitors':<13} {'metric':<15} {'%change':>8}  {'95% interval':<18} {'verdict':<13} goal (>= -2%)")
for prefix, configs in (("pft", pft), ("net", net)):
    for c in configs:
        try:
            d = json.load(open(f"{work}/cmp-{prefix}-{c}.json"))
        except (OSError, ValueError):
            print(f"{prefix:<13} {c:<13} (no comparison: see {work}/run.err)")
            continue
        rows = [r for r in d["rows"] if r["kind"] == "metric" and r["changes"]]
        if not rows:
            print(f"{prefix:<13} {c:<13} (no metric rows)")
            continue
        r = rows[0]  # the workload's key metric comes first
        ch = r["changes"][0]
        lo_hi = ch.get("ratio_ci")
        pct = ch.get("pct_change")
        if lo_hi and lo_hi[0] is not None:
            # ratio_ci is of gmean(new)/gmean(base); for a lower-is-better
            # metric pct_change's sign is flipped, so orient the interval.
            lo, hi = (lo_hi[0] - 1) * 100, (lo_hi[1] - 1) * 100
            if pct is not None and ch.get("plain_change_pct") is not None and (pct > 0) != (ch["plain_change_pct"] > 0):
                lo, hi = -hi, -lo
            goal = "met" if lo >= -2 else ("missed" if hi < -2 else "unsure")
            interval = f"[{lo:+.2f}, {hi:+.2f}]"
        else:
            goal, interval = "unsure", "n/a"
        name = "pft" if prefix == "pft" else "tcp_sendfile"
        print(f"{name:<13} {c:<13} {r.get('name',''):<15} {pct if pct is None else f'{pct:+.2f}':>8}  {interval:<18} {ch.get('verdict',''):<13} {goal}")
EOF
