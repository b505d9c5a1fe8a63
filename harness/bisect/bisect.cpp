// `nightjar bisect`: see harness/bisect/bisect.h and docs/bisect.md.
#include "harness/bisect/bisect.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/run/runner.h"
#include "results/compare/comparison.h"
#include "results/model/text.h"
#include "results/render/compare.h"
#include "results/render/table.h"
#include "workloads/sys/process.h"
#include "workloads/sys/signals.h"

namespace nightjar {

const char* to_string(CommitDecision d) {
  switch (d) {
    case CommitDecision::good:
      return "good";
    case CommitDecision::bad:
      return "bad";
    case CommitDecision::unknown:
      return "unknown";
  }
  return "unknown";
}

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string short_sha(const std::string& sha) {
  return sha.substr(0, 12);
}

std::string pct_text(double v) {
  return std::isfinite(v) ? fmt::format("{:+.2f}%", v) : "undefined";
}
std::string p_text(std::optional<double> p) {
  if (!p) return "-";
  return *p < 1e-4 ? fmt::format("{:.1e}", *p) : fmt::format("{:.4f}", *p);
}

// ---------------------------------------------------------------------------
// git
// ---------------------------------------------------------------------------

class Git {
 public:
  /// `env`: more environment for every git command (the committer of the
  /// commits a branch test makes).
  explicit Git(std::string dir, std::map<std::string, std::string> env = {})
      : dir_(std::move(dir)), env_(std::move(env)) {}

  /// Runs `git -C DIR args`; throws EnvironmentError with git's message when
  /// it fails, unless `allow_fail`.
  CommandResult run(const std::vector<std::string>& args, bool allow_fail = false) const {
    CommandSpec s;
    s.argv = {"git", "-C", dir_};
    s.argv.insert(s.argv.end(), args.begin(), args.end());
    s.env["LC_ALL"] = "C";  // git's messages are parsed
    s.env["GIT_TERMINAL_PROMPT"] = "0";
    s.env["GIT_EDITOR"] = "true";
    for (const auto& [k, v] : env_) s.env[k] = v;
    s.timeout_sec = 600;
    // git runs to completion even when nightjar is interrupted: a half-written
    // bisect state would be worse than a second's delay.
    s.interrupted = [] { return false; };
    CommandResult r = run_command(s);
    if (!r.started)
      throw EnvironmentError("git: " + r.error + "; install git (apt-get install git)");
    if (!r.ok() && !allow_fail)
      throw EnvironmentError(fmt::format("`git {}` in {} {}: {}", join(args, " "), dir_,
                                         r.describe(),
                                         output_tail(r.err.empty() ? r.out : r.err, 4)));
    return r;
  }
  std::string line(const std::vector<std::string>& args) const {
    return std::string(trim(run(args).out));
  }
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
  std::map<std::string, std::string> env_;
};

std::string resolve_commit(const Git& git, const std::string& rev, const char* flag) {
  if (rev.empty())
    throw UsageError(fmt::format("bisect: {} is required; write {} REV", flag, flag));
  CommandResult r = git.run({"rev-parse", "--verify", "--quiet", rev + "^{commit}"}, true);
  if (!r.ok())
    throw UsageError(
        fmt::format("{} {}: not a commit in {}; write a commit id, tag or branch "
                    "(`git -C {} log --oneline` lists them)",
                    flag, rev, git.dir(), git.dir()));
  return std::string(trim(r.out));
}

std::string subject_of(const Git& git, const std::string& sha) {
  CommandResult r = git.run({"log", "-1", "--format=%s", sha}, true);
  return r.ok() ? std::string(trim(r.out)) : "";
}

bool bisect_in_progress(const Git& git) {
  std::string p = git.line({"rev-parse", "--git-path", "BISECT_START"});
  if (!fs::path(p).is_absolute()) p = git.dir() + "/" + p;
  return fs::exists(p);
}

/// What `git bisect good|bad|skip` said.
struct BisectState {
  std::string first_bad;                ///< set when git named the first bad commit
  bool only_skipped = false;            ///< only skipped commits are left
  std::vector<std::string> candidates;  ///< then: the commits it could be
};

BisectState parse_bisect_output(const CommandResult& r) {
  BisectState s;
  std::stringstream in(r.out + "\n" + r.err);
  std::string line;
  bool listing = false;
  while (std::getline(in, line)) {
    line = std::string(trim(line));
    if (auto pos = line.find(" is the first bad commit");
        pos != std::string::npos && s.first_bad.empty())
      s.first_bad = line.substr(0, pos);
    if (line.find("only 'skip'ped commits left to test") != std::string::npos)
      s.only_skipped = true;
    if (line.find("could be any of:") != std::string::npos) {
      listing = true;
      continue;
    }
    if (listing) {
      if (line.empty() || line.find("cannot bisect more") != std::string::npos) {
        listing = false;
        continue;
      }
      s.candidates.push_back(line.substr(0, line.find(' ')));
    }
  }
  return s;
}

// `git bisect good|bad|skip SHA`: what git concluded. git exits 2 when only
// skipped commits are left; any other failure is an environment error.
BisectState mark(const Git& git, const std::string& decision, const std::string& sha) {
  CommandResult r = git.run({"bisect", decision, sha}, true);
  BisectState state = parse_bisect_output(r);
  if (!r.ok() && !state.only_skipped)
    throw EnvironmentError(fmt::format("`git bisect {} {}` in {} {}: {}", decision, sha, git.dir(),
                                       r.describe(),
                                       output_tail(r.err.empty() ? r.out : r.err, 4)));
  return state;
}

// Ends the git bisection on every path (found, error, interruption), which
// also checks out what was checked out before it began.
class BisectGuard {
 public:
  explicit BisectGuard(const Git& git) : git_(git) {}
  ~BisectGuard() {
    if (!started_) return;
    try {
      CommandResult r = git_.run({"bisect", "reset"}, true);
      if (!r.ok())
        std::cerr << "nightjar: warning: `git bisect reset` in " << git_.dir()
                  << " failed: " << output_tail(r.err, 3) << "; run it yourself\n";
    } catch (const std::exception& e) {
      std::cerr << "nightjar: warning: " << e.what() << "\n";
    }
  }
  void started() { started_ = true; }

