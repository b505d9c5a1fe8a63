#!/usr/bin/env bash
# The nightly flow (docs/bisect.md "Nightly flow"):
#   1. run the nightly jobs on this kernel, labelled with tonight's build;
#   2. `nightjar check` each job against the last good build;
#   3. `nightjar trend` each job (change points in its history);
#   4. write a markdown report;
#   5. optionally, when check found a regression and --repo/--build-cmd are
#      given, `nightjar bisect run` between the last good build and tonight's;
#   6. exit with check's code: 0 no significant regression, 1 regression,
#      3 inconclusive; 2 usage and 4 environment errors; 130 interrupted.
# A night that passes (0) becomes the last good build.
#
# Usage: ci/nightly.sh [--job FILE]... [--db PATH] [--build LABEL] [--report FILE]
#                      [--state DIR] [--iterations N] [--nightjar BIN]
#                      [--repo DIR --build-cmd CMD [--bisect-metric M]]
#
#   --job FILE        a nightly job (repeatable; default: jobs/pft-quick.yaml)
#   --db PATH         results database (default: nightjar's: $NIGHTJAR_DB,
#                     $XDG_DATA_HOME/nightjar/results.db, ~/.local/share/nightjar/results.db)
#   --build LABEL     tonight's build label (default: the commit checked out in
#                     --repo, else nightly-YYYYMMDD-$(uname -r))
#   --report FILE     markdown report (default: STATE/reports/nightly-LABEL.md)
#   --state DIR       where the last good build is kept (default: DB's directory/nightly-state)
#   --iterations N    override the jobs' iterations
#   --nightjar BIN    the nightjar binary (default: build/nightjar, built if missing)
#   --repo DIR        kernel (or program) git work tree: build labels are its commits
#   --build-cmd CMD   how to build a commit there, for the bisect
#   --bisect-metric M metric to bisect on (default: the job's first)
#
# cron, every night at 02:00 (crontab -e of the user owning the database):
#   0 2 * * * /opt/nightjar/ci/nightly.sh --db /var/lib/nightjar/results.db >>/var/log/nightjar-nightly.log 2>&1
# systemd: docs/bisect.md has a nightjar-nightly.service + .timer pair.
set -uo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
jobs=() db="" label="" report="" state="" iterations="" nightjar="" repo="" build_cmd="" bisect_metric=""
usage() { sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
  case "$1" in
    --job) jobs+=("$2"); shift 2 ;;
    --db) db=$2; shift 2 ;;
    --build) label=$2; shift 2 ;;
    --report) report=$2; shift 2 ;;
    --state) state=$2; shift 2 ;;
    --iterations) iterations=$2; shift 2 ;;
    --nightjar) nightjar=$2; shift 2 ;;
    --repo) repo=$2; shift 2 ;;
    --build-cmd) build_cmd=$2; shift 2 ;;
    --bisect-metric) bisect_metric=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "nightly: unknown option '$1'; see --help" >&2; exit 2 ;;
  esac
