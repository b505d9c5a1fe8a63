// Unit under test: `nightjar run` of tcp_sendfile with `cgroup: {depth: 3}`
// on the real machine (the check 2): while it runs, every sender's
// /proc/PID/cgroup shows a leaf 3 levels below nightjar's owned parent; after
// a normal end and after SIGINT no nightjar cgroup directory of that run
// remains and no sender is left. Skips (77) without root or without a memory
// controller.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <chrono>
#include <set>
#include <thread>

#include "root_support.h"
#include "test_support.h"
#include "workloads/sys/probe.h"

using namespace nightjar;
using namespace nightjar::test;

namespace {

const char* kJob =
    "workload: tcp_sendfile\n"
    "params:\n"
    "  clients: 2\n"
    "  duration: 4s\n"
    "iterations: 1\n"
    "warmup: 0\n"
    "cgroup:\n"
    "  depth: 3\n"
    "  per_client: true\n";

int memory_version() {
  CgroupLayout l = CgroupLayout::detect();
  return l.v2_memory_available ? 2 : 1;
}

/// Waits until `pid` has two sender children and returns their cgroups
/// (as /proc/PID/cgroup shows them on the memory hierarchy).
std::vector<std::string> sender_cgroups(pid_t pid) {
  for (int i = 0; i < 200; ++i) {
    std::vector<std::string> paths;
    for (pid_t c : children_of(pid))
      if (comm_of(c) == "tcp_sendfile-tx") paths.push_back(memory_cgroup_of(c, memory_version()));
    // Attached before they start: both in a nightjar leaf.
    if (paths.size() == 2 && paths[0].find("/nightjar-") == 0 && paths[1].find("/nightjar-") == 0)
      return paths;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  return {};
}

void expect_depth_three_leaves(const std::vector<std::string>& paths, pid_t nightjar) {
  ASSERT_EQ(paths.size(), 2u);
  std::set<std::string> leaves(paths.begin(), paths.end());
  EXPECT_EQ(leaves.size(), 2u) << "per_client: each sender in its own leaf";
  for (const auto& p : paths) {
    // "/nightjar-run<id>-<pid>/l1/l2/c<i>"
    auto slash = p.find('/', 1);
    ASSERT_NE(slash, std::string::npos) << p;
    std::string owned = p.substr(0, slash);
    EXPECT_NE(owned.find("-" + std::to_string(nightjar)), std::string::npos) << p;
    EXPECT_EQ(levels_below(p, owned), 3) << p;
  }
}

}  // namespace

TEST(TcpSendfileRoot, ClientsSitThreeLevelsDownAndTheTreeIsRemovedAfterANormalEnd) {
  std::string why = memcg_skip_reason();
  if (!why.empty()) GTEST_SKIP() << why;
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  TempDir dir;
  std::string job = dir.write("cg.yaml", kJob);
  std::string db = dir.path() + "/r.db";
  pid_t pid = spawn_nightjar({"run", job, "--db", db}, dir.path(), "run");
  auto paths = sender_cgroups(pid);
  expect_depth_three_leaves(paths, pid);
  EXPECT_EQ(wait_exit_code(pid), 0) << read_file(dir.path() + "/run.err");
  EXPECT_EQ(query_one(db, "SELECT status FROM run"), "complete");
  EXPECT_EQ(query_one(db, "SELECT count(*) FROM run_context WHERE key LIKE 'cgroup.client%'"), "2");
  if (!paths.empty()) {
    EXPECT_EQ(query_one(db, "SELECT value FROM run_context WHERE key='cgroup.client0'"),
              paths[0] < paths[1] ? paths[0] : paths[1]);
  }
  EXPECT_TRUE(nightjar_cgroups_matching("nightjar-", "-" + std::to_string(pid)).empty());
  EXPECT_TRUE(children_of(getpid()).empty());
  prctl(PR_SET_CHILD_SUBREAPER, 0);
}

TEST(TcpSendfileRoot, SigintMidRunRemovesTheTree) {
  std::string why = memcg_skip_reason();
  if (!why.empty()) GTEST_SKIP() << why;
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  TempDir dir;
  std::string job = dir.write("cg.yaml", kJob);
  std::string db = dir.path() + "/r.db";
  pid_t pid = spawn_nightjar({"run", job, "--db", db, "--set", "duration=60s"}, dir.path(), "run");
  auto paths = sender_cgroups(pid);
  expect_depth_three_leaves(paths, pid);
  EXPECT_FALSE(nightjar_cgroups_matching("nightjar-", "-" + std::to_string(pid)).empty());
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  kill(pid, SIGINT);
  EXPECT_EQ(wait_exit_code(pid), 130) << read_file(dir.path() + "/run.err");
  EXPECT_EQ(query_one(db, "SELECT status FROM run"), "aborted");
  EXPECT_TRUE(nightjar_cgroups_matching("nightjar-", "-" + std::to_string(pid)).empty());
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_TRUE(children_of(getpid()).empty());
  prctl(PR_SET_CHILD_SUBREAPER, 0);
}
