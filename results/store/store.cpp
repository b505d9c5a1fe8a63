#include "results/store/store.h"

#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "results/model/exit_codes.h"

namespace nightjar {
namespace {
/// How long a writer waits for another process's lock, milliseconds.
constexpr int kBusyTimeoutMs = 30000;

// Forward migrations: element i upgrades schema version i to i+1. Never edit
// a released entry; append a new one and bump kSchemaVersion.
const char* const kMigrations[] = {
    // 0 -> 1: the initial schema.
    R"sql(
CREATE TABLE testbox(
  id INTEGER PRIMARY KEY,
  hostname TEXT NOT NULL, cpu_model TEXT NOT NULL,
  cpus INTEGER NOT NULL, memory_bytes INTEGER NOT NULL,
  UNIQUE(hostname, cpu_model, cpus));
CREATE TABLE kernel(
  id INTEGER PRIMARY KEY,
  release TEXT NOT NULL, version TEXT NOT NULL, cmdline TEXT NOT NULL,
  config_hash TEXT NOT NULL,
  UNIQUE(release, version, cmdline, config_hash));
CREATE TABLE metric(
  workload TEXT NOT NULL, name TEXT NOT NULL, unit TEXT NOT NULL,
  direction TEXT NOT NULL CHECK(direction IN ('higher', 'lower')),
  mean TEXT NOT NULL CHECK(mean IN ('hmean', 'amean', 'gmean')),
  PRIMARY KEY(workload, name));
CREATE TABLE run(
  id INTEGER PRIMARY KEY,
  job TEXT NOT NULL, job_path TEXT NOT NULL DEFAULT '',
  workload TEXT NOT NULL, cell TEXT NOT NULL,
  variant TEXT NOT NULL, build TEXT NOT NULL DEFAULT '',
  kernel_id INTEGER REFERENCES kernel(id),
  testbox_id INTEGER REFERENCES testbox(id),
  status TEXT NOT NULL
    CHECK(status IN ('running', 'complete', 'aborted', 'failed', 'skipped')),
  reason TEXT NOT NULL DEFAULT '',
  iterations INTEGER NOT NULL, warmup INTEGER NOT NULL,
  started_at TEXT NOT NULL, ended_at TEXT,
  host TEXT NOT NULL DEFAULT '', boot_id TEXT NOT NULL DEFAULT '',
  pid INTEGER, pid_start INTEGER);
CREATE INDEX run_by_cell ON run(workload, job, cell);
CREATE INDEX run_by_status ON run(status);
CREATE TABLE run_param(
  run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,
  name TEXT NOT NULL, value TEXT NOT NULL, number REAL,
  PRIMARY KEY(run_id, name));
CREATE TABLE run_context(
  run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,
  key TEXT NOT NULL, value TEXT NOT NULL,
  PRIMARY KEY(run_id, key));
CREATE TABLE iteration(
  run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,
  iteration INTEGER NOT NULL,
  status TEXT NOT NULL CHECK(status IN ('ok', 'failed')),
  reason TEXT NOT NULL DEFAULT '',
  started_at TEXT NOT NULL, duration_sec REAL NOT NULL,
  PRIMARY KEY(run_id, iteration));
CREATE TABLE sample(
  run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,
  iteration INTEGER NOT NULL, metric TEXT NOT NULL, value REAL NOT NULL,
  PRIMARY KEY(run_id, iteration, metric)) WITHOUT ROWID;
CREATE TABLE monitor(
  run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,
  iteration INTEGER NOT NULL, name TEXT NOT NULL, value REAL NOT NULL,
  PRIMARY KEY(run_id, iteration, name)) WITHOUT ROWID;
CREATE TABLE flag(
  run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,
  iteration INTEGER, message TEXT NOT NULL);
)sql",
    // 1 -> 2: bisect sessions (harness/bisect.h): every step of a bisection,
    // its build and decision, and the runs measured for it.
    R"sql(
CREATE TABLE bisect_session(
  id INTEGER PRIMARY KEY,
  kind TEXT NOT NULL CHECK(kind IN ('run', 'step')),
  repo TEXT NOT NULL,
  good_rev TEXT NOT NULL, bad_rev TEXT NOT NULL DEFAULT '',
  good TEXT NOT NULL DEFAULT '', bad TEXT NOT NULL DEFAULT '',
  job_path TEXT NOT NULL, job TEXT NOT NULL, metric TEXT NOT NULL,
  options TEXT NOT NULL DEFAULT '{}',
  status TEXT NOT NULL
    CHECK(status IN ('running', 'found', 'inconclusive', 'failed', 'interrupted')),
  result TEXT NOT NULL DEFAULT '', first_bad TEXT NOT NULL DEFAULT '',
  started_at TEXT NOT NULL, ended_at TEXT);
CREATE TABLE bisect_step(
  session_id INTEGER NOT NULL REFERENCES bisect_session(id) ON DELETE CASCADE,
  step INTEGER NOT NULL,
  commit_id TEXT NOT NULL, subject TEXT NOT NULL DEFAULT '',
  role TEXT NOT NULL CHECK(role IN ('good', 'bad', 'test')),
  build_status TEXT NOT NULL CHECK(build_status IN ('pending', 'ok', 'failed', 'none')),
  build_seconds REAL, build_output TEXT NOT NULL DEFAULT '',
  decision TEXT NOT NULL CHECK(decision IN ('pending', 'good', 'bad', 'skip')),
  verdict TEXT NOT NULL DEFAULT '', reason TEXT NOT NULL DEFAULT '',
  pct_change REAL, p REAL, q REAL, ratio_lo REAL, ratio_hi REAL,
  n_base INTEGER, n_now INTEGER,
  started_at TEXT NOT NULL, ended_at TEXT,
  PRIMARY KEY(session_id, step));
CREATE TABLE bisect_run(
  session_id INTEGER NOT NULL, step INTEGER NOT NULL,
  run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,
  PRIMARY KEY(session_id, step, run_id),
  FOREIGN KEY(session_id, step) REFERENCES bisect_step(session_id, step) ON DELETE CASCADE);
)sql",
    // 2 -> 3: indexes for compare/check selectors (results/selector.h): a side
    // picked by variant, build or kernel out of a large database reads only
    // its own runs.
    R"sql(
CREATE INDEX run_by_variant ON run(variant);
CREATE INDEX run_by_build ON run(build);
CREATE INDEX run_by_kernel ON run(kernel_id);
)sql",
};
static_assert(std::size(kMigrations) == ResultsStore::kSchemaVersion);

