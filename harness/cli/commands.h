// Subcommands defined outside harness/cli.cpp, one file each, so that a new
// subcommand does not grow the dispatcher. Each `add_*_command` adds its
// subcommand (options, --help text) to the app and returns how to run it;
// cli.cpp runs the chosen one after parsing and maps any nightjar::Error it
// throws to its exit code (harness/exit_codes.h), like its own subcommands.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>

#include "results/model/exit_codes.h"
#include "results/stats/significance.h"
#include "results/store/store.h"

namespace nightjar {

/// A subcommand added to the app: `cmd` is set once parsing chose it; `run`
/// executes it and returns the exit code (errors are thrown, not returned).
struct Subcommand {
  CLI::App* cmd = nullptr;
  std::function<ExitCode()> run;
};

/// `nightjar report BASE NEW`: changelog, markdown and mmtests tables of a
/// comparison (harness/cli_report.cpp, results/report.h).
Subcommand add_report_command(CLI::App& app);
/// `nightjar export`: samples out as tidy CSV (harness/cli_data.cpp).
Subcommand add_export_command(CLI::App& app);
/// `nightjar import`: tidy CSV or Google Benchmark JSON in (harness/cli_data.cpp).
Subcommand add_import_command(CLI::App& app);
/// `nightjar plot`: scaling and history plots with gnuplot (harness/cli_plot.cpp).
Subcommand add_plot_command(CLI::App& app);

/// Opens (creating if needed) the results database named by --db (or the
/// default path, ResultsStore::resolve_path), saying on stderr which file it
/// is and how many stale runs were marked aborted. Throws EnvironmentError (4)
/// when the file cannot be used.
ResultsStore open_store(const std::string& db_flag);

/// Like open_store, for commands that only read: throws UsageError (2) naming
/// the path when no database exists there, instead of creating an empty one.
ResultsStore open_existing_store(const std::string& db_flag);

/// The significance options of --test, --alpha and --min-effect (compare,
/// check, report). Throws UsageError naming the flag when alpha is not in
/// (0, 1), the minimum effect is negative or not finite, or the test unknown.
stats::SignificanceOptions significance_options(const std::string& test, double alpha,
                                                double min_effect);

}  // namespace nightjar
