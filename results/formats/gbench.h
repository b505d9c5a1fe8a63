// Google Benchmark's JSON report read as nightjar samples: `nightjar import
// --format gbench FILE.json` (results/io/gbench.h stores what this reads)
// and the `gbench` workload (workloads/gbench.cpp) read the same JSON the
// same way (docs/data.md "Google Benchmark"). A parser: text in, records
// out; no file, no store.
//
// The input is Google Benchmark's JSON report (--benchmark_format=json or
// --benchmark_out=FILE; docs/reference.md "Google Benchmark JSON"): a `context` object
// and a `benchmarks` array. The mapping:
//   - each entry with run_type "iteration" is one repetition of one benchmark
//     (its run_name, e.g. "BM_memcpy/8"); repetition_index + 1 is the nightjar
//     iteration, so repetitions become samples;
//   - entries with run_type "aggregate" (mean, median, stddev, cv, BigO, RMS)
//     are summaries of those repetitions and are skipped: never counted twice;
//   - entries that report an error (error_occurred, or `skipped` in newer
//     versions) are skipped with a warning;
//   - every repetition gives the metrics `<run_name>.real_time` and
//     `<run_name>.cpu_time` (lower is better, Amean, in the entry's time_unit
//     or in GbenchOptions::time_unit), and `<run_name>.<counter>` for each
//     user counter (every other numeric key): `*_per_second` counters such as
//     bytes_per_second are rates (unit "bytes/s", higher is better, Hmean);
//     the memory manager's allocs_per_iter, max_bytes_used,
//     total_allocated_bytes and net_heap_growth are lower is better; any other
//     counter is higher is better with Amean and no unit, unless declared.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "results/model/metric.h"
#include "results/model/params.h"

namespace nightjar {

/// How the JSON is turned into metrics.
struct GbenchOptions {
  /// "" keeps each benchmark's own time_unit; "ns", "us", "ms" or "s"
  /// converts real_time and cpu_time to that unit.
  std::string time_unit;
  /// Unit, direction and mean of user counters by counter name (the same for
  /// every benchmark), from parse_counter_declarations(); these replace the
  /// default rules above.
  std::vector<MetricDescriptor> counters;
};

/// One Google Benchmark report, read.
struct GbenchReport {
  /// Scalar fields of `context` as run facts: "gbench.date", "gbench.host_name",
  /// "gbench.executable", "gbench.num_cpus", "gbench.mhz_per_cpu",
  /// "gbench.cpu_scaling_enabled", "gbench.library_build_type",
  /// "gbench.load_avg" (the three numbers joined by blanks), ...
  std::map<std::string, std::string> context;
  std::string date;  ///< context.date as written ("2026-11-30T08:46:49+00:00"), or ""
  /// context.date in UTC ("2026-11-30T08:46:49Z", results/model/text.h
  /// utc_iso8601), or "" without a date
  std::string started_at;
  /// The report's content: FNV-1a 64 (results/model/identity.h) of its
  /// context facts and every entry's scalar fields as parsed, so that a
  /// reformatted copy (jq, an editor's indentation) has the same digest and
  /// a changed value another; the import options do not change it.
  std::string report_digest;
  std::string host_name;   ///< context.host_name, or ""
  std::string executable;  ///< context.executable (the benchmark binary's path), or ""
  unsigned num_cpus = 0;   ///< context.num_cpus, or 0
  /// Every metric, in the order first seen (a benchmark's real_time, cpu_time,
  /// then its counters in file order).
  std::vector<MetricDescriptor> metrics;
  /// repetitions[k]: metric -> value of repetition k + 1 (nightjar iteration
  /// k + 1). A benchmark with fewer repetitions than others is absent from
  /// the later ones.
  std::vector<std::map<std::string, double>> repetitions;
  std::size_t benchmarks = 0;         ///< distinct run names with at least one sample
  std::size_t iteration_entries = 0;  ///< entries read as repetitions
  std::size_t aggregate_entries = 0;  ///< aggregate entries skipped
  std::size_t error_entries = 0;      ///< entries skipped because they report an error
  /// What the user should know: errored benchmarks, non-finite values left
  /// out, CPU frequency scaling enabled while measuring.
  std::vector<std::string> warnings;

  /// Number of samples (metric values over all repetitions).
  std::size_t samples() const;
};

/// The largest Google Benchmark report `nightjar import --format gbench`
/// reads, bytes (64 MiB; docs/input.md "Input files"): the report is parsed
/// whole, and a JSON document costs several times its size in memory.
inline constexpr std::uintmax_t kMaxGbenchReportBytes = std::uintmax_t{64} << 20;

/// Reads a Google Benchmark JSON report. `source` names it in errors (a file
/// path). NaN and Infinity, which Google Benchmark writes unquoted for
/// non-finite counters, are accepted and left out with a warning. Throws
/// UsageError naming `source`, the entry (index and name) and the field for:
/// text that is not JSON, no `benchmarks` array, an entry that is not an
/// object or lacks name/real_time/cpu_time, an unknown time_unit, a
/// repetition given twice, and a report with no repetition to import (only
/// aggregates, as --benchmark_report_aggregates_only writes, or only errors).
GbenchReport parse_gbench_json(std::string_view text, const GbenchOptions& options,
                               const std::string& source);

/// Parses counter declarations `NAME[:UNIT[:higher|lower[:hmean|amean|gmean]]]`
/// separated by blanks or ';' (the syntax of the exec workload's `metrics`,
/// workloads/exec.h). NAME is a counter name such as `bytes_per_second`.
/// Throws ParamError (field `field`) for a bad declaration, and for
/// real_time or cpu_time (their unit is the time unit; their direction is
/// fixed: lower is better).
std::vector<MetricDescriptor> parse_counter_declarations(const std::string& text,
                                                         const std::string& field);

/// Seconds per unit of a Google Benchmark time_unit ("ns" 1e-9, "us" 1e-6,
/// "ms" 1e-3, "s" 1), or 0 for anything else.
double gbench_time_unit_seconds(std::string_view unit);

/// The descriptor of `<benchmark>.<counter>`: `options.counters`' declaration
/// of `counter` when there is one, else the default rules (file comment).
MetricDescriptor gbench_counter_metric(const std::string& benchmark, const std::string& counter,
                                       const GbenchOptions& options);

/// The descriptor of `<benchmark>.real_time` or `<benchmark>.cpu_time`
/// (`field`): lower is better, Amean, in `unit`.
MetricDescriptor gbench_time_metric(const std::string& benchmark, const std::string& field,
                                    const std::string& unit);

/// The workload name of imported Google Benchmark runs: "gbench", as the
/// workload's, so that `--workload gbench` selects both.
inline constexpr const char* kGbenchWorkload = "gbench";

/// The default job name of an import (results/io/gbench.h): the file name (without directories and
/// extension) of context.executable, so that reports of one benchmark binary
/// written to differently named files are the same job; the stem of
/// `file_path` when the report names no executable.
std::string default_gbench_job(const GbenchReport& report, const std::string& file_path);

}  // namespace nightjar
