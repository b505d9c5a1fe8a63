// Unit under test: the cgroup manager (workloads/sys/cgroup.h) — parse_cgroup_spec,
// translate_knob, memcg_unavailable_reason and CgroupTree against simulated
// cgroup v1 and v2 trees in a temporary directory (fs_prefix).
#include "harness/job/yaml_parse.h"
#include "workloads/sys/cgroup.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "results/model/exit_codes.h"
#include "test_support.h"

using namespace nightjar;
using nightjar::test::read_file;
using nightjar::test::TempDir;
namespace fs = std::filesystem;

namespace {

CgroupSpec parse(const std::string& yaml) {
  YAML::Node root = YAML::Load(yaml);
  return parse_cgroup_spec(root["cgroup"], "job.yaml");
}

std::string parse_error(const std::string& yaml) {
  try {
    parse(yaml);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

bool exists(const std::string& p) {
  return fs::exists(p);
}

// The cgroup this process is in on a hierarchy ("/" on v2 of this machine).
std::string own_cgroup(bool v1) {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    auto a = line.find(':'), b = line.find(':', a + 1);
    std::string ctrls = line.substr(a + 1, b - a - 1);
    if (!v1 && line.rfind("0::", 0) == 0) return line.substr(b + 1);
    if (v1 && (ctrls == "memory" || ctrls.find("memory,") == 0 ||
               ctrls.find(",memory") != std::string::npos))
      return line.substr(b + 1);
  }
  return "/";
}

// A simulated cgroup2 root at <tmp>/sys/fs/cgroup with the memory controller
// available and delegated to children.
struct FakeV2 {
  TempDir dir;
  std::string root = dir.path() + "/sys/fs/cgroup";
  CgroupLayout layout;
  explicit FakeV2(const std::string& subtree = "cpu memory pids\n") {
    dir.write("sys/fs/cgroup/cgroup.controllers", "cpu io memory pids\n");
    dir.write("sys/fs/cgroup/cgroup.subtree_control", subtree);
    dir.write("sys/fs/cgroup/cgroup.procs", "");
    layout.version = CgroupLayout::Version::v2;
    layout.v2_root = "/sys/fs/cgroup";
    layout.v2_memory_available = true;
  }
};

// A simulated v1 memory hierarchy at <tmp>/sys/fs/cgroup/memory beside a
// cgroup2 without memory: this machine's hybrid layout.
struct FakeV1 {
  TempDir dir;
  std::string root = dir.path() + "/sys/fs/cgroup/memory";
  CgroupLayout layout;
  FakeV1() {
    dir.write("sys/fs/cgroup/memory/memory.use_hierarchy", "1\n");
    dir.write("sys/fs/cgroup/memory/cgroup.procs", "");
    dir.write("sys/fs/cgroup/unified/cgroup.controllers", "");
    layout.version = CgroupLayout::Version::hybrid;
    layout.v2_root = "/sys/fs/cgroup/unified";
    layout.v1_memory_root = "/sys/fs/cgroup/memory";
    layout.v2_memory_available = false;
  }
};

CgroupSpec spec(int depth, bool per_client,
                std::vector<std::pair<std::string, std::string>> top = {}) {
  CgroupSpec s;
  s.depth = depth;
  s.per_client = per_client;
  s.top = std::move(top);
  return s;
}

}  // namespace

// ---- parse_cgroup_spec --------------------------------------------------------
TEST(CgroupSpecParse, AbsentSectionIsDisabled) {
  EXPECT_FALSE(parse("workload: x\n").enabled());
  EXPECT_FALSE(parse("workload: x\ncgroup:\n").enabled());
}

TEST(CgroupSpecParse, FullSectionKeepsKnobOrder) {
  CgroupSpec s = parse(
      "workload: x\ncgroup:\n  depth: 3\n  per_client: false\n"
      "  top: {memory.min: 64M, memory.low: 128M}\n");
  EXPECT_EQ(s.depth, 3);
  EXPECT_FALSE(s.per_client);
  ASSERT_EQ(s.top.size(), 2u);
  EXPECT_EQ(s.top[0], (std::pair<std::string, std::string>{"memory.min", "64M"}));
  EXPECT_EQ(s.top[1], (std::pair<std::string, std::string>{"memory.low", "128M"}));
}

TEST(CgroupSpecParse, MappingWithoutDepthIsOneLevel) {
  CgroupSpec s = parse("cgroup:\n  per_client: true\n");
  EXPECT_EQ(s.depth, 1);
  EXPECT_TRUE(s.per_client);
}

TEST(CgroupSpecParse, BadInputNamesFileLineAndField) {
  EXPECT_NE(parse_error("workload: x\ncgroup:\n  depth: 3\n  levels: 2\n")
                .find("job.yaml:4: cgroup.levels: unknown key"),
            std::string::npos);
  EXPECT_NE(parse_error("cgroup:\n  depth: 0\n").find("job.yaml:2: cgroup.depth: must be 1..8"),
            std::string::npos);
  EXPECT_NE(parse_error("cgroup:\n  depth: 9\n").find("cgroup.depth: must be 1..8"),
            std::string::npos);
  EXPECT_NE(parse_error("cgroup:\n  depth: three\n").find("job.yaml:2: cgroup.depth"),
            std::string::npos);
  EXPECT_NE(parse_error("cgroup:\n  depth: 2.5\n").find("cgroup.depth"), std::string::npos);
  EXPECT_NE(parse_error("cgroup:\n  per_client: maybe\n").find("job.yaml:2: cgroup.per_client"),
            std::string::npos);
  EXPECT_NE(parse_error("cgroup:\n  top: 64M\n").find("job.yaml:2: cgroup.top"), std::string::npos);
  EXPECT_NE(parse_error("cgroup:\n  depth: 1\n  top:\n    memory.foo: 1M\n")
                .find("job.yaml:4: cgroup.top.memory.foo: unknown knob"),
            std::string::npos);
  EXPECT_NE(parse_error("cgroup:\n  top:\n    memory.min: lots\n")
                .find("job.yaml:3: cgroup.top.memory.min: 'lots' is not a size"),
            std::string::npos);
  EXPECT_NE(parse_error("cgroup: [1, 2]\n").find("job.yaml:1: cgroup: expected a mapping"),
            std::string::npos);
}

// ---- translate_knob --------------------------------------------------------------
TEST(CgroupKnobs, TranslationTable) {
  EXPECT_EQ(translate_knob("memory.max", 1), "memory.limit_in_bytes");
  EXPECT_EQ(translate_knob("memory.limit_in_bytes", 2), "memory.max");
  EXPECT_EQ(translate_knob("memory.low", 1), "memory.soft_limit_in_bytes");
  EXPECT_EQ(translate_knob("memory.soft_limit_in_bytes", 2), "memory.low");
  EXPECT_EQ(translate_knob("memory.min", 2), "memory.min");
  EXPECT_EQ(translate_knob("memory.min", 1), std::nullopt);
  EXPECT_EQ(translate_knob("memory.high", 1), std::nullopt);
  EXPECT_EQ(translate_knob("memory.swappiness", 2), std::nullopt);
  EXPECT_EQ(translate_knob("memory.swappiness", 1), "memory.swappiness");
  EXPECT_EQ(translate_knob("cpu.max", 2), std::nullopt);
}

// ---- memcg_unavailable_reason ----------------------------------------------------
TEST(CgroupAvailability, Reasons) {
  FakeV2 v2;
  EXPECT_EQ(memcg_unavailable_reason(v2.layout, v2.dir.path(), true), "");
  FakeV2 undelegated("cpu pids\n");
  std::string r = memcg_unavailable_reason(undelegated.layout, undelegated.dir.path(), true);
  EXPECT_NE(r.find("not enabled in " + undelegated.root + "/cgroup.subtree_control"),
            std::string::npos)
      << r;
  FakeV1 v1;
  EXPECT_EQ(memcg_unavailable_reason(v1.layout, v1.dir.path(), true), "");

  CgroupLayout none;
  EXPECT_NE(memcg_unavailable_reason(none, "", true).find("no cgroup filesystem"),
            std::string::npos);
  CgroupLayout v2_no_memory;
  v2_no_memory.version = CgroupLayout::Version::v2;
  v2_no_memory.v2_root = "/sys/fs/cgroup";
  EXPECT_NE(memcg_unavailable_reason(v2_no_memory, "", true).find("no memory controller"),
            std::string::npos);
}

// ---- CgroupTree on a simulated v2 tree -------------------------------------------
TEST(CgroupTreeV2, CreatesDepthThreeLeavesEnablesMemoryAndWritesTopKnobs) {
  FakeV2 f;
  std::string owned = f.root + "/nightjar-run7-42";
  {
    CgroupTree t(f.layout, "run7-42",
                 spec(3, true, {{"memory.min", "64M"}, {"memory.low", "128M"}}), 2, f.dir.path());
    EXPECT_EQ(t.version(), 2);
    EXPECT_EQ(t.owned_root(), owned);
    EXPECT_EQ(t.top(), owned + "/l1");
    EXPECT_EQ(t.leaf(0), owned + "/l1/l2/c0");
    EXPECT_EQ(t.leaf(1), owned + "/l1/l2/c1");
    EXPECT_THROW(t.leaf(2), std::out_of_range);
    EXPECT_EQ(t.relative(t.leaf(1)), "/nightjar-run7-42/l1/l2/c1");
    EXPECT_EQ(t.relative(f.root), "/");
    for (const auto& d : {owned, owned + "/l1", owned + "/l1/l2"})
      EXPECT_EQ(read_file(d + "/cgroup.subtree_control"), "+memory\n") << d;
    EXPECT_FALSE(exists(owned + "/l1/l2/c0/cgroup.subtree_control"));
    EXPECT_EQ(read_file(owned + "/l1/memory.min"), "67108864\n");
    EXPECT_EQ(read_file(owned + "/l1/memory.low"), "134217728\n");
    // v1 names are translated to their v2 equivalents.
    t.write_knob(t.leaf(0), "memory.limit_in_bytes", "1G");
    EXPECT_EQ(read_file(t.leaf(0) + "/memory.max"), "1073741824\n");
    t.write_knob(t.leaf(0), "memory.soft_limit_in_bytes", "max");
    EXPECT_EQ(read_file(t.leaf(0) + "/memory.low"), "max\n");
    EXPECT_THROW(t.write_knob(t.leaf(0), "memory.swappiness", "10"), UsageError);
    EXPECT_THROW(t.write_knob(t.leaf(0), "memory.max", "lots"), UsageError);
    t.attach(t.leaf(1), 12345);
    EXPECT_EQ(read_file(t.leaf(1) + "/cgroup.procs"), "12345\n");
    // memory.current and memory.stat as the kernel writes them.
    std::ofstream(t.leaf(0) + "/memory.current") << "8192\n";
    std::ofstream(t.leaf(0) + "/memory.stat") << "anon 4096\nfile 0\nshmem 4096\n";
    EXPECT_EQ(t.memory_current(t.leaf(0)), 8192u);
    EXPECT_EQ(t.memory_stat(t.leaf(0)).at("shmem"), 4096u);
    EXPECT_TRUE(t.reclaim(t.leaf(0), 8192));
    EXPECT_EQ(read_file(t.leaf(0) + "/memory.reclaim"), "8192\n");
  }
  EXPECT_FALSE(exists(owned));
  // What nightjar did not create is as it was.
  EXPECT_EQ(read_file(f.root + "/cgroup.subtree_control"), "cpu memory pids\n");
  EXPECT_EQ(read_file(f.root + "/cgroup.controllers"), "cpu io memory pids\n");
}

TEST(CgroupTreeV2, SharedLeafAndDepthOne) {
  FakeV2 f;
  {
    CgroupTree t(f.layout, "s", spec(1, false), 4, f.dir.path());
    EXPECT_EQ(t.leaf(0), f.root + "/nightjar-s/shared");
    EXPECT_EQ(t.leaf(3), t.leaf(0));
    EXPECT_EQ(t.top(), t.owned_root());
    EXPECT_EQ(read_file(t.owned_root() + "/cgroup.subtree_control"), "+memory\n");
  }
  {
    CgroupTree t(f.layout, "p", spec(1, true, {{"memory.high", "1G"}}), 2, f.dir.path());
    EXPECT_EQ(t.leaf(1), f.root + "/nightjar-p/c1");
    EXPECT_EQ(read_file(t.owned_root() + "/memory.high"), "1073741824\n");
  }
  EXPECT_TRUE(fs::is_empty(f.root) == false);
  for (const auto& e : fs::directory_iterator(f.root)) EXPECT_FALSE(e.is_directory()) << e.path();
}

TEST(CgroupTreeV2, MemoryNotDelegatedByTheRootIsReportedNotChanged) {
  FakeV2 f("cpu pids\n");
  try {
    CgroupTree t(f.layout, "x", spec(3, true), 2, f.dir.path());
    FAIL() << "expected EnvironmentError";
  } catch (const EnvironmentError& e) {
    EXPECT_NE(std::string(e.what()).find("not enabled in " + f.root + "/cgroup.subtree_control"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(read_file(f.root + "/cgroup.subtree_control"), "cpu pids\n");
  EXPECT_FALSE(exists(f.root + "/nightjar-x"));
}

TEST(CgroupTreeV2, ExistingOwnedDirectoryIsNeverReused) {
  FakeV2 f;
  f.dir.write("sys/fs/cgroup/nightjar-dup/someone.txt", "mine");
  EXPECT_THROW(CgroupTree(f.layout, "dup", spec(2, true), 1, f.dir.path()), EnvironmentError);
  EXPECT_EQ(read_file(f.root + "/nightjar-dup/someone.txt"), "mine");
}

TEST(CgroupTreeV2, BadArgumentsCreateNothing) {
  FakeV2 f;
  EXPECT_THROW(CgroupTree(f.layout, "a", spec(0, true), 1, f.dir.path()), UsageError);
  EXPECT_THROW(CgroupTree(f.layout, "a", spec(9, true), 1, f.dir.path()), UsageError);
  EXPECT_THROW(CgroupTree(f.layout, "a", spec(2, true), 0, f.dir.path()), UsageError);
  EXPECT_THROW(CgroupTree(f.layout, "../a", spec(2, true), 1, f.dir.path()), UsageError);
  EXPECT_THROW(
      CgroupTree(f.layout, "a", spec(2, true, {{"memory.swappiness", "10"}}), 1, f.dir.path()),
      UsageError);
  EXPECT_FALSE(exists(f.root + "/nightjar-a"));
}

// ---- CgroupTree on a simulated v1 memory hierarchy --------------------------------
TEST(CgroupTreeV1, CreatesHierarchyAndTranslatesKnobs) {
  FakeV1 f;
  std::string owned = f.root + "/nightjar-v1";
  {
    CgroupTree t(f.layout, "v1", spec(3, true, {{"memory.low", "128M"}, {"memory.max", "max"}}), 3,
                 f.dir.path());
    EXPECT_EQ(t.version(), 1);
    EXPECT_EQ(t.top(), owned + "/l1");
    EXPECT_EQ(t.leaf(2), owned + "/l1/l2/c2");
    EXPECT_EQ(t.relative(t.leaf(2)), "/nightjar-v1/l1/l2/c2");
    EXPECT_EQ(read_file(owned + "/l1/memory.soft_limit_in_bytes"), "134217728\n");
    EXPECT_EQ(read_file(owned + "/l1/memory.limit_in_bytes"), "-1\n");
    EXPECT_FALSE(exists(owned + "/cgroup.subtree_control"));  // v1 has none
    t.write_knob(t.leaf(0), "memory.max", "64M");
    EXPECT_EQ(read_file(t.leaf(0) + "/memory.limit_in_bytes"), "67108864\n");
    t.write_knob(t.leaf(0), "memory.swappiness", "60");
    EXPECT_EQ(read_file(t.leaf(0) + "/memory.swappiness"), "60\n");
    EXPECT_THROW(t.write_knob(t.leaf(0), "memory.high", "1G"), UsageError);
    EXPECT_THROW(t.write_knob(t.leaf(0), "memory.min", "1G"), UsageError);
    std::ofstream(t.leaf(1) + "/memory.usage_in_bytes") << "65536\n";
    EXPECT_EQ(t.memory_current(t.leaf(1)), 65536u);
    t.force_empty(t.leaf(1));
    EXPECT_EQ(read_file(t.leaf(1) + "/memory.force_empty"), "0\n");
    EXPECT_THROW(t.reclaim(t.leaf(1), 4096), EnvironmentError);
  }
  EXPECT_FALSE(exists(owned));
  EXPECT_EQ(read_file(f.root + "/memory.use_hierarchy"), "1\n");
}

TEST(CgroupTreeV1, UntranslatableKnobIsAUsageErrorBeforeAnythingIsCreated) {
  FakeV1 f;
  try {
    CgroupTree t(f.layout, "m", spec(3, true, {{"memory.min", "64M"}}), 2, f.dir.path());
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("cgroup.top.memory.min: has no equivalent on cgroup v1"),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(exists(f.root + "/nightjar-m"));
}

// ---- teardown of leftover processes -------------------------------------------------

TEST(CgroupTeardown, LeftoverProcessIsMovedHome) {
  FakeV2 f;
  // Where nightjar itself runs, inside the simulated hierarchy.
  std::string home = f.root + own_cgroup(false);
  fs::create_directories(home);
  pid_t child = test::fork_sleeper();
  ASSERT_GT(child, 0);
  {
    CgroupTree t(f.layout, "mv", spec(2, true), 1, f.dir.path());
    t.attach(t.leaf(0), child);
  }
  std::string procs = read_file((home == f.root + "/" ? f.root : home) + "/cgroup.procs");
  EXPECT_NE(procs.find(std::to_string(child)), std::string::npos) << procs;
  int status = 0;
  EXPECT_EQ(waitpid(child, &status, WNOHANG), 0);  // still alive: moved, not killed
  kill(child, SIGKILL);
  waitpid(child, &status, 0);
  EXPECT_FALSE(exists(f.root + "/nightjar-mv"));
}

TEST(CgroupTeardown, OwnChildThatCannotBeMovedIsKilledForeignPidIsNot) {
  FakeV1 f;
  // Make the home cgroup refuse every move: its cgroup.procs is a directory.
  std::string home = f.root + own_cgroup(true);
  if (home.back() == '/') home.pop_back();
  fs::remove(home + "/cgroup.procs");
  fs::create_directories(home + "/cgroup.procs");
  pid_t child = test::fork_sleeper();
  ASSERT_GT(child, 0);
  {
    CgroupTree t(f.layout, "kill", spec(3, true), 2, f.dir.path());
    t.attach(t.leaf(1), child);
    t.attach(t.leaf(0), 1);  // init: not ours, must be left alone
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  EXPECT_FALSE(exists(f.root + "/nightjar-kill"));
}

// ---- knobs per level and the protection rule (plan_cgroup_tree) -------------------
namespace {

/// The plan's writes as "dir file=value (source)" lines, in order.
std::vector<std::string> writes_of(const CgroupPlan& p) {
  std::vector<std::string> out;
  for (const auto& w : p.writes)
    out.push_back((w.dir.empty() ? "." : w.dir) + " " + w.file + "=" + w.value + " (" + w.source +
                  ")");
  return out;
}

std::string plan_error(const CgroupSpec& s, int clients, int version, bool recursiveprot) {
  try {
    (void)plan_cgroup_tree(s, clients, version, recursiveprot);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST(CgroupSpecParse, MiddleAndLeavesSections) {
  CgroupSpec s = parse(
      "cgroup:\n  depth: 4\n  top: {memory.low: 256M}\n  middle: {memory.high: 1G}\n"
      "  leaves: {memory.min: 16M, memory.max: 512M}\n");
  ASSERT_EQ(s.middle.size(), 1u);
  EXPECT_EQ(s.middle[0], (std::pair<std::string, std::string>{"memory.high", "1G"}));
  ASSERT_EQ(s.leaves.size(), 2u);
  EXPECT_EQ(s.leaves[1], (std::pair<std::string, std::string>{"memory.max", "512M"}));
  EXPECT_NE(parse_error("cgroup:\n  depth: 2\n  middle: {memory.high: 1G}\n")
                .find("job.yaml:3: cgroup.middle: depth 2 has no middle level"),
            std::string::npos)
      << parse_error("cgroup:\n  depth: 2\n  middle: {memory.high: 1G}\n");
  EXPECT_NE(parse_error("cgroup:\n  leaves: {memory.lwo: 1G}\n")
                .find("job.yaml:2: cgroup.leaves.memory.lwo: unknown knob"),
            std::string::npos);
  EXPECT_NE(parse_error("cgroup:\n  leaves: 5\n").find("cgroup.leaves: expected a mapping"),
            std::string::npos);
}

TEST(CgroupPlan, LevelsAndSectionsOfADepthFourTree) {
  CgroupSpec s = spec(4, true, {{"memory.max", "2G"}});
  s.middle = {{"memory.high", "1G"}};
  s.leaves = {{"memory.max", "256M"}};
  CgroupPlan p = plan_cgroup_tree(s, 2, 2, true);
  EXPECT_EQ(p.dirs, (std::vector<std::string>{"", "l1", "l1/l2", "l1/l2/l3", "l1/l2/l3/c0",
                                              "l1/l2/l3/c1"}));
  EXPECT_EQ(p.top, "l1");
  EXPECT_EQ(writes_of(p), (std::vector<std::string>{
                              "l1 memory.max=2147483648 (top)",
                              "l1/l2 memory.high=1073741824 (middle)",
                              "l1/l2/l3 memory.high=1073741824 (middle)",
                              "l1/l2/l3/c0 memory.max=268435456 (leaves)",
                              "l1/l2/l3/c1 memory.max=268435456 (leaves)",
                          }));
  EXPECT_EQ(cgroup_level_name(""), "parent");
  EXPECT_EQ(cgroup_level_name("l1/l2"), "l1/l2");
}

TEST(CgroupPlan, V2RaisesAncestorsToCoverTheLeaves) {
  CgroupSpec s = spec(3, true);
  s.leaves = {{"memory.low", "64M"}};
  for (bool recursiveprot : {false, true}) {
    CgroupPlan p = plan_cgroup_tree(s, 3, 2, recursiveprot);
    EXPECT_EQ(writes_of(p), (std::vector<std::string>{
                                ". memory.low=201326592 (raised)",
                                "l1 memory.low=201326592 (raised)",
                                "l1/l2 memory.low=201326592 (raised)",
                                "l1/l2/c0 memory.low=67108864 (leaves)",
                                "l1/l2/c1 memory.low=67108864 (leaves)",
                                "l1/l2/c2 memory.low=67108864 (leaves)",
                            }));
  }
  s.leaves = {{"memory.min", "max"}};
  CgroupPlan p = plan_cgroup_tree(s, 2, 2, true);
  EXPECT_EQ(writes_of(p)[0], ". memory.min=max (raised)");
}

TEST(CgroupPlan, V2WithoutRecursiveprotSplitsTopProtectionDownToTheLeaves) {
  CgroupSpec s = spec(3, true, {{"memory.min", "64M"}, {"memory.low", "128M"}});
  CgroupPlan without = plan_cgroup_tree(s, 2, 2, false);
  EXPECT_EQ(writes_of(without), (std::vector<std::string>{
                                    ". memory.min=67108864 (raised)",
                                    ". memory.low=134217728 (raised)",
                                    "l1 memory.min=67108864 (top)",
                                    "l1 memory.low=134217728 (top)",
                                    "l1/l2 memory.min=67108864 (distributed)",
                                    "l1/l2 memory.low=134217728 (distributed)",
                                    "l1/l2/c0 memory.min=33554432 (distributed)",
                                    "l1/l2/c0 memory.low=67108864 (distributed)",
                                    "l1/l2/c1 memory.min=33554432 (distributed)",
                                    "l1/l2/c1 memory.low=67108864 (distributed)",
                                }));
  // With memory_recursiveprot the kernel hands it down itself.
  CgroupPlan with = plan_cgroup_tree(s, 2, 2, true);
  EXPECT_EQ(writes_of(with), (std::vector<std::string>{
                                 ". memory.min=67108864 (raised)",
                                 ". memory.low=134217728 (raised)",
                                 "l1 memory.min=67108864 (top)",
                                 "l1 memory.low=134217728 (top)",
                             }));
}

TEST(CgroupPlan, V2RefusesAnAncestorGivenLessThanItsChildren) {
  CgroupSpec s = spec(3, true, {{"memory.low", "64M"}});
  s.leaves = {{"memory.low", "64M"}};
  const std::string e = plan_error(s, 2, 2, true);
  EXPECT_NE(e.find("cgroup.top.memory.low: 64M on level l1 is less than the 128.0 MiB its children "
                   "ask for in all (l1/l2 memory.low 128.0 MiB, raised)"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("give top at least 128.0 MiB"), std::string::npos) << e;
  // Explicit children: named with their section and value.
  CgroupSpec d3 = spec(2, true, {{"memory.min", "10M"}});
  d3.leaves = {{"memory.min", "8M"}};
  const std::string e2 = plan_error(d3, 2, 2, true);
  EXPECT_NE(e2.find("(2 x l1/c0 memory.min 8.0 MiB, leaves: 8M)"), std::string::npos) << e2;
  // One client: 64M covers 64M.
  EXPECT_EQ(plan_error(s, 1, 2, false), "(no error)");
  // On v1 soft limits are not capped by the parent's: no rule.
  EXPECT_EQ(plan_error(s, 2, 1, false), "(no error)");
}

TEST(CgroupPlan, V1AppliesTheMappingAndNamesWhatHasNoV1Meaning) {
  CgroupSpec s = spec(3, true, {{"memory.low", "128M"}, {"memory.max", "max"}});
  CgroupPlan p = plan_cgroup_tree(s, 2, 1, false);
  EXPECT_EQ(writes_of(p), (std::vector<std::string>{
                              "l1 memory.soft_limit_in_bytes=134217728 (top)",
                              "l1 memory.limit_in_bytes=-1 (top)",
                          }));
  EXPECT_EQ(p.writes[0].knob, "memory.low");
  EXPECT_EQ(cgroup_version_problem(s, 1), std::nullopt);
  CgroupSpec min = spec(3, true, {{"memory.min", "64M"}});
  EXPECT_EQ(cgroup_version_problem(min, 1),
            "cgroup.top.memory.min: has no equivalent on cgroup v1; needs cgroup v2 (boot with "
            "cgroup_no_v1=memory or systemd.unified_cgroup_hierarchy=1), or use memory.low");
  CgroupSpec high = spec(2, true);
  high.leaves = {{"memory.high", "1G"}};
  EXPECT_NE(cgroup_version_problem(high, 1)->find("cgroup.leaves.memory.high: has no equivalent "
                                                  "on cgroup v1; needs cgroup v2"),
            std::string::npos);
  EXPECT_NE(cgroup_version_problem(high, 1)->find("or use memory.max"), std::string::npos);
  CgroupSpec swappiness = spec(2, true, {{"memory.swappiness", "10"}});
  EXPECT_NE(cgroup_version_problem(swappiness, 2)->find("has no equivalent on cgroup v2"),
            std::string::npos);
  EXPECT_EQ(cgroup_version_problem(min, 2), std::nullopt);
}

TEST(CgroupLayoutDetect, RecordsTheCgroup2MountOptions) {
  TempDir d;
  const std::string mi = d.write(
      "mountinfo",
      "31 23 0:28 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot\n"
      "35 31 0:32 / /run/nightjar-1-x-ab rw - tmpfs nightjar-x rw,size=1024k\n");
  d.write("sys/fs/cgroup/cgroup.controllers", "cpu memory\n");
  CgroupLayout l = CgroupLayout::detect(mi, d.path());
  EXPECT_EQ(l.v2_options, "rw,nsdelegate,memory_recursiveprot");
  EXPECT_TRUE(l.memory_recursiveprot());
  CgroupLayout plain;
  plain.v2_options = "rw,nsdelegate";
  EXPECT_FALSE(plain.memory_recursiveprot());
  auto mounts = parse_mountinfo(read_file(mi));
  ASSERT_EQ(mounts.size(), 2u);
  EXPECT_EQ(mounts[1].source, "nightjar-x");
  EXPECT_EQ(mounts[1].fstype, "tmpfs");
}

TEST(CgroupTreeV2, WritesEveryLevelReadsBackAndCountsEvents) {
  FakeV2 f;
  CgroupSpec s = spec(2, true, {{"memory.max", "1G"}});
  s.leaves = {{"memory.low", "32M"}};
  CgroupTree t(f.layout, "lv", s, 2, f.dir.path());
  const std::string owned = f.root + "/nightjar-lv";
  EXPECT_EQ(read_file(owned + "/memory.low"), "67108864\n");  // raised: 2 x 32M
  EXPECT_EQ(read_file(owned + "/l1/memory.low"), "67108864\n");
  EXPECT_EQ(read_file(owned + "/l1/c1/memory.low"), "33554432\n");
  const auto& w = t.knob_writes();
  ASSERT_EQ(w.size(), 5u);
  EXPECT_EQ(w[0].dir, "");
  EXPECT_EQ(w[0].source, "raised");
  EXPECT_EQ(w[0].read_back, "67108864");
  EXPECT_EQ(w[1].file, "memory.max");
  EXPECT_EQ(w[1].read_back, "1073741824");
  std::ofstream(owned + "/l1/memory.events") << "low 2\nhigh 0\nmax 7\noom 1\noom_kill 1\n";
  auto before = t.event_counters();
  EXPECT_EQ(before.at("memcg.l1.max"), 7u);
  EXPECT_EQ(before.count("memcg.parent.low"), 0u);  // no memory.events there
  std::ofstream(owned + "/l1/memory.events") << "low 5\nhigh 0\nmax 9\noom 1\noom_kill 1\n";
  auto deltas = cgroup_event_deltas(before, t.event_counters());
  EXPECT_EQ(deltas.at("memcg.l1.low"), 3.0);
  EXPECT_EQ(deltas.at("memcg.l1.max"), 2.0);
  EXPECT_EQ(deltas.at("memcg.l1.oom"), 0.0);
}

TEST(CgroupTreeV1, EventCountersAreFailcntAndOomKill) {
  FakeV1 f;
  CgroupTree t(f.layout, "ev", spec(1, false, {{"memory.low", "64M"}}), 1, f.dir.path());
  EXPECT_EQ(read_file(t.owned_root() + "/memory.soft_limit_in_bytes"), "67108864\n");
  ASSERT_EQ(t.knob_writes().size(), 1u);
  EXPECT_EQ(t.knob_writes()[0].file, "memory.soft_limit_in_bytes");
  std::ofstream(t.leaf(0) + "/memory.failcnt") << "4\n";
  std::ofstream(t.leaf(0) + "/memory.oom_control")
      << "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n";
  auto c = t.event_counters();
  EXPECT_EQ(c.at("memcg.shared.failcnt"), 4u);
  EXPECT_EQ(c.at("memcg.shared.oom_kill"), 2u);
}

TEST(CgroupUndo, RemovesOnlyNightjarTreesBelowTheirHome) {
  TempDir d;
  const std::string home = d.path() + "/cg";
  fs::create_directories(home + "/nightjar-u/l1");
  fs::create_directories(home + "/someone");
  JournalEntry mine{1, JournalKind::cgroup, {home + "/nightjar-u/l1", home, "1"}, false};
  EXPECT_EQ(undo_journaled_cgroup(mine).state, UndoResult::State::undone);
  EXPECT_FALSE(exists(home + "/nightjar-u/l1"));
  EXPECT_EQ(undo_journaled_cgroup(mine).state, UndoResult::State::absent);
  JournalEntry other{2, JournalKind::cgroup, {home + "/someone", home, "1"}, false};
  EXPECT_EQ(undo_journaled_cgroup(other).state, UndoResult::State::declined);
  EXPECT_TRUE(exists(home + "/someone"));
}
