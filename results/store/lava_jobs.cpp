// LAVA jobs submitted to a server (`nightjar lava submit` / `collect`,
// docs/lava.md "With a server"): table lava_job, created when first written
// (CREATE TABLE IF NOT EXISTS, as calibration: a database without it simply
// has no submissions). See results/store/store.h "LAVA submissions".
#include "results/store/detail.h"
#include "results/store/store.h"

namespace nightjar {

using namespace store_detail;

namespace {

constexpr const char* kCreate =
    "CREATE TABLE IF NOT EXISTS lava_job("
    "id INTEGER PRIMARY KEY, server TEXT NOT NULL, lava_id TEXT NOT NULL, url TEXT NOT NULL, "
    "dir TEXT NOT NULL, file TEXT NOT NULL, "
    "submitted_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')), "
    "outcome TEXT NOT NULL DEFAULT '', collected_at TEXT NOT NULL DEFAULT '', "
    "UNIQUE (server, lava_id))";

bool has_table(const SQLite::Database& db) {
  return db.tableExists("lava_job");
}

}  // namespace

std::int64_t ResultsStore::add_lava_submission(const LavaSubmission& s) {
  SQLite::Database& db = database();
  db.exec(kCreate);
  SQLite::Statement q(
      db, "INSERT INTO lava_job(server, lava_id, url, dir, file) VALUES (?, ?, ?, ?, ?)");
  SQLite::bind(q, s.server, s.lava_id, s.url, s.dir, s.file);
  q.exec();
  return db.getLastInsertRowid();
}

std::vector<LavaSubmission> ResultsStore::lava_submissions(bool uncollected_only) const {
  const SQLite::Database& db = database();
  std::vector<LavaSubmission> out;
  if (!has_table(db)) return out;
  SQLite::Statement q(db, std::string("SELECT id, server, lava_id, url, dir, file, submitted_at, "
                                      "outcome, collected_at FROM lava_job") +
                              (uncollected_only ? " WHERE collected_at = ''" : "") +
                              " ORDER BY id");
  while (q.executeStep()) {
    LavaSubmission s;
    s.id = q.getColumn(0).getInt64();
    s.server = q.getColumn(1).getString();
    s.lava_id = q.getColumn(2).getString();
    s.url = q.getColumn(3).getString();
    s.dir = q.getColumn(4).getString();
    s.file = q.getColumn(5).getString();
    s.submitted_at = q.getColumn(6).getString();
    s.outcome = q.getColumn(7).getString();
    s.collected_at = q.getColumn(8).getString();
    out.push_back(std::move(s));
  }
  return out;
}

void ResultsStore::mark_lava_collected(std::int64_t id, const std::string& outcome) {
  SQLite::Statement q(database(),
                      "UPDATE lava_job SET outcome = ?, collected_at = "
                      "strftime('%Y-%m-%dT%H:%M:%SZ','now') WHERE id = ?");
  SQLite::bind(q, outcome, id);
  q.exec();
}

}  // namespace nightjar
