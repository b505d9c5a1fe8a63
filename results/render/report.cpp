#include "results/render/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "results/model/exit_codes.h"
#include "results/model/text.h"
#include "results/render/environment.h"
#include "results/stats/descriptive.h"
#include "results/stats/significance.h"

namespace nightjar {
namespace {

using Params = std::vector<std::pair<std::string, std::string>>;

std::optional<std::string> param_value(const Params& params, const std::string& name) {
  for (const auto& [k, v] : params)
    if (k == name) return v;
  return std::nullopt;
}

// The figure of side `i` of `row` that the report shows.
std::optional<double> shown(const ComparisonRow& row, std::size_t i, ReportStat stat) {
  const SideFigures& f = row.sides[i];
  if (f.runs == 0 || f.summary.n == 0) return std::nullopt;
  switch (stat) {
    case ReportStat::own_mean:
      return f.mean;
    case ReportStat::hmean:
      return f.summary.hmean;
    case ReportStat::amean:
      return f.summary.amean;
    case ReportStat::median:
      return f.summary.median;
  }
  return std::nullopt;
}

std::string stat_name(const ComparisonRow& row, ReportStat stat) {
  switch (stat) {
    case ReportStat::own_mean:
      return mean_label(row.mean);
    case ReportStat::hmean:
      return "Hmean";
    case ReportStat::amean:
      return "Amean";
    case ReportStat::median:
      return "Median";
  }
  return "";
}

// %change of the shown statistic of NEW side i against BASE. `aware`:
// positive = better (mmtests' %change); else plain, the sign of new - base.
// For the metric's own mean these are the record's figures; for another
// statistic, stats::percent_change of the two shown values.
double shown_change(const ComparisonRow& row, std::size_t i, ReportStat stat, bool aware) {
  if (stat == ReportStat::own_mean) return aware ? row.change_pct[i] : row.plain_change_pct[i];
  auto base = shown(row, 0, stat), now = shown(row, i, stat);
  if (!base || !now) return std::nan("");
  return stats::percent_change(*base, *now, aware ? row.direction : Direction::higher_is_better);
}

char verdict_mark(const ComparisonRow& row, std::size_t i) {
  const auto& s = row.significance[i];
  if (!s) return '!';
  switch (s->verdict) {
    case stats::Verdict::improvement:
    case stats::Verdict::regression:
      return '*';
    case stats::Verdict::inconclusive:
      return '?';
    case stats::Verdict::undefined:
      return '!';
    case stats::Verdict::unchanged:
      return ' ';
  }
  return ' ';
}

// " [TCG]" after figures measured under qemu TCG, else "".
std::string emulation_tag(const SideFigures& f) {
  return f.emulated ? std::string(" ") + kEmulationTag : "";
}

std::string value_text(std::optional<double> v, const std::string& unit, int precision) {
  if (!v || !std::isfinite(*v)) return "n/a";
  return fmt::format("{:.{}f}", *v, precision) + (unit.empty() ? "" : " " + unit);
}

// "(18.4% improvement)" for a significant change; "(0.3% worse, not
// significant)" and "(7.9% worse, inconclusive)" otherwise: a changelog
// calls nothing a regression or an improvement that the test did not.
std::string block_verdict(const ComparisonRow& row, std::size_t i, ReportStat stat, int precision) {
  const double pct = shown_change(row, i, stat, true);
  const auto& s = row.significance[i];
  if (!std::isfinite(pct) || !s || s->verdict == stats::Verdict::undefined)
    return "(change undefined)";
  const std::string mag = fmt::format("{:.{}f}", std::fabs(pct), precision);
  const bool zero = std::stod(mag) == 0.0;
  const bool significant =
      s->verdict == stats::Verdict::improvement || s->verdict == stats::Verdict::regression;
  std::string text = zero          ? "no change"
                     : significant ? mag + "% " + (pct > 0 ? "improvement" : "regression")
                                   : mag + "% " + (pct > 0 ? "better" : "worse");
  if (s->verdict == stats::Verdict::unchanged) text += ", not significant";
  if (s->verdict == stats::Verdict::inconclusive) text += ", inconclusive";
  return "(" + text + ")";
}

std::string md_escape(const std::string& s) {
  std::string out;
  for (char ch : s) {
    if (ch == '|' || ch == '*' || ch == '_' || ch == '\\') out += '\\';
    out += ch;
  }
  return out;
}

bool is_number(const std::string& s) {
  if (s.empty()) return false;
  char* end = nullptr;
  std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size();
}

// The rows one section of the report shows: one metric of one job.
struct Section {
  std::string job, workload, metric;
  std::vector<const ComparisonRow*> rows;
};

std::vector<Section> sections_of(const Comparison& c, const std::string& metric) {
  std::vector<Section> out;
  std::map<std::string, std::string> first_metric;  // job -> its first metric row
  std::set<std::string> metrics_seen;
  for (const auto& r : c.rows) {
    if (r.kind != ComparisonRow::Kind::metric) continue;
    metrics_seen.insert(r.name);
    first_metric.emplace(r.job, r.name);
  }
  for (const auto& r : c.rows) {
    if (r.kind != ComparisonRow::Kind::metric) continue;
    const std::string& want = metric.empty() ? first_metric[r.job] : metric;
    if (r.name != want) continue;
    auto it = std::find_if(out.begin(), out.end(),
                           [&](const Section& s) { return s.job == r.job && s.metric == r.name; });
    if (it == out.end()) {
      out.push_back({r.job, r.workload, r.name, {}});
      it = out.end() - 1;
    }
    it->rows.push_back(&r);
  }
  if (out.empty()) {
    std::string have;
    for (const auto& m : metrics_seen) have += (have.empty() ? "" : ", ") + m;
    throw UsageError("--metric " + metric + ": no compared cell has this metric; metrics: " +
                     (have.empty() ? "(none)" : have));
  }
  return out;
}

// Parameters whose value differs among `rows`, by name.
std::vector<std::string> varying_params(const std::vector<const ComparisonRow*>& rows) {
  std::map<std::string, std::set<std::string>> values;
  for (const auto* r : rows) {
    for (const auto& [k, v] : r->params) values[k].insert(v);
  }
  std::vector<std::string> out;
  for (const auto& [k, vs] : values) {
    std::size_t with = 0;
    for (const auto* r : rows) with += param_value(r->params, k).has_value();
    if (vs.size() > 1 || with != rows.size()) out.push_back(k);
  }
  return out;
}

void require_param(const std::vector<const ComparisonRow*>& rows, const std::string& name,
                   const char* flag) {
  std::set<std::string> have;
  for (const auto* r : rows)
    for (const auto& [k, _] : r->params) have.insert(k);
  if (have.count(name)) return;
  std::string list;
  for (const auto& k : have) list += (list.empty() ? "" : ", ") + k;
  throw UsageError(std::string(flag) + " " + name +
                   ": not a parameter of the compared cells; parameters: " +
                   (list.empty() ? "(none: every cell has the defaults)" : list));
}

// "k=v k=v" of `names` in `params`.
std::string params_text(const Params& params, const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) {
    if (auto v = param_value(params, n)) out += (out.empty() ? "" : " ") + n + "=" + *v;
  }
  return out;
}

std::vector<std::string> labels_of(const Comparison& c, const ReportOptions& o) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < c.sides.size(); ++i)
    out.push_back(i < o.labels.size() && !o.labels[i].empty() ? o.labels[i] : c.sides[i].name);
  return out;
}

