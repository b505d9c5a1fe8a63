// Unit under test: `nightjar lava jobs` and `nightjar lava run` as a user
// runs them, with a stand-in for lava-run (the hidden --lava-run hook: a
// script printing a LAVA log) so that no LAVA, qemu or root is needed: bad
// input (an unknown device type, a missing kernel file, no manifest, a
// missing device file) exits 2 and writes nothing; a lava-run log without
// nightjar's markers and a failed LAVA job store every planned run as failed
// with the reason and exit 4; a log with the guest's report imports its runs
// with the LAVA job id, which `show` lists. Real lava-run jobs: tests/lava.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "harness/vm/initramfs.h"
#include "lava_support.h"
#include "results/model/exit_codes.h"
#include "results/model/text.h"
#include "test_support.h"
#include "workloads/sys/process.h"

namespace nightjar {
namespace {

namespace fs = std::filesystem;
using test::query_one;
using test::run_nightjar;
using test::TempDir;

using test::ramdisk_skip_reason;

// `nightjar lava jobs` of a fake job on a fake kernel into DIR/jobs.
std::string write_jobs(const TempDir& dir) {
  const std::string job = dir.write(
      "fx.yaml", "workload: fake\nparams: {value: [100, 200]}\niterations: 2\nwarmup: 0\n");
  const std::string kernel =
      dir.write("boot/vmlinuz-6.1.0-57-amd64", test::fake_bzimage("6.1.0-57-amd64 (x) #1 SMP"));
  const std::string out = dir.path() + "/jobs";
  auto r = run_nightjar({"lava", "jobs", job, "--kernel", kernel, "--device-type", "qemu",
                         "--guest-binary", "/bin/true", "-o", out});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return out;
}

// A stand-in for lava-run that prints `log` (the --lava-run hook).
std::string fake_lava_run(const TempDir& dir, const std::string& log) {
  const std::string log_file = dir.write("canned.log", log);
  const std::string script = dir.write("lava-run", "#!/bin/sh\ncat '" + log_file + "'\n");
  fs::permissions(script, fs::perms(0755));
  return script;
}

TEST(LavaCli, BadInputExitsTwoAndWritesNothing) {
  TempDir dir;
  const std::string kernel = dir.write("vmlinuz", test::fake_bzimage("6.1.0-57-amd64 (x) #1"));
  const std::string job = test::source_path("jobs/pft-quick.yaml");
  const std::string out = dir.path() + "/out";
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"lava", "jobs", job, "--kernel", kernel, "--device-type", "rpi4", "-o", out},
       "--device-type rpi4: no deploy and boot for it; nightjar knows device type qemu"},
      {{"lava", "jobs", job, "--kernel", dir.path() + "/missing", "--device-type", "qemu", "-o",
        out},
       "cannot read the kernel image"},
      {{"lava", "jobs", job, "--device-type", "qemu", "-o", out}, "no --kernel given"},
      {{"lava", "jobs", job, "--kernel", kernel, "--device-type", "qemu", "--priority", "9000",
        "-o", out},
       "--priority 9000"},
      {{"lava", "run", dir.path(), "--device", dir.path() + "/dev.yaml"},
       "no nightjar-lava.json in it"},
  };
  for (const auto& c : cases) {
    auto r = run_nightjar(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.message << "\n" << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(out)) << c.message;
  }
}

