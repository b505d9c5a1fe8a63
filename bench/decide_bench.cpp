// Benchmark of the decisions of `nightjar run --until-decided` (issue 14,
// "Goals"): seeded samples of the `fake` workload (throughput lognormal with
// CoeffVar 1%, latency = 1000 / throughput: the family of two rows every
// comparison of the workload has) go through the real decision path of the
// sequential mode — SequentialLooks::after_round (results/compare/
// sequential.h), the function the runner's sampler calls after every round,
// with build_comparison as its comparison — and, for comparison, through
// today's fixed-n rule (one build_comparison at n per side, UnchangedRule
// equivalence and detectable).
//
// Scenarios, `--trials` each (the same seeded sample streams for every rule):
//   A/A, margin 1%     BASE and NEW both value 100, other seeds
//   A/A, margin 2%     the same with min effect 2%
//   2% regression      NEW value 98, margin 1%
// Figures and goals (issue 14):
//   (a) A/A false alarms per comparison family (any row regression or
//       improvement) <= 5%;
//   (b) 2% regression: decided regression, median iterations per side <= 6,
//       >= 95% decided by 12;
//   (c) A/A margin 2%: decided unchanged, median iterations per side <= 10;
//   (d) the fixed-n rule's figures at n = 5 and 10.
// Each proportion is printed with its Wilson 95% interval (Wilson, JASA 22,
// 1927), each median with the distribution-free 95% interval of order
// statistics (ranks floor((m − 1.96√m)/2) and ceil(1 + (m + 1.96√m)/2), Conover,
// "Practical Nonparametric Statistics", 3rd ed., §3.2). A trial that did not
// reach the decision counts as "more than the budget" in a median.
//
//   decide_bench [--trials N] [--seed S] [--first-look F]
//     --trials N      trials per scenario (default 1000)
//     --seed S        seed of the sample streams (default 14)
//     --first-look F  the sequential design's first look and look interval
//                     (default 3: `run --until-decided` of a job with
//                     `iterations: 3` and no stored history; max 30 per side)
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "harness/job/job.h"
#include "results/compare/comparison.h"
#include "results/compare/sequential.h"
#include "workloads/workload.h"

