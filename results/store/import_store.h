// The imports part of the results store (imports.cpp): imported runs, the
// metric descriptors an import records, and the scans of an export, as one
// small interface that ResultsStore (results/store/store.h) implements.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "results/model/metric.h"
#include "results/store/imports.h"
#include "results/store/runs.h"

namespace nightjar {

/// Imported runs in, exported runs out.
class ImportStore {
 public:
  /// Inserts `run` and its parameters, context, iteration rows, samples,
  /// and the monitor deltas and flags of its `detail`.
  /// Opens no transaction of its own: the caller wraps a whole import in one
  /// Transaction, so that a failure stores nothing. Returns the run id.
  /// Throws (is_database_error) on a constraint violation: a run id already
  /// used, a sample given twice.
  virtual std::int64_t insert_imported_run(const ImportedRun& run) = 0;
  /// The run stored with fact import.identity = `identity` (the oldest, when
  /// several), or nullopt: how an import finds a run it stored before. One
  /// indexed lookup (index run_context_by_fact, schema version 5).
  virtual std::optional<ImportedOrigin> imported_as(const std::string& identity) const = 0;
  /// The descriptor recorded for `workload`'s metric `name`, or nullopt.
  virtual std::optional<MetricDescriptor> stored_metric(const std::string& workload,
                                                        const std::string& name) const = 0;
  /// Records the descriptors of `metrics` that `workload` does not have yet;
  /// recorded ones are never replaced (unlike register_metrics). No
  /// transaction of its own (see insert_imported_run).
  virtual void add_missing_metrics(const std::string& workload,
                                   const std::vector<MetricDescriptor>& metrics) = 0;
  /// Every recorded metric descriptor, by workload then name.
  virtual std::vector<WorkloadMetric> all_metrics() const = 0;
  /// The runs of `run_ids` (ascending) that have at least one sample (valid,
  /// or with SampleSet::all any), with their labels and parameters.
  virtual std::map<std::int64_t, ExportRun> export_runs(
      const std::vector<std::int64_t>& run_ids, SampleSet which = SampleSet::valid) const = 0;
  /// Calls `visit` for every valid sample (SampleSet::all: every sample, an
  /// invalid one with its reason) of the runs `run_ids` (ascending), ordered
  /// by run id, iteration, metric (byte order), without holding them in
  /// memory. Exceptions of `visit` end the scan and propagate.
  virtual void scan_samples(const std::vector<std::int64_t>& run_ids,
                            const std::function<void(const SampleView&)>& visit,
                            SampleSet which = SampleSet::valid) const = 0;

 protected:
  ~ImportStore() = default;
};

}  // namespace nightjar
