// Side selectors of `nightjar compare` / `nightjar check` and the loading of a
// side's samples from the results store (docs/compare.md "Selectors").
//
// A selector names the runs of one side of a comparison:
//   vanilla                         a bare word: the variant name
//   build=v6.18                     key=value; keys: build, kernel (uname -r),
//   kernel=6.1.0-13-amd64,variant=a   variant, run (a run id), testbox (hostname),
//   run=42                            job, workload; combined with commas (AND)
// `--job` / `--workload` narrow both sides. Values cannot contain a comma.
//
// Which samples count: the valid ones. A sample stored invalid (the workload
// or the runner decided it is not a measurement: docs/compare.md "Invalid
// samples") is left out and counted per cell and metric
// (CellSamples::invalid); SideQuery::include_invalid pools it too.
//
// Which runs give samples: every matching run whose status is `complete` or
// `aborted` (an aborted run's iterations were measured in full and committed
// one by one; they are as good as a complete run's). `running` runs (still
// being measured, or by another process) and `failed`/`skipped` runs (no
// samples) are listed as excluded, never pooled.
//
// A side's samples are grouped by cell: (workload, job, canonical cell id).
// Several runs of one cell on one side are pooled: their samples form one
// list, sorted ascending (every statistic nightjar computes is order-free, and
// sorted input lets the statistics module skip its own sorts). Parameters named in `ignore_params`
// are left out of the cell id used for matching, so cells that differ only in them are the same
// cell (and pooled).
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "results/model/declarations.h"
#include "results/model/metric.h"
#include "results/store/store.h"

