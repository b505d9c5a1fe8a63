// Unit under test: the tmpfs_refault workload's pure parts
// (workloads/tmpfs_refault.h: declaration, validate(), the file patterns,
// memory needs, eviction planning, the eviction check and the sanity flag)
// and the zram device selection and RAII of workloads/sys/zram.h against a fake
// /sys and /proc tree. Nothing here needs root or touches the system.
#include "workloads/tmpfs_refault.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "results/model/exit_codes.h"
#include "test_support.h"
#include "workloads/sys/zram.h"

namespace nightjar {
namespace {

using refault::EvictMethod;
using refault::Pattern;
using ::testing::HasSubstr;

constexpr std::uint64_t kMiB = 1024 * 1024;
constexpr std::uint64_t kGiB = 1024 * kMiB;

const Workload& workload() {
  const Workload* w = find_workload("tmpfs_refault");
  EXPECT_NE(w, nullptr)
      << "tmpfs_refault is not registered (NIGHTJAR_WORKLOAD in workloads/tmpfs_refault.cpp)";
  return *w;
}

Cell cell(std::uint64_t size, const std::string& size_text, const std::string& pattern = "mixed",
          const std::string& evict = "auto", const std::string& algorithm = "") {
  return Cell{"tmpfs_refault",
              {{"size", {size_text, static_cast<double>(size)}},
               {"pattern", {pattern, 0}},
               {"evict", {evict, 0}},
               {"block_size", {"1M", static_cast<double>(kMiB)}},
               {"hot_reread", {"off", 0}},
               {"algorithm", {algorithm, 0}}}};
}

MachineFacts machine_with(std::uint64_t mem_total) {
  MachineFacts m;
  m.mem_total_bytes = mem_total;
  m.cpus = 2;
  return m;
}

// --- declaration ------------------------------------------------------------

TEST(TmpfsRefaultDeclaration, ParametersAndDefaultsFollowTheIssue) {
  const auto params = workload().params();
  auto find = [&](const std::string& n) {
    auto it =
        std::find_if(params.begin(), params.end(), [&](const auto& p) { return p.name == n; });
    EXPECT_NE(it, params.end()) << n;
    return *it;
  };
  EXPECT_EQ(find("size").default_value, "8G");
  EXPECT_EQ(find("size").type, ParamType::size);
  EXPECT_EQ(find("pattern").default_value, "mixed");
  EXPECT_EQ(find("pattern").choices, (std::vector<std::string>{"mixed", "random", "zero"}));
  EXPECT_EQ(find("evict").default_value, "auto");
  EXPECT_EQ(find("evict").choices,
            (std::vector<std::string>{"auto", "force_empty", "reclaim", "pageout"}));
  EXPECT_EQ(find("block_size").default_value, "1M");
  EXPECT_EQ(find("hot_reread").type, ParamType::flag);
  EXPECT_EQ(find("algorithm").type, ParamType::text);
}

TEST(TmpfsRefaultDeclaration, MetricsHaveUnitsDirectionsAndMeans) {
  const auto metrics = workload().metrics();
  auto find = [&](const std::string& n) {
    auto it =
        std::find_if(metrics.begin(), metrics.end(), [&](const auto& m) { return m.name == n; });
    EXPECT_NE(it, metrics.end()) << n;
    return *it;
  };
  EXPECT_EQ(find("read_time").unit, "s");
  EXPECT_EQ(find("read_time").direction, Direction::lower_is_better);
  EXPECT_EQ(find("read_time").mean, MeanKind::arithmetic);
  EXPECT_EQ(find("read_throughput").unit, "MiB/s");
  EXPECT_EQ(find("read_throughput").direction, Direction::higher_is_better);
  EXPECT_EQ(find("read_throughput").mean, MeanKind::harmonic);
  EXPECT_EQ(find("evict_time").direction, Direction::lower_is_better);
  EXPECT_EQ(find("evict_time").mean, MeanKind::arithmetic);
  EXPECT_EQ(find("hot_read_time").direction, Direction::lower_is_better);
}

TEST(TmpfsRefaultDeclaration, NamesRoundTrip) {
  for (Pattern p : {Pattern::mixed, Pattern::random, Pattern::zero})
    EXPECT_EQ(refault::pattern_from_string(refault::to_string(p)), p);
  for (EvictMethod m : {EvictMethod::automatic, EvictMethod::force_empty, EvictMethod::reclaim,
                        EvictMethod::pageout})
    EXPECT_EQ(refault::evict_from_string(refault::to_string(m)), m);
  EXPECT_EQ(refault::to_string(EvictMethod::automatic), "auto");
  EXPECT_FALSE(refault::pattern_from_string("ones"));
  EXPECT_FALSE(refault::evict_from_string("drop_caches"));
}

// --- validate ---------------------------------------------------------------

TEST(TmpfsRefaultValidate, EightGigabytesFitOnTheDevelopmentMachine) {
  EXPECT_NO_THROW(workload().validate(cell(8 * kGiB, "8G"), machine_with(23 * kGiB)));
  EXPECT_NO_THROW(workload().validate(cell(256 * kMiB, "256M"), machine_with(23 * kGiB)));
}

TEST(TmpfsRefaultValidate, TooLargeForMemoryIsRefusedWithTheNumbers) {
  try {
    workload().validate(cell(8 * kGiB, "8G"), machine_with(8 * kGiB));
    FAIL() << "8G on an 8 GiB machine was accepted";
  } catch (const ParamError& e) {
    EXPECT_EQ(e.field, "size");
    EXPECT_THAT(e.message, HasSubstr("size 8G (8.0 GiB)"));
    EXPECT_THAT(e.message, HasSubstr("10.4 GiB"));  // 8 GiB + 0.3 x 8 GiB
    EXPECT_THAT(e.message, HasSubstr("MemTotal 8.0 GiB"));
    // 90% of 8 GiB / 1.3 = 5.54 GiB -> 5.5 GiB in steps of 256M
    EXPECT_THAT(e.message, HasSubstr("write size: 5632M or less"));
  }
}

TEST(TmpfsRefaultValidate, RandomDataNeedsTwiceTheFile) {
  EXPECT_NO_THROW(workload().validate(cell(8 * kGiB, "8G", "mixed"), machine_with(16 * kGiB)));
  EXPECT_THROW(workload().validate(cell(8 * kGiB, "8G", "random"), machine_with(16 * kGiB)),
               ParamError);
}

TEST(TmpfsRefaultValidate, SizeMustBeWholePages) {
  try {
    workload().validate(cell(kMiB + 1, "1048577"), machine_with(23 * kGiB));
    FAIL() << "a size that is not whole pages was accepted";
  } catch (const ParamError& e) {
    EXPECT_EQ(e.field, "size");
    EXPECT_THAT(e.message, HasSubstr("multiple of the page size"));
  }
}

TEST(TmpfsRefaultValidate, UnknownAlgorithmIsRefusedWhereZramListsItsAlgorithms) {
  if (zram_algorithms().empty()) GTEST_SKIP() << "no zram device: the algorithm list is unknown";
  try {
    workload().validate(cell(256 * kMiB, "256M", "mixed", "auto", "no-such-algo"),
                        machine_with(23 * kGiB));
    FAIL() << "an unknown algorithm was accepted";
  } catch (const ParamError& e) {
    EXPECT_EQ(e.field, "algorithm");
    EXPECT_THAT(e.message, HasSubstr("available: "));
  }
  EXPECT_NO_THROW(
      workload().validate(cell(256 * kMiB, "256M", "mixed", "auto", zram_algorithms().front()),
                          machine_with(23 * kGiB)));
}

TEST(TmpfsRefaultMemory, NeedsAndLargestSize) {
  auto m = refault::memory_need(8 * kGiB, Pattern::mixed);
  EXPECT_EQ(m.file, 8 * kGiB);
  EXPECT_DOUBLE_EQ(m.ratio, 0.30);
  EXPECT_EQ(m.total, m.file + m.zram);
  EXPECT_EQ(refault::memory_need(kGiB, Pattern::random).zram, kGiB);
  EXPECT_LT(refault::memory_need(kGiB, Pattern::zero).zram, 20 * kMiB);
  EXPECT_EQ(refault::largest_size(8 * kGiB, Pattern::mixed), 5632 * kMiB);
  EXPECT_EQ(refault::largest_size(8 * kGiB, Pattern::random), 3584 * kMiB);
  EXPECT_EQ(refault::largest_size(100 * kMiB, Pattern::mixed), 69 * kMiB);
  // Whatever largest_size suggests passes validate().
  const std::uint64_t fit = refault::largest_size(8 * kGiB, Pattern::mixed);
  EXPECT_NO_THROW(workload().validate(cell(fit, format_size(fit)), machine_with(8 * kGiB)));
}

// --- patterns ---------------------------------------------------------------

std::vector<char> bytes_of(Pattern p, std::uint64_t offset, std::size_t len) {
  std::vector<char> v(len, 'x');
  refault::fill_pattern(p, offset, v.data(), len);
  return v;
}

std::size_t zeros(const char* p, std::size_t n) {
  return static_cast<std::size_t>(std::count(p, p + n, 0));
}

TEST(TmpfsRefaultPattern, MixedIsOneKibRandomThenThreeKibZerosPerPage) {
  const auto v = bytes_of(Pattern::mixed, 0, 8 * 4096);
  for (std::size_t page = 0; page < 8; ++page) {
    const char* p = v.data() + page * 4096;
    // 1 KiB of random bytes: about 4 of them are 0 by chance, never most.
    EXPECT_LT(zeros(p, 1024), 32u) << "page " << page;
    EXPECT_EQ(zeros(p + 1024, 3072), 3072u) << "page " << page;
  }
  // No two pages alike: the random part comes from the page's index.
  for (std::size_t a = 0; a < 8; ++a)
    for (std::size_t b = a + 1; b < 8; ++b)
      EXPECT_NE(std::memcmp(v.data() + a * 4096, v.data() + b * 4096, 1024), 0) << a << " " << b;
}

TEST(TmpfsRefaultPattern, RandomHasNoZeroTailAndZeroIsAllZeros) {
  const auto r = bytes_of(Pattern::random, 0, 4 * 4096);
  for (std::size_t page = 0; page < 4; ++page)
    EXPECT_LT(zeros(r.data() + page * 4096, 4096), 64u) << "page " << page;
  const auto z = bytes_of(Pattern::zero, 12345 * 4096, 3 * 4096 + 100);
  EXPECT_EQ(zeros(z.data(), z.size()), z.size());
}

TEST(TmpfsRefaultPattern, ContentDependsOnlyOnTheOffset) {
  for (Pattern p : {Pattern::mixed, Pattern::random}) {
    const std::uint64_t base = 1000 * 4096;
    const auto whole = bytes_of(p, base, 5 * 4096);
    // The same bytes, cut at odd places (as a writer with another chunk size would).
    std::vector<char> pieces(whole.size());
    std::size_t cuts[] = {0, 100, 4096, 4097, 9000, 5 * 4096};
    for (std::size_t i = 0; i + 1 < std::size(cuts); ++i)
      refault::fill_pattern(p, base + cuts[i], pieces.data() + cuts[i], cuts[i + 1] - cuts[i]);
    EXPECT_EQ(whole, pieces) << refault::to_string(p);
    // And the same page again gives the same bytes.
    EXPECT_EQ(bytes_of(p, base + 4096, 4096),
              std::vector<char>(whole.begin() + 4096, whole.begin() + 8192));
  }
  EXPECT_NE(bytes_of(Pattern::mixed, 0, 1024), bytes_of(Pattern::mixed, 4096, 1024));
}

// --- eviction plan ------------------------------------------------------------

CgroupLayout v1_layout() {
  CgroupLayout l;
  l.version = CgroupLayout::Version::hybrid;
  l.v1_memory_root = "/sys/fs/cgroup/memory";
  l.v2_root = "/sys/fs/cgroup/unified";
  l.v2_memory_available = false;
  return l;
}

CgroupLayout v2_layout() {
  CgroupLayout l;
  l.version = CgroupLayout::Version::v2;
  l.v2_root = "/sys/fs/cgroup";
  l.v2_memory_available = true;
  return l;
}

TEST(TmpfsRefaultPlan, CgroupV1UsesForceEmpty) {
  auto auto_plan = refault::plan_eviction(EvictMethod::automatic, v1_layout(), "");
  ASSERT_TRUE(auto_plan.method) << auto_plan.reason;
  EXPECT_EQ(*auto_plan.method, EvictMethod::force_empty);
  EXPECT_TRUE(auto_plan.memcg);
  EXPECT_EQ(auto_plan.cgroup_version, 1);
  auto reclaim = refault::plan_eviction(EvictMethod::reclaim, v1_layout(), "");
  EXPECT_FALSE(reclaim.method);
  EXPECT_THAT(reclaim.reason, HasSubstr("cgroup v2"));
  EXPECT_THAT(reclaim.reason, HasSubstr("write evict: auto"));
  auto pageout = refault::plan_eviction(EvictMethod::pageout, v1_layout(), "");
  ASSERT_TRUE(pageout.method);
  EXPECT_TRUE(pageout.memcg);
}

TEST(TmpfsRefaultPlan, CgroupV2UsesMemoryReclaimWhenTheKernelHasIt) {
  test::TempDir root;
  ::mkdir((root.path() + "/sys").c_str(), 0755);
  ::mkdir((root.path() + "/sys/fs").c_str(), 0755);
  ::mkdir((root.path() + "/sys/fs/cgroup").c_str(), 0755);
  // Without memory.reclaim (Linux < 5.19): auto falls back to pageout.
  auto old_kernel = refault::plan_eviction(EvictMethod::automatic, v2_layout(), "", root.path());
  ASSERT_TRUE(old_kernel.method);
  EXPECT_EQ(*old_kernel.method, EvictMethod::pageout);
  EXPECT_TRUE(old_kernel.memcg);
  auto no_reclaim = refault::plan_eviction(EvictMethod::reclaim, v2_layout(), "", root.path());
  EXPECT_FALSE(no_reclaim.method);
  EXPECT_THAT(no_reclaim.reason, HasSubstr("5.19"));

  root.write("sys/fs/cgroup/memory.reclaim", "");
  auto plan = refault::plan_eviction(EvictMethod::automatic, v2_layout(), "", root.path());
  ASSERT_TRUE(plan.method) << plan.reason;
  EXPECT_EQ(*plan.method, EvictMethod::reclaim);
  EXPECT_EQ(plan.cgroup_version, 2);
  auto force = refault::plan_eviction(EvictMethod::force_empty, v2_layout(), "", root.path());
  EXPECT_FALSE(force.method);
  EXPECT_THAT(force.reason, HasSubstr("cgroup v1"));
  EXPECT_THAT(force.reason, HasSubstr("cgroup v2"));
}

TEST(TmpfsRefaultPlan, WithoutMemcgOnlyPageoutRuns) {
  const std::string why = "no memory controller is mounted";
  auto a = refault::plan_eviction(EvictMethod::automatic, CgroupLayout{}, why);
  EXPECT_FALSE(a.method);
  EXPECT_THAT(a.reason, HasSubstr(why));
  EXPECT_THAT(a.reason, HasSubstr("write evict: pageout"));
  EXPECT_FALSE(refault::plan_eviction(EvictMethod::force_empty, v1_layout(), why).method);
  auto p = refault::plan_eviction(EvictMethod::pageout, v1_layout(), why);
  ASSERT_TRUE(p.method);
  EXPECT_EQ(*p.method, EvictMethod::pageout);
  EXPECT_FALSE(p.memcg);
  EXPECT_EQ(p.cgroup_version, 0);
}

// --- eviction check and sanity flag --------------------------------------------

refault::EvictCheck good_eviction() {
  refault::EvictCheck c;
  c.pages = 65536;
  c.resident = 0;
  c.memcg_shmem = 0;
  c.memcg_swap = 65536ull * 4096;
  c.pswpout = 65536;
  return c;
}

TEST(TmpfsRefaultEvictCheck, AFileThatWentOutPasses) {
  EXPECT_EQ(refault::eviction_failure(good_eviction()), std::nullopt);
  auto c = good_eviction();
  c.resident = 600;  // < 1% of 65536
  c.memcg_shmem.reset();
  c.memcg_swap.reset();
  EXPECT_EQ(refault::eviction_failure(c), std::nullopt);
}

TEST(TmpfsRefaultEvictCheck, EachSignOfAFileStillInMemoryFailsWithTheReason) {
  auto resident = good_eviction();
  resident.resident = 1000;
  EXPECT_THAT(refault::eviction_failure(resident).value_or(""),
              HasSubstr("1000 of the file's 65536 pages"));
  auto shmem = good_eviction();
  shmem.memcg_shmem = 64 * kMiB;
  EXPECT_THAT(refault::eviction_failure(shmem).value_or(""), HasSubstr("shmem"));
  auto swap = good_eviction();
  swap.memcg_swap = 10 * kMiB;
  EXPECT_THAT(refault::eviction_failure(swap).value_or(""), HasSubstr("swap holds"));
  auto pswpout = good_eviction();
  pswpout.pswpout = 100;
  EXPECT_THAT(refault::eviction_failure(pswpout).value_or(""), HasSubstr("pswpout grew by 100"));
  // Zero pages must reach the device too where the kernel has no zero-page
  // map (no swpout_zero): zram stores them as same-filled entries.
  pswpout.pattern = Pattern::zero;
  pswpout.pswpout = 0;
  EXPECT_THAT(refault::eviction_failure(pswpout).value_or(""), HasSubstr("pswpout grew by 0"));
  pswpout.pswpout = 65536;
  EXPECT_EQ(refault::eviction_failure(pswpout), std::nullopt);
}

// Which zero-page handling the kernel has is read from what it exposes.
TEST(TmpfsRefaultZeroPages, TheZeroPageMapIsToldBySwpinZeroInVmstat) {
  test::TempDir with, without;
  with.write("vmstat", "pswpin 5\npswpout 7\nswpin_zero 0\nswpout_zero 0\n");
  without.write("vmstat", "pswpin 5\npswpout 7\n");
  EXPECT_TRUE(refault::swap_has_zero_map(with.path()));
  EXPECT_FALSE(refault::swap_has_zero_map(without.path()));
  EXPECT_FALSE(refault::swap_has_zero_map(without.path() + "/missing"));
}

TEST(TmpfsRefaultZeroPages, TheWarningSaysWhatTheKernelDoesWithZeroPages) {
  const std::string map = refault::zero_pattern_warning(true);
  EXPECT_THAT(map, HasSubstr("zero-filled pages never reach zram"));
  EXPECT_THAT(map, HasSubstr("every sample is invalid"));
  EXPECT_THAT(map, HasSubstr("write pattern: mixed"));
  const std::string same = refault::zero_pattern_warning(false);
  EXPECT_THAT(same, HasSubstr("no swpin_zero"));
  EXPECT_THAT(same, HasSubstr("same-filled entries"));
  EXPECT_THAT(same, HasSubstr("(pswpin = pages)"));
  EXPECT_THAT(same, HasSubstr("not comparable with pattern mixed or random"));
  EXPECT_THAT(same, ::testing::Not(HasSubstr("invalid")));
  // On such a kernel a zero file's read refaults every page: valid.
  EXPECT_EQ(refault::refault_sanity_flag(65536, 65536.0, std::nullopt, Pattern::zero),
            std::nullopt);
}

TEST(TmpfsRefaultSanity, PswpinWithinOnePercentOfThePagesIsNotFlagged) {
  EXPECT_EQ(refault::refault_sanity_flag(65536, 65536.0, 0.0, Pattern::mixed), std::nullopt);
  EXPECT_EQ(refault::refault_sanity_flag(65536, 65000.0, 0.0, Pattern::mixed), std::nullopt);
}

TEST(TmpfsRefaultSanity, ZeroPagesAreFlaggedWithTheCause) {
  auto flag = refault::refault_sanity_flag(65536, 0.0, 65536.0, Pattern::zero);
  ASSERT_TRUE(flag);
  EXPECT_THAT(*flag, HasSubstr("this sample did not measure refaults: "));
  EXPECT_THAT(*flag, HasSubstr("pswpin grew by 0"));
  EXPECT_THAT(*flag, HasSubstr("swpin_zero grew by 65536"));
  EXPECT_THAT(*flag, HasSubstr("6.12"));
  EXPECT_THAT(*flag, HasSubstr("write pattern: mixed"));
}

TEST(TmpfsRefaultSanity, OtherMismatchesAreFlaggedToo) {
  EXPECT_THAT(refault::refault_sanity_flag(65536, 70000.0, 0.0, Pattern::mixed).value_or(""),
              HasSubstr("other processes swapped in"));
  EXPECT_THAT(refault::refault_sanity_flag(65536, 30000.0, 0.0, Pattern::mixed).value_or(""),
              HasSubstr("zswap"));
  EXPECT_THAT(
      refault::refault_sanity_flag(65536, std::nullopt, std::nullopt, Pattern::mixed).value_or(""),
      HasSubstr("no pswpin counter"));
}

// --- invalid samples (docs/workloads.md "Invalid samples") ---------------------

TEST(TmpfsRefaultEvictCheck, ZeroPagesRecordedInsteadOfWrittenAreNoEviction) {
  auto c = good_eviction();
  c.swpout_zero = 600;  // < 1%: a few zero pages of a real file
  EXPECT_EQ(refault::eviction_failure(c), std::nullopt);
  c.pattern = Pattern::zero;
  c.pswpout = 0;
  c.swpout_zero = 65536;
  const std::string why = refault::eviction_failure(c).value_or("");
  EXPECT_THAT(why, HasSubstr("swpout_zero grew by 65536 for a file of 65536 pages (100.0%)"));
  EXPECT_THAT(why, HasSubstr("write pattern: mixed"));
}

TEST(TmpfsRefaultInterference, AnotherRigOrSwapOutsDuringTheReadAreInterference) {
  EXPECT_EQ(refault::read_interference(65536, 0.0, {}), std::nullopt);
  EXPECT_EQ(refault::read_interference(65536, 600.0, {}), std::nullopt);  // < 1%
  EXPECT_EQ(refault::read_interference(65536, std::nullopt, {}), std::nullopt);
  EXPECT_THAT(refault::read_interference(65536, 5000.0, {}).value_or(""),
              HasSubstr("pswpout grew by 5000 during the read"));
  const std::string other =
      refault::read_interference(65536, 0.0, {"pid 42 (tmpfs_refault-r of nightjar pid 40)"})
          .value_or("");
  EXPECT_THAT(other, HasSubstr("another swap workload ran around the read (pid 42 "
                               "(tmpfs_refault-r of nightjar pid 40))"));
  EXPECT_THAT(other, HasSubstr("run one tmpfs_refault at a time"));
}

TEST(TmpfsRefaultInterference, OtherRigsAreFoundByNameAndParentInAProcTree) {
  test::TempDir proc;
  proc.write("100/stat", "100 (tmpfs_refault-r) S 40 100 100 0 -1\n");  // another nightjar's
  proc.write("101/stat", "101 (tmpfs_refault-w) R 7 101 101 0 -1\n");   // ours (parent 7)
  proc.write("102/stat", "102 (bash) S 1 102 102 0 -1\n");
  proc.write("103/stat", "103 (odd) name) S 1 103 103 0 -1\n");
  proc.write("self/stat", "7 (nightjar) S 1 7 7 0 -1\n");
  proc.write("104/status", "no stat file\n");
  EXPECT_EQ(refault::other_refault_workers(7, proc.path()),
            (std::vector<std::string>{"pid 100 (tmpfs_refault-r of nightjar pid 40)"}));
  EXPECT_TRUE(refault::other_refault_workers(7, proc.path() + "/missing").empty());
}

// --- /proc/swaps and zram selection against a fake tree -------------------------

TEST(Zram, ParsesProcSwapsWithEscapesAndPriorities) {
  auto e = parse_proc_swaps(
      "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
      "/dev/zram0                              partition\t4194300\t\t1024\t\t100\n"
      "/swap\\040file                          file\t\t1048572\t\t0\t\t-2\n");
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e[0].filename, "/dev/zram0");
  EXPECT_EQ(e[0].type, "partition");
  EXPECT_EQ(e[0].size_kib, 4194300u);
  EXPECT_EQ(e[0].used_kib, 1024u);
  EXPECT_EQ(e[0].priority, 100);
  EXPECT_EQ(e[1].filename, "/swap file");
  EXPECT_EQ(e[1].priority, -2);
  EXPECT_EQ(swap_priority_above(e), 101);
  EXPECT_EQ(swap_priority_above({e[1]}), 0);
  EXPECT_EQ(swap_priority_above({}), 10);
  SwapEntry top;
  top.priority = kMaxSwapPriority;
  EXPECT_EQ(swap_priority_above({top}), std::nullopt);
  EXPECT_TRUE(parse_proc_swaps("Filename Type Size Used Priority\n").empty());
}

TEST(Zram, ParsesAlgorithmLists) {
  EXPECT_EQ(parse_algorithm_list("[lzo-rle] lzo lz4 zstd\n"),
            (std::vector<std::string>{"lzo-rle", "lzo", "lz4", "zstd"}));
  EXPECT_EQ(selected_algorithm("lzo-rle lzo [lz4]\n"), "lz4");
  EXPECT_EQ(selected_algorithm("lzo lz4"), "");
}

/// A fake /sys and /proc tree with zram devices.
class FakeZramTree {
 public:
  void device(int id, const std::string& disksize, const std::string& holder = "") {
    const std::string d = "sys/block/zram" + std::to_string(id);
    dirs(d + "/holders");
    dir_.write(d + "/disksize", disksize + "\n");
    dir_.write(d + "/comp_algorithm", "[lzo-rle] lzo lz4\n");
    dir_.write(d + "/reset", "");
    dir_.write(d + "/dev", "253:" + std::to_string(id) + "\n");
    if (!holder.empty()) dir_.write(d + "/holders/" + holder, "");
  }
  void hot_add(const std::string& next_id) {
    dirs("sys/class/zram-control");
    dir_.write("sys/class/zram-control/hot_add", next_id + "\n");
    dir_.write("sys/class/zram-control/hot_remove", "");
  }
  void swaps(const std::string& lines) {
    dirs("proc");
    dir_.write("proc/swaps", "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n" + lines);
  }
  std::string read(const std::string& rel) const { return test::read_file(root() + "/" + rel); }
  const std::string& root() const { return dir_.path(); }

