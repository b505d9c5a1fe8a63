// "What else changed": the significant monitor rows of a comparison.
#include "results/compare/why.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <span>
#include <stdexcept>

#include "results/stats/multiple.h"
#include "results/stats/tests.h"

namespace nightjar {
namespace {

const std::vector<double>* monitor_samples(const LoadedSide& side, const ComparisonRow& row) {
  auto cell = side.cells.find(CellKey{row.workload, row.job, row.cell});
  if (cell == side.cells.end()) return nullptr;
  auto it = cell->second.monitors.find(row.name);
  return it == cell->second.monitors.end() ? nullptr : &it->second;
}

double mean_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? std::numeric_limits<double>::quiet_NaN() : s / static_cast<double>(v.size());
}

// True when every sample of `v` is > 0 (and there are at least 3).
bool all_positive(const std::vector<double>& v) {
  return v.size() >= 3 && std::all_of(v.begin(), v.end(), [](double x) { return x > 0; });
}

bool all_zero(const std::vector<double>& v) {
  return v.size() >= 3 && std::all_of(v.begin(), v.end(), [](double x) { return x == 0; });
}

WhySide explain_side(const Comparison& cmp, const std::vector<LoadedSide>& sides, std::size_t s,
                     const stats::SignificanceOptions& options) {
  WhySide out{cmp.sides[0].name, cmp.sides[s].name, 0, {}, {}};
  std::vector<const ComparisonRow*> rows;
  std::vector<std::pair<const std::vector<double>*, const std::vector<double>*>> samples;
  std::vector<stats::RowInput> family;
  for (const auto& row : cmp.rows) {
    if (row.kind != ComparisonRow::Kind::monitor) continue;
    const auto* base = monitor_samples(sides[0], row);
    const auto* now = monitor_samples(sides[s], row);
    if (!base || !now) continue;
    rows.push_back(&row);
    samples.emplace_back(base, now);
    family.push_back({std::span<const double>(*base), std::span<const double>(*now),
                      Direction::higher_is_better, MeanKind::arithmetic});
  }
  out.family = family.size();
  const std::vector<stats::Significance> decided = stats::decide_significance(family, options);
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const auto& [base, now] = samples[r];
    WhyEntry e{rows[r]->operation,
               rows[r]->name,
               rows[r]->cell,
               mean_of(*base),
               mean_of(*now),
               static_cast<int>(base->size()),
               static_cast<int>(now->size()),
               0,
               0,
               decided[r],
               all_zero(*base) && all_positive(*now),
               all_positive(*base) && all_zero(*now)};
    const stats::Verdict v = decided[r].verdict;
    const bool changed = v == stats::Verdict::regression || v == stats::Verdict::improvement;
    // A vanished row has a base mean > 0, so the rule decided it: listed
    // only when it says changed. An appeared row is undefined for the rule.
    e.vanished = e.vanished && changed;
    if (!changed && !e.appeared) continue;
    e.change_pct = e.base_mean != 0 ? (e.new_mean - e.base_mean) / std::abs(e.base_mean) * 100
                                    : std::numeric_limits<double>::quiet_NaN();
    e.effect = (e.appeared || e.vanished)          ? std::numeric_limits<double>::infinity()
               : e.base_mean > 0 && e.new_mean > 0 ? std::abs(std::log(e.new_mean / e.base_mean))
                                                   : std::abs(e.change_pct) / 100;
    out.moved.push_back(std::move(e));
  }
  std::stable_sort(out.moved.begin(), out.moved.end(),
                   [](const WhyEntry& a, const WhyEntry& b) { return a.effect > b.effect; });
  return out;
}

// Per-iteration shares (percent) of every symbol, self and children, of
// the iterations of `profiles` that have samples.
struct Shares {
  int n = 0;
  std::uint64_t samples = 0, lost = 0;
  std::string event;
  std::map<std::string, std::vector<double>> self, children;  // symbol -> share per iteration
};

