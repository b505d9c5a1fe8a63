// CSV layout of a comparison: one line per row and NEW side (docs/compare.md "csv").
#include <fmt/format.h>

#include <cmath>

#include "results/model/text.h"
#include "results/render/compare.h"

namespace nightjar {
namespace {

// Shortest text that reads back as the same double; empty when undefined.
std::string csv_num(double v) {
  return std::isfinite(v) ? fmt::format("{}", v) : "";
}
std::string csv_num(const std::optional<double>& v) {
  return v ? csv_num(*v) : "";
}

// The columns of every line, before the optional ones.
const char* const kColumns[] = {"kind",
                                "workload",
                                "job",
                                "cell",
                                "operation",
                                "name",
                                "unit",
                                "direction",
                                "mean",
                                "base",
                                "new",
                                "base_runs",
                                "new_runs",
                                "base_n",
                                "new_n",
                                "base_mean",
                                "new_mean",
                                "base_coeff_var",
                                "new_coeff_var",
                                "pct_change",
                                "plain_change_pct",
                                "verdict",
                                "p",
                                "q",
                                "ratio_ci_lo",
                                "ratio_ci_hi",
                                "smallest_detectable_change_pct",
                                "iterations_needed",
                                "reason",
                                "base_within_run_coeff_var",
                                "base_between_run_coeff_var",
                                "new_within_run_coeff_var",
                                "new_between_run_coeff_var",
                                "basis",
                                "runs_needed"};

// The fields of kColumns for NEW side `s` of `row`.
std::vector<std::string> row_fields(const Comparison& c, const ComparisonRow& row, std::size_t s) {
  const bool metric = row.kind == ComparisonRow::Kind::metric;
  const auto& b = row.sides[0];
  const auto& n = row.sides[s];
  const auto& sig = row.significance[s];
  return {
      metric ? "metric" : "monitor",
      row.workload,
      row.job,
      row.cell,
      row.operation,
      row.name,
      row.unit,
      metric ? std::string(to_string(row.direction)) : "",
      std::string(to_string(row.mean)),
      c.sides[0].name,
      c.sides[s].name,
      std::to_string(b.runs),
      std::to_string(n.runs),
      std::to_string(b.summary.n),
      std::to_string(n.summary.n),
      csv_num(b.mean),
      csv_num(n.mean),
      csv_num(b.summary.coeff_var),
      csv_num(n.summary.coeff_var),
      csv_num(row.change_pct[s]),
      csv_num(row.plain_change_pct[s]),
      sig ? std::string(stats::to_string(sig->verdict)) : "",
      sig ? csv_num(sig->p) : "",
      sig ? csv_num(sig->q) : "",
      sig ? csv_num(sig->ratio_lo) : "",
      sig ? csv_num(sig->ratio_hi) : "",
      sig ? (std::isinf(sig->smallest_detectable_change_pct)
                 ? "inf"
                 : csv_num(sig->smallest_detectable_change_pct))
          : "",
      sig && sig->iterations_needed ? std::to_string(*sig->iterations_needed) : "",
      sig ? sig->reason : "",
      csv_num(b.within_cv_pct),
      csv_num(b.between_cv_pct),
      csv_num(n.within_cv_pct),
      csv_num(n.between_cv_pct),
      sig ? std::string(stats::to_string(sig->basis)) : "",
      sig && sig->runs_needed ? std::to_string(*sig->runs_needed) : "",
  };
}

}  // namespace

std::string render_csv(const Comparison& c) {
  // base_invalid,new_invalid: only when some side holds invalid samples (or
  // --include-invalid), so that a comparison without any keeps its columns.
  bool invalid_columns = c.include_invalid;
  for (const auto& row : c.rows)
    for (const auto& f : row.sides) invalid_columns = invalid_columns || f.invalid > 0;
  // base_emulated,new_emulated (1 when the figures hold a run under qemu
  // TCG): only when some row has such figures.
  bool emulated_columns = false;
  for (const auto& row : c.rows) emulated_columns = emulated_columns || row_emulated(row);
  std::string out;
  for (std::size_t i = 0; i < std::size(kColumns); ++i)
    out += (i ? "," : "") + std::string(kColumns[i]);
  if (invalid_columns) out += ",base_invalid,new_invalid";
  if (emulated_columns) out += ",base_emulated,new_emulated";
  out += "\n";
  for (const auto& row : c.rows) {
    for (std::size_t s = 1; s < row.sides.size(); ++s) {
      const auto& b = row.sides[0];
      const auto& n = row.sides[s];
      std::vector<std::string> f = row_fields(c, row, s);
      if (invalid_columns) {
        f.push_back(std::to_string(b.invalid));
        f.push_back(std::to_string(n.invalid));
      }
      if (emulated_columns) {
        f.push_back(b.emulated ? "1" : "0");
        f.push_back(n.emulated ? "1" : "0");
      }
      for (std::size_t i = 0; i < f.size(); ++i) out += (i ? "," : "") + csv_field(f[i]);
      out += "\n";
    }
  }
  return out;
}

}  // namespace nightjar
