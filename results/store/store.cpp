// Opening the results store (WAL, busy timeout, migrations, stale runs) and
// its transactions: see results/store/store.h.
#include "results/store/store.h"

#include <sqlite3.h>

#include <fmt/format.h>
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>

#include <filesystem>
#include <fstream>
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

const char* to_string(IterationStatus s) {
  switch (s) {
    case IterationStatus::ok:
      return "ok";
    case IterationStatus::failed:
      return "failed";
    case IterationStatus::invalid:
      return "invalid";
  }
  return "failed";
}

std::optional<IterationStatus> parse_iteration_status(std::string_view text) {
  for (IterationStatus s : {IterationStatus::ok, IterationStatus::failed, IterationStatus::invalid})
    if (text == to_string(s)) return s;
  return std::nullopt;
}

std::optional<RunStatus> parse_run_status(std::string_view text) {
  for (RunStatus s : kRunStatuses)
    if (text == to_string(s)) return s;
  return std::nullopt;
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

std::string ResultsStore::default_path() {
  if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg && *xdg)
    return std::string(xdg) + "/nightjar/results.db";
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : ".") + "/.local/share/nightjar/results.db";
}

std::string ResultsStore::resolve_path(const std::string& explicit_path) {
  if (!explicit_path.empty()) return explicit_path;
  if (const char* env = std::getenv("NIGHTJAR_DB"); env && *env) return env;
  return default_path();
}

namespace {

namespace fs = std::filesystem;

// What to do about a damaged database file (docs/results.md "A damaged
// database"): nightjar never repairs in place.
constexpr const char* kDamagedAdvice =
    "Restore it from a copy, or keep what SQLite can still read: sqlite3 FILE .recover | sqlite3 "
    "NEW.db, then pass --db NEW.db (docs/results.md \"A damaged database\")";

bool is_default_location(const std::string& path) {
  std::error_code ec;
  auto norm = [&](const std::string& p) { return fs::absolute(p, ec).lexically_normal(); };
  return norm(path) == norm(ResultsStore::default_path());
}

// Checks the file, or the directory it would be created in, before SQLite
// opens it; returns whether it exists. Only the default location's
// directory is created: a --db or $NIGHTJAR_DB naming a missing directory is
// a typo, and creating it would hide the results there.
bool check_location(const std::string& path, ResultsStore::Access access) {
  if (path == ":memory:" || path.rfind("file:", 0) == 0)
    throw UsageError(path +
                     ": SQLite's in-memory database or URI, not a file; nightjar would store "
                     "the runs and drop them when it exits; pass --db PATH to a file");
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec && ec != std::errc::no_such_file_or_directory)
    throw EnvironmentError(path + ": cannot inspect the results database: " + ec.message() +
                           "; pass --db PATH to a readable file");
  if (fs::exists(st)) {
    if (!fs::is_regular_file(st))
      throw EnvironmentError(path + ": not a regular file (" +
                             (fs::is_directory(st) ? "a directory" : "a device, FIFO or socket") +
                             "); pass --db PATH to a results database file");
    return true;
  }
  if (access == ResultsStore::Access::read_only)
    throw UsageError("no results database at " + path +
                     "; `nightjar run` (or `nightjar import`) creates it; to read another "
                     "file pass --db PATH or set NIGHTJAR_DB");
  const fs::path parent = fs::path(path).parent_path();
  if (parent.empty() || fs::is_directory(parent, ec)) return false;
  if (!is_default_location(path))
    throw UsageError(path + ": the directory " + parent.string() +
                     " does not exist; create it first, or pass --db PATH in an existing "
                     "directory");
  fs::create_directories(parent, ec);
  if (ec)
    throw EnvironmentError(path + ": cannot create the database directory " + parent.string() +
                           ": " + ec.message() + "; pass --db PATH to a writable place");
  return false;
}

std::unique_ptr<SQLite::Database> open_database(const std::string& path,
                                                ResultsStore::Access access) {
  const bool read_only = access == ResultsStore::Access::read_only;
  try {
    return std::make_unique<SQLite::Database>(
        path, read_only ? SQLite::OPEN_READONLY : SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE,
        kBusyTimeoutMs);
  } catch (const SQLite::Exception& e) {
    throw EnvironmentError(
        path + ": cannot open the results database: " + e.what() +
        (read_only ? "; check that you may read it" : "; pass --db PATH to a writable place"));
  }
}

