// The `nightjar` command line: parse -> validated options -> dispatch, and the
// one place where errors become exit codes (results/model/exit_codes.h).
// Every subcommand is added by its own file (harness/cli/cmd_*.cpp) through
// harness/cli/commands.h and runs the same way.
#include "harness/cli/cli.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <optional>
#include <string_view>

#include "harness/cli/commands.h"
#include "results/compare/environment.h"
#include "results/model/exit_codes.h"
#include "results/model/text.h"
#include "results/store/store.h"

namespace nightjar {
namespace {

constexpr const char* kFooter =
    "Exit codes: 0 ok, 1 significant regression, 2 usage error, 3 inconclusive,\n"
    "4 environment/workload/database error, 5 check --strict-env: a confounder,\n"
    "125 bisect skip, 128 bisect abort, 130 interrupted.\n"
    "Database: --db PATH, else $NIGHTJAR_DB, else $XDG_DATA_HOME/nightjar/results.db,\n"
    "else ~/.local/share/nightjar/results.db. Only run, import, calibrate, audit and\n"
    "bisect write it (and create it); the other commands open it read-only and never\n"
    "create it. --db '' is refused (docs/results.md).";

// Runs the chosen subcommand; every nightjar::Error becomes its exit code.
int run_chosen(const std::vector<Subcommand>& commands) {
  try {
    for (const Subcommand& s : commands)
      if (*s.cmd) return to_int(s.run());
    return to_int(ExitCode::usage);
  } catch (const Error& e) {
    std::cerr << "nightjar: error: " << e.what() << "\n";
    return to_int(e.code());
  } catch (const std::exception& e) {
    if (auto full = disk_full_message(e)) {
      std::cerr << "nightjar: error: " << *full << "\n";
      return to_int(ExitCode::environment);
    }
    if (is_database_error(e))
      std::cerr << "nightjar: database error: " << database_error_message(e) << "\n";
    else
      std::cerr << "nightjar: error: " << e.what() << "\n";
    return to_int(ExitCode::environment);
  }
}

}  // namespace

ResultsStore open_store(const std::string& db_flag) {
  std::string path = ResultsStore::resolve_path(db_flag);
  std::cerr << "nightjar: database " << path << "\n";
  ResultsStore store(path, ResultsStore::Access::read_write);
  if (store.stale_runs_aborted())
    std::cerr << fmt::format(
        "nightjar: marked {} run(s) left 'running' by an ended process as aborted\n",
        store.stale_runs_aborted());
  return store;
}

namespace {

// A CLI11 check of a decimal number: `fails` says what is wrong with it or "".
CLI::Validator number_check(std::string description, std::function<std::string(double)> problem) {
  return CLI::Validator(
      [problem = std::move(problem)](std::string& text) -> std::string {
        const char* begin = text.c_str();
        char* end = nullptr;
        errno = 0;
        const double v = std::strtod(begin, &end);
        if (text.empty() || end == begin || *end != '\0' || errno == ERANGE || std::isnan(v))
          return fmt::format("must be a number, found '{}'", echo_input(text));
        return problem(v);
      },
      std::move(description));
}

}  // namespace

CLI::Validator at_least(double min) {
  return number_check(fmt::format("NUMBER >= {}", min), [min](double v) {
    return v >= min ? std::string() : fmt::format("must be at least {}", min);
  });
}

CLI::Validator in_range(double min, double max) {
  return number_check(fmt::format("NUMBER in {}..{}", min, max), [min, max](double v) {
    return v >= min && v <= max ? std::string() : fmt::format("must be from {} to {}", min, max);
  });
}

CLI::Validator not_empty(const std::string& what_to_write) {
  return CLI::Validator(
      [what_to_write](std::string& v) {
        return v.empty() ? "is empty; " + what_to_write : std::string();
      },
      "", "non-empty");
}

CLI::Validator greater_than(double min) {
  return number_check(fmt::format("NUMBER > {}", min), [min](double v) {
    return v > min ? std::string() : fmt::format("must be greater than {}", min);
  });
}

std::set<std::string> accepted_env_keys(const std::vector<std::string>& keys) {
  std::set<std::string> out;
  for (const std::string& key : keys) {
    if (!is_environment_fact(key))
      throw UsageError(fmt::format(
          "--accept-env: '{}' is not an environment fact; give a key of docs/environment.md "
          "\"Facts\" as `nightjar env --diff` prints it (e.g. thp.enabled, cpu.microcode)",
          key));
    out.insert(key);
  }
  return out;
}

stats::SignificanceOptions significance_options(const std::string& test, double alpha,
                                                double min_effect) {
  if (!(alpha > 0.0 && alpha < 1.0))
    throw UsageError(
        fmt::format("--alpha {}: must be between 0 and 1 (exclusive), e.g. 0.05", alpha));
  if (!(min_effect >= 0.0) || !std::isfinite(min_effect))
    throw UsageError(fmt::format("--min-effect {}: must be a percentage >= 0, e.g. 1", min_effect));
  stats::SignificanceOptions options;
  try {
    options.test = stats::test_kind_from_string(test);
  } catch (const std::invalid_argument&) {
    throw UsageError("--test " + test + ": write welch, utest, mmtests or lkp");
  }
  options.alpha = alpha;
  options.min_effect_pct = min_effect;
  return options;
}

void write_file_replacing(const std::string& path, const std::string& text,
                          const std::string& hint) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f << text;
    f.close();
    if (!f) throw EnvironmentError("cannot write " + tmp + ": " + errno_text(errno) + "; " + hint);
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) throw EnvironmentError("cannot rename " + tmp + " to " + path + ": " + ec.message());
}

