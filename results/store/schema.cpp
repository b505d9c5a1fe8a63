// The schema of the results database and its forward migrations
// (docs/results.md "Schema"): see results/store/detail.h migrate().
#include <cstdint>
#include <iterator>

#include "results/model/exit_codes.h"
#include "results/store/detail.h"
#include "results/store/store.h"

namespace nightjar::store_detail {
namespace {

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
    // 1 -> 2: bisect sessions (harness/bisect/bisect.h): every step of a bisection,
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
    // 2 -> 3: indexes for compare/check selectors (results/compare/selector.h): a side
    // picked by variant, build or kernel out of a large database reads only
    // its own runs.
    R"sql(
CREATE INDEX run_by_variant ON run(variant);
CREATE INDEX run_by_build ON run(build);
CREATE INDEX run_by_kernel ON run(kernel_id);
)sql",
    // 3 -> 4: valid and invalid samples (docs/results.md "Invalid samples"): an
    // iteration may be `invalid` (measured, but not what the workload is meant
    // to measure; `reason` says why), and every sample carries its own reason
    // when it is invalid (NULL: valid). SQLite cannot change a CHECK, so the
    // iteration table is rebuilt.
    R"sql(
CREATE TABLE iteration_v4(
  run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,
  iteration INTEGER NOT NULL,
  status TEXT NOT NULL CHECK(status IN ('ok', 'failed', 'invalid')),
  reason TEXT NOT NULL DEFAULT '',
  started_at TEXT NOT NULL, duration_sec REAL NOT NULL,
  PRIMARY KEY(run_id, iteration));
INSERT INTO iteration_v4(run_id, iteration, status, reason, started_at, duration_sec)
  SELECT run_id, iteration, status, reason, started_at, duration_sec FROM iteration;
DROP TABLE iteration;
ALTER TABLE iteration_v4 RENAME TO iteration;
ALTER TABLE sample ADD COLUMN invalid TEXT;
)sql",
    // 4 -> 5: imports are idempotent (docs/data.md "Importing twice"): an imported
    // run carries its origin as the facts import.identity and import.digest,
    // looked up by value before each import.
    R"sql(
CREATE INDEX run_context_by_fact ON run_context(key, value);
)sql",
    // 5 -> 6: a bisect step may be a `branch` step (docs/bisect.md "Testing the
    // branch of a merge"): a commit of a merged branch measured on top of the
    // merge's first parent. SQLite cannot change a CHECK, so bisect_step is
    // rebuilt; bisect_run, which refers to it, is set aside first and put back
    // after (dropping bisect_step under PRAGMA foreign_keys=ON would delete
    // the bisect_run rows by their ON DELETE CASCADE). Every row is copied.
    R"sql(
CREATE TABLE bisect_run_v5 AS SELECT session_id, step, run_id FROM bisect_run;
DROP TABLE bisect_run;
CREATE TABLE bisect_step_v6(
  session_id INTEGER NOT NULL REFERENCES bisect_session(id) ON DELETE CASCADE,
  step INTEGER NOT NULL,
  commit_id TEXT NOT NULL, subject TEXT NOT NULL DEFAULT '',
  role TEXT NOT NULL CHECK(role IN ('good', 'bad', 'test', 'branch')),
  build_status TEXT NOT NULL CHECK(build_status IN ('pending', 'ok', 'failed', 'none')),
  build_seconds REAL, build_output TEXT NOT NULL DEFAULT '',
  decision TEXT NOT NULL CHECK(decision IN ('pending', 'good', 'bad', 'skip')),
  verdict TEXT NOT NULL DEFAULT '', reason TEXT NOT NULL DEFAULT '',
  pct_change REAL, p REAL, q REAL, ratio_lo REAL, ratio_hi REAL,
  n_base INTEGER, n_now INTEGER,
  started_at TEXT NOT NULL, ended_at TEXT,
  PRIMARY KEY(session_id, step));
INSERT INTO bisect_step_v6(session_id, step, commit_id, subject, role, build_status,
    build_seconds, build_output, decision, verdict, reason, pct_change, p, q, ratio_lo,
    ratio_hi, n_base, n_now, started_at, ended_at)
  SELECT session_id, step, commit_id, subject, role, build_status, build_seconds,
    build_output, decision, verdict, reason, pct_change, p, q, ratio_lo, ratio_hi, n_base,
    n_now, started_at, ended_at FROM bisect_step;
DROP TABLE bisect_step;
ALTER TABLE bisect_step_v6 RENAME TO bisect_step;
CREATE TABLE bisect_run(
  session_id INTEGER NOT NULL, step INTEGER NOT NULL,
  run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,
  PRIMARY KEY(session_id, step, run_id),
  FOREIGN KEY(session_id, step) REFERENCES bisect_step(session_id, step) ON DELETE CASCADE);