std::string read_first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

std::string hostname() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "";
  return buf;
}

std::string boot_id() {
  return read_first_line("/proc/sys/kernel/random/boot_id");
}

// Field 22 of /proc/PID/stat: the process start time in clock ticks since
// boot. With the pid it identifies a process across pid reuse. -1 when the
// process does not exist.
long long process_start_ticks(long long pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string all;
  if (!std::getline(in, all)) return -1;
  auto close = all.rfind(')');  // comm may contain spaces and parentheses
  if (close == std::string::npos) return -1;
  std::istringstream rest(all.substr(close + 2));
  std::string field;
  // after ")": field 3 (state) is the first; we want field 22.
  for (int i = 3; i <= 22; ++i) {
    if (!(rest >> field)) return -1;
  }
  return std::stoll(field);
}

}  // namespace

const char* to_string(RunStatus s) {
  switch (s) {
    case RunStatus::running:
      return "running";
    case RunStatus::complete:
      return "complete";
    case RunStatus::aborted:
      return "aborted";
    case RunStatus::failed:
      return "failed";
    case RunStatus::skipped:
      return "skipped";
  }
  return "failed";
}

std::string utc_now_iso8601() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string ResultsStore::resolve_path(const std::string& explicit_path) {
  if (!explicit_path.empty()) return explicit_path;
  if (const char* env = std::getenv("NIGHTJAR_DB"); env && *env) return env;
  if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg && *xdg)
    return std::string(xdg) + "/nightjar/results.db";
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : ".") + "/.local/share/nightjar/results.db";
}

