// Google Benchmark reports into the results store: `nightjar import --format
// gbench FILE.json` stores the report that results/formats/gbench.h read as
// one run of workload "gbench" (docs/data.md "Google Benchmark").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "results/formats/gbench.h"
#include "results/model/identity.h"
#include "results/store/store.h"

namespace nightjar {

/// Where and as what an imported report is stored.
struct GbenchImportOptions {
  std::string source;   ///< the file, recorded as fact import.file
  std::string job;      ///< job name (default_gbench_job())
  std::string variant;  ///< required
  std::string build;    ///< may be ""
  /// Kernel release to record. "" : on the host that ran the benchmarks
  /// (context.host_name is this machine's hostname) the running kernel, else
  /// an unknown kernel (release "").
  std::string kernel;
  /// This machine and its running kernel, as the caller probed them
  /// (workloads/sys/probe.h): recorded when the report was written here.
  Testbox here;
  KernelIdentity here_kernel;
};

/// What an import stored.
struct GbenchImportResult {
  std::int64_t run_id = 0;
  std::size_t metrics = 0;     ///< distinct metrics with samples
  std::size_t samples = 0;     ///< sample rows
  std::size_t iterations = 0;  ///< repetitions (iteration rows)
  /// The report was imported before with the same labels and samples: nothing
  /// stored, run_id is the run that holds it.
  bool already_imported = false;
  std::vector<std::string> notes;  ///< for stderr: which kernel/testbox was recorded, warnings
};

/// Stores `report` as one complete run of workload "gbench" (no cell
/// parameters) in one transaction: its metric descriptors (those not yet
/// recorded), the repetitions as iterations and samples, and the context as
/// run facts. The testbox is this machine's when context.host_name is its
/// hostname, else {host_name, "", num_cpus}. Throws UsageError, storing
/// nothing, when a metric is already recorded for workload gbench with another
/// unit or direction (the fix: --time-unit or --counter).
/// Idempotent (docs/data.md "Importing twice"): the run is stored with its
/// identity (the report's content, report_digest) and a digest of what is
/// stored (labels, descriptors, samples). A report imported before with the
/// same digest stores nothing (already_imported); with another digest
/// (other --variant, --build, --job, --kernel, --time-unit or --counter) it
/// is refused with UsageError naming the stored run.
GbenchImportResult import_gbench(ResultsStore& store, const GbenchReport& report,
                                 const GbenchImportOptions& options);

}  // namespace nightjar
