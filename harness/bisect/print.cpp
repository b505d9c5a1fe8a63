// The printing room of `nightjar bisect`: see harness/bisect/print.h.
#include "harness/bisect/print.h"

#include <algorithm>
#include <cmath>
#include <ostream>

#include <fmt/format.h>

#include "harness/bisect/options.h"
#include "results/compare/why.h"
#include "results/model/text.h"
#include "results/render/compare.h"
#include "results/render/table.h"
#include "results/render/why.h"
#include "workloads/workload.h"

namespace nightjar {

std::string short_sha(const std::string& sha) {
  return sha.substr(0, 12);
}

std::string pct_text(double v) {
  return std::isfinite(v) ? fmt::format("{:+.2f}%", v) : "undefined";
}

std::string p_text(std::optional<double> p) {
  return p ? nightjar::p_text(*p) : "-";
}

std::string effect_with_ci(const DecisionResult& d, const MetricDescriptor& m, double alpha) {
  std::string out = fmt::format("{} of {}", pct_text(d.row.pct_change), m.name);
  if (d.row.ratio_lo && d.row.ratio_hi) {
    double lo = (*d.row.ratio_lo - 1) * 100, hi = (*d.row.ratio_hi - 1) * 100;
    if (m.direction == Direction::lower_is_better) {
      double l = -hi, h = -lo;
      lo = l;
      hi = h;
    }
    out += fmt::format(" ({:g}% CI {:+.2f}% .. {:+.2f}% of the geometric mean", 100 * (1 - alpha),
                       lo, hi);
    out += fmt::format("; p={}, q={})", p_text(d.row.p), p_text(d.row.q));
  }
  return out;
}

void print_comparison(Session& s, const std::vector<std::int64_t>& base,
                      const std::vector<std::int64_t>& now, const std::string& base_name,
                      const std::string& now_name, double min_effect) {
  Comparison c;
  DecisionResult d = decide_commit(
      s.store, base, now, s.job.metric,
      bisect_significance(s.job.alpha, min_effect, paired_with_good(s)), base_name, now_name, &c);
  // Enough decimals for small figures (seconds of a short program).
  RenderOptions ro;
  double scale = 0;
  for (const auto& row : c.rows)
    if (row.kind == ComparisonRow::Kind::metric && !row.sides.empty() && row.sides[0].mean)
      scale = std::max(scale, std::abs(*row.sides[0].mean));
  if (scale < 100) {
    ro.precision = scale < 1 ? 6 : 4;
    ro.width = 14;
  }
  s.out << "\n" << render_mmtests(c, ro) << "\n";
  s.out << "effect: " << effect_with_ci(d, s.prep.metric, s.job.alpha) << "\n";
}

void print_why(Session& s, const Git& git, const std::vector<std::int64_t>& base,
               const std::vector<std::int64_t>& now, const std::string& base_name,
               const std::string& now_name, double min_effect, const std::string& commit) {
  if (base.empty() || now.empty()) return;
  std::vector<Selector> sides(2);
  sides[0].text = base_name;
  sides[0].run_ids = base;
  sides[1].text = now_name;
  sides[1].run_ids = now;
  const SideQuery query{"", "", {}, &workload_catalog(), false};
  const stats::SignificanceOptions options =
      bisect_significance(s.job.alpha, min_effect, paired_with_good(s));
  const Comparison c = compare_selectors(s.store, sides, query, options);
  WhyBlock why = explain_monitors(c, s.store, sides, query, options);
  const bool monitors = std::any_of(c.rows.begin(), c.rows.end(), [](const ComparisonRow& r) {
    return r.kind == ComparisonRow::Kind::monitor;
  });
  const bool profiles = std::any_of(why.sides.begin(), why.sides.end(),
                                    [](const WhySide& w) { return !w.profiles.empty(); });
  if (!monitors && !profiles) return;
  attribute_to_commit(why, commit, changed_functions(git, commit));
  s.out << render_why_text(why, 2);
}

void print_session_header(Session& s, const Git& git, const BisectSession& row, int range) {
  s.out << fmt::format(
               "bisect session {}: good {} ({}), bad {} ({}), {} commit(s) after good; "
               "metric {} ({}, {} is better); job {}\n",
               s.id, short_sha(row.good), subject_of(git, row.good), short_sha(row.bad),
               subject_of(git, row.bad), range, s.job.metric, s.prep.metric.unit,
               s.prep.metric.direction == Direction::higher_is_better ? "higher" : "lower",
               s.prep.job_name)
        << std::flush;
}

namespace {

std::string session_lines(const BisectSession& row) {
  std::string out =
      fmt::format("bisect session {} ({}): {}\n", row.id, row.kind, to_string(row.status));
  out += fmt::format("  repository  {}\n", row.repo);
  out +=
      fmt::format("  good        {}{}\n", row.good_rev, row.good.empty() ? "" : " = " + row.good);
  if (!row.bad_rev.empty())
    out += fmt::format("  bad         {}{}\n", row.bad_rev, row.bad.empty() ? "" : " = " + row.bad);
  out += fmt::format("  job         {} ({}), metric {}\n", row.job, row.job_path, row.metric);
  const std::string build = session_options(row).job.build_command;
  if (!build.empty()) out += fmt::format("  build       {}\n", build);
  out += fmt::format("  started     {}{}\n", row.started_at,
                     row.ended_at.empty() ? "" : ", ended " + row.ended_at);
  if (!row.result.empty()) out += fmt::format("  result      {}\n", row.result);
  return out;
}

}  // namespace

std::string render_session_log(const BisectSession& session, const std::vector<BisectStep>& steps) {
  using A = TextTable::Align;
  TextTable t({"step", "commit", "role", "build", "runs", "n", "%change", "q", "verdict",
               "decision", "subject / reason"},
              {A::right, A::left, A::left, A::left, A::right, A::right, A::right, A::right, A::left,
               A::left, A::left});
  for (const auto& s : steps) {
    std::string build = to_string(s.build_status);
    if (s.build_seconds) build += fmt::format(" {:.1f}s", *s.build_seconds);
    std::string n =
        s.n_now ? std::to_string(*s.n_now) + (s.n_base ? "/" + std::to_string(*s.n_base) : "")
                : "-";
    std::string text = s.subject;
    if (!s.reason.empty()) text += (text.empty() ? "" : ": ") + s.reason;
    // One line per step: a reason with the console's or build's tail (a
    // boot panic, a failed build) keeps its first line; the whole of it is
    // in the database (bisect_step.reason).
    if (const auto nl = text.find('\n'); nl != std::string::npos)
      text = text.substr(0, nl) + " ...";
    if (text.size() > 160) text = cut_utf8(text, 157) + "...";
    t.add_row({std::to_string(s.step), short_sha(s.commit), to_string(s.role), build,
               std::to_string(s.runs.size()), n, s.pct_change ? pct_text(*s.pct_change) : "-",
               p_text(s.q), s.verdict, to_string(s.decision), text});
  }
  return session_lines(session) + "\n" + t.render();
}

}  // namespace nightjar