std::string heading(const Section& s, const ComparisonRow& row, ReportStat stat) {
  return "Results (" + stat_name(row, stat) + " " + s.metric + " of " + s.workload + "):";
}

// ---- two-build blocks --------------------------------------------------------
void render_blocks(std::ostringstream& out, const Comparison& c, const Section& s,
                   const ReportOptions& o, const std::string& group_title, bool& first) {
  const auto labels = labels_of(c, o);
  const auto varying = varying_params(s.rows);
  const bool md = o.format == "markdown";
  std::size_t label_width = 0;
  for (const auto& l : labels) label_width = std::max(label_width, l.size());
  for (const auto* row : s.rows) {
    if (!first) out << "\n";
    first = false;
    std::string title = heading(s, *row, o.stat);
    std::string cell = params_text(row->params, varying);
    if (!group_title.empty()) cell = group_title + (cell.empty() ? "" : ", " + cell);
    if (!cell.empty()) title.insert(title.size() - 2, ", " + cell);
    if (md) {
      out << "**" << md_escape(title.substr(0, title.size() - 1)) << "**\n\n";
      out << "| | " << md_escape(stat_name(*row, o.stat) + " " + s.metric) << " |\n";
      out << "|:--|--:|\n";
      for (std::size_t i = 0; i < labels.size(); ++i) {
        std::string v = value_text(shown(*row, i, o.stat), row->unit, o.precision);
        if (i > 0) v += " " + block_verdict(*row, i, o.stat, o.precision);
        v += emulation_tag(row->sides[i]);
        out << "| " << md_escape(labels[i]) << " | " << md_escape(v) << " |\n";
      }
      continue;
    }
    for (const auto& l : wrap_words(title, o.max_width)) out << l << "\n";
    for (std::size_t i = 0; i < labels.size(); ++i) {
      std::string v = value_text(shown(*row, i, o.stat), row->unit, o.precision);
      if (i > 0) v += " " + block_verdict(*row, i, o.stat, o.precision);
      v += emulation_tag(row->sides[i]);
      std::string line = labels[i] + std::string(label_width - labels[i].size() + 2, ' ') + v;
      if (line.size() <= static_cast<std::size_t>(o.max_width)) {
        out << rstrip_spaces(line) << "\n";
      } else {
        // Too wide: the label on its own line(s), the value indented below.
        for (const auto& l : wrap_words(labels[i], o.max_width)) out << l << "\n";
        for (const auto& l : wrap_words("    " + v, o.max_width, "    "))
          out << "    " << l << "\n";
      }
    }
  }
}

