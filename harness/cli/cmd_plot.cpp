// `nightjar plot [SELECTOR...] --x AXIS --metric M -o FILE.png|.svg`: scaling
// and history plots drawn with gnuplot (docs/plots.md). The data comes from
// plots/plot.h (build_plot_data: every figure from the statistics module), the
// gnuplot script from plots/gnuplot.h, and running gnuplot from
// harness/cli/gnuplot_run.h.
#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <memory>
#include <stdexcept>

#include "harness/cli/commands.h"
#include "harness/cli/gnuplot_run.h"
#include "harness/job/job.h"
#include "plots/gnuplot.h"
#include "plots/plot.h"
#include "workloads/workload.h"

namespace nightjar {
namespace {

struct PlotArgs {
  std::string db, job, workload, x, metric, output, error_bars = "ci", size = "800x600";
  std::string gnuplot = "gnuplot";
  std::string title;
  std::vector<std::string> selectors, cell, ignore_params, labels;
  double confidence = 95;
  bool log_x = false, mark_changes = false, include_invalid = false;
};

ExitCode cmd_plot(const PlotArgs& a) {
  // Flags first: nothing is opened before they are known to be good.
  if (a.output.empty()) throw UsageError("plot: -o is required; write -o FILE.png or -o FILE.svg");
  ImageSpec image;
  image.format = image_format_for(a.output);
  std::tie(image.width, image.height) = parse_image_size(a.size);
  const std::filesystem::path out(a.output);
  if (out.has_parent_path() && !std::filesystem::is_directory(out.parent_path()))
    throw UsageError(
        fmt::format("plot: -o {}: the directory {} does not exist; create it or "
                    "write the image elsewhere",
                    a.output, out.parent_path().string()));
  const std::vector<Selector> selectors = parse_selectors(a.selectors);
  if (!a.title.empty()) require_label("--title", a.title);
  for (const auto& l : a.labels) require_label("--label", l);
  const std::string gnuplot = find_gnuplot(a.gnuplot);

  PlotRequest r;
  r.selectors = selectors;
  r.query = SideQuery{a.job, a.workload, a.ignore_params, &workload_catalog(), a.include_invalid};
  r.cell = a.cell;
  r.x = a.x;
  r.metric = a.metric;
  r.error_bars = error_bars_from_string(a.error_bars);
  r.confidence_pct = a.confidence;
  r.log_x = a.log_x;
  r.mark_changes = a.mark_changes;
  r.title = a.title;
  r.labels = a.labels;

  ResultsStore store = open_existing_store(a.db);
  const PlotData data = build_plot_data(store, r);
  render_plot(data, image, a.output, gnuplot);
  for (const auto& n : data.notes) std::cerr << "nightjar: note: " << n << "\n";
  std::size_t points = 0;
  for (const auto& s : data.series) points += s.points.size();
  std::size_t changes = 0;
  for (const auto& s : data.series) changes += s.change_points.size();
  std::cout << fmt::format("wrote {} ({} {}x{}): {} plot of {}, {} line(s), {} point(s){}\n",
                           a.output, image.format == ImageFormat::png ? "PNG" : "SVG", image.width,
                           image.height, data.kind == PlotKind::scaling ? "scaling" : "history",
                           data.metric.name, data.series.size(), points,
                           a.mark_changes ? fmt::format(", {} change point(s)", changes) : "");
  return ExitCode::ok;
}

}  // namespace

Subcommand add_plot_command(CLI::App& app) {
  auto args = std::make_shared<PlotArgs>();
  PlotArgs& a = *args;
  Subcommand s;
  s.cmd = app.add_subcommand(
      "plot",
      "Draw a metric as PNG or SVG with gnuplot: against a cell parameter (--x clients: one line "
      "per side, error bars) or over builds/dates (--x build|date: samples, per-build mean, "
      "change points)");
  CLI::App* cmd = s.cmd;
  cmd->add_option("selectors", a.selectors,
                  "sides, as for compare: a variant name or key=value,... (build, kernel, variant, "
                  "run, testbox, job, workload); default: one side per variant");
  cmd->add_option("--x", a.x,
                  "x axis: a cell parameter (scaling plot), or build / date (history plot)");
  cmd->add_option("--metric", a.metric, "metric to plot (y axis)");
  cmd->add_option("-o,--output", a.output, "image to write; FILE.png or FILE.svg");
  cmd->add_option("--title", a.title,
                  "the title's first line (default: METRIC by X); job, kernels and testboxes stay "
                  "below it");
  cmd->add_option("--label", a.labels,
                  "name of a side in the key, once per side in order (default: the selector)");
  cmd->add_option("--db", a.db, "results database path");
  cmd->add_option("--job", a.job, "only runs of this job (file stem), on every side");
  cmd->add_option("--workload", a.workload, "only runs of this workload, on every side");
  cmd->add_option("--cell", a.cell,
                  "only cells with these parameters: k=v (repeatable, or 'k=v k2=v2')")
      ->allow_extra_args(false);
  cmd->add_option("--ignore-param", a.ignore_params,
                  "leave this parameter out of the cell identity (repeatable); cells differing "
                  "only in it are pooled")
      ->allow_extra_args(false);
  cmd->add_option("--error-bars", a.error_bars,
                  "ci: confidence interval of the metric's mean; minmax: smallest to largest "
                  "sample; none")
      ->check(CLI::IsMember({"ci", "minmax", "none"}))
      ->capture_default_str();
  cmd->add_option("--confidence", a.confidence, "level of the ci error bars, percent")
      ->capture_default_str();
  cmd->add_flag("--log-x", a.log_x, "scaling plot: log2 x axis (numeric parameters)");
  cmd->add_flag("--include-invalid", a.include_invalid,
                "also plot the samples stored invalid, for inspection (noted)");
  cmd->add_flag("--mark-changes", a.mark_changes,
                "history plot: mark the change points `nightjar trend` finds in each line");
  cmd->add_option("--size", a.size, "image size WIDTHxHEIGHT in pixels")->capture_default_str();
  cmd->add_option("--gnuplot", a.gnuplot, "gnuplot program (a name on PATH, or a path)")
      ->capture_default_str();
  s.run = [args] { return cmd_plot(*args); };
  return s;
}

}  // namespace nightjar
