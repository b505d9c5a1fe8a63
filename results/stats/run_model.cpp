// Runs as the unit: see run_model.h for the model, the contract and the
// source of every formula.
#include "results/stats/run_model.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "results/stats/detail.h"
#include "results/stats/distributions.h"

namespace nightjar::stats {

using detail::amean;
using detail::kNaN;
using detail::require_unit_interval;
using detail::sample_variance;

std::string_view to_string(RunBasis b) {
  switch (b) {
    case RunBasis::iterations:
      return "iterations";
    case RunBasis::runs:
      return "runs";
    case RunBasis::calibrated:
      return "calibrated";
  }
  return "iterations";
}

std::string_view to_string(BetweenSource s) {
  switch (s) {
    case BetweenSource::calibration:
      return "calibration";
    case BetweenSource::history:
      return "history";
    case BetweenSource::prior:
      return "prior";
  }
  return "prior";
}

BetweenRunVariance prior_between_variance() {
  const double cv = kPriorCoeffVarPct / 100.0;
  return {std::log1p(cv * cv), 1e6, BetweenSource::prior, 0};
}

std::optional<BetweenRunVariance> history_between_variance(
    std::span<const std::vector<std::vector<double>>> groups) {
  double weighted = 0.0, df = 0.0;
  int runs = 0;
  for (const auto& group : groups) {
    const auto c = run_components(group);
    if (!c) return std::nullopt;
    if (c->runs < 2 || std::isnan(c->between_var)) continue;
    const double g_df = static_cast<double>(c->runs) - 1.0;
    weighted += g_df * c->between_var;
    df += g_df;
    runs += static_cast<int>(c->runs);
  }
  if (df < kHistoryMinDf) return std::nullopt;
  return BetweenRunVariance{weighted / df, df, BetweenSource::history, runs};
}

std::string between_source_text(const BetweenRunVariance& b) {
  switch (b.source) {
    case BetweenSource::calibration:
      return "this testbox's calibration";
    case BetweenSource::history:
      return fmt::format("this cell's history ({} runs)", b.runs);
    case BetweenSource::prior:
      return fmt::format("the conservative prior (CoeffVar {:g}%)", kPriorCoeffVarPct);
  }
  return "";
}

std::optional<RunComponents> run_components(std::span<const std::vector<double>> runs) {
  RunComponents c;
  std::vector<double> means;
  double ss_within = 0.0, inv_n = 0.0;
  std::vector<double> logs;  // of one run; one buffer for all of them
  means.reserve(runs.size());
  for (const auto& run : runs) {
    if (run.empty()) continue;
    logs.clear();
    for (double x : run) {
      if (!(x > 0.0) || !std::isfinite(x)) return std::nullopt;
      logs.push_back(std::log(x));
    }
    const double m = amean(logs);
    means.push_back(m);
    if (logs.size() >= 2)
      ss_within += sample_variance(logs, m) * static_cast<double>(logs.size() - 1);
    c.within_df += static_cast<double>(logs.size() - 1);
    c.samples += logs.size();
    inv_n += 1.0 / static_cast<double>(logs.size());
  }
  if (means.empty()) return std::nullopt;
  c.runs = means.size();
  c.mean = amean(means);
  c.within_var = c.within_df > 0 ? ss_within / c.within_df : kNaN;
  c.harmonic_n = static_cast<double>(c.runs) / inv_n;
  c.run_mean_var = c.runs >= 2 ? sample_variance(means, c.mean) : kNaN;
  if (c.runs >= 2) {
    const double within_part = std::isnan(c.within_var) ? 0.0 : c.within_var / c.harmonic_n;
    c.between_var = std::max(0.0, c.run_mean_var - within_part);
  } else {
    c.between_var = kNaN;
  }
  return c;
}

double log_variance_coeff_var(double log_var) {
  if (!(log_var >= 0.0)) return kNaN;
  return 100.0 * std::sqrt(std::expm1(log_var));
}

namespace {

// t, p of a test from diff, se and df (the zero-variance cases as welch_test).
LogDiffTest finish(RunBasis basis, double diff, double se, double df) {
  LogDiffTest r;
  r.basis = basis;
  r.diff = diff;
  r.se = se;
  r.df = df;
  if (se == 0.0) {
    r.t = diff == 0.0 ? 0.0 : std::copysign(detail::kInf, diff);
    r.p = diff == 0.0 ? 1.0 : 0.0;
    return r;
  }
  r.t = diff / se;
  r.p = std::min(1.0, 2.0 * student_t_upper_tail(std::fabs(r.t), df));
  return r;
}

// One term of a Satterthwaite sum: its value and degrees of freedom.
struct Term {
  double value, df;
};

// Satterthwaite (1946): df of a sum of independent estimated variance terms,
// (Σ v)² / Σ (v²/df); terms of value 0 carry no weight.
double satterthwaite_df(std::span<const Term> terms) {
  double sum = 0.0, denom = 0.0;
  for (const Term& t : terms) {
    sum += t.value;
    if (t.value > 0.0) denom += t.value * t.value / t.df;
  }
  return denom > 0.0 ? sum * sum / denom : kNaN;
}

}  // namespace

std::optional<LogDiffTest> runs_welch_test(const RunComponents& base, const RunComponents& now) {
  if (base.runs < 2 || now.runs < 2) return std::nullopt;
  const double vb = base.run_mean_var / static_cast<double>(base.runs);
  const double vn = now.run_mean_var / static_cast<double>(now.runs);
  const double diff = now.mean - base.mean;
  const double se = std::sqrt(vb + vn);
  if (se == 0.0)
    return finish(RunBasis::runs, diff, 0.0, static_cast<double>(base.runs + now.runs - 2));
  const Term terms[] = {{vb, static_cast<double>(base.runs - 1)},
                        {vn, static_cast<double>(now.runs - 1)}};
  return finish(RunBasis::runs, diff, se, satterthwaite_df(terms));
}

std::optional<LogDiffTest> calibrated_test(const RunComponents& base, const RunComponents& now,
                                           const BetweenRunVariance& between) {
  if (!(between.var >= 0.0) || !(between.df > 0.0) || !std::isfinite(between.var))
    return std::nullopt;
  if (!(base.within_df > 0.0) || !(now.within_df > 0.0)) return std::nullopt;
  const double rb = static_cast<double>(base.runs), rn = static_cast<double>(now.runs);
  const Term terms[] = {{between.var * (1.0 / rb + 1.0 / rn), between.df},
                        {base.within_var / (rb * base.harmonic_n), base.within_df},
                        {now.within_var / (rn * now.harmonic_n), now.within_df}};
  double v = 0.0;
  for (const Term& t : terms) v += t.value;
  const double diff = now.mean - base.mean;
  if (v == 0.0) return finish(RunBasis::calibrated, diff, 0.0, base.within_df + now.within_df);
  return finish(RunBasis::calibrated, diff, std::sqrt(v), satterthwaite_df(terms));
}

std::pair<double, double> ratio_interval(const LogDiffTest& test, double a) {
  require_unit_interval(a, "interval level a");
  if (test.se == 0.0) return {std::exp(test.diff), std::exp(test.diff)};
  const double half = student_t_quantile(1.0 - a / 2.0, test.df) * test.se;
  return {std::exp(test.diff - half), std::exp(test.diff + half)};
}

std::optional<std::size_t> runs_needed(double delta_pct, double run_var, double alpha,
                                       double power) {
  require_unit_interval(alpha, "alpha");
  require_unit_interval(power, "power");
  if (!std::isfinite(delta_pct) || !std::isfinite(run_var) || delta_pct <= 0.0 || run_var < 0.0)
    return std::nullopt;
  const double target = std::log1p(delta_pct / 100.0);
  constexpr std::size_t kCap = 10000;
  for (std::size_t r = 2; r <= kCap; ++r) {
    const double nu = 2.0 * static_cast<double>(r) - 2.0;
    const double mult = student_t_quantile(1.0 - alpha / 2.0, nu) + student_t_quantile(power, nu);
    if (mult * std::sqrt(2.0 * run_var / static_cast<double>(r)) <= target) return r;
  }
  return kCap;
}

}  // namespace nightjar::stats
