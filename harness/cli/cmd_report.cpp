// `nightjar report BASE NEW [NEW...]`: changelog, markdown and mmtests tables
// of a comparison (results/render/report.h, docs/report.md).
//
// --group takes a cell parameter (one table per value, within one
// comparison) or a run attribute: kernel, build, variant or testbox. For an
// attribute the comparison is built once per value that every side holds,
// each side narrowed to that value (`vanilla` becomes
// `variant=vanilla,kernel=K`), so that e.g. PREEMPT_RT and !PREEMPT_RT
// kernels each get their own table with their own significance family.
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "harness/cli/commands.h"
#include "harness/job/job.h"
#include "results/compare/comparison.h"
#include "results/compare/selector.h"
#include "results/compare/why.h"
#include "results/model/text.h"
#include "results/render/compare.h"
#include "results/render/report.h"
#include "results/render/why.h"
#include "workloads/workload.h"

namespace nightjar {
namespace {

struct ReportArgs {
  std::vector<std::string> sides;  // [0] = BASE
  std::string db, job, workload, format = "changelog", test = "welch", stat = "mean";
  std::string metric, by, group;
  std::vector<std::string> ignore_params, labels, group_labels;
  double alpha = 0.05, min_effect = 1.0;
  int precision = 1;
  bool include_invalid = false;
  bool why = false;
};

const std::set<std::string> kRunAttributes = {"kernel", "build", "variant", "testbox"};

// The values of run attribute `attr` that every side holds, in sorted order.
std::vector<std::string> common_values(const ResultsStore& store,
                                       const std::vector<Selector>& selectors,
                                       const SideQuery& query, const std::string& attr) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < selectors.size(); ++i) {
    LoadedSide s = load_side(store, selectors[i], query, i == 0 ? "BASE" : "NEW");
    const std::set<std::string>& have = attr == "kernel"    ? s.kernels
                                        : attr == "build"   ? s.builds
                                        : attr == "variant" ? s.variants
                                                            : s.testboxes;
    if (i == 0) {
      out.assign(have.begin(), have.end());
    } else {
      std::erase_if(out, [&](const std::string& v) { return !have.count(v); });
    }
  }
  return out;
}

// `s` narrowed to the runs whose `attr` is `value` (a value every side
// holds: common_values), named "SELECTOR,ATTR=VALUE".
Selector narrowed(const Selector& s, const std::string& attr, const std::string& value) {
  Selector out = s;
  std::string& set = attr == "kernel"    ? out.kernel
                     : attr == "build"   ? out.build
                     : attr == "variant" ? out.variant
                                         : out.testbox;
  // A bare word is a variant name (results/compare/selector.h).
  const bool bare = s.text.find('=') == std::string::npos;
  if (!set.empty() && !(bare && attr == "variant"))
    throw UsageError("--group " + attr + ": the selector '" + s.text + "' already fixes " + attr +
                     "; group by another attribute or drop " + attr + "= from the selector");
  if (bare && attr == "variant")
    throw UsageError("--group variant: the selector '" + s.text +
                     "' is a variant name; group by kernel, build or testbox instead");
  if (value.empty())
    throw UsageError("--group " + attr + ": some runs of the sides have no " + attr +
                     "; narrow the selectors to runs that have one (" + attr + "=...)");
  out.text = (bare ? "variant=" + s.text : s.text) + "," + attr + "=" + value;
  set = value;
  return out;
}

// --group-label VALUE=TITLE items as a map; UsageError for an item without
// '=', an empty VALUE, a TITLE that is no label (docs/input.md "Labels"),
// a VALUE given twice, or any item without --group.
std::map<std::string, std::string> parse_group_labels(const std::vector<std::string>& items,
                                                      const std::string& group) {
  std::map<std::string, std::string> out;
  if (!items.empty() && group.empty())
    throw UsageError("--group-label " + echo_input(items.front()) +
                     ": titles the tables of --group; give --group AXIS with it");
  for (const auto& item : items) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      throw UsageError("--group-label " + echo_input(item) +
                       ": write VALUE=TITLE, e.g. --group-label '6.1.0-18-rt-amd64=PREEMPT_RT "
                       "config'");
    require_label("--group-label title", item.substr(eq + 1));
    if (!out.emplace(item.substr(0, eq), item.substr(eq + 1)).second)
      throw UsageError("--group-label: the value '" + echo_input(item.substr(0, eq)) +
                       "' is given twice; give one title per value");
  }
  return out;
}

