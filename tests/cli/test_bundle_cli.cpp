// Unit under test: `nightjar bundle` and `nightjar import FILE.tar.gz` end to
// end (docs/publish.md "Bundles"): a two-variant fake comparison bundled,
// imported into a fresh database, compared there with the same verdicts and
// numbers; runs with monitor rows, an invalid iteration, a confounder and
// two kernel configs compare byte for byte alike on both sides in every
// layout (bundle format 2); a second import adds nothing; --text prints the
// report table; bad archives are usage errors naming the file.
#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "results/model/identity.h"
#include "test_support.h"

using namespace nightjar::test;

namespace {

std::string job(const std::string& script) {
  return "workload: fake\nparams:\n  script: \"" + script +
         "\"\n  seed: 1\niterations: 5\nwarmup: 0\n";
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
  EXPECT_NE(cs.out.find("throughput"), std::string::npos) << cs.out;
  EXPECT_EQ(cs.out, cr.out);
}

// A bundle of format 1 (samples.csv alone, as nightjar wrote before format
// 2) imports as before: the samples, no monitor rows. A newer format is
// refused naming the file and the member, and stores nothing.
TEST(BundleCli, FormatOneImportsAsBeforeAndANewerFormatIsRefused) {
  TempDir dir;
  const std::string sender = dir.path() + "/s.db";
  ASSERT_EQ(run_nightjar({"run", "--db", sender, "--variant", "a",
                          dir.write("a/fx.yaml", job("100,102,98,101,99"))})
                .exit_code,
            0);
  auto csv = run_nightjar({"export", "--db", sender, "--include-invalid"});
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  dir.write("old/samples.csv", csv.out);
  dir.write("old/README.txt", "a format 1 bundle\n");
  dir.write("new/samples.csv", csv.out);
  dir.write("new/FORMAT", "3\n");
  const std::string tar = "tar -C " + dir.path() + "/";
  ASSERT_EQ(
      std::system((tar + "old -czf " + dir.path() + "/old.tar.gz README.txt samples.csv").c_str()),
      0);
  ASSERT_EQ(
      std::system((tar + "new -czf " + dir.path() + "/new.tar.gz FORMAT samples.csv").c_str()), 0);

  const std::string receiver = dir.path() + "/r.db";
  auto old = run_nightjar({"import", "--db", receiver, dir.path() + "/old.tar.gz"});
  ASSERT_EQ(old.exit_code, 0) << old.err;
  EXPECT_NE(old.out.find("imported 1 run(s) (id 1), 10 samples"), std::string::npos) << old.out;
  {
    SQLite::Database d(receiver, SQLite::OPEN_READONLY);
    EXPECT_EQ(d.execAndGet("SELECT count(*) FROM monitor").getInt(), 0);
    EXPECT_EQ(d.execAndGet("SELECT count(*) FROM kernel_config").getInt(), 0);
  }
  const std::string fresh = dir.path() + "/f.db";
  auto newer = run_nightjar({"import", "--db", fresh, dir.path() + "/new.tar.gz"});
  EXPECT_EQ(newer.exit_code, 2) << newer.err;
  EXPECT_NE(newer.err.find("new.tar.gz: FORMAT: bundle format 3 is newer than this nightjar"),
            std::string::npos)
      << newer.err;
  EXPECT_FALSE(std::ifstream(fresh).good()) << "a refused bundle created the database";
}

// Gives variant b's runs what compare reads besides samples and what the
// fake workload cannot vary: another kernel config (its text stored, so that
// the environment section lists the options that differ) and a confounder
// fact (thp.enabled), on top of the real monitor rows every run stored.
void give_b_another_environment(const std::string& db) {
  SQLite::Database d(db, SQLite::OPEN_READWRITE);
  const std::string a_config = "CONFIG_A=y\n# CONFIG_B is not set\nCONFIG_HZ=250\n";
  const std::string b_config = "CONFIG_A=y\nCONFIG_B=y\nCONFIG_HZ=1000\n";
  for (const auto& [variant, text] : {std::pair{"a", a_config}, std::pair{"b", b_config}}) {
    const std::string hash = nightjar::fnv1a64_hex(text);
    SQLite::Statement c(d,
                        "INSERT OR REPLACE INTO kernel_config(hash, source, text) VALUES(?,?,?)");
    c.bind(1, hash);
    c.bind(2, "/proc/config.gz");
    c.bind(3, text);
    c.exec();
    SQLite::Statement k(d,
                        "INSERT INTO kernel(release, version, cmdline, config_hash) "
                        "SELECT release, version, cmdline, ? FROM kernel ORDER BY id LIMIT 1");
    k.bind(1, hash);
    k.exec();
    SQLite::Statement r(d, "UPDATE run SET kernel_id=? WHERE variant=?");
    r.bind(1, d.getLastInsertRowid());
    r.bind(2, variant);
    r.exec();
  }
  d.exec(
      "INSERT OR REPLACE INTO run_context(run_id, key, value) "
      "SELECT id, 'thp.enabled', CASE variant WHEN 'a' THEN 'always' ELSE 'never' END FROM run");
}

// Issue 36 check 3: runs made with --set from a job in another directory,
// bundled from yet another working directory and imported into a fresh
// database compare there exactly as at the sender, in every layout: the
// bundle carries the monitor deltas, iteration rows, run facts, kernel and
// testbox identity and kernel configs (format 2). Nothing printed names the
// database, so nothing is left out of the comparison.
TEST(BundleCli, ReceiverComparesByteForByteLikeTheSender) {
  TempDir dir;
  const std::string sender = dir.path() + "/s.db", receiver = dir.path() + "/r.db";
  dir.write("jobs/fx.yaml",
            "workload: fake\nparams:\n  value: 100\n  cv: 2\n  seed: 1\niterations: 4\n"
            "warmup: 0\n");
  dir.write("work/.keep", "");
  dir.write("elsewhere/.keep", "");
  const std::vector<std::string> in_work = {"env", "-C", dir.path() + "/work"};
  auto a = run_nightjar_under(
      in_work, {"run", "../jobs/fx.yaml", "--db", sender, "--variant", "a", "--set", "seed=3"});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  auto b = run_nightjar_under(in_work, {"run", "../jobs/fx.yaml", "--db", sender, "--variant", "b",
                                        "--set", "value=108", "--set", "invalid_at=2"});
  ASSERT_EQ(b.exit_code, 0) << b.err;
  {
    SQLite::Database d(sender, SQLite::OPEN_READONLY);
    ASSERT_GT(d.execAndGet("SELECT count(*) FROM monitor").getInt(), 0)
        << "the runs stored no monitor rows: the test would not test them";
  }
  give_b_another_environment(sender);

  const std::string bundle = dir.path() + "/repro.tar.gz";
  const std::vector<std::string> ignore = {"--ignore-param", "value",          "--ignore-param",
                                           "seed",           "--ignore-param", "invalid_at"};
  std::vector<std::string> make = {"bundle", "--db", sender, "a", "b", "-o", bundle};
  make.insert(make.end(), ignore.begin(), ignore.end());
  auto made = run_nightjar_under({"env", "-C", dir.path() + "/elsewhere"}, make);
  ASSERT_EQ(made.exit_code, 0) << made.err;
  auto imported = run_nightjar({"import", "--db", receiver, bundle});
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  EXPECT_NE(imported.out.find("imported 2 run(s)"), std::string::npos) << imported.out;

  const std::vector<std::vector<std::string>> layouts = {{},
                                                         {"--format", "mmtests"},
                                                         {"--format", "markdown"},
                                                         {"--format", "json"},
                                                         {"--format", "csv"},
                                                         {"--why"},
                                                         {"--why", "--format", "json"}};
  for (const auto& layout : layouts) {
    auto compare = [&](const std::string& db) {
      std::vector<std::string> args = {"compare", "--db", db, "a", "b"};
      args.insert(args.end(), ignore.begin(), ignore.end());
      args.insert(args.end(), layout.begin(), layout.end());
      return run_nightjar(args);
    };
    const auto cs = compare(sender), cr = compare(receiver);
    const std::string name = layout.empty() ? "(default)" : layout.back();
    EXPECT_EQ(cs.exit_code, cr.exit_code) << name << "\n" << cs.err << cr.err;
    EXPECT_EQ(cs.out, cr.out) << name;
    EXPECT_FALSE(cs.out.empty()) << name << cs.err;
  }
  // What the sides differ in reached the receiver: the confounder, the
  // kernel configs' options and the monitor rows.
  auto text = run_nightjar({"compare", "--db", receiver, "a", "b", "--ignore-param", "value",
                            "--ignore-param", "seed", "--ignore-param", "invalid_at"});
  EXPECT_NE(text.out.find("thp.enabled"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("CONFIG_HZ"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("vmstat."), std::string::npos) << text.out;

  auto again = run_nightjar({"import", "--db", receiver, bundle});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("imported 0 run(s), 0 samples"), std::string::npos) << again.out;
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