// Read-only: nothing may be migrated, so the schema must be one this binary
// reads as it is (kOldestReadableVersion..kSchemaVersion).
void check_readable_schema(SQLite::Database& db, const std::string& path) {
  const int v = check_schema(db, path);
  if (v >= ResultsStore::kOldestReadableVersion && v <= ResultsStore::kSchemaVersion) return;
  if (v == 0)
    throw EnvironmentError(path +
                           ": an empty SQLite file, not a results database yet; `nightjar run` "
                           "(or `nightjar import`) stores runs in it");
  throw EnvironmentError(path + ": database schema version " + std::to_string(v) +
                         " is older than this nightjar reads (" +
                         std::to_string(ResultsStore::kOldestReadableVersion) + " to " +
                         std::to_string(ResultsStore::kSchemaVersion) +
                         "); a command that writes (`nightjar run`, `nightjar import`) upgrades it "
                         "in place");
}

// A file shorter than its header says (an interrupted copy): SQLite reads
// the missing bytes as zeros, which quick_check notices only when they
// mattered. The header's page size (offset 16, 2 bytes, 1 meaning 65536) and
// database size in pages (offset 28, 4 bytes, big-endian) are trusted only
// when its version-valid-for number (offset 92) equals its change counter
// (offset 24), as SQLite itself does (sqlite.org/fileformat.html, "The
// Database Header"). Returns "" when the size agrees or cannot be judged.
std::string short_file_problem(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  unsigned char h[100] = {};
  if (!in.read(reinterpret_cast<char*>(h), sizeof h)) return "";
  auto be32 = [&](int o) {
    return (std::uint32_t{h[o]} << 24) | (std::uint32_t{h[o + 1]} << 16) |
           (std::uint32_t{h[o + 2]} << 8) | std::uint32_t{h[o + 3]};
  };
  if (be32(92) != be32(24)) return "";
  const std::uint64_t page =
      h[16] == 0 && h[17] == 1 ? 65536u : (std::uint32_t{h[16]} << 8) | h[17];
  const std::uint64_t want = page * be32(28);
  std::error_code ec;
  const std::uint64_t have = std::filesystem::file_size(path, ec);
  if (ec || want == 0 || have >= want) return "";
  return fmt::format(
      "the file is {} bytes, its header says {} pages of {} bytes = {}: it was cut "
      "short",
      have, be32(28), page, want);
}