 private:
  const Git& git_;
  bool started_ = false;
};

// ---------------------------------------------------------------------------
// Session storage (tables bisect_session, bisect_step, bisect_run; the
// store's records are in results/store/bisect_log.h)
// ---------------------------------------------------------------------------

struct SessionRow {
  std::int64_t id = 0;
  std::string kind, repo, good_rev, bad_rev, good, bad, job_path, job, metric, status, result,
      first_bad, started_at, ended_at;
  json options;
};

using StepRow = BisectStep;

SessionRow session_row(const BisectSession& r) {
  return {r.id,        r.kind,       r.repo,     r.good_rev,
          r.bad_rev,   r.good,       r.bad,      r.job_path,
          r.job,       r.metric,     r.status,   r.result,
          r.first_bad, r.started_at, r.ended_at, json::parse(r.options, nullptr, false)};
}

std::optional<SessionRow> session_row(const std::optional<BisectSession>& r) {
  if (!r) return std::nullopt;
  return session_row(*r);
}

std::int64_t create_session(ResultsStore& store, const SessionRow& s) {
  BisectSession r;
  r.kind = s.kind;
  r.repo = s.repo;
  r.good_rev = s.good_rev;
  r.bad_rev = s.bad_rev;
  r.good = s.good;
  r.bad = s.bad;
  r.job_path = s.job_path;
  r.job = s.job;
  r.metric = s.metric;
  r.options = s.options.dump();
  return store.create_bisect_session(r);
}

std::optional<SessionRow> load_session(const ResultsStore& store, std::int64_t id) {
  return session_row(store.bisect_session(id));
}

// The helpers below only name the store's bisect functions, so that their
// callers in this file read as before.
std::vector<StepRow> load_steps(const ResultsStore& store, std::int64_t session) {
  return store.bisect_steps(session);
}

int add_step(ResultsStore& store, std::int64_t session, const std::string& commit,
             const std::string& subject, const std::string& role) {
  return store.add_bisect_step(session, commit, subject, role);
}

void set_build(ResultsStore& store, std::int64_t session, int step, const std::string& status,
               std::optional<double> seconds, const std::string& output) {
  store.set_bisect_build(session, step, status, seconds, output);
}

void link_runs(ResultsStore& store, std::int64_t session, int step,
               const std::vector<std::int64_t>& runs) {
  store.link_bisect_runs(session, step, runs);
}

void set_decision(ResultsStore& store, std::int64_t session, int step, const std::string& decision,
                  const DecisionResult* d, const std::string& reason) {
  BisectVerdict v;
  v.decision = decision;
  v.reason = reason;
  if (d) {
    v.verdict = stats::to_string(d->row.verdict);
    v.pct_change = d->row.pct_change;
    v.p = d->row.p;
    v.q = d->row.q;
    v.ratio_lo = d->row.ratio_lo;
    v.ratio_hi = d->row.ratio_hi;
    v.n_base = static_cast<std::int64_t>(d->n_base);
    v.n_now = static_cast<std::int64_t>(d->n_now);
  }
  store.set_bisect_decision(session, step, v);
}

void finish_session(ResultsStore& store, std::int64_t session, const std::string& status,
                    const std::string& result, const std::string& first_bad = "") {
  store.finish_bisect_session(session, status, result, first_bad);
}

// ---------------------------------------------------------------------------
// Options <-> JSON (so that a session can be resumed)
// ---------------------------------------------------------------------------

json options_to_json(const BisectJobOptions& o) {
  json sets = json::array();
  for (const auto& s : o.overrides) sets.push_back({{"key", s.key}, {"values", s.values}});
  json j = {{"metric", o.metric},
            {"sets", sets},
            {"variant", o.variant},
            {"max_iterations", o.max_iterations},
            {"alpha", o.alpha},
            {"build_command", o.build_command},
            {"build_timeout", o.build_timeout}};
  j["iterations"] = o.iterations ? json(*o.iterations) : json(nullptr);
  j["warmup"] = o.warmup ? json(*o.warmup) : json(nullptr);
  j["min_effect_pct"] = o.min_effect_pct ? json(*o.min_effect_pct) : json(nullptr);
  return j;
}

BisectJobOptions options_from_json(const json& j, const std::string& job_path) {
  BisectJobOptions o;
  o.job_path = job_path;
  if (!j.is_object()) return o;
  o.metric = j.value("metric", "");
  for (const auto& s : j.value("sets", json::array()))
    o.overrides.push_back({s.value("key", ""), s.value("values", std::vector<std::string>{})});
  o.variant = j.value("variant", "");
  o.max_iterations = j.value("max_iterations", 30);
  o.alpha = j.value("alpha", 0.05);
  o.build_command = j.value("build_command", "");
  o.build_timeout = j.value("build_timeout", 0.0);
  if (j.contains("iterations") && j["iterations"].is_number())
    o.iterations = j["iterations"].get<int>();
  if (j.contains("warmup") && j["warmup"].is_number()) o.warmup = j["warmup"].get<int>();
  if (j.contains("min_effect_pct") && j["min_effect_pct"].is_number())
    o.min_effect_pct = j["min_effect_pct"].get<double>();
  return o;
}

// ---------------------------------------------------------------------------
// Preparing: everything checked before the database is opened
// ---------------------------------------------------------------------------

struct Prepared {
  std::string top;       ///< repository top directory (the working directory from now on)
  std::string job_name;  ///< job file stem
  std::string workload;
  MetricDescriptor metric;
  int iterations = 0;     ///< first batch per commit
  std::size_t cells = 1;  ///< cells of the job: runs per batch
  MachineFacts machine;
};

RunOptions run_options(const BisectJobOptions& o, const std::string& build,
                       std::optional<int> iterations) {
  RunOptions r;
  r.job_paths = {o.job_path};
  r.variant = o.variant;
  r.build = build;
  r.iterations = iterations ? iterations : o.iterations;
  r.warmup = o.warmup;
  r.overrides = o.overrides;
  return r;
}

Prepared prepare(const std::string& repo, BisectJobOptions& job) {
  Prepared p;
  if (job.job_path.empty())
    throw UsageError("bisect: --job is required; write --job jobs/NAME.yaml");
  if (job.max_iterations < 1) throw UsageError("--max-iterations: must be at least 1");
  if (!(job.alpha > 0 && job.alpha < 1))
    throw UsageError("--alpha: must be in (0, 1), such as 0.05");
  if (job.min_effect_pct && !(*job.min_effect_pct >= 0))
    throw UsageError("--min-effect: must be 0 or more (percent)");
  std::error_code ec;
  job.job_path = fs::absolute(job.job_path, ec).lexically_normal().string();
  p.machine = probe_machine_facts();
  auto plan = plan_runs(run_options(job, "", std::nullopt), p.machine);  // UsageError on bad input
  const PlannedJob& pj = plan.front();
  if (pj.variants.size() > 1) {
    std::vector<std::string> names;
    for (const auto& v : pj.variants) names.push_back(v.name);
    throw UsageError(
        fmt::format("{}: the job has variants {}; bisect measures one: write --variant NAME",
                    job.job_path, join(names, ", ")));
  }
  p.job_name = pj.job.name;
  p.workload = std::string(pj.workload->name());
  p.iterations = pj.iterations;
  p.cells = std::max<std::size_t>(pj.cells.size(), 1);
  if (p.iterations > job.max_iterations)
    throw UsageError(
        fmt::format("--max-iterations {} is below the {} iterations of the first batch; "
                    "raise it or lower --iterations",
                    job.max_iterations, p.iterations));
  std::vector<MetricDescriptor> metrics = pj.workload->cell_metrics(pj.cells.front());
  if (job.metric.empty()) {
    if (metrics.empty())
      throw UsageError(job.job_path + ": the workload declares no metric to bisect on");
    p.metric = metrics.front();
    job.metric = p.metric.name;
  } else {
    std::vector<std::string> names;
    bool found = false;
    for (const auto& m : metrics) {
      names.push_back(m.name);
      if (m.name == job.metric) {
        p.metric = m;
        found = true;
      }
    }
    if (!found)
      throw UsageError(fmt::format("--metric {}: {} ({}) has no such metric; its metrics are {}",
                                   job.metric, job.job_path, p.workload, join(names, ", ")));
  }
  // The repository.
  std::string dir = fs::absolute(repo.empty() ? "." : repo, ec).lexically_normal().string();
  if (!fs::is_directory(dir))
    throw UsageError(
        fmt::format("--repo {}: not a directory; write --repo PATH of a git work tree", repo));
  Git probe(dir);
  CommandResult top = probe.run({"rev-parse", "--show-toplevel"}, true);
  if (!top.ok() || trim(top.out).empty())
    throw UsageError(
        fmt::format("--repo {}: not a git work tree ({}); write --repo PATH of a clone", repo,
                    output_tail(top.err, 2)));
  p.top = trim(top.out);
  return p;
}

void enter(const Prepared& p) {
  if (::chdir(p.top.c_str()) != 0)
    throw EnvironmentError(fmt::format("cannot change to {}: {}", p.top, std::strerror(errno)));
}

// The database path, absolute (resolved before the repository is entered).
std::string db_path(const std::string& db) {
  std::error_code ec;
  return fs::absolute(ResultsStore::resolve_path(db), ec).lexically_normal().string();
}

ResultsStore open_db(const std::string& path) {
  std::cerr << "nightjar: database " << path << "\n";
  return ResultsStore(path);
}

// ---------------------------------------------------------------------------
// Measuring one commit
// ---------------------------------------------------------------------------

/// Result of the endpoint phase.
struct Endpoints {
  std::vector<std::int64_t> base;  ///< good runs (A and A')
  std::vector<std::int64_t> bad;   ///< bad runs
  double change = 0;               ///< %change bad vs good
  double min_effect = 1;           ///< used for every commit between
};

struct Session {
  Session(ResultsStore& st, std::ostream& o, BisectJobOptions j, Prepared p)
      : store(st), out(o), job(std::move(j)), prep(std::move(p)) {}
  ResultsStore& store;
  std::ostream& out;
  BisectJobOptions job;
  Prepared prep;
  std::int64_t id = 0;
  std::string built;  ///< the commit whose build is in the work tree ("" = unknown)
  /// Where builds and runs happen: "" = the repository top; a branch test's
  /// temporary worktree while it runs (the process's working directory too).
  std::string tree;
  /// More facts recorded with every run measured (run_context).
  std::map<std::string, std::string> context;
  std::optional<Endpoints> endpoints;  ///< once checked
  std::string first_bad;               ///< once git named it
  bool test_branch = false;            ///< --test-merge-branch: test a merge's branch after
};

struct BuildResult {
  bool ok = true;
  double seconds = 0;
  std::string tail;
};

// Builds `sha`, checked out in the session's tree (the repository top, or a
// branch test's worktree), with the build command. Only a build in the
// repository's own work tree changes what its build products are (s.built).
BuildResult build(Session& s, int step, const std::string& sha) {
  BuildResult b;
  const bool own_tree = s.tree.empty();
  if (s.job.build_command.empty()) {
    set_build(s.store, s.id, step, "none", std::nullopt, "");
    if (own_tree) s.built = sha;
    return b;
  }
  CommandSpec spec;
  spec.argv = {"/bin/sh", "-c", s.job.build_command};
  spec.cwd = own_tree ? s.prep.top : s.tree;
  spec.merge_stderr = true;
  spec.timeout_sec = s.job.build_timeout;
  spec.env["NIGHTJAR_COMMIT"] = sha;
  spec.env["NIGHTJAR_REPO"] = s.prep.top;
  if (own_tree) s.built.clear();
  CommandResult r = run_command(spec);
  if (r.interrupted || interrupted()) throw Interrupted();
  b.ok = r.ok();
  if (b.ok && own_tree) s.built = sha;
  b.seconds = r.wall_sec;
  b.tail = b.ok ? "" : r.describe(s.job.build_timeout) + ": " + output_tail(r.out, 12, 1500);
  set_build(s.store, s.id, step, b.ok ? "ok" : "failed", b.seconds, b.ok ? "" : b.tail);
  return b;
}

// Runs the job once (every cell) with the build label `sha`; links the runs.
std::vector<std::int64_t> measure(Session& s, int step, const std::string& sha, int iterations) {
  RunOptions o = run_options(s.job, sha, iterations);
  o.context["bisect.session"] = std::to_string(s.id);
  o.context["bisect.step"] = std::to_string(step);
  for (const auto& [k, v] : s.context) o.context[k] = v;
  auto plan = plan_runs(o, s.prep.machine);
  RunOutcome r = execute_runs(plan, o, s.store);
  link_runs(s.store, s.id, step, r.run_ids);
  if (r.interrupted) throw Interrupted();
  return r.run_ids;
}

// Runs of `ids` that hold valid samples of the metric (complete or aborted;
// a run whose samples are all invalid measured nothing to decide on).
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

// Bisect asks "does this commit carry the regression?", not "did anything
// change?": a commit is bad only when its change is significant AND at least
// the minimum effect (half the endpoints' change unless the job sets it), and
// good when the data could have seen that effect and did not (the detectable
// rule). The equivalence rule of compare/check would call a significant
// -3% "bad" against a -10% regression, and flag a stable good endpoint as
// unstable (docs/bisect.md "Deciding a commit"). Every run of a bisect is on
// one testbox back to back, so the samples are pooled (no run model: 2 runs a
// side would leave a t test with ~2 degrees of freedom).
stats::SignificanceOptions significance(const BisectJobOptions& o, double min_effect) {
  stats::SignificanceOptions s;
  s.alpha = o.alpha;
  s.min_effect_pct = min_effect;
  s.unchanged = stats::UnchangedRule::detectable;
  s.run_model = false;
  return s;
}

/// Measures `sha` for `step` until the decision is not unknown or the cap is
/// reached. `runs` holds the step's runs so far (resume) and grows.
DecisionResult decide_with_more(Session& s, int step, const std::string& sha,
                                std::vector<std::int64_t>& runs,
                                const std::vector<std::int64_t>& base, double min_effect,
                                const std::string& base_name) {
  while (true) {
    std::vector<std::int64_t> ok = usable(s.store, runs, s.job.metric);
    if (ok.empty()) {
      DecisionResult none;
      none.summary = "no samples: " + why_no_samples(s.store, runs);
      return none;
    }
    DecisionResult d = decide_commit(s.store, base, ok, s.job.metric,
                                     significance(s.job, min_effect), base_name, short_sha(sha));
    if (d.decision != CommitDecision::unknown || !d.more_helps ||
        d.min_now >= static_cast<std::size_t>(s.job.max_iterations))
      return d;
    int have = static_cast<int>(d.min_now);
    int batch = std::min(s.job.max_iterations - have, std::max(have, s.prep.iterations));
    s.out << fmt::format("  {}: {}; adding {} iteration(s) ({} of at most {})\n", short_sha(sha),
                         d.summary, batch, have + batch, s.job.max_iterations)
          << std::flush;
    auto more = measure(s, step, sha, batch);
    runs.insert(runs.end(), more.begin(), more.end());
  }
}

// The runs of a step that hold samples, split into the endpoint's first
// batch (one run per cell) and the rest: the good endpoint's A and its
// itself-run A'.
std::pair<std::vector<std::int64_t>, std::vector<std::int64_t>> first_and_rest(
    const std::vector<std::int64_t>& runs, std::size_t cells) {
  std::size_t k = std::min(cells, runs.size());
  return {{runs.begin(), runs.begin() + static_cast<std::ptrdiff_t>(k)},
          {runs.begin() + static_cast<std::ptrdiff_t>(k), runs.end()}};
}

// ---------------------------------------------------------------------------
// Printing
// ---------------------------------------------------------------------------

const MetricDescriptor& metric_of(const Session& s) {
  return s.prep.metric;
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
  DecisionResult d = decide_commit(s.store, base, now, s.job.metric,
                                   significance(s.job, min_effect), base_name, now_name, &c);
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
  s.out << "effect: " << effect_with_ci(d, metric_of(s), s.job.alpha) << "\n";
}

// ---------------------------------------------------------------------------
// The bisection
// ---------------------------------------------------------------------------

// Builds and measures one endpoint step until it has `runs_wanted` runs with
// samples. Returns false (after recording why) when it does not build.
bool measure_endpoint(Session& s, Git& git, StepRow& step, const std::string& sha, int batches) {
  std::vector<std::int64_t> ok = usable(s.store, step.runs, s.job.metric);
  const std::size_t runs_wanted = static_cast<std::size_t>(batches) * s.prep.cells;
  if (ok.size() >= runs_wanted) return true;
  git.run({"checkout", "--quiet", "--detach", sha});
  BuildResult b = build(s, step.step, sha);
  if (!b.ok) {
    set_decision(s.store, s.id, step.step, "skip", nullptr, "build failed: " + b.tail);
    s.out << fmt::format("{} endpoint {} does not build: {}\n", step.role, short_sha(sha), b.tail);
    return false;
  }
  while (ok.size() < runs_wanted) {
    auto runs = measure(s, step.step, sha, s.prep.iterations);
    step.runs.insert(step.runs.end(), runs.begin(), runs.end());
    auto now_ok = usable(s.store, runs, s.job.metric);
    if (now_ok.empty()) {
      std::string why = "the job gave no samples: " + why_no_samples(s.store, runs);
      set_decision(s.store, s.id, step.step, "skip", nullptr, why);
      s.out << fmt::format("{} endpoint {}: {}\n", step.role, short_sha(sha), why);
      return false;
    }
    ok.insert(ok.end(), now_ok.begin(), now_ok.end());
  }
  return true;
}

StepRow& find_or_add(Session& s, std::vector<StepRow>& steps, const std::string& role,
                     const std::string& sha, const Git& git) {
  for (auto& st : steps)
    if (st.role == role && st.commit == sha) return st;
  StepRow row;
  row.step = add_step(s.store, s.id, sha, subject_of(git, sha), role);
  row.commit = sha;
  row.role = role;
  row.decision = "pending";
  steps.push_back(row);
  return steps.back();
}

ExitCode stop(Session& s, const std::string& status, const std::string& why, ExitCode code) {
  finish_session(s.store, s.id, status, why);
  s.out << "bisect " << status << ": " << why << "\n";
  return code;
}

std::optional<Endpoints> check_endpoints(Session& s, Git& git, std::vector<StepRow>& steps,
                                         const std::string& good, const std::string& bad,
                                         ExitCode& code) {
  const int good_step = find_or_add(s, steps, "good", good, git).step;
  const int bad_step = find_or_add(s, steps, "bad", bad, git).step;
  auto by_step = [&](int n) -> StepRow& {
    return *std::find_if(steps.begin(), steps.end(), [&](const StepRow& r) { return r.step == n; });
  };
  auto stopped = [&](const std::string& status, const std::string& why, ExitCode c) {
    code = stop(s, status, why, c);
    return std::nullopt;
  };
  // The good endpoint twice (A, then its itself-run A'), then the bad one.
  if (!measure_endpoint(s, git, by_step(good_step), good, 2))
    return stopped(
        "failed",
        "the good endpoint " + short_sha(good) + " cannot be measured; see `nightjar bisect log`",
        ExitCode::environment);
  if (!measure_endpoint(s, git, by_step(bad_step), bad, 1))
    return stopped(
        "failed",
        "the bad endpoint " + short_sha(bad) + " cannot be measured; see `nightjar bisect log`",
        ExitCode::environment);
  StepRow& g = by_step(good_step);
  StepRow& b = by_step(bad_step);

  Endpoints e;
  e.base = usable(s.store, g.runs, s.job.metric);
  double first_min_effect = s.job.min_effect_pct.value_or(1.0);
  // Bad against good: must be a regression. More iterations of bad when unsure.
  std::vector<std::int64_t> bad_runs = b.runs;
  DecisionResult db;
  {
    std::vector<std::int64_t> ok = usable(s.store, bad_runs, s.job.metric);
    db = decide_commit(s.store, e.base, ok, s.job.metric, significance(s.job, first_min_effect),
                       "good", "bad");
    if (db.decision == CommitDecision::unknown && db.more_helps &&
        db.min_now < static_cast<std::size_t>(s.job.max_iterations)) {
      if (s.built != bad) {
        git.run({"checkout", "--quiet", "--detach", bad});
        BuildResult br = build(s, b.step, bad);
        if (!br.ok)
          return stopped("failed",
                         "the bad endpoint " + short_sha(bad) + " no longer builds: " + br.tail,
                         ExitCode::environment);
      }
      db = decide_with_more(s, b.step, bad, bad_runs, e.base, first_min_effect, "good");
    }
  }
  e.bad = usable(s.store, bad_runs, s.job.metric);
  const MetricDescriptor& m = metric_of(s);
  s.out << fmt::format("bad  {} vs good {}: {}\n", short_sha(bad), short_sha(good), db.summary);
  if (db.decision != CommitDecision::bad) {
    set_decision(s.store, s.id, b.step, "skip", &db,
                 "not a regression against good: " + db.summary);
    set_decision(s.store, s.id, g.step, "good", nullptr, "");
    std::string why = fmt::format(
        "the bad endpoint {} does not show a regression of {} against the good endpoint {} ({}); "
        "nothing to bisect: check the endpoints, the metric (--metric), or give more iterations",
        short_sha(bad), m.name, short_sha(good),
        db.row.reason.empty() ? db.summary : db.row.reason);
    return stopped("inconclusive", why, ExitCode::inconclusive);
  }
  e.change = db.row.pct_change;
  e.min_effect = s.job.min_effect_pct.value_or(std::max(1.0, std::abs(e.change) / 2));
  // Good against itself: must not look regressed at the bisect's minimum effect.
  auto [a, a2] = first_and_rest(e.base, s.prep.cells);
  DecisionResult dg = decide_commit(s.store, a, a2, s.job.metric, significance(s.job, e.min_effect),
                                    "good", "good (again)");
  s.out << fmt::format("good {} vs itself: {}\n", short_sha(good), dg.summary);
  set_decision(s.store, s.id, b.step, "bad", &db, "regression against good: " + db.summary);
  if (dg.decision == CommitDecision::bad) {
    set_decision(s.store, s.id, g.step, "skip", &dg,
                 "unstable: its second run regressed: " + dg.summary);
    std::string why = fmt::format(
        "the good endpoint {} is unstable: its second run differs from its first ({}), as much as "
        "half the change being bisected ({}); reduce noise (see `nightjar env`) or raise "
        "--iterations",
        short_sha(good), dg.summary, pct_text(e.change));
    return stopped("inconclusive", why, ExitCode::inconclusive);
  }
  set_decision(s.store, s.id, g.step, "good", &dg, "itself-run: " + dg.summary);
  s.out << fmt::format(
               "commits between are judged against good ({} samples) with a minimum effect of "
               "{:.2f}%\n",
               e.base.empty() ? 0 : db.n_base, e.min_effect)
        << std::flush;
  return e;
}

// The counts of a bisection's steps between the endpoints.
struct StepCounts {
  int decided = 0, skipped = 0, tested = 0;
};

void print_session_header(Session& s, Git& git, const SessionRow& row, int range) {
  s.out << fmt::format(
               "bisect session {}: good {} ({}), bad {} ({}), {} commit(s) after good; "
               "metric {} ({}, {} is better); job {}\n",
               s.id, short_sha(row.good), subject_of(git, row.good), short_sha(row.bad),
               subject_of(git, row.bad), range, s.job.metric, s.prep.metric.unit,
               s.prep.metric.direction == Direction::higher_is_better ? "higher" : "lower",
               s.prep.job_name)
        << std::flush;
}

// Hands the endpoints to git, then replays the decisions already stored.
BisectState replay_steps(Session& s, Git& git, const SessionRow& row,
                         const std::vector<StepRow>& steps, StepCounts& counts) {
  git.run({"bisect", "bad", row.bad});
  BisectState state = mark(git, "good", row.good);
  for (const auto& st : steps) {
    if (st.role != "test" || st.decision == "pending") continue;
    state = mark(git, st.decision, st.commit);
    ++counts.tested;
    (st.decision == "skip" ? counts.skipped : counts.decided)++;
  }
  if (counts.tested)
    s.out << fmt::format("resumed: {} step(s) replayed from the database\n", counts.tested);
  return state;
}

// The step of commit `sha`: one left pending by an interrupted run (it goes
// on with its samples), else a new one.
StepRow& step_for(Session& s, Git& git, std::vector<StepRow>& steps, const std::string& sha) {
  for (auto& r : steps)
    if (r.role == "test" && r.commit == sha && r.decision == "pending") return r;
  StepRow r;
  r.step = add_step(s.store, s.id, sha, subject_of(git, sha), "test");
  r.commit = sha;
  r.role = "test";
  steps.push_back(r);
  return steps.back();
}

// Builds, measures and decides one commit against the good endpoint; stores
// the decision and returns it ("good", "bad" or "skip"). `sha` is the commit
// checked out and built, the build label of its runs: step.commit for a
// commit git bisect picked, the commit made by applying step.commit for a
// branch step. `title` starts the line printed, `note` the stored reason;
// `d` receives the decision.
std::string test_commit(Session& s, StepRow& step, const std::string& sha, const std::string& title,
                        const std::string& note, const Endpoints& endpoints, DecisionResult& d) {
  std::string decision, reason;
  d = DecisionResult();
  BuildResult b = build(s, step.step, sha);
  if (!b.ok) {
    decision = "skip";
    reason = "build failed: " + b.tail;
    s.out << fmt::format("{}: build failed -> skip\n", title);
  } else {
    std::vector<std::int64_t> runs = step.runs;
    if (usable(s.store, runs, s.job.metric).empty()) {
      auto r = measure(s, step.step, sha, s.prep.iterations);
      runs.insert(runs.end(), r.begin(), r.end());
    }
    d = decide_with_more(s, step.step, sha, runs, endpoints.base, endpoints.min_effect, "good");
    reason = d.summary;
    if (d.min_now == 0) {
      decision = "skip";
    } else {
      decision = d.decision == CommitDecision::good  ? "good"
                 : d.decision == CommitDecision::bad ? "bad"
                                                     : "skip";
      if (d.decision == CommitDecision::unknown)
        reason = "still unsure after " + std::to_string(d.min_now) + " samples: " + d.row.reason;
    }
    s.out << fmt::format(
                 "{}: {}{} -> {}\n", title,
                 b.seconds > 0 ? fmt::format("built in {:.1f} s; ", b.seconds) : "",
                 d.min_now ? fmt::format("{} samples: {}", d.min_now, d.summary) : d.summary,
                 decision)
          << std::flush;
  }
  set_decision(s.store, s.id, step.step, decision, d.min_now ? &d : nullptr, note + reason);
  step.decision = decision;
  return decision;
}

ExitCode report_only_skipped(Session& s, const BisectState& state) {
  std::vector<std::string> shorts;
  for (const auto& c : state.candidates) shorts.push_back(short_sha(c));
  std::string why = fmt::format("only skipped commits are left: the first bad commit is one of {}",
                                join(shorts, ", "));
  finish_session(s.store, s.id, "inconclusive", why);
  s.out << "bisect inconclusive: " << why << "\n";
  return ExitCode::inconclusive;
}

// The parents of `commit`, first parent first (none for a root commit).
std::vector<std::string> parents_of(const Git& git, const std::string& commit) {
  std::vector<std::string> p = split(git.line({"rev-list", "--parents", "-n", "1", commit}), ' ');
  if (!p.empty()) p.erase(p.begin());
  return p;
}

// The git command that lists the commits of a merge's branch that a test on
// top of the first parent applies, and the commits, oldest first. These are
// the commits `git rebase P1 P2` would apply: merges and commits whose change
// P1 already has (same patch id) are left out.
std::vector<std::string> branch_list_args(const std::string& p1, const std::string& p2) {
  return {"rev-list", "--reverse", "--no-merges", "--right-only", "--cherry-pick", p1 + "..." + p2};
}
std::vector<std::string> branch_commits(const Git& git, const std::string& p1,
                                        const std::string& p2) {
  return split_blanks(git.run(branch_list_args(p1, p2)).out);
}

// When the first bad commit is a merge, git names it only because every
// parent is good: the regression comes from the branches together, not from
// one commit (issue 19). Says so, with why each parent counts as good (a
// measured step, or an ancestor of a good commit, which git bisect takes as
// good without measuring), and how the branch commits are tested on top of
// the first parent (`bisect branch`, or --test-merge-branch, which then
// follows). "" for an ordinary commit.
std::string merge_note(Session& s, const Git& git, const std::string& first, bool testing) {
  std::vector<std::string> parents = parents_of(git, first);
  if (parents.size() < 2) return "";
  const std::vector<StepRow> steps = load_steps(s.store, s.id);
  // Why each parent is good: the step that measured it (the good endpoint,
  // or a commit git picked), else a measured commit it is an ancestor of.
  auto measured = [](const StepRow& st) {
    return st.role == "good"
               ? std::string("the good endpoint")
               : "measured good" +
                     (st.pct_change ? " (" + pct_text(*st.pct_change) + ")" : std::string());
  };
  std::vector<std::string> why;
  for (const std::string& p : parents) {
    std::string reason;
    for (const auto& st : steps)
      if (st.commit == p && st.decision == "good" && st.role != "branch") {
        reason = measured(st);
        break;
      }
    if (reason.empty())
      for (const auto& st : steps)
        if (st.decision == "good" && st.role != "branch" && st.commit != p &&
            git.run({"merge-base", "--is-ancestor", p, st.commit}, true).ok()) {
          reason = fmt::format("an ancestor of {}, {}", short_sha(st.commit), measured(st));
          break;
        }
    why.push_back(short_sha(p) + " " + (reason.empty() ? "good for git bisect" : reason));
  }
  std::string note = fmt::format(
      "  merge {}: {} parents measure good ({}): an interaction of the merged branches, not one "
      "commit\n",
      short_sha(first), parents.size() == 2 ? "both" : "all", join(why, "; "));
  if (parents.size() > 2)
    return note +
           "  an octopus merge: test each branch on top of the first parent by hand (`nightjar "
           "bisect step` on each commit)\n";
  const std::size_t count = branch_commits(git, parents[0], parents[1]).size();
  const std::string list =
      fmt::format("`git -C {} {}`", git.dir(),
                  join(branch_list_args(short_sha(parents[0]), short_sha(parents[1])), " "));
  if (testing)
    return note + fmt::format(
                      "  testing the {} commit(s) of the branch on top of the first parent {} "
                      "(--test-merge-branch; {} lists them) follows the comparison\n",
                      count, short_sha(parents[0]), list);
  return note + fmt::format(
                    "  to find the branch commit that interacts, test the {} commit(s) of the "
                    "branch on top of the first parent {}: `nightjar bisect branch --session {}` "
                    "builds and measures them one at a time ({} lists them)\n",
                    count, short_sha(parents[0]), s.id, list);
}

ExitCode report_first_bad(Session& s, Git& git, const SessionRow& row, const BisectState& state,
                          const Endpoints& endpoints, const StepCounts& counts) {
  const std::string first = state.first_bad;
  s.first_bad = first;
  const std::string subject = subject_of(git, first);
  std::vector<std::int64_t> first_runs;
  for (const auto& st : load_steps(s.store, s.id))
    if (st.commit == first && (st.role == "test" || st.role == "bad"))
      for (auto r : usable(s.store, st.runs, s.job.metric)) first_runs.push_back(r);
  if (first == row.bad) first_runs = endpoints.bad;
  const int between = counts.decided + counts.skipped;
  std::string result = fmt::format("first bad commit {} {} ({} tested, {} skipped)", first, subject,
                                   between, counts.skipped);
  finish_session(s.store, s.id, "found", result, first);
  s.out << fmt::format(
      "\nfirst bad commit: {} {}\n  after {} step(s) between the endpoints ({} skipped)\n", first,
      subject, between, counts.skipped);
  s.out << merge_note(s, git, first, s.test_branch);
  if (!first_runs.empty())
    print_comparison(s, endpoints.base, first_runs, "good-" + short_sha(row.good),
                     "bad-" + short_sha(first), endpoints.min_effect);
  return ExitCode::ok;
}

// Checks the endpoints, then lets git pick commits until it names the first
// bad one (or only skipped commits are left).
ExitCode drive(Session& s, const SessionRow& row) {
  Git git(s.prep.top);
  const int range = std::stoi(git.line({"rev-list", "--count", row.good + ".." + row.bad}));
  print_session_header(s, git, row, range);

  std::vector<StepRow> steps = load_steps(s.store, s.id);
  BisectGuard guard(git);
  git.run({"bisect", "start"});
  guard.started();

  ExitCode code = ExitCode::ok;
  auto endpoints = check_endpoints(s, git, steps, row.good, row.bad, code);
  if (!endpoints) return code;
  s.endpoints = endpoints;

  StepCounts counts;
  BisectState state = replay_steps(s, git, row, steps, counts);
  for (int guard_steps = 0; state.first_bad.empty() && !state.only_skipped; ++guard_steps) {
    if (guard_steps > range + 5)
      throw EnvironmentError("git bisect did not converge; see `git bisect log`");
    throw_if_interrupted();
    StepRow& step = step_for(s, git, steps, git.line({"rev-parse", "HEAD"}));
    DecisionResult d;
    const std::string decision =
        test_commit(s, step, step.commit,
                    fmt::format("step {}: {} {}", ++counts.tested, short_sha(step.commit),
                                subject_of(git, step.commit)),
                    "", *endpoints, d);
    (decision == "skip" ? counts.skipped : counts.decided)++;
    state = mark(git, decision, step.commit);
  }
  if (state.only_skipped) return report_only_skipped(s, state);
  return report_first_bad(s, git, row, state, *endpoints, counts);
}

// After `git bisect reset` the work tree is back at the commit it was at,
// but the build products in it are the last tested commit's: says so when
// they differ, so nobody installs the wrong kernel (issue 19).
void warn_build_tree(const Session& s) {
  if (s.job.build_command.empty() || s.built.empty()) return;
  const Git git(s.prep.top);
  CommandResult head = git.run({"rev-parse", "HEAD"}, true);
  const std::string now(trim(head.out));
  if (!head.ok() || now == s.built) return;
  std::cerr << fmt::format(
      "nightjar: warning: {} is back at {} (git bisect reset), but its build products are of {}, "
      "the last commit built; rebuild ({}) before using them\n",
      s.prep.top, short_sha(now), short_sha(s.built), s.job.build_command);
}

// The results database of `bisect resume|branch`, which must exist.
ResultsStore open_sessions(const std::string& db, const char* command) {
  const std::string path = db_path(db);
  if (!fs::exists(path))
    throw UsageError(fmt::format("bisect {}: no database at {}; pass --db PATH", command, path));
  return open_db(path);
}

// Session `session`, else the newest `bisect run` session with one of
// `statuses` (described as `which`); UsageError when there is none.
SessionRow find_session(const ResultsStore& store, std::optional<std::int64_t> session,
                        const char* command, const char* which, std::vector<std::string> statuses) {
  BisectSessionFilter filter;
  filter.kind = "run";
  filter.statuses = std::move(statuses);
  std::optional<SessionRow> row =
      session ? load_session(store, *session) : session_row(store.newest_bisect_session(filter));
  if (!row)
    throw UsageError(
        session ? fmt::format("bisect {}: no session {} in {}", command, *session, store.path())
                : fmt::format("bisect {}: no {} `bisect run` session in {} "
                              "(`nightjar bisect log` lists sessions)",
                              command, which, store.path()));
  return *row;
}

// drive(), with the session's end recorded when it is interrupted or fails.
ExitCode drive_recorded(Session& s, const SessionRow& row) {
  try {
    const ExitCode code = drive(s, row);
    warn_build_tree(s);
    return code;
  } catch (const Interrupted&) {
    finish_session(s.store, s.id, "interrupted",
                   "interrupted by a signal; `nightjar bisect resume --session " +
                       std::to_string(s.id) + "` goes on");
    s.out << fmt::format("bisect interrupted; resume with: nightjar bisect resume --session {}\n",
                         s.id);
    throw;
  } catch (const std::exception& e) {
    finish_session(s.store, s.id, "failed", e.what());
    throw;
  }
}

// ---------------------------------------------------------------------------
// Testing the branch of a merge on top of its first parent
// ---------------------------------------------------------------------------

// A temporary detached worktree of the repository at `commit` (`git worktree
// add --detach`) in a new directory under TMPDIR, which is the process's
// working directory while it lives. The destructor, which runs on every path
// (a result, an error, Ctrl-C), goes back to the repository top, removes the
// worktree with git's record of it (`git worktree remove --force`, `git
// worktree prune`) and the directory. The repository's own work tree, branch
// and index are never touched.
class BranchTree {
 public:
  BranchTree(const Git& repo, const std::string& commit, std::string home)
      : repo_(repo), home_(std::move(home)) {
    std::string tmpl = (fs::temp_directory_path() / "nightjar-branch-XXXXXX").string();
    if (!::mkdtemp(tmpl.data()))
      throw EnvironmentError(
          fmt::format("cannot make a directory for the branch test in {}: {}; "
                      "set TMPDIR to a writable directory",
                      fs::temp_directory_path().string(), std::strerror(errno)));
    dir_ = tmpl;
    try {
      repo_.run({"worktree", "add", "--detach", "--quiet", dir_, commit});
      added_ = true;
      if (::chdir(dir_.c_str()) != 0)
        throw EnvironmentError(fmt::format("cannot change to {}: {}", dir_, std::strerror(errno)));
    } catch (...) {
      remove();
      throw;
    }
  }
  ~BranchTree() { remove(); }
  BranchTree(const BranchTree&) = delete;
  BranchTree& operator=(const BranchTree&) = delete;
  const std::string& dir() const { return dir_; }

