// Opening the results store (WAL, busy timeout, migrations, stale runs) and
// its transactions: see results/store/store.h.
#include "results/store/store.h"

#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <thread>

#include "results/model/exit_codes.h"
#include "results/store/detail.h"

namespace nightjar {

using namespace store_detail;

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

bool is_database_error(const std::exception& e) noexcept {
  return dynamic_cast<const SQLite::Exception*>(&e) != nullptr;
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

std::unique_ptr<SQLite::Database> open_database(const std::string& path) {
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
    return std::make_unique<SQLite::Database>(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE,
                                              kBusyTimeoutMs);
  } catch (const SQLite::Exception& e) {
    throw EnvironmentError(path + ": cannot open the results database: " + e.what() +
                           "; pass --db PATH to a writable place");
  }
}

// WAL lets readers and one writer work at once; the busy timeout (30 s, set
// when opening) makes concurrent writers wait instead of failing. Switching a
// new file to WAL while another process does the same can report SQLITE_BUSY
// without consulting the busy handler (SQLite's "journal_mode" docs: the
// change needs an exclusive lock), so the set-up is retried on BUSY for as
// long as the busy timeout.
void enter_wal_mode(SQLite::Database& db) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(kBusyTimeoutMs);
  for (int attempt = 0;; ++attempt) {
    try {
      db.exec("PRAGMA journal_mode=WAL");
      return;
    } catch (const SQLite::Exception& e) {
      if ((e.getErrorCode() & 0xff) != SQLITE_BUSY || std::chrono::steady_clock::now() > deadline)
        throw;
      std::this_thread::sleep_for(std::chrono::milliseconds(5 + 5 * std::min(attempt, 20)));
    }
  }
}

// Marks as aborted the runs of this host left "running" by a process that no
// longer exists; returns how many.
int abort_stale_runs(SQLite::Database& db) {
  const std::string host = hostname();
  const std::string boot = boot_id();
  std::vector<std::int64_t> stale;
  {
    SQLite::Statement q(
        db, "SELECT id, boot_id, pid, pid_start FROM run WHERE status='running' AND host=?");
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
  SQLite::Transaction tx(db, SQLite::TransactionBehavior::IMMEDIATE);
  SQLite::Statement u(db,
                      "UPDATE run SET status='aborted', ended_at=?, reason='the nightjar process "
                      "running it ended without finishing (killed?); samples measured before are "
                      "kept' WHERE id=? AND status='running'");
  for (auto id : stale) {
    SQLite::bind(u, utc_now_iso8601(), id);
    u.exec();
    u.reset();
  }
  tx.commit();
  return static_cast<int>(stale.size());
}

}  // namespace

ResultsStore::ResultsStore(const std::string& path) : path_(path), db_(open_database(path)) {
  try {
    enter_wal_mode(*db_);
    db_->exec("PRAGMA synchronous=NORMAL");
    db_->exec("PRAGMA foreign_keys=ON");
    migrate(*db_, path_);
    stale_aborted_ = abort_stale_runs(*db_);
  } catch (const SQLite::Exception& e) {
    throw EnvironmentError(path + ": not a usable nightjar results database (" + e.what() +
                           "); pass --db PATH to use another file");
  }
}

ResultsStore::~ResultsStore() = default;
ResultsStore::ResultsStore(ResultsStore&&) noexcept = default;
ResultsStore& ResultsStore::operator=(ResultsStore&&) noexcept = default;

ResultsStore::Transaction::Transaction(ResultsStore& store)
    : tx_(std::make_unique<SQLite::Transaction>(store.database(),
                                                SQLite::TransactionBehavior::IMMEDIATE)) {}

// SQLite::Transaction's destructor rolls back when commit() was not called.
ResultsStore::Transaction::~Transaction() = default;

void ResultsStore::Transaction::commit() {
  tx_->commit();
}

// A Statement of a const Database may run any SQL (SQLiteCpp's design);
// BEGIN DEFERRED takes no lock until the first read, which then pins the
// snapshot for every later read of this connection until ROLLBACK.
ResultsStore::ReadSnapshot::ReadSnapshot(const ResultsStore& store) : store_(store) {
  SQLite::Statement(store_.database(), "BEGIN DEFERRED").exec();
}

ResultsStore::ReadSnapshot::~ReadSnapshot() {
  try {
    SQLite::Statement(store_.database(), "ROLLBACK").exec();
  } catch (const SQLite::Exception&) {
    // Nothing was written; the connection ends the read transaction itself
    // when it is closed.
  }
}

}  // namespace nightjar