// ---- matrix over an axis -------------------------------------------------------
struct Table {
  std::string title;
  std::vector<const ComparisonRow*> rows;  // one per axis value
};

std::string render_table_text(const Table& t, const Comparison& c, const std::string& axis,
                              const ReportOptions& o, std::set<char>& marks) {
  const std::size_t n = c.sides.size();
  std::vector<std::string> labels = labels_of(c, o);
  // cells[r][0] = axis value, cells[r][1..n] = sides
  auto build = [&](bool units_in_cells) {
    std::vector<std::vector<std::string>> cells;
    for (const auto* row : t.rows) {
      std::vector<std::string> line{"  " + *param_value(row->params, axis)};
      for (std::size_t i = 0; i < n; ++i) {
        std::string v =
            value_text(shown(*row, i, o.stat), units_in_cells ? row->unit : "", o.precision);
        if (i > 0) {
          const double pct = shown_change(*row, i, o.stat, false);
          if (std::isfinite(pct)) v += fmt::format(" ({:+.{}f}%)", pct, o.precision);
          const char mark = verdict_mark(*row, i);
          if (mark != ' ') marks.insert(mark);
          v += mark;
        }
        line.push_back(v);
      }
      // A row holding figures of runs under qemu TCG ends with the tag.
      if (row_emulated(*row)) line.back() = rstrip_spaces(line.back()) + " " + kEmulationTag;
      cells.push_back(std::move(line));
    }
    return cells;
  };
  auto layout = [&](const std::vector<std::string>& header,
                    const std::vector<std::vector<std::string>>& cells) {
    std::vector<std::size_t> w(header.size());
    for (std::size_t j = 0; j < header.size(); ++j) {
      w[j] = header[j].size();
      for (const auto& line : cells) w[j] = std::max(w[j], line[j].size());
    }
    auto render_line = [&](const std::vector<std::string>& line) {
      std::string s;
      for (std::size_t j = 0; j < line.size(); ++j) {
        if (j) s += " | ";
        s += line[j] + std::string(w[j] - line[j].size(), ' ');
      }
      return rstrip_spaces(s);
    };
    std::vector<std::string> lines{render_line(header)};
    for (const auto& line : cells) lines.push_back(render_line(line));
    return lines;
  };
  auto widest = [](const std::vector<std::string>& lines) {
    std::size_t m = 0;
    for (const auto& l : lines) m = std::max(m, l.size());
    return m;
  };
  const std::string unit = t.rows.empty() ? "" : t.rows.front()->unit;
  std::vector<std::string> header{axis};
  for (const auto& l : labels) header.push_back(l);
  auto cells = build(true);
  auto lines = layout(header, cells);
  std::vector<std::string> key;
  const auto max = static_cast<std::size_t>(o.max_width);
  if (widest(lines) > max) {
    // First: side labels become A, B, ... spelled out under the table.
    for (std::size_t i = 0; i < n; ++i) {
      header[i + 1] = std::string(1, static_cast<char>('A' + i));
      key.push_back(header[i + 1] + ": " + labels[i]);
    }
    lines = layout(header, cells);
  }
  std::string unit_note;
  if (widest(lines) > max && !unit.empty()) {
    // Then: the unit leaves the cells for the title.
    cells = build(false);
    lines = layout(header, cells);
    unit_note = " (" + unit + ")";
  }
  std::ostringstream out;
  if (!t.title.empty()) {
    const std::string title = t.title + unit_note + ":";
    out << title << "\n" << std::string(std::min(title.size(), max), '-') << "\n";
  } else if (!unit_note.empty()) {
    out << "In" << unit_note << ":\n";
  }
  for (const auto& l : lines) out << l << "\n";
  for (const auto& k : key)
    for (const auto& l : wrap_words(k, max, "   ")) out << l << "\n";
  return out.str();
}

