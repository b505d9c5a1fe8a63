// `nightjar audit JOB [--pairs N] [--runs R] [--shift PCT]...`: measures, on
// this testbox, the error rates of compare's verdicts for the job's cells
// (docs/statistics.md "Auditing a testbox"): N A/A pairs of R runs per side,
// interleaved (A B A B ...), each pair compared as `nightjar compare` would
// (false alarms: a regression or an improvement between sides measured
// alike; decided unchanged), and each pair again with side B's samples made
// PCT% worse (power: a regression found). The rates go into the store per
// testbox, cell, metric and mode (results/store/calibration.h AuditRow);
// compare, check and the site show them beside the verdicts
// (results/compare/audit.h).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <memory>

#include "harness/cli/commands.h"
#include "harness/run/runner.h"
#include "results/compare/audit.h"
#include "results/compare/comparison.h"
#include "results/compare/selector.h"
#include "results/model/exit_codes.h"
#include "results/stats/run_model.h"
#include "workloads/workload.h"

namespace nightjar {
namespace {

struct AuditArgs : PairedRunArgs {
  int pairs = 20;
  int runs = 1;
  std::vector<double> shifts{5.0};
};

// `side` with every metric sample made `pct` percent worse (direction-aware:
// a rate times 1 − pct/100, a time times 1 + pct/100): the real run-to-run
// noise of the pair with an exact, known regression on top.
LoadedSide shifted(LoadedSide side, const MetricCatalog& catalog, double pct) {
  for (auto& [key, cell] : side.cells) {
    auto factor = [&](const std::string& metric) {
      Direction dir = Direction::higher_is_better;
      if (auto w = catalog.find(key.workload); w != catalog.end())
        for (const auto& m : w->second)
          if (m.name == metric) dir = m.direction;
      return dir == Direction::higher_is_better ? 1.0 - pct / 100.0 : 1.0 + pct / 100.0;
    };
    for (auto& [metric, samples] : cell.metrics)
      for (double& x : samples) x *= factor(metric);
    for (auto& [metric, runs] : cell.metric_runs)
      for (auto& run : runs)
        for (double& x : run) x *= factor(metric);
  }
  return side;
}

double median(std::vector<double> v) {
  if (v.empty()) return std::nan("");
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

// The audit of one cell: its runs (ascending: rounds A B A B ...) cut into
// pairs of `runs` per side, each compared as is and with every shift.
std::vector<AuditRow> audit_cell(const ResultsStore& store, const CellKey& key,
                                 const CellSamples& cell, const std::string& testbox,
                                 const AuditArgs& a, std::map<std::string, int>& sources) {
  const SideQuery query{key.job, key.workload, {}, &workload_catalog(), false};
  const auto options = significance_options("welch", 0.05, 1.0);
  const std::size_t per_pair = 2 * static_cast<std::size_t>(a.runs);
  const std::size_t pairs = cell.run_ids.size() / per_pair;
  std::map<std::pair<std::string, double>, AuditRow> rows;  // (metric, shift)
  std::map<std::string, std::vector<double>> needed;        // metric -> runs_needed of A/A
  std::vector<std::string> metrics;
  for (const auto& [m, _] : cell.metrics) metrics.push_back(m);
  for (std::size_t p = 0; p < pairs; ++p) {
    Selector sa{.text = "A"}, sb{.text = "B"};
    for (std::size_t j = 0; j < per_pair; ++j)
      (j % 2 ? sb : sa).run_ids.push_back(cell.run_ids[p * per_pair + j]);
    std::vector<LoadedSide> sides{load_side(store, sa, query, "base"),
                                  load_side(store, sb, query, "new")};
    const MetricCatalog catalog = sides_metric_catalog(store, sides, query);
    std::vector<double> shifts{0.0};
    shifts.insert(shifts.end(), a.shifts.begin(), a.shifts.end());
    for (double shift : shifts) {
      std::vector<LoadedSide> compared{sides[0],
                                       shift == 0 ? sides[1] : shifted(sides[1], catalog, shift)};
      const Comparison c = compare_loaded_sides(store, compared, catalog, query, options);
      if (shift == 0)
        for (const auto& [source, n] : c.between_rows)
          sources[std::string(stats::to_string(source))] += n;
      for (const auto& m : metrics) {
        AuditRow& row = rows[{m, shift}];
        row.key = {key.workload, key.job, cell.stored_cell.empty() ? key.cell : cell.stored_cell, m,
                   testbox};
        row.mode = audit_mode(a.runs);
        row.shift_pct = shift;
        std::vector<double> unused;
        count_audit_pair(c, key.workload, key.job, key.cell, m, row,
                         shift == 0 ? needed[m] : unused);
      }
    }
  }
  std::vector<AuditRow> out;
  for (auto& [k, row] : rows) {
    row.runs_needed = k.second == 0 ? median(needed[k.first]) : std::nan("");
    out.push_back(row);
  }
  return out;
}

ExitCode cmd_audit(const AuditArgs& a) {
  PairedRuns r = run_paired(a, 2 * a.runs * a.pairs, "audit", [&](const auto& plan) {
    for (const auto& job : plan)
      if (job.variants.size() > 1)
        throw UsageError(fmt::format(
            "audit: {} selects {} variants; an audit measures one variant's cells against "
            "themselves: pass --variant NAME (one of the job's variants)",
            a.job, job.variants.size()));
    std::cerr << fmt::format(
        "nightjar: audit: {} A/A pairs of {} run(s) per side per cell (runs interleaved A B A "
        "B)\n",
        a.pairs, a.runs);
  });
  if (r.outcome.interrupted) return ExitCode::interrupted;
  ResultsStore& store = r.store;
  const LoadedSide all = load_side(store, Selector{.text = r.build, .run_ids = r.outcome.run_ids},
                                   SideQuery{{}, {}, {}, &workload_catalog(), false}, "audit");
  const std::string testbox = all.testboxes.empty() ? "" : *all.testboxes.begin();
  int stored = 0;
  for (const auto& [key, cell] : all.cells) {
    std::map<std::string, int> sources;
    const auto rows = audit_cell(store, key, cell, testbox, a, sources);
    std::map<std::string, std::vector<AuditRow>> by_metric;
    for (const auto& r : rows) by_metric[r.key.metric].push_back(r);
    for (const auto& [metric, list] : by_metric) {
      const std::string text = audit_text(list);
      if (text.empty()) continue;
      std::cout << fmt::format("{} [{}] {}: {}\n", key.job, key.cell, metric, text);
      ++stored;
    }
    if (!sources.empty()) {
      std::string s;
      for (const auto& [source, n] : sources)
        s += fmt::format("{}{} ({} rows)", s.empty() ? "" : ", ", source, n);
      std::cout << fmt::format(
          "  A/A rows with one run on a side were tested with the between-run "
          "variation from: {}\n",
          s);
    }
    store.store_audit(rows);
  }
  std::cerr << fmt::format(
      "nightjar: audited {} cell metric(s) from {} runs (build label {}) on testbox {}; stored "
      "in {}\n",
      stored, r.outcome.run_ids.size(), r.build, testbox, store.path());
  if (r.outcome.failed || stored == 0) return ExitCode::environment;
  return ExitCode::ok;
}

}  // namespace

Subcommand add_audit_command(CLI::App& app) {
  auto a = std::make_shared<AuditArgs>();
  Subcommand s;
  CLI::App* cmd = app.add_subcommand(
      "audit",
      "Measure this testbox's false-alarm rate and power for a job's cells (A/A pairs) and "
      "store them for compare");
  add_paired_run_options(cmd, *a, "audit");
  cmd->add_option("--pairs", a->pairs, "A/A pairs per cell (default 20)")->check(in_range(2, 500));
  cmd->add_option("--runs", a->runs,
                  "runs per side of each pair (default 1: one run per side; 3: tested on run "
                  "means)")
      ->check(in_range(1, 20));
  cmd->add_option("--shift", a->shifts,
                  "PCT: the regression injected into side B's samples for the power "
                  "(repeatable; default 5)")
      ->check(greater_than(0))
      ->check(in_range(0, 90));
  s.cmd = cmd;
  s.run = [a] { return cmd_audit(*a); };
  return s;
}

}  // namespace nightjar
