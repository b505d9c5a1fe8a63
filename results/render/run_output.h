// The outputs of `nightjar run` on stdout, by name (`run --format NAME`):
// "text" is the per-cell summary (results/render/run_summary.h), "netperf"
// the netperf result blocks of the runs whose workload has netperf output
// (results/render/netperf.h; the workloads are those of the linked catalog,
// WorkloadCatalog::linked(), whose declarations carry a netperf hook). The
// CLI asks this table for the format it was given, so it names no
// workload's output; a new format is one row in run_output.cpp. Each row
// reads its records (results/compare/run_records.h) and renders them; it
// measures nothing.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "results/store/store.h"

namespace nightjar {

/// What a run-output renderer produced.
struct RunOutput {
  std::string text;                ///< for stdout, as the format defines it
  std::vector<std::string> notes;  ///< one line each (no '\n') for stderr: runs left out and why
};

/// One format of `nightjar run --format`.
struct RunOutputFormat {
  std::string_view name;  ///< the --format value: "text", "netperf"
  std::string_view doc;   ///< for --help: "per-cell summary"
  /// Renders the runs `run_ids` (ids of the store, in run order).
  RunOutput (*render)(const ResultsStore& store, const std::vector<std::int64_t>& run_ids);
};

/// Every run-output format; the first ("text") is the default.
const std::vector<RunOutputFormat>& run_output_formats();

/// The format named `name`, or nullptr.
const RunOutputFormat* find_run_output_format(std::string_view name);

/// The names of run_output_formats(), in order: the choices of --format.
std::vector<std::string> run_output_names();

/// The formats for a --help line: "text (per-cell summary) or netperf (one
/// netperf result block ...)", each name with its doc, the last after "or".
std::string run_output_choices_text();

}  // namespace nightjar