std::string render_table_markdown(const Table& t, const Comparison& c, const std::string& axis,
                                  const ReportOptions& o, std::set<char>& marks) {
  const auto labels = labels_of(c, o);
  std::ostringstream out;
  if (!t.title.empty()) out << "**" << md_escape(t.title) << "**\n\n";
  out << "| " << md_escape(axis);
  for (const auto& l : labels) out << " | " << md_escape(l);
  out << " |\n|--:";
  for (std::size_t i = 0; i < labels.size(); ++i) out << "|--:";
  out << "|\n";
  for (const auto* row : t.rows) {
    out << "| " << md_escape(*param_value(row->params, axis));
    for (std::size_t i = 0; i < labels.size(); ++i) {
      std::string v = value_text(shown(*row, i, o.stat), row->unit, o.precision);
      if (i > 0) {
        const double pct = shown_change(*row, i, o.stat, false);
        if (std::isfinite(pct)) v += fmt::format(" ({:+.{}f}%)", pct, o.precision);
        const char mark = verdict_mark(*row, i);
        if (mark != ' ') {
          marks.insert(mark);
          v += mark;
        }
      }
      if (i + 1 == labels.size() && row_emulated(*row)) v += std::string(" ") + kEmulationTag;
      out << " | " << md_escape(v);
    }
    out << " |\n";
  }
  return out.str();
}