namespace {

using namespace nightjar;

constexpr double kCv = 1.0;  // CoeffVar of the samples, percent
constexpr int kMax = 30;     // the sequential budget per side

// The cell of a job of the fake workload with value, cv and seed set, as
// `nightjar run` expands it (the workload's defaults for the rest).
Cell fake_cell(double value, std::uint64_t seed) {
  JobFile job;
  job.path = "decide_bench";
  job.workload = "fake";
  return expand_matrix(job, *find_workload("fake"),
                       {{"value", {fmt::format("{}", value)}},
                        {"cv", {fmt::format("{}", kCv)}},
                        {"seed", {fmt::format("{}", seed)}}},
                       MachineFacts{})
      .front();
}

// `n` iterations of the fake workload's session of `cell`: metric -> samples.
std::map<std::string, std::vector<double>> measure(const Cell& cell, int n) {
  RunContext ctx;
  auto session = find_workload("fake")->start(cell, ctx);
  std::map<std::string, std::vector<double>> out;
  for (int i = 0; i < n; ++i)
    for (const auto& [metric, v] : session->measure().metrics) out[metric].push_back(v);
  return out;
}

std::map<std::string, std::vector<double>> prefix(
    const std::map<std::string, std::vector<double>>& s, int n) {
  std::map<std::string, std::vector<double>> out;
  for (const auto& [m, v] : s) out[m].assign(v.begin(), v.begin() + n);
  return out;
}

struct Trial {
  std::map<std::string, std::vector<double>> base, now;
};

const CellKey kKey{"fake", "decide", "cv=1 value=100"};

Comparison compare(const Trial& t, int n, const stats::SignificanceOptions& o) {
  static const MetricCatalog catalog{{"fake", find_workload("fake")->metrics()}};
  return build_comparison(
      {one_run_side(kKey, 1, "a", prefix(t.base, n)), one_run_side(kKey, 2, "b", prefix(t.now, n))},
      catalog, o);
}

// What a trial ended with: the rows' verdicts and the iterations per side.
struct Outcome {
  bool change = false;      // some row regression or improvement
  bool regression = false;  // every row regression
  bool unchanged = false;   // every row unchanged
  int iterations = 0;
};

Outcome outcome(const LookResult& r, int n) {
  Outcome o;
  o.iterations = n;
  o.change = std::any_of(r.rows.begin(), r.rows.end(), [](const RowState& s) {
    return s.verdict == stats::Verdict::regression || s.verdict == stats::Verdict::improvement;
  });
  auto all = [&](stats::Verdict v) {
    return !r.rows.empty() && std::all_of(r.rows.begin(), r.rows.end(),
                                          [v](const RowState& s) { return s.verdict == v; });
  };
  o.regression = all(stats::Verdict::regression);
  o.unchanged = all(stats::Verdict::unchanged);
  return o;
}

stats::SignificanceOptions options(double margin, stats::UnchangedRule rule) {
  stats::SignificanceOptions o;
  o.min_effect_pct = margin;
  o.unchanged = rule;
  return o;
}

Outcome sequential(const Trial& t, double margin, int first_look) {
  SequentialLooks looks({first_look,
                         kMax,
                         stats::Spending::pocock,
                         options(margin, stats::UnchangedRule::equivalence),
                         {},
                         true});
  for (int n = 1; n <= kMax; ++n) {
    auto look = looks.after_round(
        n, false, [&](const stats::SignificanceOptions& o) { return compare(t, n, o); });
    if (look && look->stop) return outcome(look->result, n);
  }
  return {};  // unreachable: the look at kMax stops
}

struct Interval {
  double lo = 0, hi = 0;
};

Interval wilson(int k, int m) {
  const double z = 1.959964, p = static_cast<double>(k) / m, z2 = z * z / m;
  const double centre = (p + z2 / 2) / (1 + z2);
  const double half = z * std::sqrt(p * (1 - p) / m + z * z / (4.0 * m * m)) / (1 + z2);
  return {std::max(0.0, centre - half), std::min(1.0, centre + half)};
}

std::string proportion(int k, int m) {
  const Interval w = wilson(k, m);
  return fmt::format("{:5.1f}% [{:.1f}%, {:.1f}%]", 100.0 * k / m, 100 * w.lo, 100 * w.hi);
}

std::string iterations_text(double v) {
  return std::isfinite(v) ? fmt::format("{:g}", v) : fmt::format(">{}", kMax);
}

// Median and its order-statistics 95% interval; non-finite = not decided.
std::string median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const double m = static_cast<double>(v.size()), r = 1.959964 * std::sqrt(m);
  auto at = [&](double rank) {  // 1-based, clamped
    return v[static_cast<std::size_t>(std::clamp(rank, 1.0, m)) - 1];
  };
  const std::size_t h = v.size() / 2;
  const double med = v.size() % 2 ? v[h] : (v[h - 1] + v[h]) / 2;
  return fmt::format("{} [{}, {}]", iterations_text(med),
                     iterations_text(at(std::floor((m - r) / 2))),
                     iterations_text(at(std::ceil(1 + (m + r) / 2))));
}

const char* met(bool ok) {
  return ok ? "met" : "MISSED";
}

struct Args {
  int trials = 1000;
  std::uint64_t seed = 14;
  int first_look = 3;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string o = argv[i];
    if (i + 1 >= argc || (o != "--trials" && o != "--seed" && o != "--first-look")) {
      std::fprintf(stderr,
                   "usage: decide_bench [--trials N] [--seed S] [--first-look F] (got '%s')\n",
                   o.c_str());
      std::exit(2);
    }
    const long v = std::strtol(argv[++i], nullptr, 10);
    if (v < (o == "--seed" ? 0 : o == "--first-look" ? 3 : 1)) {
      std::fprintf(stderr, "decide_bench: %s %s: write a positive number (first look >= 3)\n",
                   o.c_str(), argv[i]);
      std::exit(2);
    }
    if (o == "--seed")
      a.seed = static_cast<std::uint64_t>(v);
    else
      (o == "--trials" ? a.trials : a.first_look) = static_cast<int>(v);
  }
  return a;
}

struct Scenario {
  const char* name;
  double value;   // NEW side's mean (BASE: 100)
  double margin;  // min effect, percent
};

}  // namespace

