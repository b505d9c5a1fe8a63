// Unit under test: the environment diff end to end (docs/environment.md):
// `nightjar env --diff`, compare's environment section and confounder
// warning, `check --strict-env` (exit 5) and `--accept-env`, on a database
// written by the real binary with facts then changed in the database (a THP
// difference faked, as nothing here may change the machine's THP).
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "test_support.h"

using namespace nightjar::test;

namespace {

constexpr const char* kJob =
    "workload: fake\nparams:\n  script: \"10,10,10\"\n  seed: 1\niterations: 3\nwarmup: 0\n";
constexpr const char* kThpKnob = "knob./sys/kernel/mm/transparent_hugepage/enabled";

class EnvironmentCli : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = dir_.path() + "/env.db";
    const std::string job = dir_.write("envjob.yaml", kJob);
    for (const char* variant : {"a", "b"}) {
      auto r = run_nightjar({"run", job, "--db", db_, "--variant", variant});
      ASSERT_EQ(r.exit_code, 0) << r.err;
    }
    a_ = query_one(db_, "SELECT id FROM run WHERE variant='a'");
    b_ = query_one(db_, "SELECT id FROM run WHERE variant='b'");
  }
  // Sets fact `key` of the run of variant a and b (one run each).
  void set_fact(const std::string& key, const std::string& a, const std::string& b) {
    for (const auto& [run, value] : {std::pair{a_, a}, std::pair{b_, b}})
      exec_sql(db_, "INSERT OR REPLACE INTO run_context(run_id, key, value) VALUES(" + run + ", '" +
                        key + "', '" + value + "')");
  }
  CommandResult check(std::vector<std::string> extra = {}) {
    std::vector<std::string> args{"check", "a", "b", "--db", db_, "--strict-env"};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_nightjar(args);
  }
  TempDir dir_;
  std::string db_, a_, b_;
};

TEST_F(EnvironmentCli, NothingChangedNoSectionNoWarningNoStrictExit) {
  auto c = run_nightjar({"compare", "a", "b", "--db", db_});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_EQ(c.out.find("environment"), std::string::npos) << c.out;
  auto r = check();
  EXPECT_NE(r.exit_code, 5) << r.err;
  EXPECT_EQ(r.err.find("--strict-env"), std::string::npos) << r.err;
  auto d = run_nightjar({"env", "--diff", "a", "b", "--db", db_});
  ASSERT_EQ(d.exit_code, 0) << d.err;
  EXPECT_EQ(d.out, "no environment facts differ between a and b\n");
  auto report = run_nightjar({"report", "a", "b", "--db", db_});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  EXPECT_EQ(report.out.find("Environment"), std::string::npos) << report.out;
}