// Before a writing command adds to an existing file: a damaged one
// (SQLite's quick_check finds a bad page, a short file, a broken index) is
// refused untouched, so that runs are never appended to a file that already
// lost data. quick_check reads every page once (O(size), no index
// cross-check: sqlite.org/pragma.html#pragma_quick_check).
void check_intact(SQLite::Database& db, const std::string& path) {
  // Another writer's checkpoint writes page 1 (the new page count) before the
  // pages that extend the file, so a file can look short for a moment: only a
  // shortness that lasts a second is damage.
  std::string problem = short_file_problem(path);
  for (int i = 0; i < 20 && !problem.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    problem = short_file_problem(path);
  }
  if (problem.empty()) {
    try {
      SQLite::Statement q(db, "PRAGMA quick_check(5)");
      while (q.executeStep()) {
        const std::string line = q.getColumn(0).getString();
        if (line != "ok") problem += (problem.empty() ? "" : "; ") + line;
      }
    } catch (const SQLite::Exception& e) {
      problem = e.what();
    }
    if (!problem.empty()) problem = "SQLite quick_check: " + problem;
  }
  if (problem.empty()) return;
  throw EnvironmentError(path + ": the results database is damaged (" + problem +
                         "); nothing was written to it. " + kDamagedAdvice);
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

// A WAL database in a directory the reader may not write, without its -shm
// file (the last writer removed it), cannot be opened read-only the normal
// way (SQLite's wal.html "Read-Only Databases"); "immutable=1" reads it
// without the shared memory and without locks, which is right for an
// archived copy and is tried only then.
SQLite::Database store_detail::open_immutable(const std::string& path) {
  std::error_code ec;
  std::string uri = "file:";
  for (char c : fs::absolute(path, ec).string()) {
    if (c == '%' || c == '?' || c == '#') {
      static constexpr char kHex[] = "0123456789ABCDEF";
      uri += '%';
      uri += kHex[(static_cast<unsigned char>(c) >> 4) & 0xF];
      uri += kHex[static_cast<unsigned char>(c) & 0xF];
    } else {
      uri += c;
    }
  }
  uri += "?immutable=1";
  return SQLite::Database(uri, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, kBusyTimeoutMs);
}

namespace {

// The database the process opened last, for the messages of errors SQLite
// raises later (disk_full_message, database_error_message): every command
// opens one database.
std::string& written_path() {
  static std::string path;
  return path;
}

// SQLITE_FULL, or an I/O error on a filesystem with no space left: SQLite
// reports a -shm or -wal file that cannot grow on tmpfs as SQLITE_IOERR
// (the mmap or write fails with ENOSPC), not as SQLITE_FULL.
bool is_full(const SQLite::Exception& e, const std::string& path) {
  const int code = e.getErrorCode() & 0xff;
  if (code == SQLITE_FULL) return true;
  if (code != SQLITE_IOERR || path.empty()) return false;
  std::error_code ec;
  const fs::space_info space = fs::space(fs::absolute(path, ec).parent_path(), ec);
  return !ec && space.available < 64 * 1024;
}

}  // namespace

std::optional<std::string> disk_full_message(const std::exception& e) {
  const auto* s = dynamic_cast<const SQLite::Exception*>(&e);
  const std::string& path = written_path();
  if (!s || !is_full(*s, path)) return std::nullopt;
  return fmt::format(
      "{}: disk full: SQLite could not write ({}); the rows stored before stay (each iteration is "
      "committed on its own), the one being written was rolled back; free space on that "
      "filesystem or pass --db PATH elsewhere",
      path.empty() ? std::string("the results database") : path, s->what());
}

std::string database_error_message(const std::exception& e) {
  const auto* s = dynamic_cast<const SQLite::Exception*>(&e);
  const std::string& opened = written_path();
  const std::string path = opened.empty() ? std::string("the results database") : opened;
  if (!s) return path + ": " + e.what();
  switch (s->getErrorCode() & 0xff) {
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return fmt::format("{}: {}: the file is damaged. {}", path, s->what(), kDamagedAdvice);
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return fmt::format(
          "{}: {}: another process held the database locked for longer than {} s; let it "
          "finish (a long import or run), or pass --db PATH to another file",
          path, s->what(), kBusyTimeoutMs / 1000);
    case SQLITE_IOERR:
      return fmt::format(
          "{}: {}: the operating system failed a read or write; check the disk and the "
          "filesystem (dmesg), then run the command again; committed iterations stay",
          path, s->what());
    case SQLITE_READONLY:
      return fmt::format(
          "{}: {}: the file or its directory is read-only; pass --db PATH to a "
          "writable file",
          path, s->what());
    default:
      return fmt::format("{}: {}", path, s->what());
  }
}

ResultsStore::ResultsStore(const std::string& path, Access access) : path_(path) {
  check_location(path, access);
  // A file this open creates is removed again when setting it up fails (a
  // full disk): no stub is left behind.
  std::error_code ec;
  const bool existed = access == Access::read_only || fs::exists(path, ec);
  db_ = open_database(path, access);
  written_path() = path;
  auto remove_stub = [&] {
    if (existed) return;
    db_.reset();
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) fs::remove(path + suffix, ec);
  };
  try {
    if (access == Access::read_only) {
      try {
        check_readable_schema(*db_, path);
      } catch (const SQLite::Exception& e) {
        // CANTOPEN: no -shm and no right to create it; READONLY_CANTINIT
        // (primary code READONLY): a -shm this connection may not set up.
        const int code = e.getErrorCode() & 0xff;
        if (code != SQLITE_CANTOPEN && code != SQLITE_READONLY) throw;
        db_ = std::make_unique<SQLite::Database>(open_immutable(path));
        immutable_ = true;
        check_readable_schema(*db_, path);
      }
      return;
    }
    // Before the first write (the WAL switch changes the file header): a
    // foreign or unknown-version file stays byte-identical.
    check_schema(*db_, path);
    if (existed) check_intact(*db_, path);
    enter_wal_mode(*db_);
    db_->exec("PRAGMA synchronous=NORMAL");
    db_->exec("PRAGMA foreign_keys=ON");
    migrate(*db_, path_);
    stale_aborted_ = abort_stale_runs(*db_);
  } catch (const SQLite::Exception& e) {
    remove_stub();
    if (is_full(e, path))
      throw EnvironmentError(fmt::format(
          "{}: disk full: SQLite could not set up the results database ({}){}; free space on "
          "that filesystem or pass --db PATH elsewhere",
          path, e.what(), existed ? "" : "; the new file was removed"));
    const int code = e.getErrorCode() & 0xff;
    if (code == SQLITE_CORRUPT)
      throw EnvironmentError(path + ": the results database is damaged (" + e.what() +
                             "); nothing was written to it. " + kDamagedAdvice);
    throw EnvironmentError(path + ": not a usable nightjar results database (" + e.what() +
                           "); pass --db PATH to use another file");
  } catch (...) {
    remove_stub();
    throw;
  }
}

ResultsStore::~ResultsStore() = default;

SQLite::Statement& ResultsStore::statement(const std::string& sql) const {
  auto it = statements_.find(sql);
  if (it == statements_.end())
    it = statements_.emplace(sql, std::make_unique<SQLite::Statement>(database(), sql)).first;
  it->second->reset();
  it->second->clearBindings();
  return *it->second;
}
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
