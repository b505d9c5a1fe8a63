// Tidy sample CSV: `nightjar export --format csv` writes it and `nightjar
// import FILE.csv` reads it back (docs/data.md "CSV"). One row per sample:
//
//   run,job,workload,param.NAME...,variant,build,kernel,testbox,started_at,
//   iteration,metric,unit,direction,mean,value
//
//   run        the run id (`nightjar show`); rows of one run repeat its
//              job, workload, parameters, variant, build, kernel and testbox
//   job        job name (the job file's stem)
//   workload   workload name
//   param.NAME one column per cell parameter found in the exported runs,
//              sorted by name; the parameter's canonical text ("10K", "60s"),
//              empty when the run has no such parameter (another workload)
//   variant, build   labels of the run (build may be empty)
//   kernel     kernel release (`uname -r`), testbox: hostname
//   started_at when the run started, ISO 8601 UTC; optional on import (the
//              import time without it; an offset is converted to UTC)
//   iteration  1-based measured iteration
//   metric     metric name; unit, direction (higher/lower) and mean
//              (hmean/amean/gmean) are its descriptor as recorded for the
//              workload (all three empty for a metric without one)
//   value      the sample in the metric's unit: the shortest decimal text that
//              reads back as the same double
//   invalid    optional, last (`export --include-invalid` writes it): why the
//              sample is not a measurement; empty for a valid one. Without it
//              every sample must be possible: a value impossible_value()
//              refuses (a rate <= 0, a time <= 0) is refused naming its line
//

// RFC 4180 quoting (results/model/text.h csv_field), "\n" line ends, no
// trailing blanks. Rows are ordered by run id, iteration, metric (byte order),
// so that export -> import -> export gives the same bytes. The `mean` column
// is optional on import (derived from the direction when absent); columns may
// come in any order.
//
// Not in the file: monitor deltas, run context, flags, failed iterations,
// run status and end dates; imported runs are stored complete (a bundle of
// format 2 carries the rest beside the file: results/io/bundle_runs.h). Each carries
// its identity (testbox, file run id, started_at) so that importing it again
// adds nothing (docs/data.md "Importing twice").
#pragma once

#include <cstdint>
#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include "results/compare/selector.h"
#include "results/model/declarations.h"
#include "results/model/metric.h"
#include "results/store/store.h"