void render_matrix(std::ostringstream& out, const Comparison& c, const Section& s,
                   const ReportOptions& o, const std::string& group_title, bool& first,
                   std::string& last_heading, std::set<char>& marks) {
  require_param(s.rows, o.by, "--by");
  if (!o.group.empty()) require_param(s.rows, o.group, "--group");
  // Tables: by the --group value, then by every other parameter that varies.
  std::vector<std::string> others;
  for (const auto& k : varying_params(s.rows))
    if (k != o.by && k != o.group) others.push_back(k);
  std::vector<Table> tables;
  for (const auto* row : s.rows) {
    if (!param_value(row->params, o.by)) continue;
    std::string title;
    if (!group_title.empty()) title = group_title;
    if (!o.group.empty()) {
      const std::string g = param_value(row->params, o.group).value_or("(unset)");
      auto label = o.group_labels.find(g);
      title += (title.empty() ? "" : ", ") +
               (label != o.group_labels.end() ? label->second : g + " " + o.group);
    }
    const std::string rest = params_text(row->params, others);
    if (!rest.empty()) title += (title.empty() ? "" : ", ") + rest;
    auto it = std::find_if(tables.begin(), tables.end(),
                           [&](const Table& t) { return t.title == title; });
    if (it == tables.end()) {
      tables.push_back({title, {}});
      it = tables.end() - 1;
    }
    it->rows.push_back(row);
  }
  for (auto& t : tables) {
    const bool numeric = std::all_of(t.rows.begin(), t.rows.end(), [&](const ComparisonRow* r) {
      return is_number(*param_value(r->params, o.by));
    });
    if (numeric)
      std::stable_sort(t.rows.begin(), t.rows.end(), [&](const auto* a, const auto* b) {
        return std::stod(*param_value(a->params, o.by)) < std::stod(*param_value(b->params, o.by));
      });
  }
  const bool md = o.format == "markdown";
  const std::string head = heading(s, *s.rows.front(), o.stat);
  if (head != last_heading) {
    // Groups split by the caller share the heading: it is printed once.
    if (!first) out << "\n";
    last_heading = head;
    if (md)
      out << "**" << md_escape(head.substr(0, head.size() - 1)) << "**\n";
    else
      for (const auto& l : wrap_words(head, o.max_width)) out << l << "\n";
  }
  first = false;
  for (const auto& t : tables) {
    out << "\n";
    out << (md ? render_table_markdown(t, c, o.by, o, marks)
               : render_table_text(t, c, o.by, o, marks));
  }
}

std::string test_text(const stats::SignificanceOptions& s) {
  switch (s.test) {
    case stats::TestKind::welch:
      return fmt::format("Welch on logs+BH, alpha {:g}, >={:g}%", s.alpha, s.min_effect_pct);
    case stats::TestKind::utest:
      return fmt::format("Mann-Whitney U+BH, alpha {:g}, >={:g}%", s.alpha, s.min_effect_pct);
    case stats::TestKind::mmtests:
      return "mmtests rule: means +-1.96 SD apart";
    case stats::TestKind::lkp:
      return "LKP rule: ranges apart, >1%";
  }
  return "";
}

}  // namespace

ReportStat report_stat_from_string(const std::string& s) {
  if (s == "mean") return ReportStat::own_mean;
  if (s == "hmean") return ReportStat::hmean;
  if (s == "amean") return ReportStat::amean;
  if (s == "median") return ReportStat::median;
  throw UsageError("--stat " + s + ": unknown statistic; write hmean, amean, median or mean");
}

