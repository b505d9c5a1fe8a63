// Unit under test: tests/test_support.{h,cpp} — the bounded wait the tests
// use for nightjar processes they start in the background. A process that
// outlives the limit must fail the test with where it was, and be gone.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "test_support.h"

namespace nightjar::test {
namespace {

TEST(WaitExitCode, AProcessThatEndsGivesItsExitCode) {
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) ::_exit(7);
  EXPECT_EQ(wait_exit_code(pid, std::chrono::seconds(30)), 7);
}

TEST(WaitExitCode, AKilledProcessGivesOneHundredTwentyEightPlusTheSignal) {
  const pid_t pid = fork_sleeper();
  ASSERT_GT(pid, 0);
  ::kill(pid, SIGTERM);
  EXPECT_EQ(wait_exit_code(pid, std::chrono::seconds(30)), 128 + SIGTERM);
}

// A hang fails the test, names what the process was doing, and leaves no
// process behind (the sleeper's child too).
TEST(WaitExitCode, AHangFailsWithWhatTheTreeWasDoingAndKillsIt) {
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (::fork() == 0) ::pause();  // a descendant, stuck as well
    ::pause();
    ::_exit(0);
  }
  pid_t grandchild = 0;
  for (int i = 0; i < 500 && grandchild == 0; ++i) {
    const auto kids = children_of(pid);
    if (!kids.empty()) grandchild = kids.front();
    ::usleep(10'000);
  }
  ASSERT_GT(grandchild, 0);
  int code = 0;
  EXPECT_NONFATAL_FAILURE(code = wait_exit_code(pid, std::chrono::seconds(1)),
                          "was still running after 1 s: a hang");
  EXPECT_EQ(code, -1);
  EXPECT_NE(::kill(pid, 0), 0) << "the hung process was not reaped";
  // The grandchild was killed too; reparented, it may linger as a zombie for
  // a moment until its new parent reaps it.
  for (int i = 0; i < 500 && ::kill(grandchild, 0) == 0; ++i) {
    if (read_file("/proc/" + std::to_string(grandchild) + "/stat").find(") Z") != std::string::npos)
      break;
    ::usleep(10'000);
  }
  const std::string stat = read_file("/proc/" + std::to_string(grandchild) + "/stat");
  EXPECT_TRUE(stat.empty() || stat.find(") Z") != std::string::npos) << stat;
}

TEST(WaitExitCode, TheTreeDescriptionNamesEachProcessAndThread) {
  const pid_t pid = fork_sleeper();
  ASSERT_GT(pid, 0);
  const std::string text = describe_process_tree(pid);
  EXPECT_NE(text.find("pid " + std::to_string(pid) + " ("), std::string::npos) << text;
  EXPECT_NE(text.find("  thread " + std::to_string(pid) + " ("), std::string::npos) << text;
  EXPECT_NE(text.find("state S"), std::string::npos) << text;
  ::kill(pid, SIGKILL);
  EXPECT_EQ(wait_exit_code(pid), 128 + SIGKILL);
}

}  // namespace
}  // namespace nightjar::test