// The title of one --group table: the user's --group-label for the value;
// else "PREEMPT_RT config" / "!PREEMPT_RT config" (the netperf posts'
// tables) for a kernel whose runs all recorded kernel.preempt_rt
// (harness/vm/qemu.cpp) alike; else "VALUE ATTR".
std::string group_title(const ResultsStore& store, const Comparison& c, const std::string& attr,
                        const std::string& value,
                        const std::map<std::string, std::string>& labels) {
  if (auto it = labels.find(value); it != labels.end()) return it->second;
  if (attr == "kernel") {
    std::set<std::string> rt;
    for (const auto& side : c.sides)
      for (const auto id : side.run_ids) {
        const auto context = store.run_context(id);
        auto it = context.find("kernel.preempt_rt");
        rt.insert(it == context.end() ? "" : it->second);
      }
    if (rt.size() == 1 && *rt.begin() == "yes") return "PREEMPT_RT config";
    if (rt.size() == 1 && *rt.begin() == "no") return "!PREEMPT_RT config";
  }
  return value + " " + attr;
}

ExitCode cmd_report(const ReportArgs& a) {
  if (a.sides.size() < 2)
    throw UsageError(
        "report: give a BASE and at least one NEW selector, e.g. `nightjar report vanilla "
        "patched --by clients`");
  const stats::SignificanceOptions options = significance_options(a.test, a.alpha, a.min_effect);
  const std::vector<Selector> selectors = parse_selectors(a.sides);
  check_distinct_sides(selectors);
  ReportOptions o;
  o.format = a.format;
  o.metric = a.metric;
  o.by = a.by;
  o.group = kRunAttributes.count(a.group) ? "" : a.group;
  const auto group_labels = parse_group_labels(a.group_labels, a.group);
  if (!o.group.empty()) o.group_labels = group_labels;
  o.stat = report_stat_from_string(a.stat);
  o.labels = a.labels;
  o.precision = a.precision;
  if (a.labels.size() > a.sides.size())
    throw UsageError(fmt::format("--label given {} times for {} sides; give one label per side",
                                 a.labels.size(), a.sides.size()));

  ResultsStore store = open_existing_store(a.db);
  const SideQuery query{a.job, a.workload, a.ignore_params, &workload_catalog(), a.include_invalid};
  std::vector<std::unique_ptr<Comparison>> comparisons;
  std::vector<ReportGroup> groups;
  std::vector<std::vector<Selector>> group_sides;  // per group: --why explains the same runs
  if (kRunAttributes.count(a.group)) {
    const auto values = common_values(store, selectors, query, a.group);
    if (values.empty())
      throw UsageError("--group " + a.group + ": no " + a.group + " holds runs of every side; " +
                       describe_stored_runs(store));
    for (const auto& [value, title] : group_labels)
      if (std::find(values.begin(), values.end(), value) == values.end())
        throw UsageError("--group-label " + value + "=" + title + ": '" + value + "' is no " +
                         a.group + " that holds runs of every side; they are " + join(values));
    for (const auto& v : values) {
      std::vector<Selector> narrowed_sides;
      for (const auto& s : selectors) narrowed_sides.push_back(narrowed(s, a.group, v));
      auto c =
          std::make_unique<Comparison>(compare_selectors(store, narrowed_sides, query, options));
      for (std::size_t i = 0; i < c->sides.size(); ++i) c->sides[i].name = a.sides[i];
      groups.push_back({group_title(store, *c, a.group, v, group_labels), c.get()});
      comparisons.push_back(std::move(c));
      group_sides.push_back(narrowed_sides);
    }
  } else {
    comparisons.push_back(
        std::make_unique<Comparison>(compare_selectors(store, selectors, query, options)));
    groups.push_back({"", comparisons.back().get()});
    group_sides.push_back(selectors);
  }

  if (a.format == "mmtests") {
    // mmtests' own layout, per group; --by does not apply (every operation is
    // a row already).
    RenderOptions r{12, a.precision < 2 ? 2 : a.precision, false};
    bool first = true;
    for (const auto& g : groups) {
      if (!first) std::cout << "\n";
      first = false;
      if (!g.title.empty()) std::cout << g.title << ":\n\n";
      std::cout << render_mmtests(*g.comparison, r);
    }
  } else {
    std::cout << render_report(groups, o);
  }
  if (a.why)
    for (std::size_t g = 0; g < groups.size(); ++g) {
      const WhyBlock why =
          explain_monitors(*groups[g].comparison, store, group_sides[g], query, options);
      if (!groups[g].title.empty()) std::cout << "\n" << groups[g].title << ":\n";
      std::cout << (a.format == "markdown"  ? render_why_markdown(why)
                    : a.format == "mmtests" ? render_why_text(why)
                                            : render_why_changelog(why));
    }
  std::cout.flush();
  return ExitCode::ok;
}

}  // namespace

