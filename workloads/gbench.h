// The `gbench` workload: runs a Google Benchmark binary and stores its
// results as samples, so that users' own micro benchmarks get nightjar's
// matrices, compare, check, trend and bisect (docs/data.md "The gbench
// workload").
//
// Parameters: `binary` (required), `filter` (--benchmark_filter), `repetitions`
// (--benchmark_repetitions per invocation), `args` (more arguments for the
// binary, split like exec's command), `counters` (units and directions of
// user counters), `time_unit` (ns by default) and `timeout`.
//
// Metrics are the benchmarks' own, named `<benchmark>.<field>` exactly as
// `nightjar import --format gbench` names them (results/gbench_import.h):
// `BM_memcpy/8.real_time`, `BM_memcpy/8.cpu_time` (lower is better, in
// `time_unit`), `BM_memcpy/8.bytes_per_second` (bytes/s, higher is better)...
// They are declared before the run from `binary --benchmark_list_tests`
// (real_time, cpu_time, bytes_per_second, items_per_second and the
// `counters` of every listed benchmark), which is why real_time and cpu_time
// have one configured unit instead of each benchmark's own.
//
// Iterations: each invocation runs every benchmark `repetitions` times, with
// --benchmark_out=FILE --benchmark_out_format=json; repetition k of an
// invocation is one nightjar iteration, so with the default repetitions: 1
// every iteration is a fresh process, and with repetitions: R the binary runs
// once per R iterations (the first iteration of each batch carries the
// invocation's time and monitor deltas). Aggregates are never stored.
// A warm-up iteration runs the binary once with one repetition.
#pragma once

#include <memory>

#include "workloads/workload.h"

namespace nightjar {

/// The `gbench` workload (registered in workloads/registry.cpp).
std::unique_ptr<Workload> make_gbench_workload();

}  // namespace nightjar
