// Unit under test: the pft workload (workloads/pft.cpp): its declaration,
// validate(), and real small faulting passes in both modes, including that no
// worker thread or child process outlives a session.
#include "workloads/workload.h"

#include <dirent.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "results/model/exit_codes.h"

namespace nightjar {
namespace {

constexpr std::uint64_t kMiB = 1024 * 1024;

// The registered pft workload (NIGHTJAR_WORKLOAD in workloads/pft.cpp).
const Workload* pft_workload() {
  const Workload* w = find_workload("pft");
  if (w == nullptr) throw std::logic_error("pft is not registered (workloads/pft.cpp)");
  return w;
}

Cell pft_cell(const std::string& mode, std::int64_t clients, std::uint64_t size,
              const std::string& size_text) {
  return Cell{"pft",
              {{"clients", {std::to_string(clients), static_cast<double>(clients)}},
               {"mode", {mode, 0}},
               {"size", {size_text, static_cast<double>(size)}}}};
}

MachineFacts this_machine() {
  MachineFacts m;
  m.mem_total_bytes = static_cast<std::uint64_t>(::sysconf(_SC_PHYS_PAGES)) *
                      static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  long cpus = ::sysconf(_SC_NPROCESSORS_ONLN);
  m.cpus = cpus > 0 ? static_cast<unsigned>(cpus) : 1;
  return m;
}

/// The selected THP mode ("always", "madvise", "never"), "" when unknown.
std::string thp_mode() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string line;
  std::getline(in, line);
  auto open = line.find('['), close = line.find(']');
  if (open == std::string::npos || close == std::string::npos) return "";
  return line.substr(open + 1, close - open - 1);
}

/// Number of threads of this process.
std::size_t thread_count() {
  std::size_t n = 0;
  if (DIR* d = ::opendir("/proc/self/task")) {
    while (dirent* e = ::readdir(d))
      if (e->d_name[0] != '.') ++n;
    ::closedir(d);
  }
  return n;
}

/// Pids listed in /proc/self/task/*/children (needs CONFIG_PROC_CHILDREN;
/// empty when the files do not exist).
std::vector<std::string> listed_children() {
  std::vector<std::string> pids;
  if (DIR* d = ::opendir("/proc/self/task")) {
    while (dirent* e = ::readdir(d)) {
      if (e->d_name[0] == '.') continue;
      std::ifstream in(std::string("/proc/self/task/") + e->d_name + "/children");
      std::string pid;
      while (in >> pid) pids.push_back(pid);
    }
    ::closedir(d);
  }
  return pids;
}

/// Asserts that this process has no child, live or zombie.
void expect_no_children() {
  EXPECT_TRUE(listed_children().empty());
  errno = 0;
  int status = 0;
  EXPECT_EQ(::waitpid(-1, &status, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);
}

TEST(Pft, DeclaresParametersAndMetrics) {
  auto w = pft_workload();
  EXPECT_EQ(w->name(), "pft");
  auto params = w->params();
  ASSERT_EQ(params.size(), 3u);
  EXPECT_EQ(params[0].name, "clients");
  EXPECT_EQ(params[0].type, ParamType::count);
  EXPECT_EQ(params[0].default_value, "1");
  EXPECT_EQ(params[0].min, 1.0);
  EXPECT_EQ(params[1].name, "mode");
  EXPECT_EQ(params[1].type, ParamType::choice);
  EXPECT_EQ(params[1].default_value, "threads");
  EXPECT_EQ(params[1].choices, (std::vector<std::string>{"threads", "processes"}));
  EXPECT_EQ(params[2].name, "size");
  EXPECT_EQ(params[2].type, ParamType::size);
  EXPECT_EQ(params[2].default_value, "256M");
  EXPECT_EQ(params[2].min, static_cast<double>(::sysconf(_SC_PAGESIZE)));

  auto metrics = w->metrics();
  ASSERT_EQ(metrics.size(), 4u);
  EXPECT_EQ(metrics[0].name, "faults_per_sec");
  EXPECT_EQ(metrics[0].direction, Direction::higher_is_better);
  EXPECT_EQ(metrics[0].mean, MeanKind::harmonic);
  EXPECT_EQ(metrics[1].name, "faults_per_cpu");
  EXPECT_EQ(metrics[1].direction, Direction::higher_is_better);
  EXPECT_EQ(metrics[1].mean, MeanKind::harmonic);
  EXPECT_EQ(metrics[2].name, "system_time");
  EXPECT_EQ(metrics[2].direction, Direction::lower_is_better);
  EXPECT_EQ(metrics[2].mean, MeanKind::arithmetic);
  EXPECT_EQ(metrics[3].name, "elapsed");
  EXPECT_EQ(metrics[3].direction, Direction::lower_is_better);
  EXPECT_EQ(metrics[3].mean, MeanKind::arithmetic);
}

TEST(Pft, ValidateAcceptsAReasonableCell) {
  auto w = pft_workload();
  EXPECT_NO_THROW(w->validate(pft_cell("threads", 2, 16 * kMiB, "16M"), this_machine()));
  EXPECT_NO_THROW(w->validate(pft_cell("processes", 1, 4096, "4K"), this_machine()));
}

/// The ParamError validate() throws, or a failure when it throws nothing.
ParamError validate_error(const Cell& cell, const MachineFacts& machine) {
  try {
    pft_workload()->validate(cell, machine);
  } catch (const ParamError& e) {
    return e;
  }
  ADD_FAILURE() << "validate() accepted " << cell.params.at("size").text;
  return {};
}

TEST(Pft, ValidateRejectsSizeZero) {
  ParamError e = validate_error(pft_cell("threads", 1, 0, "0"), this_machine());
  EXPECT_EQ(e.field, "size");
  EXPECT_NE(e.message.find("one page"), std::string::npos) << e.message;
}

TEST(Pft, ValidateRejectsSizeBiggerThanMemory) {
  MachineFacts m = this_machine();
  m.mem_total_bytes = 1024 * kMiB;
  ParamError e = validate_error(pft_cell("threads", 1, 2048 * kMiB, "2G"), m);
  EXPECT_EQ(e.field, "size");
  EXPECT_NE(e.message.find("20%mem"), std::string::npos) << e.message;
  // Within MemTotal but inside the 10% headroom: also refused.
  e = validate_error(pft_cell("threads", 1, 1000 * kMiB, "1000M"), m);
  EXPECT_EQ(e.field, "size");
  EXPECT_NO_THROW(pft_workload()->validate(pft_cell("threads", 1, 900 * kMiB, "900M"), m));
}

TEST(Pft, ValidateRejectsFewerPagesThanWorkers) {
  ParamError e = validate_error(pft_cell("processes", 4, 3 * 4096, "12K"), this_machine());
  EXPECT_EQ(e.field, "size");
  EXPECT_NE(e.message.find("clients=4"), std::string::npos) << e.message;
}

TEST(Pft, ValidateRejectsAnUnknownMode) {
  ParamError e = validate_error(pft_cell("fibers", 1, 16 * kMiB, "16M"), this_machine());
  EXPECT_EQ(e.field, "mode");
}

struct PassCase {
  std::string mode;
  int clients;
};

// The parameter as ctest names it ("threads1"), not as a byte dump.
void PrintTo(const PassCase& c, std::ostream* os) {
  *os << c.mode << c.clients;
}

class PftPass : public ::testing::TestWithParam<PassCase> {};

TEST_P(PftPass, MeasuresEveryPageOnce) {
  const PassCase& c = GetParam();
  const std::uint64_t size = 16 * kMiB;
  const double pages = static_cast<double>(size / 4096);
  const std::size_t threads_before = thread_count();
  std::vector<std::string> warnings;
  RunContext ctx;
  ctx.machine = this_machine();
  ctx.warn = [&](const std::string& w) { warnings.push_back(w); };
  {
    auto w = pft_workload();
    Cell cell = pft_cell(c.mode, c.clients, size, "16M");
    w->validate(cell, ctx.machine);
    auto session = w->start(cell, ctx);
    session->warmup();
    for (int i = 0; i < 3; ++i) {
      IterationResult r = session->measure();
      ASSERT_FALSE(r.failure) << *r.failure;
      EXPECT_EQ(r.counters.at("pft.pages"), pages);
      const double fps = r.metrics.at("faults_per_sec");
      const double elapsed = r.metrics.at("elapsed");
      EXPECT_GT(fps, 0);
      EXPECT_GT(elapsed, 0);
      EXPECT_NEAR(fps, pages / elapsed, 1e-9 * fps);
      EXPECT_GT(r.metrics.at("faults_per_cpu"), 0);
      EXPECT_GE(r.metrics.at("system_time"), 0);
      EXPECT_GT(r.counters.at("pft.minflt"), 0);
      // No worker thread survives a pass.
      EXPECT_EQ(thread_count(), threads_before);
    }
  }
  if (static_cast<unsigned>(c.clients) <= ctx.machine.cpus) {
    EXPECT_TRUE(warnings.empty()) << warnings.front();
  }
  EXPECT_EQ(thread_count(), threads_before);
  expect_no_children();
}

TEST_P(PftPass, MinorFaultsMatchPagesWithoutThp) {
  const PassCase& c = GetParam();
  if (thp_mode() == "always")
    GTEST_SKIP() << "THP is [always] here: anonymous mappings get huge pages, so minflt is "
                    "far below the pages touched by design";
  const std::uint64_t size = 16 * kMiB;
  const double pages = static_cast<double>(size / 4096);
  RunContext ctx;
  ctx.machine = this_machine();
  auto session = pft_workload()->start(pft_cell(c.mode, c.clients, size, "16M"), ctx);
  IterationResult r = session->measure();
  ASSERT_FALSE(r.failure) << *r.failure;
  const double minflt = r.counters.at("pft.minflt");
  EXPECT_LE(std::fabs(minflt - pages) / pages, 0.10) << "minflt " << minflt;
  EXPECT_TRUE(r.flags.empty()) << r.flags.front();
}

INSTANTIATE_TEST_SUITE_P(ModesAndClients, PftPass,
                         ::testing::Values(PassCase{"threads", 1}, PassCase{"threads", 2},
                                           PassCase{"processes", 1}, PassCase{"processes", 2}),
                         [](const ::testing::TestParamInfo<PassCase>& info) {
                           return info.param.mode + std::to_string(info.param.clients);
                         });

TEST(Pft, WarnsOnceWhenClientsExceedCpus) {
  std::vector<std::string> warnings;
  RunContext ctx;
  ctx.machine = this_machine();
  ctx.machine.cpus = 1;
  ctx.warn = [&](const std::string& w) { warnings.push_back(w); };
  auto session = pft_workload()->start(pft_cell("threads", 2, 4 * kMiB, "4M"), ctx);
  IterationResult r = session->measure();
  ASSERT_FALSE(r.failure) << *r.failure;
  (void)session->measure();
  std::size_t about_cpus = 0;
  for (const auto& w : warnings)
    if (w.find("clients=2") != std::string::npos) ++about_cpus;
  EXPECT_EQ(about_cpus, 1u);
}

TEST(Pft, InterruptAfterThePassThrowsAndLeavesNoChild) {
  for (const char* mode : {"threads", "processes"}) {
    SCOPED_TRACE(mode);
    int calls = 0;
    RunContext ctx;
    ctx.machine = this_machine();
    // False when measure() starts, true once the workers are done.
    ctx.interrupted = [&] { return ++calls > 1; };
    {
      auto session = pft_workload()->start(pft_cell(mode, 2, 4 * kMiB, "4M"), ctx);
      EXPECT_THROW((void)session->measure(), Interrupted);
      EXPECT_GE(calls, 2);
      EXPECT_THROW((void)session->measure(), Interrupted);
    }
    expect_no_children();
  }
}

TEST(Pft, SizeIsSplitIntoWholePages) {
  // 10 pages and a half over 3 workers: 10 pages are touched (4+3+3).
  RunContext ctx;
  ctx.machine = this_machine();
  const std::uint64_t size = 10 * 4096 + 2048;
  for (const char* mode : {"threads", "processes"}) {
    SCOPED_TRACE(mode);
    auto session = pft_workload()->start(pft_cell(mode, 3, size, std::to_string(size)), ctx);
    IterationResult r = session->measure();
    ASSERT_FALSE(r.failure) << *r.failure;
    EXPECT_EQ(r.counters.at("pft.pages"), 10);
  }
  expect_no_children();
}

}  // namespace
}  // namespace nightjar