std::string report_legend(const std::vector<const Comparison*>& comparisons,
                          const std::string& metric, const std::string& marks, int max_width) {
  std::size_t lo = SIZE_MAX, hi = 0;
  int invalid = 0;
  bool included = false;
  // CoeffVar of every side and the smallest change each row could detect
  // (stats::Significance::smallest_detectable_change_pct): the reader of a
  // changelog sees how noisy the figures are and what "no change" can mean.
  double cv_lo = INFINITY, cv_hi = -INFINITY, mdc_lo = INFINITY, mdc_hi = -INFINITY;
  // Where rows with one run on a side took their between-run variation from
  // (docs/statistics.md "Where the between-run variation comes from").
  std::set<std::string> between;
  // Runs per side of the rows tested on run means (RunBasis::runs): their n
  // is of runs, not of the samples pooled (a new user read "n=15" where 3
  // run means per side were tested).
  int runs_lo = std::numeric_limits<int>::max(), runs_hi = 0;
  for (const Comparison* c : comparisons) {
    included = included || c->include_invalid;
    for (const auto& s : sections_of(*c, metric))
      for (const auto* r : s.rows) {
        const bool on_runs =
            std::any_of(r->significance.begin(), r->significance.end(),
                        [](const auto& sig) { return sig && sig->basis == stats::RunBasis::runs; });
        for (const auto& f : r->sides) {
          if (f.runs == 0) continue;
          if (on_runs) {
            runs_lo = std::min(runs_lo, f.runs);
            runs_hi = std::max(runs_hi, f.runs);
          }
          lo = std::min(lo, f.summary.n);
          hi = std::max(hi, f.summary.n);
          invalid += f.invalid;
          if (std::isfinite(f.summary.coeff_var)) {
            cv_lo = std::min(cv_lo, f.summary.coeff_var);
            cv_hi = std::max(cv_hi, f.summary.coeff_var);
          }
        }
        for (const auto& sig : r->significance)
          if (sig && sig->between) between.insert(stats::between_source_text(*sig->between));
        for (const auto& sig : r->significance)
          if (sig && std::isfinite(sig->smallest_detectable_change_pct) &&
              sig->smallest_detectable_change_pct > 0) {
            mdc_lo = std::min(mdc_lo, sig->smallest_detectable_change_pct);
            mdc_hi = std::max(mdc_hi, sig->smallest_detectable_change_pct);
          }
      }
  }
  auto range = [](double a, double b) {
    const std::string x = fmt::format("{:.1f}", a), y = fmt::format("{:.1f}", b);
    return x == y ? x + "%" : x + "-" + y + "%";
  };
  std::string n = lo == SIZE_MAX ? "n=0"
                  : lo == hi     ? fmt::format("n={}", lo)
                                 : fmt::format("n={}-{}", lo, hi);
  if (runs_hi > 0)
    n = (runs_lo == runs_hi ? fmt::format("{} runs", runs_lo)
                            : fmt::format("{}-{} runs", runs_lo, runs_hi)) +
        " (" + n + ")";
  std::string noise;
  if (std::isfinite(cv_lo)) noise += ", CoeffVar " + range(cv_lo, cv_hi);
  if (std::isfinite(mdc_lo)) noise += ", detects >=" + range(mdc_lo, mdc_hi);
  // Invalid samples: how many the figures leave out (or, --include-invalid, hold).
  const std::string left_out =
      invalid ? fmt::format(", {} invalid {}", invalid, included ? "included" : "left out") : "";
  std::string what;
  auto add = [&](char m, const char* text) {
    if (m == '*' || marks.find(m) != std::string::npos)
      what += std::string(what.empty() ? "" : ", ") + m + " " + text;
  };
  if (!marks.empty()) {
    add('*', "significant");
    add('?', "inconclusive");
    add('!', "undefined");
  }
  const stats::SignificanceOptions options =
      comparisons.empty() ? stats::SignificanceOptions{} : comparisons.front()->options;
  const std::string head = what.empty() ? std::string("Significance") : what;
  std::string text =
      head + " (" + test_text(options) + ", " + n + " per side" + noise + left_out + ")";
  if (text.size() > static_cast<std::size_t>(max_width))
    text = head + " (" + test_text(options) + ", " + n + noise + left_out + ")";
  std::string out;
  for (const auto& l : wrap_words(text, static_cast<std::size_t>(max_width))) out += l + "\n";
  if (!between.empty())
    for (const auto& l :
         wrap_words("Between-run variation (one run on a side) from " +
                        join(std::vector<std::string>(between.begin(), between.end()), "; "),
                    static_cast<std::size_t>(max_width)))
      out += l + "\n";
  std::set<std::string> warned;  // Comparison::warnings, once each, in plain ASCII
  for (const Comparison* c : comparisons)
    for (std::string w : c->warnings) {
      if (auto dash = w.find("—"); dash != std::string::npos) w.replace(dash, 3, "-");
      if (warned.insert(w).second)
        for (const auto& l : wrap_words("Warning: " + w, static_cast<std::size_t>(max_width)))
          out += l + "\n";
    }
  return out;
}

