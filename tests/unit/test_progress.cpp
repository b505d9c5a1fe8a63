// Unit under test: harness/run/progress.h Progress (issue 19 "Progress fits
// the terminal, names the variant of each slot, the ETA is smoothed, the
// non-TTY log carries the variant"): on a pseudo-terminal 60 columns wide no
// line is longer than 59 characters, whatever the cell label; every line
// names its variant; the log form (not a terminal) carries the variant too.
#include <gtest/gtest.h>
#include <pty.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "harness/run/progress.h"

using nightjar::Progress;

namespace {

// Every line drawn on the terminal: "\r\033[K" starts a line over (the
// bar redrawn), "\n" ends one.
std::vector<std::string> screen_lines(const std::string& raw) {
  std::vector<std::string> lines;
  std::string line;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    if (raw.compare(i, 4, "\r\033[K") == 0) {
      if (!line.empty()) lines.push_back(line);
      line.clear();
      i += 3;
    } else if (raw[i] == '\r') {
      continue;
    } else if (raw[i] == '\n') {
      lines.push_back(line);
      line.clear();
    } else {
      line += raw[i];
    }
  }
  if (!line.empty()) lines.push_back(line);
  return lines;
}

}  // namespace

TEST(Progress, BarFitsAZeroTo200ColumnTerminalAndNamesTheVariant) {
  Progress p(12, 120, stderr);
  const std::string label =
      "tcp_sendfile-cgroup-hierarchy [thp-never-with-a-long-name] clients=64 "
      "send_size=65536 cgroup_depth=3 memory_high=512M";
  p.cell(7, "thp-never", label);
  for (int columns : {20, 40, 60, 80, 200}) {
    const std::string line = p.bar_line(columns, false, 3, 10, "thp-never");
    EXPECT_LE(line.size(), static_cast<std::size_t>(columns - 1)) << columns << ": " << line;
    if (columns >= 60) {
      EXPECT_NE(line.find("[thp-never] iteration 3/10"), std::string::npos) << line;
      EXPECT_NE(line.find("run 7/12"), std::string::npos) << line;
    }
  }
  // The variant and the iteration outlive the label and the bar.
  const std::string narrow = p.bar_line(60, false, 1, 4, "patched-with-long-name");
  EXPECT_NE(narrow.find("[patched-with-long-name] iteration 1/4"), std::string::npos) << narrow;
  const std::string tiny = p.bar_line(30, false, 1, 4, "patched-with-long-name");
  EXPECT_LE(tiny.size(), 29u) << tiny;
  EXPECT_NE(tiny.find("iteration 1/4"), std::string::npos) << tiny;
  // A label that fits is kept whole; one that does not loses its middle.
  EXPECT_NE(p.bar_line(200, false, 3, 10, "a").find(label), std::string::npos);
  EXPECT_NE(p.bar_line(80, false, 3, 10, "a").find("..."), std::string::npos);
}

TEST(Progress, OnA60ColumnPtyNoLineIsLongerThan59) {
  int master = -1, slave = -1;
  winsize w{};
  w.ws_col = 60;
  w.ws_row = 24;
  ASSERT_EQ(openpty(&master, &slave, nullptr, nullptr, &w), 0);
  std::FILE* out = fdopen(slave, "w");
  ASSERT_NE(out, nullptr);
  {
    Progress p(3, 8, out);
    p.cell(1, "thp-never", "pft-thp [thp-never] clients=1 mode=threads size=512M");
    p.cell(2, "thp-always", "pft-thp [thp-always] clients=1 mode=threads size=512M");
    for (int i = 1; i <= 2; ++i) {
      p.iteration(false, i, 2, 0.01, "thp-never");
      p.iteration(false, i, 2, 0.01, "thp-always");  // --interleave: slots alternate
    }
    p.message("warning: a message between bars");
    p.cell(3, "thp-always", "pft-thp [thp-always] clients=2 mode=processes size=512M");
    p.iteration(true, 1, 1, 0.01, "thp-always");
    p.finish();
  }
  std::fclose(out);
  std::string raw;
  char buf[4096];
  ssize_t n;
  while ((n = read(master, buf, sizeof buf)) > 0) raw.append(buf, static_cast<std::size_t>(n));
  close(master);
  int with_never = 0, with_always = 0;
  for (const auto& line : screen_lines(raw)) {
    EXPECT_LE(line.size(), 59u) << line;
    // Each interleaved slot's bar shows its own slot number, not the last started.
    if (line.find("[thp-never] iteration") != std::string::npos) {
      ++with_never;
      EXPECT_EQ(line.find("run 1/3 "), 0u) << line;
    }
    if (line.find("[thp-always] iteration") != std::string::npos) {
      ++with_always;
      EXPECT_EQ(line.find("run 2/3 "), 0u) << line;
    }
  }
  EXPECT_EQ(with_never, 2) << raw;  // each slot's bar names its own variant
  EXPECT_EQ(with_always, 2) << raw;
  EXPECT_NE(raw.find("[thp-always] warm-up 1/1"), std::string::npos) << raw;
}

TEST(Progress, TheLogFormNamesTheVariantOfEachIteration) {
  std::FILE* out = std::tmpfile();
  ASSERT_NE(out, nullptr);
  Progress p(1, 4, out);
  p.cell(1, "a", "pft [a] clients=1");
  p.iteration(false, 1, 2, 0.5, "a");
  p.iteration(false, 1, 2, 0.5, "b");
  std::rewind(out);
  std::string text;
  char buf[512];
  while (std::fgets(buf, sizeof buf, out)) text += buf;
  std::fclose(out);
  EXPECT_NE(text.find("nightjar:   [a] iteration 1/2 done in 0.500 s"), std::string::npos) << text;
  EXPECT_NE(text.find("nightjar:   [b] iteration 1/2 done in 0.500 s"), std::string::npos) << text;
}

TEST(Progress, TheEtaIsAMovingMeanNotTheLastIteration) {
  std::FILE* out = std::tmpfile();
  ASSERT_NE(out, nullptr);
  Progress p(1, 11, out);
  EXPECT_EQ(p.eta(), "--:--");
  for (int i = 0; i < 10; ++i) p.iteration(false, i + 1, 11, 10.0, "a");
  EXPECT_EQ(p.eta(), "0:10");  // one left at 10 s each
  std::fclose(out);
}
