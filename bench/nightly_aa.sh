#!/usr/bin/env bash
# Simulated nights through ci/nightly.sh (issue 14, "Goals" and acceptance
# check 3): does the nightly flow cry wolf?
#
#   1. 20 A/A nights: every night the same job and level (100 ops/s,
#      lognormal noise at CoeffVar 1%), other noise each night (the night's
#      seed); goal: at most 1 of the 20 nights exits non-zero.
#   2. The issue's 12 nights: 6 at level 100, then 95 (-5%) from night 7 on;
#      expected: nights 2-6 exit 0 and move last-good, night 7 exits 1.
#
# The workload is an `exec` job whose command prints one lognormal sample
# per iteration from the night's level and seed files (seeded by seed and
# iteration, as tests/cli/test_trend_cli.cpp does): the cell stays the same
# from night to night, only the build label and the noise change, as on a
# real testbox. The first night of each history runs --first-iterations
# (default 20) so that the stored BASE can decide ±1%; later nights run in
# sequential mode against the last good build (ci/nightly.sh).
#
# Prints per night its exit code and whether last-good moved, then the count
# of nights not exiting 0 against the goal. Seeded: the same output every
# time (the fake noise, not the machine, decides).
#
# Usage: bench/nightly_aa.sh [--nightjar BIN] [--nights N] [--first-iterations N] [--keep DIR]
set -uo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
nightjar=$here/build/nightjar nights=20 first=20 keep=""
while [ $# -gt 0 ]; do
  case "$1" in
    --nightjar) nightjar=$2; shift 2 ;;
    --nights) nights=$2; shift 2 ;;
    --first-iterations) first=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    -h|--help) sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "nightly_aa: unknown option '$1'; see --help" >&2; exit 2 ;;
  esac
done
[ -x "$nightjar" ] || { echo "nightly_aa: $nightjar is not executable (build it, or --nightjar BIN)" >&2; exit 2; }
if [ -n "$keep" ]; then mkdir -p "$keep" && dir=$keep || exit 2
else dir=$(mktemp -d) || exit 4; trap 'rm -rf "$dir"' EXIT; fi

# One sample: LEVEL * exp(sigma z - sigma^2/2), z ~ N(0,1) by Box-Muller from
# awk's rand() seeded by the night's seed and the iteration.
cat >"$dir/sample.sh" <<'SH'
#!/bin/sh
d=$(dirname "$0")
awk -v l="$(cat "$d/level")" -v s="$(cat "$d/seed")" -v i="$NIGHTJAR_ITERATION" 'BEGIN {
  srand(s * 1000 + i); u1 = 1 - rand(); u2 = rand();
  z = sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2); sg = sqrt(log(1 + 0.01 * 0.01));
  printf "throughput=%.6f\n", l * exp(sg * z - sg * sg / 2) }'
SH
cat >"$dir/aa.yaml" <<YAML
workload: exec
params:
  command: "sh $dir/sample.sh"
  metrics: "throughput:ops/s:higher"
  timeout: 60s
iterations: 5
warmup: 0
YAML

# history NAME NIGHTS STEP_AT: nights 1..NIGHTS, level 95 from STEP_AT on (0: never).
history() {
  local name=$1 n=$2 step=$3 db=$dir/$1.db state=$dir/$1-state not0=0
  rm -rf "$db" "$state"
  echo "== $name: $n nights, CoeffVar 1%$([ "$step" -gt 0 ] && echo ", -5% from night $step on")"
  printf '%-6s %-5s %-10s %s\n' night exit last-good why
  for i in $(seq 1 "$n"); do
    if [ "$step" -gt 0 ] && [ "$i" -ge "$step" ]; then echo 95 >"$dir/level"; else echo 100 >"$dir/level"; fi
    echo $((1000 * ${#name} + i)) >"$dir/seed"
    local label extra=() before after rc why
    label=$(printf 'n%02d' "$i")
    [ "$i" = 1 ] && extra=(--iterations "$first")
    before=$(cat "$state/last-good" 2>/dev/null || echo -)
    bash "$here/ci/nightly.sh" --nightjar "$nightjar" --db "$db" --state "$state" --job "$dir/aa.yaml" \
      --build "$label" "${extra[@]}" >"$dir/out" 2>"$dir/err"
    rc=$?
    after=$(cat "$state/last-good" 2>/dev/null || echo -)
    why=$(grep -o 'until-decided: .*' "$dir/out" "$state/reports/nightly-$label.md" 2>/dev/null | head -1 | sed 's/^[^:]*:until-decided: //; s/^.* timeout=[^ ]*: //')
    grep -q 'possible change' "$dir/err" && why="$why; trend: $(grep -o 'possible change [a-z]*.*' "$dir/err" | tail -1)"
    printf '%-6s %-5s %-10s %s\n' "$label" "$rc" "$([ "$before" != "$after" ] && echo "moved" || echo "stays")" "$why"
    [ "$rc" = 0 ] || not0=$((not0 + 1))
  done
  echo "$name: $not0 of $n nights did not exit 0"
  last_not0=$not0
}

history aa "$nights" 0
aa_not0=$last_not0
echo "goal: at most 1 of 20 A/A nights not exiting 0: $([ "$aa_not0" -le 1 ] && echo met || echo MISSED)"
echo
history step 12 7
