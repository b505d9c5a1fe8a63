#!/usr/bin/env bash
# The nightly flow (docs/bisect.md "Nightly flow"):
#   1. run the nightly jobs on this kernel, labelled with tonight's build:
#      with a last good build, in sequential mode against it (`nightjar run
#      --until-decided build=LAST_GOOD`, docs/statistics.md "Sequential
#      sampling"), measuring until every row is decided or the time budget
#      (--max-time) is spent; the first night, the jobs' iterations;
#   2. the gate is that run's exit code; `nightjar compare` puts the table
#      against the last good build in the report;
#   3. `nightjar trend` each job (change points in its history); a possible
#      change in the newest nights re-runs tonight's build once to confirm or
#      clear it (reported; the gate stays step 1's);
#   4. write a markdown report;
#   5. optionally, when check found a regression and --repo/--build-cmd are
#      given, `nightjar bisect run` between the last good build and tonight's;
#      optionally (--publish DIR), `nightjar publish -o DIR`: the static site
#      of every job's history, comparisons and bisects (docs/publish.md);
#   6. exit 0 when every row was decided and none regressed, 1 on a
#      regression, 3 only when the budget could not decide a row (the report
#      says which rows and what they need); 2 usage and 4 environment errors;
#      130 interrupted.
# A night that passes (0) becomes the last good build.
#
# Usage: ci/nightly.sh [--job FILE]... [--db PATH] [--build LABEL] [--report FILE]
#                      [--state DIR] [--iterations N] [--max-time T] [--nightjar BIN]
#                      [--repo DIR --build-cmd CMD [--bisect-metric M]] [--publish DIR]
#
#   --job FILE        a nightly job (repeatable; default: jobs/pft-quick.yaml)
#   --db PATH         results database (default: nightjar's: $NIGHTJAR_DB,
#                     $XDG_DATA_HOME/nightjar/results.db, ~/.local/share/nightjar/results.db)
#   --build LABEL     tonight's build label (default: the commit checked out in
#                     --repo, else nightly-YYYYMMDD-$(uname -r))
#   --report FILE     markdown report (default: STATE/reports/nightly-LABEL.md)
#   --state DIR       where the last good build is kept (default: DB's directory/nightly-state)
#   --iterations N    override the jobs' iterations (the first night; later
#                     nights: the first look when there is no stored history)
#   --max-time T      time budget of each job's sequential run (default 30m)
#   --max-iterations N  at most N iterations per side and cell (default: nightjar's)
#   --nightjar BIN    the nightjar binary (default: build/nightjar, built if missing)
#   --repo DIR        kernel (or program) git work tree: build labels are its commits
#   --build-cmd CMD   how to build a commit there, for the bisect
#   --bisect-metric M metric to bisect on (default: the job's first)
#   --publish DIR     after the night, write the static site into DIR (a
#                     failed publish is reported and does not change the exit)
#
# cron, every night at 02:00 (crontab -e of the user owning the database):
#   0 2 * * * /opt/nightjar/ci/nightly.sh --db /var/lib/nightjar/results.db >>/var/log/nightjar-nightly.log 2>&1
# systemd: docs/bisect.md has a nightjar-nightly.service + .timer pair.
set -uo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
jobs=() db="" label="" report="" state="" iterations="" max_time=30m max_iterations="" nightjar="" repo="" build_cmd="" bisect_metric="" publish=""
usage() { sed -n '2,48p' "$0" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
  case "$1" in
    --job) jobs+=("$2"); shift 2 ;;
    --db) db=$2; shift 2 ;;
    --build) label=$2; shift 2 ;;
    --report) report=$2; shift 2 ;;
    --state) state=$2; shift 2 ;;
    --iterations) iterations=$2; shift 2 ;;
    --max-time) max_time=$2; shift 2 ;;
    --max-iterations) max_iterations=$2; shift 2 ;;
    --nightjar) nightjar=$2; shift 2 ;;
    --publish) publish=$2; shift 2 ;;
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
  [ -x "$nightjar" ] || "$here/ci/build.sh" --program "$here/build" >&2 || exit 4
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