 private:
  void remove() noexcept {
    try {
      if (::chdir(home_.c_str()) != 0)
        std::cerr << "nightjar: warning: cannot change back to " << home_ << ": "
                  << std::strerror(errno) << "\n";
      if (added_) {
        CommandResult r = repo_.run({"worktree", "remove", "--force", dir_}, true);
        if (!r.ok())
          std::cerr << "nightjar: warning: `git worktree remove --force " << dir_
                    << "` failed: " << output_tail(r.err, 3) << "\n";
      }
      std::error_code ec;
      fs::remove_all(dir_, ec);
      if (added_) repo_.run({"worktree", "prune"}, true);
      if (fs::exists(dir_, ec))
        std::cerr << "nightjar: warning: could not remove the branch test's worktree " << dir_
                  << "; remove it and run `git -C " << repo_.dir() << " worktree prune`\n";
      added_ = false;
    } catch (const std::exception& e) {
      std::cerr << "nightjar: warning: " << e.what() << "\n";
    }
  }
  const Git& repo_;
  std::string home_, dir_;
  bool added_ = false;
};

// Makes the session build and run in `tree` (with facts naming the branch
// test on every run) until it goes out of scope.
class InTree {
 public:
  InTree(Session& s, const std::string& tree, std::map<std::string, std::string> context) : s_(s) {
    s_.tree = tree;
    s_.context = std::move(context);
  }
  ~InTree() {
    s_.tree.clear();
    s_.context.clear();
  }
  InTree(const InTree&) = delete;
  InTree& operator=(const InTree&) = delete;

