// Reading runs back: `nightjar show`'s rows, one run's samples, iterations,
// parameters and context, and a whole run as one record (qemu guests). See
// results/store/store.h "Run reads".
#include "results/store/detail.h"
#include "results/store/store.h"

namespace nightjar {

using namespace store_detail;

namespace {

// The WHERE clause and bound values of a RunFilter (on run r, kernel k, testbox t).
std::string run_filter_sql(const RunFilter& f, std::vector<std::string>& binds) {
  std::string sql;
  auto add = [&](const std::string& value, const char* clause) {
    if (value.empty()) return;
    sql += clause;
    binds.push_back(value);
  };
  add(f.job, " AND r.job=?");
  add(f.workload, " AND r.workload=?");
  add(f.variant, " AND r.variant=?");
  add(f.build, " AND r.build=?");
  add(f.kernel_release, " AND k.release=?");
  if (f.status) add(to_string(*f.status), " AND r.status=?");
  add(f.hostname, " AND t.hostname=?");
  if (f.run_id) sql += " AND r.id=" + std::to_string(*f.run_id);
  return sql;
}

RunRow read_run_row(const SQLite::Statement& q) {
  RunRow r;
  r.id = q.getColumn(0).getInt64();
  r.job = q.getColumn(1).getString();
  r.workload = q.getColumn(2).getString();
  r.cell = q.getColumn(3).getString();
  r.variant = q.getColumn(4).getString();
  r.build = q.getColumn(5).getString();
  r.kernel_release = q.getColumn(6).getString();
  r.hostname = q.getColumn(7).getString();
  r.status = stored_run_status(q.getColumn(8).getText());
  r.reason = q.getColumn(9).getString();
  r.started_at = q.getColumn(10).getString();
  r.ended_at = q.getColumn(11).getString();
  r.iterations = q.getColumn(12).getInt();
  r.samples = q.getColumn(13).getInt();
  r.failed = q.getColumn(14).getInt();
  r.invalid = q.getColumn(15).getInt();
  return r;
}

std::vector<SampleRow> read_values(const SQLite::Database& db, const char* sql,
                                   std::int64_t run_id) {
  SQLite::Statement q(db, sql);
  q.bind(1, run_id);
  std::vector<SampleRow> rows;
  while (q.executeStep())
    rows.push_back(
        {q.getColumn(0).getInt(), q.getColumn(1).getString(), q.getColumn(2).getDouble()});
  return rows;
}

std::map<std::string, std::string> read_pairs(const SQLite::Database& db, const char* sql,
                                              std::int64_t run_id) {
  SQLite::Statement q(db, sql);
  q.bind(1, run_id);
  std::map<std::string, std::string> out;
  while (q.executeStep()) out[q.getColumn(0).getString()] = q.getColumn(1).getString();
  return out;
}

std::vector<std::string> read_texts(const SQLite::Database& db, const char* sql,
                                    std::int64_t run_id) {
  SQLite::Statement q(db, sql);
  q.bind(1, run_id);
  std::vector<std::string> out;
  while (q.executeStep()) out.push_back(q.getColumn(0).getString());
  return out;
}

}  // namespace

std::vector<RunRow> ResultsStore::runs(const RunFilter& f) const {
  std::vector<std::string> binds;
  std::string sql =
      "SELECT r.id, r.job, r.workload, r.cell, r.variant, r.build, COALESCE(k.release, ''), "
      "COALESCE(t.hostname, ''), r.status, r.reason, r.started_at, COALESCE(r.ended_at, ''), "
      "r.iterations, "
      "(SELECT count(*) FROM iteration i WHERE i.run_id=r.id AND i.status='ok' AND NOT EXISTS("
      "SELECT 1 FROM sample s WHERE s.run_id=i.run_id AND s.iteration=i.iteration "
      "AND s.invalid IS NOT NULL)), "
      "(SELECT count(*) FROM iteration i WHERE i.run_id=r.id AND i.status='failed'), "
      "(SELECT count(*) FROM iteration i WHERE i.run_id=r.id AND (i.status='invalid' OR "
      "(i.status='ok' AND EXISTS(SELECT 1 FROM sample s WHERE s.run_id=i.run_id AND "
      "s.iteration=i.iteration AND s.invalid IS NOT NULL)))) "
      "FROM run r LEFT JOIN kernel k ON k.id=r.kernel_id LEFT JOIN testbox t ON t.id=r.testbox_id "
      "WHERE 1=1" +
      run_filter_sql(f, binds);
  if (f.limit)
    sql = "SELECT * FROM (" + sql + " ORDER BY r.id DESC LIMIT " + std::to_string(*f.limit) +
          ") ORDER BY 1";
  else
    sql += " ORDER BY r.id";
  SQLite::Statement q(database(), sql);
  for (std::size_t i = 0; i < binds.size(); ++i) q.bind(static_cast<int>(i + 1), binds[i]);
  std::vector<RunRow> rows;
  while (q.executeStep()) rows.push_back(read_run_row(q));
  return rows;
}

std::vector<SampleRow> ResultsStore::samples(std::int64_t run_id, SampleSet which) const {
  SQLite::Statement q(database(), which == SampleSet::valid
                                      ? "SELECT iteration, metric, value, '' FROM sample "
                                        "WHERE run_id=? AND invalid IS NULL ORDER BY iteration, "
                                        "metric"
                                      : "SELECT iteration, metric, value, COALESCE(invalid, '') "
                                        "FROM sample WHERE run_id=? ORDER BY iteration, metric");
  q.bind(1, run_id);
  std::vector<SampleRow> rows;
  while (q.executeStep())
    rows.push_back({q.getColumn(0).getInt(), q.getColumn(1).getString(), q.getColumn(2).getDouble(),
                    q.getColumn(3).getString()});
  return rows;
}

std::vector<SampleRow> ResultsStore::monitors(std::int64_t run_id) const {
  return read_values(database(),
                     "SELECT iteration, name, value FROM monitor WHERE run_id=? "
                     "ORDER BY iteration, name",
                     run_id);
}

std::vector<IterationRow> ResultsStore::iterations(std::int64_t run_id) const {
  SQLite::Statement q(database(),
                      "SELECT iteration, status, reason, started_at, duration_sec FROM iteration "
                      "WHERE run_id=? ORDER BY iteration");
  q.bind(1, run_id);
  std::vector<IterationRow> rows;
  while (q.executeStep())
    rows.push_back({q.getColumn(0).getInt(), stored_iteration_status(q.getColumn(1).getText()),
                    q.getColumn(2).getString(), q.getColumn(3).getString(),
                    q.getColumn(4).getDouble()});
  return rows;
}

std::vector<StoredProfile> ResultsStore::iteration_profiles(
    const std::vector<std::int64_t>& run_ids) const {
  std::vector<StoredProfile> out;
  // A read-only database of schema version 8 or older has no profile tables.
  SQLite::Statement t(database(),
                      "SELECT 1 FROM sqlite_master WHERE type='table' AND name='profile'");
  if (!t.executeStep()) return out;
  SQLite::Statement head(database(),
                         "SELECT p.iteration, p.event, p.frequency_hz, p.lost FROM profile p "
                         "JOIN iteration i ON i.run_id=p.run_id AND i.iteration=p.iteration "
                         "WHERE p.run_id=? AND i.status='ok' ORDER BY p.iteration");
  SQLite::Statement stacks(database(),
                           "SELECT s.folded, c.count FROM profile_sample c "
                           "JOIN profile_stack s ON s.id=c.stack_id "
                           "WHERE c.run_id=? AND c.iteration=?");
  for (const std::int64_t run : run_ids) {
    head.bind(1, run);
    while (head.executeStep()) {
      StoredProfile p{run, head.getColumn(0).getInt(), {}};
      p.profile.event = head.getColumn(1).getString();
      p.profile.frequency_hz = head.getColumn(2).getDouble();
      p.profile.lost = static_cast<std::uint64_t>(head.getColumn(3).getInt64());
      SQLite::bind(stacks, run, p.iteration);
      while (stacks.executeStep())
        p.profile.stacks[stacks.getColumn(0).getString()] +=
            static_cast<std::uint64_t>(stacks.getColumn(1).getInt64());
      stacks.reset();
      out.push_back(std::move(p));
    }
    head.reset();
  }
  return out;
}

std::map<std::string, std::string> ResultsStore::run_params(std::int64_t run_id) const {
  return read_pairs(database(), "SELECT name, value FROM run_param WHERE run_id=?", run_id);
}

std::map<std::string, std::string> ResultsStore::run_context(std::int64_t run_id) const {
  return read_pairs(database(), "SELECT key, value FROM run_context WHERE run_id=?", run_id);
}

std::map<std::int64_t, std::string> ResultsStore::fact_values(const std::string& key) const {
  SQLite::Statement q(database(), "SELECT run_id, value FROM run_context WHERE key=?");
  q.bind(1, key);
  std::map<std::int64_t, std::string> out;
  while (q.executeStep()) out[q.getColumn(0).getInt64()] = q.getColumn(1).getString();
  return out;
}

std::vector<MetricDescriptor> ResultsStore::metrics(const std::string& workload) const {
  SQLite::Statement q(
      database(), "SELECT name, unit, direction, mean FROM metric WHERE workload=? ORDER BY name");
  q.bind(1, workload);
  std::vector<MetricDescriptor> out;
  while (q.executeStep())
    out.push_back(metric_from_columns(q.getColumn(0).getString(), q.getColumn(1).getString(),
                                      q.getColumn(2).getString(), q.getColumn(3).getString()));
  return out;
}

std::int64_t ResultsStore::run_count() const {
  SQLite::Statement q(database(), "SELECT count(*) FROM run");
  q.executeStep();
  return q.getColumn(0).getInt64();
}

std::optional<RunLabels> ResultsStore::run_labels(std::int64_t run_id) const {
  auto found = run_labels(std::set<std::int64_t>{run_id});
  if (found.empty()) return std::nullopt;
  return std::move(found.begin()->second);
}

std::optional<RunRecord> ResultsStore::run_record(std::int64_t id) const {
  const SQLite::Database& db = database();
  RunRecord r;
  {
    SQLite::Statement q(db,
                        "SELECT job, job_path, workload, cell, variant, build, status, reason, "
                        "iterations, warmup FROM run WHERE id=?");
    q.bind(1, id);
    if (!q.executeStep()) return std::nullopt;
    r.job = q.getColumn(0).getString();
    r.job_path = q.getColumn(1).getString();
    r.workload = q.getColumn(2).getString();
    r.cell = q.getColumn(3).getString();
    r.variant = q.getColumn(4).getString();
    r.build = q.getColumn(5).getString();
    r.status = stored_run_status(q.getColumn(6).getText());
    r.reason = q.getColumn(7).getString();
    r.iterations = q.getColumn(8).getInt();
    r.warmup = q.getColumn(9).getInt();
  }
  {
    SQLite::Statement q(db, "SELECT name, value, number FROM run_param WHERE run_id=?");
    q.bind(1, id);
    while (q.executeStep())
      r.params[q.getColumn(0).getString()] = {
          q.getColumn(1).getString(), q.getColumn(2).isNull() ? 0.0 : q.getColumn(2).getDouble()};
  }
  r.context = run_context(id);
  r.warnings = read_texts(
      db, "SELECT message FROM flag WHERE run_id=? AND iteration IS NULL ORDER BY rowid", id);
  SQLite::Statement s(db,
                      "SELECT metric, value, invalid FROM sample WHERE run_id=? AND iteration=?");
  SQLite::Statement m(db, "SELECT name, value FROM monitor WHERE run_id=? AND iteration=?");
  SQLite::Statement f(db, "SELECT message FROM flag WHERE run_id=? AND iteration=? ORDER BY rowid");
  for (IterationRow& row : iterations(id)) {
    RunRecord::Iteration it;
    it.row = std::move(row);
    for (auto* q : {&s, &m, &f}) {
      q->reset();
      SQLite::bind(*q, id, it.row.iteration);
    }
    while (s.executeStep()) {
      it.metrics[s.getColumn(0).getString()] = s.getColumn(1).getDouble();
      if (!s.getColumn(2).isNull())
        it.invalid[s.getColumn(0).getString()] = s.getColumn(2).getString();
    }
    while (m.executeStep()) it.monitors[m.getColumn(0).getString()] = m.getColumn(1).getDouble();
    while (f.executeStep()) it.flags.push_back(f.getColumn(0).getString());
    r.iteration_data.push_back(std::move(it));
  }
  return r;
}

}  // namespace nightjar
