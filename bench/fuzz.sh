#!/usr/bin/env bash
# Fuzzes nightjar's input parsers with libFuzzer (docs/input.md "Fuzzing"):
# configures and builds the fuzz build (clang++, -DNIGHTJAR_FUZZ=ON: only the
# fuzz targets and the libraries they need), then runs each target for
# SECONDS on its seed corpus fuzz/corpus/NAME/, printing per target the runs
# made and the result. Exits non-zero when a target finds a crash, leak,
# timeout or sanitizer report; its output then names the file holding the
# input (BUILD/fuzz-out/crash-*, timeout-*, oom-*, leak-*): reproduce with
# `BUILD/fuzz/fuzz_NAME FILE`, fix, and add the file to the corpus.
#
#   bench/fuzz.sh [SECONDS=60] [BUILD=build-fuzz] [TARGET...]
#
# TARGET: job, csv, gbench (default: all three). Environment: FUZZ_JOBS=N runs
# N targets at once (default 1); CXX names the compiler: clang++ 16 or newer
# (clang 14 and 15 cannot capture structured bindings in lambdas, which
# nightjar's C++20 does); default the newest clang++-NN on PATH, else clang++.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-60}
build=${2:-build-fuzz}
shift 2 2>/dev/null || shift $#
targets=("$@")
((${#targets[@]})) || targets=(job csv gbench)
[[ $build == /* ]] || build=$here/$build
[[ $seconds =~ ^[0-9]+$ ]] || {
  echo "fuzz.sh: SECONDS must be a whole number, got '$seconds'" >&2
  exit 2
}

cxx=${CXX:-}
if [[ -z $cxx ]]; then
  cxx=$(compgen -c clang++- | grep -E '^clang\+\+-[0-9]+$' | sort -t- -k2 -n | tail -1)
  cxx=${cxx:-clang++}
fi
major=$("$cxx" --version 2>/dev/null | grep -Eo 'clang version [0-9]+' | grep -Eo '[0-9]+$')
if [[ -z $major ]] || ((major < 16)); then
  echo "fuzz.sh: $cxx is not clang++ 16 or newer (libFuzzer, C++20); apt-get install" \
    "clang-16 libclang-rt-16-dev, or set CXX" >&2
  exit 2
fi
# -O1 and line tables only: about half the compile time of -O2 -g, fast
# enough runs, and file:line in every stack trace (the libFuzzer docs' advice).
cmake -S "$here" -B "$build" -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=Fuzz \
  -DCMAKE_CXX_FLAGS_FUZZ="-O1 -gline-tables-only" \
  -DNIGHTJAR_FUZZ=ON -DNIGHTJAR_BUILD_TESTS=OFF -DNIGHTJAR_BUILD_BENCH=OFF >/dev/null || exit 2
cmake --build "$build" -j "${FUZZ_BUILD_JOBS:-$(nproc)}" \
  --target "${targets[@]/#/fuzz_}" >"$build/fuzz-build.log" 2>&1 || {
  tail -40 "$build/fuzz-build.log" >&2
  echo "fuzz.sh: the fuzz build failed ($build/fuzz-build.log)" >&2
  exit 2
}

out=$build/fuzz-out
mkdir -p "$out"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

run_one() {  # run_one NAME: fuzz one target; its log is $out/NAME.log
  local name=$1 work=$out/$1
  rm -rf "$work" && mkdir -p "$work/corpus"
  # New inputs go to a scratch corpus; the checked-in seeds are read only.
  "$build/fuzz/fuzz_$name" "$work/corpus" "$here/fuzz/corpus/$name" \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
    -artifact_prefix="$out/$name-" -print_final_stats=1 >"$out/$name.log" 2>&1
}

pids=()
for name in "${targets[@]}"; do
  if [[ ! -d $here/fuzz/corpus/$name ]]; then
    echo "fuzz.sh: no target '$name' (job, csv, gbench)" >&2
    exit 2
  fi
  rm -f "$out/$name"-crash-* "$out/$name"-timeout-* "$out/$name"-oom-* "$out/$name"-leak-*
  run_one "$name" &
  pids+=($!)
  if ((${#pids[@]} >= ${FUZZ_JOBS:-1})); then
    wait "${pids[0]}"
    pids=("${pids[@]:1}")
  fi
done
wait

status=0
for name in "${targets[@]}"; do
  log=$out/$name.log
  runs=$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -Eo '[0-9]+$')
  artifacts=$(ls "$out/$name"-crash-* "$out/$name"-timeout-* "$out/$name"-oom-* \
    "$out/$name"-leak-* 2>/dev/null)
  if [[ -n $artifacts ]] || grep -q 'ERROR: libFuzzer\|==ERROR\|runtime error:' "$log"; then
    status=1
    echo "fuzz_$name: FAILED after ${runs:-?} runs; input: ${artifacts:-see log}"
    grep -m3 -E 'ERROR|runtime error|SUMMARY|terminate called|what\(\)' "$log" | sed 's/^/  | /'
    echo "  log: $log; reproduce: $build/fuzz/fuzz_$name ${artifacts%%$'\n'*}"
  else
    echo "fuzz_$name: ok, ${runs:-?} runs in ${seconds}s, no crash"
  fi
done
exit $status
