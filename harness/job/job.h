// Job files and matrix expansion.
//
// A job file is YAML naming one workload and its parameters; a parameter whose
// value is a list is an axis, and the matrix is the cartesian product of the
// axes (docs/reference.md "Vocabulary"):
//
//   workload: pft
//   description: page faults, threads vs processes
//   iterations: 30
//   warmup: 1
//   variant: vanilla
//   params:
//     clients: [1, 2, 4]
//     size: 20%mem
//     mode: [threads, processes]
//   cgroup: {depth: 3, top: {memory.min: 64M}}   # harness/job/yaml_parse.h
//   variants:              # named knob sets (harness/job/variants.h)
//     thp-never: {sysfs: {/sys/kernel/mm/transparent_hugepage/enabled: never}}
//   vm: {cgroup2_options: memory_recursiveprot}   # the guest's cgroup2 (--kernel)
//
// load_job() checks the file's shape; expand_matrix() parses every value
// against the workload's ParamDescriptors, fills defaults, applies --set
// overrides and validates each cell. Every error is a UsageError (exit 2) of
// the form `file:line: field: what is wrong; what to write instead`.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/job/variants.h"
#include "results/model/params.h"
#include "workloads/workload.h"

namespace nightjar {

/// One parameter value as written in a job file, with where it was written.
struct JobValue {
  std::string text;  ///< the scalar exactly as YAML gives it ("10K", "threads")
  int line = 0;      ///< 1-based line of the value in the job file; 0 = unknown
};

/// A job file after its shape has been checked (values are still text; see
/// expand_matrix for their parsing).
struct JobFile {
  std::string path;         ///< the path as given on the command line
  std::string name;         ///< file stem: "pft-quick" for jobs/pft-quick.yaml
  std::string workload;     ///< registry name of the workload (known to exist)
  int workload_line = 0;    ///< 1-based line of the `workload:` key
  std::string description;  ///< free text; "" when absent
  std::string variant;      ///< default variant label; "" when absent (runner uses "default")
  int iterations = 5;       ///< measured iterations per cell; >= 1, default 5
  int warmup = 1;           ///< untimed warm-up iterations per cell; >= 0, default 1
  /// `min_effect:` (docs/jobs.md): the minimum effect, percent, that counts
  /// as a change for this job's metrics, by metric name; "" = every metric
  /// without its own. Empty: compare's --min-effect.
  std::map<std::string, double> min_effect;
  /// Parameter name -> values in the order written: a scalar gives one value
  /// (a fixed parameter), a list gives N (an axis).
  std::map<std::string, std::vector<JobValue>> params;
  /// Parameter name -> 1-based line of its key under `params:`. Used for
  /// errors about the parameter itself (an unknown name); may be empty for a
  /// JobFile built in code, in which case the first value's line is used.
  std::map<std::string, int> param_lines;
  CgroupSpec cgroup;    ///< the `cgroup:` section, parsed; disabled when absent
  int cgroup_line = 0;  ///< 1-based line of the `cgroup:` key; 0 when absent
  /// The `variants:` section in the order written (harness/job/variants.h);
  /// empty when absent. `variant:` then names the default selection.
  std::vector<VariantSpec> variants;
  int variants_line = 0;  ///< 1-based line of the `variants:` key; 0 when absent
  /// `vm: {cgroup2_options: OPTS}` (docs/jobs.md, docs/qemu.md): the mount
  /// options of the cgroup2 of the qemu guest this job runs in with
  /// `--kernel` (a comma list checked by cgroup2_options_problem; "" = the
  /// kernel's defaults). nullopt: not given, the guest mounts with
  /// kDefaultCgroup2Options. `run --vm-cgroup-options` overrides it; without
  /// --kernel it is not used.
  std::optional<std::string> vm_cgroup2_options;
  int vm_line = 0;  ///< 1-based line of the `vm:` key; 0 when absent
  /// `monitors:` (docs/monitors.md): the monitors recorded per measured
  /// iteration, names of monitor_catalog() (workloads/sys/monitor_set.h).
  /// nullopt: not given, default_monitors() are recorded.
  std::optional<std::vector<std::string>> monitors;
};

/// The monitors `job` records: its `monitors:`, else default_monitors().
std::vector<std::string> job_monitors(const JobFile& job);

/// The cgroup2 mount options of a qemu guest when neither the job (`vm:
/// cgroup2_options`) nor `--vm-cgroup-options` names any.
inline constexpr const char* kDefaultCgroup2Options = "memory_recursiveprot";

/// The cgroup2 mount options nightjar accepts (`vm: cgroup2_options`,
/// `--vm-cgroup-options`): those of Documentation/admin-guide/cgroup-v2.rst
/// "Mounting" as of Linux 6.12. A kernel older than an option refuses it in
/// the guest, which then mounts cgroup2 without options and says so (the
/// runs get a warning: docs/qemu.md).
inline constexpr const char* kCgroup2MountOptions[] = {"nsdelegate",
                                                       "favordynmods",
                                                       "memory_localevents",
                                                       "memory_recursiveprot",
                                                       "memory_hugetlb_accounting",
                                                       "pids_localevents"};

/// Why `options` cannot be the guest's cgroup2 mount options, or "" when it
/// can: a comma list of kCgroup2MountOptions, each at most once, no empty
/// item; "" itself (the kernel's defaults) is fine. For example "'memory_
/// recursivprot' is not a cgroup2 mount option (did you mean
/// 'memory_recursiveprot'?); write a comma list of nsdelegate, ... or \"\"
/// for the kernel's defaults".
std::string cgroup2_options_problem(std::string_view options);

/// The largest job file load_job reads, bytes (1 MiB; docs/jobs.md "Errors").
inline constexpr std::size_t kMaxJobFileBytes = std::size_t{1} << 20;
/// At most this many problems of one job file are reported at once.
inline constexpr std::size_t kMaxJobErrors = 20;

/// Reads and checks the job file at `path`: a regular file of at most
/// kMaxJobFileBytes (a directory, device or FIFO is refused at once), one
/// YAML document, YAML syntax, known top-level keys (workload, description,
/// params, iterations, warmup, variant, cgroup, variants, min_effect, vm,
/// monitors; keys
/// starting with `x-` are ignored, as anchor holders), value types, and that
/// the workload is registered. `<<:` merge keys are applied first (yaml-cpp
/// keeps `<<` as a plain key). Parameter names and values are checked later
/// by expand_matrix, which knows the workload's declarations.
/// Throws UsageError with `path:line: field: problem; fix`; several problems
/// (up to kMaxJobErrors) are reported together, one per line.
JobFile load_job(const std::string& path);

/// The checks of load_job on a job's text, read already: `source` is the
/// file's content (any bytes), `path` names it in messages and gives the
/// job's name (its stem). Touches no file; the fuzz target
/// fuzz/fuzz_job.cpp calls it on arbitrary bytes. Throws UsageError as
/// load_job does (except for the file checks: kind and size).
JobFile parse_job(const std::string& source, const std::string& path);

/// One `--set NAME=V1,V2` option: replaces the job's values of NAME (or adds
/// NAME as an axis when the job does not set it).
struct SetOverride {
  std::string key;                  ///< parameter name
  std::vector<std::string> values;  ///< one value = fixed, several = an axis
};

/// Parses the argument of one `--set` option: "clients=1,2" (also
/// "clients=[1, 2]"); blanks around names and values are ignored. Throws
/// UsageError naming --set when the name or a value is missing.
SetOverride parse_set(const std::string& arg);

/// Refuses a label given on the command line (--variant items, --build,
/// --context keys and values) that breaks the one label rule
/// (results/model/text.h label_problem): throws UsageError such as
/// "--build 'a\x0ab': holds a control character (byte 2); a label is 1 to 128
/// bytes of printable UTF-8 (docs/input.md "Labels")".
void require_label(std::string_view option, std::string_view value);

/// One value of a matrix axis: parsed, and where it was written (for errors).
struct MatrixValue {
  ParamValue value;
  /// Where a value came from: the job (its line), --set, or the workload's default.
  struct Origin {
    enum class Kind { job, set, fallback } kind = Kind::job;
    int line = 0;  ///< 1-based line in the job file (Kind::job), else 0
  } origin;
};

/// A job's matrix before any cell is built: every axis's values parsed and
/// checked once, and the number of cells they give, so that `nightjar run`
/// can refuse or confirm a large matrix before spending time or memory on it
/// (docs/jobs.md "Large matrices").
struct Matrix {
  std::vector<std::string> axis_names;         ///< sorted by name
  std::vector<std::vector<MatrixValue>> axes;  ///< parallel to axis_names, values in order given
  /// The product of the axes' lengths: the cells expand_cells() builds, or
  /// fewer when two values of an axis parse to the same cell (dropped).
  std::size_t cells = 1;
};

/// The first half of expand_matrix: the axes (the job's params, then
/// `overrides`, then the workload's defaults), every value parsed with
/// parse_param, and their product. Builds no cell: cheap for any matrix
/// (the sum of the axes' lengths, not their product). Throws UsageError as
/// expand_matrix does, and "path: params: the matrix has more than 1000000
/// cells" when the product is larger than that hard cap.
Matrix plan_matrix(const JobFile& job, const Workload& workload,
                   const std::vector<SetOverride>& overrides, const MachineFacts& machine);

/// The second half of expand_matrix: the cells of `matrix` (planned for
/// `job` and `workload`), each checked with workload.validate(cell, machine),
/// duplicates dropped. Polls SIGINT/SIGTERM every 1024 cells and throws
/// Interrupted (exit 130): a large matrix takes seconds to build.
std::vector<Cell> expand_cells(const Matrix& matrix, const JobFile& job, const Workload& workload,
                               const MachineFacts& machine);

/// Expands a job into its cells: expand_cells(plan_matrix(...)).
///
/// Axes are taken in sorted name order with the first axis varying slowest and
/// each axis's values in the order written; parameters the job does not set
/// get the workload's defaults; `overrides` (applied in order, a later one for
/// the same name winning) replace or add axes. Every value is parsed with
/// parse_param (so "10240" and "10K" give the same cell), every cell is checked
/// with workload.validate(cell, machine), and duplicate cells are dropped,
/// keeping the first.
///
/// Throws UsageError: "path:line: params.NAME: ..." for a value from the job
/// (line of the value), "--set NAME: ..." for a value from --set,
/// "path: params.NAME: ..." for a default or a missing required parameter; an
/// unknown parameter lists the workload's parameters.
std::vector<Cell> expand_matrix(const JobFile& job, const Workload& workload,
                                const std::vector<SetOverride>& overrides,
                                const MachineFacts& machine);

}  // namespace nightjar
