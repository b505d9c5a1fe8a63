#!/usr/bin/env bash
# Runs as the unit until decided (issue 35's goal): how often
# `nightjar run JOB --variant a,b --until-decided --runs N` decides a real
# A/A pair "unchanged" within its budget, and a real known change (THP
# `always` against `never` on pft) a change, and after how many runs per
# side. Each trial is one such run in a database of its own (no calibration,
# no history: the looks measure the between-run variation themselves),
# deciding on faults_per_sec (`--decide-on`) at the job's margin
# (`min_effect:`, MARGIN percent, default 10). Prints per scenario the
# share decided as expected with its 95% Wilson interval, the share decided
# the other way, and the median runs per side of the decided trials.
#
#   bench/until_decided_runs.sh [TRIALS=20] [RUNS=9]
#
# Environment: BUILD (default build), CELL (default "clients=1
# mode=processes size=128M"), ITER (iterations per run, default 5), MARGIN,
# SCENARIOS ("aa thp", the default, or one of them), KEEP (keep the
# databases and outputs there). The THP scenario needs root (it writes
# /sys/kernel/mm/transparent_hugepage/enabled, restored after every run).
set -euo pipefail

trials=${1:-20}
runs=${2:-9}
here=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$here/build}
nj=$build/nightjar
cell=${CELL:-clients=1 mode=processes size=128M}
iter=${ITER:-5}
margin=${MARGIN:-10}
scenarios=${SCENARIOS:-aa thp}
[ -x "$nj" ] || {
  echo "$0: $nj not built (cmake --build build)" >&2
  exit 2
}
work=${KEEP:-$(mktemp -d)}
mkdir -p "$work"
[ -n "${KEEP:-}" ] || trap 'rm -rf "$work"' EXIT
params=""
for kv in $cell; do params+="  ${kv%%=*}: ${kv#*=}"$'\n'; done
mkdir -p "$work/aa" "$work/thp"
printf 'workload: pft\nparams:\n%siterations: %s\nwarmup: 1\nmin_effect: %s%%\n' \
  "$params" "$iter" "$margin" >"$work/aa/decide.yaml"
{
  cat "$work/aa/decide.yaml"
  printf 'variants:\n  thp-never: {sysfs: {/sys/kernel/mm/transparent_hugepage/enabled: never}}\n'
  printf '  thp-always: {sysfs: {/sys/kernel/mm/transparent_hugepage/enabled: always}}\n'
} >"$work/thp/decide.yaml"

echo "until_decided_runs: $trials trials per scenario ($scenarios), budget $runs runs per side, pft '$cell', $iter iterations per run, margin ±$margin%"
echo "until_decided_runs: start $(date -u +%H:%M:%S), load $(cut -d' ' -f1-3 /proc/loadavg)"
for s in $scenarios; do
  case $s in
  aa) variants=a,b ;;
  thp) variants=thp-never,thp-always ;;
  *)
    echo "$0: unknown scenario $s (aa, thp)" >&2
    exit 2
    ;;
  esac
  for ((t = 1; t <= trials; t++)); do
    db=$work/$s/trial-$t.db
    rm -f "$db" "$db-wal" "$db-shm"
    "$nj" run "$work/$s/decide.yaml" --db "$db" --variant "$variants" --until-decided \
      --runs "$runs" --decide-on faults_per_sec >"$work/$s/trial-$t.out" 2>"$work/$s/trial-$t.err" || true
  done
  echo "until_decided_runs: $s done $(date -u +%H:%M:%S), load $(cut -d' ' -f1 /proc/loadavg)"
done
echo "until_decided_runs: end $(date -u +%H:%M:%S), load $(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$work" "$trials" "$runs" "$scenarios" <<'EOF'
import math, re, sys
work, trials, runs, scenarios = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4].split()

def wilson(k, n, z=1.96):
    if n == 0: return (float("nan"),) * 2
    p = k / n; d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d; h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return max(0.0, c - h), min(1.0, c + h)

expect = {"aa": ("unchanged", "A/A decided unchanged"), "thp": (None, "THP always vs never decided a change")}
for s in scenarios:
    hit = other = 0; used = []
    for t in range(1, trials + 1):
        try:
            out = open(f"{work}/{s}/trial-{t}.out").read()
        except OSError:
            continue
        m = re.search(r"faults_per_sec (regression|improvement|unchanged)[^\n]*? after (\d+) runs per side", out)
        if not m:
            continue  # still open at the budget
        verdict, n = m.group(1), int(m.group(2))
        wanted = expect[s][0]
        ok = verdict == wanted if wanted else verdict in ("regression", "improvement")
        hit += ok; other += not ok
        if ok: used.append(n)
    lo, hi = wilson(hit, trials)
    used.sort()
    med = used[len(used) // 2] if used else "n/a"
    print(f"{expect[s][1]}: {hit}/{trials} = {100*hit/trials:.0f}% [{100*lo:.0f}, {100*hi:.0f}] "
          f"(goal >= 80%) within {runs} runs per side; decided otherwise {other}; "
          f"median runs per side when decided {med}")
EOF