ResultsStore open_existing_store(const std::string& db_flag) {
  std::string path = ResultsStore::resolve_path(db_flag);
  std::cerr << "nightjar: database " << path << "\n";
  return ResultsStore(path, ResultsStore::Access::read_only);
}

// `--db ''` is refused: an unset shell variable ($DB) must not mean the
// default database. Checks the chosen subcommand and its chosen subcommands.
void check_db_flags(const CLI::App& app) {
  for (const CLI::App* sub : app.get_subcommands()) {
    const CLI::Option* db = sub->get_option_no_throw("--db");
    if (db && db->count() > 0 && db->as<std::string>().empty())
      throw UsageError(
          "--db '': the path is empty (an unset variable?); give a file, or leave --db out for "
          "$NIGHTJAR_DB or the default database");
    check_db_flags(*sub);
  }
}

namespace {

// Whether `word` names a subcommand, or is a flag of the app itself
// (--help, --version).
bool known_command(const std::vector<Subcommand>& commands, std::string_view word) {
  if (word == "--help" || word == "-h" || word == "--version") return true;
  for (const Subcommand& s : commands)
    if (s.cmd->check_name(std::string(word))) return true;
  return false;
}

// No command, or a word that is none: name it and list the commands (CLI11
// would say "A subcommand is required" or "arguments were not expected").
int unknown_command(const std::vector<Subcommand>& commands, int argc, char** argv) {
  std::vector<std::string> names;
  for (const Subcommand& s : commands)
    if (!s.cmd->get_group().empty()) names.push_back(s.cmd->get_name());
  const std::string list = join(names);
  if (argc < 2)
    std::cerr << "nightjar: error: give a command: " << list
              << "; `nightjar --help` says what each does\n";
  else if (argv[1][0] == '-')
    std::cerr << "nightjar: error: unknown option '" << echo_input(argv[1])
              << "': give a command first, then its options (`nightjar COMMAND --help`); the "
                 "commands are "
              << list << "\n";
  else
    std::cerr << "nightjar: error: unknown command '" << echo_input(argv[1])
              << "'; the commands are " << list << " (`nightjar --help` says what each does)\n";
  return to_int(ExitCode::usage);
}

// The deepest command chosen on the command line (`bisect run`: run).
CLI::App& chosen_command(CLI::App& app) {
  CLI::App* sub = &app;
  while (!sub->get_subcommands().empty()) sub = sub->get_subcommands().front();
  return *sub;
}

// The chosen command's path ("nightjar bisect run"), for messages.
std::string command_path(const CLI::App& app) {
  std::string path = "nightjar";
  for (const CLI::App* sub = &app; !sub->get_subcommands().empty();) {
    sub = sub->get_subcommands().front();
    path += " " + sub->get_name();
  }
  return path;
}

// nightjar's wording for the CLI11 errors that would otherwise name its
// internals (docs/input.md "The command line"): a number option given a
// value of the wrong kind ("Could not convert: --iterations = 1.5") and a
// missing argument ("sides is required"). nullopt: CLI11's own message.
std::optional<std::string> usage_message(const CLI::ParseError& e, CLI::App& app) {
  const std::string what = e.what();
  const std::string help = "; `" + command_path(app) + " --help` says what to give";
  if (dynamic_cast<const CLI::ConversionError*>(&e)) {
    constexpr std::string_view prefix = "Could not convert: ";
    const std::size_t eq = what.find(" = ");
    if (what.rfind(prefix, 0) != 0 || eq == std::string::npos) return std::nullopt;
    const std::string option = what.substr(prefix.size(), eq - prefix.size());
    const std::string value = what.substr(eq + 3);
    char* end = nullptr;
    const char* begin = value.c_str();
    errno = 0;
    (void)std::strtod(begin, &end);
    const bool number = end != begin && *end == '\0';
    return fmt::format("{}: {}, found '{}'{}", option,
                       number ? "must be a whole number in range" : "must be a number",
                       echo_input(value), help);
  }
  if (dynamic_cast<const CLI::RequiredError*>(&e)) {
    CLI::App& chosen = chosen_command(app);
    if (what == "A subcommand is required") {
      std::vector<std::string> names;
      for (const CLI::App* sub : chosen.get_subcommands([](CLI::App*) { return true; }))
        names.push_back(sub->get_name());
      return fmt::format("{}: give a subcommand: {}{}", command_path(app), join(names), help);
    }
    constexpr std::string_view suffix = " is required";
    if (what.size() <= suffix.size() ||
        what.compare(what.size() - suffix.size(), suffix.size(), suffix) != 0)
      return std::nullopt;
    const std::string name = what.substr(0, what.size() - suffix.size());
    const CLI::Option* option = chosen.get_option_no_throw(name);
    const std::string about =
        option && !option->get_description().empty() ? " (" + option->get_description() + ")" : "";
    return fmt::format("{}: missing {}{}{}", command_path(app), name, about, help);
  }
  return std::nullopt;
}

}  // namespace

