// The deciding room of `nightjar bisect`: see harness/bisect/decide.h.
#include "harness/bisect/decide.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include <fmt/format.h>

#include "harness/bisect/print.h"

namespace nightjar {

// Bisect asks "does this commit carry the regression?", not "did anything
// change?". The equivalence rule of compare/check would blame a significant
// -3% change while bisecting a -10% regression, and flag a stable good
// endpoint as unstable (docs/bisect.md "Deciding a commit").
stats::SignificanceOptions bisect_significance(double alpha, double min_effect_pct,
                                               bool runs_as_unit) {
  stats::SignificanceOptions s;
  s.alpha = alpha;
  s.min_effect_pct = min_effect_pct;
  s.unchanged = stats::UnchangedRule::detectable;
  s.run_model = runs_as_unit;
  return s;
}

namespace {

// The rows of `metric` judged together: the decisive one and what they say.
struct RowsSeen {
  const ComparisonRow* decisive = nullptr;
  bool any_bad = false, any_unknown = false, any_undefined = false;
  std::size_t min_now = SIZE_MAX;
};

RowsSeen scan_rows(const Comparison& c, const std::string& metric) {
  RowsSeen r;
  for (const auto& row : c.rows) {
    if (row.kind != ComparisonRow::Kind::metric || row.name != metric || row.sides.size() < 2)
      continue;
    r.min_now = std::min(r.min_now, row.sides[1].summary.n);
    const auto& sig = row.significance[1];
    if (!sig) continue;
    if (sig->verdict == stats::Verdict::regression) {
      if (!r.any_bad || sig->pct_change < r.decisive->significance[1]->pct_change)
        r.decisive = &row;
      r.any_bad = true;
    } else if (sig->verdict == stats::Verdict::inconclusive ||
               sig->verdict == stats::Verdict::undefined) {
      if (!r.any_bad && !r.any_unknown) r.decisive = &row;
      r.any_unknown = true;
      if (sig->verdict == stats::Verdict::undefined) r.any_undefined = true;
    } else if (!r.decisive) {
      r.decisive = &row;
    }
  }
  if (r.min_now == SIZE_MAX) r.min_now = 0;
  return r;
}

}  // namespace

std::string row_summary(const stats::Significance& sig, std::size_t n_now, std::size_t n_base) {
  std::string q = sig.q ? ", q=" + p_text(sig.q) : "";
  return fmt::format("{} {} ({} vs {} samples{})", pct_text(sig.pct_change),
                     stats::to_string(sig.verdict), n_now, n_base, q);
}

const ComparisonRow* first_row_with(const Comparison& c, const std::string& metric,
                                    stats::Verdict verdict) {
  for (const auto& row : c.rows)
    if (row.kind == ComparisonRow::Kind::metric && row.name == metric && row.sides.size() >= 2 &&
        row.significance[1] && row.significance[1]->verdict == verdict)
      return &row;
  return nullptr;
}

DecisionResult decide_sides(const std::vector<LoadedSide>& sides, const MetricCatalog& catalog,
                            const std::string& metric, const stats::SignificanceOptions& options,
                            Comparison* comparison) {
  Comparison c = build_comparison(sides, catalog, options);
  const RowsSeen seen = scan_rows(c, metric);
  DecisionResult d;
  d.min_now = seen.min_now;
  if (!seen.decisive) {
    d.summary = "no comparable samples of " + metric;
  } else {
    d.row = *seen.decisive->significance[1];
    d.cell = seen.decisive->cell;
    d.n_base = seen.decisive->sides[0].summary.n;
    d.n_now = seen.decisive->sides[1].summary.n;
    d.decision = seen.any_bad       ? CommitDecision::bad
                 : seen.any_unknown ? CommitDecision::unknown
                                    : CommitDecision::good;
    d.more_helps = !seen.any_bad && seen.any_unknown && !seen.any_undefined;
    d.summary = row_summary(d.row, d.n_now, d.n_base);
  }
  if (comparison) *comparison = std::move(c);
  return d;
}

LoadedSide load_runs_side(const ResultsStore& store, const std::vector<std::int64_t>& runs,
                          const std::string& metric, const std::string& name) {
  LoadedSide side;
  side.selector.text = name;
  for (auto id : runs) {
    RunFilter f;
    f.run_id = id;
    auto rows = store.runs(f);
    if (rows.empty()) continue;
    const RunRow& r = rows.front();
    side.run_ids.push_back(id);
    side.variants.insert(r.variant);
    side.builds.insert(r.build);
    side.kernels.insert(r.kernel_release);
    side.testboxes.insert(r.hostname);
    CellSamples& cs = side.cells[CellKey{r.workload, r.job, r.cell}];
    if (cs.first_run == 0) {
      cs.first_run = id;
      for (const auto& [k, v] : store.run_params(id))
        if (!v.empty()) cs.params.emplace_back(k, v);
    }
    cs.run_ids.push_back(id);
    if (r.status == RunStatus::aborted) ++cs.aborted_runs;
    // Valid samples only; the invalid ones are counted (the row's n says so).
    auto& values = cs.metrics[metric];
    std::vector<double> run_values;  // this run's valid samples: a unit of the run model
    for (const auto& s : store.samples(id, SampleSet::all)) {
      if (s.metric != metric) continue;
      if (s.invalid.empty()) {
        values.push_back(s.value);
        run_values.push_back(s.value);
        continue;
      }
      InvalidSamples& inv = cs.invalid[metric];
      if (inv.count++ == 0) {
        inv.reason = s.invalid;
        inv.run_id = id;
        inv.iteration = s.iteration;
      }
    }
    if (!run_values.empty()) cs.metric_runs[metric].push_back(std::move(run_values));
  }
  return side;
}

DecisionResult decide_commit(const ResultsStore& store, const std::vector<std::int64_t>& base_runs,
                             const std::vector<std::int64_t>& now_runs, const std::string& metric,
                             const stats::SignificanceOptions& options,
                             const std::string& base_name, const std::string& now_name,
                             Comparison* comparison) {
  // Each side holds only the metric's samples, so the family of the
  // comparison (and Benjamini-Hochberg) is the metric's rows, one per cell.
  std::vector<LoadedSide> sides = {load_runs_side(store, base_runs, metric, base_name),
                                   load_runs_side(store, now_runs, metric, now_name)};
  MetricCatalog catalog;
  for (const auto& side : sides)
    for (const auto& [key, _] : side.cells)
      if (!catalog.count(key.workload)) {
        for (const auto& m : store.metrics(key.workload))
          if (m.name == metric) catalog[key.workload].push_back(m);
      }
  return decide_sides(sides, catalog, metric, options, comparison);
}

int more_iterations(const DecisionResult& d, int max_iterations, int first_batch) {
  if (d.decision != CommitDecision::unknown || !d.more_helps ||
      d.min_now >= static_cast<std::size_t>(max_iterations))
    return 0;
  const int have = static_cast<int>(d.min_now);
  return std::min(max_iterations - have, std::max(have, first_batch));
}

StepOutcome step_outcome(const DecisionResult& d) {
  if (d.min_now == 0) return {BisectDecision::skip, d.summary};
  switch (d.decision) {
    case CommitDecision::good:
      return {BisectDecision::good, d.summary};
    case CommitDecision::bad:
      return {BisectDecision::bad, d.summary};
    case CommitDecision::unknown:
      break;
  }
  return {BisectDecision::skip,
          "still unsure after " + std::to_string(d.min_now) + " samples: " + d.row.reason};
}

BisectVerdict verdict_record(BisectDecision decision, const DecisionResult* d,
                             const std::string& reason) {
  BisectVerdict v;
  v.decision = decision;
  v.reason = reason;
  if (d) {
    v.verdict = stats::to_string(d->row.verdict);
    v.pct_change = d->row.pct_change;
    v.p = d->row.p;
    v.q = d->row.q;
    v.ratio_lo = d->row.ratio_lo;
    v.ratio_hi = d->row.ratio_hi;
    v.n_base = static_cast<std::int64_t>(d->n_base);
    v.n_now = static_cast<std::int64_t>(d->n_now);
  }
  return v;
}

double endpoints_min_effect(std::optional<double> set, double change) {
  return set.value_or(std::max(1.0, std::abs(change) / 2));
}

std::pair<std::vector<std::int64_t>, std::vector<std::int64_t>> first_and_rest(
    const std::vector<std::int64_t>& runs, std::size_t cells) {
  std::size_t k = std::min(cells, runs.size());
  return {{runs.begin(), runs.begin() + static_cast<std::ptrdiff_t>(k)},
          {runs.begin() + static_cast<std::ptrdiff_t>(k), runs.end()}};
}

}  // namespace nightjar
