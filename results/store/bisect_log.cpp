// Bisect sessions: tables bisect_session, bisect_step and bisect_run
// (harness/bisect/ writes them; docs/bisect.md "Every step is
// stored"). See results/store/store.h "Bisect sessions".
#include "results/store/detail.h"
#include "results/store/store.h"

namespace nightjar {

using namespace store_detail;

namespace {

// The words of each enum, in the enum's order (to_string and parse read the
// same table).
constexpr const char* kDecisions[] = {"pending", "good", "bad", "skip"};
constexpr const char* kRoles[] = {"good", "bad", "test", "branch"};
constexpr const char* kBuilds[] = {"pending", "ok", "failed", "none"};
constexpr const char* kStatuses[] = {"running", "found", "inconclusive", "failed", "interrupted"};

template <typename E, std::size_t N>
std::optional<E> parse_word(const char* const (&words)[N], std::string_view text) {
  for (std::size_t i = 0; i < N; ++i)
    if (text == words[i]) return static_cast<E>(i);
  return std::nullopt;
}

// A column's word as its enum; the schema's CHECK constraints allow no other.
template <typename E>
E column_word(const SQLite::Statement& q, int column, std::optional<E> (*parse)(std::string_view)) {
  const std::string text = q.getColumn(column).getString();
  if (auto e = parse(text)) return *e;
  throw std::runtime_error("bisect table: unknown value '" + text + "' in column " +
                           q.getColumnName(column));
}

constexpr const char* kSessionColumns =
    "id, kind, repo, good_rev, bad_rev, good, bad, job_path, job, metric, options, status, result, "
    "first_bad, started_at, COALESCE(ended_at, '')";

BisectSession read_session(const SQLite::Statement& q) {
  BisectSession s;
  s.id = q.getColumn(0).getInt64();
  s.kind = q.getColumn(1).getString();
  s.repo = q.getColumn(2).getString();
  s.good_rev = q.getColumn(3).getString();
  s.bad_rev = q.getColumn(4).getString();
  s.good = q.getColumn(5).getString();
  s.bad = q.getColumn(6).getString();
  s.job_path = q.getColumn(7).getString();
  s.job = q.getColumn(8).getString();
  s.metric = q.getColumn(9).getString();
  s.options = q.getColumn(10).getString();
  s.status = column_word<BisectStatus>(q, 11, parse_bisect_status);
  s.result = q.getColumn(12).getString();
  s.first_bad = q.getColumn(13).getString();
  s.started_at = q.getColumn(14).getString();
  s.ended_at = q.getColumn(15).getString();
  return s;
}

BisectStep read_step(const SQLite::Statement& q) {
  BisectStep s;
  s.step = q.getColumn(0).getInt();
  s.commit = q.getColumn(1).getString();
  s.subject = q.getColumn(2).getString();
  s.role = column_word<BisectRole>(q, 3, parse_bisect_role);
  s.build_status = column_word<BisectBuild>(q, 4, parse_bisect_build);
  s.build_output = q.getColumn(5).getString();
  s.decision = column_word<BisectDecision>(q, 6, parse_bisect_decision);
  s.verdict = q.getColumn(7).getString();
  s.reason = q.getColumn(8).getString();
  s.started_at = q.getColumn(9).getString();
  s.ended_at = q.getColumn(10).getString();
  s.build_seconds = optional_double(q.getColumn(11));
  s.pct_change = optional_double(q.getColumn(12));
  s.p = optional_double(q.getColumn(13));
  s.q = optional_double(q.getColumn(14));
  s.ratio_lo = optional_double(q.getColumn(15));
  s.ratio_hi = optional_double(q.getColumn(16));
  s.n_base = optional_int64(q.getColumn(17));
  s.n_now = optional_int64(q.getColumn(18));
  return s;
}

}  // namespace

const char* to_string(BisectDecision d) {
  return kDecisions[static_cast<int>(d)];
}
const char* to_string(BisectRole r) {
  return kRoles[static_cast<int>(r)];
}
const char* to_string(BisectBuild b) {
  return kBuilds[static_cast<int>(b)];
}
const char* to_string(BisectStatus s) {
  return kStatuses[static_cast<int>(s)];
}
std::optional<BisectDecision> parse_bisect_decision(std::string_view text) {
  return parse_word<BisectDecision>(kDecisions, text);
}
std::optional<BisectRole> parse_bisect_role(std::string_view text) {
  return parse_word<BisectRole>(kRoles, text);
}
std::optional<BisectBuild> parse_bisect_build(std::string_view text) {
  return parse_word<BisectBuild>(kBuilds, text);
}
std::optional<BisectStatus> parse_bisect_status(std::string_view text) {
  return parse_word<BisectStatus>(kStatuses, text);
}

std::int64_t ResultsStore::create_bisect_session(const BisectSession& s) {
  SQLite::Statement q(
      database(),
      "INSERT INTO bisect_session(kind, repo, good_rev, bad_rev, good, bad, job_path, "
      "job, metric, options, status, started_at) VALUES(?,?,?,?,?,?,?,?,?,?,'running',?)");
  SQLite::bind(q, s.kind, s.repo, s.good_rev, s.bad_rev, s.good, s.bad, s.job_path, s.job, s.metric,
               s.options, utc_now_iso8601());
  q.exec();
  return database().getLastInsertRowid();
}

std::optional<BisectSession> ResultsStore::bisect_session(std::int64_t id) const {
  SQLite::Statement q(database(),
                      std::string("SELECT ") + kSessionColumns + " FROM bisect_session WHERE id=?");
  q.bind(1, id);
  if (!q.executeStep()) return std::nullopt;
  return read_session(q);
}

std::optional<BisectSession> ResultsStore::newest_bisect_session(
    const BisectSessionFilter& f) const {
  std::string where = "1=1";
  std::vector<std::string> binds;  // the words, bound in order
  auto add = [&](const std::string& value, const char* clause) {
    if (value.empty()) return;
    where += clause;
    binds.push_back(value);
  };
  add(f.kind, " AND kind=?");
  add(f.repo, " AND repo=?");
  add(f.good_rev, " AND good_rev=?");
  add(f.job, " AND job=?");
  add(f.metric, " AND metric=?");
  if (!f.statuses.empty()) {
    where += " AND status IN (?";
    for (std::size_t i = 1; i < f.statuses.size(); ++i) where += ",?";
    where += ")";
    for (const BisectStatus st : f.statuses) binds.push_back(to_string(st));
  }
  SQLite::Statement q(database(), std::string("SELECT ") + kSessionColumns +
                                      " FROM bisect_session WHERE " + where +
                                      " ORDER BY id DESC LIMIT 1");
  for (std::size_t i = 0; i < binds.size(); ++i) q.bind(static_cast<int>(i + 1), binds[i]);
  if (!q.executeStep()) return std::nullopt;
  return read_session(q);
}

void ResultsStore::finish_bisect_session(std::int64_t session, BisectStatus status,
                                         const std::string& result, const std::string& first_bad) {
  SQLite::Statement q(
      database(),
      "UPDATE bisect_session SET status=?, result=?, first_bad=?, ended_at=? WHERE id=?");
  SQLite::bind(q, to_string(status), result, first_bad,
               status == BisectStatus::running ? std::string() : utc_now_iso8601(), session);
  q.exec();
}

std::vector<BisectStep> ResultsStore::bisect_steps(std::int64_t session) const {
  SQLite::Statement q(
      database(),
      "SELECT step, commit_id, subject, role, build_status, build_output, decision, "
      "verdict, reason, started_at, COALESCE(ended_at, ''), build_seconds, pct_change, "
      "p, q, ratio_lo, ratio_hi, n_base, n_now FROM bisect_step WHERE session_id=? "
      "ORDER BY step");
  q.bind(1, session);
  std::vector<BisectStep> steps;
  while (q.executeStep()) steps.push_back(read_step(q));
  SQLite::Statement r(database(),
                      "SELECT step, run_id FROM bisect_run WHERE session_id=? ORDER BY run_id");
  r.bind(1, session);
  while (r.executeStep()) {
    const int step = r.getColumn(0).getInt();
    for (auto& s : steps)
      if (s.step == step) s.runs.push_back(r.getColumn(1).getInt64());
  }
  return steps;
}

int ResultsStore::add_bisect_step(std::int64_t session, const std::string& commit,
                                  const std::string& subject, BisectRole role) {
  SQLite::Transaction tx(database(), SQLite::TransactionBehavior::IMMEDIATE);
  SQLite::Statement next(database(),
                         "SELECT COALESCE(MAX(step), 0) + 1 FROM bisect_step WHERE session_id=?");
  next.bind(1, session);
  next.executeStep();
  const int step = next.getColumn(0).getInt();
  SQLite::Statement q(
      database(),
      "INSERT INTO bisect_step(session_id, step, commit_id, subject, role, build_status, "
      "decision, started_at) VALUES(?,?,?,?,?,'pending','pending',?)");
  SQLite::bind(q, session, step, commit, subject, to_string(role), utc_now_iso8601());
  q.exec();
  tx.commit();
  return step;
}

void ResultsStore::set_bisect_build(std::int64_t session, int step, BisectBuild status,
                                    std::optional<double> seconds, const std::string& output) {
  SQLite::Statement q(database(),
                      "UPDATE bisect_step SET build_status=?, build_seconds=?, build_output=? "
                      "WHERE session_id=? AND step=?");
  q.bind(1, to_string(status));
  bind_optional(q, 2, seconds);
  q.bind(3, output);
  q.bind(4, session);
  q.bind(5, step);
  q.exec();
}

void ResultsStore::link_bisect_runs(std::int64_t session, int step,
                                    const std::vector<std::int64_t>& runs) {
  SQLite::Statement q(database(),
                      "INSERT OR IGNORE INTO bisect_run(session_id, step, run_id) VALUES(?,?,?)");
  for (auto id : runs) {
    SQLite::bind(q, session, step, id);
    q.exec();
    q.reset();
  }
}

void ResultsStore::set_bisect_decision(std::int64_t session, int step, const BisectVerdict& v) {
  SQLite::Statement q(
      database(),
      "UPDATE bisect_step SET decision=?, verdict=?, reason=?, pct_change=?, p=?, q=?, "
      "ratio_lo=?, ratio_hi=?, n_base=?, n_now=?, ended_at=? WHERE session_id=? AND step=?");
  SQLite::bind(q, to_string(v.decision), v.verdict, v.reason);
  bind_optional(q, 4, v.pct_change);
  bind_optional(q, 5, v.p);
  bind_optional(q, 6, v.q);
  bind_optional(q, 7, v.ratio_lo);
  bind_optional(q, 8, v.ratio_hi);
  bind_optional(q, 9, v.n_base);
  bind_optional(q, 10, v.n_now);
  q.bind(11, utc_now_iso8601());
  q.bind(12, session);
  q.bind(13, step);
  q.exec();
}

}  // namespace nightjar
