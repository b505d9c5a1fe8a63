// The LKP / 0-day compare layout (docs/reference.md "LKP compare table").
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "results/model/text.h"
#include "results/render/compare.h"
#include "results/render/environment.h"

namespace nightjar {
namespace {

// Averages: %.2f below 1000, integer otherwise, %.4g above 1e8.
std::string average(const SideFigures& f) {
  if (!f.mean) return f.summary.n > 0 ? "undefined" : "n/a";
  double v = *f.mean;
  if (std::fabs(v) > 1e8) return fmt::format("{:.4g}", v);
  if (std::fabs(v) >= 1000) return fmt::format("{:.0f}", v);
  return fmt::format("{:.2f}", v);
}

// " ±NNN%": every row's CoeffVar (`all`), or as 0-day only when it exceeds
// 2%; else blanks of the same width.
std::string spread(const SideFigures& f, bool all) {
  double cv = f.summary.coeff_var;
  if (!std::isfinite(cv) || (!all && std::fabs(cv) <= 2.0)) return std::string(6, ' ');
  return fmt::format(" ±{:>3}%", std::llround(std::fabs(cv)));
}

// "NAME (n=5)" or "NAME (n=3-5)": side i's sample counts over the metric
// rows (every row when there is none).
std::string side_header(const Comparison& c, std::size_t i) {
  bool metrics = false;
  for (const auto& row : c.rows) metrics = metrics || row.kind == ComparisonRow::Kind::metric;
  std::size_t lo = SIZE_MAX, hi = 0;
  for (const auto& row : c.rows) {
    if (metrics && row.kind != ComparisonRow::Kind::metric) continue;
    if (i >= row.sides.size()) continue;
    lo = std::min(lo, row.sides[i].summary.n);
    hi = std::max(hi, row.sides[i].summary.n);
  }
  if (lo == SIZE_MAX) return c.sides[i].name;
  return c.sides[i].name +
         (lo == hi ? fmt::format(" (n={})", lo) : fmt::format(" (n={}-{})", lo, hi));
}

std::string change(double pct) {
  if (!std::isfinite(pct)) return "n/a";
  if (std::fabs(pct) >= 1e5) return fmt::format("{:+.1e}%", pct);
  return fmt::format("{:+.1f}%", pct);
}

std::string row_name(const ComparisonRow& row) {
  return row.kind == ComparisonRow::Kind::metric ? row.workload + "." + row.operation
                                                 : row.operation;
}

const stats::Significance* significant(const ComparisonRow& row, std::size_t side) {
  if (side >= row.significance.size() || !row.significance[side]) return nullptr;
  auto v = row.significance[side]->verdict;
  if (v == stats::Verdict::regression || v == stats::Verdict::improvement)
    return &*row.significance[side];
  return nullptr;
}

}  // namespace

std::string render_lkp(const Comparison& c, const RenderOptions& o) {
  std::string out = c.verdict + "\n";
  for (const auto& w : c.warnings) out += "warning: " + w + "\n";
  out += "\n";
  // 0-day's headline per significant row: "-18.4% regression of netperf.Throughput_Mbps".
  bool headlines = false;
  for (const auto& row : c.rows) {
    for (std::size_t s = 1; s < c.sides.size(); ++s) {
      const auto* sig = significant(row, s);
      if (!sig) continue;
      out += fmt::format("{} {} of {}{}\n", change(row.plain_change_pct[s]),
                         stats::to_string(sig->verdict), row_name(row),
                         c.sides.size() > 2 ? " (" + c.sides[s].name + ")" : "");
      headlines = true;
    }
  }
  if (headlines) out += "\n";

  auto name = [&](std::size_t i) { return o.show_n ? side_header(c, i) : c.sides[i].name; };
  std::string h1 = fmt::format("{:<16}", name(0)), h2 = std::string(16, '-');
  std::string h3 = "         %stddev", h4 = "             \\";
  for (std::size_t s = 1; s < c.sides.size(); ++s) {
    h1 += fmt::format(" {:<27}", name(s));
    h2 += " " + std::string(27, '-');
    h3 += "     %change         %stddev";
    h4 += "          |                \\";
  }
  for (auto* h : {&h1, &h2, &h3, &h4}) {
    *h = rstrip_spaces(std::move(*h));
    out += *h + "\n";
  }
  for (const auto& row : c.rows) {
    std::string l = fmt::format("{:>10}", average(row.sides[0])) + spread(row.sides[0], o.show_cv);
    for (std::size_t s = 1; s < c.sides.size(); ++s) {
      std::string ch = fmt::format("{:>11}", change(row.plain_change_pct[s]));
      if (const auto* sig = significant(row, s)) {
        auto first = ch.find_first_not_of(' ');
        ch = ch.substr(0, first) + verdict_colour(ch.substr(first), sig->verdict, o.color);
      }
      l += ch + fmt::format("{:>11}", average(row.sides[s])) + spread(row.sides[s], o.show_cv);
    }
    l += "  " + row_name(row);
    if (row_emulated(row)) l += std::string(" ") + kEmulationTag;
    out += l + "\n";
  }
  if (!c.notes.empty()) {
    out += "\n";
    for (const auto& n : c.notes) out += "note: " + n + "\n";
  }
  return out + render_environment_section(c.environment);
}

}  // namespace nightjar
