// stats::sort_ascending (results/stats/sorting.h) against std::sort: the same
// sequence for every kind of input compare sorts, and the summaries of both
// agree exactly.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "results/stats/descriptive.h"
#include "results/stats/sorting.h"

namespace nightjar::stats {
namespace {

std::vector<double> radix_sorted(std::vector<double> v) {
  sort_ascending(v);
  return v;
}
std::vector<double> std_sorted(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v;
}

TEST(StatsSorting, AgreesWithStdSortOnLognormalSamples) {
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> d(std::log(100.0), 0.02);
  for (std::size_t n : {0u, 1u, 2u, 255u, 256u, 257u, 1000u, 5000u}) {
    std::vector<double> v(n);
    for (double& x : v) x = d(rng);
    EXPECT_EQ(radix_sorted(v), std_sorted(v)) << "n=" << n;
  }
}

TEST(StatsSorting, AgreesWithStdSortOnMixedSignsDuplicatesAndInfinities) {
  std::mt19937_64 rng(11);
  std::uniform_int_distribution<int> pick(-50, 50);
  std::vector<double> v;
  for (int i = 0; i < 3000; ++i) v.push_back(pick(rng) * 1.5e-3);  // many ties, both signs
  for (double x : {std::numeric_limits<double>::infinity(),
                   -std::numeric_limits<double>::infinity(), std::numeric_limits<double>::max(),
                   std::numeric_limits<double>::lowest(), std::numeric_limits<double>::denorm_min(),
                   -std::numeric_limits<double>::denorm_min(), 1e300, -1e-300})
    v.push_back(x);
  std::shuffle(v.begin(), v.end(), rng);
  EXPECT_EQ(radix_sorted(v), std_sorted(v));
}

TEST(StatsSorting, AlreadySortedAndReversedInput) {
  std::vector<double> v;
  for (int i = 0; i < 1000; ++i) v.push_back(1000.0 - i);
  EXPECT_EQ(radix_sorted(v), std_sorted(v));
  EXPECT_EQ(radix_sorted(std_sorted(v)), std_sorted(v));
}

TEST(StatsSorting, NegativeZeroComesBeforePositiveZero) {
  std::vector<double> v(300, 0.0);  // >= 256: the radix sort itself
  v[150] = -0.0;
  const auto s = radix_sorted(v);
  EXPECT_TRUE(std::signbit(s[0]));
  EXPECT_EQ(std::count_if(s.begin(), s.end(), [](double x) { return std::signbit(x); }), 1);
}

TEST(StatsSorting, NaNFallsBackToStdSort) {
  std::vector<double> v;
  for (int i = 0; i < 300; ++i) v.push_back((i * 37) % 300);
  v[10] = std::numeric_limits<double>::quiet_NaN();
  auto s = v;
  sort_ascending(s);  // whatever std::sort does with a NaN: no crash, the same values
  EXPECT_EQ(std::count_if(s.begin(), s.end(), [](double x) { return std::isnan(x); }), 1);
}

TEST(StatsSorting, SummariesOfBothSortsAgreeExactly) {
  std::mt19937_64 rng(3);
  std::normal_distribution<double> d(50.0, 5.0);
  std::vector<double> v(4001);
  for (double& x : v) x = d(rng);
  const auto a = summarize(radix_sorted(v)), b = summarize(std_sorted(v));
  EXPECT_EQ(a.median, b.median);
  EXPECT_EQ(a.min, b.min);
  EXPECT_EQ(a.max, b.max);
  EXPECT_EQ(a.amean, b.amean);
  EXPECT_EQ(a.stddev, b.stddev);
  EXPECT_EQ(*a.hmean, *b.hmean);
  EXPECT_EQ(*best_mean(radix_sorted(v), 95, MeanKind::harmonic, Direction::higher_is_better),
            *best_mean(std_sorted(v), 95, MeanKind::harmonic, Direction::higher_is_better));
}

}  // namespace
}  // namespace nightjar::stats