int cli_main(int argc, char** argv) {
  CLI::App app{
      "nightjar: Linux kernel performance regression harness.\n"
      "Runs workloads across parameter matrices, kernels and variants, and keeps every sample in "
      "SQLite."};
  app.set_version_flag("--version", std::string("nightjar ") + NIGHTJAR_VERSION);
  app.require_subcommand(1);
  app.footer(kFooter);
  const std::vector<Subcommand> commands = {
      add_run_command(app),     add_calibrate_command(app), add_guest_run_command(app),
      add_list_command(app),    add_show_command(app),      add_env_command(app),
      add_compare_command(app), add_check_command(app),     add_trend_command(app),
      add_bisect_command(app),  add_report_command(app),    add_export_command(app),
      add_import_command(app),  add_plot_command(app),      add_cleanup_command(app),
      add_publish_command(app), add_bundle_command(app),    add_lava_command(app),
      add_audit_command(app)};
  if (argc < 2 || !known_command(commands, argv[1])) return unknown_command(commands, argc, argv);
  int rc = 0;
  try {
    app.parse(argc, argv);
    try {
      check_db_flags(app);
      rc = run_chosen(commands);
    } catch (const UsageError& e) {
      std::cerr << "nightjar: error: " << e.what() << "\n";
      rc = to_int(e.code());
    }
  } catch (const CLI::ParseError& e) {
    if (auto message = usage_message(e, app)) {
      std::cerr << "nightjar: error: " << *message << "\n";
      rc = to_int(ExitCode::usage);
    } else {
      rc = app.exit(e) == 0 ? 0 : to_int(ExitCode::usage);
    }
  }
  // A subcommand may map its codes (bisect step: git bisect's contract),
  // also those of a parse error inside it.
  for (const Subcommand& s : commands)
    if (s.cmd->parsed()) return s.map_exit(rc);
  return rc;
}

}  // namespace nightjar
