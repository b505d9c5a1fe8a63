// The per-cell summary printed after `nightjar run` and by `nightjar show
// --summary`: for every run and metric, n (of the valid samples, with the
// invalid ones counted beside it: "4 (1 invalid)"), the metric's own mean
// (Hmean for rates, Amean for times), CoeffVar, Min and Max. A renderer: it
// prints the records results/compare/run_records.h reads (the statistics are
// computed there, with results/stats) and computes nothing.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "results/compare/run_records.h"
#include "results/store/runs.h"

namespace nightjar {

/// The summary table of `runs` (summarize_runs(); runs without samples show
/// their status and reason instead). Ends with a '\n'.
std::string render_run_summary(const std::vector<RunSummary>& runs);

/// The invalid samples among `samples` (one run's, SampleSet::all, as
/// ResultsStore::samples returns them) for `show --run`: a heading line,
/// then one line per iteration and reason, "  iteration 4: throughput=0:
/// throughput = 0 ops/s: a rate (Hmean) must be positive"; "" when there
/// are none.
std::string render_invalid_samples(const std::vector<SampleRow>& samples);

/// A context fact shown as a column of `nightjar show`: its key, and the
/// value of each run that has it.
struct FactColumn {
  std::string key;
  std::map<std::int64_t, std::string> values;
};

/// The `nightjar show` table of runs: id, job, cell, variant, build, kernel,
/// then one column per fact ("-" for a run without it), status,
/// samples (ok/planned, failed), started, reason.
std::string render_run_list(const std::vector<RunRow>& runs,
                            const std::vector<FactColumn>& facts = {});

}  // namespace nightjar