TEST_F(EnvironmentCli, ThpChangedByHandIsAConfounder) {
  set_fact("thp.enabled", "always", "never");
  auto c = run_nightjar({"compare", "a", "b", "--db", db_});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_NE(c.out.find("warning: environment: b differs from a in thp.enabled (always -> never)"),
            std::string::npos)
      << c.out;
  EXPECT_NE(c.out.find("\nenvironment:\n"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("confounder  thp.enabled  always -> never"), std::string::npos) << c.out;
  for (const char* format : {"lkp", "markdown", "json"}) {
    auto f = run_nightjar({"compare", "a", "b", "--db", db_, "--format", format});
    EXPECT_NE(f.out.find("thp.enabled (always -> never)"), std::string::npos) << format << f.out;
  }

  auto r = check();
  EXPECT_EQ(r.exit_code, 5) << r.err;
  EXPECT_NE(r.err.find("b: thp.enabled"), std::string::npos) << r.err;
  // Without --strict-env the verdict decides; accepted, it is listed but silent.
  EXPECT_NE(run_nightjar({"check", "a", "b", "--db", db_}).exit_code, 5);
  auto accepted = check({"--accept-env", "thp.enabled"});
  EXPECT_NE(accepted.exit_code, 5) << accepted.err;
  EXPECT_EQ(accepted.out.find("warning: environment"), std::string::npos) << accepted.out;
  EXPECT_NE(accepted.out.find("accepted    thp.enabled"), std::string::npos) << accepted.out;

  auto d = run_nightjar({"env", "--diff", "a", "b", "--db", db_});
  ASSERT_EQ(d.exit_code, 0) << d.err;
  EXPECT_NE(d.out.find("BASE a vs NEW b: 1 fact differs (0 intended, 1 confounder)"),
            std::string::npos)
      << d.out;
}

// The same confounder in the changelog report (and so in the bundle's post
// body, which is that report) and on the published comparison page.
TEST_F(EnvironmentCli, ReportBundleAndSiteCarryTheEnvironmentSection) {
  set_fact("thp.enabled", "always", "never");
  set_fact("vuln.spectre_v2",
           "Mitigation: Retpolines; IBPB: conditional; IBRS_FW; STIBP: disabled; RSB filling; "
           "PBRSB-eIBRS: Not affected; BHI: Not affected",
           "Vulnerable; IBPB: disabled; STIBP: disabled; PBRSB-eIBRS: Not affected");
  auto r = run_nightjar({"report", "a", "b", "--db", db_});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\nEnvironment (what else differed between the sides):\n"
                       "  BASE a vs NEW b: 2 facts differ (0 intended, 2 confounders)\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("    confounder  thp.enabled      always -> never\n"), std::string::npos)
      << r.out;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);)
    EXPECT_LE(line.size(), 72u) << "changelog line too wide: " << line;
  auto md = run_nightjar({"report", "a", "b", "--db", db_, "--format", "markdown"});
  ASSERT_EQ(md.exit_code, 0) << md.err;
  EXPECT_NE(md.out.find("```\n  BASE a vs NEW b: 2 facts differ"), std::string::npos) << md.out;
  auto bundle = run_nightjar({"bundle", "a", "b", "--db", db_, "--text"});
  ASSERT_EQ(bundle.exit_code, 0) << bundle.err;
  EXPECT_NE(bundle.out.find("confounder  thp.enabled      always -> never"), std::string::npos)
      << bundle.out;

  const std::string site = dir_.path() + "/site";
  auto p = run_nightjar({"publish", "--db", db_, "-o", site, "--compare", "a b"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_NE(read_file(site + "/index.html").find("(2 environment confounders)"), std::string::npos);
  std::string page;
  for (const auto& e : std::filesystem::directory_iterator(site + "/compare"))
    page += read_file(e.path().string());
  EXPECT_NE(page.find("<h2>Environment: b against a</h2>"), std::string::npos) << page;
  EXPECT_NE(page.find("<tr class=\"fact-row confounder\"><td class=\"confounder\">confounder</td>"
                      "<td>thp.enabled</td><td>always</td><td>never</td></tr>"),
            std::string::npos)
      << page;
}

TEST_F(EnvironmentCli, ThpAsADeclaredVariantIsIntended) {
  set_fact("thp.enabled", "always", "never");
  set_fact(kThpKnob, "always", "never");
  auto c = run_nightjar({"compare", "a", "b", "--db", db_});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_EQ(c.out.find("warning: environment"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("intended    thp.enabled"), std::string::npos) << c.out;
  auto r = check();
  EXPECT_NE(r.exit_code, 5) << r.err;
}

TEST_F(EnvironmentCli, FactsThatAlwaysDifferAreNeverListed) {
  set_fact("load.avg1", "0.10", "3.50");
  set_fact("min_effect", "1", "5");
  set_fact("job.set", "x=1", "x=2");
  auto d = run_nightjar({"env", "--diff", "a", "b", "--db", db_});
  EXPECT_EQ(d.out, "no environment facts differ between a and b\n");
}

TEST_F(EnvironmentCli, KernelConfigsDiffLikeDiffconfig) {
  exec_sql(db_,
           "INSERT INTO kernel(release, version, cmdline, config_hash) "
           "SELECT release, version, cmdline, 'h2' FROM kernel LIMIT 1;"
           "UPDATE kernel SET config_hash='h1' WHERE id=(SELECT min(id) FROM kernel);"
           "UPDATE run SET kernel_id=(SELECT max(id) FROM kernel) WHERE id=" +
               b_ +
               ";"
               "INSERT OR REPLACE INTO kernel_config(hash, source, text) VALUES"
               "('h1', '/proc/config.gz', 'CONFIG_PREEMPT_VOLUNTARY=y\n# CONFIG_PREEMPT_RT is "
               "not set\nCONFIG_HZ=250\n'),"
               "('h2', '/proc/config.gz', '# CONFIG_PREEMPT_VOLUNTARY is not set\n"
               "CONFIG_PREEMPT_RT=y\nCONFIG_HZ=250\nCONFIG_RCU_BOOST=y\n')");
  auto d = run_nightjar({"env", "--diff", "a", "b", "--db", db_});
  ASSERT_EQ(d.exit_code, 0) << d.err;
  EXPECT_NE(d.out.find("kernel config: 3 options differ (0 removed, 1 added, 2 changed)\n"
                       "changed (2):\n"
                       "  CONFIG_PREEMPT_RT n -> y\n"
                       "  CONFIG_PREEMPT_VOLUNTARY y -> n\n"
                       "added (1):\n"
                       "  +CONFIG_RCU_BOOST y\n"),
            std::string::npos)
      << d.out;
  // The variants are not kernels: the config hash is a confounder.
  EXPECT_NE(d.out.find("confounder  kernel.config_hash"), std::string::npos) << d.out;
  auto c = run_nightjar({"compare", "a", "b", "--db", db_});
  EXPECT_NE(c.out.find("    kernel config: 3 options differ"), std::string::npos) << c.out;
}

TEST_F(EnvironmentCli, BadInputIsAUsageError) {
  auto r = check({"--accept-env", "thp.enabeld"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("'thp.enabeld' is not an environment fact"), std::string::npos) << r.err;
  EXPECT_EQ(run_nightjar({"env", "--diff", "a", "--db", db_}).exit_code, 2);
  EXPECT_EQ(run_nightjar({"env", "--db", db_}).exit_code, 2);
  EXPECT_EQ(run_nightjar({"env", "--diff", "a", "nosuch", "--db", db_}).exit_code, 2);
}

}  // namespace
