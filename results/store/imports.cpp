// Data in and out of files: runs recreated from an imported file (tidy CSV,
// Google Benchmark JSON), metric descriptors of imports, and the scans a tidy
// CSV export writes. See results/store/store.h "Imports and exports".
#include <algorithm>
#include <optional>
#include <string_view>

#include "results/store/detail.h"
#include "results/store/store.h"

namespace nightjar {

using namespace store_detail;

namespace {

// The id of the kernel row for an import: by release only (CSV files name
// nothing else), else the exact identity as a run records it.
template <class Prepare>
std::int64_t import_kernel_id(SQLite::Database& db, Prepare&& prepare, const KernelIdentity& k,
                              bool by_name) {
  if (by_name) {
    SQLite::Statement& q = prepare("SELECT min(id) FROM kernel WHERE release=?");
    q.bind(1, k.release);
    const std::optional<std::int64_t> id = q.executeStep() && !q.getColumn(0).isNull()
                                               ? std::optional(q.getColumn(0).getInt64())
                                               : std::nullopt;
    q.reset();  // a cached statement holds no cursor between uses
    if (id) return *id;
  }
  return kernel_row(db, k);
}

// The id of the testbox row for an import: by hostname only, else the exact
// identity (hostname, CPU model, CPUs). An existing row is never changed: an
// import does not know the box's memory today.
template <class Prepare>
std::int64_t import_testbox_id(SQLite::Database& db, Prepare&& prepare, const Testbox& t,
                               bool by_name) {
  if (by_name) {
    SQLite::Statement& q = prepare("SELECT min(id) FROM testbox WHERE hostname=?");
    q.bind(1, t.hostname);
    const std::optional<std::int64_t> id = q.executeStep() && !q.getColumn(0).isNull()
                                               ? std::optional(q.getColumn(0).getInt64())
                                               : std::nullopt;
    q.reset();  // a cached statement holds no cursor between uses
    if (id) return *id;
  }
  return testbox_row(db, t, false);
}

// Inserts the run row of `run`; returns its id. prepare(sql) gives a
// (cached) statement.
template <class Prepare>
std::int64_t insert_imported_row(SQLite::Database& db, Prepare&& prepare, const ImportedRun& run,
                                 const std::string& started, const std::string& now) {
  const std::int64_t kernel_id = import_kernel_id(db, prepare, run.kernel, run.match_by_name);
  const std::int64_t testbox_id = import_testbox_id(db, prepare, run.testbox, run.match_by_name);
  SQLite::Statement& q = prepare(
      "INSERT INTO run(id, job, job_path, workload, cell, variant, build, "
      "kernel_id, testbox_id, status, reason, iterations, warmup, started_at, "
      "ended_at) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  bind_optional(q, 1, run.id);  // NULL: SQLite picks max(id) + 1
  q.bind(2, run.job);
  q.bind(3, run.job_path);
  q.bind(4, run.workload);
  q.bind(5, Cell{run.workload, run.params}.id());
  q.bind(6, run.variant);
  q.bind(7, run.build);
  q.bind(8, kernel_id);
  q.bind(9, testbox_id);
  q.bind(10, to_string(run.detail.status));
  q.bind(11, run.detail.reason);
  q.bind(12, run.iterations);
  q.bind(13, run.detail.warmup);
  q.bind(14, started);
  q.bind(15, now);
  q.exec();
  return db.getLastInsertRowid();
}

// Rows per INSERT statement: one statement of many rows costs SQLite's
// per-statement work (bind, step, halt, reset, and for `iteration` the
// ephemeral table its CHECK(status IN (...)) builds) once for all of them,
// which halves the time of a big import; 64 rows x 6 parameters stays far
// below SQLITE_MAX_VARIABLE_NUMBER (999 in SQLite before 3.32).
constexpr std::size_t kRowsPerInsert = 64;

// Inserts `count` rows with "INSERT INTO <into> VALUES<row>,<row>,...",
// kRowsPerInsert rows per statement, each prepared by prepare(sql). bind_row(statement, i, first)
// binds row i's parameters from index `first` on; `row` holds `params` "?"s. Texts may be bound
// without a copy: each row's data outlives its step.
template <class Prepare, class BindRow>
void insert_in_batches(Prepare&& prepare, std::string_view into, std::string_view row, int params,
                       std::size_t count, BindRow bind_row) {
  auto sql = [&](std::size_t rows) {
    std::string text = "INSERT INTO " + std::string(into) + " VALUES";
    for (std::size_t r = 0; r < rows; ++r) (text += r ? "," : "") += row;
    return text;
  };
  auto run_batch = [&](SQLite::Statement& q, std::size_t from, std::size_t rows) {
    for (std::size_t r = 0; r < rows; ++r) bind_row(q, from + r, static_cast<int>(r) * params + 1);
    q.exec();
    q.reset();
  };
  std::size_t from = 0;
  if (count >= kRowsPerInsert) {
    SQLite::Statement& full = prepare(sql(kRowsPerInsert));
    for (; from + kRowsPerInsert <= count; from += kRowsPerInsert)
      run_batch(full, from, kRowsPerInsert);
  }
  if (from < count) {
    SQLite::Statement& rest = prepare(sql(count - from));
    run_batch(rest, from, count - from);
  }
}

// The iteration rows of `run`: the given ones (a bundle), else one `ok` row
// per iteration that has samples, started at `started`.
template <class Prepare>
void insert_iteration_rows(Prepare&& prepare, std::int64_t id, const ImportedRun& run,
                           const std::string& started) {
  constexpr std::string_view into =
      "iteration(run_id, iteration, status, reason, started_at, duration_sec)";
  if (!run.detail.iteration_rows.empty()) {
    insert_in_batches(prepare, into, "(?,?,?,?,?,?)", 6, run.detail.iteration_rows.size(),
                      [&](SQLite::Statement& q, std::size_t i, int at) {
                        const IterationRow& row = run.detail.iteration_rows[i];
                        q.bind(at, id);
                        q.bind(at + 1, row.iteration);
                        q.bind(at + 2, to_string(row.status));
                        q.bindNoCopy(at + 3, row.reason);
                        q.bindNoCopy(at + 4, row.started_at.empty() ? started : row.started_at);
                        q.bind(at + 5, row.duration_sec);
                      });
    return;
  }
  std::vector<int> iterations;
  for (const auto& s : run.samples) iterations.push_back(s.iteration);
  std::sort(iterations.begin(), iterations.end());
  iterations.erase(std::unique(iterations.begin(), iterations.end()), iterations.end());
  insert_in_batches(prepare, into, "(?,?,'ok','',?,0)", 3, iterations.size(),
                    [&](SQLite::Statement& q, std::size_t i, int at) {
                      q.bind(at, id);
                      q.bind(at + 1, iterations[i]);
                      q.bindNoCopy(at + 2, started);
                    });
}

}  // namespace

std::int64_t ResultsStore::insert_imported_run(const ImportedRun& run) {
  SQLite::Database& db = database();
  const std::string now = utc_now_iso8601();
  const std::string started = run.started_at.empty() ? now : run.started_at;
  auto prepare = [this](const std::string& sql) -> SQLite::Statement& { return statement(sql); };
  const std::int64_t id = insert_imported_row(db, prepare, run, started, now);

  SQLite::Statement& p =
      statement("INSERT INTO run_param(run_id, name, value, number) VALUES(?,?,?,?)");
  for (const auto& [name, value] : run.params) {
    SQLite::bind(p, id, name, value.text, value.number);
    p.exec();
    p.reset();
  }
  SQLite::Statement& c = statement("INSERT INTO run_context(run_id, key, value) VALUES(?,?,?)");
  std::map<std::string, std::string> facts = run.context;
  if (!run.identity.empty()) facts["import.identity"] = run.identity;
  if (!run.digest.empty()) facts["import.digest"] = run.digest;
  for (const auto& [key, value] : facts) {
    SQLite::bind(c, id, key, value);
    c.exec();
    c.reset();
  }
  insert_iteration_rows(prepare, id, run, started);
  insert_in_batches(prepare, "sample(run_id, iteration, metric, value, invalid)", "(?,?,?,?,?)", 5,
                    run.samples.size(), [&](SQLite::Statement& q, std::size_t i, int at) {
                      const SampleRow& sample = run.samples[i];
                      q.bind(at, id);
                      q.bind(at + 1, sample.iteration);
                      q.bindNoCopy(at + 2, sample.metric);
                      q.bind(at + 3, sample.value);
                      if (sample.invalid.empty())
                        q.bind(at + 4);
                      else
                        q.bindNoCopy(at + 4, sample.invalid);
                    });
  insert_in_batches(prepare, "monitor(run_id, iteration, name, value)", "(?,?,?,?)", 4,
                    run.detail.monitors.size(), [&](SQLite::Statement& q, std::size_t i, int at) {
                      const SampleRow& m = run.detail.monitors[i];
                      q.bind(at, id);
                      q.bind(at + 1, m.iteration);
                      q.bindNoCopy(at + 2, m.metric);
                      q.bind(at + 3, m.value);
                    });
  SQLite::Statement& f = statement("INSERT INTO flag(run_id, iteration, message) VALUES(?,?,?)");
  auto flag = [&](std::optional<int> iteration, const std::string& message) {
    f.bind(1, id);
    if (iteration)
      f.bind(2, *iteration);
    else
      f.bind(2);
    f.bind(3, message);
    f.exec();
    f.reset();
  };
  for (const auto& w : run.detail.warnings) flag(std::nullopt, w);
  for (const auto& [iteration, message] : run.detail.flags) flag(iteration, message);
  return id;
}

std::optional<ImportedOrigin> ResultsStore::imported_as(const std::string& identity) const {
  // Prepared once: an import asks this for every run of its file.
  SQLite::Statement& q = statement(
      "SELECT i.run_id, COALESCE(d.value, '') FROM run_context i "
      "LEFT JOIN run_context d ON d.run_id = i.run_id AND d.key = 'import.digest' "
      "WHERE i.key = 'import.identity' AND i.value = ? ORDER BY i.run_id LIMIT 1");
  q.bind(1, identity);
  std::optional<ImportedOrigin> found;
  if (q.executeStep())
    found = ImportedOrigin{q.getColumn(0).getInt64(), q.getColumn(1).getString()};
  q.reset();  // ends the read: a cached statement pins no snapshot
  return found;
}

std::optional<MetricDescriptor> ResultsStore::stored_metric(const std::string& workload,
                                                            const std::string& name) const {
  SQLite::Statement q(database(),
                      "SELECT unit, direction, mean FROM metric WHERE workload=? AND name=?");
  SQLite::bind(q, workload, name);
  if (!q.executeStep()) return std::nullopt;
  return metric_from_columns(name, q.getColumn(0).getString(), q.getColumn(1).getString(),
                             q.getColumn(2).getString());
}

void ResultsStore::add_missing_metrics(const std::string& workload,
                                       const std::vector<MetricDescriptor>& metrics) {
  write_metrics(database(), workload, metrics, false);
}

std::vector<WorkloadMetric> ResultsStore::all_metrics() const {
  SQLite::Statement q(database(),
                      "SELECT workload, name, unit, direction, mean FROM metric "
                      "ORDER BY workload, name");
  std::vector<WorkloadMetric> out;
  while (q.executeStep())
    out.push_back({q.getColumn(0).getString(),
                   metric_from_columns(q.getColumn(1).getString(), q.getColumn(2).getString(),
                                       q.getColumn(3).getString(), q.getColumn(4).getString())});
  return out;
}

std::map<std::int64_t, ExportRun> ResultsStore::export_runs(
    const std::vector<std::int64_t>& run_ids, SampleSet which) const {
  std::map<std::int64_t, ExportRun> runs;
  // Runs without samples are left out (an export writes no row for them).
  SQLite::Statement info(database(),
                         std::string(kRunLabelsSelect) +
                             "WHERE r.id BETWEEN ? AND ? "
                             "AND EXISTS(SELECT 1 FROM sample s WHERE s.run_id = r.id" +
                             (which == SampleSet::valid ? " AND s.invalid IS NULL)" : ")"));
  SQLite::Statement params(
      database(), "SELECT run_id, name, value FROM run_param WHERE run_id BETWEEN ? AND ?");
  for_each_range(run_ids, [&](std::int64_t lo, std::int64_t hi) {
    info.reset();
    SQLite::bind(info, lo, hi);
    while (info.executeStep()) runs[info.getColumn(0).getInt64()].labels = run_labels_of_row(info);
    params.reset();
    SQLite::bind(params, lo, hi);
    while (params.executeStep()) {
      auto it = runs.find(params.getColumn(0).getInt64());
      std::string value = params.getColumn(2).getString();
      // An empty text value is an unset parameter (not part of the cell id).
      if (it != runs.end() && !value.empty())
        it->second.params[params.getColumn(1).getString()] = std::move(value);
    }
  });
  return runs;
}

void ResultsStore::scan_samples(const std::vector<std::int64_t>& run_ids,
                                const std::function<void(const SampleView&)>& visit,
                                SampleSet which) const {
  SQLite::Statement q(database(),
                      std::string("SELECT run_id, iteration, metric, value, invalid FROM sample "
                                  "WHERE run_id BETWEEN ? AND ?") +
                          (which == SampleSet::valid ? " AND invalid IS NULL" : "") +
                          " ORDER BY run_id, iteration, metric");
  SampleView v;
  for_each_range(run_ids, [&](std::int64_t lo, std::int64_t hi) {
    q.reset();
    SQLite::bind(q, lo, hi);
    while (q.executeStep()) {
      v.run_id = q.getColumn(0).getInt64();
      v.iteration = q.getColumn(1).getInt();
      const SQLite::Column metric = q.getColumn(2);
      v.metric = std::string_view(metric.getText(), static_cast<std::size_t>(metric.getBytes()));
      v.value = q.getColumn(3).getDouble();
      const SQLite::Column invalid = q.getColumn(4);
      v.invalid = invalid.isNull() ? std::string_view()
                                   : std::string_view(invalid.getText(),
                                                      static_cast<std::size_t>(invalid.getBytes()));
      visit(v);
    }
  });
}

}  // namespace nightjar