namespace {

// What else differed between the sides (docs/environment.md "In compare and
// check"): each NEW side's environment section once over every group, at
// most 10 kernel config lines each; "" when no fact differs. Changelog lines
// wider than `width` are wrapped under their own indent; markdown gets the
// section in a code block, as compare's markdown layout does.
std::string environment_block(const std::vector<const Comparison*>& comparisons, bool md,
                              std::size_t width) {
  std::set<std::string> seen;
  std::string body;
  for (const Comparison* c : comparisons)
    for (const auto& d : c->environment) {
      std::string section = render_environment_section({d}, 10);
      const std::string head = "\nenvironment:\n";
      if (section.empty() || !seen.insert(section).second) continue;
      body += section.substr(head.size());
    }
  if (body.empty()) return "";
  const std::string title = "Environment (what else differed between the sides):\n";
  if (md) return "\n" + title + "\n```\n" + body + "```\n";
  std::string out = "\n" + title;
  std::istringstream lines(body);
  for (std::string line; std::getline(lines, line);) {
    if (line.size() <= width) {
      out += line + "\n";
      continue;
    }
    const std::size_t lead = line.find_first_not_of(' ');
    const std::string indent(lead, ' ');
    for (const auto& l : wrap_words(line.substr(lead), width - lead, "    "))
      out += indent + l + "\n";
  }
  return out;
}

}  // namespace

std::string render_report(const Comparison& c, const ReportOptions& o) {
  return render_report(std::vector<ReportGroup>{{"", &c}}, o);
}

std::string render_report(const std::vector<ReportGroup>& groups, const ReportOptions& o) {
  if (o.format != "changelog" && o.format != "markdown")
    throw UsageError("--format " + o.format + ": write changelog, markdown or mmtests");
  if (!o.by.empty() && o.by == o.group)
    throw UsageError("--by and --group are both " + o.by +
                     "; the table's rows and its groups need two different parameters");
  std::ostringstream out;
  bool first = true;
  std::set<char> marks;
  std::string last_heading;
  std::vector<const Comparison*> all;
  for (const auto& g : groups) {
    all.push_back(g.comparison);
    for (const auto& s : sections_of(*g.comparison, o.metric)) {
      if (o.by.empty()) {
        if (!o.group.empty()) require_param(s.rows, o.group, "--group");
        render_blocks(out, *g.comparison, s, o, g.title, first);
      } else {
        render_matrix(out, *g.comparison, s, o, g.title, first, last_heading, marks);
      }
    }
  }
  if (!o.group_labels.empty()) {
    // --group-label VALUE=TITLE: every VALUE must be a value of the group.
    std::set<std::string> values;
    for (const auto& g : groups)
      for (const auto& r : g.comparison->rows)
        if (auto v = param_value(r.params, o.group)) values.insert(*v);
    for (const auto& [value, title] : o.group_labels)
      if (!values.count(value))
        throw UsageError(
            "--group-label " + value + "=" + title + ": '" + value +
            "' is not a value of --group " + o.group + "; its values: " +
            (values.empty() ? std::string("(none)") : join({values.begin(), values.end()})));
  }
  const bool md = o.format == "markdown";
  std::string legend = report_legend(
      all, o.metric, o.by.empty() ? "" : std::string(marks.begin(), marks.end()) + "*",
      md ? 1 << 20 : o.max_width);
  if (md) legend = md_escape(legend.substr(0, legend.size() - 1)) + "\n";
  out << "\n" << legend;
  out << environment_block(all, md, static_cast<std::size_t>(o.max_width));
  return out.str();
}

}  // namespace nightjar