INSERT INTO bisect_run(session_id, step, run_id)
  SELECT session_id, step, run_id FROM bisect_run_v5;
DROP TABLE bisect_run_v5;
)sql",
    // 6 -> 7: the invalid samples, indexed (a partial index: only they have an
    // entry), so that a side's scan of up to a million samples need not read
    // the invalid column of every row to find the few invalid ones
    // (results/store/side_queries.cpp; issue 19).
    R"sql(
CREATE INDEX sample_invalid ON sample(run_id) WHERE invalid IS NOT NULL;
)sql",
    // 7 -> 8: the kernel config of every run (docs/environment.md "Facts"),
    // stored once per distinct config hash (kernel.config_hash), for
    // `env --diff` and the kconfig lines of compare's environment section.
    // IF NOT EXISTS: a database whose user_version was set back by hand (as
    // tests of older versions do) keeps the table it already has.
    R"sql(
CREATE TABLE IF NOT EXISTS kernel_config(
  hash TEXT PRIMARY KEY,
  source TEXT NOT NULL,
  text TEXT NOT NULL) WITHOUT ROWID;
)sql",
    // 8 -> 9: the perf-profile monitor's folded call stacks (docs/monitors.md
    // "perf-profile"): per measured iteration the sampled event, its
    // frequency and the samples the kernel lost (profile), each distinct
    // folded stack once (profile_stack, shared by every run and iteration),
    // and how many samples each iteration took of each stack
    // (profile_sample). Written in the iteration's transaction. IF NOT
    // EXISTS as for kernel_config: a file whose user_version was set back by
    // hand keeps its tables.
    R"sql(
CREATE TABLE IF NOT EXISTS profile(
  run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,
  iteration INTEGER NOT NULL,
  event TEXT NOT NULL, frequency_hz REAL NOT NULL, lost INTEGER NOT NULL,
  PRIMARY KEY(run_id, iteration)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS profile_stack(
  id INTEGER PRIMARY KEY,
  folded TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS profile_sample(
  run_id INTEGER NOT NULL, iteration INTEGER NOT NULL,
  stack_id INTEGER NOT NULL REFERENCES profile_stack(id),
  count INTEGER NOT NULL CHECK(count > 0),
  PRIMARY KEY(run_id, iteration, stack_id),
  FOREIGN KEY(run_id, iteration) REFERENCES profile(run_id, iteration) ON DELETE CASCADE)
  WITHOUT ROWID;
)sql",
};
static_assert(std::size(kMigrations) == ResultsStore::kSchemaVersion);

}  // namespace

int check_schema(SQLite::Database& db, const std::string& path) {
  constexpr int kVersion = ResultsStore::kSchemaVersion;
  // user_version is a signed 32-bit integer any program may set; a negative
  // one must never index kMigrations.
  const std::int64_t v = db.execAndGet("PRAGMA user_version").getInt64();
  if (v < 0 || v > kVersion)
    throw EnvironmentError(
        path + ": database schema version " + std::to_string(v) + " is " +
        (v < 0 ? "not one nightjar ever wrote" : "newer than this nightjar understands") +
        " (it knows versions 0 to " + std::to_string(kVersion) + "); " +
        (v < 0 ? "pass --db PATH to a nightjar results database" : "upgrade nightjar"));
  const int tables = db.execAndGet("SELECT count(*) FROM sqlite_master").getInt();
  const int ours =
      db.execAndGet(
            "SELECT count(*) FROM sqlite_master WHERE type='table' AND name IN ('run', "
            "'sample')")
          .getInt();
  // A fresh file must be empty; refuse to "migrate" someone else's database.
  if ((v == 0 && tables != 0) || (v > 0 && ours != 2))
    throw EnvironmentError(
        path + ": this SQLite file is not a nightjar results database (schema version " +
        std::to_string(v) + ", " + std::to_string(tables) +
        " objects but not nightjar's tables); pass --db PATH to a new file");
  return static_cast<int>(v);
}

void migrate(SQLite::Database& db, const std::string& path) {
  constexpr int kVersion = ResultsStore::kSchemaVersion;
  if (check_schema(db, path) == kVersion) return;
  // IMMEDIATE takes the write lock first, so two processes opening a new
  // database at once cannot both run the same migration; the check is
  // repeated under the lock.
  SQLite::Transaction tx(db, SQLite::TransactionBehavior::IMMEDIATE);
  int v = check_schema(db, path);
  for (; v < kVersion; ++v) db.exec(kMigrations[v]);
  db.exec("PRAGMA user_version=" + std::to_string(kVersion));
  tx.commit();
}

}  // namespace nightjar::store_detail
