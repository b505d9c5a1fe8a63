// The samples part of the results store: the sides of compare/check/plot
// (side_queries.cpp) and what trend and plot read besides them
// (history_queries.cpp), as one small interface that ResultsStore
// (results/store/store.h) implements.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "results/store/runs.h"
#include "results/store/side_query.h"

namespace nightjar {

/// Reads of samples across runs: sides, histories, labels.
class SampleReader {
 public:
  /// The runs matching `filter` and the samples and monitor deltas of those
  /// whose status is complete or aborted (an aborted run's iterations were
  /// measured in full and committed one by one); the other matching runs are
  /// listed as excluded. Reads through a read-only connection of its own
  /// (memory-mapped, no per-call mutex): it may run on several threads at
  /// once, one call per thread. Throws EnvironmentError when the file cannot
  /// be opened for reading.
  virtual StoredSide side_samples(const SideFilter& filter) const = 0;
  /// What the database holds (for "matched no runs" messages).
  virtual StoredRunsSummary stored_runs_summary() const = 0;

  /// The metrics with at least one stored sample in a run of job `job`.
  virtual std::set<std::string> metrics_with_samples(const std::string& job) const = 0;
  /// The non-empty variant labels of the runs of `job` and `workload` (""
  /// = any), in the order of their first run.
  virtual std::vector<std::string> variants_by_first_run(const std::string& job,
                                                         const std::string& workload) const = 0;
  /// The labels of the runs `run_ids` that exist.
  virtual std::map<std::int64_t, RunLabels> run_labels(
      const std::set<std::int64_t>& run_ids) const = 0;
  /// The samples of `metric` of each of the runs `run_ids` that has some
  /// (unsorted): the valid ones, or (SampleSet::all) the invalid ones too.
  virtual std::map<std::int64_t, std::vector<double>> metric_samples(
      const std::set<std::int64_t>& run_ids, const std::string& metric,
      SampleSet which = SampleSet::valid) const = 0;
  /// How many samples of `metric` each of the runs `run_ids` holds invalid
  /// (runs without any are absent).
  virtual std::map<std::int64_t, int> invalid_sample_counts(const std::set<std::int64_t>& run_ids,
                                                            const std::string& metric) const = 0;
  /// The stored number (run_param.number, base units) of parameter `name` of
  /// run `run_id`, or nullopt when the run has no such parameter or no number.
  virtual std::optional<double> param_number(std::int64_t run_id,
                                             const std::string& name) const = 0;

 protected:
  ~SampleReader() = default;
};

}  // namespace nightjar
