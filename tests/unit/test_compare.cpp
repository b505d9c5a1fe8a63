// Unit under test: results/compare/selector.{h,cpp} (parse_selector), results/
// comparison.{h,cpp} (build_comparison, check_exit_code, format_counts) and the
// layout helpers of results/render/compare_*.cpp on hand-built records. The layouts
// end to end, from a database written by the real binary, are the golden
// tests in tests/cli/test_compare_cli.cpp.
#include <gtest/gtest.h>

#include <cctype>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "quiet_testbox.h"
#include "results/compare/comparison.h"
#include "results/compare/selector.h"
#include "results/model/exit_codes.h"
#include "results/model/text.h"
#include "results/render/compare.h"
#include "test_support.h"

namespace nightjar {
namespace {

using V = std::vector<double>;

// ---------------------------------------------------------------------------
// Selectors
// ---------------------------------------------------------------------------

TEST(Selector, BareWordIsTheVariant) {
  Selector s = parse_selector("vanilla");
  EXPECT_EQ(s.text, "vanilla");
  EXPECT_EQ(s.variant, "vanilla");
  EXPECT_TRUE(s.build.empty());
  EXPECT_FALSE(s.run_id.has_value());
}

TEST(Selector, KeysCombineWithCommas) {
  Selector s =
      parse_selector("build=v6.18,kernel=6.1.0-13-amd64, testbox = box1,job=pft,workload=pft");
  EXPECT_EQ(s.build, "v6.18");
  EXPECT_EQ(s.kernel, "6.1.0-13-amd64");
  EXPECT_EQ(s.testbox, "box1");  // blanks around keys and values are ignored
  EXPECT_EQ(s.job, "pft");
  EXPECT_EQ(s.workload, "pft");
  EXPECT_TRUE(s.variant.empty());
  Selector r = parse_selector("run=42");
  ASSERT_TRUE(r.run_id.has_value());
  EXPECT_EQ(*r.run_id, 42);
  Selector m = parse_selector("patched,build=v2");  // a bare word among pairs: the variant
  EXPECT_EQ(m.variant, "patched");
  EXPECT_EQ(m.build, "v2");
}

TEST(Selector, ValuesMayHoldEqualsAndDashes) {
  Selector s = parse_selector("variant=5.18.0-rc1-vanilla");
  EXPECT_EQ(s.variant, "5.18.0-rc1-vanilla");
  EXPECT_EQ(parse_selector("build=a=b").build, "a=b");  // split at the first '='
}

struct BadSelector {
  const char* text;
  const char* says;  // part of the message
};

// The selector as gtest prints it ("'run=abc'"), not as a byte dump.
void PrintTo(const BadSelector& s, std::ostream* os) {
  *os << "'" << s.text << "'";
}

class BadSelectors : public ::testing::TestWithParam<BadSelector> {};

TEST_P(BadSelectors, AreUsageErrorsNamingTheSelectorAndTheFix) {
  const BadSelector& c = GetParam();
  try {
    parse_selector(c.text);
    FAIL() << "accepted '" << c.text << "'";
  } catch (const UsageError& e) {
    std::string msg = e.what();
    EXPECT_EQ(e.code(), ExitCode::usage);
    EXPECT_NE(msg.find(std::string("selector '") + c.text + "'"), std::string::npos) << msg;
    EXPECT_NE(msg.find(c.says), std::string::npos) << msg;
    EXPECT_NE(msg.find("write a variant name"), std::string::npos) << msg;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, BadSelectors,
    ::testing::Values(BadSelector{"", "empty"}, BadSelector{"  ", "empty"},
                      BadSelector{"a,,b", "between commas is empty"},
                      BadSelector{"build=v1,", "between commas is empty"},
                      BadSelector{"colour=red", "unknown key 'colour'"},
                      BadSelector{"build=", "'build=' has no value"},
                      BadSelector{"=v1", "no key before '='"},
                      BadSelector{"variant=a,variant=b", "'variant' is given twice"},
                      BadSelector{"a,b", "'variant' is given twice"},
                      BadSelector{"run=abc", "not a run id"}, BadSelector{"run=0", "not a run id"},
                      BadSelector{"run=-3", "not a run id"}, BadSelector{"run=7x", "not a run id"}),
    [](const ::testing::TestParamInfo<BadSelector>& info) {
      // "3_build_v1_": the index keeps names unique, the text says which.
      std::string name = std::to_string(info.index) + "_";
      for (const char* c = info.param.text; *c; ++c) name += std::isalnum(*c) ? *c : '_';
      return name;
    });

// ---------------------------------------------------------------------------
// The comparison builder, on hand-made sides
// ---------------------------------------------------------------------------

const MetricCatalog kCatalog = {
    {"fake",
     {{"throughput", "ops/s", Direction::higher_is_better, MeanKind::harmonic, ""},
      {"latency", "ms", Direction::lower_is_better, MeanKind::arithmetic, ""}}},
};

// A cell of job `job` with parameters `params` (name=value ...), `runs` runs.
struct CellSpec {
  std::string job = "j";
  std::vector<std::pair<std::string, std::string>> params;
  std::map<std::string, V> metrics;
  std::map<std::string, V> monitors;
  int runs = 1;
  std::int64_t first_run = 1;
  std::map<std::string, InvalidSamples> invalid = {};
};

LoadedSide side(const std::string& name, const std::vector<CellSpec>& cells) {
  LoadedSide s;
  s.selector = parse_selector(name);
  for (const auto& c : cells) {
    std::string id;
    for (const auto& [k, v] : c.params) id += (id.empty() ? "" : " ") + k + "=" + v;
    CellSamples cs;
    cs.first_run = c.first_run;
    for (int r = 0; r < c.runs; ++r) cs.run_ids.push_back(c.first_run + r);
    cs.params = c.params;
    cs.metrics = c.metrics;
    cs.monitors = c.monitors;
    cs.invalid = c.invalid;
    for (auto id2 : cs.run_ids) s.run_ids.push_back(id2);
    s.cells[{"fake", c.job, id}] = cs;
  }
  s.variants = {name};
  return s;
}

const CalibrationLookup kQuietTestbox = test::quiet_testbox();

const V kBase{100, 102, 98, 101, 99};
const V kMinus10{90, 91.8, 88.2, 90.9, 89.1};  // kBase × 0.9: a 10% drop, same CoeffVar
// CoeffVar 0.08%: identical sides are "unchanged" (the data could have shown a
// 1% change); kBase's 1.6% at n = 5 could only show ~3%, so kBase against
// itself is "inconclusive" (docs/statistics.md).
const V kQuiet{1000, 1001, 999, 1000.5, 999.5};
const V kQuietMinus10{900, 900.9, 899.1, 900.45, 899.55};

TEST(Comparison, MatchesCellsAndLabelsOperationsByTheParametersThatVary) {
  std::vector<CellSpec> a = {
      {"j",
       {{"clients", "1"}, {"mode", "threads"}, {"size", "1M"}},
       {{"throughput", kBase}},
       {},
       1,
       1},
      {"j",
       {{"clients", "2"}, {"mode", "threads"}, {"size", "1M"}},
       {{"throughput", kBase}},
       {},
       1,
       2},
      {"j",
       {{"clients", "4"}, {"mode", "threads"}, {"size", "1M"}},
       {{"throughput", kBase}},
       {},
       1,
       3},
  };
  std::vector<CellSpec> b = {a[0], a[1]};  // clients=4 only on the base side
  Comparison c = build_comparison({side("a", a), side("b", b)}, kCatalog, {});
  ASSERT_EQ(c.rows.size(), 2u);
  EXPECT_EQ(c.rows[0].operation, "throughput-1");  // only clients varies among the matched cells
  EXPECT_EQ(c.rows[1].operation, "throughput-2");
  ASSERT_EQ(c.unmatched.size(), 1u);
  EXPECT_EQ(c.unmatched[0].cell, "clients=4 mode=threads size=1M");
  EXPECT_EQ(c.unmatched[0].present_on, std::vector<std::string>{"a"});
  bool noted = false;
  for (const auto& n : c.notes)
    noted = noted || n.find("unmatched: j [clients=4") != std::string::npos;
  EXPECT_TRUE(noted);
}

TEST(Comparison, SeveralVaryingParametersAndOneCell) {
  std::vector<CellSpec> two = {
      {"j", {{"clients", "1"}, {"mode", "threads"}}, {{"throughput", kBase}}, {}, 1, 1},
      {"j", {{"clients", "2"}, {"mode", "processes"}}, {{"throughput", kBase}}, {}, 1, 2},
  };
  Comparison c = build_comparison({side("a", two), side("b", two)}, kCatalog, {});
  ASSERT_EQ(c.rows.size(), 2u);
  EXPECT_EQ(c.rows[0].operation, "throughput-1-threads");  // parameter-name order
  EXPECT_EQ(c.rows[1].operation, "throughput-2-processes");

  std::vector<CellSpec> one = {{"j", {{"clients", "1"}}, {{"throughput", kBase}}, {}, 1, 1}};
  Comparison d = build_comparison({side("a", one), side("b", one)}, kCatalog, {});
  ASSERT_EQ(d.rows.size(), 1u);
  EXPECT_EQ(d.rows[0].operation, "throughput");  // nothing varies: the bare metric
}

TEST(Comparison, SeveralJobsPrefixTheJobAndAmbiguousLabelsFallBackToTheFullCell) {
  std::vector<CellSpec> cells = {
      {"j1", {{"x", "1"}}, {{"throughput", kBase}}, {}, 1, 1},
      {"j2", {{"x", "1"}}, {{"throughput", kBase}}, {}, 1, 2},
  };
  Comparison c = build_comparison({side("a", cells), side("b", cells)}, kCatalog, {});
  ASSERT_EQ(c.rows.size(), 2u);
  EXPECT_EQ(c.rows[0].operation, "j1:throughput");
  EXPECT_EQ(c.rows[1].operation, "j2:throughput");

  // "a-b" + "c" and "a" + "b-c" would both read "throughput-a-b-c".
  std::vector<CellSpec> amb = {
      {"j", {{"p", "a-b"}, {"q", "c"}}, {{"throughput", kBase}}, {}, 1, 1},
      {"j", {{"p", "a"}, {"q", "b-c"}}, {{"throughput", kBase}}, {}, 1, 2},
  };
  Comparison d = build_comparison({side("a", amb), side("b", amb)}, kCatalog, {});
  ASSERT_EQ(d.rows.size(), 2u);
  EXPECT_NE(d.rows[0].operation, d.rows[1].operation);
  EXPECT_EQ(d.rows[0].operation, "throughput-p=a-b,q=c");
  EXPECT_EQ(d.rows[1].operation, "throughput-p=a,q=b-c");
}

TEST(Comparison, PlantedRegressionIsStarredAndCounted) {
  std::vector<CellSpec> a = {{"j", {{"x", "1"}}, {{"throughput", kBase}}, {}, 1, 1}};
  std::vector<CellSpec> b = {{"j", {{"x", "1"}}, {{"throughput", kMinus10}}, {}, 1, 2}};
  Comparison c = build_comparison({side("a", a), side("b", b)}, kCatalog, {}, false, kQuietTestbox);
  ASSERT_EQ(c.rows.size(), 1u);
  const ComparisonRow& r = c.rows[0];
  ASSERT_TRUE(r.significance[1].has_value());
  EXPECT_FALSE(r.significance[0].has_value());
  EXPECT_EQ(r.significance[1]->verdict, stats::Verdict::regression);
  // Hmean(kBase) = 99.994999825; Hmean(kMinus10) = 0.9 × that: exactly -10%.
  EXPECT_NEAR(r.change_pct[1], -10.0, 1e-9);
  EXPECT_NEAR(r.plain_change_pct[1], -10.0, 1e-9);
  EXPECT_EQ(c.counts[0].regressions, 1);
  EXPECT_EQ(c.verdict, "1 regression, 0 improvements, 0 unchanged, 0 inconclusive");
  EXPECT_EQ(check_exit_code(c), ExitCode::regression);
}

TEST(Comparison, StatisticLinesFollowMmtestsAndTheMetricsMean) {
  std::vector<CellSpec> a = {
      {"j", {}, {{"throughput", kBase}, {"latency", {10, 11, 12}}}, {}, 1, 1}};
  std::vector<CellSpec> b = {
      {"j", {}, {{"throughput", kBase}, {"latency", {11, 12, 13}}}, {}, 1, 2}};
  Comparison c = build_comparison({side("a", a), side("b", b)}, kCatalog, {});
  ASSERT_EQ(c.rows.size(), 2u);
  const ComparisonRow& tput = c.rows[0];  // declared order: throughput, latency
  const ComparisonRow& lat = c.rows[1];
  EXPECT_EQ(tput.name, "throughput");
  std::vector<std::string> names;
  for (const auto& l : tput.lines) names.push_back(l.name);
  EXPECT_EQ(names, (std::vector<std::string>{"Min", "Hmean", "Stddev", "CoeffVar", "Max",
                                             "BHmean-50", "BHmean-95", "BHmean-99"}));
  names.clear();
  for (const auto& l : lat.lines) names.push_back(l.name);
  EXPECT_EQ(names, (std::vector<std::string>{"Min", "Amean", "Stddev", "CoeffVar", "Max",
                                             "BAmean-50", "BAmean-95", "BAmean-99"}));
  EXPECT_TRUE(lat.lines[1].main);
  EXPECT_FALSE(lat.lines[0].main);
  // latency: Amean 11 -> 12 is 100 - 12·100/11 = -9.0909% (lower is better).
  EXPECT_NEAR(lat.lines[1].pct[1], 100.0 - 1200.0 / 11.0, 1e-9);
  EXPECT_NEAR(lat.plain_change_pct[1], 1200.0 / 11.0 - 100.0, 1e-9);
  // Stddev 1 -> 1: 0%; BAmean-50 of {10,11,12}: int(1.5) = 1 sample, the best (lowest) = 10.
  EXPECT_DOUBLE_EQ(lat.lines[2].value[0], 1.0);
  EXPECT_DOUBLE_EQ(lat.lines[2].pct[1], 0.0);
  EXPECT_DOUBLE_EQ(lat.lines[5].value[0], 10.0);
  EXPECT_DOUBLE_EQ(lat.lines[5].value[1], 11.0);
  // throughput: BHmean-50 of kBase: int(2.5) = 2 best = 102 and 101 -> 2/(1/102+1/101).
  EXPECT_NEAR(tput.lines[5].value[0], 2.0 / (1.0 / 102 + 1.0 / 101), 1e-9);
  EXPECT_EQ(tput.lines[1].pct[0], 0.0);  // the baseline column
}

TEST(Comparison, StddevAndCoeffVarUseTheLowerIsBetterFormula) {
  std::vector<CellSpec> a = {{"j", {}, {{"throughput", {90, 100, 110}}}, {}, 1, 1}};
  std::vector<CellSpec> b = {{"j", {}, {{"throughput", {80, 100, 120}}}, {}, 1, 2}};
  Comparison c = build_comparison({side("a", a), side("b", b)}, kCatalog, {});
  const auto& stddev = c.rows[0].lines[2];
  ASSERT_EQ(stddev.name, "Stddev");
  EXPECT_DOUBLE_EQ(stddev.value[0], 10.0);
  EXPECT_DOUBLE_EQ(stddev.value[1], 20.0);
  EXPECT_DOUBLE_EQ(stddev.pct[1], -100.0);  // twice the spread: 100 - 20·100/10
}

TEST(Comparison, FamilyIsEveryRowOfTheComparison) {
  // Twenty rows, one with a moderate change: alone it is significant, but
  // Benjamini-Hochberg across the family raises its q.
  std::vector<CellSpec> a, b;
  for (int i = 0; i < 20; ++i) {
    V base{100, 103, 97, 101, 99}, now = base;
    if (i == 0)
      for (double& x : now) x *= 0.96;
    a.push_back({"j", {{"i", std::to_string(i)}}, {{"throughput", base}}, {}, 1, i + 1});
    b.push_back({"j", {{"i", std::to_string(i)}}, {{"throughput", now}}, {}, 1, 100 + i});
  }
  Comparison all = build_comparison({side("a", a), side("b", b)}, kCatalog, {});
  Comparison one = build_comparison({side("a", {a[0]}), side("b", {b[0]})}, kCatalog, {});
  ASSERT_EQ(all.rows.size(), 20u);
  const auto& s_all = *all.rows[0].significance[1];
  const auto& s_one = *one.rows[0].significance[1];
  ASSERT_TRUE(s_all.p && s_all.q && s_one.q);
  EXPECT_DOUBLE_EQ(*s_all.p, *s_one.p);  // same test
  EXPECT_DOUBLE_EQ(*s_one.q, *s_one.p);  // a family of one
  EXPECT_GT(*s_all.q, *s_all.p);         // BH over 20 rows
}

TEST(Comparison, PooledRunsAreNotedAndCounted) {
  std::vector<CellSpec> a = {{"j", {}, {{"throughput", {100, 101, 99, 100, 100, 101}}}, {}, 2, 1}};
  std::vector<CellSpec> b = {{"j", {}, {{"throughput", {100, 101, 99}}}, {}, 1, 5}};
  Comparison c = build_comparison({side("a", a), side("b", b)}, kCatalog, {});
  EXPECT_EQ(c.rows[0].sides[0].runs, 2);
  EXPECT_EQ(c.rows[0].sides[1].runs, 1);
  EXPECT_EQ(c.rows[0].sides[0].summary.n, 6u);
  ASSERT_FALSE(c.notes.empty());
  EXPECT_EQ(c.notes[0], "a: pooled 2 runs per cell");
}

TEST(Comparison, MonitorRowsComeAfterAndHaveNoVerdict) {
  std::vector<CellSpec> a = {{"j",
                              {},
                              {{"throughput", kQuiet}},
                              {{"vmstat.pgfault", {100, 100, 100}}, {"cpu.util_pct", {50, 50, 50}}},
                              1,
                              1}};
  std::vector<CellSpec> b = {{"j",
                              {},
                              {{"throughput", kQuiet}},
                              {{"vmstat.pgfault", {150, 150, 150}}, {"cpu.util_pct", {50, 50, 50}}},
                              1,
                              2}};
  Comparison c = build_comparison({side("a", a), side("b", b)}, kCatalog, {}, false, kQuietTestbox);
  ASSERT_EQ(c.rows.size(), 3u);
  EXPECT_EQ(c.rows[0].kind, ComparisonRow::Kind::metric);
  EXPECT_EQ(c.rows[1].kind, ComparisonRow::Kind::monitor);
  EXPECT_EQ(c.rows[1].operation, "cpu.util_pct");  // grouped by prefix: name order
  EXPECT_EQ(c.rows[2].operation, "vmstat.pgfault");
  EXPECT_FALSE(c.rows[2].significance[1].has_value());
  EXPECT_DOUBLE_EQ(c.rows[2].change_pct[1], 50.0);  // plain: more faults is +50%
  ASSERT_EQ(c.rows[2].lines.size(), 1u);
  EXPECT_EQ(c.rows[2].lines[0].name, "Amean");
  EXPECT_FALSE(c.rows[2].lines[0].main);
  // Monitors are not key metrics: the verdict counts the one metric row only.
  EXPECT_EQ(c.verdict, "0 regressions, 0 improvements, 1 unchanged, 0 inconclusive");
  EXPECT_EQ(check_exit_code(c), ExitCode::ok);
}

TEST(Comparison, ExitCodeRegressionWinsOverInconclusive) {
  std::vector<CellSpec> a = {{"j", {{"x", "1"}}, {{"throughput", kBase}}, {}, 1, 1},
                             {"j", {{"x", "2"}}, {{"throughput", {100, 101}}}, {}, 1, 2}};
  std::vector<CellSpec> b = {{"j", {{"x", "1"}}, {{"throughput", kMinus10}}, {}, 1, 3},
                             {"j", {{"x", "2"}}, {{"throughput", {100, 101}}}, {}, 1, 4}};
  Comparison c = build_comparison({side("a", a), side("b", b)}, kCatalog, {}, false, kQuietTestbox);
  EXPECT_EQ(c.verdict, "1 regression, 0 improvements, 0 unchanged, 1 inconclusive");
  EXPECT_EQ(check_exit_code(c), ExitCode::regression);
  // Without the regression the inconclusive row decides: exit 3.
  Comparison d = build_comparison({side("a", {a[1]}), side("b", {b[1]})}, kCatalog, {});
  EXPECT_EQ(check_exit_code(d), ExitCode::inconclusive);
  ASSERT_TRUE(d.rows[0].significance[1]->iterations_needed.has_value());
}

TEST(Comparison, UndefinedMeanIsUndefinedAndGatesAsInconclusive) {
  std::vector<CellSpec> a = {{"j", {}, {{"throughput", {100, 0, 100}}}, {}, 1, 1}};
  std::vector<CellSpec> b = {{"j", {}, {{"throughput", {100, 100, 100}}}, {}, 1, 2}};
  Comparison c = build_comparison({side("a", a), side("b", b)}, kCatalog, {});
  EXPECT_FALSE(c.rows[0].sides[0].mean.has_value());  // Hmean of a 0 sample
  EXPECT_EQ(c.rows[0].significance[1]->verdict, stats::Verdict::undefined);
  EXPECT_EQ(c.verdict, "0 regressions, 0 improvements, 0 unchanged, 0 inconclusive, 1 undefined");
  EXPECT_EQ(check_exit_code(c), ExitCode::inconclusive);
  EXPECT_TRUE(std::isnan(c.rows[0].lines[1].value[0]));
}

// The runner's rule (results/model/metric.h impossible_value()).
TEST(ImpossibleValue, RatesAndTimesMustBePositiveAndEveryValueFinite) {
  const MetricDescriptor rate{.name = "throughput", .unit = "ops/s", .doc = ""};
  const MetricDescriptor ratio{.name = "speedup", .mean = MeanKind::geometric, .doc = ""};
  const MetricDescriptor time{.name = "latency",
                              .unit = "ms",
                              .direction = Direction::lower_is_better,
                              .mean = MeanKind::arithmetic,
                              .doc = ""};
  MetricDescriptor cpu = time;
  cpu.unit = "s";
  cpu.zero_is_measured = true;
  const MetricDescriptor count{.name = "faults",
                               .direction = Direction::lower_is_better,
                               .mean = MeanKind::arithmetic,
                               .doc = ""};
  EXPECT_FALSE(impossible_value(rate, 9810));
  EXPECT_EQ(impossible_value(rate, 0).value_or(""),
            "throughput = 0 ops/s: a rate (Hmean) must be positive");
  EXPECT_TRUE(impossible_value(rate, -1));
  EXPECT_TRUE(impossible_value(ratio, 0));
  EXPECT_FALSE(impossible_value(time, 0.5));
  EXPECT_EQ(impossible_value(time, 0).value_or(""), "latency = 0 ms: a time must be positive");
  EXPECT_FALSE(impossible_value(cpu, 0));  // a CPU time in clock ticks may be 0
  EXPECT_EQ(impossible_value(cpu, -0.01).value_or(""),
            "latency = -0.01 s: a time must be 0 or more");
  EXPECT_FALSE(impossible_value(count, 0));  // a count or a percentage of 0 is measured
  EXPECT_TRUE(impossible_value(count, std::numeric_limits<double>::infinity()));
  EXPECT_TRUE(impossible_value(count, std::nan("")));
}

// Invalid samples (docs/compare.md "Invalid samples"): left out of the
// figures by the store, counted in the row, named in the notes.
TEST(Comparison, InvalidSamplesAreCountedBesideNAndNamedInTheNotes) {
  const InvalidSamples zero{1, "throughput = 0 ops/s: a rate (Hmean) must be positive", 2, 4};
  std::vector<CellSpec> a = {{"j", {}, {{"throughput", kQuiet}}, {}, 1, 1}};
  std::vector<CellSpec> b = {
      {"j", {}, {{"throughput", {9810, 9790, 9805, 9800}}}, {}, 1, 2, {{"throughput", zero}}}};
  Comparison c = build_comparison({side("a", a), side("b", b)}, kCatalog, {});
  ASSERT_EQ(c.rows.size(), 1u);
  EXPECT_EQ(c.rows[0].sides[0].invalid, 0);
  EXPECT_EQ(c.rows[0].sides[1].invalid, 1);
  EXPECT_EQ(c.rows[0].sides[1].summary.n, 4u);
  EXPECT_NEAR(*c.rows[0].sides[1].mean, 9801.24, 0.005);
  EXPECT_EQ(sample_count_text(c.rows[0].sides[1], false), "n=4 (1 invalid)");
  EXPECT_EQ(sample_count_text(c.rows[0].sides[1], true), "n=4 (1 invalid included)");
  EXPECT_EQ(sample_count_text(c.rows[0].sides[0], false), "n=5");
  bool noted = false;
  for (const auto& n : c.notes)
    noted = noted || n == "b: throughput n=4 (1 invalid): run 2 iteration 4: throughput = 0 "
                          "ops/s: a rate (Hmean) must be positive";
  EXPECT_TRUE(noted) << ::testing::PrintToString(c.notes);
  EXPECT_NE(c.rows[0].significance[1]->reason.find("invalid samples left out: base 0, new 1"),
            std::string::npos)
      << c.rows[0].significance[1]->reason;
  // The text layouts: markdown's n, the mmtests and lkp notes, JSON and CSV counts.
  EXPECT_NE(render_markdown(c).find("(4, 1 invalid)"), std::string::npos);
  EXPECT_NE(render_mmtests(c).find("note: b: throughput n=4 (1 invalid)"), std::string::npos);
  EXPECT_NE(render_lkp(c).find("note: b: throughput n=4 (1 invalid)"), std::string::npos);
  EXPECT_NE(render_json(c).find("\"invalid\": 1"), std::string::npos);
  const std::string csv = render_csv(c);
  EXPECT_NE(csv.find(",base_invalid,new_invalid\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",0,1\n"), std::string::npos) << csv;
}

// A cell whose samples are all invalid on a side is n=0 there: inconclusive
// (exit 3), never a regression, even against a far better baseline.
TEST(Comparison, ACellWithTooFewValidSamplesIsInconclusiveNeverARegression) {
  const InvalidSamples idle{2, "clients 0, 1 moved 0 bytes", 5, 1};
  std::vector<CellSpec> a = {{"j", {}, {{"throughput", kQuiet}}, {}, 1, 1}};
  std::vector<CellSpec> b = {{"j", {}, {}, {}, 1, 2, {{"throughput", idle}}}};
  Comparison c = build_comparison({side("a", a), side("b", b)}, kCatalog, {});
  ASSERT_EQ(c.rows.size(), 1u);
  EXPECT_EQ(c.rows[0].sides[1].summary.n, 0u);
  EXPECT_EQ(c.rows[0].sides[1].invalid, 2);
  EXPECT_EQ(c.rows[0].sides[1].runs, 1);
  EXPECT_EQ(c.rows[0].significance[1]->verdict, stats::Verdict::inconclusive);
  EXPECT_EQ(check_exit_code(c), ExitCode::inconclusive);
  EXPECT_NE(render_mmtests(c).find("note: b: throughput n=0 (2 invalid): run 5 iteration 1: "
                                   "clients 0, 1 moved 0 bytes (and 1 more)"),
            std::string::npos)
      << render_mmtests(c);
  // Two valid samples of a 10% drop: still too few, still not a regression.
  std::vector<CellSpec> two = {
      {"j", {}, {{"throughput", {900, 900.9}}}, {}, 1, 2, {{"throughput", idle}}}};
  Comparison d = build_comparison({side("a", a), side("b", two)}, kCatalog, {});
  EXPECT_EQ(d.rows[0].significance[1]->verdict, stats::Verdict::inconclusive);
  EXPECT_EQ(check_exit_code(d), ExitCode::inconclusive);
  // --include-invalid is said in the notes.
  Comparison e = build_comparison({side("a", a), side("b", two)}, kCatalog, {}, true);
  EXPECT_TRUE(e.include_invalid);
  EXPECT_NE(e.notes.front().find("--include-invalid"), std::string::npos);
}

TEST(Comparison, SeveralNewSidesAreSeparateFamilies) {
  std::vector<CellSpec> a = {{"j", {}, {{"throughput", kQuiet}}, {}, 1, 1}};
  std::vector<CellSpec> b = {{"j", {}, {{"throughput", kQuietMinus10}}, {}, 1, 2}};
  std::vector<CellSpec> same = {{"j", {}, {{"throughput", kQuiet}}, {}, 1, 3}};
  Comparison c = build_comparison({side("a", a), side("b", b), side("c", same)}, kCatalog, {},
                                  false, kQuietTestbox);
  ASSERT_EQ(c.counts.size(), 2u);
  EXPECT_EQ(c.verdict,
            "b: 1 regression, 0 improvements, 0 unchanged, 0 inconclusive; "
            "c: 0 regressions, 0 improvements, 1 unchanged, 0 inconclusive");
  EXPECT_EQ(c.rows[0].significance[2]->verdict, stats::Verdict::unchanged);
  EXPECT_EQ(check_exit_code(c), ExitCode::regression);
}

TEST(Comparison, NoCommonCellIsAUsageErrorNamingBothSides) {
  std::vector<CellSpec> a = {{"j", {{"x", "1"}}, {{"throughput", kBase}}, {}, 1, 1}};
  std::vector<CellSpec> b = {{"j", {{"x", "2"}}, {{"throughput", kBase}}, {}, 1, 2}};
  try {
    build_comparison({side("a", a), side("b", b)}, kCatalog, {});
    FAIL();
  } catch (const UsageError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("'a' has j [x=1]"), std::string::npos) << msg;
    EXPECT_NE(msg.find("'b' has j [x=2]"), std::string::npos) << msg;
    EXPECT_NE(msg.find("--ignore-param"), std::string::npos) << msg;
  }
}

TEST(Comparison, BadOptionsAreRejected) {
  std::vector<CellSpec> a = {{"j", {}, {{"throughput", kBase}}, {}, 1, 1}};
  stats::SignificanceOptions o;
  o.alpha = 1.5;
  EXPECT_THROW(build_comparison({side("a", a), side("b", a)}, kCatalog, o), std::invalid_argument);
}

TEST(Comparison, FormatCountsPluralises) {
  VerdictCounts c;
  c.regressions = 2;
  c.improvements = 1;
  c.unchanged = 14;
  c.inconclusive = 3;
  EXPECT_EQ(format_counts(c), "2 regressions, 1 improvement, 14 unchanged, 3 inconclusive");
  c.regressions = 1;
  c.improvements = 0;
  EXPECT_EQ(format_counts(c), "1 regression, 0 improvements, 14 unchanged, 3 inconclusive");
}

// ---------------------------------------------------------------------------
// Layout helpers and the layouts on hand-made records
// ---------------------------------------------------------------------------

TEST(RenderHelpers, CsvFieldQuotesOnlyWhenNeeded) {
  EXPECT_EQ(csv_field("plain"), "plain");
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_field("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(csv_field(""), "");
}

// The example of docs/reference.md "mmtests compare table", rebuilt as a record: the
// same header and lines (the excerpt is cut from a table whose longest
// statistic is BHmean-99, which sets the statistic column to 9 + 1). mmtests
// names its runs KERNEL-VARIANT; nightjar stores the kernel release and the
// variant apart, which gives the same two header rows.
Comparison mmtests_example() {
  Comparison c;
  c.verdict = "1 regression, 0 improvements, 1 unchanged, 0 inconclusive";
  c.sides = {{"vanilla", {}, {}, {}, {"5.18.0-rc1"}, {}, {}},
             {"mm-pcpdrain-v2r1", {}, {}, {}, {"5.18.0-rc1"}, {}, {}}};
  auto row = [](std::string op) {
    ComparisonRow r;
    r.operation = std::move(op);
    r.sides.resize(2);
    r.sides[0].summary.n = r.sides[1].summary.n = 5;
    r.significance.resize(2);
    return r;
  };
  ComparisonRow one = row("faults/sec-1"), three = row("faults/sec-3");
  one.lines = {{"Hmean", true, {886331.5718, 885462.7479}, {0.0, -0.10}},
               {"Stddev", false, {2302.9105, 2065.0845}, {0.0, 10.33}},
               {"CoeffVar", false, {0.2598, 0.2332}, {0.0, 10.24}}};
  three.lines = {{"Hmean", true, {2337706.1583, 2332130.4909}, {0.0, -0.24}},
                 {"Min", false, {1.0, 1.0}, {0.0, 0.0}},
                 {"Max", false, {1.0, 1.0}, {0.0, 0.0}},
                 {"BHmean-99", false, {1.0, 1.0}, {0.0, 0.0}}};
  stats::Significance sig;
  sig.verdict = stats::Verdict::regression;
  three.significance[1] = sig;
  c.rows = {one, three};
  return c;
}

TEST(RenderMmtests, ReproducesTheReferenceExcerpt) {
  RenderOptions o;
  o.width = 14;
  o.precision = 4;
  o.show_n = false;  // the excerpt has no n lines
  std::string out = render_mmtests(mmtests_example(), o);
  const std::string expected =
      "1 regression, 0 improvements, 1 unchanged, 0 inconclusive\n"
      "\n"
      "                                     5.18.0-rc1               5.18.0-rc1\n"
      "                                        vanilla         mm-pcpdrain-v2r1\n"
      "Hmean     faults/sec-1   886331.5718 (   0.00%)   885462.7479 (  -0.10%)\n"
      "Hmean     faults/sec-3  2337706.1583 (   0.00%)  2332130.4909 *  -0.24%*\n"
      "Stddev    faults/sec-1     2302.9105 (   0.00%)     2065.0845 (  10.33%)\n"
      "Min       faults/sec-3        1.0000 (   0.00%)        1.0000 (   0.00%)\n"
      "CoeffVar  faults/sec-1        0.2598 (   0.00%)        0.2332 (  10.24%)\n"
      "Max       faults/sec-3        1.0000 (   0.00%)        1.0000 (   0.00%)\n"
      "BHmean-99 faults/sec-3        1.0000 (   0.00%)        1.0000 (   0.00%)\n";
  EXPECT_EQ(out, expected);
}

// Values of 1e9-1e12 and hyphenated variant and kernel names: every column
// is as wide as its widest value or header, every line of the table has the
// same length, and no name is split at a '-' (issue 19).
TEST(RenderMmtests, WideValuesAndHyphenatedNamesStayAligned) {
  Comparison c;
  c.verdict = "1 regression, 0 improvements, 1 unchanged, 0 inconclusive";
  c.sides = {{"thp-never", {}, {}, {}, {"6.1.0-18-amd64"}, {}, {}},
             {"thp-always-defrag-madvise", {}, {}, {}, {"6.1.0-18-rt-amd64"}, {}, {}}};
  ComparisonRow r;
  r.operation = "faults/sec-2";
  r.sides.resize(2);
  r.sides[0].summary.n = r.sides[1].summary.n = 5;
  r.significance.resize(2);
  r.lines = {{"Hmean", true, {1.5e9, 1.65e9}, {0.0, 10.0}},
             {"Stddev", false, {2.5e11, 2.4e11}, {0.0, 4.0}},
             {"Max", false, {999999999999.99, 1e12}, {0.0, 0.0}}};
  c.rows = {r};
  const std::string out = render_mmtests(c);
  nightjar::test::expect_golden("compare.mmtests.wide.txt", out);
  // Every line of the table (after the verdict and its blank line) has the
  // same length: the columns line up.
  std::vector<std::string> lines = split(out, '\n');
  ASSERT_GE(lines.size(), 7u);
  for (std::size_t i = 3; i < 7; ++i) EXPECT_EQ(lines[i].size(), lines[2].size()) << lines[i];
  EXPECT_NE(out.find(" thp-always-defrag-madvise\n"), std::string::npos);
  EXPECT_NE(out.find(" 6.1.0-18-rt-amd64\n"), std::string::npos);
}

TEST(RenderMmtests, ColourOnlyWhenAskedAndOnlyOnStars) {
  RenderOptions o;
  o.color = true;
  std::string out = render_mmtests(mmtests_example(), o);
  EXPECT_NE(out.find(" \033[31m*  -0.24%*\033[0m"), std::string::npos) << out;
  EXPECT_EQ(out.find("\033[32m"), std::string::npos);
  EXPECT_EQ(render_mmtests(mmtests_example()).find('\033'), std::string::npos);
}

TEST(RenderLkp, ReproducesTheReferenceRow) {
  Comparison c;
  c.verdict = "1 regression, 0 improvements, 0 unchanged, 0 inconclusive";
  c.sides = {{"<base>", {}, {}, {}, {}, {}, {}}, {"<head>", {}, {}, {}, {}, {}, {}}};
  ComparisonRow r;
  r.workload = "netperf";
  r.operation = "Throughput_Mbps";
  r.sides.resize(2);
  r.sides[0].mean = 12345;
  r.sides[0].summary.n = 5;
  r.sides[0].summary.coeff_var = 2.4;  // shown: above 2%
  r.sides[1].mean = 10073;
  r.sides[1].summary.n = 5;
  r.sides[1].summary.coeff_var = 1.5;  // not shown
  r.change_pct = {0.0, -18.4};
  r.plain_change_pct = {0.0, -18.4};
  r.significance.resize(2);
  stats::Significance sig;
  sig.verdict = stats::Verdict::regression;
  r.significance[1] = sig;
  c.rows = {r};
  RenderOptions zero_day;  // 0-day's own layout: no n, ±CoeffVar only above 2%
  zero_day.show_n = false;
  zero_day.show_cv = false;
  std::string out = render_lkp(c, zero_day);
  EXPECT_EQ(out,
            "1 regression, 0 improvements, 0 unchanged, 0 inconclusive\n"
            "\n"
            "-18.4% regression of netperf.Throughput_Mbps\n"
            "\n"
            "<base>           <head>\n"
            "---------------- ---------------------------\n"
            "         %stddev     %change         %stddev\n"
            "             \\          |                \\\n"
            "     12345 ±  2%     -18.4%      10073        netperf.Throughput_Mbps\n");
}

TEST(RenderLkp, AveragesFollowLkpFormatting) {
  Comparison c;
  c.verdict = "v";
  c.sides = {{"a", {}, {}, {}, {}, {}, {}}, {"b", {}, {}, {}, {}, {}, {}}};
  ComparisonRow r;
  r.kind = ComparisonRow::Kind::monitor;
  r.operation = "vmstat.pgfault";
  r.sides.resize(2);
  r.sides[0].mean = 999.994;  // %.2f below 1000
  r.sides[1].mean = 2.177e9;  // %.4g above 1e8
  r.sides[0].summary.n = r.sides[1].summary.n = 3;
  r.sides[0].summary.coeff_var = r.sides[1].summary.coeff_var = 160.2;
  r.change_pct = r.plain_change_pct = {0.0, 217700000.0};
  r.significance.resize(2);
  c.rows = {r};
  std::string out = render_lkp(c);
  EXPECT_NE(out.find("    999.99 ±160%  +2.2e+08%  2.177e+09 ±160%  vmstat.pgfault\n"),
            std::string::npos)
      << out;
}

TEST(Comparison, RunsInQemuGuestsCarryTheEmulationMarkAndDifferingSidesAreWarned) {
  EXPECT_EQ(run_accelerator({{"vm.accelerator", "tcg"}}), "tcg");
  EXPECT_EQ(run_accelerator({{"vm.accel", "kvm"}}), "kvm");  // databases before vm.accelerator
  EXPECT_EQ(run_accelerator({{"cgroup.version", "v2"}}), "");
  EXPECT_EQ(run_guest_size({{"vm.cpus", "2"}, {"vm.memory_mb", "1024"}}), "2 CPUs, 1024 MiB");
  LoadedSide a = side("a", {{"j", {{"clients", "1"}}, {{"throughput", kBase}}, {}, 1, 1}});
  LoadedSide b = side("b", {{"j", {{"clients", "1"}}, {{"throughput", kBase}}, {}, 1, 2}});
  a.accelerators = {"tcg"};
  b.accelerators = {"tcg"};
  a.guest_sizes = b.guest_sizes = {"2 CPUs, 1024 MiB"};
  Comparison same = build_comparison({a, b}, kCatalog, {});
  ASSERT_FALSE(same.warnings.empty());
  EXPECT_TRUE(same.guests.at(0).emulated && same.guests.at(1).emulated);
  EXPECT_EQ(std::count_if(same.warnings.begin(), same.warnings.end(),
                          [](const std::string& w) {
                            return w.rfind(std::string(kEmulationTag) + " " + kEmulationMark +
                                               ": every side ran under qemu TCG",
                                           0) == 0;
                          }),
            1);
  for (const auto& w : same.warnings) EXPECT_EQ(w.find("different"), std::string::npos) << w;

  b.accelerators = {"kvm"};
  Comparison accel = build_comparison({a, b}, kCatalog, {});
  EXPECT_TRUE(std::any_of(accel.warnings.begin(), accel.warnings.end(), [](const std::string& w) {
    return w.find("different accelerators (a: tcg, b: kvm)") != std::string::npos;
  }));
  b.accelerators = {"tcg"};
  b.guest_sizes = {"2 CPUs, 2048 MiB"};
  Comparison size = build_comparison({a, b}, kCatalog, {});
  EXPECT_TRUE(std::any_of(size.warnings.begin(), size.warnings.end(), [](const std::string& w) {
    return w.find("different guest sizes") != std::string::npos;
  }));
  // Bare-metal sides: no mark, no warning about guests.
  a.accelerators = b.accelerators = {""};
  a.guest_sizes = b.guest_sizes = {""};
  Comparison metal = build_comparison({a, b}, kCatalog, {});
  for (const auto& w : metal.warnings) {
    EXPECT_EQ(w.find(kEmulationMark), std::string::npos) << w;
    EXPECT_EQ(w.find("different"), std::string::npos) << w;
  }
}

// ---------------------------------------------------------------------------
// n per side, CoeffVar per row, the TCG mark and the testbox warning
// ---------------------------------------------------------------------------

// The lines of `text`.
std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  for (auto l : split(text, '\n')) out.emplace_back(l);
  return out;
}

// How often `what` occurs in `text`.
std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The first line of `text` starting with `head`, or "".
std::string line_starting(const std::string& text, const std::string& head) {
  for (const auto& l : lines_of(text))
    if (l.rfind(head, 0) == 0) return l;
  return "";
}

TEST(RenderMmtests, NLinesPutEachSidesSampleCountInItsValueColumn) {
  V seven = kMinus10;
  seven.push_back(90.5);
  seven.push_back(89.5);
  Comparison c = build_comparison({side("a", {{"j", {}, {{"throughput", kBase}}, {}}}),
                                   side("b", {{"j", {}, {{"throughput", seven}}, {}}})},
                                  kCatalog, {});
  const std::string out = render_mmtests(c);
  const std::string hmean = line_starting(out, "Hmean"), n = line_starting(out, "n ");
  ASSERT_FALSE(hmean.empty()) << out;
  ASSERT_FALSE(n.empty()) << out;
  EXPECT_EQ(n.rfind("n", 0), 0u);
  EXPECT_NE(n.find(" throughput "), std::string::npos) << n;
  // Each count ends where its side's value ends (before " (   0.00%)").
  const auto first_end = hmean.find(" (");
  const auto second_end = hmean.find_first_of("(*", first_end + 2) - 1;
  EXPECT_EQ(n.substr(first_end - 2, 2), " 5") << n;
  EXPECT_EQ(n.size(), second_end) << n << "\n" << hmean;
  EXPECT_EQ(n.back(), '7') << n;
  // n comes after every statistic line of the metric rows.
  EXPECT_GT(out.find("\nn "), out.find("\nBHmean-99 ")) << out;
  RenderOptions o;
  o.show_n = false;
  EXPECT_EQ(line_starting(render_mmtests(c, o), "n "), "");
}

TEST(RenderLkp, HeaderNamesNPerSideAndEveryRowCarriesItsCoeffVar) {
  V ten = kMinus10;
  ten.insert(ten.end(), kMinus10.begin(), kMinus10.end());
  Comparison c =
      build_comparison({side("a", {{"j", {{"clients", "1"}}, {{"throughput", kQuiet}}, {}},
                                   {"j", {{"clients", "2"}}, {{"throughput", kBase}}, {}, 1, 2}}),
                        side("b", {{"j", {{"clients", "1"}}, {{"throughput", kQuiet}}, {}},
                                   {"j", {{"clients", "2"}}, {{"throughput", ten}}, {}, 1, 2}})},
                       kCatalog, {});
  const std::string out = render_lkp(c);
  EXPECT_NE(out.find("\na (n=5)          b (n=5-10)\n"), std::string::npos) << out;
  // kQuiet's CoeffVar is 0.08%, kBase's 1.58%: shown as ±0% and ±2% (0-day
  // leaves both blank).
  EXPECT_NE(line_starting(out, "   1000.00").find("1000.00 ±  0%"), std::string::npos) << out;
  EXPECT_NE(line_starting(out, "     99.98").find("99.98 ±  2%"), std::string::npos) << out;
  RenderOptions zero_day;
  zero_day.show_n = false;
  zero_day.show_cv = false;
  const std::string plain = render_lkp(c, zero_day);
  EXPECT_NE(plain.find("\na                b\n"), std::string::npos) << plain;
  EXPECT_EQ(line_starting(plain, "   1000.00").find("±"), std::string::npos) << plain;
  EXPECT_EQ(line_starting(plain, "     99.98").find("±"), std::string::npos) << plain;
}

TEST(Comparison, RowsOfRunsUnderTcgCarryTheTagInEveryLayout) {
  // Side a: cell clients=1 ran under TCG (run 1), clients=2 on bare metal
  // (run 2); side b on bare metal.
  LoadedSide a = side("a", {{"j", {{"clients", "1"}}, {{"throughput", kBase}}, {}, 1, 1},
                            {"j", {{"clients", "2"}}, {{"throughput", kBase}}, {}, 1, 2}});
  LoadedSide b = side("b", {{"j", {{"clients", "1"}}, {{"throughput", kBase}}, {}, 1, 3},
                            {"j", {{"clients", "2"}}, {{"throughput", kBase}}, {}, 1, 4}});
  a.accelerators = {"", "tcg"};
  a.emulated_runs = {1};
  b.accelerators = {""};
  Comparison c = build_comparison({a, b}, kCatalog, {});
  ASSERT_EQ(c.rows.size(), 2u);
  EXPECT_TRUE(c.rows[0].sides[0].emulated);
  EXPECT_FALSE(c.rows[0].sides[1].emulated);
  EXPECT_FALSE(row_emulated(c.rows[1]));
  EXPECT_EQ(std::count(c.warnings.begin(), c.warnings.end(),
                       "[TCG] TCG: measures emulation: a ran under qemu TCG (software emulation, "
                       "no KVM); figures marked [TCG] are not those of hardware"),
            1);

  const std::string mm = render_mmtests(c);
  EXPECT_NE(mm.find("warning: [TCG] TCG: measures emulation: a ran"), std::string::npos) << mm;
  for (const auto& l : lines_of(mm)) {
    if (l.rfind("note: ", 0) == 0) continue;
    if (l.find(" throughput-1 ") != std::string::npos) {
      // Stat lines end with their %change, the n line with blanks in its
      // place: every tag in one column.
      EXPECT_TRUE(l.ends_with("%) [TCG]") || l.ends_with("5            [TCG]")) << l;
    }
    if (l.find(" throughput-2 ") != std::string::npos) {
      EXPECT_EQ(l.find("[TCG]"), std::string::npos) << l;
    }
  }
  const std::string lkp = render_lkp(c);
  EXPECT_NE(lkp.find("  fake.throughput-1 [TCG]\n"), std::string::npos) << lkp;
  EXPECT_NE(lkp.find("  fake.throughput-2\n"), std::string::npos) << lkp;
  const std::string md = render_markdown(c);
  EXPECT_NE(md.find("> warning: [TCG] TCG: measures emulation"), std::string::npos) << md;
  EXPECT_NE(md.find("(5) [TCG] |"), std::string::npos) << md;
  EXPECT_EQ(count_of(md, "[TCG] |"), 1u) << md;
  const std::string json = render_json(c);
  EXPECT_EQ(count_of(json, "\"emulated\": true"), 2u) << json;   // side a, and its row 1 figures
  EXPECT_EQ(count_of(json, "\"emulated\": false"), 1u) << json;  // side b
  const std::string csv = render_csv(c);
  EXPECT_NE(csv.find(",base_emulated,new_emulated\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find("throughput-1,throughput"), std::string::npos);
  for (const auto& l : lines_of(csv)) {
    if (l.find("throughput-1,") != std::string::npos) {
      EXPECT_TRUE(l.ends_with(",1,0")) << l;
    }
    if (l.find("throughput-2,") != std::string::npos) {
      EXPECT_TRUE(l.ends_with(",0,0")) << l;
    }
  }
  // Accelerators known per side only (no emulated_runs): every row of a side
  // that ran under TCG is marked.
  a.emulated_runs.clear();
  const Comparison per_side = build_comparison({a, b}, kCatalog, {});
  EXPECT_TRUE(per_side.rows[0].sides[0].emulated);
  EXPECT_TRUE(per_side.rows[1].sides[0].emulated);
  EXPECT_FALSE(per_side.rows[1].sides[1].emulated);
  // Without a run under TCG: no tag, no columns.
  a.accelerators = {""};
  const Comparison metal = build_comparison({a, b}, kCatalog, {});
  for (const auto& text : {render_mmtests(metal), render_lkp(metal), render_markdown(metal),
                           render_json(metal), render_csv(metal)})
    EXPECT_EQ(text.find("TCG"), std::string::npos) << text;
}

TEST(Comparison, SidesOnDifferentTestboxesAreNotedInEveryLayout) {
  LoadedSide a = side("mine", {{"j", {}, {{"throughput", kBase}}, {}}});
  LoadedSide b = side("theirs", {{"j", {}, {{"throughput", kBase}}, {}, 1, 2}});
  a.testboxes = {"box1"};
  b.testboxes = {"sender-box"};
  Comparison c = build_comparison({a, b}, kCatalog, {});
  const std::string warning =
      "sides ran on different testboxes: mine (box1) vs theirs (sender-box)";
  for (const auto& text : {render_mmtests(c), render_lkp(c), render_markdown(c), render_json(c)})
    EXPECT_NE(text.find(warning), std::string::npos) << text;
  b.testboxes = {"box1"};
  for (const auto& w : build_comparison({a, b}, kCatalog, {}).warnings)
    EXPECT_EQ(w.find("testboxes"), std::string::npos) << w;
}

}  // namespace
}  // namespace nightjar
