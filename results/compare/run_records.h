// The records the run outputs print, read from the store: the per-run,
// per-metric summary of `nightjar run` and `show --summary` (statistics of
// results/stats), and the netperf blocks of `run --format netperf`, which
// the run's workload makes from its stored iterations (its declaration's
// netperf hook, results/model/netperf.h). The renderers of
// results/render/run_summary.h and results/render/netperf.h print these
// records and compute nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "results/model/declarations.h"
#include "results/model/metric.h"
#include "results/model/netperf.h"
#include "results/store/run_store.h"

namespace nightjar {

/// One metric of one run in the summary: statistics of its valid samples.
struct MetricSummary {
  std::string metric;
  std::string unit;  ///< the recorded descriptor's unit ("" when none is recorded)
  MeanKind mean = MeanKind::arithmetic;  ///< the metric's own mean (arithmetic when unrecorded)
  std::size_t n = 0;                     ///< valid samples
  int invalid = 0;                       ///< samples stored invalid (left out of the figures)
  /// The mean of kind `mean`; nullopt when undefined (a harmonic mean of a
  /// non-positive value) or n == 0.
  std::optional<double> mean_value;
  double coeff_var = 0;     ///< percent; meaningful when n >= 2
  double min = 0, max = 0;  ///< meaningful when n >= 1
};

/// One run of the summary.
struct RunSummary {
  std::int64_t id = 0;
  std::string variant, cell;
  std::string status;  ///< "complete", or "failed: reason" (status and reason)
  /// Declared order (the recorded descriptors') first, then any other
  /// stored metric by name; empty when the run has no samples.
  std::vector<MetricSummary> metrics;
  std::string kernel;  ///< the kernel release the run measured (uname -r)
};

/// The summaries of the runs `run_ids` that exist, in the order given.
std::vector<RunSummary> summarize_runs(const RunReader& store,
                                       const std::vector<std::int64_t>& run_ids);

/// The netperf blocks of one run.
struct NetperfRun {
  std::int64_t id = 0;
  /// Iteration by iteration, client by client; empty when the run's
  /// workload has no netperf output, or the run no iterations or no row.
  std::vector<NetperfBlock> blocks;
};

/// The netperf blocks of each of the runs `run_ids`, in the order given:
/// every stored iteration passed to the netperf hook of its workload's
/// declaration in `catalog` (WorkloadDeclaration::netperf).
std::vector<NetperfRun> netperf_runs(const RunReader& store,
                                     const std::vector<std::int64_t>& run_ids,
                                     const WorkloadCatalog& catalog);

}  // namespace nightjar