done
[ ${#jobs[@]} -gt 0 ] || jobs=("$here/jobs/pft-quick.yaml")
if [ -z "$nightjar" ]; then
  nightjar=$here/build/nightjar
  [ -x "$nightjar" ] || "$here/ci/build.sh" "$here/build" >&2 || exit 4
fi
[ -x "$nightjar" ] || { echo "nightly: $nightjar is not executable" >&2; exit 2; }
if [ -z "$db" ]; then
  if [ -n "${NIGHTJAR_DB:-}" ]; then db=$NIGHTJAR_DB
  elif [ -n "${XDG_DATA_HOME:-}" ]; then db=$XDG_DATA_HOME/nightjar/results.db
  else db=$HOME/.local/share/nightjar/results.db; fi
fi
[ -n "$state" ] || state=$(dirname "$db")/nightly-state
if [ -n "$build_cmd" ] && [ -z "$repo" ]; then echo "nightly: --build-cmd needs --repo" >&2; exit 2; fi
if [ -z "$label" ]; then
  if [ -n "$repo" ]; then
    label=$(git -C "$repo" rev-parse HEAD) || { echo "nightly: --repo $repo is not a git work tree" >&2; exit 2; }
  else
    label=nightly-$(date -u +%Y%m%d)-$(uname -r)
  fi
fi
mkdir -p "$state/reports" || exit 4
[ -n "$report" ] || report=$state/reports/nightly-$label.md
baseline=$(cat "$state/last-good" 2>/dev/null || true)

{
  echo "# nightjar nightly: $label"
  echo
  echo "- date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "- host: $(hostname), kernel $(uname -r)"
  echo "- last good build: ${baseline:-none (first night)}"
  echo "- database: $db"
  echo
} >"$report"

# 1. Run the jobs.
echo "## Runs" >>"$report"
for job in "${jobs[@]}"; do
  args=(run "$job" --db "$db" --build "$label")
  [ -n "$iterations" ] && args+=(--iterations "$iterations")
  echo "nightly: nightjar ${args[*]}" >&2
  out=$("$nightjar" "${args[@]}")
  rc=$?
  { echo; echo "### $(basename "$job") (exit $rc)"; echo; echo '```'; echo "$out"; echo '```'; } >>"$report"
  case $rc in
    0) ;;
    4) echo "nightly: $job: some cells failed (see the report)" >&2 ;;
    130) echo "nightly: interrupted" >&2; exit 130 ;;
    *) echo "nightly: $job: nightjar run exited $rc" >&2; exit "$rc" ;;
  esac
done

# 2. Gate against the last good build.
overall=0 regressed_job=""
echo >>"$report"; echo "## Check against the last good build" >>"$report"
if [ -z "$baseline" ]; then
  echo >>"$report"; echo "First night: $label becomes the baseline." >>"$report"
elif [ "$baseline" = "$label" ]; then
  echo >>"$report"; echo "Tonight's build is the last good build ($label): nothing to compare." >>"$report"
else
  for job in "${jobs[@]}"; do
    name=$(basename "$job"); name=${name%.yaml}; name=${name%.yml}
    out=$("$nightjar" check "build=$baseline" "build=$label" --job "$name" --db "$db" --format markdown)
    rc=$?
    { echo; echo "### $name: exit $rc"; echo; echo "$out"; } >>"$report"
    echo "nightly: check $name: exit $rc" >&2
    case $rc in
      1) overall=1; [ -n "$regressed_job" ] || regressed_job=$job ;;
      2|4) [ "$overall" = 1 ] || overall=$rc ;;
      3) [ "$overall" = 0 ] && overall=3 ;;
      130) exit 130 ;;
    esac
  done
fi

# 3. Change points in each job's history.
echo >>"$report"; echo "## Trend" >>"$report"
for job in "${jobs[@]}"; do
  name=$(basename "$job"); name=${name%.yaml}; name=${name%.yml}
  out=$("$nightjar" trend --job "$name" --db "$db" --format markdown)
  echo >>"$report"; echo "$out" >>"$report"
done

# 4. Bisect a regression when told how to build.
if [ "$overall" = 1 ] && [ -n "$repo" ] && [ -n "$build_cmd" ]; then
  args=(bisect run --repo "$repo" --good "$baseline" --bad "$label" --build "$build_cmd" --job "$regressed_job"
        --db "$db")
  [ -n "$bisect_metric" ] && args+=(--metric "$bisect_metric")
  echo "nightly: nightjar ${args[*]}" >&2
  out=$("$nightjar" "${args[@]}")
  rc=$?
  { echo; echo "## Bisect between $baseline and $label (exit $rc)"; echo; echo '```'; echo "$out"; echo '```'; } >>"$report"
fi

# 5. A clean night is the next baseline.
verdict="no significant regression"
case $overall in 1) verdict="significant regression" ;; 3) verdict="inconclusive" ;; 2|4) verdict="error" ;; esac
{ echo; echo "**Verdict: $verdict (exit $overall).**"; } >>"$report"
if [ "$overall" = 0 ]; then echo "$label" >"$state/last-good"; fi
echo "nightly: $verdict; report $report" >&2
exit "$overall"