TEST(LavaCli, ALogWithoutMarkersAndAFailedJobStoreThePlannedRunsAsFailed) {
  if (auto why = ramdisk_skip_reason(); !why.empty()) GTEST_SKIP() << why;
  TempDir dir;
  const std::string out = write_jobs(dir);
  const std::string device = dir.write("qemu01.yaml", "# a device\n");
  const std::string db = dir.path() + "/r.db";
  // The job passed, but the guest printed nothing of nightjar's.
  const std::string quiet_guest =
      fake_lava_run(dir, R"({"dt": "1", "lvl": "target", "msg": "Linux version 6.1.0-57-amd64"}
{"dt": "2", "lvl": "results", "msg": {"definition": "lava", "case": "job", "result": "pass"}}
)");
  auto r =
      run_nightjar({"lava", "run", out, "--device", device, "--db", db, "--lava-run", quiet_guest});
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_EQ(query_one(db,
                      "SELECT count(*) FROM run WHERE status='failed' AND reason = 'the "
                      "guest printed no samples (no nightjar-lava blocks on the console)'"),
            "2")
      << r.err;
  EXPECT_EQ(query_one(db,
                      "SELECT DISTINCT t.hostname FROM run r JOIN testbox t ON "
                      "t.id = r.testbox_id"),
            "qemu01");
  // LAVA failed the job: its error text is the reason.
  const std::string failed =
      fake_lava_run(dir, R"({"dt": "1", "lvl": "error", "msg": "Unable to fetch file:///k/bzImage"}
{"dt": "2", "lvl": "results", "msg": {"definition": "lava", "case": "job", "result": "fail", "error_type": "Infrastructure", "error_msg": "Unable to fetch file:///k/bzImage"}}
)");
  r = run_nightjar({"lava", "run", out, "--device", device, "--db", db, "--lava-run", failed});
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_EQ(query_one(db,
                      "SELECT count(*) FROM run WHERE reason LIKE 'LAVA job % failed: "
                      "Infrastructure: Unable to fetch file:///k/bzImage;%'"),
            "2")
      << r.err;
  EXPECT_NE(
      r.err.find(" s (Infrastructure: Unable to fetch file:///k/bzImage); 0 complete, 2 failed"),
      std::string::npos)
      << r.err;
}

TEST(LavaCli, AGuestsReportComesHomeWithTheLavaJobIdThatShowLists) {
  if (auto why = ramdisk_skip_reason(); !why.empty()) GTEST_SKIP() << why;
  TempDir dir;
  const std::string out = write_jobs(dir);
  // The guest: the job's own `nightjar run`, then `nightjar lava report`.
  const std::string guest_db = dir.path() + "/guest.db";
  ASSERT_EQ(run_nightjar({"run", dir.path() + "/fx.yaml", "--db", guest_db}).exit_code, 0);
  auto report =
      run_nightjar({"lava", "report", "--db", guest_db, "--cases", dir.path() + "/cases"});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  std::string log;
  for (const auto& line : split(report.out, '\n'))
    log += R"({"dt": "1", "lvl": "target", "msg": ")" + line + "\"}\n";
  log +=
      R"({"dt": "2", "lvl": "results", "msg": {"definition": "lava", "case": "job", "result": "pass"}})"
      "\n";
  const std::string lava_run = fake_lava_run(dir, log);
  const std::string device = dir.write("qemu07.yaml", "# a device\n");
  const std::string db = dir.path() + "/r.db";
  auto r =
      run_nightjar({"lava", "run", out, "--device", device, "--db", db, "--lava-run", lava_run});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(query_one(db, "SELECT count(*) FROM run WHERE status='complete'"), "2") << r.err;
  // stdout: the per-cell summary `nightjar run` prints, not bare run ids.
  EXPECT_EQ(r.out.rfind("run  variant", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("complete"), std::string::npos) << r.out;
  EXPECT_EQ(query_one(db, "SELECT count(*) FROM sample"),
            query_one(guest_db, "SELECT count(*) FROM sample"));
  auto show = run_nightjar({"show", "--db", db});
  EXPECT_NE(show.out.find("lava.job_id"), std::string::npos) << show.out;
  EXPECT_NE(show.out.find(query_one(db,
                                    "SELECT value FROM run_context WHERE key='lava.job_id' "
                                    "LIMIT 1")),
            std::string::npos)
      << show.out;
  // The definitions' logs stay beside them.
  EXPECT_TRUE(fs::exists(out + "/lava-run"));
}

}  // namespace
}  // namespace nightjar