 private:
  Session& s_;
};

/// One branch commit's outcome on top of the first parent.
struct BranchPick {
  std::string commit, subject;
  bool applied = false;     ///< the cherry-pick applied it (else: why, in `reason`)
  std::string decision;     ///< "good", "bad", "skip"
  std::string reason;       ///< why it was skipped
  DecisionResult measured;  ///< the decision's figures (when measured now)
};

// `git cherry-pick C` in the branch tree. On failure the pick is undone
// (`git cherry-pick --abort`) and the reason returned: the files in conflict,
// or that the change is already there; "" when it applied.
std::string cherry_pick(const Git& wt, const std::string& commit) {
  // The commits are throw-away: never signed (a user's commit.gpgsign would
  // ask for a key).
  CommandResult r = wt.run({"-c", "commit.gpgsign=false", "cherry-pick", commit}, true);
  if (r.ok()) return "";
  std::vector<std::string> conflicts =
      split_blanks(wt.run({"diff", "--name-only", "--diff-filter=U"}, true).out);
  const std::string said = r.out + "\n" + r.err;
  wt.run({"cherry-pick", "--abort"}, true);
  wt.run({"reset", "--quiet", "--hard", "HEAD"}, true);
  if (!conflicts.empty()) return "cherry-pick conflicts in " + join(conflicts, ", ");
  if (said.find("empty") != std::string::npos)
    return "nothing to apply: its change is already there";
  return "cherry-pick failed: " + output_tail(said, 3);
}

// Builds and measures the commits of the merge's branch on top of its first
// parent, one at a time and cumulatively, as `git rebase P1 P2` would apply
// them (a commit that needs the ones before it still applies), in a
// temporary worktree: P1 + C1, P1 + C1 + C2, ... Each is decided with the
// bisect's rule against the good endpoint and stored as a `branch` step; the
// first that is bad is the branch commit that turns the first parent bad. A
// commit that does not apply is skipped with the reason and left out.
// Decisions stored by an earlier, interrupted test are taken as they are.
// Returns ok when the answer is one commit, or the merge's own changes (every
// commit applied and measured good); inconclusive otherwise.
ExitCode test_merge_branch(Session& s) {
  const Git git(s.prep.top);
  const std::string merge = s.first_bad;
  const std::vector<std::string> parents = parents_of(git, merge);
  const std::string& p1 = parents.at(0);
  const std::string& p2 = parents.at(1);
  const std::vector<std::string> commits = branch_commits(git, p1, p2);
  const Endpoints& endpoints = *s.endpoints;
  auto store_result = [&](const std::string& text) {
    std::optional<SessionRow> row = load_session(s.store, s.id);
    std::string result = row ? row->result : "";
    if (auto at = result.find("; branch test: "); at != std::string::npos) result.resize(at);
    finish_session(s.store, s.id, row ? row->status : "found", result + "; branch test: " + text,
                   merge);
  };
  if (commits.empty()) {
    const std::string why =
        fmt::format("the branch {}..{} has no commit that {} lacks: nothing to test", short_sha(p1),
                    short_sha(p2), short_sha(p1));
    s.out << "\nbranch test: " << why << "\n";
    store_result(why);
    return ExitCode::inconclusive;
  }
  std::map<std::string, StepRow> earlier;  // steps of an interrupted test, by branch commit
  for (const auto& st : load_steps(s.store, s.id))
    if (st.role == "branch") earlier[st.commit] = st;

  // The branch commits' committer: git needs one, the user's configuration
  // may have none, and the commits exist only in the temporary worktree. The
  // date is the merge's, so that applying the same commits again (after an
  // interruption) makes the same commit ids: the build labels of the runs.
  const std::map<std::string, std::string> committer = {
      {"GIT_COMMITTER_NAME", "nightjar"},
      {"GIT_COMMITTER_EMAIL", "nightjar@localhost"},
      {"GIT_COMMITTER_DATE", git.line({"log", "-1", "--format=%cI", merge})}};
  BranchTree tree(git, p1, s.prep.top);
  const Git wt(tree.dir(), committer);
  InTree in_tree(s, tree.dir(), {{"bisect.merge", merge}, {"bisect.onto", p1}});
  s.out << fmt::format(
               "\nbranch test: the {} commit(s) of {}..{} applied one at a time on top of the "
               "first parent {} (as `git rebase` would), in the temporary worktree {}\n",
               commits.size(), short_sha(p1), short_sha(p2), short_sha(p1), tree.dir())
        << std::flush;

  std::vector<BranchPick> picks;
  std::size_t applied = 0;
  for (std::size_t k = 0; k < commits.size(); ++k) {
    throw_if_interrupted();
    BranchPick pick;
    pick.commit = commits[k];
    pick.subject = subject_of(git, pick.commit);
    const std::string title = fmt::format("branch {}/{}: {} + {} {}", k + 1, commits.size(),
                                          short_sha(p1), short_sha(pick.commit), pick.subject);
    auto found = earlier.find(pick.commit);
    StepRow* step = found == earlier.end() ? nullptr : &found->second;
    const bool decided = step && step->decision != "pending";
    const std::string failed = cherry_pick(wt, pick.commit);
    if (!failed.empty()) {
      pick.decision = "skip";
      pick.reason = failed;
      if (!step) {
        StepRow row;
        row.step = add_step(s.store, s.id, pick.commit, pick.subject, "branch");
        earlier[pick.commit] = row;
        step = &earlier[pick.commit];
      }
      if (!decided) {
        set_build(s.store, s.id, step->step, "none", std::nullopt, "");
        set_decision(s.store, s.id, step->step, "skip", nullptr,
                     fmt::format("does not apply on top of {}{}: {}", short_sha(p1),
                                 applied ? fmt::format(" + the {} branch commit(s) applied "
                                                       "before it",
                                                       applied)
                                         : "",
                                 failed));
      }
      s.out << fmt::format("{}: {} -> skip\n", title, failed) << std::flush;
      picks.push_back(pick);
      continue;
    }
    pick.applied = true;
    ++applied;
    const std::string sha = wt.line({"rev-parse", "HEAD"});
    if (decided) {
      pick.decision = step->decision;
      pick.reason = step->reason;
      s.out << fmt::format("{}: {} (step {}, stored) -> {}\n", title, step->reason, step->step,
                           step->decision)
            << std::flush;
    } else {
      if (!step) {
        StepRow row;
        row.step = add_step(s.store, s.id, pick.commit, pick.subject, "branch");
        row.commit = pick.commit;
        row.role = "branch";
        earlier[pick.commit] = row;
        step = &earlier[pick.commit];
      }
      s.context["bisect.branch_commit"] = pick.commit;
      try {
        pick.decision =
            test_commit(s, *step, sha, title,
                        fmt::format("{} + {} branch commit(s), applied as {}: ", short_sha(p1),
                                    applied, short_sha(sha)),
                        endpoints, pick.measured);
      } catch (const Interrupted&) {
        set_decision(s.store, s.id, step->step, "pending", nullptr, "interrupted");
        throw;
      }
      pick.reason = pick.measured.summary;
    }
    picks.push_back(pick);
    if (pick.decision == "bad") break;
  }

  // The answer: a headline, and lines that explain it.
  std::vector<std::string> answer;
  ExitCode code = ExitCode::ok;
  auto shorts = [](const std::vector<const BranchPick*>& v) {
    std::vector<std::string> out;
    for (const auto* p : v) out.push_back(short_sha(p->commit) + " " + p->subject);
    return join(out, ", ");
  };
  std::vector<const BranchPick*> not_applied, unmeasured;
  for (const auto& p : picks) {
    if (!p.applied)
      not_applied.push_back(&p);
    else if (p.decision == "skip")
      unmeasured.push_back(&p);
    else if (p.decision == "good")
      unmeasured.clear();  // P1 + everything up to here is good
  }
  const std::string left_out = fmt::format("left out, as it does not apply on top of {}: {}",
                                           short_sha(p1), shorts(not_applied));
  const std::string show_merge =
      fmt::format("`git -C {} show --cc {}`", git.dir(), short_sha(merge));
  if (!picks.empty() && picks.back().decision == "bad") {
    const BranchPick& bad = picks.back();
    if (unmeasured.empty()) {
      answer.push_back(
          fmt::format("interaction: {} + {} is bad", short_sha(p1), short_sha(bad.commit)));
      answer.push_back(fmt::format(
          "{} {} is the first branch commit that turns the first parent {} bad{}",
          short_sha(bad.commit), bad.subject, short_sha(p1),
          applied > 1
              ? fmt::format(" (with the {} branch commit(s) before it applied)", applied - 1)
              : ""));
    } else {
      std::vector<const BranchPick*> candidates = unmeasured;
      candidates.push_back(&bad);
      answer.push_back(
          fmt::format("{} + the branch is bad from {} on, but {} before it could not "
                      "be measured",
                      short_sha(p1), short_sha(bad.commit), shorts(unmeasured)));
      answer.push_back("the first bad branch commit is one of " + shorts(candidates));
      code = ExitCode::inconclusive;
    }
    if (!not_applied.empty()) answer.push_back(left_out);
  } else if (!not_applied.empty() || !unmeasured.empty()) {
    answer.push_back(
        fmt::format("no branch commit measured turns {} bad, but not all could be", short_sha(p1)));
    if (!not_applied.empty()) answer.push_back(left_out);
    if (!unmeasured.empty()) answer.push_back("not measured: " + shorts(unmeasured));
    answer.push_back("the regression is in those commits or in the merge's resolution of them (" +
                     show_merge + ")");
    code = ExitCode::inconclusive;
  } else {
    const std::vector<std::string> differ =
        split_blanks(wt.run({"diff", "--name-only", "HEAD", merge}).out);
    if (differ.empty()) {
      answer.push_back(fmt::format("no branch commit turns {} bad", short_sha(p1)));
      answer.push_back(fmt::format(
          "yet {} + the whole branch has the merge's tree, which measured bad: noise or the build "
          "differ between the two; measure both again",
          short_sha(p1)));
      code = ExitCode::inconclusive;
    } else {
      answer.push_back(
          fmt::format("no branch commit turns {} bad: the merge's own changes do", short_sha(p1)));
      answer.push_back(
          fmt::format("{} + all {} branch commit(s) measures good", short_sha(p1), applied));
      answer.push_back(fmt::format(
          "the merge's tree differs from {} + the branch in {}: its resolution carries the "
          "regression ({})",
          short_sha(p1), join(differ, ", "), show_merge));
    }
  }
  store_result(join(answer, "; "));
  s.out << "\n" << answer.front() << "\n";
  for (std::size_t i = 1; i < answer.size(); ++i) s.out << "  " << answer[i] << "\n";
  if (!picks.empty() && picks.back().decision == "bad" && picks.back().measured.min_now)
    s.out << "  effect: " << effect_with_ci(picks.back().measured, metric_of(s), s.job.alpha)
          << "\n";
  return code;
}

// The branch test after a bisect that named a merge (bisect run/resume with
// --test-merge-branch): on Ctrl-C the bisect's result stands and the test
// goes on with `bisect branch`.
ExitCode branch_test_after(Session& s, ExitCode bisect_code) {
  if (!s.test_branch || bisect_code != ExitCode::ok || s.first_bad.empty()) return bisect_code;
  const Git git(s.prep.top);
  const std::size_t parents = parents_of(git, s.first_bad).size();
  if (parents < 2) {
    s.out << "\nbranch test: the first bad commit is not a merge; no branch to test\n";
    return bisect_code;
  }
  if (parents > 2) return bisect_code;  // the note says how
  try {
    test_merge_branch(s);
  } catch (const Interrupted&) {
    s.out << fmt::format(
        "branch test interrupted; the bisect's result stands; go on with: nightjar bisect "
        "branch --session {}\n",
        s.id);
    throw;
  }
  return bisect_code;
}

}  // namespace

