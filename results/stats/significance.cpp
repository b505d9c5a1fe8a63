// The significance rule, power figures and reference rules: see
// significance.h for the contract and the source of every formula,
// docs/statistics.md for the reasoning.
#include "results/stats/significance.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "results/stats/descriptive.h"
#include "results/stats/detail.h"
#include "results/stats/distributions.h"
#include "results/stats/equivalence.h"
#include "results/stats/multiple.h"
#include "results/stats/tests.h"

namespace nightjar::stats {

using detail::all_finite;
using detail::amean;
using detail::kInf;
using detail::kNaN;
using detail::require_unit_interval;
using detail::sample_variance;

// ---------------------------------------------------------------------------
// Power
// ---------------------------------------------------------------------------

namespace {

// Sum of (t_{1-alpha/2,nu} + t_{power,nu}): the multiplier of c·√(1/n1+1/n2).
double power_multiplier(double nu, double alpha, double power) {
  return student_t_quantile(1.0 - alpha / 2.0, nu) + student_t_quantile(power, nu);
}

}  // namespace

double smallest_detectable_change_unequal(std::size_t n_base, std::size_t n_new, double cv_pct,
                                          double alpha, double power) {
  require_unit_interval(alpha, "alpha");
  require_unit_interval(power, "power");
  if (std::isnan(cv_pct)) return kNaN;
  if (n_base < 2 || n_new < 2) return kInf;
  if (cv_pct == 0.0) return 0.0;
  const double nu = static_cast<double>(n_base + n_new) - 2.0;
  return power_multiplier(nu, alpha, power) * std::fabs(cv_pct) *
         std::sqrt(1.0 / static_cast<double>(n_base) + 1.0 / static_cast<double>(n_new));
}

double smallest_detectable_change(std::size_t n_per_side, double cv_pct, double alpha,
                                  double power) {
  return smallest_detectable_change_unequal(n_per_side, n_per_side, cv_pct, alpha, power);
}

std::optional<std::size_t> iterations_needed(double delta_pct, double cv_pct, double alpha,
                                             double power) {
  require_unit_interval(alpha, "alpha");
  require_unit_interval(power, "power");
  if (!std::isfinite(delta_pct) || !std::isfinite(cv_pct) || delta_pct <= 0.0) return std::nullopt;
  if (cv_pct == 0.0) return 2;
  const double c = std::fabs(cv_pct);
  const double zsum = normal_quantile(1.0 - alpha / 2.0) + normal_quantile(power);
  const double n_normal = 2.0 * zsum * zsum * c * c / (delta_pct * delta_pct);
  if (n_normal > 1e6) return static_cast<std::size_t>(std::ceil(n_normal)) + 1;
  // t quantiles exceed z quantiles, so the answer is at least the normal figure.
  auto n = std::max<std::size_t>(2, static_cast<std::size_t>(std::floor(n_normal)));
  while (smallest_detectable_change(n, c, alpha, power) > delta_pct) ++n;
  return n;
}

// ---------------------------------------------------------------------------
// Reference rules
// ---------------------------------------------------------------------------

namespace {

// mmtests' per-mean SD (Stat.pm calc_stddev with a mean name).
std::optional<std::pair<double, double>> mmtests_mean_sd(std::span<const double> xs,
                                                         MeanKind kind) {
  if (xs.size() < 2 || !all_finite(xs)) return std::nullopt;
  const auto mean = mean_of(xs, kind);
  if (!mean) return std::nullopt;
  const double n = static_cast<double>(xs.size());
  switch (kind) {
    case MeanKind::arithmetic:
      return std::pair{*mean, std::sqrt(sample_variance(xs, *mean))};
    case MeanKind::harmonic: {
      double ss = 0.0;
      for (double x : xs) ss += (1.0 / x - 1.0 / *mean) * (1.0 / x - 1.0 / *mean);
      return std::pair{*mean, std::sqrt(ss * std::pow(*mean, 4) / n)};
    }
    case MeanKind::geometric: {
      std::vector<double> l;
      for (double x : xs) l.push_back(std::log(x));
      return std::pair{*mean, *mean * std::sqrt(sample_variance(l, amean(l)))};
    }
  }
  return std::nullopt;
}

}  // namespace

bool mmtests_interval_significant(std::span<const double> base, std::span<const double> now,
                                  MeanKind kind) {
  const auto b = mmtests_mean_sd(base, kind), n = mmtests_mean_sd(now, kind);
  if (!b || !n) return false;
  // qnorm(1 - 0.05/2), as mmtests' _calc_meanci asks R for.
  const double z = normal_quantile(0.975);
  const double b_lo = b->first - z * b->second, b_hi = b->first + z * b->second;
  const double n_lo = n->first - z * n->second, n_hi = n->first + z * n->second;
  return n_lo > b_hi || n_hi < b_lo;
}

bool lkp_significant(std::span<const double> base, std::span<const double> now,
                     double min_ratio_change) {
  if (base.size() < 3 || now.size() < 3 || !all_finite(base) || !all_finite(now)) return false;
  const Summary b = summarize(base), n = summarize(now);
  const bool up = n.min > b.median && n.median > b.max;
  const bool down = n.max < b.median && n.median < b.min;
  if (!up && !down) return false;
  const double hi = std::max(b.median, n.median), lo = std::min(b.median, n.median);
  if (!(lo > 0.0)) return true;  // LKP's MAX_RATIO when the smaller side is 0
  return hi / lo > 1.0 + min_ratio_change;
}

// ---------------------------------------------------------------------------
// The significance rule
// ---------------------------------------------------------------------------

std::string_view to_string(TestKind t) {
  switch (t) {
    case TestKind::welch:
      return "welch";
    case TestKind::utest:
      return "utest";
    case TestKind::mmtests:
      return "mmtests";
    case TestKind::lkp:
      return "lkp";
  }
  return "welch";
}

TestKind test_kind_from_string(std::string_view s) {
  for (TestKind t : {TestKind::welch, TestKind::utest, TestKind::mmtests, TestKind::lkp})
    if (s == to_string(t)) return t;
  throw std::invalid_argument("unknown test '" + std::string(s) +
                              "' (expected welch, utest, mmtests or lkp)");
}

std::string_view to_string(Verdict v) {
  switch (v) {
    case Verdict::improvement:
      return "improvement";
    case Verdict::regression:
      return "regression";
    case Verdict::unchanged:
      return "unchanged";
    case Verdict::inconclusive:
      return "inconclusive";
    case Verdict::undefined:
      return "undefined";
  }
  return "undefined";
}

namespace {

// Smallest n per side (>= 3) at which the exact U-test can reach p < alpha.
std::size_t utest_min_n(double alpha) {
  std::size_t k = 3;
  while (mann_whitney_min_p(k, k) >= alpha) ++k;  // terminates: min_p -> 0
  return k;
}

void validate(const SignificanceOptions& opt) {
  require_unit_interval(opt.alpha, "alpha");
  require_unit_interval(opt.power, "power");
  if (!(opt.min_effect_pct >= 0.0) || !std::isfinite(opt.min_effect_pct))
    throw std::invalid_argument("min_effect_pct must be >= 0");
  if (opt.change_level != 0.0) require_unit_interval(opt.change_level, "change_level");
  if (opt.equivalence_level != 0.0)
    require_unit_interval(opt.equivalence_level, "equivalence_level");
  if (opt.equivalence_level >= 0.5) throw std::invalid_argument("equivalence_level must be < 0.5");
}

// The level of one look's change test and of each one-sided equivalence test.
double change_level(const SignificanceOptions& opt) {
  return opt.change_level > 0.0 ? opt.change_level : opt.alpha;
}
double equivalence_level(const SignificanceOptions& opt) {
  return opt.equivalence_level > 0.0 ? opt.equivalence_level : std::min(opt.alpha, 0.25);
}

// The row's minimum effect (margin), percent.
double row_margin(const RowInput& row, const SignificanceOptions& opt) {
  const double m = row.min_effect_pct.value_or(opt.min_effect_pct);
  if (!(m >= 0.0) || !std::isfinite(m))
    throw std::invalid_argument("a row's min_effect_pct must be >= 0");
  return m;
}

bool uses_p_values(const SignificanceOptions& opt) {
  return opt.test == TestKind::welch || opt.test == TestKind::utest;
}

// The smallest detectable change of a row, percent: multiplier·cv, NaN when
// the pooled CoeffVar cv is unknown (as it is with < 2 samples on a side).
// The t multiplier depends only on (n_base, n_new), so it is computed once
// per pair within one family.
class DetectableChange {
 public:
  explicit DetectableChange(const SignificanceOptions& opt) : opt_(opt) {}

