// The mmtests compare-kernels layout (docs/reference.md "mmtests compare table").
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string_view>
#include <utility>
#include <vector>

#include "results/model/text.h"
#include "results/render/compare.h"
#include "results/render/environment.h"

namespace nightjar {
namespace {

bool starred(const ComparisonRow& row, const StatLine& line, std::size_t side) {
  if (!line.main || side >= row.significance.size() || !row.significance[side]) return false;
  auto v = row.significance[side]->verdict;
  return v == stats::Verdict::regression || v == stats::Verdict::improvement;
}

// The column widths of one table.
struct Widths {
  int p = 2;                         // decimals of a value
  std::size_t stat_w = 0, op_w = 0;  // statistic and operation columns
  int w = 1;                         // a value
  int pct_w = 7;                     // a %change
  /// A value column: the value, then " (" the change "%)".
  std::size_t col_w() const { return static_cast<std::size_t>(w + pct_w) + 4; }
};

// The header of each side: its kernel release (when it ran on one) above its
// name, each whole: a name is never split at a '-' (mmtests splits
// "5.18.0-rc1-vanilla" at its first '-'; nightjar stores the kernel and the
// variant apart, so the label says where the line breaks).
std::vector<std::pair<std::string, std::string>> side_headers(const Comparison& c) {
  std::vector<std::pair<std::string, std::string>> headers;
  for (const auto& side : c.sides)
    headers.emplace_back(side.kernels.size() == 1 ? side.kernels.front() : "", side.name);
  return headers;
}

Widths widths_of(const Comparison& c, const RenderOptions& o) {
  Widths d;
  d.p = std::max(0, o.precision);
  // The value width: at least --width, else the widest value or header
  // (issue 19: values of 1e9-1e12 must not push their column out of line).
  d.w = std::max(1, o.width);
  // The %change width: 7 (mmtests' %7.2f), or the widest change (a change
  // of 1e4% or more would push the columns after it out of line).
  for (const auto& row : c.rows) {
    d.op_w = std::max(d.op_w, row.operation.size());
    if (row.kind == ComparisonRow::Kind::metric && o.show_n)
      d.stat_w = std::max(d.stat_w, std::string_view("n").size());
    for (const auto& l : row.lines) {
      d.stat_w = std::max(d.stat_w, l.name.size());
      for (double v : l.value) {
        // One blank separates a value from the column before it.
        const std::size_t text = std::isfinite(v) ? fmt::format("{:.{}f}", v, d.p).size()
                                                  : std::string_view("undefined").size();
        d.w = std::max(d.w, 1 + static_cast<int>(text));
      }
      for (double pct : l.pct)
        if (std::isfinite(pct))
          d.pct_w = std::max(d.pct_w, static_cast<int>(fmt::format("{:.2f}", pct).size()));
    }
  }
  for (const auto& [top, bottom] : side_headers(c))
    d.w = std::max(d.w, static_cast<int>(std::max(top.size(), bottom.size())) - d.pct_w - 3);
  return d;
}

// The two header rows, each header cell right-aligned to its value column; a
// first row left all blank is omitted.
std::string header_rows(const Comparison& c, const Widths& d) {
  std::string h1(d.stat_w + 1 + d.op_w, ' '), h2 = h1;
  for (const auto& [top, bottom] : side_headers(c)) {
    h1 += fmt::format("{:>{}}", top, d.col_w());
    h2 += fmt::format("{:>{}}", bottom, d.col_w());
  }
  h1 = rstrip_spaces(std::move(h1));
  h2 = rstrip_spaces(std::move(h2));
  return (h1.empty() ? "" : h1 + "\n") + h2 + "\n";
}

}  // namespace

std::string render_mmtests(const Comparison& c, const RenderOptions& o) {
  const Widths d = widths_of(c, o);
  const int p = d.p, w = d.w, pct_w = d.pct_w;
  const std::size_t stat_w = d.stat_w, op_w = d.op_w;
  std::string out = c.verdict + "\n";
  for (const auto& warning : c.warnings) out += "warning: " + warning + "\n";
  out += "\n";
  out += header_rows(c, d);

  auto value_text = [&](const ComparisonRow& row, const StatLine& line, std::size_t side) {
    double v = line.value[side];
    if (std::isfinite(v)) return fmt::format("{:{}.{}f}", v, w, p);
    // A mean that does not exist (Hmean of a sample <= 0) says so.
    bool undefined = line.main && row.sides[side].summary.n > 0;
    return fmt::format("{:>{}}", undefined ? "undefined" : "n/a", w);
  };
  auto change_text = [&](const ComparisonRow& row, const StatLine& line, std::size_t side) {
    double pct = line.pct[side];
    if (!std::isfinite(pct)) return fmt::format(" ({:>{}})", "n/a", pct_w + 1);
    if (std::fabs(pct) < 0.005) pct = 0.0;  // no "-0.00%" from rounding noise
    if (!starred(row, line, side)) return fmt::format(" ({:{}.2f}%)", pct, pct_w);
    std::string s = fmt::format(" *{:{}.2f}%*", pct, pct_w);
    return " " + verdict_colour(s.substr(1), row.significance[side]->verdict, o.color);
  };
  // A row with figures measured under qemu TCG: every line of it ends with
  // the tag (the columns before it keep their widths).
  auto end_line = [&](std::string l, const ComparisonRow& row) {
    if (row_emulated(row)) l += std::string(" ") + kEmulationTag;
    l = rstrip_spaces(std::move(l));
    out += l + "\n";
  };
  auto block = [&](ComparisonRow::Kind kind) {
    std::size_t lines = 0;
    for (const auto& row : c.rows)
      if (row.kind == kind) lines = std::max(lines, row.lines.size());
    for (std::size_t li = 0; li < lines; ++li) {
      for (const auto& row : c.rows) {
        if (row.kind != kind || li >= row.lines.size()) continue;
        const StatLine& line = row.lines[li];
        std::string l = fmt::format("{:<{}} {:<{}}", line.name, stat_w, row.operation, op_w);
        for (std::size_t s = 0; s < c.sides.size(); ++s)
          l += value_text(row, line, s) + change_text(row, line, s);
        end_line(std::move(l), row);
      }
    }
    if (kind != ComparisonRow::Kind::metric || !o.show_n) return;
    // n per side (issue 19): the sample count in the value column, no %change.
    for (const auto& row : c.rows) {
      if (row.kind != kind) continue;
      std::string l = fmt::format("{:<{}} {:<{}}", "n", stat_w, row.operation, op_w);
      for (const auto& f : row.sides)
        l += fmt::format("{:>{}}{:{}}", f.summary.n, w, "", pct_w + 4);
      end_line(std::move(l), row);
    }
  };
  block(ComparisonRow::Kind::metric);
  // The notes explain the metric verdicts (what a decision needs, where the
  // between-run variation came from): right under them, before the monitor
  // rows, which can be many (a new user scrolled past ~80 to find them).
  if (!c.notes.empty()) {
    out += "\n";
    for (const auto& n : c.notes) out += "note: " + n + "\n";
  }
  bool monitors = std::any_of(c.rows.begin(), c.rows.end(),
                              [](const auto& r) { return r.kind == ComparisonRow::Kind::monitor; });
  if (monitors) {
    out += "\n";
    block(ComparisonRow::Kind::monitor);
  }
  return out + render_environment_section(c.environment);
}

}  // namespace nightjar
