// Writing runs as `nightjar run` measures them: metric descriptors, the run
// row, one transaction per iteration, warnings and the final status. See
// results/store/store.h "Run writes".
#include <unistd.h>

#include "results/store/detail.h"
#include "results/store/store.h"

namespace nightjar {

using namespace store_detail;

void ResultsStore::register_metrics(const std::string& workload,
                                    const std::vector<MetricDescriptor>& metrics) {
  SQLite::Transaction tx(database(), SQLite::TransactionBehavior::IMMEDIATE);
  write_metrics(database(), workload, metrics, true);
  tx.commit();
}

// A testbox is identified by hostname, CPU model and CPU count. MemTotal is
// stored but not part of the identity: it shifts by a few MiB between kernels
// on the same machine, and a bisect must not split one box into many. Each
// run records the memory it saw in run_context (testbox.memory_bytes).
std::int64_t ResultsStore::insert_run(const NewRun& run, RunStatus status,
                                      const std::string& reason) {
  SQLite::Database& db = database();
  SQLite::Transaction tx(db, SQLite::TransactionBehavior::IMMEDIATE);
  const std::int64_t kernel_id = kernel_row(db, run.kernel);
  const std::int64_t testbox_id = testbox_row(db, run.testbox, true);
  SQLite::Statement q(db,
                      "INSERT INTO run(job, job_path, workload, cell, variant, build, kernel_id, "
                      "testbox_id, status, reason, iterations, warmup, started_at, ended_at, "
                      "host, boot_id, pid, pid_start) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  const std::string now = utc_now_iso8601();
  const long long pid = getpid();
  SQLite::bind(q, run.job, run.job_path, run.cell.workload, run.cell.id(), run.variant, run.build,
               kernel_id, testbox_id, to_string(status), reason, run.iterations, run.warmup, now);
  if (status == RunStatus::running)
    q.bind(14);
  else
    q.bind(14, now);
  q.bind(15, hostname());
  q.bind(16, boot_id());
  q.bind(17, static_cast<std::int64_t>(pid));
  q.bind(18, static_cast<std::int64_t>(process_start_ticks(pid)));
  q.exec();
  const std::int64_t id = db.getLastInsertRowid();

  SQLite::Statement p(db, "INSERT INTO run_param(run_id, name, value, number) VALUES(?,?,?,?)");
  for (const auto& [name, value] : run.cell.params) {
    SQLite::bind(p, id, name, value.text, value.number);
    p.exec();
    p.reset();
  }
  SQLite::Statement c(db, "INSERT OR REPLACE INTO run_context(run_id, key, value) VALUES(?,?,?)");
  std::map<std::string, std::string> context = run.context;
  context.emplace("testbox.memory_bytes", std::to_string(run.testbox.memory_bytes));
  for (const auto& [key, value] : context) {
    SQLite::bind(c, id, key, value);
    c.exec();
    c.reset();
  }
  tx.commit();
  return id;
}

std::int64_t ResultsStore::begin_run(const NewRun& run) {
  return insert_run(run, RunStatus::running, "");
}

std::int64_t ResultsStore::record_skipped(const NewRun& run, const std::string& reason) {
  return insert_run(run, RunStatus::skipped, reason);
}

namespace {
// Inserts one (run_id, iteration, name, value) row per value with `q` (a sample
// or monitor INSERT).
void insert_values(SQLite::Statement& q, std::int64_t run_id, int iteration,
                   const std::map<std::string, double>& values) {
  for (const auto& [name, value] : values) {
    SQLite::bind(q, run_id, iteration, name, value);
    q.exec();
    q.reset();
  }
}

// The perf-profile stacks of one iteration: each distinct folded stack once
// in profile_stack (shared by every run), its count in profile_sample.
void insert_profile(SQLite::Database& db, std::int64_t run_id, int iteration,
                    const IterationProfile& profile) {
  SQLite::Statement p(db,
                      "INSERT INTO profile(run_id, iteration, event, frequency_hz, lost) "
                      "VALUES(?,?,?,?,?)");
  SQLite::bind(p, run_id, iteration, profile.event, profile.frequency_hz,
               static_cast<std::int64_t>(profile.lost));
  p.exec();
  SQLite::Statement add(db, "INSERT OR IGNORE INTO profile_stack(folded) VALUES(?)");
  SQLite::Statement id(db, "SELECT id FROM profile_stack WHERE folded=?");
  SQLite::Statement count(
      db, "INSERT INTO profile_sample(run_id, iteration, stack_id, count) VALUES(?,?,?,?)");
  for (const auto& [stack, n] : profile.stacks) {
    add.bind(1, stack);
    add.exec();
    add.reset();
    id.bind(1, stack);
    if (!id.executeStep()) continue;
    const std::int64_t stack_id = id.getColumn(0).getInt64();
    id.reset();
    SQLite::bind(count, run_id, iteration, stack_id, static_cast<std::int64_t>(n));
    count.exec();
    count.reset();
  }
}
}  // namespace

void ResultsStore::add_iteration(std::int64_t run_id, int iteration, const IterationResult& result,
                                 const std::map<std::string, double>& monitors, double duration_sec,
                                 const IterationProfile* profile) {
  SQLite::Database& db = database();
  SQLite::Transaction tx(db, SQLite::TransactionBehavior::IMMEDIATE);
  SQLite::Statement it(db,
                       "INSERT INTO iteration(run_id, iteration, status, reason, started_at, "
                       "duration_sec) VALUES(?,?,?,?,?,?)");
  const IterationStatus status = result.failure   ? IterationStatus::failed
                                 : result.invalid ? IterationStatus::invalid
                                                  : IterationStatus::ok;
  SQLite::bind(it, run_id, iteration, to_string(status),
               result.failure ? *result.failure : result.invalid.value_or(""), utc_now_iso8601(),
               duration_sec);
  it.exec();
  if (!result.failure) {
    // An invalid iteration marks every value with its reason; else a value
    // the runner or the workload found impossible carries its own.
    SQLite::Statement s(
        db, "INSERT INTO sample(run_id, iteration, metric, value, invalid) VALUES(?,?,?,?,?)");
    for (const auto& [name, value] : result.metrics) {
      SQLite::bind(s, run_id, iteration, name, value);
      auto own = result.invalid_metrics.find(name);
      if (result.invalid)
        s.bind(5, *result.invalid);
      else if (own != result.invalid_metrics.end())
        s.bind(5, own->second);
      else
        s.bind(5);
      s.exec();
      s.reset();
    }
  }
  SQLite::Statement m(db, "INSERT INTO monitor(run_id, iteration, name, value) VALUES(?,?,?,?)");
  insert_values(m, run_id, iteration, monitors);
  insert_values(m, run_id, iteration, result.counters);
  SQLite::Statement f(db, "INSERT INTO flag(run_id, iteration, message) VALUES(?,?,?)");
  for (const auto& message : result.flags) {
    SQLite::bind(f, run_id, iteration, message);
    f.exec();
    f.reset();
  }
  if (profile) insert_profile(db, run_id, iteration, *profile);
  tx.commit();
}

void ResultsStore::add_context(std::int64_t run_id, const std::string& key,
                               const std::string& value) {
  SQLite::Statement c(database(),
                      "INSERT OR REPLACE INTO run_context(run_id, key, value) VALUES(?,?,?)");
  SQLite::bind(c, run_id, key, value);
  c.exec();
}

void ResultsStore::add_warning(std::int64_t run_id, const std::string& message) {
  SQLite::Statement f(database(), "INSERT INTO flag(run_id, iteration, message) VALUES(?,NULL,?)");
  SQLite::bind(f, run_id, message);
  f.exec();
}

void ResultsStore::finish_run(std::int64_t run_id, RunStatus status, const std::string& reason) {
  SQLite::Statement u(database(), "UPDATE run SET status=?, reason=?, ended_at=? WHERE id=?");
  SQLite::bind(u, to_string(status), reason, utc_now_iso8601(), run_id);
  u.exec();
}

}  // namespace nightjar