  double operator()(std::size_t nb, std::size_t nn, double cv) {
    if (std::isnan(cv)) return kNaN;
    auto [it, added] = cache_.try_emplace(std::pair{nb, nn}, 0.0);
    if (added) it->second = smallest_detectable_change_unequal(nb, nn, 1.0, opt_.alpha, opt_.power);
    return it->second * cv;
  }

 private:
  const SignificanceOptions& opt_;
  std::map<std::pair<std::size_t, std::size_t>, double> cache_;
};

// What the first pass learns about a row for the second.
struct RowScreen {
  bool tested = false;      ///< reached step 3 (its verdict is decided in the second pass)
  double pooled_cv = kNaN;  ///< sqrt((cv_base² + cv_now²)/2), percent; NaN when unknown
  double p = kNaN;          ///< step 3's p (welch/utest); NaN when not tested
  double margin = 0;        ///< the row's minimum effect, percent
  /// Variance of one run's mean ln x (s_b² + s_w²/n) when the basis is runs
  /// or calibrated: what runs_needed plans with; NaN otherwise.
  double run_var = kNaN;
  /// The between-run part s_b² of run_var when it came from a
  /// BetweenRunVariance (a side with one run); NaN otherwise.
  double between_var = kNaN;
};

// Step 1: sets s.pct_change and returns true when the row is defined; else
// sets the undefined verdict and its reason.
bool screen_defined(const RowInput& row, Significance& s) {
  s.pct_change = kNaN;
  s.smallest_detectable_change_pct = kNaN;
  if (!all_finite(row.base) || !all_finite(row.now)) {
    s.verdict = Verdict::undefined;
    s.reason = "a sample is not a finite number";
    return false;
  }
  const auto mb = row.base_prepared ? summary_mean(row.base_prepared->summary, row.mean)
                                    : mean_of(row.base, row.mean);
  const auto mn = row.now_prepared ? summary_mean(row.now_prepared->summary, row.mean)
                                   : mean_of(row.now, row.mean);
  if (row.base.empty() || row.now.empty()) return true;  // step 2 decides
  if (!mb || !mn) {
    s.verdict = Verdict::undefined;
    s.reason = fmt::format("{} undefined: a sample is <= 0", mean_label(row.mean));
    return false;
  }
  s.pct_change = percent_change(*mb, *mn, row.direction);
  if (std::isnan(s.pct_change)) {
    s.verdict = Verdict::undefined;
    s.reason = fmt::format("%change undefined: baseline {} is 0", mean_label(row.mean));
    return false;
  }
  return true;
}

// Iterations per side to detect max(|pct_change|, min effect) at the pooled
// CoeffVar, never below 3 (nor, for utest, below the U-test's minimum).
std::size_t iterations_to_detect(const Significance& s, double pooled_cv, double margin,
                                 const SignificanceOptions& opt) {
  const double target = std::max(std::fabs(s.pct_change), margin);
  std::size_t n = 3;
  if (auto need = iterations_needed(target, pooled_cv, opt.alpha, opt.power))
    n = std::max<std::size_t>(*need, 3);
  if (opt.test == TestKind::utest) n = std::max(n, utest_min_n(opt.alpha));
  return n;
}

// welch_log_test of the row's samples, from their prepared logs when both
// sides have them.
std::optional<LogWelchResult> row_log_test(const RowInput& row, double alpha) {
  if (row.base_prepared && row.now_prepared) {
    require_unit_interval(alpha, "alpha");
    const auto& lb = row.base_prepared->logs;
    const auto& ln = row.now_prepared->logs;
    if (!lb || !ln) return std::nullopt;  // a sample <= 0 or not finite
    return welch_log_test_of_logs(*lb, *ln, alpha);
  }
  return welch_log_test(row.base, row.now, alpha);
}

// Step 3's p of a row with >= 3 samples per side on the iterations: Welch on
// ln x (on raw x for an arithmetic row with a sample <= 0), or Mann–Whitney
// U; NaN for the reference rules.
double row_p_value(const RowInput& row, const SignificanceOptions& opt) {
  if (opt.test == TestKind::welch) {
    std::optional<WelchResult> w;
    if (auto lw = row_log_test(row, opt.alpha))
      w = lw->log;
    else  // arithmetic row with a sample <= 0: Welch on raw values
      w = welch_test(row.base, row.now, opt.alpha);
    if (w) return w->p;
  } else if (opt.test == TestKind::utest) {
    if (auto u = mann_whitney(row.base, row.now)) return u->p;
  }
  return kNaN;
}

// One side's components: from its runs when given, else its pooled samples
// as one run.
std::optional<RunComponents> side_components(std::span<const std::vector<double>> runs,
                                             std::span<const double> pooled) {
  if (!runs.empty()) return run_components(runs);
  const std::vector<std::vector<double>> one{std::vector<double>(pooled.begin(), pooled.end())};
  return run_components(one);
}

}  // namespace

PreparedSide prepare_side(std::span<const double> samples,
                          std::span<const std::vector<double>> runs) {
  PreparedSide p;
  p.logs = log_samples(samples);
  p.summary = p.logs ? summarize(samples, *p.logs) : summarize(samples);
  p.components = side_components(runs, samples);
  return p;
}

namespace {

// The test of a welch row on runs (>= 2 on both sides) or with a calibrated
// between-run variance; std::nullopt: test on the iterations.
std::optional<LogDiffTest> run_model_test(const RowInput& row, const SignificanceOptions& opt,
                                          double& run_var, std::optional<double>& between_cv) {
  if (!opt.run_model || opt.test != TestKind::welch) return std::nullopt;
  if (row.base_runs.size() < 2 && row.now_runs.size() < 2 && !row.between) return std::nullopt;
  const auto b =
      row.base_prepared ? row.base_prepared->components : side_components(row.base_runs, row.base);
  const auto n =
      row.now_prepared ? row.now_prepared->components : side_components(row.now_runs, row.now);
  if (!b || !n) return std::nullopt;
  if (b->runs >= 2 && n->runs >= 2) {
    auto t = runs_welch_test(*b, *n);
    if (!t) return std::nullopt;
    run_var = (b->run_mean_var + n->run_mean_var) / 2.0;
    between_cv = log_variance_coeff_var((b->between_var + n->between_var) / 2.0);
    return t;
  }
  if (!row.between) return std::nullopt;
  auto t = calibrated_test(*b, *n, *row.between);
  if (!t) return std::nullopt;
  const double within = std::isnan(b->within_var) ? n->within_var : b->within_var;
  run_var = row.between->var + within / std::max(1.0, std::min(b->harmonic_n, n->harmonic_n));
  between_cv = log_variance_coeff_var(row.between->var);
  return t;
}

// The p, ratio CIs and basis of a tested row (steps 3 and 4's inputs).
void test_row(const RowInput& row, const SignificanceOptions& opt, RowScreen& r, Significance& s) {
  const double eq_a = 2.0 * equivalence_level(opt);
  if (auto t = run_model_test(row, opt, r.run_var, s.between_cv_pct)) {
    s.basis = t->basis;
    if (t->basis == RunBasis::calibrated) {
      s.between = row.between;
      r.between_var = row.between->var;
    }
    s.df = t->df;
    r.p = t->p;
    std::tie(s.ratio_lo, s.ratio_hi) = ratio_interval(*t, opt.alpha);
    auto [lo, hi] = ratio_interval(*t, eq_a);
    s.equivalence_lo = lo;
    s.equivalence_hi = hi;
    return;
  }
  r.p = row_p_value(row, opt);
  if (auto lw = row_log_test(row, eq_a)) {
    s.equivalence_lo = lw->ratio_lo;
    s.equivalence_hi = lw->ratio_hi;
    if (opt.test == TestKind::welch) s.df = lw->log.df;
  }
}

// Steps 1–3 of one row: the verdict of undefined rows and of rows with < 3
// samples per side, the figures every defined row reports (smallest
// detectable change, ratio CI) and the p of the rows left to decide.
RowScreen screen_row(const RowInput& row, const SignificanceOptions& opt, DetectableChange& sdc,
                     Significance& s) {
  RowScreen r;
  r.margin = row_margin(row, opt);
  s.min_effect_pct = r.margin;
  if (!screen_defined(row, s)) return r;
  const Summary sb = row.base_prepared ? row.base_prepared->summary : summarize(row.base);
  const Summary sn = row.now_prepared ? row.now_prepared->summary : summarize(row.now);
  if (sb.n >= 2 && sn.n >= 2)
    r.pooled_cv = std::sqrt((sb.coeff_var * sb.coeff_var + sn.coeff_var * sn.coeff_var) / 2.0);
  s.smallest_detectable_change_pct = sdc(sb.n, sn.n, r.pooled_cv);
  if (auto lw = row_log_test(row, opt.alpha)) {
    s.ratio_lo = lw->ratio_lo;
    s.ratio_hi = lw->ratio_hi;
  }
  if (sb.n < 3 || sn.n < 3) {
    s.verdict = Verdict::inconclusive;
    s.reason = fmt::format("fewer than 3 samples per side (base {}, new {})", sb.n, sn.n);
    if (!std::isnan(r.pooled_cv))
      s.iterations_needed = iterations_to_detect(s, r.pooled_cv, r.margin, opt);
    return r;
  }
  r.tested = true;
  if (uses_p_values(opt)) test_row(row, opt, r, s);
  if (uses_p_values(opt) && !std::isnan(r.p)) s.p = r.p;
  return r;
}

// Step 3's decision: whether the rule calls the row significant, and why.
struct RuleOutcome {
  bool significant = false;
  std::string why;
};

RuleOutcome apply_rule(const RowInput& row, const SignificanceOptions& opt, double q, double pct,
                       double margin) {
  RuleOutcome r;
  if (uses_p_values(opt)) {
    r.significant = q < opt.alpha && std::fabs(pct) >= margin;
    if (r.significant)
      r.why = fmt::format("q={:.3g} < {:.3g} and |{:.2f}%| >= {:.3g}%", q, opt.alpha, pct, margin);
    else if (q < opt.alpha)
      r.why = fmt::format("q={:.3g} < {:.3g} but |{:.2f}%| < min effect {:.3g}%", q, opt.alpha, pct,
                          margin);
    else
      r.why = fmt::format("q={:.3g} >= {:.3g}", q, opt.alpha);
  } else if (opt.test == TestKind::mmtests) {
    r.significant = mmtests_interval_significant(row.base, row.now, row.mean);
    r.why = r.significant ? "mean +- 1.96 SD intervals do not overlap"
                          : "mean +- 1.96 SD intervals overlap";
  } else {
    r.significant = lkp_significant(row.base, row.now);
    r.why = r.significant ? "ranges separated and medians differ by > 1%"
                          : "ranges not separated or medians within 1%";
  }
  return r;
}

// Step 5 for welch/utest under UnchangedRule::detectable: a row the test did
// not find significant is inconclusive when the data could not have shown a
// change of the size asked for, or showed one the test did not confirm;
// otherwise unchanged.
void decide_not_significant(const RowInput& row, const SignificanceOptions& opt,
                            const RowScreen& screen, const std::string& why, Significance& s) {
  const double pct = s.pct_change, abs_pct = std::fabs(pct);
  const double pooled_cv = screen.pooled_cv;
  const double target = std::max(abs_pct, screen.margin);
  double detectable = s.smallest_detectable_change_pct;
  const std::size_t nb = row.base.size(), nn = row.now.size();
  std::size_t u_min_n = 0;
  if (opt.test == TestKind::utest && mann_whitney_min_p(nb, nn) >= opt.alpha) {
    detectable = kInf;
    u_min_n = utest_min_n(opt.alpha);
  }
  if (std::isnan(detectable)) {
    s.verdict = Verdict::inconclusive;
    s.reason = why + "; noise unknown (CoeffVar undefined: a mean is 0)";
  } else if (detectable > target) {
    s.verdict = Verdict::inconclusive;
    auto need = iterations_needed(target, pooled_cv, opt.alpha, opt.power);
    const std::size_t n_need = std::max({need.value_or(3), std::size_t{3}, u_min_n});
    s.iterations_needed = n_need;
    if (std::isinf(detectable))
      s.reason = fmt::format(
          "{}; the exact U-test cannot reach p < {:.3g} with {}+{} samples: needs {} per side", why,
          opt.alpha, nb, nn, n_need);
    else
      s.reason = fmt::format(
          "{}; could only detect >= {:.2f}% at CV {:.2f}%: needs {} per side to detect {:.2f}%",
          why, detectable, pooled_cv, n_need, target);
  } else if (abs_pct >= screen.margin) {
    // The data could see a change this large and shows one, but the test
    // did not confirm it (p near alpha, or q raised by Benjamini-Hochberg
    // over many rows): not "unchanged". Doubling n shrinks the standard
    // error by sqrt(2), which brings such a p well below alpha.
    s.verdict = Verdict::inconclusive;
    s.iterations_needed = std::max<std::size_t>(2 * std::max(nb, nn), 3);
    s.reason = fmt::format(
        "{}; the {:.2f}% change seen is not confirmed although >= {:.2f}% was detectable: "
        "rerun with about {} per side",
        why, pct, detectable, *s.iterations_needed);
  } else {
    s.verdict = Verdict::unchanged;
    s.reason = fmt::format("{}; could detect changes >= {:.2f}% (target {:.2f}%)", why, detectable,
                           target);
  }
}

// The (1 − 2a) CI text of an equivalence decision.
std::string equivalence_text(const Significance& s, const SignificanceOptions& opt, double m) {
  return fmt::format(
      "{:.0f}% CI of the ratio [{:.4f}, {:.4f}] {} ±{:.3g}%",
      100.0 * (1.0 - 2.0 * equivalence_level(opt)), s.equivalence_lo.value_or(kNaN),
      s.equivalence_hi.value_or(kNaN),
      inside_margin(s.equivalence_lo.value_or(kNaN), s.equivalence_hi.value_or(kNaN), m)
          ? "inside"
          : "not inside",
      m);
}

// What a verdict's reason says of its basis: nothing for the iterations,
// " (on runs)", or " (between-run variation from this cell's history (12
// runs))" for a side with one run.
std::string basis_text(const Significance& s) {
  if (s.basis == RunBasis::iterations) return "";
  if (s.basis == RunBasis::calibrated && s.between)
    return fmt::format(" (between-run variation from {})", between_source_text(*s.between));
  return fmt::format(" (on {})", to_string(s.basis));
}

// The runs per side a verdict can ask for before it says the margin is out
// of reach on this testbox (issue 35: a new user was told 1584, then 632).
constexpr std::size_t kRealisticRunsPerSide = 20;

// The smallest change (percent) that `runs` runs per side detect at `alpha`
// with `power` when a run's mean has variance `run_var` (on ln x): the
// inverse of runs_needed, by bisection (runs_needed falls as the change
// grows).
double reachable_change(double run_var, std::size_t runs, double alpha, double power) {
  double lo = 0.01, hi = 1e4;
  for (int i = 0; i < 60; ++i) {
    const double mid = std::sqrt(lo * hi);
    const auto need = runs_needed(mid, run_var, alpha, power);
    (need && *need <= runs ? hi : lo) = mid;
  }
  return hi;
}

// What an inconclusive row of the equivalence rule would need: iterations per
// side (at the pooled CoeffVar, to detect the change seen or to show it inside
// the margin, whichever is fewer), or runs per side when the between-run
// variance limits it.
void plan_undecided(const RowInput& row, const SignificanceOptions& opt, const RowScreen& screen,
                    Significance& s) {
  const double abs_pct = std::fabs(s.pct_change), m = screen.margin;
  // Runs per side when the between-run part limits the run's variance; when
  // a known s_b² is smaller than the within-run part, longer runs help more.
  const bool within_dominates =
      !std::isnan(screen.between_var) && screen.between_var < screen.run_var - screen.between_var;
  if (!std::isnan(screen.run_var) && !within_dominates) {
    const double alpha = change_level(opt);
    s.runs_needed = runs_needed(std::max(abs_pct, m), screen.run_var, alpha, opt.power);
    if (!s.runs_needed) return;
    if (*s.runs_needed <= kRealisticRunsPerSide) {
      s.reason += fmt::format(": needs about {} runs per side", *s.runs_needed);
      return;
    }
    // Out of reach on this testbox: say so, and what is within reach.
    s.reason += fmt::format(
        ": at run-to-run CoeffVar {:.1f}% that needs about {} runs per side, out of reach here; "
        "{} runs per side decide changes of {:.0f}% or more: set the job's `min_effect:` to the "
        "smallest change that matters to you (docs/statistics.md \"Runs a decision needs\")",
        log_variance_coeff_var(screen.run_var), *s.runs_needed, kRealisticRunsPerSide,
        std::ceil(reachable_change(screen.run_var, kRealisticRunsPerSide, alpha, opt.power)));
    return;
  }
  if (std::isnan(screen.pooled_cv)) {
    s.reason += "; noise unknown (CoeffVar undefined: a mean is 0)";
    return;
  }
  std::size_t need = iterations_to_detect(s, screen.pooled_cv, m, opt);
  if (auto eq = equivalence_iterations_needed(m, abs_pct, screen.pooled_cv, equivalence_level(opt),
                                              opt.power))
    need = std::min(need, std::max<std::size_t>(*eq, 3));
  need = std::max(need, std::max(row.base.size(), row.now.size()) + 1);
  s.iterations_needed = need;
  s.reason += fmt::format(": needs about {} per side at CV {:.2f}%", need, screen.pooled_cv);
}

// Step 4, UnchangedRule::equivalence: unchanged when the CI lies inside the
// margin, a change when q < the look's level, else inconclusive.
void decide_equivalence(const RowInput& row, const SignificanceOptions& opt, double q,
                        const RowScreen& screen, Significance& s) {
  const double m = screen.margin;
  const std::string basis = basis_text(s);
  if (inside_margin(s.equivalence_lo.value_or(kNaN), s.equivalence_hi.value_or(kNaN), m)) {
    s.verdict = Verdict::unchanged;
    s.reason = equivalence_text(s, opt, m) + basis;
    return;
  }
  const double level = change_level(opt);
  if (q < level && s.pct_change != 0.0) {
    s.verdict = s.pct_change > 0.0 ? Verdict::improvement : Verdict::regression;
    s.reason = fmt::format("q={:.3g} < {:.3g}{}; {}", q, level, basis, equivalence_text(s, opt, m));
    return;
  }
  s.verdict = Verdict::inconclusive;
  s.reason =
      fmt::format("q={:.3g} >= {:.3g}{} and {}", q, level, basis, equivalence_text(s, opt, m));
  plan_undecided(row, opt, screen, s);
}

// Steps 3–5 of a tested row, given its BH-adjusted q (NaN for the reference
// rules).
void decide_row(const RowInput& row, const SignificanceOptions& opt, double q,
                const RowScreen& screen, Significance& s) {
  if (uses_p_values(opt) && !std::isnan(q)) s.q = q;
  if (uses_p_values(opt) && opt.unchanged == UnchangedRule::equivalence)
    return decide_equivalence(row, opt, std::isnan(q) ? 1.0 : q, screen, s);
  RuleOutcome rule = apply_rule(row, opt, q, s.pct_change, screen.margin);
  if (rule.significant && s.pct_change != 0.0) {
    s.verdict = s.pct_change > 0.0 ? Verdict::improvement : Verdict::regression;
    s.reason = std::move(rule.why);
  } else if (!uses_p_values(opt)) {
    s.verdict = Verdict::unchanged;
    s.reason = std::move(rule.why);
  } else {
    decide_not_significant(row, opt, screen, rule.why, s);
  }
}

}  // namespace

std::vector<Significance> decide_significance(std::span<const RowInput> family,
                                              const SignificanceOptions& opt) {
  validate(opt);
  std::vector<Significance> out(family.size());
  DetectableChange sdc(opt);
  std::vector<RowScreen> screens;
  screens.reserve(family.size());
  for (std::size_t i = 0; i < family.size(); ++i)
    screens.push_back(screen_row(family[i], opt, sdc, out[i]));

  // Benjamini–Hochberg over the rows tested in step 3 (the others have p NaN).
  std::vector<double> qvals(family.size(), kNaN);
  if (uses_p_values(opt)) {
    std::vector<double> pvals;
    pvals.reserve(family.size());
    for (const auto& r : screens) pvals.push_back(r.p);
    qvals = benjamini_hochberg(pvals);
  }
  for (std::size_t i = 0; i < family.size(); ++i)
    if (screens[i].tested) decide_row(family[i], opt, qvals[i], screens[i], out[i]);
  return out;
}

}  // namespace nightjar::stats