namespace {
SQLite::Database open_database(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path parent = fs::path(path).parent_path();
  if (!parent.empty()) {
    fs::create_directories(parent, ec);
    if (ec)
      throw EnvironmentError(path + ": cannot create the database directory " + parent.string() +
                             ": " + ec.message() + "; pass --db PATH to a writable place");
  }
  try {
    return SQLite::Database(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE, kBusyTimeoutMs);
  } catch (const SQLite::Exception& e) {
    throw EnvironmentError(path + ": cannot open the results database: " + e.what() +
                           "; pass --db PATH to a writable place");
  }
}
// Writes metric descriptors of `workload`: `replace` overwrites a stored
// descriptor of the same name, else it is kept.
void write_metrics(SQLite::Database& db, const std::string& workload,
                   const std::vector<MetricDescriptor>& metrics, bool replace) {
  SQLite::Statement q(db, std::string(replace ? "INSERT OR REPLACE" : "INSERT OR IGNORE") +
                              " INTO metric(workload, name, unit, direction, mean) "
                              "VALUES(?,?,?,?,?)");
  for (const auto& m : metrics) {
    q.bind(1, workload);
    q.bind(2, m.name);
    q.bind(3, m.unit);
    q.bind(4, std::string(to_string(m.direction)));
    q.bind(5, std::string(to_string(m.mean)));
    q.exec();
    q.reset();
  }
}

// The id of the kernel row with exactly identity `k`, inserted when new.
std::int64_t kernel_row(SQLite::Database& db, const KernelIdentity& k) {
  SQLite::Statement ins(db,
                        "INSERT OR IGNORE INTO kernel(release, version, cmdline, config_hash) "
                        "VALUES(?,?,?,?)");
  ins.bind(1, k.release);
  ins.bind(2, k.version);
  ins.bind(3, k.cmdline);
  ins.bind(4, k.config_hash);
  ins.exec();
  SQLite::Statement q(db,
                      "SELECT id FROM kernel WHERE release=? AND version=? AND cmdline=? AND "
                      "config_hash=?");
  q.bind(1, k.release);
  q.bind(2, k.version);
  q.bind(3, k.cmdline);
  q.bind(4, k.config_hash);
  q.executeStep();
  return q.getColumn(0).getInt64();
}

// The id of the testbox row of `t` (hostname, CPU model, CPUs), inserted when
// new; `update_memory`: an existing row takes t's memory (a run knows it, an
// import does not).
std::int64_t testbox_row(SQLite::Database& db, const Testbox& t, bool update_memory) {
  SQLite::Statement ins(
      db, update_memory ? "INSERT INTO testbox(hostname, cpu_model, cpus, memory_bytes) "
                          "VALUES(?,?,?,?) ON CONFLICT(hostname, cpu_model, cpus) DO UPDATE SET "
                          "memory_bytes=excluded.memory_bytes"
                        : "INSERT OR IGNORE INTO testbox(hostname, cpu_model, cpus, memory_bytes) "
                          "VALUES(?,?,?,?)");
  ins.bind(1, t.hostname);
  ins.bind(2, t.cpu_model);
  ins.bind(3, static_cast<std::int64_t>(t.cpus));
  ins.bind(4, static_cast<std::int64_t>(t.memory_bytes));
  ins.exec();
  SQLite::Statement q(db, "SELECT id FROM testbox WHERE hostname=? AND cpu_model=? AND cpus=?");
  q.bind(1, t.hostname);
  q.bind(2, t.cpu_model);
  q.bind(3, static_cast<std::int64_t>(t.cpus));
  q.executeStep();
  return q.getColumn(0).getInt64();
}

}  // namespace

