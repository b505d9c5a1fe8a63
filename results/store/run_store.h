// The runs part of the results store, as two small interfaces: what `nightjar
// run` writes (RunWriter, run_writes.cpp) and what `show`, the run outputs and
// the qemu guest read back (RunReader, run_reads.cpp). ResultsStore
// (results/store/store.h) implements both; a caller that only writes runs or
// only reads them takes the one it needs.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "results/model/identity.h"
#include "results/model/iteration.h"
#include "results/model/metric.h"
#include "results/store/runs.h"

namespace nightjar {

/// Writes of runs as they are measured; each call is one transaction of its own.
class RunWriter {
 public:
  /// Records the workload's metric descriptors (insert or replace).
  virtual void register_metrics(const std::string& workload,
                                const std::vector<MetricDescriptor>& metrics) = 0;
  /// Inserts a run with status running and returns its id.
  virtual std::int64_t begin_run(const NewRun& run) = 0;
  /// Inserts a run directly as skipped with `reason` and returns its id.
  virtual std::int64_t record_skipped(const NewRun& run, const std::string& reason) = 0;
  /// Commits one iteration (samples, monitor deltas, workload counters, flags
  /// and, when `profile` is given, the perf-profile monitor's folded stacks)
  /// in a single transaction. `duration_sec` is its wall time in seconds.
  /// A profile's stacks are stored once each in profile_stack and counted
  /// per iteration in profile_sample.
  virtual void add_iteration(std::int64_t run_id, int iteration, const IterationResult& result,
                             const std::map<std::string, double>& monitors, double duration_sec,
                             const IterationProfile* profile = nullptr) = 0;
  /// Adds a fact to the run's context (workload facts such as cgroup paths).
  virtual void add_context(std::int64_t run_id, const std::string& key,
                           const std::string& value) = 0;
  /// Adds a run-level warning.
  virtual void add_warning(std::int64_t run_id, const std::string& message) = 0;
  /// Ends a run with its final status and reason.
  virtual void finish_run(std::int64_t run_id, RunStatus status,
                          const std::string& reason = "") = 0;

 protected:
  ~RunWriter() = default;
};

/// Reads of stored runs, one run at a time.
class RunReader {
 public:
  /// Runs matching `filter`, oldest first.
  virtual std::vector<RunRow> runs(const RunFilter& filter) const = 0;
  /// Samples of one run, by iteration then metric: the valid ones, or
  /// (SampleSet::all) every one, each invalid one with its reason.
  virtual std::vector<SampleRow> samples(std::int64_t run_id,
                                         SampleSet which = SampleSet::valid) const = 0;
  /// Monitor deltas and counters of one run, by iteration then name.
  virtual std::vector<SampleRow> monitors(std::int64_t run_id) const = 0;
  /// Iteration rows of one run (ok, failed and invalid), by iteration.
  virtual std::vector<IterationRow> iterations(std::int64_t run_id) const = 0;
  /// The perf-profile stacks of the iterations of `run_ids` whose status is
  /// ok (failed and invalid iterations left out), ordered by run and
  /// iteration; none for runs without them, or a database older than schema
  /// version 9 (no profile tables).
  virtual std::vector<StoredProfile> iteration_profiles(
      const std::vector<std::int64_t>& run_ids) const = 0;
  /// Cell parameters of one run (canonical text).
  virtual std::map<std::string, std::string> run_params(std::int64_t run_id) const = 0;
  /// Context facts of one run.
  virtual std::map<std::string, std::string> run_context(std::int64_t run_id) const = 0;
  /// The value of context fact `key` of every run that has it: run id ->
  /// value (`nightjar show --fact KEY`, the LAVA job column).
  virtual std::map<std::int64_t, std::string> fact_values(const std::string& key) const = 0;
  /// The metric descriptors recorded for `workload`, in name order.
  virtual std::vector<MetricDescriptor> metrics(const std::string& workload) const = 0;
  /// Total rows in the run table (used by tests: "nothing written").
  virtual std::int64_t run_count() const = 0;
  /// The labels of run `run_id`, or nullopt when there is no such run.
  virtual std::optional<RunLabels> run_labels(std::int64_t run_id) const = 0;
  /// Run `run_id` with everything stored for it, or nullopt when there is no
  /// such run (what a qemu guest sends to the host: harness/vm/qemu.cpp).
  virtual std::optional<RunRecord> run_record(std::int64_t run_id) const = 0;
  /// The kernel and testbox rows run `run_id` refers to (run_machine.cpp;
  /// `nightjar bundle`); each nullopt when the run has none (or no such
  /// run). config_source is not stored and stays "".
  virtual std::pair<std::optional<KernelIdentity>, std::optional<Testbox>> run_machine(
      std::int64_t run_id) const = 0;
  /// The fingerprint of run `run_id` (fingerprints.cpp; docs/environment.md):
  /// its context facts, with the kernel row as kernel.release, kernel.version,
  /// kernel.cmdline and kernel.config_hash and the testbox row as
  /// testbox.hostname, testbox.cpu_model and testbox.cpus (a run without a
  /// kernel or testbox row lacks those keys). Empty for no such run.
  virtual std::map<std::string, std::string> run_fingerprint(std::int64_t run_id) const = 0;
  /// The kernel config text stored for config hash `hash` (table
  /// kernel_config, written once per distinct hash with the first run on that
  /// config), or nullopt when none was stored (imported runs, a kernel
  /// whose config was not readable, runs stored before schema version 8).
  virtual std::optional<std::string> kernel_config(const std::string& hash) const = 0;

 protected:
  ~RunReader() = default;
};

}  // namespace nightjar
