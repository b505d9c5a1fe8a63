// The measuring room of `nightjar bisect`: see harness/bisect/measure.h.
#include "harness/bisect/measure.h"

#include <ostream>

#include <fmt/format.h>

#include "harness/bisect/print.h"
#include "results/model/exit_codes.h"
#include "results/model/text.h"

namespace nightjar {

std::unique_ptr<CommitMeasurer> make_measurer(ResultsStore& store, const BisectJobOptions& job,
                                              const Prepared& prepared) {
  if (job.kernel.enabled) return kernel_measurer(store, job, prepared);
  return work_tree_measurer(store, job, prepared);
}

BuildResult build_step(Session& s, int step, const std::string& sha) {
  const bool own_tree = s.tree.empty();
  if (own_tree) s.built.clear();
  BuildResult b = s.measurer->build(sha, own_tree ? s.prep.top : s.tree);
  if (b.ok && own_tree) s.built = sha;
  if (!b.ran)
    s.store.set_bisect_build(s.id, step, BisectBuild::none, std::nullopt, "");
  else
    s.store.set_bisect_build(s.id, step, b.ok ? BisectBuild::ok : BisectBuild::failed, b.seconds,
                             b.tail);
  return b;
}

std::vector<std::int64_t> measure_step(Session& s, int step, const std::string& sha,
                                       int iterations) {
  std::map<std::string, std::string> context = {{"bisect.session", std::to_string(s.id)},
                                                {"bisect.step", std::to_string(step)}};
  for (const auto& [k, v] : s.context) context[k] = v;
  MeasuredRuns r = s.measurer->run_job(sha, iterations, context);
  s.store.link_bisect_runs(s.id, step, r.run_ids);
  if (r.interrupted) throw Interrupted();
  return r.run_ids;
}

std::vector<std::int64_t> usable(const ResultsStore& store, const std::vector<std::int64_t>& ids,
                                 const std::string& metric) {
  std::vector<std::int64_t> out;
  for (auto id : ids) {
    RunFilter f;
    f.run_id = id;
    auto rows = store.runs(f);
    if (rows.empty() ||
        (rows[0].status != RunStatus::complete && rows[0].status != RunStatus::aborted))
      continue;
    for (const auto& s : store.samples(id))
      if (s.metric == metric) {
        out.push_back(id);
        break;
      }
  }
  return out;
}

std::string why_no_samples(const ResultsStore& store, const std::vector<std::int64_t>& ids) {
  std::vector<std::string> why;
  for (auto id : ids) {
    RunFilter f;
    f.run_id = id;
    for (const auto& r : store.runs(f))
      why.push_back(fmt::format("run {} {}{}", r.id, to_string(r.status),
                                r.reason.empty() ? "" : ": " + r.reason));
  }
  return why.empty() ? "no run was stored" : join(why, "; ");
}

std::pair<std::vector<std::int64_t>, std::vector<std::int64_t>> split_by_build(
    const ResultsStore& store, const std::vector<std::int64_t>& ids, const std::string& sha) {
  std::pair<std::vector<std::int64_t>, std::vector<std::int64_t>> out;
  for (auto id : ids) {
    RunFilter f;
    f.run_id = id;
    const auto rows = store.runs(f);
    if (rows.empty()) continue;
    (rows[0].build == sha ? out.first : out.second).push_back(id);
  }
  return out;
}

namespace {

// A paired step: measures the commit and the good endpoint alternately, one
// run (boot) each, commit first, until both have kPairedRuns runs with
// samples. Returns false when a run of either gave none (the caller decides
// on what there is, and says why).
bool fill_pairs(Session& s, int step, const std::string& sha, std::vector<std::int64_t>& runs,
                const std::string& good) {
  bool said = false;
  while (true) {
    auto [own, other] = split_by_build(s.store, runs, sha);
    const std::size_t mine = usable(s.store, own, s.job.metric).size();
    const std::size_t theirs = usable(s.store, other, s.job.metric).size();
    if (mine < own.size() || theirs < other.size()) return false;  // a run without samples
    if (mine >= kPairedRuns && theirs >= kPairedRuns) return true;
    if (!said) {
      s.out << fmt::format("  {}: measured beside the good endpoint {}, {} boots each\n",
                           short_sha(sha), short_sha(good), kPairedRuns)
            << std::flush;
      said = true;
    }
    const bool commit_next = mine <= theirs;
    auto more = measure_step(s, step, commit_next ? sha : good, s.prep.iterations);
    runs.insert(runs.end(), more.begin(), more.end());
  }
}

}  // namespace

DecisionResult decide_with_more(Session& s, int step, const std::string& sha,
                                std::vector<std::int64_t>& runs,
                                const std::vector<std::int64_t>& base, double min_effect,
                                const std::string& base_name, const std::string& pair_with) {
  const bool paired = !pair_with.empty();
  while (true) {
    if (paired && !usable(s.store, runs, s.job.metric).empty())
      fill_pairs(s, step, sha, runs, pair_with);
    const auto [own, other] = split_by_build(s.store, runs, sha);
    const std::vector<std::int64_t> mine = paired ? own : runs;
    std::vector<std::int64_t> ok = usable(s.store, mine, s.job.metric);
    if (ok.empty() || (paired && ok.size() < mine.size())) {
      DecisionResult none;
      none.summary = (ok.empty() ? "no samples: " : "a boot gave no samples: ") +
                     why_no_samples(s.store, mine);
      return none;
    }
    const std::vector<std::int64_t> against = paired ? usable(s.store, other, s.job.metric) : base;
    if (paired && (against.empty() || against.size() < other.size())) {
      DecisionResult none;
      none.summary =
          "the good endpoint measured beside it gave no samples: " + why_no_samples(s.store, other);
      return none;
    }
    DecisionResult d = decide_commit(s.store, against, ok, s.job.metric,
                                     bisect_significance(s.job.alpha, min_effect, paired),
                                     base_name, short_sha(sha));
    // Paired, a batch is one more boot of each (the unit), else as many
    // iterations as the commit has.
    int batch = more_iterations(d, s.job.max_iterations, s.prep.iterations);
    if (paired && batch > 0) batch = s.prep.iterations;
    if (batch == 0) return d;
    const int have = static_cast<int>(d.min_now);
    s.out << fmt::format("  {}: {}; adding {} iteration(s) ({} of at most {}){}\n", short_sha(sha),
                         d.summary, batch, have + batch, s.job.max_iterations,
                         paired ? ": a boot of it and one of the good endpoint" : "")
          << std::flush;
    auto more = measure_step(s, step, sha, batch);
    runs.insert(runs.end(), more.begin(), more.end());
    if (paired) {
      more = measure_step(s, step, pair_with, batch);
      runs.insert(runs.end(), more.begin(), more.end());
    }
  }
}

}  // namespace nightjar
