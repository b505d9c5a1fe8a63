// `nightjar compare` (tables of a comparison) and `nightjar check` (the CI
// gate): results/compare/comparison.h builds the record, results/render/
// prints it.
#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "harness/bisect/git.h"
#include "harness/cli/commands.h"
#include "harness/run/until_decided.h"
#include "results/compare/comparison.h"
#include "results/compare/selector.h"
#include "results/compare/why.h"
#include "results/model/exit_codes.h"
#include "results/model/text.h"
#include "results/render/compare.h"
#include "results/render/flame.h"
#include "results/render/why.h"
#include "workloads/workload.h"

namespace nightjar {
namespace {

struct CompareArgs {
  std::vector<std::string> sides;  // [0] = BASE
  std::string db, job, workload, format = "mmtests", test = "welch", color = "auto";
  std::vector<std::string> ignore_params;
  double alpha = 0.05, min_effect = 1.0;
  int width = 12, precision = 2;
  bool fail_on_regression = false;
  bool include_invalid = false;
  bool no_n = false, no_cv = false;
  bool why = false;                     // --why: the "what else changed" block under the verdicts
  std::string commit, repo = ".";       // --commit REV --repo DIR: join moved symbols to REV
  std::string flamegraph;               // --flamegraph FILE.html: the differential flame graph
  std::vector<std::string> accept_env;  // --accept-env KEY
  bool strict_env = false;              // --strict-env: exit 5 on a confounder
};

// The comparison in `format`, with --why's block (results/render/why.h)
// after it: text under the mmtests and lkp tables, a section in markdown, a
// "why" member of the JSON object. Throws UsageError for --why with csv.
std::string render_with_why(const std::string& format, const std::string& rendered,
                            const WhyBlock& why, int precision) {
  if (format == "markdown") return rendered + render_why_markdown(why, precision);
  if (format == "json") {
    nlohmann::ordered_json j = nlohmann::ordered_json::parse(rendered);
    j["why"] = nlohmann::ordered_json::parse(render_why_json(why));
    return j.dump(2) + "\n";
  }
  if (format == "csv")
    throw UsageError(
        "--why: the csv layout has no place for the block; use --format mmtests, "
        "lkp, markdown or json");
  return rendered + render_why_text(why, precision);
}

// Colour only on a terminal, unless --color says otherwise; NO_COLOR (set and
// not empty, https://no-color.org) turns the automatic choice off.
bool use_color(const std::string& mode) {
  if (mode == "always") return true;
  if (mode == "never") return false;
  const char* no_color = std::getenv("NO_COLOR");
  if (no_color && *no_color) return false;
  return isatty(STDOUT_FILENO) == 1;
}

// `compare` (gate = --fail-on-regression) and `check` (gate = true).
ExitCode cmd_compare(const CompareArgs& a, bool gate) {
  if (a.sides.size() < 2)
    throw UsageError(
        "compare: give a BASE and at least one NEW selector, e.g. `nightjar compare "
        "vanilla patched` or `nightjar compare build=v6.17 build=v6.18`");
  const stats::SignificanceOptions options = significance_options(a.test, a.alpha, a.min_effect);
  if (!a.commit.empty() && !a.why)
    throw UsageError(
        "--commit " + a.commit +
        ": joins the moved profile symbols of --why to a commit; add --why (docs/compare.md "
        "\"The profile block\")");
  if (!a.flamegraph.empty() && !a.why)
    throw UsageError("--flamegraph " + a.flamegraph +
                     ": draws the profile delta of --why; add --why (docs/compare.md \"The "
                     "flame graph\")");
  const std::vector<Selector> sides = parse_selectors(a.sides);  // before the database
  // The commit's changed functions, before the database: a bad --commit or
  // --repo is said before anything is read.
  std::string commit;
  std::map<std::string, std::string> changed;
  if (!a.commit.empty()) {
    const Git git(a.repo);
    commit = resolve_commit(git, a.commit, "--commit");
    changed = changed_functions(git, commit);
  }
  check_distinct_sides(sides);
  ResultsStore store = open_existing_store(a.db);
  SideQuery query{a.job, a.workload, a.ignore_params, &workload_catalog(), a.include_invalid};
  Comparison c = compare_selectors(store, sides, query, options, accepted_env_keys(a.accept_env));
  if (gate) {
    // The plan from the BASE side's stored runs: what the decision needs.
    if (auto plan = stored_plan(store, sides[0], a.job, a.ignore_params, {}, options))
      std::cerr << "nightjar: plan: " << plan_line(*plan)
                << " (`nightjar run ... --until-decided` measures until decided)\n";
  }
  RenderOptions r{a.width, a.precision, use_color(a.color), !a.no_n, !a.no_cv};
  const ComparisonFormat* format = find_comparison_format(a.format);
  if (!format)  // --format is checked against the same table when parsed
    throw UsageError("--format: unknown layout '" + a.format + "'");
  if (a.why) {
    WhyBlock why = explain_monitors(c, store, sides, query, options);
    if (!commit.empty()) attribute_to_commit(why, commit, changed);
    if (!a.flamegraph.empty()) {
      if (!has_flame_graphs(why))
        throw UsageError("--flamegraph " + a.flamegraph +
                         ": no cell has perf-profile samples on both sides; run the job with "
                         "the perf-profile monitor (`monitors: [perf-profile]`, e.g. "
                         "jobs/pft-thp-profile.yaml) or leave --flamegraph out");
      std::string title = "Differential flame graph: " + a.sides[0] + " vs ";
      for (std::size_t i = 1; i < a.sides.size(); ++i) title += (i > 1 ? ", " : "") + a.sides[i];
      write_file_replacing(a.flamegraph, render_flame_html(why, title),
                           "check that --flamegraph names a file in a writable directory");
      std::cerr << "nightjar: wrote the differential flame graph to " << a.flamegraph << "\n";
    }
    std::cout << render_with_why(a.format, format->render(c, r), why, a.precision);
  } else
    std::cout << format->render(c, r);
  std::cout.flush();
  if (a.strict_env) {
    std::vector<std::string> confounders;
    for (const auto& d : c.environment)
      for (const auto& key : d.confounders()) confounders.push_back(d.now_name + ": " + key);
    if (!confounders.empty()) {
      std::cerr << fmt::format(
          "nightjar: --strict-env: {} differ between the sides not by intent -> exit {} "
          "(confounded; `--accept-env KEY` for a known difference, docs/environment.md)\n",
          join(confounders, ", "), to_int(ExitCode::confounded));
      return ExitCode::confounded;
    }
  }
  if (!gate) return ExitCode::ok;
  ExitCode code = check_exit_code(c);
  const char* meaning = code == ExitCode::regression     ? "significant regression"
                        : code == ExitCode::inconclusive ? "inconclusive key metrics"
                                                         : "no significant regression";
  std::cerr << fmt::format("nightjar: check: {} -> exit {} ({})\n", c.verdict, to_int(code),
                           meaning);
  return code;
}

std::vector<std::string> comparison_format_names() {
  std::vector<std::string> names;
  for (const auto& f : comparison_formats()) names.emplace_back(f.name);
  return names;
}

void add_compare_options(CLI::App* cmd, CompareArgs& a) {
  cmd->add_option("--db", a.db, "results database path");
  cmd->add_option("--job", a.job, "only runs of this job (file stem), on every side");
  cmd->add_option("--workload", a.workload, "only runs of this workload, on every side");
  cmd->add_option("--format", a.format, "output layout")
      ->check(CLI::IsMember(comparison_format_names()))
      ->capture_default_str();
  cmd->add_option("--test", a.test,
                  "significance rule: welch (Welch on logs + Benjamini-Hochberg + min effect), "
                  "utest, mmtests, lkp")
      ->check(CLI::IsMember({"welch", "utest", "mmtests", "lkp"}))
      ->capture_default_str();
  cmd->add_option("--alpha", a.alpha, "false discovery rate / test level")->capture_default_str();
  cmd->add_option("--min-effect", a.min_effect,
                  "smallest |%change| that counts as a change, percent")
      ->capture_default_str();
  cmd->add_option("--color", a.color,
                  "colour the stars: auto (on a terminal, unless NO_COLOR), always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->capture_default_str();
  cmd->add_option(
         "--ignore-param", a.ignore_params,
         "match cells ignoring this parameter (repeatable); cells differing only in it are pooled")
      ->allow_extra_args(false);  // one name per flag: `--ignore-param script a b` keeps a and b
  cmd->add_flag("--include-invalid", a.include_invalid,
                "also pool the samples stored invalid (a client that moved 0 bytes, a rate of "
                "0), for inspection; the notes say so");
  cmd->add_option("--width", a.width, "mmtests layout: value width W of %W.Pf")
      ->check(in_range(1, 40))
      ->capture_default_str();
  cmd->add_option("--precision", a.precision, "mmtests/markdown layout: decimals P of %W.Pf")
      ->check(in_range(0, 12))
      ->capture_default_str();
  cmd->add_flag("--no-n", a.no_n,
                "leave n per side out: the mmtests layout's n lines and the lkp header's n "
                "(markdown, json and csv always have it)");
  cmd->add_flag("--why", a.why,
                "under the verdicts, every monitor row whose change is significant (the metrics' "
                "test and Benjamini-Hochberg over the monitor rows), largest effect first "
                "(docs/monitors.md), then the profile symbols whose share of samples moved, "
                "for perf-profile runs (docs/compare.md)");
  cmd->add_option("--commit", a.commit,
                  "REV: with --why, mark each moved profile symbol that commit REV changed "
                  "(the functions of its diff's hunks, in the repository --repo)");
  cmd->add_option("--flamegraph", a.flamegraph,
                  "FILE.html: with --why, write a differential flame graph of the profile delta "
                  "(NEW's stacks coloured red where NEW has more samples than BASE, blue fewer; "
                  "a standalone page, docs/compare.md \"The flame graph\")");
  cmd->add_option("--repo", a.repo, "DIR: the git repository of --commit")->capture_default_str();
  cmd->add_option("--accept-env", a.accept_env,
                  "KEY: a known environment difference (a fact key of docs/environment.md, e.g. "
                  "cpu.microcode): listed as accepted, no warning, no --strict-env exit "
                  "(repeatable)")
      ->allow_extra_args(false);
  cmd->add_flag("--strict-env", a.strict_env,
                "exit 5 when an environment fact differs between the sides not by intent (a "
                "confounder, docs/environment.md); it wins over the verdict's code");
  cmd->add_flag("--no-cv", a.no_cv,
                "lkp layout: print ±CoeffVar only above 2%, as 0-day does (default: every row)");
}

}  // namespace

Subcommand add_compare_command(CLI::App& app) {
  auto a = std::make_shared<CompareArgs>();
  Subcommand s;
  s.cmd = app.add_subcommand(
      "compare",
      "Compare stored runs: BASE NEW [NEW...] selectors, Hmean tables with significance");
  s.cmd
      ->add_option("sides", a->sides,
                   "selectors: a variant name, or key=value[,key=value] with keys build, kernel, "
                   "variant, run, testbox, job, workload; the first is BASE")
      ->required();
  add_compare_options(s.cmd, *a);
  s.cmd->add_flag("--fail-on-regression", a->fail_on_regression,
                  "exit like `check`: 1 on a significant regression, 3 when inconclusive");
  s.run = [a] { return cmd_compare(*a, a->fail_on_regression); };
  return s;
}

Subcommand add_check_command(CLI::App& app) {
  struct CheckArgs : CompareArgs {
    std::string base, now;
  };
  auto a = std::make_shared<CheckArgs>();
  Subcommand s;
  s.cmd = app.add_subcommand("check",
                             "CI gate: compare BASE and NEW; exit 0 no significant "
                             "regression, 1 regression, 3 inconclusive");
  s.cmd->add_option("base", a->base, "BASE selector")->required();
  s.cmd->add_option("new", a->now, "NEW selector")->required();
  add_compare_options(s.cmd, *a);
  s.run = [a] {
    a->sides = {a->base, a->now};
    return cmd_compare(*a, true);
  };
  return s;
}

}  // namespace nightjar