Shares shares_of(std::span<const IterationProfile> profiles) {
  Shares out;
  std::vector<SymbolCounts> counts;
  for (const auto& p : profiles) {
    SymbolCounts c = symbol_counts(p.stacks);
    if (c.samples == 0) continue;
    if (out.event.empty()) out.event = p.event;
    out.samples += c.samples;
    out.lost += p.lost;
    counts.push_back(std::move(c));
  }
  out.n = static_cast<int>(counts.size());
  for (std::size_t i = 0; i < counts.size(); ++i) {
    const double total = static_cast<double>(counts[i].samples);
    auto put = [&](std::map<std::string, std::vector<double>>& into,
                   const std::map<std::string, std::uint64_t>& from) {
      for (const auto& [symbol, k] : from) {
        auto& v = into[symbol];
        v.resize(counts.size(), 0.0);
        v[i] = 100.0 * static_cast<double>(k) / total;
      }
    };
    put(out.self, counts[i].self);
    put(out.children, counts[i].children);
  }
  for (auto* m : {&out.self, &out.children})
    for (auto& [symbol, v] : *m) v.resize(counts.size(), 0.0);
  return out;
}

double mean_or_zero(const std::vector<double>* v) {
  if (!v || v->empty()) return 0;
  double s = 0;
  for (double x : *v) s += x;
  return s / static_cast<double>(v->size());
}

// Adds `samples` of one folded stack to `root` on side `now` (or BASE).
void add_stack(FlameNode& root, const std::string& stack, std::uint64_t samples, bool now) {
  FlameNode* node = &root;
  (now ? node->now : node->base) += samples;
  std::size_t at = 0;
  while (at <= stack.size()) {
    std::size_t end = stack.find(';', at);
    if (end == std::string::npos) end = stack.size();
    const std::string frame = stack.substr(at, end - at);
    at = end + 1;
    auto it = std::find_if(node->children.begin(), node->children.end(),
                           [&frame](const FlameNode& c) { return c.name == frame; });
    if (it == node->children.end()) {
      node->children.push_back(FlameNode{frame, 0, 0, 0, {}});
      it = node->children.end() - 1;
    }
    node = &*it;
    (now ? node->now : node->base) += samples;
  }
}

void finish_flame(FlameNode& node, double scale) {
  node.delta = static_cast<double>(node.now) - static_cast<double>(node.base) * scale;
  std::sort(node.children.begin(), node.children.end(),
            [](const FlameNode& a, const FlameNode& b) { return a.name < b.name; });
  for (auto& c : node.children) finish_flame(c, scale);
}

}  // namespace

FlameNode merge_flame(std::span<const IterationProfile> base, std::span<const IterationProfile> now,
                      double* scale) {
  FlameNode root{"all", 0, 0, 0, {}};
  for (const bool is_new : {false, true})
    for (const auto& p : is_new ? now : base)
      for (const auto& [stack, samples] : p.stacks)
        if (!stack.empty() && samples > 0) add_stack(root, stack, samples, is_new);
  const double s =
      root.base > 0 ? static_cast<double>(root.now) / static_cast<double>(root.base) : 1.0;
  finish_flame(root, s);
  if (scale) *scale = s;
  return root;
}