 private:
  void dirs(const std::string& rel) {
    std::string p = dir_.path();
    std::size_t start = 0;
    while (start <= rel.size()) {
      auto slash = rel.find('/', start);
      p = dir_.path() + "/" + rel.substr(0, slash);
      ::mkdir(p.c_str(), 0755);
      if (slash == std::string::npos) break;
      start = slash + 1;
    }
  }
  test::TempDir dir_;
};

TEST(ZramSelection, HotAddIsPreferredWhereItExists) {
  FakeZramTree t;
  t.device(0, "0");
  t.hot_add("1");
  auto s = select_zram_device(t.root());
  ASSERT_TRUE(s.choice) << s.reason;
  EXPECT_TRUE(s.choice->hot_add);
}

TEST(ZramSelection, TakesTheFirstUnusedDeviceAndSkipsEveryBusyOne) {
  FakeZramTree t;
  t.device(0, "4294967296");  // set up by something else
  t.device(1, "0");           // disksize 0 but listed in /proc/swaps
  t.device(2, "0", "dm-0");   // held by device mapper
  t.device(3, "0");           // free
  t.device(10, "0");          // free, but higher
  t.swaps("/dev/zram1                              partition\t0\t\t0\t\t-2\n");
  auto s = select_zram_device(t.root());
  ASSERT_TRUE(s.choice) << s.reason;
  EXPECT_FALSE(s.choice->hot_add);
  EXPECT_EQ(s.choice->id, 3);
}

TEST(ZramSelection, NoFreeDeviceIsAReasonNamingEachDevice) {
  FakeZramTree t;
  t.device(0, "1073741824");
  t.device(1, "0");
  t.swaps("/dev/zram1                              partition\t0\t\t0\t\t5\n");
  auto s = select_zram_device(t.root());
  EXPECT_FALSE(s.choice);
  EXPECT_THAT(s.reason, HasSubstr("zram0: set up by something else (disksize 1.0 GiB)"));
  EXPECT_THAT(s.reason, HasSubstr("zram1: active swap"));
  EXPECT_THAT(s.reason, HasSubstr("never reuses"));
}

TEST(ZramSelection, NoZramAtAllSaysModprobe) {
  FakeZramTree t;
  t.swaps("");
  auto s = select_zram_device(t.root());
  EXPECT_FALSE(s.choice);
  EXPECT_THAT(s.reason, HasSubstr("modprobe zram"));
}

TEST(ZramDeviceFake, HotAddedDeviceIsConfiguredThenResetAndRemoved) {
  FakeZramTree t;
  t.hot_add("5");
  t.device(5, "0");  // what the kernel creates when hot_add is read
  {
    ZramDevice dev(64 * kMiB, "lz4", t.root());
    EXPECT_EQ(dev.id(), 5);
    EXPECT_EQ(dev.name(), "zram5");
    EXPECT_TRUE(dev.created());
    EXPECT_EQ(dev.device_path(), t.root() + "/dev/zram5");
    EXPECT_EQ(t.read("sys/block/zram5/disksize"), std::to_string(64 * kMiB));
    EXPECT_EQ(t.read("sys/block/zram5/comp_algorithm"), "lz4");
    EXPECT_EQ(t.read("sys/block/zram5/reset"), "");
    EXPECT_EQ(t.read("sys/class/zram-control/hot_remove"), "");
  }
  EXPECT_EQ(t.read("sys/block/zram5/reset"), "1");
  EXPECT_EQ(t.read("sys/class/zram-control/hot_remove"), "5");
  // The pending record written before hot_add was read is done as well.
  EXPECT_EQ(Journal::process().open_count(), 0u);
}

TEST(ZramDeviceFake, ExistingDeviceIsResetAndItsAlgorithmRestoredButNotRemoved) {
  FakeZramTree t;
  t.device(0, "8589934592");
  t.device(1, "0");
  t.swaps("");
  {
    ZramDevice dev(32 * kMiB, "lz4", t.root());
    EXPECT_EQ(dev.id(), 1);
    EXPECT_FALSE(dev.created());
    EXPECT_EQ(t.read("sys/block/zram1/disksize"), std::to_string(32 * kMiB));
  }
  EXPECT_EQ(t.read("sys/block/zram1/reset"), "1");
  EXPECT_EQ(t.read("sys/block/zram1/comp_algorithm"), "lzo-rle");
  // The device set up by something else was not touched.
  EXPECT_EQ(t.read("sys/block/zram0/disksize"), "8589934592\n");
  EXPECT_EQ(t.read("sys/block/zram0/reset"), "");
}

TEST(ZramDeviceFake, NoFreeDeviceThrowsTheReasonAndTouchesNothing) {
  FakeZramTree t;
  t.device(0, "1048576");
  t.swaps("");
  try {
    ZramDevice dev(32 * kMiB, "", t.root());
    FAIL() << "a device in use was taken";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("no free zram device"));
  }
  EXPECT_EQ(t.read("sys/block/zram0/disksize"), "1048576\n");
  EXPECT_EQ(t.read("sys/block/zram0/reset"), "");
}

}  // namespace
}  // namespace nightjar
