// Unit under test: plots/plot.{h,cpp}, plots/gnuplot.{h,cpp} and
// harness/cli/gnuplot_run.{h,cpp} --
// the CI of a summary mean (exact values: t quantiles with a closed form at
// 2 degrees of freedom), the plot record built from a results store (scaling:
// lines per side and varying parameter, numeric and categorical axes, units,
// title; history: builds in first-run order, dates, change points identical to
// `nightjar trend`'s), the usage errors that list what exists, the gnuplot
// commands, and the renderer's safety: a failing, silent, lying or hanging
// gnuplot leaves the output as it was, no temporary file and no process.
#include "plots/plot.h"
#include "results/model/text.h"
#include "workloads/workload.h"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>
#include <cstdio>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>

#include <fmt/format.h>

#include "harness/cli/gnuplot_run.h"
#include "plots/gnuplot.h"
#include "results/compare/trend.h"
#include "results/model/exit_codes.h"
#include "results/stats/tests.h"
#include "test_support.h"

namespace nightjar {
namespace {

using test::exec_sql;
using test::TempDir;

// t_{0.975, 2} = 0.95 / sqrt(2 * 0.975 * 0.025): the Student t quantile has
// this closed form at 2 degrees of freedom.
constexpr double kT2 = 4.302652729749464;

TEST(MeanConfidenceInterval, ArithmeticIsMeanPlusMinusTTimesSdOverRootN) {
  const std::vector<double> x = {10, 12, 14};  // mean 12, sd 2
  auto ci = stats::mean_confidence_interval(x, MeanKind::arithmetic, 0.05);
  ASSERT_TRUE(ci);
  EXPECT_DOUBLE_EQ(ci->mean, 12);
  EXPECT_NEAR(ci->lo, 12 - kT2 * 2 / std::sqrt(3.0), 1e-9);
  EXPECT_NEAR(ci->lo, 7.031724576499338, 1e-9);
  EXPECT_NEAR(ci->hi, 16.968275423500664, 1e-9);
}

TEST(MeanConfidenceInterval, HarmonicUsesTheDeltaMethodStandardError) {
  // 1/x = 0.01, 0.008, 0.005: H = 130.434..., SE = H^2 s_r / sqrt(3).
  const std::vector<double> x = {100, 125, 200};
  auto ci = stats::mean_confidence_interval(x, MeanKind::harmonic, 0.05);
  ASSERT_TRUE(ci);
  EXPECT_NEAR(ci->mean, 130.43478260869563, 1e-9);
  EXPECT_NEAR(ci->lo, 24.0746969482382, 1e-9);
  EXPECT_NEAR(ci->hi, 236.79486826915306, 1e-9);
}

TEST(MeanConfidenceInterval, GeometricIsSymmetricOnTheLogScale) {
  const std::vector<double> x = {1, std::exp(1.0), std::exp(2.0)};  // ln: 0, 1, 2
  auto ci = stats::mean_confidence_interval(x, MeanKind::geometric, 0.05);
  ASSERT_TRUE(ci);
  EXPECT_NEAR(ci->mean, std::exp(1.0), 1e-12);
  EXPECT_NEAR(ci->lo, 0.22669773521445666, 1e-9);
  EXPECT_NEAR(ci->hi, 32.594309298858164, 1e-8);
}

TEST(MeanConfidenceInterval, EdgeCases) {
  const std::vector<double> one = {5};
  auto single = stats::mean_confidence_interval(one, MeanKind::harmonic, 0.05);
  ASSERT_TRUE(single);
  EXPECT_EQ(single->lo, 5);
  EXPECT_EQ(single->hi, 5);
  const std::vector<double> with_zero = {0, 1, 2};
  EXPECT_FALSE(stats::mean_confidence_interval(with_zero, MeanKind::harmonic, 0.05));
  EXPECT_FALSE(stats::mean_confidence_interval(std::vector<double>{}, MeanKind::arithmetic, 0.05));
  EXPECT_TRUE(stats::mean_confidence_interval(with_zero, MeanKind::arithmetic, 0.05));
  EXPECT_THROW(stats::mean_confidence_interval(one, MeanKind::arithmetic, 0),
               std::invalid_argument);
  EXPECT_THROW(stats::mean_confidence_interval(one, MeanKind::arithmetic, 1),
               std::invalid_argument);
  // A wider level, a wider interval.
  const std::vector<double> x = {10, 12, 14};
  auto c90 = stats::mean_confidence_interval(x, MeanKind::arithmetic, 0.10);
  auto c99 = stats::mean_confidence_interval(x, MeanKind::arithmetic, 0.01);
  EXPECT_LT(c99->lo, c90->lo);
  EXPECT_GT(c99->hi, c90->hi);
}

TEST(PlotFormats, ErrorBarsAndIsoDates) {
  EXPECT_EQ(error_bars_from_string("ci"), ErrorBars::ci);
  EXPECT_EQ(error_bars_from_string("minmax"), ErrorBars::minmax);
  EXPECT_EQ(error_bars_from_string("none"), ErrorBars::none);
  EXPECT_EQ(to_string(ErrorBars::minmax), "minmax");
  EXPECT_THROW(error_bars_from_string("sd"), std::invalid_argument);
  EXPECT_EQ(utc_seconds("1970-01-02T00:00:01Z"), std::int64_t{86401});
  EXPECT_EQ(utc_seconds("2026-11-30T05:10:34Z"), std::int64_t{1796015434});
  EXPECT_FALSE(utc_seconds("2026-11-30 05:10:34"));
  EXPECT_FALSE(utc_seconds("2026-11-30T05:10:34Zjunk"));
}

TEST(PlotFormats, ImageFormatSizeAndGnuplotLookup) {
  EXPECT_EQ(image_format_for("out/a.png"), ImageFormat::png);
  EXPECT_EQ(image_format_for("A.SVG"), ImageFormat::svg);
  try {
    image_format_for("plot.pdf");
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("plot.pdf"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(".png or .svg"), std::string::npos) << e.what();
  }
  EXPECT_THROW(image_format_for("plot"), UsageError);
  EXPECT_EQ(parse_image_size("800x600"), std::make_pair(800, 600));
  EXPECT_EQ(parse_image_size("1024X768"), std::make_pair(1024, 768));
  for (const char* bad : {"800", "800x", "x600", "800x600x2", "50x600", "800x20000", "a x b"})
    EXPECT_THROW(parse_image_size(bad), UsageError) << bad;
  try {
    find_gnuplot("nightjar-no-such-gnuplot");
    FAIL() << "no error";
  } catch (const EnvironmentError& e) {
    EXPECT_NE(std::string(e.what()).find("gnuplot-nox"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("not installed"), std::string::npos) << e.what();
  }
  EXPECT_THROW(find_gnuplot("/nonexistent/gnuplot"), EnvironmentError);
  EXPECT_EQ(find_gnuplot("/bin/sh"), "/bin/sh");
}

// A store with pft runs: job `pftjob`, variants vanilla and patched, clients
// 1, 2, 4 and mode threads (and processes for vanilla when asked), size 256M.
class PlotStore : public ::testing::Test {
 protected:
  PlotStore() : store(dir.path() + "/r.db") {
    store.register_metrics(
        "pft",
        {{"faults_per_sec", "faults/sec", Direction::higher_is_better, MeanKind::harmonic, ""},
         {"faults_per_cpu", "faults/cpu-sec", Direction::higher_is_better, MeanKind::harmonic, ""},
         {"elapsed", "s", Direction::lower_is_better, MeanKind::arithmetic, ""}});
  }

  std::int64_t add_run(const std::string& variant, int clients, const std::string& mode,
                       const std::vector<double>& values, const std::string& build = "",
                       const std::string& job = "pftjob",
                       const std::string& kernel = "6.1.0-test") {
    NewRun r;
    r.job = job;
    r.cell.workload = "pft";
    r.cell.params["clients"] = ParamValue{std::to_string(clients), double(clients)};
    r.cell.params["mode"] = ParamValue{mode, 0};
    r.cell.params["size"] = ParamValue{"256M", 268435456.0};
    r.variant = variant;
    r.build = build;
    r.iterations = static_cast<int>(values.size());
    r.kernel.release = kernel;
    r.testbox.hostname = "box";
    r.testbox.cpu_model = "test cpu";
    r.testbox.cpus = 2;
    r.context = context;
    std::int64_t id = store.begin_run(r);
    int i = 0;
    for (double v : values) {
      IterationResult it;
      it.metrics["faults_per_sec"] = v;
      it.metrics["elapsed"] = 1e6 / v;
      store.add_iteration(id, ++i, it, {}, 0.1);
    }
    store.finish_run(id, RunStatus::complete);
    return id;
  }

  // vanilla: 1000·c·{0.98, 1, 1.02}; patched: 10% more.
  void add_scaling(bool processes = false) {
    for (const char* v : {"vanilla", "patched"})
      for (int c : {1, 2, 4}) {
        double f = 1000.0 * c * (std::string(v) == "patched" ? 1.1 : 1.0);
        add_run(v, c, "threads", {0.98 * f, f, 1.02 * f});
        if (processes && std::string(v) == "vanilla")
          add_run(v, c, "processes", {0.5 * f, 0.5 * f, 0.5 * f});
      }
  }

  PlotRequest scaling_request() {
    PlotRequest r;
    r.query.declared = &workload_catalog();
    r.selectors = parse_selectors({"vanilla", "patched"});
    r.x = "clients";
    r.metric = "faults_per_sec";
    return r;
  }

  std::string error_of(const PlotRequest& r) {
    try {
      build_plot_data(store, r);
    } catch (const UsageError& e) {
      return e.what();
    }
    return "(no usage error)";
  }

  TempDir dir;
  ResultsStore store;
  /// The run facts add_run records (vm.accelerator=tcg: a run under qemu TCG).
  std::map<std::string, std::string> context;
};

double hmean3(double a, double b, double c) {
  return 3 / (1 / a + 1 / b + 1 / c);
}

// --title replaces the first title line and keeps the job/kernel/testbox
// line; --label names the sides in the key, in order; too many labels is a
// usage error naming the counts (issue 19).
TEST_F(PlotStore, TitleAndLabelsAreTheUsersWords) {
  add_scaling();
  PlotRequest r = scaling_request();
  r.title = "Page faults with the pcp-drain series";
  r.labels = {"v6.1", "v6.1 + series"};
  PlotData d = build_plot_data(store, r);
  EXPECT_EQ(d.title,
            "Page faults with the pcp-drain series\njob pftjob, kernel 6.1.0-test, testbox box");
  ASSERT_EQ(d.series.size(), 2u);
  EXPECT_EQ(d.series[0].label, "v6.1");
  EXPECT_EQ(d.series[1].label, "v6.1 + series");
  EXPECT_EQ(d.series[0].side, "vanilla");  // the selector stays the side's identity
  r.labels = {"only the first"};
  d = build_plot_data(store, r);
  EXPECT_EQ(d.series[0].label, "only the first");
  EXPECT_EQ(d.series[1].label, "patched");
  r.labels = {"a", "b", "c"};
  EXPECT_NE(error_of(r).find("--label given 3 times for 2 side(s)"), std::string::npos)
      << error_of(r);
}

TEST_F(PlotStore, ScalingPlotHasOneLinePerSideWithCiBarsUnitsAndTitle) {
  add_scaling();
  PlotData d = build_plot_data(store, scaling_request());
  EXPECT_EQ(d.kind, PlotKind::scaling);
  EXPECT_EQ(d.title,
            "pftjob: faults_per_sec by clients\njob pftjob, kernel 6.1.0-test, testbox box");
  EXPECT_EQ(d.x_label, "clients (workers)");
  EXPECT_EQ(d.y_label, "Hmean faults_per_sec (faults/sec)");
  EXPECT_EQ(d.footnote, "error bars: 95% CI of the Hmean (t, n-1 df); n = 3 per point");
  EXPECT_EQ(d.x_scale, XScale::linear);
  using Tick = std::pair<double, std::string>;
  EXPECT_EQ(d.x_ticks, (std::vector<Tick>{{1, "1"}, {2, "2"}, {4, "4"}}));
  EXPECT_EQ(d.metric.unit, "faults/sec");
  EXPECT_EQ(d.kernels, "6.1.0-test");
  EXPECT_EQ(d.testboxes, "box");
  ASSERT_EQ(d.series.size(), 2u);
  EXPECT_EQ(d.series[0].label, "vanilla");
  EXPECT_EQ(d.series[1].label, "patched");
  for (std::size_t s = 0; s < 2; ++s) {
    ASSERT_EQ(d.series[s].points.size(), 3u);
    const double scale = s == 0 ? 1.0 : 1.1;
    int c = 1;
    for (const auto& p : d.series[s].points) {
      const double f = 1000.0 * c * scale;
      EXPECT_EQ(p.x, c);
      EXPECT_EQ(p.label, std::to_string(c));
      EXPECT_EQ(p.n, 3u);
      EXPECT_NEAR(p.mean, hmean3(0.98 * f, f, 1.02 * f), 1e-9 * f);
      EXPECT_DOUBLE_EQ(p.min, 0.98 * f);
      EXPECT_DOUBLE_EQ(p.max, 1.02 * f);
      auto ci = stats::mean_confidence_interval(p.samples, MeanKind::harmonic, 0.05);
      EXPECT_DOUBLE_EQ(p.lo, ci->lo);
      EXPECT_DOUBLE_EQ(p.hi, ci->hi);
      EXPECT_LT(p.lo, p.mean);
      EXPECT_GT(p.hi, p.mean);
      c *= 2;
    }
  }
  EXPECT_TRUE(d.notes.empty());
}

TEST_F(PlotStore, ErrorBarKindsAndConfidence) {
  add_scaling();
  PlotRequest r = scaling_request();
  r.error_bars = ErrorBars::minmax;
  PlotData mm = build_plot_data(store, r);
  EXPECT_DOUBLE_EQ(mm.series[0].points[0].lo, 980);
  EXPECT_DOUBLE_EQ(mm.series[0].points[0].hi, 1020);
  EXPECT_EQ(mm.footnote, "error bars: min to max of the samples; n = 3 per point");
  r.error_bars = ErrorBars::none;
  PlotData none = build_plot_data(store, r);
  EXPECT_EQ(none.series[0].points[0].lo, none.series[0].points[0].mean);
  EXPECT_EQ(none.footnote, "n = 3 per point");
  r.error_bars = ErrorBars::ci;
  r.confidence_pct = 90;
  PlotData c90 = build_plot_data(store, r);
  auto ci =
      stats::mean_confidence_interval(c90.series[1].points[2].samples, MeanKind::harmonic, 0.10);
  EXPECT_NEAR(c90.series[1].points[2].lo, ci->lo, 1e-9);
  EXPECT_EQ(c90.footnote, "error bars: 90% CI of the Hmean (t, n-1 df); n = 3 per point");
  r.confidence_pct = 100;
  EXPECT_NE(error_of(r).find("--confidence 100"), std::string::npos);
}

TEST_F(PlotStore, OtherVaryingParametersSplitLinesAndCategoricalAxes) {
  add_scaling(true);
  PlotData d = build_plot_data(store, scaling_request());
  ASSERT_EQ(d.series.size(), 3u);
  EXPECT_EQ(d.series[0].label, "vanilla mode=threads");
  EXPECT_EQ(d.series[1].label, "vanilla mode=processes");
  EXPECT_EQ(d.series[2].label, "patched mode=threads");
  EXPECT_NEAR(d.series[1].points[2].mean, 2000, 1e-9);

  // A choice parameter is a categorical axis in first-run order.
  PlotRequest r = scaling_request();
  r.x = "mode";
  r.selectors = parse_selectors({"vanilla"});
  PlotData m = build_plot_data(store, r);
  EXPECT_EQ(m.x_scale, XScale::category);
  using Tick = std::pair<double, std::string>;
  EXPECT_EQ(m.x_ticks, (std::vector<Tick>{{0, "threads"}, {1, "processes"}}));
  EXPECT_EQ(m.x_label, "mode");
  ASSERT_EQ(m.series.size(), 3u);  // one per clients value
  EXPECT_EQ(m.series[0].label, "vanilla clients=1");
  EXPECT_EQ(m.series[2].label, "vanilla clients=4");

  // A size parameter is numeric (bytes) with its stored text as ticks.
  r.x = "size";
  r.cell = {"mode=threads clients=2"};
  PlotData s = build_plot_data(store, r);
  EXPECT_EQ(s.x_scale, XScale::linear);
  EXPECT_EQ(s.x_ticks, (std::vector<Tick>{{268435456.0, "256M"}}));
  EXPECT_EQ(s.x_label, "size");
  ASSERT_EQ(s.series.size(), 1u);
  EXPECT_EQ(s.series[0].label, "vanilla");

  // --log-x needs a numeric axis.
  r.log_x = true;
  EXPECT_EQ(build_plot_data(store, r).x_scale, XScale::log);
  r.x = "mode";
  r.cell.clear();
  EXPECT_NE(error_of(r).find("--log-x: parameter mode is not numeric"), std::string::npos);
}

TEST_F(PlotStore, WithoutSelectorsEachVariantIsASide) {
  add_scaling();
  PlotRequest r = scaling_request();
  r.selectors.clear();
  PlotData d = build_plot_data(store, r);
  ASSERT_EQ(d.series.size(), 2u);
  EXPECT_EQ(d.series[0].label, "vanilla");
  EXPECT_EQ(d.series[1].label, "patched");
  r.query.job = "nosuchjob";
  EXPECT_NE(error_of(r).find("plot: no runs to plot (with --job nosuchjob); the database holds "
                             "variants patched, vanilla"),
            std::string::npos)
      << error_of(r);
}

TEST_F(PlotStore, UsageErrorsListWhatExists) {
  add_scaling();
  PlotRequest r = scaling_request();
  r.metric = "faults";
  EXPECT_EQ(error_of(r),
            "plot: --metric faults: no plotted cell has samples of 'faults'; the plotted runs "
            "hold metrics faults_per_sec, elapsed");
  r.metric = "";
  EXPECT_EQ(error_of(r),
            "plot: --metric is required; write --metric NAME, one of faults_per_sec, elapsed");
  r = scaling_request();
  r.x = "threads";
  EXPECT_EQ(error_of(r),
            "plot: --x threads: no plotted cell has a parameter 'threads'; their parameters are "
            "clients (1, 2, 4), mode (threads), size (256M); or write --x build or --x date for a "
            "history");
  r.x = "";
  EXPECT_EQ(error_of(r),
            "plot: --x is required; write --x PARAMETER for a scaling plot (the parameters are "
            "clients (1, 2, 4), mode (threads), size (256M)), or --x build or --x date for a "
            "history");
  r = scaling_request();
  r.cell = {"clients=3"};
  EXPECT_NE(error_of(r).find("plot: --cell clients=3: no cell matches; the cells are vanilla "
                             "pftjob [clients=1 mode=threads size=256M]"),
            std::string::npos)
      << error_of(r);
  r.cell = {"clients"};
  EXPECT_NE(error_of(r).find("write parameter=value pairs"), std::string::npos);
  r = scaling_request();
  r.selectors = parse_selectors({"vanilla", "patchd"});
  EXPECT_NE(error_of(r).find("plot selector 'patchd' matched no runs"), std::string::npos)
      << error_of(r);
  // A bad selector is refused where the command parses it, before any plot.
  try {
    (void)parse_selectors({"bogus=1"});
    ADD_FAILURE() << "bogus=1 parsed";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown key 'bogus'"), std::string::npos);
  }
  r = scaling_request();
  r.mark_changes = true;
  EXPECT_NE(error_of(r).find("--mark-changes"), std::string::npos);
}

// History: builds b1..b12 of one cell, level 1000 then 900 from b7 on.
class PlotHistory : public PlotStore {
 protected:
  void add_history() {
    std::mt19937_64 rng(7);
    std::normal_distribution<double> z(0, 1);
    for (int b = 1; b <= 12; ++b) {
      const double level = b < 7 ? 1000 : 900;
      std::vector<double> v;
      for (int k = 0; k < 3; ++k) v.push_back(level * (1 + 0.005 * z(rng)));
      std::int64_t id = add_run("vanilla", 2, "threads", v, "b" + std::to_string(b));
      // One day apart, from 2026-01-01.
      exec_sql(store.path(),
               fmt::format("UPDATE run SET started_at = '2026-01-{:02d}T06:00:00Z' WHERE id = {}",
                           b, id));
    }
  }
  PlotRequest history_request(const std::string& x = "build") {
    PlotRequest r;
    r.query.declared = &workload_catalog();
    r.x = x;
    r.metric = "faults_per_sec";
    r.mark_changes = true;
    return r;
  }
};

TEST_F(PlotHistory, BuildsInOrderWithSamplesMeansAndTrendsChangePoints) {
  add_history();
  PlotData d = build_plot_data(store, history_request());
  EXPECT_EQ(d.kind, PlotKind::history);
  EXPECT_EQ(d.x_scale, XScale::category);
  EXPECT_EQ(d.title,
            "pftjob: faults_per_sec by build of cell clients=2 mode=threads size=256M\njob "
            "pftjob, kernel 6.1.0-test, testbox box");
  EXPECT_EQ(d.footnote,
            "dots: samples; line: Hmean per build; error bars: 95% CI of the Hmean (t, n-1 df); "
            "n = 3 per point; dashed: change points (E-divisive + Welch, as nightjar trend)");
  ASSERT_EQ(d.series.size(), 1u);
  const PlotSeries& s = d.series[0];
  EXPECT_EQ(s.label, "vanilla");
  EXPECT_EQ(s.cell, "clients=2 mode=threads size=256M");
  ASSERT_EQ(s.points.size(), 12u);
  ASSERT_EQ(d.x_ticks.size(), 12u);
  for (int i = 0; i < 12; ++i) {
    EXPECT_EQ(s.points[i].label, "b" + std::to_string(i + 1));
    EXPECT_EQ(s.points[i].x, i);
    EXPECT_EQ(d.x_ticks[i].second, "b" + std::to_string(i + 1));
    EXPECT_EQ(s.points[i].samples.size(), 3u);
    EXPECT_EQ(s.points[i].date, fmt::format("2026-01-{:02d}T06:00:00Z", i + 1));
  }
  // The same points and change points as `nightjar trend`.
  TrendOptions t;
  t.job = "pftjob";
  t.metric = "faults_per_sec";
  TrendReport trend = compute_trend(store, t);
  ASSERT_EQ(trend.series.size(), 1u);
  ASSERT_EQ(trend.series[0].points.size(), 12u);
  for (int i = 0; i < 12; ++i) EXPECT_DOUBLE_EQ(s.points[i].mean, trend.series[0].points[i].mean);
  ASSERT_EQ(trend.series[0].change_points.size(), 1u);
  ASSERT_EQ(s.change_points.size(), 1u);
  EXPECT_EQ(s.change_points[0].index, 6u);
  EXPECT_EQ(s.change_points[0].index, trend.series[0].change_points[0].index);
  EXPECT_DOUBLE_EQ(s.change_points[0].pct_change, trend.series[0].change_points[0].pct_change);
  EXPECT_NEAR(s.change_points[0].pct_change, -10, 1);
}

// Invalid samples (docs/compare.md "Invalid samples"): a scaling point
// leaves them out and the footnote counts them; --include-invalid plots them
// and says so; a cell whose samples are all invalid is left out with a note
// naming the first reason.
TEST_F(PlotStore, InvalidSamplesAreLeftOutAndCounted) {
  add_scaling();
  // vanilla clients=2 gets a fourth, invalid sample (an impossible 1e9).
  const std::int64_t v2 = 2;
  IterationResult bad;
  bad.metrics["faults_per_sec"] = 1e9;
  bad.invalid = "scripted invalid sample";
  store.add_iteration(v2, 4, bad, {}, 0.1);
  // patched clients=8 holds invalid samples only.
  const std::int64_t p8 = add_run("patched", 8, "threads", {});
  for (int i = 1; i <= 2; ++i) store.add_iteration(p8, i, bad, {}, 0.1);

  PlotData d = build_plot_data(store, scaling_request());
  ASSERT_EQ(d.series.size(), 2u);
  const PlotPoint& two = d.series[0].points[1];
  EXPECT_EQ(two.label, "2");
  EXPECT_EQ(two.n, 3u);
  EXPECT_EQ(two.invalid, 1u);
  EXPECT_DOUBLE_EQ(two.max, 2040);
  EXPECT_NE(d.footnote.find("n = 3 per point, 1 invalid left out"), std::string::npos)
      << d.footnote;
  ASSERT_EQ(d.series[1].points.size(), 3u);  // patched clients=8 left out
  bool noted = false;
  for (const auto& n : d.notes)
    noted =
        noted || n.find(
                     "left out: its 2 sample(s) of faults_per_sec are all invalid "
                     "(first: run 7 iteration 1: scripted invalid sample)") != std::string::npos;
  EXPECT_TRUE(noted) << fmt::format("{}", fmt::join(d.notes, "\n"));

  PlotRequest r = scaling_request();
  r.query.include_invalid = true;
  PlotData all = build_plot_data(store, r);
  EXPECT_EQ(all.series[0].points[1].n, 4u);
  EXPECT_DOUBLE_EQ(all.series[0].points[1].max, 1e9);
  // patched clients=8 is plotted too, from its invalid samples.
  EXPECT_EQ(all.series[1].points.size(), 4u);
  EXPECT_NE(all.footnote.find("n = 2-4 per point, 3 invalid included"), std::string::npos)
      << all.footnote;
  EXPECT_EQ(all.notes.front(),
            "--include-invalid: invalid samples are plotted with the valid ones, for inspection");
}

// A history point leaves out the invalid samples of its runs and counts them.
TEST_F(PlotHistory, InvalidSamplesOfABuildAreLeftOut) {
  add_history();
  IterationResult bad;
  bad.metrics["faults_per_sec"] = 1;
  bad.invalid = "scripted invalid sample";
  store.add_iteration(12, 4, bad, {}, 0.1);  // build b12
  PlotData d = build_plot_data(store, history_request());
  const PlotPoint& last = d.series[0].points.back();
  EXPECT_EQ(last.label, "b12");
  EXPECT_EQ(last.n, 3u);
  EXPECT_EQ(last.invalid, 1u);
  EXPECT_GT(last.min, 800);
  EXPECT_NE(d.footnote.find("n = 3 per point, 1 invalid left out"), std::string::npos)
      << d.footnote;
}

TEST_F(PlotHistory, DatesPooledBuildsAndShortSeries) {
  add_history();
  // A second run of b12, an hour later, pools with the first.
  std::int64_t again = add_run("vanilla", 2, "threads", {900, 900, 900}, "b12");
  exec_sql(store.path(),
           fmt::format("UPDATE run SET started_at = '2026-01-12T07:00:00Z' WHERE id = {}", again));
  PlotData d = build_plot_data(store, history_request("date"));
  EXPECT_EQ(d.x_scale, XScale::time);
  EXPECT_TRUE(d.x_ticks.empty());
  ASSERT_EQ(d.series[0].points.size(), 12u);
  EXPECT_EQ(d.series[0].points[0].x, static_cast<double>(*utc_seconds("2026-01-01T06:00:00Z")));
  EXPECT_EQ(d.series[0].points[11].x, static_cast<double>(*utc_seconds("2026-01-12T06:00:00Z")));
  EXPECT_EQ(d.series[0].points[11].n, 6u);
  EXPECT_EQ(d.series[0].points[11].run_ids.size(), 2u);
  EXPECT_EQ(d.footnote,
            "dots: samples; line: Hmean per build; error bars: 95% CI of the Hmean (t, n-1 df); "
            "n = 3-6 per point; dashed: change points (E-divisive + Welch, as nightjar trend)");
  // Too short for change points: a note, none marked.
  PlotRequest r = history_request();
  r.cell = {"clients=2"};
  r.selectors = parse_selectors({"build=b1"});
  PlotData one = build_plot_data(store, r);
  ASSERT_EQ(one.series.size(), 1u);
  EXPECT_TRUE(one.series[0].change_points.empty());
  ASSERT_EQ(one.notes.size(), 1u);
  EXPECT_EQ(one.notes[0],
            "build=b1: 1 build(s), too few to find change points (needs 10, 5 on each side)");
}

// A flat series (every value equal) gets a y range of +-10% around its
// value, so that gnuplot's ticks do not all read "0.1"; a varying one gets
// its range padded by 6% (as the SVG figures), since its ticks are set too
// (issue 36).
TEST(PlotScript, AFlatSeriesGetsAReadableYRange) {
  PlotData d;
  d.title = "flat";
  PlotSeries s;
  s.label = "a";
  for (double x : {1.0, 2.0, 4.0}) {
    PlotPoint p;
    p.x = p.x_drawn = x;
    p.mean = p.lo = p.hi = 0.1;
    p.samples = {0.1, 0.1};
    p.n = 2;
    s.points.push_back(p);
  }
  d.series.push_back(s);
  const ImageSpec img{ImageFormat::svg, 640, 480};
  const std::string flat = gnuplot_script(d, img, "/tmp/flat.svg");
  const auto at = flat.find("set yrange [");
  ASSERT_NE(at, std::string::npos) << flat;
  double lo = 0, hi = 0;
  ASSERT_EQ(std::sscanf(flat.c_str() + at, "set yrange [%lf:%lf]", &lo, &hi), 2) << flat;
  EXPECT_NEAR(lo, 0.09, 1e-12);
  EXPECT_NEAR(hi, 0.11, 1e-12);
  d.series[0].points[2].hi = 0.2;
  d.series[0].points[2].samples = {0.1, 0.2};
  const std::string varying = gnuplot_script(d, img, "/tmp/varying.svg");
  ASSERT_EQ(
      std::sscanf(varying.c_str() + varying.find("set yrange ["), "set yrange [%lf:%lf]", &lo, &hi),
      2)
      << varying;
  EXPECT_NEAR(lo, 0.1 - 0.006, 1e-12);
  EXPECT_NEAR(hi, 0.2 + 0.006, 1e-12);
}

// A history of one series "a" through `points` (x, y): each point's mean,
// lo, hi and only sample are y.
PlotData history_of(XScale scale, const std::vector<std::pair<double, double>>& points) {
  PlotData h;
  h.kind = PlotKind::history;
  h.x_scale = scale;
  h.error_bars = ErrorBars::none;
  PlotSeries s;
  s.label = "a";
  for (const auto& [x, y] : points) {
    PlotPoint p;
    p.x = p.x_drawn = x;
    p.mean = p.lo = p.hi = y;
    p.samples = {y};
    s.points.push_back(p);
  }
  h.series = {s};
  return h;
}

// Issue 36: the y ticks of gnuplot's figures are labelled as the SVG
// figures' (plots/ticks.h), "2.40G" and "485.5k", never gnuplot's e-notation
// ("2.4e+09" with its default format).
TEST(PlotScript, YTicksReadAsNumbersNotENotation) {
  for (double level : {2.4e9, 485500.0, 0.00012}) {
    PlotData d = history_of(XScale::category, {{0, level}, {1, level * 1.004}, {2, level * 1.008}});
    for (auto& p : d.series[0].points) {
      p.samples = {p.mean * 0.999, p.mean * 1.001};
      d.x_ticks.emplace_back(p.x, "b" + std::to_string(d.x_ticks.size()));
    }
    const std::string script = gnuplot_script(d, ImageSpec{}, "o.png");
    const auto at = script.find("set ytics (\"");
    ASSERT_NE(at, std::string::npos) << script;
    const std::string line = script.substr(at, script.find('\n', at) - at);
    std::smatch m;
    EXPECT_FALSE(std::regex_search(line, m, std::regex("\"[^\"]*[0-9]e[+-]"))) << line;
    EXPECT_EQ(script.find("set format y"), std::string::npos) << script;
  }
}

// The footnote is wrapped to the image: its parts joined while they fit, and
// a part longer than a line (the whole cell of an exec job) broken at its
// spaces, or anywhere in a word longer than a line; nothing is lost.
TEST(PlotScript, TheFootnoteWrapsALongCellToTheImageWidth) {
  PlotData d;
  d.title = "wall_time by build";
  PlotSeries s;
  s.label = "default";
  PlotPoint p;
  p.x = p.x_drawn = 1;
  p.mean = p.lo = p.hi = 1;
  p.samples = {1};
  p.n = 1;
  s.points.push_back(p);
  d.series.push_back(s);
  const std::string cell =
      "cell command=sh -c 'seq 1 200000 | sort -R --random-source=/dev/zero | sort -n | tail -n "
      "1 >/dev/null' metrics=wall_time cpu_time parse=kv shell=off stream=stdout timeout=60s "
      "path=/" +
      std::string(150, 'x');
  d.footnote = "dots: samples; n = 3 per point; " + cell;
  const ImageSpec img{ImageFormat::png, 600, 400};  // lines of at most 100 characters
  const std::string script = gnuplot_script(d, img, "/tmp/foot.png");
  const auto at = script.find("set label 1 \"");
  ASSERT_NE(at, std::string::npos) << script;
  const auto end = script.find("\" at screen", at);
  ASSERT_NE(end, std::string::npos) << script;
  const std::string label = script.substr(at + 13, end - at - 13);
  std::vector<std::string> lines;
  for (std::size_t from = 0;;) {
    const auto nl = label.find("\\n", from);
    lines.push_back(label.substr(from, nl == std::string::npos ? nl : nl - from));
    if (nl == std::string::npos) break;
    from = nl + 2;
  }
  ASSERT_GE(lines.size(), 4u) << label;
  EXPECT_EQ(lines[0], "dots: samples; n = 3 per point;");
  std::string joined;
  for (const auto& line : lines) {
    EXPECT_LE(line.size(), 100u) << line;
    joined += line;
  }
  // Every character of the cell is there, in order (spaces became breaks).
  std::string cell_chars, joined_chars;
  for (char c : cell)
    if (c != ' ') cell_chars += c;
  for (char c : joined.substr(lines[0].size()))
    if (c != ' ') joined_chars += c;
  EXPECT_EQ(joined_chars, cell_chars);
}

// Points pooled from runs under qemu TCG are marked in the record, drawn
// again as open black triangles titled "TCG: measures emulation" in the key,
// and explained in the footnote (issue 16).
TEST_F(PlotStore, PointsOfRunsUnderTcgAreMarkedInTheKeyAndFootnote) {
  for (int c : {1, 2, 4}) add_run("vanilla", c, "threads", {980.0 * c, 1000.0 * c, 1020.0 * c});
  context = {{"vm.accelerator", "tcg"}};
  for (int c : {1, 2}) add_run("patched", c, "threads", {1078.0 * c, 1100.0 * c, 1122.0 * c});
  context = {};
  add_run("patched", 4, "threads", {4312, 4400, 4488});
  PlotData d = build_plot_data(store, scaling_request());
  ASSERT_EQ(d.series.size(), 2u);
  for (const auto& p : d.series[0].points) EXPECT_FALSE(p.emulated) << p.label;
  ASSERT_EQ(d.series[1].points.size(), 3u);
  EXPECT_TRUE(d.series[1].points[0].emulated);
  EXPECT_TRUE(d.series[1].points[1].emulated);
  EXPECT_FALSE(d.series[1].points[2].emulated);
  EXPECT_NE(d.footnote.find("triangles: TCG: measures emulation (points of runs under qemu TCG"),
            std::string::npos)
      << d.footnote;
  const std::string script = gnuplot_script(d, ImageSpec{ImageFormat::svg, 640, 480}, "o.svg");
  EXPECT_NE(script.find(", \\\n     '-' using 1:2 with points pointtype 8 pointsize 2 linewidth "
                        "1.5 linecolor rgb 'black' title \"TCG: measures emulation\"\n"),
            std::string::npos)
      << script;
  std::size_t blocks = 0, pos = 0;
  while ((pos = script.find("\ne\n", pos)) != std::string::npos) ++blocks, ++pos;
  EXPECT_EQ(blocks, 3u) << script;  // two lines, then the two marked points
  // Without a run under TCG, no mark.
  PlotRequest r = scaling_request();
  r.selectors = parse_selectors({"vanilla"});
  const PlotData plain = build_plot_data(store, r);
  EXPECT_EQ(plain.footnote.find("TCG"), std::string::npos);
  EXPECT_EQ(gnuplot_script(plain, ImageSpec{}, "o.png").find("TCG"), std::string::npos);
}

TEST_F(PlotStore, GnuplotCommandsCarryTheRecord) {
  add_scaling();
  PlotData d = build_plot_data(store, scaling_request());
  ImageSpec img{ImageFormat::svg, 640, 480};
  const std::string script = gnuplot_script(d, img, "/tmp/it's.svg");
  auto has = [&](const std::string& s) { return script.find(s) != std::string::npos; };
  EXPECT_TRUE(has("set terminal svg size 640,480 noenhanced")) << script;
  EXPECT_TRUE(has("set output '/tmp/it''s.svg'\n")) << script;
  EXPECT_TRUE(
      has("set title \"pftjob: faults_per_sec by clients\\njob pftjob, kernel "
          "6.1.0-test, testbox box\"\n"))
      << script;
  EXPECT_TRUE(has("set xlabel \"clients (workers)\"\n")) << script;
  EXPECT_TRUE(has("set ylabel \"Hmean faults_per_sec (faults/sec)\"\n")) << script;
  EXPECT_TRUE(has("set xtics (\"1\" 1, \"2\" 2, \"4\" 4)\n")) << script;
  EXPECT_TRUE(
      has("plot '-' using 1:2:3:4 with yerrorlines pointtype 7 pointsize 0.8 linewidth "
          "1.5 linecolor 1 title \"vanilla\", \\\n     '-' using 1:2:3:4 with yerrorlines "
          "pointtype 7 pointsize 0.8 linewidth 1.5 linecolor 2 title \"patched\"\n"))
      << script;
  // Two data blocks of three rows, each ended by "e".
  std::size_t blocks = 0, pos = 0;
  while ((pos = script.find("\ne\n", pos)) != std::string::npos) ++blocks, ++pos;
  EXPECT_EQ(blocks, 2u) << script;
  // The two lines are dodged: clients=1 drawn at 1 -/+ 1.2% of the span 3 / 2.
  EXPECT_TRUE(has("\n9.8199999")) << script;
  EXPECT_TRUE(has("\n1.0180000")) << script;
  EXPECT_DOUBLE_EQ(d.series[0].points[0].x, 1.0);  // ticks and labels stay at x
  EXPECT_DOUBLE_EQ(d.series[0].points[0].x_drawn, 1 - 0.012 * 0.5 * 3);
  EXPECT_DOUBLE_EQ(d.series[1].points[2].x_drawn, 4 + 0.012 * 0.5 * 3);

  PlotData h;
  h.kind = PlotKind::history;
  h.x_scale = XScale::category;
  h.error_bars = ErrorBars::none;
  h.x_ticks = {{0, "b1"}, {1, "b2"}};
  PlotSeries s;
  s.label = "x \"quoted\"";
  for (int i = 0; i < 2; ++i) {
    PlotPoint p;
    p.x = i;
    p.label = "b" + std::to_string(i + 1);
    p.mean = p.lo = p.hi = 10 + i;
    p.samples = {9.0 + i, 11.0 + i};
    s.points.push_back(p);
  }
  stats::ChangePoint cp;
  cp.index = 1;
  cp.pct_change = 10;
  s.change_points = {cp};
  h.series = {s};
  const std::string hs = gnuplot_script(h, ImageSpec{}, "o.png");
  EXPECT_NE(hs.find("set terminal pngcairo size 800,600"), std::string::npos) << hs;
  EXPECT_NE(hs.find("set xrange [-0.5:1.5]"), std::string::npos) << hs;
  EXPECT_NE(hs.find("set arrow 1 from 0.5, graph 0 to 0.5, graph 1 nohead dashtype 2"),
            std::string::npos)
      << hs;
  EXPECT_NE(hs.find("set label 2 \"b2 +10.0%\" at 0.5, graph 0.97"), std::string::npos) << hs;
  EXPECT_NE(hs.find("plot '-' using 1:2 with points pointtype 6 pointsize 0.6 linecolor 1 notitle, "
                    "\\\n     '-' using 1:2 with linespoints pointtype 7 pointsize 0.8 linewidth "
                    "1.5 linecolor 1 title \"x \\\"quoted\\\"\"\n"),
            std::string::npos)
      << hs;
}

// A date axis labels its ticks for the span it shows (issue 19).
TEST(PlotDates, TheTickFormatFollowsTheSpan) {
  auto script_for = [](double span_seconds) {
    const PlotData h = history_of(XScale::time, {{1.7e9, 1}, {1.7e9 + span_seconds, 1}});
    return gnuplot_script(h, ImageSpec{}, "o.png");
  };
  EXPECT_NE(script_for(1800).find("set format x \"%H:%M:%S\" timedate"), std::string::npos);
  EXPECT_NE(script_for(1800).find("set xtics 300\n"), std::string::npos);  // 8 ticks or fewer
  EXPECT_NE(script_for(4).find("set xtics 1\n"), std::string::npos);       // never below a second
  EXPECT_NE(script_for(86400).find("set format x \"%m-%d %H:%M\" timedate"), std::string::npos);
  EXPECT_NE(script_for(90 * 86400).find("set format x \"%Y-%m-%d\" timedate"), std::string::npos);
  EXPECT_NE(script_for(3 * 365 * 86400.0).find("set format x \"%Y-%m\" timedate"),
            std::string::npos);
}

// Renderer safety, with stand-in gnuplot programs.
class RenderSafety : public PlotStore {
 protected:
  std::string fake_gnuplot(const std::string& body) {
    std::string path = dir.write("fake-gnuplot", "#!/bin/sh\n" + body + "\n");
    ::chmod(path.c_str(), 0755);
    return path;
  }
  std::vector<std::string> files() {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(out_dir))
      out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }
  std::string render_error(const std::string& gnuplot, double timeout = 30) {
    add_scaling();
    PlotData d = build_plot_data(store, scaling_request());
    try {
      render_plot(d, ImageSpec{}, output, gnuplot, timeout);
    } catch (const EnvironmentError& e) {
      return e.what();
    }
    return "(no error)";
  }
  void SetUp() override {
    out_dir = dir.path() + "/out";
    std::filesystem::create_directories(out_dir);
    output = out_dir + "/plot.png";
    std::ofstream(output) << "previous image";
  }
  std::string out_dir, output;
};

TEST_F(RenderSafety, FailingGnuplotLeavesTheOutputAsItWas) {
  auto gp = fake_gnuplot("cat > /dev/null; echo 'line 7: undefined variable: boom' >&2; exit 3");
  std::string err = render_error(gp);
  EXPECT_NE(err.find("exited with 3"), std::string::npos) << err;
  EXPECT_NE(err.find("line 7: undefined variable: boom"), std::string::npos) << err;
  EXPECT_NE(err.find("was left as it was"), std::string::npos) << err;
  EXPECT_EQ(test::read_file(output), "previous image");
  EXPECT_EQ(files(), std::vector<std::string>{"plot.png"});
}

TEST_F(RenderSafety, GnuplotThatExitsAtOnceDoesNotKillNightjar) {
  // Exits before reading: writing the commands meets a closed pipe (SIGPIPE
  // is ignored while plotting), and its status is reported.
  std::string err = render_error(fake_gnuplot("exit 1"));
  EXPECT_NE(err.find("exited with 1"), std::string::npos) << err;
  EXPECT_EQ(test::read_file(output), "previous image");
  EXPECT_EQ(files(), std::vector<std::string>{"plot.png"});
}

TEST_F(RenderSafety, AFileThatIsNoImageIsNotInstalled) {
  // Writes garbage to the file named by `set output` and exits 0.
  auto gp = fake_gnuplot(
      "while read -r line; do case \"$line\" in \"set output '\"*) f=${line#set output \\'}; "
      "f=${f%\\'}; echo garbage > \"$f\";; esac; done");
  std::string err = render_error(gp);
  EXPECT_NE(err.find("did not write a valid PNG image"), std::string::npos) << err;
  EXPECT_NE(err.find("it does not start with the PNG signature"), std::string::npos) << err;
  EXPECT_EQ(test::read_file(output), "previous image");
  EXPECT_EQ(files(), std::vector<std::string>{"plot.png"});
}

TEST_F(RenderSafety, HangingGnuplotIsKilledAfterTheTimeout) {
  std::string marker = dir.path() + "/pid";
  auto gp = fake_gnuplot("echo $$ > " + marker + "; exec sleep 60");
  std::string err = render_error(gp, 0.5);
  EXPECT_NE(err.find("ran longer than 0.5 s"), std::string::npos) << err;
  EXPECT_EQ(test::read_file(output), "previous image");
  EXPECT_EQ(files(), std::vector<std::string>{"plot.png"});
  const std::string pid = test::read_file(marker);
  ASSERT_FALSE(pid.empty());
  EXPECT_FALSE(std::filesystem::exists("/proc/" + pid.substr(0, pid.find('\n'))))
      << "gnuplot stand-in still running";
  EXPECT_TRUE(test::children_of(::getpid()).empty());
}

TEST_F(RenderSafety, RealGnuplotReplacesTheOutput) {
  std::string gp;
  try {
    gp = find_gnuplot();
  } catch (const EnvironmentError& e) {
    GTEST_SKIP() << e.what();
  }
  add_scaling();
  PlotData d = build_plot_data(store, scaling_request());
  render_plot(d, ImageSpec{ImageFormat::png, 640, 480}, output, gp);
  const std::string png = test::read_file(output);
  ASSERT_GT(png.size(), 24u);
  EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  EXPECT_EQ(png.substr(12, 4), "IHDR");
  auto be32 = [&](std::size_t at) {
    return (static_cast<unsigned>(static_cast<unsigned char>(png[at])) << 24) |
           (static_cast<unsigned>(static_cast<unsigned char>(png[at + 1])) << 16) |
           (static_cast<unsigned>(static_cast<unsigned char>(png[at + 2])) << 8) |
           static_cast<unsigned>(static_cast<unsigned char>(png[at + 3]));
  };
  EXPECT_EQ(be32(16), 640u);
  EXPECT_EQ(be32(20), 480u);
  EXPECT_EQ(files(), std::vector<std::string>{"plot.png"});
  EXPECT_TRUE(test::children_of(::getpid()).empty());
}

}  // namespace
}  // namespace nightjar