ProfileDelta explain_profile(const std::string& cell, std::span<const IterationProfile> base,
                             std::span<const IterationProfile> now, double alpha) {
  if (!(alpha > 0 && alpha < 1))
    throw std::invalid_argument("explain_profile: alpha must be in (0, 1)");
  const Shares b = shares_of(base), n = shares_of(now);
  ProfileDelta out;
  out.cell = cell;
  out.base_event = b.event;
  out.new_event = n.event;
  out.base_n = b.n;
  out.new_n = n.n;
  out.base_samples = b.samples;
  out.new_samples = n.samples;
  out.base_lost = b.lost;
  out.new_lost = n.lost;
  out.flame = merge_flame(base, now, &out.flame_scale);
  if (b.n < 2 || n.n < 2) return out;
  std::vector<ProfileMove> tested;
  std::vector<double> p;
  for (const bool self : {true, false}) {
    const auto& bm = self ? b.self : b.children;
    const auto& nm = self ? n.self : n.children;
    std::set<std::string> symbols;
    for (const auto& [s, v] : bm) symbols.insert(s);
    for (const auto& [s, v] : nm) symbols.insert(s);
    const std::vector<double> zeros_b(static_cast<std::size_t>(b.n), 0.0),
        zeros_n(static_cast<std::size_t>(n.n), 0.0);
    for (const auto& symbol : symbols) {
      auto ib = bm.find(symbol);
      auto in = nm.find(symbol);
      const std::vector<double>& vb = ib == bm.end() ? zeros_b : ib->second;
      const std::vector<double>& vn = in == nm.end() ? zeros_n : in->second;
      const auto w = stats::welch_test(vb, vn, alpha);
      if (!w) continue;
      tested.push_back({symbol, self, mean_or_zero(&vb), mean_or_zero(&vn), w->diff, w->diff_lo,
                        w->diff_hi, w->p, 1, ""});
      p.push_back(w->p);
    }
  }
  out.family = tested.size();
  const std::vector<double> q = stats::benjamini_hochberg(p);
  for (std::size_t i = 0; i < tested.size(); ++i) {
    tested[i].q = q[i];
    if (q[i] < alpha && tested[i].diff_pts != 0) out.moved.push_back(std::move(tested[i]));
  }
  std::stable_sort(out.moved.begin(), out.moved.end(), [](const auto& x, const auto& y) {
    return std::abs(x.diff_pts) > std::abs(y.diff_pts);
  });
  return out;
}

std::string source_function_name(const std::string& symbol) {
  std::string name = symbol;
  const std::size_t colons = name.rfind("::");
  if (colons != std::string::npos) name = name.substr(colons + 2);
  const std::size_t dot = name.find('.');
  if (dot != std::string::npos && dot > 0) name.resize(dot);
  return name;
}

void attribute_to_commit(WhyBlock& block, const std::string& commit,
                         const std::map<std::string, std::string>& functions) {
  block.commit = commit;
  for (auto& side : block.sides)
    for (auto& delta : side.profiles)
      for (auto& m : delta.moved) {
        auto it = functions.find(source_function_name(m.symbol));
        m.changed_in = it == functions.end() ? "" : it->second;
      }
}

WhyBlock explain_monitors(const Comparison& cmp, const std::vector<LoadedSide>& sides,
                          const stats::SignificanceOptions& options) {
  WhyBlock block;
  block.alpha = options.alpha;
  for (std::size_t s = 1; s < sides.size() && s < cmp.sides.size(); ++s)
    block.sides.push_back(explain_side(cmp, sides, s, options));
  return block;
}

WhyBlock explain_monitors(const Comparison& cmp, const ResultsStore& store,
                          const std::vector<Selector>& selectors, const SideQuery& query,
                          const stats::SignificanceOptions& options) {
  std::vector<LoadedSide> sides;
  for (std::size_t i = 0; i < selectors.size(); ++i)
    sides.push_back(load_side(store, selectors[i], query, i == 0 ? "BASE" : "NEW"));
  WhyBlock block = explain_monitors(cmp, sides, options);
  // The profiles of a cell's runs, read once per cell and side.
  auto profiles = [&store](const CellSamples& cell) {
    std::vector<IterationProfile> out;
    for (auto& stored : store.iteration_profiles(cell.run_ids))
      out.push_back(std::move(stored.profile));
    return out;
  };
  std::map<CellKey, std::vector<IterationProfile>> base;
  for (const auto& [key, cell] : sides[0].cells) base[key] = profiles(cell);
  for (std::size_t s = 1; s < sides.size() && s - 1 < block.sides.size(); ++s)
    for (const auto& [key, cell] : sides[s].cells) {
      auto b = base.find(key);
      if (b == base.end() || b->second.empty()) continue;
      const std::vector<IterationProfile> now = profiles(cell);
      if (now.empty()) continue;
      block.sides[s - 1].profiles.push_back(
          explain_profile(key.cell, b->second, now, options.alpha));
    }
  return block;
}

}  // namespace nightjar
