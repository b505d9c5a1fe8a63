// Unit under test: the table of `nightjar bisect log` (harness/bisect/print.h
// render_session_log): one line per step, whatever its reason holds.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "harness/bisect/print.h"

namespace nightjar {
namespace {

TEST(BisectPrint, AReasonWithAConsoleTailStaysOnTheStepsLine) {
  BisectSession session;
  session.id = 1;
  session.kind = "run";
  BisectStep panic;
  panic.step = 4;
  panic.commit = std::string(40, 'a');
  panic.subject = "init: planted boot panic";
  panic.decision = BisectDecision::skip;
  panic.reason =
      "no samples: run 4 failed: guest kernel panic (not syncing: planted); console tail:\n"
      "[    0.205231] Kernel panic - not syncing: planted\n[    0.206183] CPU: 0 PID: 1";
  BisectStep next;
  next.step = 5;
  next.commit = std::string(40, 'b');
  next.subject = "mm/filemap: comment";
  const std::string log = render_session_log(session, {panic, next});
  std::istringstream lines(log);
  bool panic_line = false;
  for (std::string line; std::getline(lines, line);) {
    EXPECT_EQ(line.find("[    0.205231]"), std::string::npos) << "the tail spilled: " << line;
    if (line.find("init: planted boot panic: no samples") != std::string::npos) {
      panic_line = true;
      EXPECT_NE(line.find("console tail: ..."), std::string::npos) << line;
    }
  }
  EXPECT_TRUE(panic_line) << log;
  EXPECT_NE(log.find("mm/filemap: comment"), std::string::npos) << log;
}

}  // namespace
}  // namespace nightjar