# 1. Run the jobs; with a last good build, until decided against it (the gate).
overall=0 regressed_job=""
sequential=0
[ -n "$baseline" ] && [ "$baseline" != "$label" ] && sequential=1
echo "## Runs" >>"$report"
for job in "${jobs[@]}"; do
  name=$(basename "$job"); name=${name%.yaml}; name=${name%.yml}
  args=(run "$job" --db "$db" --build "$label")
  [ -n "$iterations" ] && args+=(--iterations "$iterations")
  if [ "$sequential" = 1 ]; then
    args+=(--until-decided "build=$baseline" --max-time "$max_time")
    [ -n "$max_iterations" ] && args+=(--max-iterations "$max_iterations")
  fi
  echo "nightly: nightjar ${args[*]}" >&2
  out=$("$nightjar" "${args[@]}" 2>"$state/run.err")
  rc=$?
  cat "$state/run.err" >&2
  { echo; echo "### $name (exit $rc)"; echo; echo '```'; echo "$out";
    grep -E '^nightjar: (plan|look)' "$state/run.err"; echo '```'; } >>"$report"
  case $rc in
    0) ;;
    1) if [ "$sequential" = 1 ]; then overall=1; [ -n "$regressed_job" ] || regressed_job=$job
       else echo "nightly: $job: nightjar run exited $rc" >&2; exit "$rc"; fi ;;
    3) if [ "$sequential" = 1 ]; then
         [ "$overall" = 0 ] && overall=3
         echo "nightly: $name: undecided within the budget: $(grep -A20 'still open' <<<"$out" | head -5 | tr '\n' ' ')" >&2
       else echo "nightly: $job: nightjar run exited $rc" >&2; exit "$rc"; fi ;;
    4) echo "nightly: $job: some cells failed (see the report)" >&2
       # The sequential verdict is lost with the failed cells: not a good night.
       [ "$sequential" = 1 ] && [ "$overall" = 0 ] && overall=3 ;;
    130) echo "nightly: interrupted" >&2; exit 130 ;;
    *) echo "nightly: $job: nightjar run exited $rc" >&2; exit "$rc" ;;
  esac
done
rm -f "$state/run.err"

# 2. The table against the last good build (the gate was the run above).
echo >>"$report"; echo "## Check against the last good build" >>"$report"
if [ -z "$baseline" ]; then
  echo >>"$report"; echo "First night: $label becomes the baseline." >>"$report"
elif [ "$baseline" = "$label" ]; then
  echo >>"$report"; echo "Tonight's build is the last good build ($label): nothing to compare." >>"$report"
else
  for job in "${jobs[@]}"; do
    name=$(basename "$job"); name=${name%.yaml}; name=${name%.yml}
    out=$("$nightjar" compare "build=$baseline" "build=$label" --job "$name" --db "$db" --format markdown)
    rc=$?
    { echo; echo "### $name"; echo; echo "$out"; } >>"$report"
    [ $rc = 0 ] || echo "nightly: compare $name: exit $rc" >&2
  done
fi

# 3. Change points in each job's history. A possible change in the newest
# nights (too few for a change point, docs/statistics.md "Possible change in
# the newest nights") involves tonight's build: it is run once more (the
# job's iterations, pooled with tonight's runs of the build) and trend asked
# again, which confirms or clears it in the report. The gate stays step 1's.
echo >>"$report"; echo "## Trend" >>"$report"
possible() { grep -o 'possible change since night [0-9]* ([^)]*), needs confirmation ([0-9]* nights\{0,1\})' <<<"$1" | sort -u; }
for job in "${jobs[@]}"; do
  name=$(basename "$job"); name=${name%.yaml}; name=${name%.yml}
  out=$("$nightjar" trend --job "$name" --db "$db" --format markdown)
  echo >>"$report"; echo "$out" >>"$report"
  seen=$(possible "$out")
  [ -n "$seen" ] || continue
  echo "nightly: $name: $(head -1 <<<"$seen"): re-running $label once more" >&2
  args=(run "$job" --db "$db" --build "$label")
  [ -n "$iterations" ] && args+=(--iterations "$iterations")
  "$nightjar" "${args[@]}" >/dev/null 2>"$state/rerun.err"
  rc=$?
  [ $rc = 0 ] || [ $rc = 3 ] || { cat "$state/rerun.err" >&2; echo "nightly: re-run of $name exited $rc" >&2; }
  rm -f "$state/rerun.err"
  again=$("$nightjar" trend --job "$name" --db "$db" --format markdown)
  if [ -n "$(possible "$again")" ] || [ "$(grep -c '^| ' <<<"$again")" != "$(grep -c '^| ' <<<"$out")" ]; then
    result="confirmed: still there after a re-run of $label"
  else
    result="cleared by a re-run of $label"
  fi
  echo "nightly: $name: possible change $result" >&2
  { echo; echo "Possible change in the newest nights ($seen): $result (exit $rc). Trend after the re-run:";
    echo; echo "$again"; } >>"$report"
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

# 5. The static site, when asked (docs/publish.md).
if [ -n "$publish" ]; then
  if "$nightjar" publish --db "$db" -o "$publish" 2>"$state/publish.err"; then
    { echo; echo "Site: $publish/index.html"; } >>"$report"
  else
    cat "$state/publish.err" >&2
    { echo; echo "Publishing to $publish failed (see the log)."; } >>"$report"
  fi
fi

# 6. A clean night is the next baseline.
verdict="no significant regression"
case $overall in 1) verdict="significant regression" ;; 3) verdict="undecided within the budget (the open rows and what they need are above)" ;; 2|4) verdict="error" ;; esac
{ echo; echo "**Verdict: $verdict (exit $overall).**"; } >>"$report"
if [ "$overall" = 0 ]; then echo "$label" >"$state/last-good"; fi
echo "nightly: $verdict; report $report" >&2
exit "$overall"
