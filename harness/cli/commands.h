// The subcommands of `nightjar`, one file each (harness/cli/cmd_*.cpp). Each
// `add_*_command` adds its subcommand (options, --help text) to the app and
// returns how to run it; harness/cli/cli.cpp runs the chosen one after
// parsing and maps any nightjar::Error it throws to its exit code
// (results/model/exit_codes.h).
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "harness/run/runner.h"
#include "results/model/exit_codes.h"
#include "results/stats/significance.h"
#include "results/store/store.h"

namespace nightjar {

/// A subcommand added to the app: `cmd` is set once parsing chose it; `run`
/// executes it and returns the exit code (errors are thrown, not returned).
struct Subcommand {
  CLI::App* cmd = nullptr;
  std::function<ExitCode()> run;
  /// Maps the process exit code of this subcommand, including the usage
  /// code (2) of a parse error inside it; applied when the parser saw the
  /// subcommand. Default: unchanged. `bisect` maps every code of `bisect
  /// step` that git bisect must not read as "bad" to 128.
  std::function<int(int)> map_exit = [](int rc) { return rc; };
};

/// `nightjar run`: jobs on this kernel, or in qemu guests (harness/cli/cmd_run.cpp).
Subcommand add_run_command(CLI::App& app);
/// `nightjar calibrate JOB [--pairs N]` (cmd_calibrate.cpp).
Subcommand add_calibrate_command(CLI::App& app);
/// `nightjar audit JOB [--pairs N] [--runs R] [--shift PCT]` (cmd_audit.cpp).
Subcommand add_audit_command(CLI::App& app);
/// `nightjar guest-run` (hidden): inside a qemu guest (harness/cli/cmd_run.cpp).
Subcommand add_guest_run_command(CLI::App& app);
/// `nightjar list`: workloads, parameters, metrics (harness/cli/cmd_show.cpp).
Subcommand add_list_command(CLI::App& app);
/// `nightjar show`: stored runs (harness/cli/cmd_show.cpp).
Subcommand add_show_command(CLI::App& app);
/// `nightjar env`: kernel, testbox and system facts (harness/cli/cmd_show.cpp).
Subcommand add_env_command(CLI::App& app);
/// `nightjar cleanup`: undo what killed nightjar processes left behind
/// (harness/cli/cmd_cleanup.cpp, workloads/sys/sweep.h).
Subcommand add_cleanup_command(CLI::App& app);
/// The "leftovers:" section of `nightjar env`: the objects that ended
/// nightjar processes left, as their journals record them, and the command
/// that removes them (harness/cli/cmd_cleanup.cpp). Changes nothing.
void print_leftovers(std::ostream& out);
/// `nightjar compare` (harness/cli/cmd_compare.cpp).
Subcommand add_compare_command(CLI::App& app);
/// `nightjar check`: the CI gate (harness/cli/cmd_compare.cpp).
Subcommand add_check_command(CLI::App& app);
/// `nightjar trend` (harness/cli/cmd_trend.cpp).
Subcommand add_trend_command(CLI::App& app);
/// `nightjar bisect run|step|log|resume` (harness/cli/cmd_bisect.cpp).
Subcommand add_bisect_command(CLI::App& app);

/// `nightjar report BASE NEW`: changelog, markdown and mmtests tables of a
/// comparison (harness/cli/cmd_report.cpp, results/render/report.h).
Subcommand add_report_command(CLI::App& app);
/// `nightjar export`: samples out as tidy CSV (harness/cli/cmd_data.cpp).
Subcommand add_export_command(CLI::App& app);
/// `nightjar import`: tidy CSV or Google Benchmark JSON in (harness/cli/cmd_data.cpp).
Subcommand add_import_command(CLI::App& app);
/// `nightjar plot`: scaling and history plots with gnuplot (harness/cli/cmd_plot.cpp).
Subcommand add_plot_command(CLI::App& app);
/// `nightjar publish`: a static HTML site of the nightly history
/// (harness/cli/cmd_publish.cpp, docs/publish.md).
Subcommand add_publish_command(CLI::App& app);
/// `nightjar lava jobs|run|submit|collect`: a job's kernel x testbox matrix
/// on a LAVA lab (harness/cli/cmd_lava.cpp, harness/lava/, docs/lava.md).
Subcommand add_lava_command(CLI::App& app);
/// `nightjar bundle`: a reproducer .tar.gz of a comparison
/// (harness/cli/cmd_bundle.cpp, docs/publish.md "Bundles").
Subcommand add_bundle_command(CLI::App& app);

/// Opens for writing (ResultsStore::Access::read_write: created if needed,
/// migrated, WAL) the results database named by --db (or the default path,
/// ResultsStore::resolve_path), saying on stderr which file it is and how
/// many stale runs were marked aborted. For run, import, calibrate, bisect.
/// Throws EnvironmentError (4) when the file cannot be used (a missing
/// directory other than the default one's, a foreign or unknown-version file).
ResultsStore open_store(const std::string& db_flag);

/// Opens read-only (ResultsStore::Access::read_only: never created,
/// migrated or switched to WAL) for the commands that only read: show,
/// compare, check, report, trend, plot, export. Throws UsageError (2)
/// naming the path when no database exists there (saying `nightjar run`
/// creates it), EnvironmentError (4) when it cannot be read.
ResultsStore open_existing_store(const std::string& db_flag);

/// Writes `text` to `path` through PATH.tmp and a rename, so that a failed
/// write leaves no half file. Throws EnvironmentError (4) naming the file
/// and `hint` (what to check, e.g. "check that -o names a writable
/// directory").
void write_file_replacing(const std::string& path, const std::string& text,
                          const std::string& hint);

/// CLI11 checks of a number option whose messages say what to write
/// (docs/input.md "Messages"); CLI11 puts the option's name first:
/// "--iterations: must be at least 1". A value that is not a decimal
/// number gives "must be a number, found 'x'" (echo_input). The check's
/// text in --help is "NUMBER >= 1", "NUMBER in 1..1000", "NUMBER > 0".
CLI::Validator at_least(double min);
/// As at_least: `min <= value <= max`, "must be from 1 to 1000".
CLI::Validator in_range(double min, double max);
/// As at_least: `value > min`, "must be greater than 0".
CLI::Validator greater_than(double min);
/// A text option that may not be given empty (`--variant ''`, an unset
/// shell variable): "is empty; " + `what_to_write`.
CLI::Validator not_empty(const std::string& what_to_write);

/// The significance options of --test, --alpha and --min-effect (compare,
/// check, report). Throws UsageError naming the flag when alpha is not in
/// (0, 1), the minimum effect is negative or not finite, or the test unknown.
stats::SignificanceOptions significance_options(const std::string& test, double alpha,
                                                double min_effect);

/// What `calibrate` and `audit` share: A/A runs of one job's cells.
struct PairedRunArgs {
  std::string job, variant, db;
  std::vector<std::string> sets;  ///< --set key=value[,value...]
  std::optional<int> iterations, warmup;
};

/// Adds the job argument and --variant, --iterations, --warmup, --set and
/// --db of PairedRunArgs to `cmd`; `what` names the command's purpose in the
/// --variant help ("calibrate", "audit").
void add_paired_run_options(CLI::App* cmd, PairedRunArgs& a, const std::string& what);

/// The runs of `calibrate` and `audit`, measured.
struct PairedRuns {
  ResultsStore store;  ///< the database of --db, open for writing
  RunOutcome outcome;  ///< RunOutcome::run_ids: the runs to load (not the label:
                       ///< two commands in one second share it)
  std::string build;   ///< the build label PREFIX-SECONDS
};

/// Every cell of `a.job` run `runs` times in rounds (so the runs of a cell
/// alternate A B A B ...) under the build label PREFIX-SECONDS (seconds
/// since the epoch): planned first (UsageError for a bad job or --set, and
/// whatever `check_plan` throws, before the database is opened or created),
/// then measured into the database of --db (open_store).
PairedRuns run_paired(const PairedRunArgs& a, int runs, const std::string& prefix,
                      const std::function<void(const std::vector<PlannedJob>&)>& check_plan = {});

/// The fact keys of --accept-env (compare, check, env --diff) as a set.
/// Throws UsageError naming the key and pointing at docs/environment.md
/// when one is not an environment fact (is_environment_fact): a misspelt
/// key would silence nothing.
std::set<std::string> accepted_env_keys(const std::vector<std::string>& keys);

}  // namespace nightjar
