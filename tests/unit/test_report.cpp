// Unit under test: results/render/report.{h,cpp} (`nightjar report`'s changelog and
// markdown layouts) on comparison records built by build_comparison from
// hand-made samples, so every mean is exact:
//  - check 1 of the reports issue: the post's two-build block (10482.7 ->
//    12413.7 Mbps, "18.4% improvement") and the clients x PREEMPT_RT matrix
//    of the memcg-stocks post (docs/reference.md "Changelog tables"), as golden files
//    (tests/golden/report.*; NIGHTJAR_UPDATE_GOLDEN=1 rewrites them);
//  - every changelog line plain ASCII, <= 72 columns, no trailing blank;
//  - usage errors for an unknown --by / --group / --metric.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "quiet_testbox.h"
#include "results/compare/comparison.h"
#include "results/model/exit_codes.h"
#include "results/render/report.h"
#include "test_support.h"

namespace nightjar {
namespace {

using V = std::vector<double>;
using Params = std::vector<std::pair<std::string, std::string>>;

const MetricCatalog kCatalog = {
    {"tcp_sendfile",
     {{"throughput", "Mbps", Direction::higher_is_better, MeanKind::harmonic, ""},
      {"latency", "ms", Direction::lower_is_better, MeanKind::arithmetic, ""}}},
};

// Five samples whose harmonic mean is exactly `hmean`: x_i = hmean / f_i with
// the f_i averaging 1, so n / sum(1/x_i) = hmean * n / sum(f_i) = hmean.
// CoeffVar ~1.6%.
V with_hmean(double hmean) {
  V out;
  for (double f : {0.98, 0.99, 1.0, 1.01, 1.02}) out.push_back(hmean / f);
  return out;
}

struct Cell {
  Params params;
  V throughput;
};

LoadedSide side(const std::string& name, const std::vector<Cell>& cells) {
  LoadedSide s;
  s.selector = parse_selector(name);
  std::int64_t run = 1;
  for (const auto& c : cells) {
    std::string id;
    for (const auto& [k, v] : c.params) id += (id.empty() ? "" : " ") + k + "=" + v;
    CellSamples cs;
    cs.first_run = run;
    cs.run_ids = {run++};
    cs.params = c.params;
    cs.metrics["throughput"] = c.throughput;
    std::sort(cs.metrics["throughput"].begin(), cs.metrics["throughput"].end());
    s.run_ids.push_back(cs.first_run);
    s.cells[{"tcp_sendfile", "netperf", id}] = cs;
  }
  s.variants = {name};
  return s;
}

void expect_changelog_text(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    EXPECT_LE(line.size(), 72u) << "line " << n << ": " << line;
    EXPECT_TRUE(line.empty() || line.back() != ' ') << "trailing blank, line " << n;
    for (unsigned char ch : line)
      EXPECT_TRUE(ch == '\t' || (ch >= 0x20 && ch < 0x7f)) << "not plain ASCII, line " << n;
  }
}

TEST(Report, PostsTwoBuildBlock) {
  Comparison c = build_comparison(
      {side("vanilla", {{{}, with_hmean(10482.7)}}), side("patched", {{{}, with_hmean(12413.7)}})},
      kCatalog, {}, false, test::quiet_testbox());
  ReportOptions o;
  o.labels = {"Without (6.0-rc1)", "With patch"};
  const std::string out = render_report(c, o);
  EXPECT_NE(out.find("Without (6.0-rc1)  10482.7 Mbps\n"), std::string::npos) << out;
  EXPECT_NE(out.find("With patch         12413.7 Mbps (18.4% improvement)\n"), std::string::npos)
      << out;
  expect_changelog_text(out);
  test::expect_golden("report.block.txt", out);
}

TEST(Report, NotSignificantIsSaidSo) {
  // +0.3% with CoeffVar 1.6% at n = 5: Welch cannot tell; the block says so.
  Comparison c =
      build_comparison({side("a", {{{}, with_hmean(1000)}}), side("b", {{{}, with_hmean(1003)}})},
                       kCatalog, {}, false, test::quiet_testbox());
  const std::string out = render_report(c, {});
  EXPECT_NE(out.find("b  1003.0 Mbps (0.3% better, inconclusive)\n"), std::string::npos) << out;
  // More digits show the same words: an untested change is "better", never "improvement".
  ReportOptions o;
  o.precision = 2;
  const std::string two = render_report(c, o);
  EXPECT_NE(two.find("(0.30% better, inconclusive)"), std::string::npos) << two;
  EXPECT_EQ(two.find("improvement"), std::string::npos) << two;
}

// The matrix of the PREEMPT_RT post: clients 6..36, two kernel configs,
// means as posted.
std::vector<Cell> preempt_rt(bool with_series) {
  const double rt[2][6] = {{38559.1, 37388.8, 30707.5, 25908.4, 22347.7, 20235.1},
                           {38652.6, 37560.1, 31378.3, 26423.9, 22326.5, 20165.0}};
  const double nort[2][6] = {{50235.7, 49336.5, 46306.8, 38145.7, 30347.6, 26976.6},
                             {51415.4, 49901.4, 46482.7, 38729.4, 31698.2, 27364.4}};
  std::vector<Cell> cells;
  const int clients[] = {6, 12, 18, 24, 30, 36};
  for (int i = 0; i < 6; ++i) {
    cells.push_back({{{"clients", std::to_string(clients[i])}, {"config", "PREEMPT_RT"}},
                     with_hmean(rt[with_series][i])});
    cells.push_back({{{"clients", std::to_string(clients[i])}, {"config", "!PREEMPT_RT"}},
                     with_hmean(nort[with_series][i])});
  }
  return cells;
}

TEST(Report, PostsMatrixPerKernelConfig) {
  Comparison c =
      build_comparison({side("without", preempt_rt(false)), side("with", preempt_rt(true))},
                       kCatalog, {}, false, test::quiet_testbox());
  ReportOptions o;
  o.by = "clients";
  o.group = "config";
  o.labels = {"Without series", "With series"};
  const std::string out = render_report(c, o);
  expect_changelog_text(out);
  EXPECT_NE(out.find("PREEMPT_RT config:\n------------------\n"), std::string::npos) << out;
  EXPECT_NE(out.find("!PREEMPT_RT config:\n-------------------\n"), std::string::npos) << out;
  EXPECT_NE(out.find("  6     | 38559.1 Mbps   | 38652.6 Mbps (+0.2%)"), std::string::npos) << out;
  // Rows sorted numerically (12 after 6), not as text.
  EXPECT_LT(out.find("  6     |"), out.find("  12    |"));
  test::expect_golden("report.matrix.txt", out);

  o.format = "markdown";
  const std::string md = render_report(c, o);
  EXPECT_NE(md.find("| clients | Without series | With series |\n|--:|--:|--:|\n"),
            std::string::npos)
      << md;
  test::expect_golden("report.matrix.md", md);
}

TEST(Report, TooWideLabelsBecomeLettersSpelledOutBelow) {
  Comparison c = build_comparison({side("without", preempt_rt(false)),
                                   side("with", preempt_rt(true)), side("v3", preempt_rt(true))},
                                  kCatalog, {}, false, test::quiet_testbox());
  ReportOptions o;
  o.by = "clients";
  o.group = "config";
  o.labels = {"Without the series (6.0-rc1, PREEMPT_RT)", "With the memcg stock series v3",
              "With series v3 and the follow-up fix"};
  const std::string out = render_report(c, o);
  expect_changelog_text(out);
  EXPECT_NE(out.find("clients | A "), std::string::npos) << out;
  EXPECT_NE(out.find("\nA: Without the series (6.0-rc1, PREEMPT_RT)\n"), std::string::npos) << out;
}

TEST(Report, OtherStatisticsAndMetrics) {
  Comparison c = build_comparison(
      {side("a", {{{}, {100, 100, 100, 200}}}), side("b", {{{}, {110, 110, 110, 110}}})}, kCatalog,
      {}, false, test::quiet_testbox());
  ReportOptions o;
  o.stat = ReportStat::median;
  EXPECT_NE(render_report(c, o).find("Results (Median throughput of tcp_sendfile):\na  100.0 Mbps"),
            std::string::npos)
      << render_report(c, o);
  o.stat = ReportStat::amean;
  EXPECT_NE(render_report(c, o).find("a  125.0 Mbps"), std::string::npos);
  o.stat = ReportStat::own_mean;  // Hmean: 4 / (3/100 + 1/200) = 114.29
  EXPECT_NE(render_report(c, o).find("a  114.3 Mbps"), std::string::npos);
  EXPECT_EQ(report_stat_from_string("hmean"), ReportStat::hmean);
  EXPECT_THROW(report_stat_from_string("gmean"), UsageError);
}

TEST(Report, UnknownAxesAndMetricsAreUsageErrorsListingWhatExists) {
  Comparison c =
      build_comparison({side("without", preempt_rt(false)), side("with", preempt_rt(true))},
                       kCatalog, {}, false, test::quiet_testbox());
  ReportOptions o;
  o.by = "threads";
  try {
    render_report(c, o);
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--by threads: not a parameter of the compared cells; "
                                         "parameters: clients, config"),
              std::string::npos)
        << e.what();
  }
  o.by = "clients";
  o.group = "clients";
  EXPECT_THROW(render_report(c, o), UsageError);
  o.group = "kernel_config";
  EXPECT_THROW(render_report(c, o), UsageError);
  o.group = "";
  o.metric = "faults";
  try {
    render_report(c, o);
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("metrics: throughput"), std::string::npos) << e.what();
  }
}