Subcommand add_report_command(CLI::App& app) {
  auto a = std::make_shared<ReportArgs>();
  Subcommand s;
  s.cmd = app.add_subcommand(
      "report",
      "Changelog tables of a comparison: BASE NEW [NEW...] selectors, one block per cell or a "
      "matrix over --by, at most 72 columns");
  CLI::App* cmd = s.cmd;
  cmd->add_option("sides", a->sides,
                  "selectors as for `compare` (a variant name, or key=value[,key=value] with "
                  "keys build, kernel, variant, run, testbox, job, workload); the first is BASE")
      ->required();
  cmd->add_option("--format", a->format,
                  "changelog (plain ASCII, <= 72 columns), markdown, or mmtests (compare's "
                  "mmtests layout)")
      ->check(CLI::IsMember({"changelog", "markdown", "mmtests"}))
      ->capture_default_str();
  cmd->add_option("--by", a->by,
                  "cell parameter whose values are the table's rows (e.g. clients); without it, "
                  "one two-build block per cell");
  cmd->add_option("--group", a->group,
                  "one table per value of this cell parameter, or of a run attribute: kernel, "
                  "build, variant, testbox");
  cmd->add_option("--group-label", a->group_labels,
                  "VALUE=TITLE: the title of the --group table of VALUE (repeatable), instead "
                  "of 'VALUE AXIS' or the built-in 'PREEMPT_RT config' / '!PREEMPT_RT config'")
      ->allow_extra_args(false);
  cmd->add_option("--metric", a->metric,
                  "metric to show (default: each workload's first metric, e.g. throughput)");
  cmd->add_option("--stat", a->stat,
                  "statistic shown: mean (the metric's own: Hmean for rates, Amean for times), "
                  "hmean, amean, median")
      ->check(CLI::IsMember({"mean", "hmean", "amean", "median"}))
      ->capture_default_str();
  cmd->add_option("--label", a->labels,
                  "label of a side in the table, in side order (repeatable; default: the "
                  "selector), e.g. --label 'Without (6.0-rc1)' --label 'With patch'")
      ->allow_extra_args(false);
  cmd->add_option("--precision", a->precision, "decimals of values and %change")
      ->check(in_range(0, 12))
      ->capture_default_str();
  cmd->add_option("--db", a->db, "results database path");
  cmd->add_option("--job", a->job, "only runs of this job (file stem), on every side");
  cmd->add_option("--workload", a->workload, "only runs of this workload, on every side");
  cmd->add_option("--test", a->test, "significance rule: welch, utest, mmtests, lkp (as compare)")
      ->check(CLI::IsMember({"welch", "utest", "mmtests", "lkp"}))
      ->capture_default_str();
  cmd->add_option("--alpha", a->alpha, "false discovery rate / test level")->capture_default_str();
  cmd->add_option("--min-effect", a->min_effect,
                  "smallest |%change| that counts as a change, percent")
      ->capture_default_str();
  cmd->add_option("--ignore-param", a->ignore_params,
                  "match cells ignoring this parameter (repeatable), as compare")
      ->allow_extra_args(false);
  cmd->add_flag("--include-invalid", a->include_invalid,
                "also pool the samples stored invalid, for inspection (the legend says so)");
  cmd->add_flag("--why", a->why,
                "after the tables, what else changed: the monitor rows and the profile symbols "
                "that moved, as compare --why decides them (docs/compare.md \"The profile "
                "block\"); at most 72 columns in the changelog format");
  s.run = [a] { return cmd_report(*a); };
  return s;
}

}  // namespace nightjar
