// `nightjar trend`: change points in a metric's history (results/compare/trend.h).
#include <iostream>
#include <memory>

#include "harness/cli/commands.h"
#include "results/compare/trend.h"
#include "results/model/exit_codes.h"
#include "results/render/trend.h"
#include "workloads/workload.h"

namespace nightjar {
namespace {

struct TrendArgs {
  std::string db, job, metric, variant, host, format = "text";
  std::vector<std::string> cell, order;
  stats::ChangePointOptions detection;
  bool history = false;
};

ExitCode cmd_trend(const TrendArgs& a) {
  TrendOptions o;
  o.job = a.job;
  o.metric = a.metric;
  o.cell = a.cell;
  o.variant = a.variant;
  o.host = a.host;
  o.order = a.order;
  o.detection = a.detection;
  ResultsStore store = open_existing_store(a.db);
  // Without --metric: every metric of the job with samples, one after another.
  std::vector<std::string> metrics = {a.metric};
  if (a.metric.empty()) metrics = trend_metrics(store, a.job, workload_catalog());
  std::vector<TrendReport> reports;
  for (const auto& m : metrics) {
    o.metric = m;
    try {
      reports.push_back(compute_trend(store, o));
    } catch (const std::invalid_argument& e) {
      throw UsageError(std::string("trend: ") + e.what());
    }
  }
  for (std::size_t i = 0; i < reports.size(); ++i) {
    if (a.format == "json") {
      // One metric: its object; several: a JSON array of them.
      if (reports.size() > 1) std::cout << (i == 0 ? "[\n" : ",\n");
      std::string doc = render_trend_json(reports[i]);
      std::cout << (reports.size() > 1 ? doc.substr(0, doc.size() - 1) : doc);
      if (reports.size() > 1 && i + 1 == reports.size()) std::cout << "\n]\n";
    } else if (a.format == "markdown") {
      std::cout << (i ? "\n" : "") << render_trend_markdown(reports[i]);
    } else {
      std::cout << (i ? "\n" : "") << render_trend_text(reports[i], a.history);
    }
  }
  return ExitCode::ok;
}

}  // namespace

Subcommand add_trend_command(CLI::App& app) {
  auto a = std::make_shared<TrendArgs>();
  Subcommand s;
  CLI::App* cmd = app.add_subcommand(
      "trend", "Change points in a metric's history, build by build (E-divisive means + Welch)");
  cmd->add_option("--job", a->job, "job name (file stem)")->required();
  cmd->add_option("--metric", a->metric, "metric name (default: every metric of the job)");
  cmd->add_option("--cell", a->cell,
                  "k=v[ k=v...]: only cells with these parameters (default: every cell)");
  cmd->add_option("--variant", a->variant, "only runs of this variant");
  cmd->add_option("--host", a->host, "only runs on this testbox (hostname)");
  cmd->add_option("--order", a->order, "b1,b2,...: explicit build order (default: by build date)")
      ->delimiter(',');
  cmd->add_option("--max-p", a->detection.max_p,
                  "keep change points with p <= this (default 0.001)")
      ->check(in_range(1e-12, 0.5));
  cmd->add_option(
         "--window", a->detection.window,
         "points per E-divisive window, overlapping by half; 0 = whole history (default 50)")
      ->check(in_range(0, 1000000));
  cmd->add_option("--min-effect", a->detection.min_effect_pct,
                  "keep change points with |%change| >= this (default 1)")
      ->check(at_least(0));
  cmd->add_option("--min-segment", a->detection.min_segment,
                  "builds needed on each side of a change point (default 5)")
      ->check(in_range(2, 1000000));
  cmd->add_option("--format", a->format, "text, markdown or json")
      ->check(CLI::IsMember({"text", "markdown", "json"}));
  cmd->add_flag("--history", a->history, "also list every build with the change points marked");
  cmd->add_option("--db", a->db, "results database path");
  s.cmd = cmd;
  s.run = [a] { return cmd_trend(*a); };
  return s;
}

}  // namespace nightjar