ResultsStore::ResultsStore(const std::string& path) : path_(path), db_(open_database(path)) {
  try {
    // WAL lets readers and one writer work at once; the busy timeout (30 s,
    // set when opening) makes concurrent writers wait instead of failing.
    // Switching a new file to WAL while another process does the same can
    // report SQLITE_BUSY without consulting the busy handler (SQLite's
    // "journal_mode" docs: the change needs an exclusive lock), so the
    // set-up is retried on BUSY for as long as the busy timeout.
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(kBusyTimeoutMs);
    for (int attempt = 0;; ++attempt) {
      try {
        db_.exec("PRAGMA journal_mode=WAL");
        break;
      } catch (const SQLite::Exception& e) {
        if ((e.getErrorCode() & 0xff) != SQLITE_BUSY || std::chrono::steady_clock::now() > deadline)
          throw;
        std::this_thread::sleep_for(std::chrono::milliseconds(5 + 5 * std::min(attempt, 20)));
      }
    }
    db_.exec("PRAGMA synchronous=NORMAL");
    db_.exec("PRAGMA foreign_keys=ON");
    migrate();
    stale_aborted_ = abort_stale_runs();
  } catch (const SQLite::Exception& e) {
    throw EnvironmentError(path + ": not a usable nightjar results database (" + e.what() +
                           "); pass --db PATH to use another file");
  }
}

void ResultsStore::migrate() {
  auto version = [&] { return db_.execAndGet("PRAGMA user_version").getInt(); };
  if (version() == kSchemaVersion) return;
  // IMMEDIATE takes the write lock first, so two processes opening a new
  // database at once cannot both run the same migration.
  SQLite::Transaction tx(db_, SQLite::TransactionBehavior::IMMEDIATE);
  int v = version();
  if (v > kSchemaVersion)
    throw EnvironmentError(path_ + ": database schema version " + std::to_string(v) +
                           " is newer than this nightjar understands (" +
                           std::to_string(kSchemaVersion) + "); upgrade nightjar");
  if (v == 0) {
    // A fresh file must be empty; refuse to "migrate" someone else's database.
    int tables = db_.execAndGet("SELECT count(*) FROM sqlite_master").getInt();
    if (tables != 0)
      throw EnvironmentError(
          path_ +
          ": this SQLite file is not a nightjar results database; pass --db PATH to a new file");
  }
  for (; v < kSchemaVersion; ++v) db_.exec(kMigrations[v]);
  db_.exec("PRAGMA user_version=" + std::to_string(kSchemaVersion));
  tx.commit();
}

int ResultsStore::abort_stale_runs() {
  const std::string host = hostname();
  const std::string boot = boot_id();
  std::vector<std::int64_t> stale;
  {
    SQLite::Statement q(
        db_, "SELECT id, boot_id, pid, pid_start FROM run WHERE status='running' AND host=?");
    q.bind(1, host);
    while (q.executeStep()) {
      std::int64_t id = q.getColumn(0).getInt64();
      std::string run_boot = q.getColumn(1).getString();
      long long pid = q.getColumn(2).isNull() ? -1 : q.getColumn(2).getInt64();
      long long start = q.getColumn(3).isNull() ? -2 : q.getColumn(3).getInt64();
      // Another boot: the process is gone. Same boot: gone if the pid is
      // unused or now belongs to a process that started at another time.
      if (run_boot != boot || pid <= 0 || process_start_ticks(pid) != start) stale.push_back(id);
    }
  }
  if (stale.empty()) return 0;
  SQLite::Transaction tx(db_, SQLite::TransactionBehavior::IMMEDIATE);
  SQLite::Statement u(db_,
                      "UPDATE run SET status='aborted', ended_at=?, reason='the nightjar process "
                      "running it ended without finishing (killed?); samples measured before are "
                      "kept' WHERE id=? AND status='running'");
  for (auto id : stale) {
    u.bind(1, utc_now_iso8601());
    u.bind(2, id);
    u.exec();
    u.reset();
  }
  tx.commit();
  return static_cast<int>(stale.size());
}

void ResultsStore::register_metrics(const std::string& workload,
                                    const std::vector<MetricDescriptor>& metrics) {
  SQLite::Transaction tx(db_, SQLite::TransactionBehavior::IMMEDIATE);
  write_metrics(db_, workload, metrics, true);
  tx.commit();
}

