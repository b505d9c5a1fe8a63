// A testbox's measured error rates: see audit.h.
#include "results/compare/audit.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "results/stats/descriptive.h"

namespace nightjar {

std::string audit_mode(int runs_per_side) {
  return runs_per_side <= 1 ? "one run per side" : fmt::format("{} runs per side", runs_per_side);
}

bool count_audit_pair(const Comparison& c, const std::string& workload, const std::string& job,
                      const std::string& cell, const std::string& metric, AuditRow& row,
                      std::vector<double>& runs_needed) {
  for (const auto& r : c.rows) {
    if (r.kind != ComparisonRow::Kind::metric || r.workload != workload || r.job != job ||
        r.cell != cell || r.name != metric)
      continue;
    if (r.significance.size() < 2 || !r.significance[1]) return false;
    const stats::Significance& s = *r.significance[1];
    ++row.pairs;
    const bool regression = s.verdict == stats::Verdict::regression;
    if (regression || (row.shift_pct == 0 && s.verdict == stats::Verdict::improvement))
      ++row.flagged;
    if (s.verdict == stats::Verdict::unchanged) ++row.unchanged;
    if (s.runs_needed) runs_needed.push_back(static_cast<double>(*s.runs_needed));
    return true;
  }
  return false;
}

namespace {

std::string rate_text(int k, int n) {
  const auto p = stats::wilson_interval(static_cast<std::size_t>(k), static_cast<std::size_t>(n));
  return fmt::format("{:.1f}% [{:.1f}, {:.1f}] ({} of {})", 100 * p.value, 100 * p.low,
                     100 * p.high, k, n);
}

}  // namespace

std::string audit_text(const std::vector<AuditRow>& rows) {
  const auto aa = std::find_if(rows.begin(), rows.end(),
                               [](const AuditRow& r) { return r.shift_pct == 0 && r.pairs > 0; });
  if (aa == rows.end()) return "";
  std::string out =
      fmt::format("{}, {} A/A pairs: false alarms {}, decided unchanged {:.0f}% ({} of {})",
                  aa->mode, aa->pairs, rate_text(aa->flagged, aa->pairs),
                  100.0 * aa->unchanged / aa->pairs, aa->unchanged, aa->pairs);
  for (const auto& r : rows)
    if (r.shift_pct > 0 && r.pairs > 0)
      out += fmt::format("; power at {:g}%: {}", r.shift_pct, rate_text(r.flagged, r.pairs));
  if (std::isfinite(aa->runs_needed))
    out += fmt::format("; median runs per side to decide: {:g}", aa->runs_needed);
  return out;
}

std::vector<std::string> audit_notes(const CalibrationStore& store, const Comparison& c,
                                     const std::vector<LoadedSide>& sides) {
  std::vector<std::string> notes;
  if (sides.empty() || sides[0].testboxes.empty()) return notes;
  const std::string& testbox = *sides[0].testboxes.begin();
  std::set<std::tuple<std::string, std::string, std::string>> seen;  // cells done
  for (const auto& r : c.rows) {
    if (r.kind != ComparisonRow::Kind::metric || !seen.insert({r.workload, r.job, r.cell}).second)
      continue;                   // the first metric row of a cell is its key metric
    std::string stored = r.cell;  // the calibration key's cell: the stored id
    if (auto it = sides[0].cells.find({r.workload, r.job, r.cell});
        it != sides[0].cells.end() && !it->second.stored_cell.empty())
      stored = it->second.stored_cell;
    const auto rows = store.audits({r.workload, r.job, stored, r.name, testbox});
    std::map<std::string, std::vector<AuditRow>> by_mode;
    for (const auto& a : rows) by_mode[a.mode].push_back(a);
    std::string text, measured;
    for (const auto& a : rows) measured = std::max(measured, a.measured_at);
    for (const auto& [mode, list] : by_mode)
      if (auto t = audit_text(list); !t.empty()) text += (text.empty() ? "" : "; ") + t;
    if (!text.empty())
      notes.push_back(fmt::format("audit of this testbox ({}), {} [{}] {}: {} (nightjar audit, {})",
                                  testbox, r.job, r.cell, r.name, text, measured));
  }
  return notes;
}

}  // namespace nightjar
