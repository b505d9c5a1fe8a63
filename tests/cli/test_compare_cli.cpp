// Unit under test: `nightjar compare` and `nightjar check` end to end, on
// databases written by the real binary (`nightjar run` with the `fake`
// workload and scripted samples, so every number is exact):
//  - golden files of the five layouts (tests/golden/compare.*); regenerate with
//    NIGHTJAR_UPDATE_GOLDEN=1 after a deliberate layout change and review the diff;
//  - check's exit codes 0 / 1 / 3 and their precedence, compare
//    --fail-on-regression, usage errors (2) for bad selectors and flags;
//  - colour only on a terminal (a pty), honouring NO_COLOR and --color.
//
// The fake workload's `script` is a cell parameter, so two variants with
// different scripts are different cells; the tests match them with
// `--ignore-param script` (docs/compare.md "Matching cells").
#include <gtest/gtest.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "results/model/text.h"
#include "test_support.h"

using namespace nightjar::test;

namespace {

std::string job(const std::string& script, int seed, int iterations = 5) {
  return "workload: fake\nparams:\n  script: \"" + script + "\"\n  seed: " + std::to_string(seed) +
         "\niterations: " + std::to_string(iterations) + "\nwarmup: 0\n";
}

// The shortest text that reads back as `v` (as nightjar's CSV writes numbers).
std::string fmt_double(double v) {
  char buf[64];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

void run_ok(const std::vector<std::string>& args) {
  auto r = run_nightjar(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

// Makes the parts of the fixture that the fake workload cannot fix exact:
// monitor deltas (real /proc counters) and the kernel/testbox names.
void normalise(const std::string& db) {
  SQLite::Database d(db, SQLite::OPEN_READWRITE);
  d.exec("UPDATE kernel SET release='6.1.0-test', version='#1 test'");
  d.exec("UPDATE testbox SET hostname='testbox', cpu_model='test cpu'");
  d.exec("DELETE FROM monitor");
  d.exec(
      "INSERT INTO monitor(run_id, iteration, name, value) "
      "SELECT i.run_id, i.iteration, 'vmstat.pgfault', "
      "1000 + 10 * i.iteration + CASE r.variant WHEN 'b' THEN 50 ELSE 0 END "
      "FROM iteration i JOIN run r ON r.id = i.run_id");
  d.exec(
      "INSERT INTO monitor(run_id, iteration, name, value) "
      "SELECT i.run_id, i.iteration, 'cpu.util_pct', 40 + i.iteration FROM iteration i");
}

// The golden fixture: job `fx`, cells seed=1..4, variants a (build v1) and b
// (build v2); b's seed=2 cell is run twice (pooled).
//   seed 1: b is a -10% throughput regression (latency +11%)
//   seed 2: identical samples: unchanged
//   seed 3: CoeffVar ~16%: inconclusive
//   seed 4: b is a +10% throughput improvement
class CompareFixture : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    db_ = dir_->path() + "/results.db";
    const char* a[] = {"100,102,98,101,99", "200,201,199,200,200", "50,60,40,55,45",
                       "100,101,99,100,100"};
    const char* b[] = {"90,91.8,88.2,90.9,89.1", "200,201,199,200,200", "52,61,42,57,47",
                       "110,111.1,108.9,110,110"};
    std::vector<std::string> ja = {"run", "--db", db_, "--variant", "a", "--build", "v1"};
    std::vector<std::string> jb = {"run", "--db", db_, "--variant", "b", "--build", "v2"};
    for (int i = 0; i < 4; ++i) {
      // The job name is the file stem: every file is fx.yaml, in its own directory.
      ja.push_back(dir_->write("a" + std::to_string(i + 1) + "/fx.yaml", job(a[i], i + 1)));
      jb.push_back(dir_->write("b" + std::to_string(i + 1) + "/fx.yaml", job(b[i], i + 1)));
    }
    run_ok(ja);
    run_ok(jb);
    run_ok({"run", "--db", db_, "--variant", "b", "--build", "v2", dir_->path() + "/b2/fx.yaml"});
    normalise(db_);
    // The scripted samples are the same in every run: the layouts are tested
    // on a testbox calibrated as such (issue 35; the sources of the
    // between-run variation: OneRunPerSideNamesItsBetweenRunSource).
    calibrate_quietly(db_);
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }

  static CommandResult compare(std::vector<std::string> extra) {
    std::vector<std::string> args = {"compare", "a", "b", "--db", db_, "--ignore-param", "script"};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_nightjar(args);
  }

  static TempDir* dir_;
  static std::string db_;
};
TempDir* CompareFixture::dir_ = nullptr;
std::string CompareFixture::db_;

TEST_F(CompareFixture, GoldenMmtests) {
  auto r = compare({});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_golden("compare.mmtests.txt", r.out);
}

TEST_F(CompareFixture, GoldenLkp) {
  auto r = compare({"--format", "lkp"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_golden("compare.lkp.txt", r.out);
}

TEST_F(CompareFixture, GoldenMarkdown) {
  auto r = compare({"--format", "markdown"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_golden("compare.md", r.out);
}

TEST_F(CompareFixture, GoldenJson) {
  auto r = compare({"--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_golden("compare.json", r.out);
}

TEST_F(CompareFixture, GoldenCsv) {
  auto r = compare({"--format", "csv"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_golden("compare.csv", r.out);
}

// --why (docs/monitors.md): vmstat.pgfault is 50 higher on b in every
// iteration (about +4.8%, CoeffVar 1.5%), cpu.util_pct equal on both sides.
TEST_F(CompareFixture, WhyListsTheMonitorRowsThatMovedAndNotTheOthers) {
  auto r = compare({"--why"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto at = r.out.find("what else changed, b vs a: 4 of 8 monitor rows moved");
  ASSERT_NE(at, std::string::npos) << r.out;
  const std::string block = r.out.substr(at);
  EXPECT_NE(block.find("vmstat.pgfault-1"), std::string::npos) << block;
  EXPECT_NE(block.find("+4."), std::string::npos) << block;
  EXPECT_EQ(block.find("cpu.util_pct"), std::string::npos) << block;

  auto json = compare({"--why", "--format", "json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_NE(json.out.find("\"why\""), std::string::npos);
  EXPECT_NE(json.out.find("\"name\": \"vmstat.pgfault\""), std::string::npos) << json.out;
  auto md = compare({"--why", "--format", "markdown"});
  ASSERT_EQ(md.exit_code, 0) << md.err;
  EXPECT_NE(md.out.find("### What else changed: b vs a"), std::string::npos) << md.out;
  auto csv = compare({"--why", "--format", "csv"});
  EXPECT_EQ(csv.exit_code, 2);
  EXPECT_NE(csv.err.find("--why: the csv layout"), std::string::npos) << csv.err;
  // Without --why nothing changes.
  EXPECT_EQ(compare({}).out.find("what else changed"), std::string::npos);
}

TEST_F(CompareFixture, VerdictLineComesFirstAndCountsEveryKeyMetric) {
  auto r = compare({});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.substr(0, r.out.find('\n')),
            "2 regressions, 2 improvements, 2 unchanged, 2 inconclusive");
  EXPECT_NE(r.out.find("Hmean     throughput-1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("*"), std::string::npos);
  EXPECT_NE(r.out.find("note: b: pooled 2 runs of fx [cv=0 fail_at=0 seed=2 sleep=0s value=100]"),
            std::string::npos)
      << r.out;
}

TEST_F(CompareFixture, CheckExitsOneWhenARegressionExistsEvenWithInconclusiveRows) {
  auto r = run_nightjar({"check", "a", "b", "--db", db_, "--ignore-param", "script"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("-> exit 1 (significant regression)"), std::string::npos) << r.err;
  auto f = compare({"--fail-on-regression"});
  EXPECT_EQ(f.exit_code, 1) << f.err;
  // A side against itself is refused: it always looks unchanged.
  auto same = run_nightjar({"check", "b", "b", "--db", db_, "--ignore-param", "script"});
  EXPECT_EQ(same.exit_code, 2) << same.out << same.err;
  EXPECT_NE(same.err.find("select the same runs"), std::string::npos) << same.err;
  // Two runs of one build (b's seed=2 cell, runs 6 and 9) with identical
  // samples: nothing moved, never 1.
  auto aa = run_nightjar({"check", "run=6", "run=9", "--db", db_, "--ignore-param", "script"});
  EXPECT_EQ(aa.exit_code, 0) << aa.out << aa.err;
  EXPECT_EQ(aa.out.substr(0, aa.out.find('\n')),
            "0 regressions, 0 improvements, 2 unchanged, 0 inconclusive");
}

TEST_F(CompareFixture, SelectorsAndNarrowing) {
  // Builds select the same runs as the variants here.
  auto r = run_nightjar({"compare", "build=v1", "variant=b,build=v2", "--db", db_, "--ignore-param",
                         "script", "--job", "fx", "--workload", "fake"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.substr(0, r.out.find('\n')),
            "2 regressions, 2 improvements, 2 unchanged, 2 inconclusive");
  // --ignore-param takes one name per flag, so selectors may follow it.
  auto order = run_nightjar({"compare", "--ignore-param", "script", "a", "b", "--db", db_});
  ASSERT_EQ(order.exit_code, 0) << order.err;
  EXPECT_EQ(order.out.substr(0, order.out.find('\n')),
            "2 regressions, 2 improvements, 2 unchanged, 2 inconclusive");
  // run=ID picks one run: one cell on each side.
  auto one = run_nightjar(
      {"compare", "run=1", "run=5", "--db", db_, "--ignore-param", "script", "--format", "csv"});
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_NE(one.out.find("metric,fake,fx,cv=0 fail_at=0 seed=1 sleep=0s value=100,throughput,"),
            std::string::npos)
      << one.out;
  // Three sides: one verdict per side against the first, over the cells
  // every side holds (run=9 holds only b's seed=2 cell, identical to a's).
  auto three =
      run_nightjar({"compare", "a", "b", "run=9", "--db", db_, "--ignore-param", "script"});
  ASSERT_EQ(three.exit_code, 0) << three.err;
  EXPECT_EQ(three.out.substr(0, three.out.find('\n')),
            "b: 0 regressions, 0 improvements, 2 unchanged, 0 inconclusive; "
            "run=9: 0 regressions, 0 improvements, 2 unchanged, 0 inconclusive");
  // Two selectors naming the same runs are refused, whatever their spelling.
  auto alias =
      run_nightjar({"compare", "a", "b", "variant=a", "--db", db_, "--ignore-param", "script"});
  EXPECT_EQ(alias.exit_code, 2) << alias.err;
}

TEST_F(CompareFixture, SelectorMatchingNothingIsAUsageErrorListingWhatExists) {
  auto r = run_nightjar({"check", "a", "c", "--db", db_});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("NEW selector 'c' matched no runs"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("variants a, b"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("builds v1, v2"), std::string::npos) << r.err;
  auto k = run_nightjar({"compare", "kernel=9.9", "b", "--db", db_});
  EXPECT_EQ(k.exit_code, 2) << k.err;
  EXPECT_NE(k.err.find("BASE selector 'kernel=9.9' matched no runs"), std::string::npos) << k.err;
  EXPECT_NE(k.err.find("kernels 6.1.0-test"), std::string::npos) << k.err;
}

TEST_F(CompareFixture, CellsOnlyOnOneSideAreListedNotAnError) {
  // Without --ignore-param the scripted cells differ except seed=2's.
  auto r = run_nightjar({"compare", "a", "b", "--db", db_});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.substr(0, r.out.find('\n')),
            "0 regressions, 0 improvements, 2 unchanged, 0 inconclusive");
  EXPECT_NE(r.out.find("note: unmatched: fx [cv=0 fail_at=0 script=100,102,98,101,99 seed=1"),
            std::string::npos)
      << r.out;
}

TEST_F(CompareFixture, ColourOnlyWhenAskedOrOnATerminal) {
  auto plain = compare({});
  EXPECT_EQ(plain.out.find('\033'), std::string::npos);  // stdout is a file
  auto always = compare({"--color", "always"});
  EXPECT_NE(always.out.find("\033[31m*"), std::string::npos) << always.out;  // regression: red
  EXPECT_NE(always.out.find("\033[32m*"), std::string::npos) << always.out;  // improvement: green
  auto lkp = compare({"--color=always", "--format", "lkp"});
  EXPECT_NE(lkp.out.find("\033[31m-10.0%\033[0m"), std::string::npos) << lkp.out;

  // On a terminal: colour by default, none with NO_COLOR or --color never.
  auto on_tty = [&](std::vector<std::string> extra, bool no_color) {
    std::vector<std::string> args = {NIGHTJAR_BINARY,  "compare", "a", "b", "--db", db_,
                                     "--ignore-param", "script"};
    args.insert(args.end(), extra.begin(), extra.end());
    int master = -1;
    pid_t pid = forkpty(&master, nullptr, nullptr, nullptr);
    if (pid == 0) {
      if (no_color)
        setenv("NO_COLOR", "1", 1);
      else
        unsetenv("NO_COLOR");
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
    std::string out;
    char buf[4096];
    for (;;) {
      ssize_t n = read(master, buf, sizeof buf);
      if (n <= 0) break;  // EIO once the child has exited
      out.append(buf, static_cast<std::size_t>(n));
    }
    close(master);
    EXPECT_EQ(wait_exit_code(pid), 0);
    return out;
  };
  EXPECT_NE(on_tty({}, false).find("\033[31m*"), std::string::npos);
  EXPECT_EQ(on_tty({}, true).find('\033'), std::string::npos);
  EXPECT_EQ(on_tty({"--color", "never"}, false).find('\033'), std::string::npos);
  EXPECT_NE(on_tty({"--color", "always"}, true).find("\033[31m*"), std::string::npos);
}

TEST_F(CompareFixture, OptionsChangeTheRule) {
  // A 50% minimum effect: the 10% changes no longer count, and the data of
  // every row could have shown 50%: no regression, exit 0.
  auto r = run_nightjar(
      {"check", "a", "b", "--db", db_, "--ignore-param", "script", "--min-effect", "50"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out.substr(0, r.out.find('\n')),
            "0 regressions, 0 improvements, 8 unchanged, 0 inconclusive");
  // mmtests' interval rule still stars the 10% changes at CoeffVar <= 2%.
  auto m = compare({"--test", "mmtests"});
  ASSERT_EQ(m.exit_code, 0) << m.err;
  EXPECT_NE(m.out.find("*"), std::string::npos);
  auto w = compare({"--width", "14", "--precision", "4"});
  EXPECT_NE(w.out.find("Hmean     throughput-1           99.9800 (   0.00%)"), std::string::npos)
      << w.out;
}

// ---- check exit codes on databases of their own ---------------------------

struct TwoSides {
  TempDir dir;
  std::string db = dir.path() + "/r.db";
  void run(const std::string& variant, const std::string& script, int iterations) {
    std::string path = dir.write(variant + "/fx.yaml", job(script, 1, iterations));
    auto r = run_nightjar({"run", path, "--db", db, "--variant", variant});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  // check's exit codes on a testbox calibrated as one whose runs do not
  // differ (the scripted samples are the same in every run).
  CommandResult check(std::vector<std::string> extra = {}) {
    calibrate_quietly(db);
    std::vector<std::string> args = {"check", "a", "b", "--db", db, "--ignore-param", "script"};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_nightjar(args);
  }
};

TEST(CheckExitCodes, EqualConstantSamplesAreUnchangedExitZero) {
  TwoSides t;
  t.run("a", "100", 5);
  t.run("b", "100", 5);
  auto r = t.check();
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out.substr(0, r.out.find('\n')),
            "0 regressions, 0 improvements, 2 unchanged, 0 inconclusive");
  EXPECT_NE(r.err.find("-> exit 0 (no significant regression)"), std::string::npos) << r.err;
}

TEST(CheckExitCodes, LowNoiseEqualMeansAreUnchangedExitZero) {
  TwoSides t;  // CoeffVar 0.25%, 10 iterations: could see a 1% change, saw none
  t.run("a", "1000,1002,998,1003,997,1001,999,1000,1004,996", 10);
  t.run("b", "1001,999,1003,997,1000,1002,998,1004,996,1000", 10);
  auto r = t.check();
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

TEST(CheckExitCodes, PlantedRegressionExitsOne) {
  TwoSides t;
  t.run("a", "100,101,99,100.5,99.5", 5);
  t.run("b", "95,96,94,95.5,94.5", 5);
  auto r = t.check();
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_EQ(r.out.substr(0, r.out.find('\n')),
            "2 regressions, 0 improvements, 0 unchanged, 0 inconclusive");
  // The improvement direction is not a regression.
  auto back = run_nightjar({"check", "b", "a", "--db", t.db, "--ignore-param", "script"});
  EXPECT_EQ(back.exit_code, 0) << back.out << back.err;
  // compare alone reports but exits 0.
  auto c = run_nightjar({"compare", "a", "b", "--db", t.db, "--ignore-param", "script"});
  EXPECT_EQ(c.exit_code, 0) << c.err;
}

TEST(CheckExitCodes, TwoSamplesPerSideAreInconclusiveExitThree) {
  TwoSides t;
  t.run("a", "100,101", 2);
  t.run("b", "95,96", 2);
  auto r = t.check();
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.out.find("fewer than 3 samples per side"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("-> exit 3 (inconclusive key metrics)"), std::string::npos) << r.err;
}

TEST(CheckExitCodes, HugeNoiseIsInconclusiveExitThree) {
  TwoSides t;
  t.run("a", "50,150,100,60,140", 5);
  t.run("b", "45,140,90,55,130", 5);
  auto r = t.check();
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.out.find("per side at CV"), std::string::npos) << r.out;
}

TEST(CheckExitCodes, SideWithOnlySkippedRunsIsInconclusive) {
  TwoSides t;
  t.run("a", "100", 3);
  std::string path = t.dir.write("b/fx.yaml", "workload: fake\nparams:\n  skip: no unicorn\n");
  ASSERT_EQ(run_nightjar({"run", path, "--db", t.db, "--variant", "b"}).exit_code, 0);
  auto r = t.check();
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("NEW selector 'b' matched 1 run(s) but none has samples"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("skipped: no unicorn"), std::string::npos) << r.err;
}

TEST(CheckExitCodes, UsageErrorsExitTwo) {
  TwoSides t;
  t.run("a", "100", 3);
  t.run("b", "100", 3);
  struct Case {
    std::vector<std::string> args;
    const char* says;
  } cases[] = {
      {{"check", "", "b", "--db", t.db}, "selector '': it is empty"},
      {{"check", "colour=red", "b", "--db", t.db}, "unknown key 'colour'"},
      {{"check", "a", "run=x", "--db", t.db}, "not a run id"},
      {{"compare", "a", "--db", t.db}, "give a BASE and at least one NEW"},
      {{"check", "a", "b", "--db", t.db, "--alpha", "2"}, "--alpha"},
      {{"check", "a", "b", "--db", t.db, "--min-effect=-1"}, "--min-effect"},
      {{"check", "a", "b", "--db", t.db, "--format", "xml"}, "--format"},
      {{"check", "a", "b", "--db", t.db, "--test", "ttest"}, "--test"},
      {{"check", "a", "b", "--db", t.db, "--job", "other"}, "matched no runs (with --job other)"},
      {{"compare", "a", "a", "--db", t.db}, "sides 1 ('a') and 2 ('a') select the same runs"},
      {{"check", "a", "variant=a", "--db", t.db}, "select the same runs"},
      {{"report", "b", "a", "b", "--db", t.db}, "sides 1 ('b') and 3 ('b')"},
  };
  for (const auto& c : cases) {
    auto r = run_nightjar(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.says << ": " << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
  }
  // A missing database is a usage error (2: the path names nothing), and is
  // not created.
  auto none = run_nightjar({"check", "a", "b", "--db", t.dir.path() + "/none.db"});
  EXPECT_EQ(none.exit_code, 2) << none.err;
  EXPECT_NE(none.err.find("no results database at"), std::string::npos) << none.err;
  EXPECT_FALSE(std::ifstream(t.dir.path() + "/none.db").good());  // not created
}

// Issue 16 and 20 end to end: the sender's runs (imported from a CSV
// export whose testbox is another machine's, as a bundle brings them) are
// compared with the receiver's own run, measured under qemu TCG (the run fact
// vm.accelerator=tcg that `run --kernel` records). Every text layout notes
// the two testboxes, and every layout marks the TCG figures.
TEST(CompareCli, TcgRunAgainstTheSendersRunsOnAnotherTestbox) {
  TempDir dir;
  const std::string sender = dir.path() + "/s.db", receiver = dir.path() + "/r.db";
  run_ok({"run", "--db", sender, "--variant", "theirs",
          dir.write("s/fx.yaml", job("100,102,98,101,99", 1))});
  auto exported = run_nightjar({"export", "--db", sender});
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  // The sender's testbox: replace this host's name in the testbox column.
  std::string csv = exported.out;
  const auto header_end = csv.find('\n');
  std::vector<std::string> header;
  for (auto f : nightjar::split(csv.substr(0, header_end), ',')) header.emplace_back(f);
  const auto column = std::find(header.begin(), header.end(), "testbox") - header.begin();
  const auto first_row =
      csv.substr(header_end + 1, csv.find('\n', header_end + 1) - header_end - 1);
  // The fields up to the testbox hold no quoted comma except the script.
  std::string host;
  {
    std::vector<std::string> fields;
    std::string field;
    bool quoted = false;
    for (char ch : first_row) {
      if (ch == '"') quoted = !quoted;
      if (ch == ',' && !quoted) {
        fields.push_back(field);
        field.clear();
      } else {
        field += ch;
      }
    }
    fields.push_back(field);
    ASSERT_GT(fields.size(), std::size_t(column));
    host = fields[column];
  }
  ASSERT_FALSE(host.empty());
  for (auto at = csv.find("," + host + ","); at != std::string::npos;
       at = csv.find("," + host + ",", at + 1))
    csv.replace(at + 1, host.size(), "sender-box");
  auto imported = run_nightjar({"import", "--db", receiver, dir.write("s.csv", csv)});
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  run_ok({"run", dir.write("r/fx.yaml", job("90,91.8,88.2,90.9,89.1", 1)), "--db", receiver,
          "--variant", "mine", "--context", "vm.accelerator=tcg"});
  calibrate_quietly(receiver);  // the tags are tested, not the between-run model

  const std::string testboxes =
      "sides ran on different testboxes: theirs (sender-box) vs mine (" + host + ")";
  const std::string tcg = "[TCG] TCG: measures emulation: mine ran under qemu TCG";
  auto compare = [&](const std::string& format) {
    auto r = run_nightjar({"compare", "--db", receiver, "theirs", "mine", "--ignore-param",
                           "script", "--format", format});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  };
  const std::string mm = compare("mmtests");
  EXPECT_NE(mm.find("warning: " + testboxes), std::string::npos) << mm;
  EXPECT_NE(mm.find("warning: " + tcg), std::string::npos) << mm;
  EXPECT_NE(mm.find("89.98 * -10.00%* [TCG]\n"), std::string::npos) << mm;
  EXPECT_NE(mm.find("\nn         throughput"), std::string::npos) << mm;
  const std::string lkp = compare("lkp");
  EXPECT_NE(lkp.find("warning: " + testboxes), std::string::npos) << lkp;
  EXPECT_NE(lkp.find("theirs (n=5)     mine (n=5)\n"), std::string::npos) << lkp;
  EXPECT_NE(lkp.find("  fake.throughput [TCG]\n"), std::string::npos) << lkp;
  const std::string md = compare("markdown");
  EXPECT_NE(md.find("> warning: " + testboxes), std::string::npos) << md;
  EXPECT_NE(md.find(" (5) [TCG] |"), std::string::npos) << md;
  const std::string json = compare("json");
  EXPECT_NE(json.find(testboxes), std::string::npos) << json;
  EXPECT_NE(json.find("\"emulated\": true"), std::string::npos) << json;
  const std::string out_csv = compare("csv");
  EXPECT_NE(out_csv.find(",base_emulated,new_emulated\n"), std::string::npos) << out_csv;
  EXPECT_NE(out_csv.find(",0,1\n"), std::string::npos) << out_csv;

  auto report =
      run_nightjar({"report", "--db", receiver, "theirs", "mine", "--ignore-param", "script"});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  EXPECT_NE(report.out.find("mine    90.0 ops/s (10.0% regression) [TCG]\n"), std::string::npos)
      << report.out;
  EXPECT_NE(report.out.find("Warning: [TCG] TCG: measures emulation"), std::string::npos)
      << report.out;
  EXPECT_NE(report.out.find("Warning: sides ran on different testboxes"), std::string::npos)
      << report.out;
  for (const auto& line : nightjar::split(report.out, '\n')) EXPECT_LE(line.size(), 72u) << line;
}

// Issue 19's table end to end: values of 1e9-1e12 (a Google Benchmark
// items_per_second, a byte count) in runs of another tool imported from CSV, with hyphenated
// variant and kernel names. Every value column is as wide as its widest
// value, so no value runs into its label; the header rows hold the kernel
// release and the variant whole (golden tests/golden/compare.mmtests.big.txt).
TEST(CompareCli, GoldenMmtestsWithValuesUpTo1e12AndHyphenatedNames) {
  TempDir dir;
  std::string csv =
      "run,job,workload,param.size,variant,build,kernel,testbox,started_at,iteration,metric,unit,"
      "direction,mean,value\n";
  const struct {
    int run;
    const char* variant;
    double items, bytes;
  } runs[] = {{1, "vanilla", 2002014322.17, 536870912},
              {2, "mm-pcpspinirq-v5r16", 1083688045.95, 999999999999.5}};
  for (const auto& r : runs)
    for (int i = 1; i <= 5; ++i) {
      const std::string head = std::to_string(r.run) + ",BM_sum,microbench,16384," + r.variant +
                               ",,6.18.44-fc-v669,box1,2026-11-30T08:4" + std::to_string(r.run) +
                               ":00Z," + std::to_string(i) + ",";
      csv += head + "bytes,B,higher,amean," + fmt_double(r.bytes * (1 + 0.001 * i)) + "\n";
      csv += head + "items_per_second,items/s,higher,hmean," +
             fmt_double(r.items * (1 + 0.002 * (i - 3))) + "\n";
    }
  const std::string db = dir.path() + "/big.db";
  auto imported = run_nightjar({"import", "--db", db, dir.write("big.csv", csv)});
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  auto r = run_nightjar({"compare", "--db", db, "vanilla", "mm-pcpspinirq-v5r16"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_golden("compare.mmtests.big.txt", r.out);
  // Every line of the table up to the n lines is as long as the header: the
  // columns line up; a blank separates each value from what is before it.
  const auto lines = nightjar::split(r.out, '\n');
  std::size_t header = 0;
  while (header < lines.size() && lines[header].find("6.18.44-fc-v669") == std::string::npos)
    ++header;
  ASSERT_LT(header + 2, lines.size()) << r.out;
  EXPECT_NE(lines[header + 1].find(" mm-pcpspinirq-v5r16"), std::string::npos) << r.out;
  for (std::size_t i = header + 2; i < lines.size() && !lines[i].starts_with("n "); ++i) {
    EXPECT_EQ(lines[i].size(), lines[header].size()) << lines[i];
    EXPECT_EQ(lines[i].find("second2"), std::string::npos) << lines[i];
  }
}

}  // namespace

// Issue 35's check 2, end to end: one run per side is tested with the
// between-run variation of the first source that has it, and every layout
// says which: the prior in a fresh database, this cell's history once the
// cell has repeated runs of one build (the compared runs left out), the
// testbox's calibration once `nightjar calibrate` ran.
TEST(CompareCli, OneRunPerSideNamesItsBetweenRunSource) {
  TempDir dir;
  const std::string db = dir.path() + "/h.db";
  const std::string j = dir.write("fx.yaml",
                                  "workload: fake\nparams:\n  value: 1000\n  cv: 2\n"
                                  "  seed: 1\niterations: 5\nwarmup: 0\n");
  run_ok({"run", j, "--db", db, "--build", "b1"});
  run_ok({"run", j, "--db", db, "--build", "b2"});
  auto prior = run_nightjar({"compare", "--db", db, "build=b1", "build=b2"});
  ASSERT_EQ(prior.exit_code, 0) << prior.err;
  EXPECT_NE(prior.out.find("warning: one run on a side and run-to-run variation not measured"),
            std::string::npos)
      << prior.out;
  EXPECT_NE(prior.out.find("2 row(s) with one run on a side tested with the between-run variation "
                           "from the conservative prior (CoeffVar 10%)"),
            std::string::npos)
      << prior.out;
  auto json = run_nightjar({"compare", "--db", db, "build=b1", "build=b2", "--format", "json"});
  EXPECT_NE(json.out.find("\"between_source\": \"prior\""), std::string::npos) << json.out;

  run_ok({"run", j, "--db", db, "--build", "h", "--runs", "10"});
  auto hist = run_nightjar({"compare", "--db", db, "build=b1", "build=b2"});
  ASSERT_EQ(hist.exit_code, 0) << hist.err;
  EXPECT_NE(hist.out.find("2 row(s) with one run on a side tested with the between-run variation "
                          "from this cell's history (10 runs)"),
            std::string::npos)
      << hist.out;
  EXPECT_EQ(hist.out.find("warning: one run on a side"), std::string::npos) << hist.out;
  auto md = run_nightjar({"compare", "--db", db, "build=b1", "build=b2", "--format", "markdown"});
  EXPECT_NE(md.out.find("this cell's history (10 runs)"), std::string::npos) << md.out;
  // Two of the history's own runs compared: they are left out, the 8 others vouch.
  auto self = run_nightjar({"compare", "--db", db, "run=3", "run=4"});
  EXPECT_NE(self.out.find("from this cell's history (8 runs)"), std::string::npos) << self.out;

  run_ok({"calibrate", j, "--db", db, "--pairs", "2"});
  auto cal = run_nightjar({"compare", "--db", db, "build=b1", "build=b2"});
  EXPECT_NE(cal.out.find("2 row(s) with one run on a side tested with the between-run variation "
                         "from this testbox's calibration (`nightjar calibrate`)"),
            std::string::npos)
      << cal.out;
}
