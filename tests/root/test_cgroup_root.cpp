// Unit under test: the cgroup manager (workloads/sys/cgroup.h) on the real machine:
// a depth-3 tree with two clients on whichever memory hierarchy is here (v2,
// or v1 as on a hybrid system), a forked child attached to a leaf, and full
// removal afterwards. Skips (77) without root or without a memory controller.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "results/model/exit_codes.h"
#include "root_support.h"
#include "test_support.h"
#include "workloads/sys/cgroup.h"

using namespace nightjar;

namespace {

std::string tag_for(const char* what) {
  return std::string("roottest-") + what + "-" + std::to_string(getpid());
}

}  // namespace

TEST(CgroupRoot, DepthThreeTreeHoldsAClientAndIsRemoved) {
  std::string why = test::memcg_skip_reason();
  if (!why.empty()) GTEST_SKIP() << why;
  const std::string tag = tag_for("tree");
  CgroupSpec spec;
  spec.depth = 3;
  spec.per_client = true;
  pid_t child = test::fork_sleeper();
  ASSERT_GT(child, 0);
  std::string owned;
  {
    CgroupTree t(CgroupLayout::detect(), tag, spec, 2);
    owned = t.owned_root();
    EXPECT_TRUE(std::filesystem::is_directory(t.leaf(0)));
    EXPECT_TRUE(std::filesystem::is_directory(t.leaf(1)));
    t.attach(t.leaf(1), child);
    std::string shown = test::memory_cgroup_of(child, t.version());
    EXPECT_EQ(shown, t.relative(t.leaf(1)));
    EXPECT_EQ(test::levels_below(shown, t.relative(t.owned_root())), 3) << shown;
    // The tree is left with the child still inside: the destructor moves it out.
  }
  EXPECT_FALSE(std::filesystem::exists(owned));
  EXPECT_TRUE(test::nightjar_cgroups_matching(tag).empty());
  int status = 0;
  EXPECT_EQ(waitpid(child, &status, WNOHANG), 0) << "the leftover child was killed, not moved";
  kill(child, SIGKILL);
  waitpid(child, &status, 0);
}

TEST(CgroupRoot, TopKnobsAreWrittenWhereTheyTranslate) {
  std::string why = test::memcg_skip_reason();
  if (!why.empty()) GTEST_SKIP() << why;
  CgroupSpec spec;
  spec.depth = 3;
  spec.top = {{"memory.low", "128M"}, {"memory.max", "1G"}};
  CgroupLayout layout = CgroupLayout::detect();
  {
    CgroupTree t(layout, tag_for("knobs"), spec, 1);
    std::ifstream in(t.top() + (t.version() == 2 ? "/memory.max" : "/memory.limit_in_bytes"));
    std::string v;
    in >> v;
    EXPECT_EQ(v, "1073741824");
    if (t.version() == 1) {
      CgroupSpec v2only = spec;
      v2only.top = {{"memory.min", "64M"}};
      EXPECT_THROW(CgroupTree(layout, tag_for("min"), v2only, 1), UsageError);
    }
  }
  EXPECT_TRUE(test::nightjar_cgroups_matching(tag_for("knobs")).empty());
  EXPECT_TRUE(test::nightjar_cgroups_matching(tag_for("min")).empty());
}
