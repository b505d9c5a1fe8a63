// The perf-profile monitor on the real kernel, through the nightjar binary:
// pft with `monitors: [perf-stat, perf-profile]` stores one profile per
// measured iteration whose folded stacks name the kernel's page-fault path,
// and `compare --why` prints the profile block for two such runs.
//
// Skips (77) with the reason when not root (kernel symbols need it) or when
// the kernel refuses a sampling event (no CONFIG_PERF_EVENTS, a seccomp
// filter, perf_event_paranoid 3 or more).
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include <gtest/gtest.h>

#include "results/model/text.h"
#include "root_support.h"
#include "test_support.h"

namespace nightjar {
namespace {

using test::query_one;
using test::run_nightjar;
using test::TempDir;

// "" when a cpu-clock sampling event with kernel call chains can be
// opened here as root, else why not.
std::string sampling_refused() {
  if (::geteuid() != 0) return "needs root (kernel frames and /proc/kallsyms addresses)";
  return test::sampling_event_refused();
}

constexpr const char* kJob =
    "workload: pft\n"
    "params:\n"
    "  clients: 1\n"
    "  mode: threads\n"
    "  size: 64M\n"
    "iterations: 3\n"
    "warmup: 0\n"
    "monitors: [perf-stat, perf-profile]\n";

TEST(PerfProfileRoot, PftProfilesNameTheKernelsPageFaultPath) {
  if (auto why = sampling_refused(); !why.empty()) GTEST_SKIP() << why;
  TempDir dir;
  const std::string db = dir.path() + "/r.db";
  const std::string job = dir.write("pft-profile.yaml", kJob);
  for (const char* build : {"b1", "b2"}) {
    auto r = run_nightjar({"run", job, "--db", db, "--build", build});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  EXPECT_EQ(query_one(db, "SELECT count(*) FROM profile"), "6");
  const std::string event = query_one(db, "SELECT DISTINCT event FROM profile");
  EXPECT_TRUE(event == "cpu-clock" || event == "cycles") << event;
  // Every iteration sampled something, and the page-fault path is named.
  EXPECT_EQ(query_one(db,
                      "SELECT count(*) FROM profile p WHERE NOT EXISTS (SELECT 1 FROM "
                      "profile_sample s WHERE s.run_id=p.run_id AND s.iteration=p.iteration)"),
            "0");
  const std::string faults = query_one(
      db,
      "SELECT count(*) FROM profile_stack WHERE folded LIKE '%handle_mm_fault%' OR folded LIKE "
      "'%do_anonymous_page%' OR folded LIKE '%exc_page_fault%' OR folded LIKE "
      "'%do_user_addr_fault%'");
  EXPECT_NE(faults, "0") << query_one(db,
                                      "SELECT group_concat(folded, char(10)) FROM "
                                      "(SELECT folded FROM profile_stack LIMIT 20)");
  // pft's own frames are named from nightjar's symbols -- unless the binary
  // is stripped (the static one the qemu guests run), which the run says.
  const std::string unavailable =
      query_one(db,
                "SELECT IFNULL(group_concat(value, ' | '), '') FROM run_context WHERE "
                "key='monitor.unavailable'");
  if (unavailable.find("no function symbols (stripped)") == std::string::npos)
    EXPECT_NE(query_one(db, "SELECT count(*) FROM profile_stack WHERE folded LIKE '%nightjar%'"),
              "0")
        << unavailable;
  else
    EXPECT_NE(query_one(db, "SELECT count(*) FROM profile_stack WHERE folded LIKE '%[unknown]%'"),
              "0");

  auto why = run_nightjar({"compare", "build=b1", "build=b2", "--why", "--db", db});
  ASSERT_EQ(why.exit_code, 0) << why.err;
  EXPECT_NE(why.out.find("profile, build=b2 vs build=b1"), std::string::npos) << why.out;
  EXPECT_NE(why.out.find("3 vs 3 iterations"), std::string::npos) << why.out;
}

}  // namespace
}  // namespace nightjar
