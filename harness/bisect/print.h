// The printing room of `nightjar bisect` (docs/architecture.md
// "harness/bisect"): the words and tables bisect prints -- commit ids,
// %change and p-values as text, the effect with its confidence interval, the
// comparison table of the first bad commit, a session's header line and its
// log (`bisect log`). It decides nothing: the figures come from the deciding
// room (harness/bisect/decide.h) and the store's records.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/bisect/decide.h"
#include "harness/bisect/git.h"
#include "harness/bisect/session.h"
#include "results/model/metric.h"
#include "results/store/bisect_log.h"

namespace nightjar {

/// The first 12 characters of a commit id.
std::string short_sha(const std::string& sha);
/// "+1.25%"; "undefined" when not finite.
std::string pct_text(double v);
/// "0.0123", "3.2e-05" below 1e-4; "-" when absent.
std::string p_text(std::optional<double> p);

/// "-9.80% of throughput (95% CI -11.2% .. -8.4% of the geometric mean; p=...,
/// q=...)": the decisive row's %change of metric `m` and, when it has one, the
/// (1 - alpha) confidence interval of its ratio, as a %change in the
/// direction of `m` (lower is better: signs turned).
std::string effect_with_ci(const DecisionResult& d, const MetricDescriptor& m, double alpha);

/// Prints the comparison table (mmtests layout, decimals for small figures)
/// of runs `now` against `base` (sides named `base_name`, `now_name`) with
/// minimum effect `min_effect` percent, and the effect line, on s.out.
void print_comparison(Session& s, const std::vector<std::int64_t>& base,
                      const std::vector<std::int64_t>& now, const std::string& base_name,
                      const std::string& now_name, double min_effect);

/// Prints "what else changed" (results/compare/why.h) between runs `base`
/// and `now` on s.out: every monitor row that moved and, where the runs
/// have perf-profile stacks, each cell's moved symbol shares, joined to
/// commit `commit` of `git` (changed_functions of harness/bisect/git.h, read
/// only when the block is printed): a moved symbol the commit changed is
/// marked "changed by SHA (FILE)". Prints nothing when the runs recorded no
/// monitor rows and no profiles (a job without `monitors:`). The rows are
/// decided as compare --why decides them, at the session's alpha and
/// `min_effect` percent. Errors as compare_selectors and Git::run.
void print_why(Session& s, const Git& git, const std::vector<std::int64_t>& base,
               const std::vector<std::int64_t>& now, const std::string& base_name,
               const std::string& now_name, double min_effect, const std::string& commit);

/// "bisect session N: good SHA (subject), bad SHA (subject), R commit(s)
/// after good; metric M (unit, higher is better); job J" on s.out.
void print_session_header(Session& s, const Git& git, const BisectSession& row, int range);

/// A session and its steps as `bisect log` prints them: the session's
/// fields, then one table row per step (step, commit, role, build, runs, n,
/// %change, q, verdict, decision, subject / reason cut at its first line
/// and at 160 characters; the whole reason stays in the database).
std::string render_session_log(const BisectSession& session, const std::vector<BisectStep>& steps);

}  // namespace nightjar
