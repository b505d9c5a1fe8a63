// Markdown layout of a comparison (docs/compare.md "markdown").
#include <fmt/format.h>

#include <cmath>

#include "results/model/metric.h"
#include "results/render/compare.h"
#include "results/render/environment.h"

namespace nightjar {
namespace {

// Markdown table cells: '|' would end the cell.
std::string cell(std::string s) {
  std::string out;
  for (char ch : s) {
    if (ch == '|') out += '\\';
    out += ch;
  }
  return out;
}

std::string figures(const SideFigures& f, int p) {
  if (f.summary.n == 0) return "n/a";
  if (!f.mean) return "undefined";
  std::string s = fmt::format("{:.{}f}", *f.mean, p);
  if (std::isfinite(f.summary.coeff_var)) s += fmt::format(" ±{:.2f}%", f.summary.coeff_var);
  if (std::isfinite(f.between_cv_pct))  // runs as the unit: within / between runs
    s += fmt::format(" (within {:.2f}%, between {:.2f}%)", f.within_cv_pct, f.between_cv_pct);
  return s;
}

// The side's figures, then its n (`count`, "" for monitors), then the mark
// of figures measured under qemu TCG.
std::string value(const SideFigures& f, int p, const std::string& count = "") {
  std::string s = figures(f, p) + count;
  if (f.emulated) s += std::string(" ") + kEmulationTag;
  return s;
}

std::string pct(double v) {
  if (!std::isfinite(v)) return "n/a";
  return fmt::format("{:+.2f}%", std::fabs(v) < 0.005 ? 0.0 : v);  // no "-0.00%"
}

// The n of a side: "(5)", or "(4, 1 invalid)" when it has invalid samples
// ("(5, 1 invalid included)" with --include-invalid).
std::string count(const SideFigures& f, bool included) {
  if (f.invalid == 0) return fmt::format(" ({})", f.summary.n);
  return fmt::format(" ({}, {} invalid{})", f.summary.n, f.invalid, included ? " included" : "");
}

std::string number(const std::optional<double>& v) {
  return v ? fmt::format("{:.3g}", *v) : "";
}

}  // namespace

std::string render_markdown(const Comparison& c, const RenderOptions& o) {
  const int p = std::max(0, o.precision);
  std::string out = "**" + c.verdict + "**\n\n";
  for (const auto& w : c.warnings) out += "> warning: " + w + "\n\n";
  std::string head = "| operation | unit | mean | " + cell(c.sides[0].name) + " (n) |";
  std::string rule = "|---|---|---|--:|";
  for (std::size_t s = 1; s < c.sides.size(); ++s) {
    head += " " + cell(c.sides[s].name) + " (n) | %change | verdict | q |";
    rule += "--:|--:|---|--:|";
  }
  bool any_metric = false, any_monitor = false;
  for (const auto& row : c.rows)
    (row.kind == ComparisonRow::Kind::metric ? any_metric : any_monitor) = true;
  if (any_metric) {
    out += head + "\n" + rule + "\n";
    for (const auto& row : c.rows) {
      if (row.kind != ComparisonRow::Kind::metric) continue;
      std::string l = "| " + cell(row.operation) + " | " + cell(row.unit) + " | " +
                      mean_label(row.mean) + " | " +
                      value(row.sides[0], p, count(row.sides[0], c.include_invalid)) + " |";
      for (std::size_t s = 1; s < c.sides.size(); ++s) {
        const auto& sig = row.significance[s];
        std::string change = pct(row.change_pct[s]);
        std::string verdict = sig ? std::string(stats::to_string(sig->verdict)) : "";
        if (sig && (sig->verdict == stats::Verdict::regression ||
                    sig->verdict == stats::Verdict::improvement)) {
          change = "**" + change + "**";
          verdict = "**" + verdict + "**";
        }
        if (sig && sig->iterations_needed)
          verdict += fmt::format(" (needs {} per side)", *sig->iterations_needed);
        l += " " + value(row.sides[s], p, count(row.sides[s], c.include_invalid)) + " | " + change +
             " | " + verdict + " | " + (sig ? number(sig->q) : "") + " |";
      }
      out += l + "\n";
    }
  }
  if (any_monitor) {
    out += "\n| monitor | " + cell(c.sides[0].name) + " |";
    std::string mrule = "|---|--:|";
    for (std::size_t s = 1; s < c.sides.size(); ++s) {
      out += " " + cell(c.sides[s].name) + " | change |";
      mrule += "--:|--:|";
    }
    out += "\n" + mrule + "\n";
    for (const auto& row : c.rows) {
      if (row.kind != ComparisonRow::Kind::monitor) continue;
      std::string l = "| " + cell(row.operation) + " | " + value(row.sides[0], p) + " |";
      for (std::size_t s = 1; s < c.sides.size(); ++s)
        l += " " + value(row.sides[s], p) + " | " + pct(row.plain_change_pct[s]) + " |";
      out += l + "\n";
    }
  }
  if (!c.notes.empty()) {
    out += "\n";
    for (const auto& n : c.notes) out += "- " + n + "\n";
  }
  // The text section in a code block: its columns are aligned.
  if (std::string env = render_environment_section(c.environment); !env.empty())
    out += "\n```" + env + "```\n";
  return out;
}

}  // namespace nightjar
