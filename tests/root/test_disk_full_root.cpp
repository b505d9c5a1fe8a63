// Unit under test: a full disk under the results database (results/store
// store.cpp ResultsStore, disk_full_message; harness/cli/cli.cpp), issue 15
// "Databases": "a full disk gives 'disk full' naming the path and leaves no
// stub".
//  - a new database on a filesystem too small for its schema: exit 4,
//    "disk full" naming the path, and no file left behind;
//  - a database that fills the filesystem during a run: exit 4, "disk full"
//    naming the path; the runs and iterations committed before stay and the
//    file passes PRAGMA integrity_check.
// Each case mounts its own small tmpfs (unmounted on every path). Skips (77)
// without root or when tmpfs cannot be mounted here.
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>

#include "test_support.h"

using namespace nightjar::test;
namespace fs = std::filesystem;

namespace {

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// A tmpfs of `bytes` at `dir`, unmounted when it goes out of scope.
struct SmallFs {
  std::string dir;
  bool mounted = false;
  SmallFs(const std::string& d, std::size_t bytes) : dir(d) {
    fs::create_directories(dir);
    const std::string options = "size=" + std::to_string(bytes);
    mounted = mount("nightjar-test", dir.c_str(), "tmpfs", 0, options.c_str()) == 0;
  }
  ~SmallFs() {
    if (mounted) umount2(dir.c_str(), MNT_DETACH);
  }
};

std::string skip_reason() {
  if (geteuid() != 0) return "needs root (mounts a small tmpfs)";
  return "";
}

}  // namespace

TEST(DiskFullRoot, ANewDatabaseThatDoesNotFitLeavesNoStub) {
  if (auto why = skip_reason(); !why.empty()) GTEST_SKIP() << why;
  TempDir dir;
  SmallFs small(dir.path() + "/small", 32 * 1024);  // the schema alone needs ~120 KiB
  if (!small.mounted) GTEST_SKIP() << "cannot mount tmpfs: " << std::strerror(errno);
  const std::string job =
      dir.write("f.yaml", "workload: fake\nparams:\n  value: 100\niterations: 2\nwarmup: 0\n");
  const std::string db = small.dir + "/r.db";
  CommandResult r = run_nightjar({"run", job, "--db", db});
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_TRUE(contains(r.err, db + ": disk full")) << r.err;
  EXPECT_TRUE(contains(r.err, "the new file was removed")) << r.err;
  for (const char* suffix : {"", "-wal", "-shm", "-journal"})
    EXPECT_FALSE(fs::exists(db + suffix)) << db << suffix << " was left behind";
}

TEST(DiskFullRoot, ADatabaseThatFillsTheDiskKeepsWhatWasCommitted) {
  if (auto why = skip_reason(); !why.empty()) GTEST_SKIP() << why;
  TempDir dir;
  const std::string job =
      dir.write("f.yaml", "workload: fake\nparams:\n  value: 100\niterations: 2\nwarmup: 0\n");
  const std::string seed = dir.path() + "/seed.db";
  ASSERT_EQ(run_nightjar({"run", job, "--db", seed, "--variant", "before"}).exit_code, 0);
  const auto size = fs::file_size(seed);
  SmallFs small(dir.path() + "/small", size + 256 * 1024);
  if (!small.mounted) GTEST_SKIP() << "cannot mount tmpfs: " << std::strerror(errno);
  const std::string db = small.dir + "/r.db";
  fs::copy_file(seed, db);
  const std::string many = dir.write(
      "many.yaml", "workload: fake\nparams:\n  value: 100\niterations: 100000\nwarmup: 0\n");
  CommandResult r = run_nightjar({"run", many, "--db", db, "--variant", "filling", "--yes"});
  EXPECT_EQ(r.exit_code, 4) << r.err.substr(r.err.size() > 2000 ? r.err.size() - 2000 : 0);
  EXPECT_TRUE(contains(r.err, db + ": disk full")) << r.err.substr(r.err.size() - 1000);
  // What was committed before stays and the file is sound.
  EXPECT_EQ(query_one(db, "PRAGMA integrity_check"), "ok");
  EXPECT_EQ(query_one(db, "SELECT count(*) FROM run WHERE variant='before'"), "1");
  EXPECT_GT(std::stoi(query_one(db, "SELECT count(*) FROM sample")), 2);
}
