#!/usr/bin/env bash
# The needs-root tests inside a cgroup v2 qemu guest, as ctest runs them
# (tests/CMakeLists.txt, label vm; docs/qemu.md "In CI").
#
#   guest-tests.sh boot DIR NIGHTJAR NIGHTJAR_STATIC TESTS_STATIC SOURCE_DIR KERNELS
#     The fixture test guest:boot: boots the generic Debian kernel
#     ($NIGHTJAR_KERNELS/amd64, else KERNELS/amd64, as ci/fetch-kernels.sh
#     leaves it) with `nightjar run --kernel` and runs the static test binary
#     TESTS_STATIC in it, with nightjar-static at NIGHTJAR's path and
#     SOURCE_DIR/jobs at its path (where the tests look for them). gtest's JSON
#     report comes back over the results port into DIR/results.json; the
#     console log stays in DIR/keep. Exit 77 (skip) with DIR/skip holding the
#     reason when there is no kernel or qemu.
#   guest-tests.sh result DIR TESTS_STATIC ARGS...
#     The CROSSCOMPILING_EMULATOR of TESTS_STATIC: --gtest_list_tests runs on
#     the host; --gtest_filter=Suite.Name reads that test's result from
#     DIR/results.json: passed 0, skipped 77, failed 1 (with its messages).
set -uo pipefail
mode=$1 dir=$2
shift 2

if [ "$mode" = result ]; then
  binary=$1
  shift
  filter=
  for a in "$@"; do
    case $a in
      --gtest_list_tests) exec "$binary" "$@" ;;
      --gtest_filter=*) filter=${a#--gtest_filter=} ;;
    esac
  done
  known=$(awk -F'\t' -v t="$filter" '!/^#/ && $1 == t {print $2}' "$(dirname "$0")/guest-known.txt")
  if [ -n "$known" ]; then
    echo "$filter is left out of the guest run (tests/vm/guest-known.txt): $known"
    exit 77
  fi
  if [ -f "$dir/skip" ]; then
    echo "guest tests skipped: $(cat "$dir/skip")"
    exit 77
  fi
  if [ ! -s "$dir/results.json" ]; then
    echo "no guest results in $dir/results.json: guest:boot failed (see its output and $dir/keep)"
    exit 1
  fi
  meta=$dir/meta.json
  [ -f "$meta" ] || meta=/dev/null
  # One jq for the whole lookup (ctest runs this once per guest test): the
  # messages, then the verdict on the last line.
  out=$(jq -r --arg s "${filter%%.*}" --arg n "${filter#*.}" --arg t "$filter" \
    --slurpfile meta "$meta" '
    first(.testsuites[] | select(.name == $s) | .testsuite[] | select(.name == $n)) // empty
    | "\($t) in the guest (\($meta[0].kernel // "")):",
      (.failures[]?.failure),
      "result \(.result), status \(.status), time \(.time)",
      (if .result == "SKIPPED" then "=skipped"
       elif ((.failures // []) | length) > 0 then "=failed" else "=passed" end)' \
    "$dir/results.json")
  if [ -z "$out" ]; then
    echo "$filter did not run in the guest (not in $dir/results.json: did the suite crash?)"
    exit 1
  fi
  echo "${out%$'\n'*}"
  case ${out##*$'\n'} in
    =skipped) exit 77 ;;
    =failed) exit 1 ;;
  esac
  exit 0
fi

[ "$mode" = boot ] || {
  echo "usage: guest-tests.sh boot|result DIR ..." >&2
  exit 2
}
nightjar=$1 nightjar_static=$2 tests=$3 source=$4 kernels=${NIGHTJAR_KERNELS:-$5}
rm -rf "$dir" && mkdir -p "$dir/keep"
image=$(ls "$kernels"/amd64/boot/vmlinuz-* 2>/dev/null | head -n1)
if [ -z "$image" ]; then
  echo "no Debian kernel in $kernels/amd64 (ci/fetch-kernels.sh $kernels amd64, or set NIGHTJAR_KERNELS)" |
    tee "$dir/skip"
  exit 77
fi
if ! command -v qemu-system-x86_64 >/dev/null || ! command -v jq >/dev/null; then
  echo "qemu-system-x86_64 or jq is not installed (ci/fetch-kernels.sh, ci/install-deps.sh)" |
    tee "$dir/skip"
  exit 77
fi
# The guest's /init runs this instead of `nightjar guest-run`; $port is the
# results port it found.
excluded=$(grep -v '^#' "$(dirname "$0")/guest-known.txt" | grep . | cut -f1 | paste -sd:)
filter=
[ -z "$excluded" ] || filter="--gtest_filter=-$excluded"
# The test binary goes under /tmp, where a checkout under /tmp puts every
# --vm-file: the guest's tmpfs on /tmp must not hide it.
init="cd /tmp
/tmp/nightjar-guest-tests/root-tests --gtest_color=no $filter \\
  --gtest_output=json:/tmp/root-tests.json >/dev/console 2>&1"
init+='
echo "nightjar-guest: root tests exited $?"
cat /tmp/root-tests.json > "$port"'
# One vCPU: with two, the TCG guest has twice wedged in the swap-on-zram
# tests, its console silent (no soft-lockup or hung-task report) until the
# qemu timeout; the second time both vCPU threads spun on the host and the
# test's own limit on nightjar never fired, so the emulated machine had
# locked up, not a nightjar process (docs/qemu.md "A hang in the guest").
# None of these tests needs a second CPU.
start=$(date +%s)
"$nightjar" run "$source/jobs/pft-quick.yaml" --db "$dir/boot.db" --kernel "$image" \
  --vm-memory 2048 --vm-cpus 1 --vm-timeout 1200 --vm-keep "$dir/keep" --guest-binary "$nightjar_static" \
  --vm-file "$nightjar_static=$nightjar" --vm-file "$tests=/tmp/nightjar-guest-tests/root-tests" \
  --vm-file "$source/jobs=$source/jobs" --vm-init "$init" >"$dir/run.out" 2>"$dir/run.err"
# The run itself "fails" (the override never sends the job's runs): the
# report is what counts.
cat "$dir"/keep/*/results.jsonl >"$dir/results.json" 2>/dev/null
printf '{"kernel": "%s", "seconds": %d}\n' "${image##*/vmlinuz-}" $(($(date +%s) - start)) >"$dir/meta.json"
grep -ah 'nightjar-guest:\|^\[ *\(OK\|FAILED\|SKIPPED\|PASSED\) *\]' "$dir"/keep/*/console.log
echo "guest:boot: $(($(date +%s) - start)) s under $(grep -o 'booting qemu ([A-Z]*' "$dir/run.err" | cut -d'(' -f2)"
# jq 1.6 exits 0 on an empty file: a guest that hung or was killed before
# it sent its report leaves one, and must fail here, not pass.
if [ ! -s "$dir/results.json" ] || ! jq -e '.testsuites' "$dir/results.json" >/dev/null 2>&1; then
  echo "no gtest report from the guest; console tail:"
  tail -n 30 "$dir"/keep/*/console.log
  rm -f "$dir/results.json"
  exit 1
fi
# The fixture fails when a test inside failed, so that `ctest -L vm` cannot
# pass with a failing guest test whatever else it selects.
failed=$(jq -r '.testsuites[].testsuite[] | select(((.failures // []) | length) > 0)
  | "\(.classname).\(.name)"' "$dir/results.json")
if [ -n "$failed" ]; then
  echo "guest:boot: $(wc -l <<<"$failed") test(s) failed in the guest:"
  echo "$failed"
  exit 1
fi
exit 0
