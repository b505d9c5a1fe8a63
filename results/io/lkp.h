// LKP (Intel's Linux Kernel Performance tests, 0-day) result trees into the
// results store: `nightjar import --format lkp DIR...` (docs/data.md "LKP
// import"). A tree is a result directory: its job.yaml (read by
// harness/job/lkp_job.h, the YAML layer, into an LkpJob) and its values,
// stats.json (one LKP run) or matrix.json (one column per LKP run).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "results/model/declarations.h"
#include "results/model/metric.h"
#include "results/model/params.h"
#include "results/store/store.h"

namespace nightjar {

/// The largest stats.json or matrix.json read (a run's matrix.json holds
/// every monitor's time series: a few MiB).
inline constexpr std::uintmax_t kMaxLkpFileBytes = 64ull << 20;

/// What nightjar keeps of an LKP job.yaml (the atomic job LKP ran, with the
/// keys its scheduler added). Plain data; harness/job/lkp_job.h fills it.
struct LkpJob {
  std::string source;      ///< the job.yaml path, for messages
  std::string testcase;    ///< `testcase` (else `suite`): the workload, e.g. "netperf"
  std::string job_origin;  ///< stem of `job_origin` ("netperf" for netperf.yaml), or ""
  std::string testbox;     ///< `testbox`, e.g. "lkp-skl-fpga01"
  unsigned nr_cpu = 0;     ///< `nr_cpu`, 0 when absent
  std::string commit;      ///< `commit`: the kernel's git commit, or ""
  std::string kernel;      ///< `kernel`: the path of the booted image (.../vmlinuz-RELEASE), or ""
  std::string rootfs, kconfig, compiler;  ///< `rootfs`, `kconfig`, `compiler`, or ""
  /// The cell: the testcase's own mapping (`netperf: {test: TCP_STREAM}` gives
  /// test) and the top-level run keys of kLkpRunKeys, as text.
  std::map<std::string, std::string> params;
};

/// Top-level job.yaml keys that are cell parameters (they name the atomic
/// job in LKP's result path, beside the testcase's own mapping).
inline constexpr std::string_view kLkpRunKeys[] = {"runtime", "nr_threads", "nr_task",
                                                   "ip",      "iterations", "nr_ssd"};

/// One LKP result directory, parsed and checked.
struct LkpTree {
  std::string dir;                        ///< as given on the command line
  LkpJob job;                             ///< its job.yaml
  std::string values_file;                ///< DIR/stats.json, or DIR/matrix.json
  bool matrix = false;                    ///< values from matrix.json: iteration k is LKP run k
  int iterations = 0;                     ///< the highest iteration with a sample
  std::vector<SampleRow> samples;         ///< by key order, then iteration
  std::vector<MetricDescriptor> metrics;  ///< metrics of the direction table with samples
  std::vector<std::string> unknown;       ///< metrics with samples but no direction
  std::vector<std::string> warnings;      ///< values left out, and why
  /// Set by lkp_tree_as_nightjar: job.testcase is then the nightjar workload,
  /// samples and metrics carry its metric names, and `cell` is its cell.
  bool as_nightjar = false;
  /// as_nightjar: every parameter of the workload (canonical text; number in
  /// base units, 0 when relative to a testbox figure LKP does not record).
  std::map<std::string, ParamValue> cell;
  /// as_nightjar: what selected the workload ("netperf test=TCP_SENDFILE").
  std::string lkp_test;
};

/// The descriptor of LKP metric `name` from the direction table of
/// docs/data.md "LKP import" (the entries nightjar needs of LKP's
/// etc/index-perf-all.yaml, where 1 means higher is better and -1 lower,
/// with the unit LKP's name ends in), or nullopt for a metric the table
/// does not name.
std::optional<MetricDescriptor> lkp_metric(std::string_view name);

/// Parses the values of a tree: `text` is a stats.json (matrix = false: a
/// number is one sample, an array one sample per element, in order) or a
/// result root's matrix.json (matrix = true: every array has one value per
/// LKP run; column k is iteration k+1; `stats_source`, LKP's list of the
/// runs' paths, is checked for length and otherwise skipped). null (a
/// non-finite number) and a value impossible for its metric (a rate <= 0)
/// are left out with a warning. Throws UsageError naming `source` and the
/// key: not JSON (a truncated file), not an object, an array of another
/// length than the first (ragged matrix), a string where a number belongs,
/// or no value at all.
LkpTree parse_lkp_values(std::string_view text, const std::string& source, bool matrix);

/// Where the job.yaml of result directory `dir` is: DIR/job.yaml, else
/// DIR/N/job.yaml of the lowest numbered run directory N (a result root's
/// runs share one atomic job). Throws UsageError when there is none.
std::string lkp_job_path(const std::string& dir);

/// Reads the values of `dir` (DIR/stats.json, else DIR/matrix.json, each a
/// regular file of at most kMaxLkpFileBytes) with parse_lkp_values and
/// attaches `job`. Throws UsageError when the directory has neither file.
LkpTree read_lkp_tree(const std::string& dir, const LkpJob& job);

/// `import --format lkp --as-nightjar`: rewrites `tree` as a run of the
/// nightjar workload whose LKP table (WorkloadDeclaration::lkp,
/// results/model/lkp_mapping.h) names its testcase and `test`: the workload's
/// cell (each LKP key by its rule, the table's fixed values, the workload's
/// defaults for the rest, parsed by the workload's descriptors with the
/// job's nr_cpu), its metric names and descriptors, and a warning naming the
/// LKP metrics it has no metric for (left out). A mapped value impossible
/// for the workload's metric (a rate <= 0) is left out with a warning.
/// Throws UsageError naming the job.yaml or values file, the key, and the
/// fix (import without --as-nightjar): a testcase/test no workload maps, an
/// LKP key the table does not name, a value the parameter refuses, or no
/// mapped metric with a value. Runs before the database is opened.
LkpTree lkp_tree_as_nightjar(LkpTree tree, const WorkloadCatalog& catalog);

/// Labels of the runs an LKP import stores.
struct LkpImportOptions {
  std::string variant = "lkp";  ///< --variant
  std::string job;     ///< --job; "" : the workload of an as_nightjar tree, else job_origin's stem,
                       ///< else the testcase
  std::string build;   ///< --build; "" : the job's commit
  std::string kernel;  ///< --kernel; "" : the release of the job's kernel image
};

/// What an LKP import stored.
struct LkpImportResult {
  std::vector<std::int64_t> run_ids;  ///< new runs, in tree order
  std::size_t samples = 0;            ///< samples stored
  /// Trees stored before with the same labels and samples: dir -> run id.
  std::vector<std::pair<std::string, std::int64_t>> already_stored;
  std::vector<std::string> notes;  ///< for stderr: unknown metrics, values left out
};

/// Stores each tree as one complete run of workload `job.testcase`, in one
/// transaction: cell parameters from the job, testbox {testbox, nr_cpu},
/// kernel release from --kernel or the job's image name (vmlinuz-RELEASE),
/// build label from --build or the job's commit, metric descriptors from
/// the direction table (metrics it does not name are stored without a
/// descriptor, with a note), and the facts import.format = lkp,
/// import.file, lkp.commit, lkp.rootfs, lkp.kconfig, lkp.compiler.
/// Idempotent (docs/data.md "Importing twice"): a tree's identity is its
/// content (testbox, commit, cell, samples); imported again with the same
/// labels it is skipped, with other labels refused (UsageError naming the
/// stored run), and a metric recorded before with another unit or direction
/// is refused; either way nothing is stored.
LkpImportResult import_lkp(ResultsStore& store, const std::vector<LkpTree>& trees,
                           const LkpImportOptions& options);

}  // namespace nightjar