int main(int argc, char** argv) {
  const Args a = parse(argc, argv);
  const auto start = std::chrono::steady_clock::now();
  const Scenario scenarios[] = {
      {"A/A, margin 1%", 100, 1}, {"A/A, margin 2%", 100, 2}, {"2% regression, margin 1%", 98, 1}};
  fmt::print(
      "decide_bench: {} trials per scenario, seed {}; fake workload, CoeffVar {:g}% (throughput "
      "lognormal, latency = 1000/throughput: a family of 2 rows)\n"
      "sequential: first look {}, then every {}, at most {} per side; Pocock-type spending, alpha "
      "0.05, power 0.8, UnchangedRule::equivalence (SequentialLooks::after_round)\n\n",
      a.trials, a.seed, kCv, a.first_look, a.first_look, kMax);

  const int fixed_n[] = {5, 10};
  const stats::UnchangedRule rules[] = {stats::UnchangedRule::equivalence,
                                        stats::UnchangedRule::detectable};
  const char* rule_names[] = {"equivalence", "detectable"};
  for (std::size_t s = 0; s < std::size(scenarios); ++s) {
    const Scenario& sc = scenarios[s];
    int change = 0, regression = 0, unchanged = 0, regression_by_12 = 0;
    std::vector<double> to_regression, to_unchanged;
    // (n, rule index) -> false alarms, decided regression, decided unchanged
    std::map<std::pair<int, int>, std::array<int, 3>> fixed;
    for (int t = 0; t < a.trials; ++t) {
      const std::uint64_t seed = a.seed * 1000000 + 10000 * s + 2 * static_cast<std::uint64_t>(t);
      const Trial trial{measure(fake_cell(100, seed + 1), kMax),
                        measure(fake_cell(sc.value, seed + 2), kMax)};
      const Outcome o = sequential(trial, sc.margin, a.first_look);
      const double inf = std::numeric_limits<double>::infinity();
      change += o.change;
      regression += o.regression;
      unchanged += o.unchanged;
      regression_by_12 += o.regression && o.iterations <= 12;
      to_regression.push_back(o.regression ? o.iterations : inf);
      to_unchanged.push_back(o.unchanged ? o.iterations : inf);
      for (int n : fixed_n)
        for (int r = 0; r < 2; ++r) {
          const Comparison c = compare(trial, n, options(sc.margin, rules[r]));
          const Outcome f = outcome(evaluate_look(c, {}), n);
          auto& counts = fixed[{n, r}];
          counts[0] += f.change;
          counts[1] += f.regression;
          counts[2] += f.unchanged;
        }
    }
    const int m = a.trials;
    fmt::print("{}:\n", sc.name);
    const bool aa = sc.value == 100;
    fmt::print("  sequential: false alarms (a row regression or improvement) {}{}\n",
               proportion(change, m),
               aa ? fmt::format("   goal <= 5%: {}", met(change <= 0.05 * m)) : "");
    if (aa) {
      const bool median_ok = std::count_if(to_unchanged.begin(), to_unchanged.end(),
                                           [](double v) { return v <= 10; }) > m / 2;
      fmt::print("  sequential: decided unchanged {}; iterations per side to it, median {}{}\n",
                 proportion(unchanged, m), median(to_unchanged),
                 sc.margin == 2 ? fmt::format("   goal <= 10: {}", met(median_ok)) : "");
    } else {
      const bool median_ok = std::count_if(to_regression.begin(), to_regression.end(),
                                           [](double v) { return v <= 6; }) > m / 2;
      fmt::print(
          "  sequential: decided regression {}; iterations per side to it, median {}   goal "
          "<= 6: {}\n",
          proportion(regression, m), median(to_regression), met(median_ok));
      fmt::print("  sequential: decided regression by 12 per side {}   goal >= 95%: {}\n",
                 proportion(regression_by_12, m), met(regression_by_12 >= 0.95 * m));
    }
    for (int n : fixed_n)
      for (int r = 0; r < 2; ++r) {
        const auto& c = fixed[{n, r}];
        fmt::print("  fixed n={:<2} {:<11}: false alarms {}; {} {}\n", n, rule_names[r],
                   proportion(c[0], m), aa ? "decided unchanged" : "decided regression",
                   proportion(aa ? c[2] : c[1], m));
      }
    fmt::print("\n");
  }
  fmt::print("decide_bench: {:.1f} s\n",
             std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return 0;
}