// ---------------------------------------------------------------------------
// The decision
// ---------------------------------------------------------------------------

DecisionResult decide_commit(const ResultsStore& store, const std::vector<std::int64_t>& base_runs,
                             const std::vector<std::int64_t>& now_runs, const std::string& metric,
                             const stats::SignificanceOptions& options,
                             const std::string& base_name, const std::string& now_name,
                             Comparison* comparison) {
  // Each side holds only the metric's samples, so the family of the
  // comparison (and Benjamini-Hochberg) is the metric's rows, one per cell.
  auto load = [&](const std::vector<std::int64_t>& runs, const std::string& name) {
    LoadedSide side;
    side.selector.text = name;
    for (auto id : runs) {
      RunFilter f;
      f.run_id = id;
      auto rows = store.runs(f);
      if (rows.empty()) continue;
      const RunRow& r = rows.front();
      side.run_ids.push_back(id);
      side.variants.insert(r.variant);
      side.builds.insert(r.build);
      side.kernels.insert(r.kernel_release);
      side.testboxes.insert(r.hostname);
      CellSamples& cs = side.cells[CellKey{r.workload, r.job, r.cell}];
      if (cs.first_run == 0) {
        cs.first_run = id;
        for (const auto& [k, v] : store.run_params(id))
          if (!v.empty()) cs.params.emplace_back(k, v);
      }
      cs.run_ids.push_back(id);
      if (r.status == RunStatus::aborted) ++cs.aborted_runs;
      // Valid samples only; the invalid ones are counted (the row's n says so).
      auto& values = cs.metrics[metric];
      for (const auto& s : store.samples(id, SampleSet::all)) {
        if (s.metric != metric) continue;
        if (s.invalid.empty()) {
          values.push_back(s.value);
          continue;
        }
        InvalidSamples& inv = cs.invalid[metric];
        if (inv.count++ == 0) {
          inv.reason = s.invalid;
          inv.run_id = id;
          inv.iteration = s.iteration;
        }
      }
    }
    return side;
  };
  std::vector<LoadedSide> sides = {load(base_runs, base_name), load(now_runs, now_name)};
  MetricCatalog catalog;
  for (const auto& side : sides)
    for (const auto& [key, _] : side.cells)
      if (!catalog.count(key.workload)) {
        for (const auto& m : store.metrics(key.workload))
          if (m.name == metric) catalog[key.workload].push_back(m);
      }
  Comparison c = build_comparison(sides, catalog, options);

  DecisionResult d;
  const ComparisonRow* decisive = nullptr;
  bool any_bad = false, any_unknown = false, any_undefined = false;
  d.min_now = SIZE_MAX;
  for (const auto& row : c.rows) {
    if (row.kind != ComparisonRow::Kind::metric || row.name != metric || row.sides.size() < 2)
      continue;
    d.min_now = std::min(d.min_now, row.sides[1].summary.n);
    const auto& sig = row.significance[1];
    if (!sig) continue;
    if (sig->verdict == stats::Verdict::regression) {
      if (!any_bad || sig->pct_change < decisive->significance[1]->pct_change) decisive = &row;
      any_bad = true;
    } else if (sig->verdict == stats::Verdict::inconclusive ||
               sig->verdict == stats::Verdict::undefined) {
      if (!any_bad && !any_unknown) decisive = &row;
      any_unknown = true;
      if (sig->verdict == stats::Verdict::undefined) any_undefined = true;
    } else if (!decisive) {
      decisive = &row;
    }
  }
  if (d.min_now == SIZE_MAX) d.min_now = 0;
  if (!decisive) {
    d.summary = "no comparable samples of " + metric;
    if (comparison) *comparison = std::move(c);
    return d;
  }
  d.row = *decisive->significance[1];
  d.cell = decisive->cell;
  d.n_base = decisive->sides[0].summary.n;
  d.n_now = decisive->sides[1].summary.n;
  d.decision = any_bad       ? CommitDecision::bad
               : any_unknown ? CommitDecision::unknown
                             : CommitDecision::good;
  d.more_helps = !any_bad && any_unknown && !any_undefined;
  std::string q = d.row.q ? ", q=" + p_text(d.row.q) : "";
  d.summary = fmt::format("{} {} ({} vs {} samples{})", pct_text(d.row.pct_change),
                          stats::to_string(d.row.verdict), d.n_now, d.n_base, q);
  if (comparison) *comparison = std::move(c);
  return d;
}

