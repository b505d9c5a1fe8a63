// Unit under test: the read commands on a database the user may only read
// (results/store/store.cpp ResultsStore read-only open and its "immutable=1"
// fallback, results/store/side_queries.cpp open_reader), issue 15 check 5:
//  - a root-owned 0644 database in a root-owned 0755 directory, read by an
//    unprivileged user (nobody: the test's child drops its IDs itself, so it
//    runs in the busybox qemu guest too): show, compare and export work, and
//    the file stays byte-identical;
//  - the same directory bind-mounted read-only, read by root: likewise.
// SQLite cannot open a WAL database read-only the normal way there (no -shm
// and no right to create one), so both cases go through the fallback, and
// compare's per-side connections must follow it.
// Skips (77) without root, mount permission, or when nobody may not execute
// the binary under test (a parent directory that is not searchable).
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "test_support.h"

using namespace nightjar::test;
namespace fs = std::filesystem;

namespace {

const char* kJob = "workload: fake\nparams:\n  value: 100\niterations: 3\nwarmup: 0\n";
const Credentials kNobody;  // uid 65534, gid 65534, no supplementary groups

// A database with runs of variants a and b, written by root, closed (so no
// -wal or -shm file is left), in a directory only root may write.
std::string stored_db(const TempDir& dir) {
  const std::string data = dir.path() + "/data";
  fs::create_directory(data);
  const std::string db = data + "/r.db";
  const std::string job = dir.write("f.yaml", kJob);
  for (const char* v : {"a", "b"}) {
    auto r = run_nightjar({"run", job, "--db", db, "--variant", v});
    EXPECT_EQ(r.exit_code, 0) << r.err;
  }
  EXPECT_FALSE(fs::exists(db + "-shm"));
  chmod(dir.path().c_str(), 0755);
  chmod(data.c_str(), 0755);
  chmod(db.c_str(), 0644);
  return db;
}

std::vector<std::vector<std::string>> read_commands(const std::string& db) {
  return {{"show", "--db", db}, {"compare", "a", "b", "--db", db}, {"export", "--db", db}};
}

// Each read command works (exit 0, the runs in its output) and the file
// stays byte-identical; run as nobody when `as_nobody`, else as root.
void expect_reads_work(const std::string& db, bool as_nobody) {
  const std::string before = read_file(db);
  for (const auto& args : read_commands(db)) {
    CommandResult r = as_nobody ? run_nightjar_as(kNobody, args) : run_nightjar(args);
    EXPECT_EQ(r.exit_code, 0) << args[0] << ": " << r.err;
    EXPECT_NE(r.out.find(args[0] == "show" ? "complete" : "throughput"), std::string::npos)
        << args[0] << ": " << r.out;
  }
  EXPECT_EQ(read_file(db), before) << "a read command changed " << db;
  EXPECT_FALSE(fs::exists(db + "-shm"));
  EXPECT_FALSE(fs::exists(db + "-wal"));
}

}  // namespace

TEST(StoreReadOnlyRoot, AnUnprivilegedUserReadsARootOwnedDatabase) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (files owned by root, a child run as nobody)";
  CommandResult probe = run_nightjar_as(kNobody, {"--version"});
  ASSERT_NE(probe.exit_code, 126) << "root could not drop to nobody: " << probe.err;
  if (probe.exit_code != 0)
    GTEST_SKIP() << "user nobody cannot execute the nightjar under test (" << NIGHTJAR_BINARY
                 << "): " << probe.err;
  TempDir dir;
  const std::string db = stored_db(dir);
  // nobody may not write the directory: the sanity check of the setup.
  CommandResult w = run_nightjar_as(kNobody, {"run", dir.path() + "/f.yaml", "--db", db});
  EXPECT_NE(w.exit_code, 0) << "nobody could write " << db;
  expect_reads_work(db, true);
}

TEST(StoreReadOnlyRoot, ARootReaderOnAReadOnlyBindMount) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (mount --bind, remount read-only)";
  TempDir dir;
  const std::string db = stored_db(dir);
  const std::string data = dir.path() + "/data", ro = dir.path() + "/ro";
  fs::create_directory(ro);
  if (mount(data.c_str(), ro.c_str(), nullptr, MS_BIND, nullptr) != 0)
    GTEST_SKIP() << "cannot bind-mount here: " << std::strerror(errno);
  struct Unmount {
    std::string path;
    ~Unmount() { umount2(path.c_str(), MNT_DETACH); }
  } unmount{ro};
  ASSERT_EQ(mount(nullptr, ro.c_str(), nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY, nullptr), 0)
      << std::strerror(errno);
  const std::string ro_db = ro + "/r.db";
  CommandResult w = run_nightjar({"run", dir.path() + "/f.yaml", "--db", ro_db});
  EXPECT_NE(w.exit_code, 0) << "a write to the read-only mount succeeded";
  expect_reads_work(ro_db, false);
}
