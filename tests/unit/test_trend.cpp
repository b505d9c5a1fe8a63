// Unit under test: results/compare/trend.{h,cpp} and results/render/trend.{h,cpp} -- loading a
// metric's history from the results store (points = builds, ordered by build date or --order,
// pooled runs, unlabelled runs, cell filters, failed runs ignored), the
// change points found in it, the three renderers and the errors.
#include "results/compare/trend.h"
#include "results/render/trend.h"

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <random>

#include "results/model/exit_codes.h"
#include "test_support.h"

namespace nightjar {
namespace {

using test::TempDir;

class TrendTest : public ::testing::Test {
 protected:
  TrendTest() : store(dir.path() + "/r.db") {
    store.register_metrics(
        "fake", {{"throughput", "ops/s", Direction::higher_is_better, MeanKind::harmonic, ""},
                 {"latency", "ms", Direction::lower_is_better, MeanKind::arithmetic, ""}});
  }

  std::int64_t add_run(const std::string& build, const std::vector<double>& values,
                       const std::string& clients = "1", RunStatus status = RunStatus::complete,
                       const std::string& job = "nightly") {
    NewRun r;
    r.job = job;
    r.cell.workload = "fake";
    r.cell.params["clients"] = ParamValue{clients, std::stod(clients)};
    r.variant = "default";
    r.build = build;
    r.iterations = static_cast<int>(values.size());
    r.kernel.release = "6.1.0-test";
    r.testbox.hostname = "box";
    std::int64_t id = store.begin_run(r);
    int i = 0;
    for (double v : values) {
      IterationResult it;
      it.metrics["throughput"] = v;
      it.metrics["latency"] = 1000 / v;
      store.add_iteration(id, ++i, it, {}, 0.1);
    }
    store.finish_run(id, status, status == RunStatus::complete ? "" : "test");
    return id;
  }

  // One build per point: `levels[i]` times CoeffVar-1% noise, 3 samples.
  void add_history(const std::vector<double>& levels, const std::string& prefix = "b",
                   const std::string& clients = "1") {
    std::mt19937_64 rng(42);
    std::normal_distribution<double> z(0, 1);
    for (std::size_t i = 0; i < levels.size(); ++i) {
      std::vector<double> v;
      for (int k = 0; k < 3; ++k) v.push_back(levels[i] * (1 + 0.01 * z(rng)));
      add_run(prefix + std::to_string(i + 1), v, clients);
    }
  }

  TrendOptions options(const std::string& metric = "throughput") {
    TrendOptions o;
    o.job = "nightly";
    o.metric = metric;
    return o;
  }

