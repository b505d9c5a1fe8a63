// mmtests result directories into the results store: `nightjar import
// --format mmtests DIR` (docs/data.md "mmtests import"). DIR is the layout
// mmtests' compare-kernels.sh reads, work/log/NAME/iter-N/BENCHMARK/logs/,
// whose logs are parsed as mmtests' extract modules parse them, for netperf,
// pft and futexbench.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "results/model/metric.h"
#include "results/store/store.h"

namespace nightjar {

/// The largest mmtests log file read.
inline constexpr std::uintmax_t kMaxMmtestsLogBytes = 64ull << 20;

/// One benchmark of one mmtests run name and iteration directory: one
/// nightjar run.
struct MmtestsRun {
  std::string name;       ///< the mmtests run name (work/log/NAME): the build label
  std::string benchmark;  ///< as mmtests names it (netperf-tcp, pft, futexbench): the workload
  int iter = 0;           ///< N of iter-N
  std::string logs;       ///< the logs directory read, for messages and facts
  std::vector<SampleRow> samples;         ///< metric = mmtests' operation label, iteration = sample
  std::vector<MetricDescriptor> metrics;  ///< one per operation label, in mmtests' order
};

/// A parsed mmtests results directory.
struct MmtestsResults {
  std::string dir;                    ///< as given
  std::vector<MmtestsRun> runs;       ///< by name, then benchmark, then iteration directory
  std::vector<std::string> warnings;  ///< benchmarks nightjar does not read, skipped
};

/// Parses the logs of one benchmark (`logs` names the directory in
/// messages; `files` maps a file name to its text) the way mmtests'
/// extract module for `benchmark` does: netperf* (the `protocols` file and
/// PROTOCOL-SIZE.N, one sample per N: operation PROTOCOL-send-SIZE, e.g.
/// tcpstream-send-16384, Mbps), pft (pft-CLIENTS.log, a sample per result
/// line: faults/cpu-CLIENTS, faults/sec-CLIENTS), futexbench (`workloads` and
/// WORKLOAD-THREADS.log: WORKLOAD-private|shared-THREADS, ops/sec or ms).
/// Throws UsageError naming the file: a missing sample file (a gap in
/// PROTOCOL-SIZE.N), a file without a result line, a missing
/// `protocols`/`workloads`, or a benchmark without results.
MmtestsRun parse_mmtests_logs(const std::string& benchmark, const std::string& logs,
                              const std::map<std::string, std::string>& files);

/// True for the benchmarks parse_mmtests_logs reads.
bool mmtests_benchmark_known(const std::string& benchmark);

/// Reads DIR (containing work/log, or work/log itself): every NAME's
/// iter-0..iter-(K-1) and their benchmarks' logs. Throws UsageError naming
/// the directory when iter-N directories have a gap (an iteration missing),
/// when an iteration lacks a benchmark another has, or when nothing is
/// importable; benchmarks nightjar does not read are skipped with a warning.
MmtestsResults read_mmtests_dir(const std::string& dir);

/// Labels of the runs an mmtests import stores.
struct MmtestsImportOptions {
  std::string variant = "mmtests";  ///< --variant
  std::string testbox = "unknown";  ///< mmtests' logs do not name the machine
};

/// What an mmtests import stored.
struct MmtestsImportResult {
  std::vector<std::int64_t> run_ids;
  std::size_t samples = 0;
  std::size_t already_stored = 0;  ///< runs found stored with the same samples
};

/// Stores every run in one transaction: workload and job = the benchmark,
/// build = the run name, kernel unknown, the operations' descriptors, and
/// the facts import.format = mmtests, import.file (the logs directory) and
/// mmtests.iteration. Idempotent (docs/data.md "Importing twice"): a run's
/// identity is its name, benchmark, iteration directory and samples; found
/// again with the same labels it is skipped, with another --variant
/// refused; a metric recorded before with another unit or direction is
/// refused (UsageError); either way nothing is stored.
MmtestsImportResult import_mmtests(ResultsStore& store, const MmtestsResults& results,
                                   const MmtestsImportOptions& options);

}  // namespace nightjar
