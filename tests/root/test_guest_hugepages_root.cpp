// Unit under test: harness/vm/hugepages.h GuestHugePages on the real kernel:
// it reserves the 2 MiB huge pages a guest needs (raising
// /proc/sys/vm/nr_hugepages only by what is missing), mounts a hugetlbfs on a
// directory of nightjar's, and gives both back -- the pool at its old size,
// no mount, no directory. Without the pages a fake sysfs tree gives a clear
// error and changes nothing. Skips (77) without root or without 2 MiB huge
// pages.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "harness/vm/hugepages.h"
#include "results/model/exit_codes.h"
#include "results/model/text.h"
#include "test_support.h"

using namespace nightjar;
using namespace nightjar::test;

namespace {

const std::string kPool = "/sys/kernel/mm/hugepages/hugepages-2048kB";

std::string pool(const std::string& file) {
  return std::string(trim(read_file(kPool + "/" + file)));
}

bool mounted_hugetlbfs(const std::string& path) {
  std::ifstream in("/proc/self/mountinfo");
  for (std::string line; std::getline(in, line);)
    if (line.find(" " + path + " ") != std::string::npos &&
        line.find(" - hugetlbfs ") != std::string::npos)
      return true;
  return false;
}

TEST(GuestHugePagesRoot, ReservesMountsAndGivesBackThePages) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (writes /proc/sys/vm/nr_hugepages, mounts)";
  if (!std::filesystem::exists(kPool)) GTEST_SKIP() << kPool << " is missing: no 2 MiB huge pages";
  const std::string before = pool("nr_hugepages");
  std::string where;
  {
    GuestHugePages h(64);  // a 64 MiB guest: 32 pages
    where = h.path();
    EXPECT_EQ(h.pages(), 32u);
    EXPECT_TRUE(mounted_hugetlbfs(where)) << where;
    EXPECT_GE(std::stoull(pool("free_hugepages")), 32u);
    EXPECT_EQ(std::stoull(pool("nr_hugepages")), std::stoull(before) + h.added());
    // What qemu does with it: a file of the guest's size, backed by the pool.
    std::ofstream(where + "/guest") << "";
    EXPECT_EQ(::truncate((where + "/guest").c_str(), 64 << 20), 0);
  }
  EXPECT_EQ(pool("nr_hugepages"), before);
  EXPECT_FALSE(mounted_hugetlbfs(where));
  EXPECT_FALSE(std::filesystem::exists(where));
}

TEST(GuestHugePages, AKernelWithoutHugePagesIsAClearErrorAndChangesNothing) {
  TempDir d;  // a sysfs tree without hugepages-2048kB
  try {
    GuestHugePages h(64, d.path());
    ADD_FAILURE() << "no huge pages, yet " << h.path();
  } catch (const EnvironmentError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("--vm-hugepages: this kernel has no 2 MiB huge pages"), std::string::npos)
        << what;
    EXPECT_NE(what.find("leave out --vm-hugepages"), std::string::npos) << what;
  }
}

}  // namespace