// Issue 16's table, measured in qemu guests under TCG: every row of the
// matrix ends with the [TCG] tag, the legend explains it and carries n,
// CoeffVar and the smallest detectable change, and the groups have the
// user's titles (--group-label); all within 72 columns (golden
// tests/golden/report.tcg.txt).
TEST(Report, RowsMeasuredUnderTcgAreTaggedAndGroupsTakeTheUsersTitles) {
  LoadedSide without = side("without", preempt_rt(false)), with = side("with", preempt_rt(true));
  for (LoadedSide* s : {&without, &with}) {
    s->accelerators = {"tcg"};
    s->emulated_runs.insert(s->run_ids.begin(), s->run_ids.end());
  }
  Comparison c = build_comparison({without, with}, kCatalog, {}, false, test::quiet_testbox());
  ReportOptions o;
  o.by = "clients";
  o.group = "config";
  o.labels = {"Without series", "With series"};
  o.group_labels = {{"PREEMPT_RT", "RT kernel (6.1.0-18-rt-amd64)"},
                    {"!PREEMPT_RT", "generic kernel (6.1.0-18-amd64)"}};
  const std::string out = render_report(c, o);
  expect_changelog_text(out);
  EXPECT_NE(out.find("RT kernel (6.1.0-18-rt-amd64):\n"), std::string::npos) << out;
  EXPECT_NE(out.find("generic kernel (6.1.0-18-amd64):\n"), std::string::npos) << out;
  EXPECT_EQ(out.find("PREEMPT_RT config"), std::string::npos) << out;
  EXPECT_NE(out.find("  6     | 38559.1 Mbps   | 38652.6 Mbps (+0.2%)? [TCG]\n"), std::string::npos)
      << out;
  // The legend (wrapped at 72 columns): n, CoeffVar, the detectable change.
  EXPECT_NE(out.find(">=1%, n=5,"), std::string::npos) << out;
  EXPECT_NE(out.find("CoeffVar 1.6%, detects >=3.2%)"), std::string::npos) << out;
  EXPECT_NE(out.find("Warning: [TCG] TCG: measures emulation: every side ran under qemu TCG"),
            std::string::npos)
      << out;
  test::expect_golden("report.tcg.txt", out);

  // Blocks: each side's line of a run under TCG.
  ReportOptions blocks;
  blocks.labels = o.labels;
  const std::string b = render_report(c, blocks);
  expect_changelog_text(b);
  EXPECT_NE(b.find("Without series  38559.1 Mbps [TCG]\n"), std::string::npos) << b;

  // A title for a value the group does not have is a usage error listing them.
  o.group_labels = {{"RT", "RT kernel"}};
  try {
    render_report(c, o);
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--group-label RT=RT kernel: 'RT' is not a value of "
                                         "--group config; its values: !PREEMPT_RT, PREEMPT_RT"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace nightjar
