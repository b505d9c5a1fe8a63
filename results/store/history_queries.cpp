// What `nightjar trend` and `nightjar plot` read besides the sides: the
// metrics of a job, the variants in first-run order, run labels, one
// metric's samples per run, a parameter's stored number. See
// results/store/store.h "trend and plot".
#include "results/store/detail.h"
#include "results/store/store.h"

namespace nightjar {

using namespace store_detail;

std::set<std::string> ResultsStore::metrics_with_samples(const std::string& job) const {
  SQLite::Statement q(
      database(),
      "SELECT DISTINCT s.metric FROM sample s JOIN run r ON r.id = s.run_id WHERE r.job = ?");
  q.bind(1, job);
  std::set<std::string> out;
  while (q.executeStep()) out.insert(q.getColumn(0).getString());
  return out;
}

std::vector<std::string> ResultsStore::variants_by_first_run(const std::string& job,
                                                             const std::string& workload) const {
  std::string sql = "SELECT variant FROM run WHERE variant <> ''";
  if (!job.empty()) sql += " AND job=?1";
  if (!workload.empty()) sql += job.empty() ? " AND workload=?1" : " AND workload=?2";
  sql += " GROUP BY variant ORDER BY min(id)";
  SQLite::Statement q(database(), sql);
  int i = 0;
  if (!job.empty()) q.bind(++i, job);
  if (!workload.empty()) q.bind(++i, workload);
  std::vector<std::string> out;
  while (q.executeStep()) out.push_back(q.getColumn(0).getString());
  return out;
}

std::map<std::int64_t, RunLabels> ResultsStore::run_labels(
    const std::set<std::int64_t>& ids) const {
  std::map<std::int64_t, RunLabels> out;
  if (ids.empty()) return out;
  SQLite::Statement q(database(), std::string(kRunLabelsSelect) + "WHERE r.id BETWEEN ? AND ?");
  SQLite::bind(q, *ids.begin(), *ids.rbegin());
  while (q.executeStep()) {
    const std::int64_t id = q.getColumn(0).getInt64();
    if (ids.count(id)) out[id] = run_labels_of_row(q);
  }
  return out;
}

std::map<std::int64_t, std::vector<double>> ResultsStore::metric_samples(
    const std::set<std::int64_t>& ids, const std::string& metric, SampleSet which) const {
  std::map<std::int64_t, std::vector<double>> out;
  if (ids.empty()) return out;
  SQLite::Statement q(database(),
                      std::string("SELECT run_id, value FROM sample WHERE metric = ? AND run_id "
                                  "BETWEEN ? AND ?") +
                          (which == SampleSet::valid ? " AND invalid IS NULL" : ""));
  SQLite::bind(q, metric, *ids.begin(), *ids.rbegin());
  while (q.executeStep()) {
    const std::int64_t id = q.getColumn(0).getInt64();
    if (ids.count(id)) out[id].push_back(q.getColumn(1).getDouble());
  }
  return out;
}

std::map<std::int64_t, int> ResultsStore::invalid_sample_counts(const std::set<std::int64_t>& ids,
                                                                const std::string& metric) const {
  std::map<std::int64_t, int> out;
  if (ids.empty()) return out;
  SQLite::Statement q(database(),
                      "SELECT run_id, count(*) FROM sample WHERE metric = ? AND run_id BETWEEN ? "
                      "AND ? AND invalid IS NOT NULL GROUP BY run_id");
  SQLite::bind(q, metric, *ids.begin(), *ids.rbegin());
  while (q.executeStep()) {
    const std::int64_t id = q.getColumn(0).getInt64();
    if (ids.count(id)) out[id] = q.getColumn(1).getInt();
  }
  return out;
}

std::optional<double> ResultsStore::param_number(std::int64_t run_id,
                                                 const std::string& name) const {
  SQLite::Statement q(database(), "SELECT number FROM run_param WHERE run_id = ? AND name = ?");
  SQLite::bind(q, run_id, name);
  if (!q.executeStep()) return std::nullopt;
  return optional_double(q.getColumn(0));
}

}  // namespace nightjar
