// Unit under test: variant knobs on the real kernel (harness/job/variants.h and
// the runner's variant loop), through the real `nightjar` binary: pft with
// THP variants stores the value in force with each run, and the sysfs value
// afterwards equals the value before — after a normal end, with
// --interleave, and after SIGINT. Skips (77) without root or without a
// writable /sys/kernel/mm/transparent_hugepage/enabled.
//
// All THP checks (also the refused write) live in one TEST on purpose: ctest runs tests in
// parallel, and two tests changing THP at once would see each other's values as "before".
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include "harness/job/variants.h"
#include "results/model/exit_codes.h"
#include "test_support.h"
#include "workloads/sys/probe.h"

using namespace nightjar;
using namespace nightjar::test;

namespace {

const std::string kThp = "/sys/kernel/mm/transparent_hugepage/enabled";

std::string thp_now() {
  return bracketed_selection(read_file(kThp));
}

std::string skip_reason() {
  if (geteuid() != 0) return "needs root (writes " + kThp + "); run the needs-root tests as root";
  if (access(kThp.c_str(), W_OK) != 0) return kThp + " is missing or not writable here";
  return "";
}

// Puts THP back if a failed assertion left it changed (nightjar should have).
struct ThpGuard {
  std::string before = thp_now();
  ~ThpGuard() {
    if (thp_now() == before) return;
    ADD_FAILURE() << "THP left at " << thp_now() << ", was " << before << "; restoring it";
    std::ofstream(kThp) << before << "\n";
  }
};

const char* kJob = R"(workload: pft
params:
  clients: 1
  mode: threads
  size: 64M
iterations: 2
warmup: 0
variants:
  thp-never:   {sysfs: {/sys/kernel/mm/transparent_hugepage/enabled: never}}
  thp-madvise: {sysfs: {/sys/kernel/mm/transparent_hugepage/enabled: madvise}}
  thp-always:  {sysfs: {/sys/kernel/mm/transparent_hugepage/enabled: always}}
)";

std::string knob_of(const std::string& db, const std::string& variant) {
  return query_one(db,
                   "SELECT c.value FROM run r JOIN run_context c ON c.run_id=r.id WHERE "
                   "r.variant='" +
                       variant + "' AND c.key='knob." + kThp + "' ORDER BY r.id LIMIT 1");
}

std::string fact_of(const std::string& db, const std::string& variant) {
  return query_one(db,
                   "SELECT c.value FROM run r JOIN run_context c ON c.run_id=r.id WHERE "
                   "r.variant='" +
                       variant + "' AND c.key='thp.enabled' ORDER BY r.id LIMIT 1");
}

// Waits until `sql` gives a non-empty, non-"0" answer, up to `seconds`.
bool wait_for(const std::string& db, const std::string& sql, int seconds) {
  auto end = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < end) {
    std::string v = query_one(db, sql);
    if (!v.empty() && v != "0") return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

}  // namespace

TEST(KnobsRoot, ThpVariantsOnPftRecordedAndRestoredAlsoOnSigint) {
  std::string why = skip_reason();
  if (!why.empty()) GTEST_SKIP() << why;
  ThpGuard guard;
  const std::string before = guard.before;
  ASSERT_FALSE(before.empty());

  TempDir dir;
  std::string job = dir.write("pft-thp.yaml", kJob);

  // 1. One variant after the other.
  {
    std::string db = dir.path() + "/seq.db";
    auto r = run_nightjar({"run", job, "--db", db});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(query_one(db, "SELECT count(*) FROM run WHERE status='complete'"), "3");
    for (const char* v : {"never", "madvise", "always"}) {
      std::string variant = std::string("thp-") + v;
      EXPECT_EQ(knob_of(db, variant), v) << variant;
      EXPECT_EQ(fact_of(db, variant), v)
          << variant << ": system facts probed with the knob in force";
    }
    EXPECT_EQ(thp_now(), before);
  }

  // 2. --interleave: iterations alternate never, madvise, always, never, ...
  {
    std::string db = dir.path() + "/inter.db";
    auto r =
        run_nightjar({"run", job, "--db", db, "--interleave", "--variant", "thp-never,thp-always"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(query_one(db,
                        "SELECT group_concat(v, ' ') FROM (SELECT r.variant AS v FROM "
                        "iteration i JOIN run r ON r.id=i.run_id ORDER BY i.rowid)"),
              "thp-never thp-always thp-never thp-always");
    EXPECT_EQ(knob_of(db, "thp-never"), "never");
    EXPECT_EQ(knob_of(db, "thp-always"), "always");
    EXPECT_EQ(thp_now(), before);
  }

  // 3. SIGINT while thp-never runs (sequential) and while interleaving.
  for (bool interleave : {false, true}) {
    SCOPED_TRACE(interleave ? "--interleave" : "sequential");
    std::string db = dir.path() + (interleave ? "/int-i.db" : "/int-s.db");
    std::vector<std::string> args = {"run", job,      "--db",      db,
                                     "-i",  "100000", "--variant", "thp-never,thp-always"};
    if (interleave) args.push_back("--interleave");
    pid_t pid = spawn_nightjar(args, dir.path(), interleave ? "int-i" : "int-s");
    ASSERT_TRUE(wait_for(db,
                         "SELECT count(*) FROM iteration i JOIN run r ON r.id=i.run_id WHERE "
                         "r.variant='thp-never'",
                         60))
        << read_file(dir.path() + (interleave ? "/int-i.err" : "/int-s.err"));
    if (!interleave) {
      EXPECT_EQ(thp_now(), "never") << "the variant's value is in force meanwhile";
    }
    kill(pid, SIGINT);
    EXPECT_EQ(wait_exit_code(pid), 130);
    EXPECT_EQ(thp_now(), before) << "restored after SIGINT";
    EXPECT_EQ(query_one(db, "SELECT status FROM run WHERE variant='thp-never'"), "aborted");
    EXPECT_EQ(knob_of(db, "thp-never"), "never");
  }
  // 4. A write the kernel refuses: a reason, nothing changed; through the
  // binary the variant's cells are stored as skipped with it.
  {
    const std::string raw_before = read_file(kThp);
    KnobSet set;
    auto reason = set.apply({{kThp, "sometimes", 1}});
    ASSERT_TRUE(reason);
    EXPECT_EQ(*reason, kThp + ": writing 'sometimes' failed: Invalid argument");
    EXPECT_EQ(read_file(kThp), raw_before);

    // Through the binary: the variant's cells are stored as skipped with it.
    std::string job = dir.write("bad.yaml",
                                "workload: fake\niterations: 1\nwarmup: 0\nvariants:\n"
                                "  ok: {}\n"
                                "  bad: {sysfs: {" +
                                    kThp + ": sometimes}}\n");
    std::string db = dir.path() + "/bad.db";
    auto r = run_nightjar({"run", job, "--db", db});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(query_one(db, "SELECT status || ': ' || reason FROM run WHERE variant='bad'"),
              "skipped: variant bad: a knob cannot be written: " + kThp +
                  ": writing 'sometimes' failed: Invalid argument");
    EXPECT_EQ(query_one(db, "SELECT status FROM run WHERE variant='ok'"), "complete");
    EXPECT_EQ(read_file(kThp), raw_before);
  }
  EXPECT_EQ(thp_now(), before);
}