// ---------------------------------------------------------------------------
// Commands
// ---------------------------------------------------------------------------

ExitCode bisect_run(const std::string& db, const BisectRunOptions& options, std::ostream& out) {
  install_interrupt_handlers();
  BisectJobOptions job = options.job;
  Prepared prep = prepare(options.repo, job);
  Git git(prep.top);
  std::string good = resolve_commit(git, options.good, "--good");
  std::string bad = resolve_commit(git, options.bad, "--bad");
  if (good == bad) throw UsageError("--good and --bad name the same commit " + short_sha(good));
  if (!git.run({"merge-base", "--is-ancestor", good, bad}, true).ok())
    throw UsageError(
        fmt::format("--good {} is not an ancestor of --bad {}; bisect needs good before bad "
                    "in history (swap them?)",
                    options.good, options.bad));
  if (bisect_in_progress(git))
    throw UsageError(
        fmt::format("a git bisect is already in progress in {}; end it with `git -C {} bisect "
                    "reset`, or continue a nightjar session with `nightjar bisect resume`",
                    prep.top, prep.top));
  if (!trim(git.run({"status", "--porcelain", "--untracked-files=no"}).out).empty())
    throw UsageError(
        fmt::format("{} has uncommitted changes to tracked files; commit or stash them "
                    "first (bisect checks out other commits)",
                    prep.top));
  const std::string dbp = db_path(db);
  enter(prep);
  ResultsStore store = open_db(dbp);
  SessionRow row;
  row.kind = "run";
  row.repo = prep.top;
  row.good_rev = options.good;
  row.bad_rev = options.bad;
  row.good = good;
  row.bad = bad;
  row.job_path = job.job_path;
  row.job = prep.job_name;
  row.metric = job.metric;
  row.options = options_to_json(job);
  row.options["test_merge_branch"] = options.test_merge_branch;
  Session s(store, out, job, prep);
  s.test_branch = options.test_merge_branch;
  s.id = create_session(store, row);
  row.id = s.id;
  return branch_test_after(s, drive_recorded(s, row));
}