std::int64_t ResultsStore::ensure_kernel(const KernelIdentity& k) {
  return kernel_row(db_, k);
}

// A testbox is identified by hostname, CPU model and CPU count. MemTotal is
// stored but not part of the identity: it shifts by a few MiB between kernels
// on the same machine, and a bisect must not split one box into many. Each
// run records the memory it saw in run_context (testbox.memory_bytes).
std::int64_t ResultsStore::ensure_testbox(const Testbox& t) {
  return testbox_row(db_, t, true);
}

std::int64_t ResultsStore::insert_run(const NewRun& run, RunStatus status,
                                      const std::string& reason) {
  SQLite::Transaction tx(db_, SQLite::TransactionBehavior::IMMEDIATE);
  std::int64_t kernel_id = ensure_kernel(run.kernel);
  std::int64_t testbox_id = ensure_testbox(run.testbox);
  SQLite::Statement q(db_,
                      "INSERT INTO run(job, job_path, workload, cell, variant, build, kernel_id, "
                      "testbox_id, status, reason, iterations, warmup, started_at, ended_at, "
                      "host, boot_id, pid, pid_start) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  const std::string now = utc_now_iso8601();
  q.bind(1, run.job);
  q.bind(2, run.job_path);
  q.bind(3, run.cell.workload);
  q.bind(4, run.cell.id());
  q.bind(5, run.variant);
  q.bind(6, run.build);
  q.bind(7, kernel_id);
  q.bind(8, testbox_id);
  q.bind(9, to_string(status));
  q.bind(10, reason);
  q.bind(11, run.iterations);
  q.bind(12, run.warmup);
  q.bind(13, now);
  if (status == RunStatus::running)
    q.bind(14);
  else
    q.bind(14, now);
  q.bind(15, hostname());
  q.bind(16, boot_id());
  long long pid = getpid();
  q.bind(17, static_cast<std::int64_t>(pid));
  q.bind(18, static_cast<std::int64_t>(process_start_ticks(pid)));
  q.exec();
  std::int64_t id = db_.getLastInsertRowid();

  SQLite::Statement p(db_, "INSERT INTO run_param(run_id, name, value, number) VALUES(?,?,?,?)");
  for (const auto& [name, value] : run.cell.params) {
    p.bind(1, id);
    p.bind(2, name);
    p.bind(3, value.text);
    p.bind(4, value.number);
    p.exec();
    p.reset();
  }
  SQLite::Statement c(db_, "INSERT OR REPLACE INTO run_context(run_id, key, value) VALUES(?,?,?)");
  std::map<std::string, std::string> context = run.context;
  context.emplace("testbox.memory_bytes", std::to_string(run.testbox.memory_bytes));
  for (const auto& [key, value] : context) {
    c.bind(1, id);
    c.bind(2, key);
    c.bind(3, value);
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

void ResultsStore::add_iteration(std::int64_t run_id, int iteration, const IterationResult& result,
                                 const std::map<std::string, double>& monitors,
                                 double duration_sec) {
  SQLite::Transaction tx(db_, SQLite::TransactionBehavior::IMMEDIATE);
  SQLite::Statement it(db_,
                       "INSERT INTO iteration(run_id, iteration, status, reason, started_at, "
                       "duration_sec) VALUES(?,?,?,?,?,?)");
  it.bind(1, run_id);
  it.bind(2, iteration);
  it.bind(3, result.failure ? "failed" : "ok");
  it.bind(4, result.failure.value_or(""));
  it.bind(5, utc_now_iso8601());
  it.bind(6, duration_sec);
  it.exec();
  if (!result.failure) {
    SQLite::Statement s(db_,
                        "INSERT INTO sample(run_id, iteration, metric, value) VALUES(?,?,?,?)");
    for (const auto& [metric, value] : result.metrics) {
      s.bind(1, run_id);
      s.bind(2, iteration);
      s.bind(3, metric);
      s.bind(4, value);
      s.exec();
      s.reset();
    }
  }
  SQLite::Statement m(db_, "INSERT INTO monitor(run_id, iteration, name, value) VALUES(?,?,?,?)");
  auto put = [&](const std::map<std::string, double>& values) {
    for (const auto& [name, value] : values) {
      m.bind(1, run_id);
      m.bind(2, iteration);
      m.bind(3, name);
      m.bind(4, value);
      m.exec();
      m.reset();
    }
  };
  put(monitors);
  put(result.counters);
  SQLite::Statement f(db_, "INSERT INTO flag(run_id, iteration, message) VALUES(?,?,?)");
  for (const auto& message : result.flags) {
    f.bind(1, run_id);
    f.bind(2, iteration);
    f.bind(3, message);
    f.exec();
    f.reset();
  }
  tx.commit();
}

void ResultsStore::add_context(std::int64_t run_id, const std::string& key,
                               const std::string& value) {
  SQLite::Statement c(db_, "INSERT OR REPLACE INTO run_context(run_id, key, value) VALUES(?,?,?)");
  c.bind(1, run_id);
  c.bind(2, key);
  c.bind(3, value);
  c.exec();
}

void ResultsStore::add_warning(std::int64_t run_id, const std::string& message) {
  SQLite::Statement f(db_, "INSERT INTO flag(run_id, iteration, message) VALUES(?,NULL,?)");
  f.bind(1, run_id);
  f.bind(2, message);
  f.exec();
}

void ResultsStore::finish_run(std::int64_t run_id, RunStatus status, const std::string& reason) {
  SQLite::Statement u(db_, "UPDATE run SET status=?, reason=?, ended_at=? WHERE id=?");
  u.bind(1, to_string(status));
  u.bind(2, reason);
  u.bind(3, utc_now_iso8601());
  u.bind(4, run_id);
  u.exec();
}

std::vector<RunRow> ResultsStore::runs(const RunFilter& f) const {
  std::string sql =
      "SELECT r.id, r.job, r.workload, r.cell, r.variant, r.build, COALESCE(k.release, ''), "
      "COALESCE(t.hostname, ''), r.status, r.reason, r.started_at, COALESCE(r.ended_at, ''), "
      "r.iterations, "
      "(SELECT count(*) FROM iteration i WHERE i.run_id=r.id AND i.status='ok'), "
      "(SELECT count(*) FROM iteration i WHERE i.run_id=r.id AND i.status='failed') "
      "FROM run r LEFT JOIN kernel k ON k.id=r.kernel_id LEFT JOIN testbox t ON t.id=r.testbox_id "
      "WHERE 1=1";
  std::vector<std::string> binds;
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
  add(f.status, " AND r.status=?");
  add(f.hostname, " AND t.hostname=?");
  if (f.run_id) sql += " AND r.id=" + std::to_string(*f.run_id);
  if (f.limit)
    sql = "SELECT * FROM (" + sql + " ORDER BY r.id DESC LIMIT " + std::to_string(*f.limit) +
          ") ORDER BY 1";
  else
    sql += " ORDER BY r.id";
  SQLite::Statement q(const_cast<SQLite::Database&>(db_), sql);
  for (std::size_t i = 0; i < binds.size(); ++i) q.bind(static_cast<int>(i + 1), binds[i]);
  std::vector<RunRow> rows;
  while (q.executeStep()) {
    RunRow r;
    r.id = q.getColumn(0).getInt64();
    r.job = q.getColumn(1).getString();
    r.workload = q.getColumn(2).getString();
    r.cell = q.getColumn(3).getString();
    r.variant = q.getColumn(4).getString();
    r.build = q.getColumn(5).getString();
    r.kernel_release = q.getColumn(6).getString();
    r.hostname = q.getColumn(7).getString();
    r.status = q.getColumn(8).getString();
    r.reason = q.getColumn(9).getString();
    r.started_at = q.getColumn(10).getString();
    r.ended_at = q.getColumn(11).getString();
    r.iterations = q.getColumn(12).getInt();
    r.samples = q.getColumn(13).getInt();
    r.failed = q.getColumn(14).getInt();
    rows.push_back(std::move(r));
  }
  return rows;
}

namespace {
std::vector<SampleRow> read_values(const SQLite::Database& db, const char* sql,
                                   std::int64_t run_id) {
  SQLite::Statement q(const_cast<SQLite::Database&>(db), sql);
  q.bind(1, run_id);
  std::vector<SampleRow> rows;
  while (q.executeStep())
    rows.push_back(
        {q.getColumn(0).getInt(), q.getColumn(1).getString(), q.getColumn(2).getDouble()});
  return rows;
}

std::map<std::string, std::string> read_pairs(const SQLite::Database& db, const char* sql,
                                              std::int64_t run_id) {
  SQLite::Statement q(const_cast<SQLite::Database&>(db), sql);
  q.bind(1, run_id);
  std::map<std::string, std::string> out;
  while (q.executeStep()) out[q.getColumn(0).getString()] = q.getColumn(1).getString();
  return out;
}
}  // namespace

std::vector<SampleRow> ResultsStore::samples(std::int64_t run_id) const {
  return read_values(db_,
                     "SELECT iteration, metric, value FROM sample WHERE run_id=? "
                     "ORDER BY iteration, metric",
                     run_id);
}

std::vector<SampleRow> ResultsStore::monitors(std::int64_t run_id) const {
  return read_values(db_,
                     "SELECT iteration, name, value FROM monitor WHERE run_id=? "
                     "ORDER BY iteration, name",
                     run_id);
}

std::map<std::string, std::string> ResultsStore::run_params(std::int64_t run_id) const {
  return read_pairs(db_, "SELECT name, value FROM run_param WHERE run_id=?", run_id);
}

std::map<std::string, std::string> ResultsStore::run_context(std::int64_t run_id) const {
  return read_pairs(db_, "SELECT key, value FROM run_context WHERE run_id=?", run_id);
}

std::vector<MetricDescriptor> ResultsStore::metrics(const std::string& workload) const {
  SQLite::Statement q(
      const_cast<SQLite::Database&>(db_),
      "SELECT name, unit, direction, mean FROM metric WHERE workload=? ORDER BY name");
  q.bind(1, workload);
  std::vector<MetricDescriptor> out;
  while (q.executeStep()) {
    MetricDescriptor m;
    m.name = q.getColumn(0).getString();
    m.unit = q.getColumn(1).getString();
    m.direction = direction_from_string(q.getColumn(2).getString());
    m.mean = mean_kind_from_string(q.getColumn(3).getString());
    out.push_back(std::move(m));
  }
  return out;
}

std::int64_t ResultsStore::run_count() const {
  return const_cast<SQLite::Database&>(db_).execAndGet("SELECT count(*) FROM run").getInt64();
}

// ---------------------------------------------------------------------------
// Imports
// ---------------------------------------------------------------------------

namespace {

// The id of the kernel row for an import: by release only (CSV files name
// nothing else), else the exact identity as ensure_kernel records it.
std::int64_t import_kernel_id(SQLite::Database& db, const KernelIdentity& k, bool by_name) {
  if (by_name) {
    SQLite::Statement q(db, "SELECT min(id) FROM kernel WHERE release=?");
    q.bind(1, k.release);
    if (q.executeStep() && !q.getColumn(0).isNull()) return q.getColumn(0).getInt64();
  }
  return kernel_row(db, k);
}

// The id of the testbox row for an import: by hostname only, else the exact
// identity (hostname, CPU model, CPUs). An existing row is never changed: an
// import does not know the box's memory today.
std::int64_t import_testbox_id(SQLite::Database& db, const Testbox& t, bool by_name) {
  if (by_name) {
    SQLite::Statement q(db, "SELECT min(id) FROM testbox WHERE hostname=?");
    q.bind(1, t.hostname);
    if (q.executeStep() && !q.getColumn(0).isNull()) return q.getColumn(0).getInt64();
  }
  return testbox_row(db, t, false);
}

}  // namespace

std::int64_t insert_imported_run(ResultsStore& store, const ImportedRun& run) {
  SQLite::Database& db = store.db();
  const std::int64_t kernel_id = import_kernel_id(db, run.kernel, run.match_by_name);
  const std::int64_t testbox_id = import_testbox_id(db, run.testbox, run.match_by_name);
  const std::string now = utc_now_iso8601();
  const std::string started = run.started_at.empty() ? now : run.started_at;
  Cell cell{run.workload, run.params};
  SQLite::Statement q(db,
                      "INSERT INTO run(id, job, job_path, workload, cell, variant, build, "
                      "kernel_id, testbox_id, status, reason, iterations, warmup, started_at, "
                      "ended_at) VALUES(?,?,?,?,?,?,?,?,?,'complete','',?,0,?,?)");
  if (run.id)
    q.bind(1, *run.id);
  else
    q.bind(1);  // NULL: SQLite picks max(id) + 1
  q.bind(2, run.job);
  q.bind(3, run.job_path);
  q.bind(4, run.workload);
  q.bind(5, cell.id());
  q.bind(6, run.variant);
  q.bind(7, run.build);
  q.bind(8, kernel_id);
  q.bind(9, testbox_id);
  q.bind(10, run.iterations);
  q.bind(11, started);
  q.bind(12, now);
  q.exec();
  const std::int64_t id = db.getLastInsertRowid();

  SQLite::Statement p(db, "INSERT INTO run_param(run_id, name, value, number) VALUES(?,?,?,?)");
  for (const auto& [name, value] : run.params) {
    p.bind(1, id);
    p.bind(2, name);
    p.bind(3, value.text);
    p.bind(4, value.number);
    p.exec();
    p.reset();
  }
  SQLite::Statement c(db, "INSERT INTO run_context(run_id, key, value) VALUES(?,?,?)");
  for (const auto& [key, value] : run.context) {
    c.bind(1, id);
    c.bind(2, key);
    c.bind(3, value);
    c.exec();
    c.reset();
  }
  std::vector<int> iterations;
  for (const auto& s : run.samples) iterations.push_back(s.iteration);
  std::sort(iterations.begin(), iterations.end());
  iterations.erase(std::unique(iterations.begin(), iterations.end()), iterations.end());
  SQLite::Statement it(db,
                       "INSERT INTO iteration(run_id, iteration, status, reason, started_at, "
                       "duration_sec) VALUES(?,?,'ok','',?,0)");
  for (int i : iterations) {
    it.bind(1, id);
    it.bind(2, i);
    it.bind(3, started);
    it.exec();
    it.reset();
  }
  SQLite::Statement s(db, "INSERT INTO sample(run_id, iteration, metric, value) VALUES(?,?,?,?)");
  for (const auto& sample : run.samples) {
    s.bind(1, id);
    s.bind(2, sample.iteration);
    s.bind(3, sample.metric);
    s.bind(4, sample.value);
    s.exec();
    s.reset();
  }
  return id;
}

std::optional<MetricDescriptor> stored_metric(const ResultsStore& store,
                                              const std::string& workload,
                                              const std::string& name) {
  SQLite::Statement q(const_cast<SQLite::Database&>(store.db()),
                      "SELECT unit, direction, mean FROM metric WHERE workload=? AND name=?");
  q.bind(1, workload);
  q.bind(2, name);
  if (!q.executeStep()) return std::nullopt;
  MetricDescriptor m;
  m.name = name;
  m.unit = q.getColumn(0).getString();
  m.direction = direction_from_string(q.getColumn(1).getString());
  m.mean = mean_kind_from_string(q.getColumn(2).getString());
  return m;
}

void add_missing_metrics(ResultsStore& store, const std::string& workload,
                         const std::vector<MetricDescriptor>& metrics) {
  write_metrics(store.db(), workload, metrics, false);
}

}  // namespace nightjar
