// Unit under test: the one label rule (results/model/text.h label_problem,
// harness/job/job.h require_label) on every surface that carries a label,
// and the number checks of the options (harness/cli/commands.h at_least,
// in_range), through the real binary — issue 15 "Labels" and "Messages":
//  - --variant items, --build, --context keys and values, a job's
//    `variant:`, gbench import's --variant/--build, a CSV's label columns:
//    a control character, invalid UTF-8 or more than 128 bytes is exit 2
//    naming the flag or file:line:column, with the bad bytes escaped, and
//    no run is stored;
//  - range errors read "--iterations: must be at least 1".
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "test_support.h"

using namespace nightjar::test;

namespace {

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

const char* kJob = "workload: fake\nparams:\n  value: 100\niterations: 2\nwarmup: 0\n";

// Exit 2 with `message` in stderr, and the database was never created.
void expect_refused(const std::vector<std::string>& args, const std::string& db,
                    const std::string& message) {
  CommandResult r = run_nightjar(args);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(contains(r.err, message)) << r.err;
  EXPECT_FALSE(std::filesystem::exists(db)) << "a refused label created " << db;
}

}  // namespace

TEST(LabelsCli, BadLabelsOnTheCommandLineAreRefusedBeforeAnythingIsStored) {
  TempDir dir;
  const std::string job = dir.write("f.yaml", kJob), db = dir.path() + "/r.db";
  expect_refused({"run", job, "--db", db, "--variant", "a\nb"}, db,
                 "--variant 'a\\x0ab': holds a control character (byte 2); a label is 1 to 128 "
                 "bytes of printable UTF-8");
  expect_refused({"run", job, "--db", db, "--variant", "ok,bad\x1b[31m"}, db,
                 "--variant 'bad\\x1b[31m': holds a control character (byte 4)");
  expect_refused({"run", job, "--db", db, "--build", std::string(129, 'x')}, db,
                 "is 129 bytes long (the limit is 128)");
  expect_refused({"run", job, "--db", db, "--build", "v6.1\xff"}, db,
                 "--build 'v6.1\\xff': is not valid UTF-8 (byte 5)");
  expect_refused({"run", job, "--db", db, "--context", "host\tload=idle"}, db,
                 "--context key 'host\\x09load': holds a control character");
  expect_refused({"run", job, "--db", db, "--context", "host_load=id\rle"}, db,
                 "--context value 'id\\x0dle': holds a control character");
  // A valid UTF-8 label that is not ASCII is a label like any other.
  CommandResult ok = run_nightjar({"run", job, "--db", db, "--variant", "größe-✓"});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
}

TEST(LabelsCli, AJobsVariantLabelFollowsTheRule) {
  TempDir dir;
  const std::string db = dir.path() + "/r.db";
  const std::string job =
      dir.write("v.yaml", std::string(kJob) + "variant: \"a\\u0007b\"\n");  // BEL
  expect_refused({"run", job, "--db", db}, db,
                 "v.yaml:6: variant: 'a\\x07b' holds a control character (byte 2)");
}

TEST(LabelsCli, ImportedLabelsFollowTheRule) {
  TempDir dir;
  const std::string db = dir.path() + "/r.db";
  auto r = run_nightjar({"run", dir.write("f.yaml", kJob), "--db", db, "--variant", "a"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  CommandResult csv = run_nightjar({"export", "--db", db});
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  // The exported variant column holds "a": make it a label with an ESC.
  std::string text = csv.out;
  const std::string from = ",a,", to = ",a\x1b,";
  std::size_t at = 0;
  int replaced = 0;
  while ((at = text.find(from, at)) != std::string::npos) {
    text.replace(at, from.size(), to);
    at += to.size();
    ++replaced;
  }
  ASSERT_GT(replaced, 0) << csv.out;
  const std::string file = dir.write("bad.csv", text);
  const std::string other = dir.path() + "/other.db";
  expect_refused({"import", file, "--db", other}, other,
                 "bad.csv:2: column 'variant': 'a\\x1b' holds a control character (byte 2)");
  // gbench: the labels come from the flags.
  expect_refused({"import", dir.write("g.json", "{\"benchmarks\": []}"), "--format", "gbench",
                  "--variant", "p\natched", "--db", other},
                 other, "--variant 'p\\x0aatched': holds a control character");
}

TEST(LabelsCli, RangeErrorsSayWhatToWrite) {
  TempDir dir;
  const std::string job = dir.write("f.yaml", kJob), db = dir.path() + "/r.db";
  expect_refused({"run", job, "--db", db, "--iterations", "0"}, db,
                 "--iterations: must be at least 1");
  expect_refused({"run", job, "--db", db, "--iterations", "many"}, db,
                 "--iterations: must be a number, found 'many'");
  expect_refused({"run", job, "--db", db, "--runs", "0"}, db, "--runs: must be from 1 to 1000");
  expect_refused({"run", job, "--db", db, "--warmup", "-1"}, db, "--warmup: must be at least 0");
  expect_refused({"compare", "a", "b", "--db", db, "--precision", "50"}, db,
                 "--precision: must be from 0 to 12");
  CommandResult help = run_nightjar({"run", "--help"});
  EXPECT_TRUE(contains(help.out, "NUMBER >= 1")) << help.out;
}