ExitCode bisect_resume(const std::string& db, std::optional<std::int64_t> session,
                       std::ostream& out) {
  install_interrupt_handlers();
  ResultsStore store = open_sessions(db, "resume");
  std::optional<SessionRow> row =
      find_session(store, session, "resume", "unfinished", {"running", "interrupted"});
  if (row->kind != "run")
    throw UsageError(
        fmt::format("bisect resume: session {} holds `bisect step` decisions; resume those "
                    "with `git bisect run` itself",
                    row->id));
  if (row->status == "found")
    throw UsageError(
        fmt::format("bisect resume: session {} is finished: {}", row->id, row->result));
  BisectJobOptions job = options_from_json(row->options, row->job_path);
  Prepared prep = prepare(row->repo, job);
  Git git(prep.top);
  if (bisect_in_progress(git)) {
    out << "resetting the git bisect left in " << prep.top << "\n";
    git.run({"bisect", "reset"});
  }
  if (!trim(git.run({"status", "--porcelain", "--untracked-files=no"}).out).empty())
    throw UsageError(prep.top +
                     " has uncommitted changes to tracked files; commit or stash them first");
  enter(prep);
  finish_session(store, row->id, "running", "");
  Session s(store, out, job, prep);
  s.id = row->id;
  s.test_branch = row->options.is_object() && row->options.value("test_merge_branch", false);
  return branch_test_after(s, drive_recorded(s, *row));
}