namespace nightjar {

/// The runs `nightjar export` writes: those matching any of `selectors`
/// (parsed by parse_selector, results/compare/selector.h: `vanilla`,
/// `build=v6.18,kernel=...`, `run=42`; none = every run), narrowed by `job`
/// and `workload` ("" = any), ascending ids. Throws UsageError for a
/// selector that cannot match (it names another job or workload) and for one
/// that matches no run (listing what the database holds).
std::vector<std::int64_t> select_export_runs(const ResultsStore& store,
                                             const std::vector<Selector>& selectors,
                                             const std::string& job, const std::string& workload);

/// What an export wrote.
struct CsvExportStats {
  std::size_t runs = 0;     ///< runs with at least one sample row
  std::size_t samples = 0;  ///< rows after the header
  /// Invalid samples: left out (or, include_invalid, written with their reason).
  std::size_t invalid = 0;
};

/// Writes the samples of `run_ids` (ascending) as tidy CSV to `out`: the
/// header, then one row per sample, ordered by run id, iteration, metric.
/// The valid samples only; `include_invalid` (`export --include-invalid`):
/// every sample, and the `invalid` column last, holding the reason of an
/// invalid one ("" for a valid one), so that an import stores them invalid
/// again. Runs without (such) samples write no row. Streams: memory does not
/// grow with the number of samples.
CsvExportStats write_samples_csv(const ResultsStore& store,
                                 const std::vector<std::int64_t>& run_ids, std::ostream& out,
                                 bool include_invalid = false);

/// One run as a CSV file describes it.
struct CsvRun {
  std::int64_t id = 0;  ///< the file's run id
  int line = 0;         ///< line of its first row
  std::string job, workload, variant, build, kernel, testbox;
  /// When the run started, ISO 8601 UTC ("" when the file has no started_at)
  std::string started_at;
  std::map<std::string, std::string> params;  ///< non-empty param.NAME fields
  std::vector<SampleRow> samples;             ///< sorted by iteration, metric
};

/// A metric descriptor as a CSV file gives it (its first row).
struct CsvMetric {
  std::string workload;
  MetricDescriptor descriptor;  ///< mean derived from the direction when the file has none
  bool declared = false;        ///< unit/direction given (false: all empty, no descriptor)
  bool mean_given = false;      ///< the file's `mean` column gave the mean
  int line = 0;
};

/// A parsed and validated tidy CSV file.
struct SamplesCsv {
  std::string source;              ///< file name used in messages
  std::vector<CsvRun> runs;        ///< ascending file run id
  std::vector<CsvMetric> metrics;  ///< one per (workload, metric), in order of first row
  std::size_t rows = 0;            ///< sample rows
};

/// The largest CSV file `nightjar import` reads, bytes (1 GiB; docs/input.md
/// "Input files"). The file is streamed; memory holds its parsed samples
/// (about 150 bytes each: 146 MiB for 1M rows), so the cap also bounds the
/// memory of an import.
inline constexpr std::uintmax_t kMaxCsvImportBytes = std::uintmax_t{1} << 30;

/// Reads tidy CSV from `in` (fast-cpp-csv-parser's line reader and RFC 4180
/// field splitting; a quoted field may span lines). `source` names the file
/// in messages. Validates everything that does not need the database and
/// throws UsageError "SOURCE:LINE: what is wrong; what to write" for: a
/// missing, unknown or repeated header column; a row whose column count
/// differs from the header's; an unclosed quote; a run or iteration that is
/// not a positive integer; a value that is not a finite number; a direction
/// other than higher/lower; a mean other than hmean/amean/gmean; an empty
/// job, workload, variant or metric; rows of one run that disagree on the
/// run's job, workload, parameters, variant, build, kernel or testbox; a
/// metric whose unit, direction or mean differs between rows; a sample given
/// twice. A header-only file gives no runs.
/// `declared` gives the mean of a metric whose row names none (the declared
/// one; else Hmean for higher-is-better, Amean for lower), and validates the
/// parameters of the workloads it knows: a param.NAME the workload does not
/// declare, or a value its descriptor refuses (parse_param with `machine`
/// for relative values such as 20%mem), is refused naming the line and
/// column. Parameters of workloads it does not know (other tools') pass.
SamplesCsv parse_samples_csv(std::istream& in, const std::string& source,
                             const WorkloadCatalog& declared, const MachineFacts& machine);

/// What an import stored.
struct CsvImportResult {
  std::vector<std::int64_t> run_ids;  ///< ids of the runs stored, in file order
  /// File run id -> the id it is stored under: the runs stored now and
  /// those found stored before (already_stored).
  std::map<std::int64_t, std::int64_t> stored_as;
  std::size_t samples = 0;         ///< samples stored
  std::size_t already_stored = 0;  ///< runs skipped: stored before with the same samples
  std::vector<std::string> notes;  ///< for stderr: renumbered and skipped runs
};

/// Stores `csv` in ONE transaction: nothing is stored when anything fails.
/// A run imported before (fact import.identity: testbox, file run id and
/// started_at, else the labels and cell) with the same digest is skipped as
/// already stored; with another digest (the file changed) the import throws
/// UsageError naming the line and the stored run. A run whose id is used by
/// a run with the same job, workload, parameters, labels and samples (a run
/// measured here, exported and imported back) is skipped too: importing a
/// file twice adds nothing. The other runs keep their ids when the database uses none
/// of them (so a round trip into a new database gives the same export);
/// when one is used by another run, all of them are stored under new ids, in
/// file order (noted). Metric
/// descriptors not yet recorded are added; throws UsageError naming the
/// line when a recorded descriptor has another unit or direction (or mean,
/// when the file gives one).
/// A parameter of a workload `declared` knows is stored with its number in
/// base units, parsed as the workload parses it (relative values with
/// `machine`); other parameters with the text as a plain number, else 0.
CsvImportResult import_samples_csv(ResultsStore& store, const SamplesCsv& csv,
                                   const WorkloadCatalog& declared, const MachineFacts& machine);

/// What the source of a file knows about one of its runs beyond the CSV's
/// kernel and testbox columns (a LAVA guest's runs.json, harness/lava; a
/// bundle's runs.json, results/io/bundle_runs.h).
struct CsvRunOrigin {
  /// The exact kernel identity (release must equal the file's); a
  /// config_text is stored once per config hash (table kernel_config).
  KernelIdentity kernel;
  Testbox testbox;                             ///< the exact testbox (hostname replaces the file's)
  std::map<std::string, std::string> context;  ///< run context facts
  std::string job_path;  ///< the job file's path where the run was made ("" = unknown)
  int iterations = 0;    ///< iterations planned; 0: the highest iteration of the file's rows
  /// Status, iteration rows, monitor deltas and flags (defaults: a plain import's).
  ImportedRunDetail detail;
};

/// How import_samples_csv stores a file whose runs come from somewhere the
/// file does not name (harness/lava: one LAVA job's guest).
struct CsvImportOptions {
  /// Put before every run's import identity ("lava job=URL/42 "): runs of
  /// different sources whose testbox, run id and start coincide (fresh guest
  /// databases) are told apart, and the same source imported again is still
  /// found. "" = the file's identity alone (`nightjar import`).
  std::string identity_scope;
  /// Facts added to every imported run's context (after the origin's).
  std::map<std::string, std::string> context;
  /// File run id -> what its source knows: stored with the exact kernel and
  /// testbox identity (not matched by name) and the context. Runs without an
  /// entry are stored as plain imports.
  std::map<std::int64_t, CsvRunOrigin> origins;
};

/// import_samples_csv with `options` (see CsvImportOptions); the same checks,
/// one transaction, and importing the same source twice adds nothing.
CsvImportResult import_samples_csv(ResultsStore& store, const SamplesCsv& csv,
                                   const WorkloadCatalog& declared, const MachineFacts& machine,
                                   const CsvImportOptions& options);

}  // namespace nightjar