namespace nightjar {

/// A parsed side selector. Empty fields match everything; every set field must
/// match (AND).
struct Selector {
  std::string text = {};  ///< as the user wrote it (used as the side's name in tables)
  std::optional<std::int64_t> run_id = {};
  std::string variant = {}, build = {}, kernel = {}, testbox = {}, job = {}, workload = {};
  /// Only these runs (any of them); empty: no such condition. Not written in
  /// a selector's text: `nightjar run --until-decided --runs N` sets it to
  /// the runs of one variant it has measured so far (harness/run/until_decided.h).
  std::vector<std::int64_t> run_ids = {};
};

/// Parses a selector (see the file comment). Throws UsageError (exit 2) naming
/// the selector and saying what to write for: an empty selector or item, an
/// unknown key, an empty value, a key given twice, or a run id that is not a
/// positive integer.
Selector parse_selector(std::string_view text);
/// parse_selector of each of `texts`, in order: what a command does once with
/// its selector arguments, before opening the database, and then passes down.
std::vector<Selector> parse_selectors(const std::vector<std::string>& texts);

/// Refuses (UsageError, exit 2, naming both) two sides that select the same
/// runs (the same keys and values, however written): `compare a a` would
/// compare a side with itself and always say unchanged.
void check_distinct_sides(const std::vector<Selector>& sides);

/// Narrowing and matching options that apply to every side.
struct SideQuery {
  std::string job;       ///< --job: only runs of this job ("" = any)
  std::string workload;  ///< --workload: only runs of this workload ("" = any)
  /// --ignore-param: parameters left out of the cell identity when matching.
  std::vector<std::string> ignore_params;
  /// The workloads' declarations (the declared order of metrics, parameter
  /// types); nullptr: none is known, metrics come in name order.
  const WorkloadCatalog* declared = nullptr;
  /// --include-invalid: pool the invalid samples with the valid ones, for
  /// inspection (they are counted either way; docs/compare.md "Invalid samples").
  bool include_invalid = false;
  /// Use `running` runs too (SideFilter::include_running): for `nightjar run
  /// --until-decided`, which compares its own runs while they are measured.
  bool include_running = false;
};

/// Identity of a cell across sides.
struct CellKey {
  std::string workload, job;
  std::string cell;  ///< canonical cell id without the ignored parameters
  friend auto operator<=>(const CellKey&, const CellKey&) = default;
  friend bool operator==(const CellKey&, const CellKey&) = default;
};

/// The pooled samples of one cell on one side.
struct CellSamples {
  std::int64_t first_run = 0;  ///< smallest run id (orders cells as they were run)
  /// The stored cell id (run.cell) of the first run pooled here: the key of
  /// its calibration and history, which --ignore-param does not change.
  /// Empty for a cell built by hand (then CellKey::cell is used).
  std::string stored_cell;
  std::vector<std::int64_t> run_ids;  ///< runs pooled, ascending
  int aborted_runs = 0;               ///< how many of them ended aborted
  /// The cell's parameters (canonical text), sorted by name, without the
  /// ignored ones and without unset (empty) text parameters.
  std::vector<std::pair<std::string, std::string>> params;
  std::map<std::string, std::vector<double>> metrics;  ///< metric -> samples, sorted ascending
  /// metric -> its samples split by run (run order; runs without the metric
  /// left out): the units of docs/statistics.md "Runs as the unit". Empty
  /// for a cell built by hand; then `metrics` counts as one run.
  std::map<std::string, std::vector<std::vector<double>>> metric_runs;
  std::map<std::string, std::vector<double>>
      monitors;  ///< monitor name -> deltas, sorted ascending
  /// metric -> its invalid samples, left out of `metrics` (pooled in them
  /// with SideQuery::include_invalid); InvalidSamples is the store's record
  /// (results/store/side_query.h): count, and the first one's reason, run
  /// and iteration.
  std::map<std::string, InvalidSamples> invalid;
};

/// One side of a comparison, loaded.
struct LoadedSide {
  Selector selector;
  std::vector<std::int64_t> run_ids;  ///< runs whose samples are used, ascending
  /// Matching runs not used (running, failed, skipped); ExcludedRun is the
  /// store's record (results/store/side_query.h).
  std::vector<ExcludedRun> excluded;
  std::set<std::string> variants, builds, kernels, testboxes;  ///< of run_ids
  /// Of run_ids, by run_accelerator() and run_guest_size(): "tcg", "kvm" or
  /// "" (not in qemu); "2 CPUs, 1024 MiB" or "" (not in qemu).
  std::set<std::string> accelerators, guest_sizes;
  /// Of run_ids, those measured under qemu TCG (run_accelerator() "tcg"):
  /// the rows and plot points built from them carry kEmulationTag. load_side
  /// fills it only for a side whose runs mix "tcg" with other accelerators
  /// (it reads a side's distinct vm.* fact sets, not each run's facts: issue
  /// 19). Empty otherwise, or when the side was built by hand: then
  /// runs_emulated() counts every run of a side whose accelerators hold "tcg".
  std::set<std::int64_t> emulated_runs;
  std::map<CellKey, CellSamples> cells;
  /// Every parameter name of the stored cells, those --ignore-param left out
  /// of `cells` included (check_ignored_params).
  std::set<std::string> param_names;
};

/// Refuses an --ignore-param name that no cell of any side has (a typo
/// would otherwise leave the cells apart and say nothing): throws
/// UsageError naming the flag, the name and the parameters the sides have.
void check_ignored_params(const std::vector<LoadedSide>& sides,
                          const std::vector<std::string>& ignored);

/// Some of `runs` (of `side`) were measured under qemu TCG: by
/// LoadedSide::emulated_runs, or, when that is empty, by the side's
/// accelerators. The one test of the compare rows and plot points.
inline bool runs_emulated(const LoadedSide& side, const std::vector<std::int64_t>& runs) {
  if (side.emulated_runs.empty()) return side.accelerators.count("tcg") > 0;
  for (const auto id : runs)
    if (side.emulated_runs.count(id)) return true;
  return false;
}

/// The mark every renderer shows for figures measured under qemu's TCG
/// (software emulation): in legends, warnings and plot titles.
inline constexpr const char* kEmulationMark = "TCG: measures emulation";

/// The per-row (and per-point) tag of figures measured under qemu TCG, the
/// same in every layout (plain ASCII, for changelogs); each layout's legend
/// (the emulation warning of Comparison::warnings, a report's legend, a
/// plot's key and footnote) explains it with kEmulationMark.
inline constexpr const char* kEmulationTag = "[TCG]";

/// The accelerator a run was measured under, from its context: the run fact
/// vm.accelerator that `nightjar run --kernel` stores (harness/vm/qemu.cpp;
/// vm.accel in databases written before it), "tcg" or "kvm"; "" for a run
/// not in a qemu guest. The one place that reads it: renderers ask this.
std::string run_accelerator(const std::map<std::string, std::string>& context);

/// The guest size of a run from its context (vm.cpus, vm.memory_mb):
/// "2 CPUs, 1024 MiB"; "" for a run not in a qemu guest.
std::string run_guest_size(const std::map<std::string, std::string>& context);

/// Loads the samples and monitor deltas of every run matching `selector` and
/// `query`. `role` ("BASE", "NEW") names the side in errors. Throws
/// UsageError (exit 2) when no run matches at all, naming the selector and
/// listing what the database holds (variants, builds, kernels, jobs); throws
/// Error(ExitCode::inconclusive) when runs match but none has samples (all
/// skipped, failed or running), listing them.
LoadedSide load_side(const ResultsStore& store, const Selector& selector, const SideQuery& query,
                     const std::string& role);

/// What the database holds, for error messages: "variants a, b; builds v1;
/// kernels 6.1.0-13-amd64; jobs fake (runs 1-12)", or that it holds no runs.
std::string describe_stored_runs(const SampleReader& store);

/// The metric descriptors of each workload, in the workload's declared order
/// (the order of `declared` when it knows the workload, else name order),
/// as recorded in the store's metric table.
using MetricCatalog = std::map<std::string, std::vector<MetricDescriptor>>;
MetricCatalog load_metric_catalog(const ResultsStore& store, const std::set<std::string>& workloads,
                                  const WorkloadCatalog& declared);

}  // namespace nightjar
