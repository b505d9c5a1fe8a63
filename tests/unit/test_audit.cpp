// Unit under test: stats::wilson_interval (results/stats/descriptive.h) and
// the counting and text of an audit (results/compare/audit.h).
#include "results/compare/audit.h"

#include <gtest/gtest.h>

#include <cmath>

#include "results/stats/descriptive.h"

namespace nightjar {
namespace {

// Newcombe, "Two-sided confidence intervals for the single proportion:
// comparison of seven methods", Statistics in Medicine 17 (1998) 857-872,
// Table II, method 3 (Wilson's score interval), to its 4 decimals.
TEST(Wilson, MatchesNewcombesTable) {
  struct Case {
    std::size_t k, n;
    double low, high;
  };
  for (const Case& c :
       {Case{81, 263, 0.2553, 0.3662}, Case{15, 148, 0.0624, 0.1605}, Case{0, 20, 0.0000, 0.1611},
        Case{1, 29, 0.0061, 0.1718}, Case{29, 29, 0.8830, 1.0000}}) {
    const auto p = stats::wilson_interval(c.k, c.n);
    EXPECT_NEAR(p.low, c.low, 5e-5) << c.k << "/" << c.n;
    EXPECT_NEAR(p.high, c.high, 5e-5) << c.k << "/" << c.n;
    EXPECT_DOUBLE_EQ(p.value, static_cast<double>(c.k) / static_cast<double>(c.n));
  }
  // The A/A table of issue 35: 49 of 289 pairs flagged, 17.0% [13.1, 21.7].
  const auto aa = stats::wilson_interval(49, 289);
  EXPECT_NEAR(aa.low, 0.131, 5e-4);
  EXPECT_NEAR(aa.high, 0.217, 5e-4);
  const auto none = stats::wilson_interval(0, 0);
  EXPECT_TRUE(std::isnan(none.value));
  EXPECT_EQ(none.low, 0.0);
  EXPECT_EQ(none.high, 1.0);
  EXPECT_THROW(stats::wilson_interval(3, 2), std::invalid_argument);
  EXPECT_THROW(stats::wilson_interval(1, 2, 1.0), std::invalid_argument);
}

Comparison one_row(stats::Verdict verdict, std::optional<std::size_t> runs_needed = {}) {
  Comparison c;
  ComparisonRow r;
  r.workload = "pft";
  r.job = "pft-quick";
  r.cell = "clients=1";
  r.name = "faults_per_sec";
  stats::Significance s;
  s.verdict = verdict;
  s.runs_needed = runs_needed;
  r.significance = {std::nullopt, s};
  c.rows.push_back(r);
  return c;
}

TEST(Audit, CountsFalseAlarmsHitsAndUnchanged) {
  AuditRow aa, shifted;
  shifted.shift_pct = 5;
  std::vector<double> needed, unused;
  for (auto v : {stats::Verdict::regression, stats::Verdict::improvement, stats::Verdict::unchanged,
                 stats::Verdict::inconclusive}) {
    const Comparison c = one_row(
        v, v == stats::Verdict::inconclusive ? std::optional<std::size_t>(7) : std::nullopt);
    EXPECT_TRUE(count_audit_pair(c, "pft", "pft-quick", "clients=1", "faults_per_sec", aa, needed));
    EXPECT_TRUE(
        count_audit_pair(c, "pft", "pft-quick", "clients=1", "faults_per_sec", shifted, unused));
  }
  EXPECT_EQ(aa.pairs, 4);
  EXPECT_EQ(aa.flagged, 2);  // an A/A regression or improvement is a false alarm
  EXPECT_EQ(aa.unchanged, 1);
  EXPECT_EQ(shifted.flagged, 1);  // with a shift only a regression is a hit
  EXPECT_EQ(needed, (std::vector<double>{7}));
  AuditRow other;
  EXPECT_FALSE(count_audit_pair(one_row(stats::Verdict::regression), "pft", "pft-quick",
                                "clients=2", "faults_per_sec", other, needed));
  EXPECT_EQ(other.pairs, 0);
}

TEST(Audit, TextGivesEachRateWithItsWilsonInterval) {
  AuditRow aa;
  aa.mode = "one run per side";
  aa.pairs = 20;
  aa.flagged = 1;
  aa.unchanged = 15;
  aa.runs_needed = 6;
  AuditRow hit = aa;
  hit.shift_pct = 5;
  hit.flagged = 17;
  EXPECT_EQ(audit_text({aa, hit}),
            "one run per side, 20 A/A pairs: false alarms 5.0% [0.9, 23.6] (1 of 20), decided "
            "unchanged 75% (15 of 20); power at 5%: 85.0% [64.0, 94.8] (17 of 20); median runs "
            "per side to decide: 6");
  EXPECT_EQ(audit_text({hit}), "");  // no A/A row: nothing to say
  EXPECT_EQ(audit_mode(1), "one run per side");
  EXPECT_EQ(audit_mode(3), "3 runs per side");
}

}  // namespace
}  // namespace nightjar