  TempDir dir;
  ResultsStore store;
};

std::vector<double> step_levels(std::size_t n, std::size_t at, double before, double after) {
  std::vector<double> v;
  for (std::size_t i = 0; i < n; ++i) v.push_back(i < at ? before : after);
  return v;
}

TEST_F(TrendTest, FindsTheBuildWhereTheLevelChanged) {
  add_history(step_levels(30, 15, 100, 90));
  TrendReport r = compute_trend(store, options());
  ASSERT_EQ(r.series.size(), 1u);
  const TrendSeries& s = r.series[0];
  EXPECT_EQ(s.cell, "clients=1");
  ASSERT_EQ(s.points.size(), 30u);
  EXPECT_EQ(s.points[0].build, "b1");
  EXPECT_EQ(s.points[0].n, 3u);
  ASSERT_EQ(s.change_points.size(), 1u);
  EXPECT_EQ(s.change_points[0].index, 15u);
  EXPECT_EQ(s.points[15].build, "b16");
  EXPECT_NEAR(s.change_points[0].pct_change, -10, 1.5);
  EXPECT_LT(s.change_points[0].p, 1e-6);
  EXPECT_EQ(r.detection.mean, MeanKind::harmonic);
  EXPECT_EQ(r.detection.direction, Direction::higher_is_better);

  std::string text = render_trend_text(r, true);
  EXPECT_NE(text.find("trend of throughput (ops/s, higher is better, Hmean) in job nightly"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("E-divisive means"), std::string::npos);
  EXPECT_NE(text.find("b16"), std::string::npos);
  EXPECT_NE(text.find("regression"), std::string::npos);
  EXPECT_NE(text.find("<- change point"), std::string::npos) << text;

  auto j = nlohmann::json::parse(render_trend_json(r));
  EXPECT_EQ(j["format"], "nightjar-trend");
  EXPECT_EQ(j["version"], 1);
  EXPECT_EQ(j["detection"]["max_p"], 0.001);
  EXPECT_EQ(j["detection"]["window"], 50);
  EXPECT_EQ(j["detection"]["min_segment"], 5);
  ASSERT_EQ(j["series"][0]["change_points"].size(), 1u);
  EXPECT_EQ(j["series"][0]["change_points"][0]["build"], "b16");
  EXPECT_EQ(j["series"][0]["change_points"][0]["previous_build"], "b15");
  EXPECT_EQ(j["series"][0]["change_points"][0]["verdict"], "regression");
  EXPECT_EQ(j["series"][0]["points"].size(), 30u);

  std::string md = render_trend_markdown(r);
  EXPECT_NE(md.find("| b16 |"), std::string::npos) << md;

  // Latency (lower is better) rose at the same build: also a regression.
  TrendReport lat = compute_trend(store, options("latency"));
  ASSERT_EQ(lat.series[0].change_points.size(), 1u);
  EXPECT_EQ(lat.series[0].change_points[0].index, 15u);
  EXPECT_LT(lat.series[0].change_points[0].pct_change, -9);  // latency rose: worse
}

TEST_F(TrendTest, FlatHistoryHasNoChangePoint) {
  add_history(std::vector<double>(40, 100));
  TrendReport r = compute_trend(store, options());
  EXPECT_TRUE(r.series[0].change_points.empty());
  EXPECT_NE(render_trend_text(r, false).find("0 change point(s)"), std::string::npos);
}

TEST_F(TrendTest, PossibleChangeInTheNewestNightsNeedsConfirmation) {
  // Three cells of 12 nights at 100 (CoeffVar 1%): a drop to 90 on the last
  // night, -10% on the last 4 nights, a one-night spike in the middle.
  std::vector<double> last(12, 100), four(12, 100), spike(12, 100);
  last[11] = 90;
  for (int i = 8; i < 12; ++i) four[i] = 90;
  spike[5] = 90;
  add_history(last, "l", "1");
  add_history(four, "f", "2");
  add_history(spike, "s", "3");
  TrendReport r = compute_trend(store, options());
  ASSERT_EQ(r.series.size(), 3u);
  std::map<std::string, const TrendSeries*> by;
  for (const auto& s : r.series) by[s.cell] = &s;
  const TrendSeries& l = *by.at("clients=1");
  const TrendSeries& f = *by.at("clients=2");
  const TrendSeries& s = *by.at("clients=3");
  for (const TrendSeries* t : {&l, &f, &s}) EXPECT_TRUE(t->change_points.empty()) << t->cell;
  ASSERT_TRUE(l.possible_change);
  EXPECT_EQ(l.possible_change->index, 11u);
  ASSERT_TRUE(f.possible_change);
  // Since night 9 (index 8) or, when the first of the four is closer to the
  // old level, night 10: the smallest adjusted p picks k.
  EXPECT_GE(f.possible_change->index, 8u);
  EXPECT_LE(f.possible_change->index, 9u);
  EXPECT_FALSE(s.possible_change);

  const std::string text = render_trend_text(r, true);
  EXPECT_NE(text.find("possible change since night 12 (l12), needs confirmation (1 night): "),
            std::string::npos)
      << text;
  EXPECT_TRUE(text.find("possible change since night 9 (f9), needs confirmation (4 nights): ") !=
                  std::string::npos ||
              text.find("possible change since night 10 (f10), needs confirmation (3 nights): ") !=
                  std::string::npos)
      << text;
  EXPECT_NE(text.find("<- possible change: -"), std::string::npos) << text;
  EXPECT_EQ(text.find("possible change since night 6"), std::string::npos) << text;
  EXPECT_NE(render_trend_markdown(r).find("- possible change since night 12 (l12)"),
            std::string::npos);
  auto j = nlohmann::json::parse(render_trend_json(r));
  int with = 0;
  for (const auto& js : j["series"])
    if (!js["possible_change"].is_null()) {
      ++with;
      EXPECT_EQ(js["possible_change"]["verdict"], "regression");
    }
  EXPECT_EQ(with, 2);
}

TEST_F(TrendTest, RunsOfOneBuildArePooledAndUnlabelledRunsArePointsOfTheirOwn) {
  add_run("a", {100, 101});
  add_run("b", {100, 99});
  add_run("a", {102});  // a second run of build a, later
  std::int64_t lone = add_run("", {98, 97});
  add_run("c", {100}, "1", RunStatus::failed);  // failed runs are ignored
  TrendReport r = compute_trend(store, options());
  const auto& pts = r.series[0].points;
  ASSERT_EQ(pts.size(), 3u);
  EXPECT_EQ(pts[0].build, "a");
  EXPECT_EQ(pts[0].run_ids.size(), 2u);
  EXPECT_EQ(pts[0].n, 3u);
  EXPECT_NEAR(pts[0].mean, 3 / (1 / 100.0 + 1 / 101.0 + 1 / 102.0), 1e-9);
  EXPECT_EQ(pts[1].build, "b");
  EXPECT_EQ(pts[2].build, "run:" + std::to_string(lone));
  EXPECT_NE(render_trend_text(r, false).find("too short"), std::string::npos);
}

TEST_F(TrendTest, ExplicitOrderAndNotes) {
  add_history(step_levels(20, 10, 100, 90));
  TrendOptions o = options();
  for (int i = 20; i >= 1; --i) o.order.push_back("b" + std::to_string(i));
  o.order.push_back("missing");
  TrendReport r = compute_trend(store, o);
  ASSERT_EQ(r.series[0].points.size(), 20u);
  EXPECT_EQ(r.series[0].points[0].build, "b20");
  ASSERT_EQ(r.series[0].change_points.size(), 1u);
  EXPECT_EQ(r.series[0].change_points[0].index, 10u);
  EXPECT_GT(r.series[0].change_points[0].pct_change, 9);  // reversed: an improvement
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_NE(r.notes[0].find("missing"), std::string::npos);
  o.order = {"nope"};
  EXPECT_THROW(compute_trend(store, o), UsageError);
}

TEST_F(TrendTest, OneSeriesPerCellAndCellFilter) {
  add_history(step_levels(12, 6, 100, 80), "b", "1");
  add_history(std::vector<double>(12, 50), "b", "2");
  TrendReport all = compute_trend(store, options());
  ASSERT_EQ(all.series.size(), 2u);
  EXPECT_EQ(all.series[0].cell, "clients=1");
  EXPECT_EQ(all.series[1].cell, "clients=2");
  EXPECT_EQ(all.series[0].change_points.size(), 1u);
  EXPECT_TRUE(all.series[1].change_points.empty());
  TrendOptions o = options();
  o.cell = {"clients=2"};
  TrendReport two = compute_trend(store, o);
  ASSERT_EQ(two.series.size(), 1u);
  EXPECT_EQ(two.series[0].cell, "clients=2");
  o.cell = {"clients=3"};
  EXPECT_THROW(compute_trend(store, o), UsageError);
  o.cell = {"clients"};
  EXPECT_THROW(compute_trend(store, o), UsageError);
}

TEST_F(TrendTest, ErrorsNameWhatTheDatabaseHolds) {
  add_history(std::vector<double>(4, 100));
  TrendOptions o = options();
  o.job = "other";
  try {
    compute_trend(store, o);
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("jobs: nightly"), std::string::npos) << e.what();
  }
  o = options("speed");
  try {
    compute_trend(store, o);
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("its metrics are latency, throughput"), std::string::npos)
        << e.what();
  }
  o = options();
  o.detection.max_p = 2;
  EXPECT_THROW(compute_trend(store, o), std::invalid_argument);
  o = options();
  o.job = "jobs/nightly.yaml";  // a path names its stem
  EXPECT_EQ(compute_trend(store, o).job, "nightly");
}

}  // namespace
}  // namespace nightjar
