// Unit under test: how every command opens the results database
// (results/store/store.cpp ResultsStore::ResultsStore, harness/cli/cli.cpp
// open_store/open_existing_store), issue 15 "Databases":
//  - read commands never create a database: a missing one is exit 2 (a
//    usage error) naming the path and saying `nightjar run` creates it;
//  - they open read-only: the file stays byte-identical, also a WAL file;
//  - user_version outside 0..kSchemaVersion (-1, -1000, -2147483648, 99) and
//    a foreign SQLite file are exit 4 naming the value or the file, for read
//    and write commands alike, and the file stays byte-identical;
//  - `--db ''` is a usage error; a --db in a missing directory is refused
//    naming the directory; the default location's directory is created.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "test_support.h"

using namespace nightjar::test;

namespace {

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

const char* kJob = "workload: fake\nparams:\n  value: 100\niterations: 2\nwarmup: 0\n";

// A database with one run, written by `nightjar run`.
std::string stored_db(const TempDir& dir) {
  const std::string db = dir.path() + "/r.db";
  auto r = run_nightjar({"run", dir.write("f.yaml", kJob), "--db", db, "--variant", "a"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return db;
}

// The commands that only read, each with the arguments it needs.
std::vector<std::vector<std::string>> read_commands(const std::string& db) {
  return {{"show", "--db", db},
          {"compare", "a", "b", "--db", db},
          {"check", "a", "b", "--db", db},
          {"report", "a", "b", "--db", db},
          {"export", "--db", db},
          {"trend", "--job", "f", "--db", db}};
}

TEST(StoreOpenCli, ReadCommandsNeverCreateAMissingDatabase) {
  TempDir dir;
  const std::string db = dir.path() + "/none.db";
  for (const auto& args : read_commands(db)) {
    auto r = run_nightjar(args);
    EXPECT_EQ(r.exit_code, 2) << args[0] << ": " << r.err;  // the path names nothing
    EXPECT_TRUE(contains(r.err, "no results database at " + db)) << args[0] << ": " << r.err;
    EXPECT_TRUE(contains(r.err, "`nightjar run`")) << r.err;
    EXPECT_FALSE(std::filesystem::exists(db)) << args[0];
  }
}

TEST(StoreOpenCli, ReadCommandsLeaveTheFileByteIdentical) {
  TempDir dir;
  const std::string db = stored_db(dir);
  const std::string before = read_file(db);
  ASSERT_FALSE(before.empty());
  for (const auto& args : read_commands(db)) {
    auto r = run_nightjar(args);
    EXPECT_NE(r.exit_code, 4) << args[0] << ": " << r.err;
    EXPECT_EQ(read_file(db), before) << args[0];
  }
  // A file the user may only read (root ignores the mode; the open is
  // read-only regardless, which is what matters here).
  ASSERT_EQ(::chmod(db.c_str(), 0444), 0);
  auto show = run_nightjar({"show", "--db", db});
  EXPECT_EQ(show.exit_code, 0) << show.err;
  EXPECT_TRUE(contains(show.out, "complete")) << show.out;
  EXPECT_EQ(read_file(db), before);
}

TEST(StoreOpenCli, UnknownSchemaVersionsAreRefusedAndTheFileIsUntouched) {
  for (const char* version : {"-1", "-1000", "-2147483648", "99"}) {
    TempDir dir;
    const std::string db = stored_db(dir);
    auto csv = run_nightjar({"export", "--db", db});
    ASSERT_EQ(csv.exit_code, 0) << csv.err;
    exec_sql(db, std::string("PRAGMA journal_mode=DELETE; PRAGMA user_version=") + version);
    const std::string before = read_file(db);
    for (const auto& args : std::vector<std::vector<std::string>>{
             {"show", "--db", db},
             {"compare", "a", "b", "--db", db},
             {"run", dir.path() + "/f.yaml", "--db", db},
             {"import", "--db", db, dir.write("x.csv", csv.out)}}) {
      auto r = run_nightjar(args);
      EXPECT_EQ(r.exit_code, 4) << version << " " << args[0] << ": " << r.err;
      EXPECT_TRUE(contains(r.err, std::string("schema version ") + version))
          << args[0] << ": " << r.err;
      EXPECT_TRUE(contains(r.err, "knows versions 0 to ")) << r.err;
      EXPECT_EQ(read_file(db), before) << version << " " << args[0];
    }
  }
}

TEST(StoreOpenCli, AForeignSqliteFileIsRecognisedBeforeAnythingIsWritten) {
  TempDir dir;
  const std::string db = dir.path() + "/theirs.db";
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);  // creates it
  ASSERT_EQ(sqlite3_exec(h, "CREATE TABLE customer(id INTEGER PRIMARY KEY, name TEXT)", nullptr,
                         nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(h);
  const std::string before = read_file(db);
  ASSERT_FALSE(before.empty());
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"run", dir.write("f.yaml", kJob), "--db", db}, {"show", "--db", db}}) {
    auto r = run_nightjar(args);
    EXPECT_EQ(r.exit_code, 4) << args[0] << ": " << r.err;
    EXPECT_TRUE(contains(r.err, "not a nightjar results database")) << r.err;
    EXPECT_EQ(read_file(db), before) << args[0];  // not switched to WAL
    EXPECT_FALSE(std::filesystem::exists(db + "-wal")) << args[0];
  }
  // Someone else's file that happens to carry a version nightjar knows.
  exec_sql(db, "PRAGMA user_version=2");
  auto r = run_nightjar({"run", dir.path() + "/f.yaml", "--db", db});
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_TRUE(contains(r.err, "not a nightjar results database")) << r.err;
}

TEST(StoreOpenCli, AnOlderSchemaIsReadOnlyAfterAWriteUpgradesIt) {
  TempDir dir;
  const std::string db = stored_db(dir);
  exec_sql(db, "PRAGMA journal_mode=DELETE; PRAGMA user_version=3");
  const std::string before = read_file(db);
  auto show = run_nightjar({"show", "--db", db});
  EXPECT_EQ(show.exit_code, 4) << show.err;
  EXPECT_TRUE(contains(show.err, "schema version 3 is older than this nightjar reads (4 to 9)"))
      << show.err;
  EXPECT_EQ(read_file(db), before);
}

// Versions 4 to 6 (before the import index of version 5, the bisect
// `branch` steps of version 6 and the invalid samples' index of version 7)
// are read as they are by the read-only commands, and left byte-identical;
// a write migrates them.
TEST(StoreOpenCli, Versions4To6AreReadWithoutAMigration) {
  for (const char* version : {"4", "5", "6"}) {
    SCOPED_TRACE(version);
    TempDir dir;
    const std::string db = stored_db(dir);
    exec_sql(db, std::string("PRAGMA journal_mode=DELETE; DROP INDEX sample_invalid; ") +
                     (version == std::string("4") ? "DROP INDEX run_context_by_fact; " : "") +
                     "PRAGMA user_version=" + version);
    const std::string before = read_file(db);
    for (const auto& args :
         std::vector<std::vector<std::string>>{{"show", "--db", db},
                                               {"export", "--db", db},
                                               {"bisect", "log", "--db", db},
                                               {"compare", "a", "b", "--db", db}}) {
      auto r = run_nightjar(args);
      EXPECT_NE(r.exit_code, 4) << args[0] << ": " << r.err;
      EXPECT_FALSE(contains(r.err, "older")) << r.err;
      EXPECT_EQ(read_file(db), before) << args[0];
    }
    auto run = run_nightjar({"run", dir.write("f.yaml", kJob), "--db", db});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    EXPECT_EQ(query_one(db, "PRAGMA user_version"), "9");
    EXPECT_EQ(query_one(db, "SELECT count(*) FROM sqlite_master WHERE name='sample_invalid'"), "1");
  }
}

TEST(StoreOpenCli, EmptyDbFlagIsAUsageError) {
  TempDir dir;
  for (const auto& args :
       std::vector<std::vector<std::string>>{{"show", "--db", ""},
                                             {"run", dir.write("f.yaml", kJob), "--db", ""},
                                             {"bisect", "log", "--db", ""}}) {
    auto r = run_nightjar(args, {{"HOME", dir.path()}, {"XDG_DATA_HOME", dir.path() + "/xdg"}});
    EXPECT_EQ(r.exit_code, 2) << args[0] << ": " << r.err;
    EXPECT_TRUE(contains(r.err, "--db '': the path is empty")) << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/xdg"));
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/.local"));
}

TEST(StoreOpenCli, AMissingDirectoryIsRefusedExceptTheDefaultOne) {
  TempDir dir;
  const std::string job = dir.write("f.yaml", kJob);
  auto r = run_nightjar({"run", job, "--db", dir.path() + "/no/such/r.db"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(contains(r.err, "the directory " + dir.path() + "/no/such does not exist")) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/no"));
  r = run_nightjar({"run", job}, {{"NIGHTJAR_DB", dir.path() + "/env/r.db"}});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/env"));
  // The default location: its directory is created.
  r = run_nightjar({"run", job, "--variant", "a"}, {{"XDG_DATA_HOME", dir.path() + "/xdg"}});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::filesystem::exists(dir.path() + "/xdg/nightjar/results.db"));
  // A directory is not a database.
  r = run_nightjar({"show", "--db", dir.path()});
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_TRUE(contains(r.err, "not a regular file (a directory)")) << r.err;
}

}  // namespace

namespace {

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// Overwrites every page but the first (the header) with 0xff bytes: each
// table's b-tree pages are garbage, as a bad sector or a torn copy leaves them.
void damage_pages(const std::string& db) {
  std::string bytes = read_file(db);
  ASSERT_GT(bytes.size(), 8192u);
  for (std::size_t page = 4096; page < bytes.size(); page += 4096)
    for (std::size_t i = 0; i < 64 && page + i < bytes.size(); ++i) bytes[page + i] = '\xff';
  write_file(db, bytes);
}

}  // namespace

TEST(StoreOpenCli, ADamagedDatabaseIsNeverWrittenToAndEveryErrorNamesItsPath) {
  TempDir dir;
  const std::string db = stored_db(dir);
  damage_pages(db);
  const std::string before = read_file(db);
  auto r = run_nightjar({"run", dir.path() + "/f.yaml", "--db", db, "--variant", "b"});
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_TRUE(contains(r.err, db + ": the results database is damaged")) << r.err;
  EXPECT_TRUE(contains(r.err, "nothing was written")) << r.err;
  EXPECT_TRUE(contains(r.err, ".recover")) << r.err;
  EXPECT_EQ(read_file(db), before);
  EXPECT_FALSE(std::filesystem::exists(db + "-wal"));
  // A read command meets the damage later, inside a query: the message names
  // the file and says what to do, not only SQLite's words.
  auto show = run_nightjar({"show", "--db", db});
  EXPECT_EQ(show.exit_code, 4) << show.err;
  EXPECT_TRUE(contains(show.err, db + ": ")) << show.err;
  EXPECT_TRUE(contains(show.err, ".recover")) << show.err;
  EXPECT_EQ(read_file(db), before);
}

TEST(StoreOpenCli, ADatabaseCutShortIsRefusedBeforeAWrite) {
  TempDir dir;
  const std::string db = stored_db(dir);
  std::string bytes = read_file(db);
  bytes.pop_back();  // one byte short, as an interrupted copy leaves it
  write_file(db, bytes);
  auto r = run_nightjar({"run", dir.path() + "/f.yaml", "--db", db, "--variant", "b"});
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_TRUE(contains(r.err, db + ":")) << r.err;
  EXPECT_EQ(read_file(db), bytes);
}

TEST(StoreOpenCli, AnInMemoryDatabaseIsAUsageError) {
  TempDir dir;
  for (const std::string& db : {std::string(":memory:"), std::string("file::memory:")}) {
    auto r = run_nightjar({"run", dir.write("f.yaml", kJob), "--db", db});
    EXPECT_EQ(r.exit_code, 2) << db << ": " << r.err;
    EXPECT_TRUE(contains(r.err, "pass --db PATH to a file")) << r.err;
    auto i = run_nightjar({"import", "--db", db, dir.write("x.csv", "a\n")});
    EXPECT_EQ(i.exit_code, 2) << db << ": " << i.err;
  }
}
