// Unit under test: `nightjar bundle` and `nightjar import FILE.tar.gz` end to
// end (docs/publish.md "Bundles"): a two-variant fake comparison bundled,
// imported into a fresh database, compared there with the same verdicts and
// numbers; a second import adds nothing; --text prints the report table;
// bad archives are usage errors naming the file.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "test_support.h"

using namespace nightjar::test;

namespace {

std::string job(const std::string& script) {
  return "workload: fake\nparams:\n  script: \"" + script +
         "\"\n  seed: 1\niterations: 5\nwarmup: 0\n";
}

// The lines of a compare table that carry numbers and verdicts (the mmtests
// rows of the metrics), with runs of blanks squeezed: the receiver has no
// monitor rows (CSV carries samples only) and its label column may be narrower.
std::string metric_rows(const std::string& out) {
  std::istringstream in(out);
  std::string line, rows;
  while (std::getline(in, line)) {
    if (line.find("throughput") == std::string::npos && line.find("latency") == std::string::npos)
      continue;
    std::string squeezed;
    for (char c : line)
      if (!(c == ' ' && !squeezed.empty() && squeezed.back() == ' ')) squeezed += c;
    rows += squeezed + "\n";
  }
  return rows;
}

TEST(BundleCli, ImportedBundleComparesLikeTheSender) {
  TempDir dir;
  const std::string sender = dir.path() + "/s.db", receiver = dir.path() + "/r.db";
  ASSERT_EQ(run_nightjar({"run", "--db", sender, "--variant", "a",
                          dir.write("a/fx.yaml", job("100,102,98,101,99"))})
                .exit_code,
            0);
  ASSERT_EQ(run_nightjar({"run", "--db", sender, "--variant", "b",
                          dir.write("b/fx.yaml", job("110,112.2,107.8,111.1,108.9"))})
                .exit_code,
            0);
  const std::string bundle = dir.path() + "/repro.tar.gz";
  auto b =
      run_nightjar({"bundle", "--db", sender, "a", "b", "--ignore-param", "script", "-o", bundle});
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_NE(b.err.find("bundled 2 run(s), 20 samples"), std::string::npos) << b.err;

  auto text =
      run_nightjar({"bundle", "--db", sender, "a", "b", "--ignore-param", "script", "--text"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  auto report = run_nightjar({"report", "--db", sender, "a", "b", "--ignore-param", "script"});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  EXPECT_EQ(text.out.rfind(report.out, 0), 0u) << text.out;  // the post body opens with it
  EXPECT_NE(text.out.find("config_hash"), std::string::npos) << text.out;

  auto i1 = run_nightjar({"import", "--db", receiver, bundle});
  ASSERT_EQ(i1.exit_code, 0) << i1.err;
  EXPECT_NE(i1.out.find("imported 2 run(s)"), std::string::npos) << i1.out;
  auto i2 = run_nightjar({"import", "--db", receiver, bundle});
  ASSERT_EQ(i2.exit_code, 0) << i2.err;
  EXPECT_NE(i2.out.find("imported 0 run(s), 0 samples"), std::string::npos) << i2.out;
  EXPECT_NE(i2.out.find("2 run(s) already stored, skipped"), std::string::npos) << i2.out;

  auto cs = run_nightjar({"compare", "--db", sender, "a", "b", "--ignore-param", "script"});
  auto cr = run_nightjar({"compare", "--db", receiver, "a", "b", "--ignore-param", "script"});
  ASSERT_EQ(cs.exit_code, 0) << cs.err;
  ASSERT_EQ(cr.exit_code, 0) << cr.err;
  EXPECT_FALSE(metric_rows(cs.out).empty());
  EXPECT_EQ(metric_rows(cs.out), metric_rows(cr.out)) << cs.out << "\n----\n" << cr.out;
}

TEST(BundleCli, BadArchivesAreUsageErrors) {
  TempDir dir;
  const std::string db = dir.path() + "/r.db";
  auto plain = run_nightjar({"import", "--db", db, dir.write("plain.tar.gz", "run,job\n")});
  EXPECT_EQ(plain.exit_code, 2);
  EXPECT_NE(plain.err.find("plain.tar.gz: not a gzip'd tar archive"), std::string::npos)
      << plain.err;
  EXPECT_NE(plain.err.find("nightjar bundle"), std::string::npos) << plain.err;
  auto truncated =
      run_nightjar({"import", "--db", db, dir.write("cut.tar.gz", std::string("\x1f\x8b\x08", 3))});
  EXPECT_EQ(truncated.exit_code, 2) << truncated.err;
  EXPECT_NE(truncated.err.find("cut.tar.gz:"), std::string::npos) << truncated.err;
}

}  // namespace