ExitCode bisect_step(const std::string& db, const BisectStepOptions& options, std::ostream& out) {
  install_interrupt_handlers();
  if (options.base.empty())
    throw UsageError(
        "bisect step: --base is required: the build label of stored runs of the good commit "
        "(`nightjar run JOB --build LABEL` at the good commit first)");
  BisectJobOptions job = options.job;
  Prepared prep = prepare(options.repo, job);
  Git git(prep.top);
  const std::string sha = git.line({"rev-parse", "HEAD"});
  const std::string path = db_path(db);
  if (!fs::exists(path))
    throw UsageError("bisect step: no database at " + path + " holds the runs of --base " +
                     options.base + "; pass --db PATH");
  enter(prep);
  ResultsStore store = open_db(path);

  auto stored = [&](const std::string& build, const char* flag) {
    RunFilter f;
    f.job = prep.job_name;
    f.build = build;
    f.variant = job.variant;
    std::vector<std::int64_t> ids;
    for (const auto& r : store.runs(f)) ids.push_back(r.id);
    auto ok = usable(store, ids, job.metric);
    if (ok.empty())
      throw UsageError(fmt::format(
          "{} {}: no stored run of job {}{} with samples of {}; run `nightjar run {} "
          "--build {}` at that commit first",
          flag, build, prep.job_name, job.variant.empty() ? "" : " variant " + job.variant,
          job.metric, job.job_path, build));
    return ok;
  };
  std::vector<std::int64_t> base = stored(options.base, "--base");
  double min_effect = job.min_effect_pct.value_or(1.0);
  if (!job.min_effect_pct && !options.bad_base.empty()) {
    std::vector<std::int64_t> bad = stored(options.bad_base, "--bad-base");
    DecisionResult e = decide_commit(store, base, bad, job.metric, significance(job, 1.0),
                                     options.base, options.bad_base);
    if (e.decision != CommitDecision::bad)
      throw UsageError(
          fmt::format("--bad-base {} does not regress against --base {} ({}); nothing to bisect",
                      options.bad_base, options.base, e.summary));
    min_effect = std::max(1.0, std::abs(e.row.pct_change) / 2);
  }

  // The session: one per (repository, base, job, metric), steps appended.
  BisectSessionFilter same;
  same.kind = "step";
  same.repo = prep.top;
  same.good_rev = options.base;
  same.job = prep.job_name;
  same.metric = job.metric;
  same.statuses = {"running"};
  std::optional<SessionRow> row = session_row(store.newest_bisect_session(same));
  Session s(store, out, job, prep);
  if (row) {
    s.id = row->id;
  } else {
    SessionRow r;
    r.kind = "step";
    r.repo = prep.top;
    r.good_rev = options.base;
    r.bad_rev = options.bad_base;
    r.job_path = job.job_path;
    r.job = prep.job_name;
    r.metric = job.metric;
    r.options = options_to_json(job);
    s.id = create_session(store, r);
  }
  const int step = add_step(store, s.id, sha, subject_of(git, sha), "test");
  auto finish = [&](const std::string& decision, const DecisionResult* d, const std::string& reason,
                    ExitCode code) {
    set_decision(store, s.id, step, decision, d, reason);
    out << fmt::format("{} {}: {} -> {} (exit {})\n", short_sha(sha), subject_of(git, sha), reason,
                       decision, to_int(code));
    return code;
  };
  try {
    BuildResult b = build(s, step, sha);
    if (!b.ok) return finish("skip", nullptr, "build failed: " + b.tail, ExitCode::bisect_skip);
    std::vector<std::int64_t> runs = measure(s, step, sha, prep.iterations);
    DecisionResult d = decide_with_more(s, step, sha, runs, base, min_effect, options.base);
    if (d.min_now == 0) return finish("skip", nullptr, d.summary, ExitCode::bisect_skip);
    switch (d.decision) {
      case CommitDecision::good:
        return finish("good", &d, d.summary, ExitCode::ok);
      case CommitDecision::bad:
        return finish("bad", &d, d.summary, ExitCode::regression);
      case CommitDecision::unknown:
        return finish(
            "skip", &d,
            "still unsure after " + std::to_string(d.min_now) + " samples: " + d.row.reason,
            ExitCode::bisect_skip);
    }
  } catch (const Interrupted&) {
    set_decision(store, s.id, step, "pending", nullptr, "interrupted");
    throw;
  }
  return ExitCode::bisect_skip;
}

ExitCode bisect_branch(const std::string& db, std::optional<std::int64_t> session,
                       std::ostream& out) {
  install_interrupt_handlers();
  ResultsStore store = open_sessions(db, "branch");
  std::optional<SessionRow> row = find_session(store, session, "branch", "finished", {"found"});
  if (row->kind != "run" || row->status != "found" || row->first_bad.empty())
    throw UsageError(fmt::format(
        "bisect branch: session {} ({}, {}) has no first bad commit; the branch test needs a "
        "`bisect run` that found one{}",
        row->id, row->kind, row->status,
        row->status == "interrupted" || row->status == "running"
            ? fmt::format(" (`nightjar bisect resume --session {}` finishes it)", row->id)
            : ""));
  BisectJobOptions job = options_from_json(row->options, row->job_path);
  Prepared prep = prepare(row->repo, job);
  Git git(prep.top);
  const std::vector<std::string> parents = parents_of(git, row->first_bad);
  if (parents.size() != 2)
    throw UsageError(fmt::format(
        "bisect branch: the first bad commit {} of session {} {}; nothing to test on top of a "
        "first parent",
        short_sha(row->first_bad), row->id,
        parents.size() < 2 ? "is not a merge"
                           : "is an octopus merge: test each branch by hand (`nightjar bisect "
                             "step` on each commit)"));
  // The good endpoint's runs and the minimum effect, as the bisect had them.
  Endpoints e;
  std::optional<double> change;
  for (const auto& st : load_steps(store, row->id)) {
    if (st.role == "good")
      for (auto r : usable(store, st.runs, job.metric)) e.base.push_back(r);
    if (st.role == "bad") {
      e.bad = usable(store, st.runs, job.metric);
      change = st.pct_change;
    }
  }
  if (e.base.empty() || !change)
    throw EnvironmentError(fmt::format(
        "bisect branch: session {} lacks the runs of its endpoints in {}; run the bisect again",
        row->id, store.path()));
  e.change = *change;
  e.min_effect = job.min_effect_pct.value_or(std::max(1.0, std::abs(e.change) / 2));
  enter(prep);
  Session s(store, out, job, prep);
  s.id = row->id;
  s.first_bad = row->first_bad;
  s.endpoints = e;
  out << fmt::format(
      "bisect session {}: first bad commit {} {} is a merge of {} and {}; each branch state is "
      "judged against the good endpoint {} with a minimum effect of {:.2f}%\n",
      s.id, short_sha(s.first_bad), subject_of(git, s.first_bad), short_sha(parents[0]),
      short_sha(parents[1]), short_sha(row->good), e.min_effect);
  try {
    return test_merge_branch(s);
  } catch (const Interrupted&) {
    out << fmt::format("branch test interrupted; go on with: nightjar bisect branch --session {}\n",
                       s.id);
    throw;
  }
}

std::string render_bisect_log(const ResultsStore& store, std::optional<std::int64_t> session) {
  std::optional<SessionRow> row =
      session ? load_session(store, *session) : session_row(store.newest_bisect_session({}));
  if (!row)
    throw UsageError(session
                         ? fmt::format("bisect log: no session {} in {}", *session, store.path())
                         : "bisect log: no bisect session in " + store.path());
  using A = TextTable::Align;
  std::string out = fmt::format("bisect session {} ({}): {}\n", row->id, row->kind, row->status);
  out += fmt::format("  repository  {}\n", row->repo);
  out += fmt::format("  good        {}{}\n", row->good_rev,
                     row->good.empty() ? "" : " = " + row->good);
  if (!row->bad_rev.empty())
    out +=
        fmt::format("  bad         {}{}\n", row->bad_rev, row->bad.empty() ? "" : " = " + row->bad);
  out += fmt::format("  job         {} ({}), metric {}\n", row->job, row->job_path, row->metric);
  if (row->options.is_object() && !row->options.value("build_command", "").empty())
    out += fmt::format("  build       {}\n", row->options.value("build_command", ""));
  out += fmt::format("  started     {}{}\n", row->started_at,
                     row->ended_at.empty() ? "" : ", ended " + row->ended_at);
  if (!row->result.empty()) out += fmt::format("  result      {}\n", row->result);
  TextTable t({"step", "commit", "role", "build", "runs", "n", "%change", "q", "verdict",
               "decision", "subject / reason"},
              {A::right, A::left, A::left, A::left, A::right, A::right, A::right, A::right, A::left,
               A::left, A::left});
  for (const auto& s : load_steps(store, row->id)) {
    std::string build = s.build_status;
    if (s.build_seconds) build += fmt::format(" {:.1f}s", *s.build_seconds);
    std::string n =
        s.n_now ? std::to_string(*s.n_now) + (s.n_base ? "/" + std::to_string(*s.n_base) : "")
                : "-";
    std::string text = s.subject;
    if (!s.reason.empty()) text += (text.empty() ? "" : ": ") + s.reason;
    if (text.size() > 160) text = text.substr(0, 157) + "...";
    t.add_row({std::to_string(s.step), short_sha(s.commit), s.role, build,
               std::to_string(s.runs.size()), n, s.pct_change ? pct_text(*s.pct_change) : "-",
               p_text(s.q), s.verdict, s.decision, text});
  }
  out += "\n" + t.render();
  return out;
}

}  // namespace nightjar
