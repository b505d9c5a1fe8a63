// `nightjar bisect run` with the perf-profile monitor, through the nightjar
// binary, on a synthetic repository whose third commit makes one function of
// its program (planted_work) do three times the work: the bisect names that
// commit, and its "what else changed" block lists planted_work among the
// moved symbols, marked as changed by that commit in prog.c
// (docs/bisect.md "What else changed"). The program is profiled in user
// space, as the exec workload runs it.
//
// Skips (77) with the reason when not root, when perf_event_open refuses a
// sampling event, or when git or cc is missing (inside the qemu guest).
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "bisect_repo.h"
#include "results/model/text.h"
#include "root_support.h"
#include "test_support.h"

namespace nightjar {
namespace {

using test::git_out;
using test::run_nightjar;
using test::TempDir;

// "" when this test can run here, else why not.
std::string cannot_run() {
  if (::geteuid() != 0) return "needs root (perf_event_open with call chains)";
  for (const char* tool : {"git", "cc"}) {
    CommandSpec s;
    s.argv = {"/bin/sh", "-c", std::string("command -v ") + tool};
    if (!run_command(s).ok()) return std::string("needs ") + tool + " (a synthetic repository)";
  }
  return test::sampling_event_refused();
}

// prog.c: steady_work and planted_work, each a loop of dependent additions
// (`planted` iterations for planted_work), and the time of both.
std::string program(long planted) {
  return R"(#include <stdio.h>
#include <time.h>
static volatile double sink;
__attribute__((noinline))
static void steady_work(void) {
  double x = 0;
  for (long i = 0; i < 100000000L; ++i) x += i * 0.5;
  sink = x;
}
__attribute__((noinline))
static void planted_work(void) {
  double x = 0;
  for (long i = 0; i < )" +
         std::to_string(planted) + R"(L; ++i) x += i * 0.5;
  sink = x;
}
int main(void) {
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  steady_work();
  planted_work();
  clock_gettime(CLOCK_MONOTONIC, &b);
  printf("runtime=%.6f\n", (double)(b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9);
  return 0;
}
)";
}

TEST(BisectProfileRoot, TheCulpritsChangedFunctionIsMarkedAmongTheMovedSymbols) {
  if (auto why = cannot_run(); !why.empty()) GTEST_SKIP() << why;
  TempDir dir;
  const std::string repo = dir.path() + "/repo";
  std::filesystem::create_directories(repo);
  git_out(repo, {"init", "-q", "-b", "main"});
  // Commits 0 and 1 alike, 2 triples planted_work, 3 touches a comment.
  const long planted[] = {100000000L, 100000000L, 300000000L, 300000000L};
  std::vector<std::string> shas;
  for (int i = 0; i < 4; ++i) {
    dir.write("repo/prog.c", "/* commit " + std::to_string(i) + " */\n" + program(planted[i]));
    git_out(repo, {"add", "prog.c"});
    git_out(repo, {"commit", "-q", "-m", "commit " + std::to_string(i)});
    shas.push_back(std::string(trim(git_out(repo, {"rev-parse", "HEAD"}))));
  }
  const std::string job = dir.write("job.yaml",
                                    "workload: exec\nparams:\n  command: ./prog\n"
                                    "  metrics: \"runtime:s:lower\"\niterations: 5\nwarmup: 0\n"
                                    "monitors: [perf-profile]\n");
  const std::string db = dir.path() + "/r.db";
  auto r = run_nightjar({"bisect", "run", "--repo", repo, "--good", shas[0], "--bad", shas[3],
                         "--build", "cc -O1 -o prog prog.c", "--job", job, "--db", db});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("first bad commit: " + shas[2] + " commit 2"), std::string::npos) << r.out;
  // The block: planted_work's self share rose (about 50% -> 75% of the
  // samples), and it is the function commit 2 changed.
  const std::size_t block = r.out.find("\nprofile, ");
  ASSERT_NE(block, std::string::npos) << r.out;
  const std::string marked = "changed by " + shas[2].substr(0, 12) + " (prog.c)";
  bool found = false;
  for (const auto& line : split(r.out.substr(block), '\n'))
    if (line.find("planted_work") != std::string::npos && line.find(marked) != std::string::npos &&
        line.find("self") != std::string::npos)
      found = true;
  EXPECT_TRUE(found) << r.out;
  // steady_work is in the same file but commit 2 did not change it.
  for (const auto& line : split(r.out.substr(block), '\n'))
    if (line.find("steady_work") != std::string::npos) {
      EXPECT_EQ(line.find("changed by"), std::string::npos) << line;
    }
}

}  // namespace
}  // namespace nightjar
