// Unit under test: harness/job/variants.cpp (parse_variants, normalise_knob_path,
// knob_reading, check_knob_targets, KnobSet on a fake /sys and /proc tree),
// the `variants:` key of load_job, and variant selection in plan_runs
// (--variant all|NAME[,NAME], label-only variants, cgroup merge).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "harness/job/job.h"
#include "harness/job/variants.h"
#include "harness/job/yaml_parse.h"
#include "harness/run/runner.h"
#include "results/model/exit_codes.h"
#include "test_support.h"

namespace nightjar {
namespace {

using test::TempDir;

const char* kThp = "/sys/kernel/mm/transparent_hugepage/enabled";

// A job's variants: section parsed from `yaml` (the value of the key).
std::vector<VariantSpec> parse(const std::string& yaml, const std::string& path = "JOB") {
  YAML::Node root = YAML::Load("variants:\n" + yaml);
  return parse_variants(root["variants"], path, 1, YAML::Node());
}

std::string parse_error(const std::string& yaml) {
  try {
    parse(yaml);
  } catch (const UsageError& e) {
    EXPECT_EQ(e.code(), ExitCode::usage);
    return e.what();
  }
  ADD_FAILURE() << "accepted:\n" << yaml;
  return "";
}

// ---- parsing -------------------------------------------------------------------

TEST(ParseVariants, TheIssuesExample) {
  auto v = parse(
      "  thp-never:   {sysfs: {/sys/kernel/mm/transparent_hugepage/enabled: never}}\n"
      "  thp-madvise: {sysfs: {/sys/kernel/mm/transparent_hugepage/enabled: madvise}}\n"
      "  memcg-prot:  {cgroup: {top: {memory.min: 64M, memory.low: 128M}}}\n");
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].name, "thp-never");
  EXPECT_EQ(v[0].line, 2);
  ASSERT_EQ(v[0].knobs.size(), 1u);
  EXPECT_EQ(v[0].knobs[0].path, kThp);
  EXPECT_EQ(v[0].knobs[0].value, "never");
  EXPECT_EQ(v[0].knobs[0].line, 2);
  EXPECT_EQ(v[1].name, "thp-madvise");
  EXPECT_EQ(v[1].knobs[0].value, "madvise");
  EXPECT_EQ(v[2].name, "memcg-prot");
  EXPECT_TRUE(v[2].knobs.empty());
  ASSERT_TRUE(v[2].cgroup.enabled());
  ASSERT_EQ(v[2].cgroup.top.size(), 2u);
  EXPECT_EQ(v[2].cgroup.top[0], std::make_pair(std::string("memory.min"), std::string("64M")));
  EXPECT_EQ(v[2].cgroup_line, 4);
}

TEST(ParseVariants, SysctlProcfsListsAndLabels) {
  auto v = parse(
      "  tuned:\n"
      "    description: small swappiness\n"
      "    sysctl: {vm.swappiness: 10, net.ipv4.tcp_wmem: [4096, 65536, 4194304]}\n"
      "    procfs: {/proc/sys/vm/overcommit_memory: 1}\n"
      "  vanilla: {}\n"
      "  patched:\n");
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].description, "small swappiness");
  ASSERT_EQ(v[0].knobs.size(), 3u);
  EXPECT_EQ(v[0].knobs[0].path, "/proc/sys/vm/swappiness");
  EXPECT_EQ(v[0].knobs[0].value, "10");
  EXPECT_EQ(v[0].knobs[1].path, "/proc/sys/net/ipv4/tcp_wmem");
  EXPECT_EQ(v[0].knobs[1].value, "4096 65536 4194304");
  EXPECT_EQ(v[0].knobs[2].path, "/proc/sys/vm/overcommit_memory");
  EXPECT_EQ(v[0].knobs[2].line, 5);
  EXPECT_EQ(v[1].name, "vanilla");
  EXPECT_TRUE(v[1].knobs.empty());
  EXPECT_EQ(v[2].name, "patched");
}

TEST(ParseVariants, ErrorsNameFileLineFieldAndFix) {
  EXPECT_EQ(parse_error("  a: {sysfs: {/etc/passwd: x}}\n"),
            "JOB:2: variants.a.sysfs: '/etc/passwd' is outside /sys and /proc; sysfs knobs are "
            "files below /sys/ (nightjar writes nothing outside /sys and /proc), write `sysfs: "
            "{/sys/kernel/mm/transparent_hugepage/enabled: never}`");
  EXPECT_EQ(parse_error("  a: {sysfs: {/proc/sys/vm/swappiness: 1}}\n"),
            "JOB:2: variants.a.sysfs: '/proc/sys/vm/swappiness' is not below /sys/; sysfs knobs "
            "are files below /sys/ (nightjar writes nothing outside /sys and /proc), write "
            "`sysfs: {/sys/kernel/mm/transparent_hugepage/enabled: never}`");
  EXPECT_EQ(parse_error("  a: {procfs: {/proc/../etc/passwd: x}}\n"),
            "JOB:2: variants.a.procfs: '/proc/../etc/passwd' contains '..'; write the path "
            "without . or .. components");
  EXPECT_EQ(parse_error("  a: {sysfs: {sys/kernel/mm: x}}\n"),
            "JOB:2: variants.a.sysfs: 'sys/kernel/mm' is not an absolute path; write `sysfs: "
            "{/sys/kernel/mm/transparent_hugepage/enabled: never}`");
  EXPECT_EQ(parse_error("  a: {sysctl: {../../etc/passwd: x}}\n"),
            "JOB:2: variants.a.sysctl: '../../etc/passwd' is not a sysctl name; write a dotted "
            "name such as vm.swappiness or a path below /proc/sys/ such as "
            "/proc/sys/net/ipv4/conf/eth0.1/rp_filter");
  EXPECT_EQ(parse_error("  a: {sysctl: {/proc/self/status: x}}\n"),
            "JOB:2: variants.a.sysctl: '/proc/self/status' is not below /proc/sys/; sysctl knobs "
            "are files below /proc/sys/ (nightjar writes nothing outside /sys and /proc), write "
            "`sysctl: {vm.swappiness: 10}`");
  EXPECT_EQ(parse_error("  a:\n    sysfs: {/sys/a: 1}\n    colour: blue\n"),
            "JOB:4: variants.a.colour: unknown key; a variant's keys are sysfs, procfs, sysctl, "
            "cgroup, description");
  EXPECT_EQ(parse_error("  a: {sysfs: {/sys/a: {x: 1}}}\n"),
            "JOB:2: variants.a.sysfs./sys/a: expected the value to write, found a mapping; write "
            "`sysfs: {/sys/kernel/mm/transparent_hugepage/enabled: never}`");
  EXPECT_EQ(parse_error("  a: {sysfs: never}\n"),
            "JOB:2: variants.a.sysfs: expected a mapping of paths to values, found a scalar; "
            "write `sysfs: {/sys/kernel/mm/transparent_hugepage/enabled: never}`");
  EXPECT_EQ(parse_error("  all: {}\n"),
            "JOB:2: variants.all: 'all' is reserved (`--variant all` selects every variant); "
            "choose another name");
  EXPECT_EQ(parse_error("  a b: {}\n"),
            "JOB:2: variants.a b: a variant name is 1 to 64 letters, digits, '.', '_', '+' or "
            "'-'; write a name such as thp-never");
  EXPECT_EQ(parse_error("  a: {}\n  a: {}\n"),
            "JOB:3: variants.a: given twice (first on line 2); keep one");
  EXPECT_EQ(
      parse_error("  a: {sysfs: {/sys/x: 1, //sys/x: 2}}\n"),
      "JOB:2: variants.a.sysfs: /sys/x is set twice in variant a (first on line 2); keep one");
  EXPECT_EQ(parse_error("  a: [1]\n").rfind("JOB:2: variants.a: expected a mapping with keys", 0),
            0u);
  EXPECT_EQ(
      parse_error("  a: {cgroup: 3}\n").rfind("JOB:2: variants.a.cgroup: expected a mapping", 0),
      0u);
  EXPECT_EQ(parse_error("  - a\n").rfind("JOB:2: variants: expected a mapping of variant names", 0),
            0u);
}

TEST(NormaliseKnobPath, SysctlNamesAndSlashes) {
  std::string problem;
  EXPECT_EQ(normalise_knob_path("sysctl", "vm.swappiness", problem), "/proc/sys/vm/swappiness");
  EXPECT_EQ(normalise_knob_path("sysctl", "/proc/sys/vm//swappiness", problem),
            "/proc/sys/vm/swappiness");
  EXPECT_EQ(normalise_knob_path("sysfs", "/sys//kernel/mm/", problem), "/sys/kernel/mm");
  EXPECT_EQ(normalise_knob_path("sysfs", "/sys", problem), "");
  EXPECT_NE(problem.find("not below /sys/"), std::string::npos) << problem;
  EXPECT_EQ(normalise_knob_path("procfs", "/proc/./sys", problem), "");
  EXPECT_NE(problem.find("contains '.'"), std::string::npos) << problem;
}

TEST(KnobReading, SelectionsAndBlanks) {
  EXPECT_EQ(knob_reading("always [madvise] never\n"), "madvise");
  EXPECT_EQ(knob_reading("4096\t16384\t4194304\n"), "4096 16384 4194304");
  EXPECT_EQ(knob_reading("  60\n"), "60");
  EXPECT_EQ(knob_reading(""), "");
}

// ---- load_job ------------------------------------------------------------------

class VariantsJob : public ::testing::Test {
 protected:
  std::string write(const std::string& text) { return dir_.write("job.yaml", text); }
  std::string load_error(const std::string& text) {
    std::string path = write(text);
    try {
      load_job(path);
    } catch (const UsageError& e) {
      std::string m = e.what();
      if (m.rfind(path, 0) == 0) m.replace(0, path.size(), "JOB");
      return m;
    }
    ADD_FAILURE() << "accepted:\n" << text;
    return "";
  }
  PlannedJob plan(const std::string& text, const std::string& variant = "") {
    RunOptions o;
    o.job_paths = {write(text)};
    o.variant = variant;
    MachineFacts m;
    m.mem_total_bytes = 1ull << 30;
    m.cpus = 2;
    return plan_runs(o, m).at(0);
  }
  std::string plan_error(const std::string& text, const std::string& variant) {
    try {
      plan(text, variant);
    } catch (const UsageError& e) {
      return e.what();
    }
    ADD_FAILURE() << "planned:\n" << text;
    return "";
  }
  static std::vector<std::string> names(const PlannedJob& p) {
    std::vector<std::string> out;
    for (const auto& v : p.variants) out.push_back(v.name);
    return out;
  }
  TempDir dir_;
};

const char* kTwoVariants =
    "workload: fake\n"
    "variants:\n"
    "  a: {sysfs: {/sys/kernel/mm/transparent_hugepage/enabled: never}}\n"
    "  b: {sysfs: {/sys/kernel/mm/transparent_hugepage/enabled: madvise}}\n"
    "  c: {}\n";

TEST_F(VariantsJob, LoadJobKeepsVariantsWithLines) {
  JobFile job = load_job(write(kTwoVariants));
  ASSERT_EQ(job.variants.size(), 3u);
  EXPECT_EQ(job.variants_line, 2);
  EXPECT_EQ(job.variants[1].name, "b");
  EXPECT_EQ(job.variants[1].knobs.at(0).line, 4);
}

TEST_F(VariantsJob, LoadJobErrors) {
  EXPECT_EQ(load_error("workload: fake\nvariants: [a, b]\n"),
            "JOB:2: variants: expected a mapping of variant names to their knobs, found a list; "
            "write `variants:` followed by indented `NAME: {sysfs: {PATH: VALUE}}` lines such as "
            "`thp-never: {sysfs: {/sys/kernel/mm/transparent_hugepage/enabled: never}}`");
  EXPECT_EQ(load_error("workload: fake\nvariant: x\nvariants:\n  a: {}\n  b: {}\n"),
            "JOB:2: variant: 'x' is not one of the job's variants; write one of a, b or remove "
            "`variant:` to run them all");
  EXPECT_EQ(load_error("workload: fake\nvariantz: {}\n"),
            "JOB:2: variantz: unknown key (did you mean 'variant'?); known keys are workload, "
            "description, params, iterations, warmup, variant, cgroup, variants, min_effect, vm, "
            "monitors");
}

TEST_F(VariantsJob, SelectionAllNamesAndDefault) {
  EXPECT_EQ(names(plan(kTwoVariants)), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(names(plan(kTwoVariants, "all")), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(names(plan(kTwoVariants, "c, a")), (std::vector<std::string>{"c", "a"}));
  EXPECT_EQ(names(plan(kTwoVariants, "b,b")), (std::vector<std::string>{"b"}));
  PlannedJob p = plan(std::string(kTwoVariants) + "variant: b\n");
  EXPECT_EQ(names(p), (std::vector<std::string>{"b"}));
  EXPECT_EQ(p.variant, "b");
  ASSERT_EQ(p.variants[0].knobs.size(), 1u);
  EXPECT_EQ(p.variants[0].knobs[0].value, "madvise");
  EXPECT_EQ(names(plan(std::string(kTwoVariants) + "variant: b\n", "all")),
            (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(plan_error(kTwoVariants, "a,d").rfind("--variant a,d: ", 0), 0u);
  EXPECT_NE(plan_error(kTwoVariants, "a,d").find("has no variant 'd'; its variants are a, b, c"),
            std::string::npos);
  EXPECT_EQ(plan_error(kTwoVariants, "a,,b"),
            "--variant 'a,,b': empty name; write --variant all, --variant NAME or --variant A,B");
}

TEST_F(VariantsJob, JobWithoutVariantsUsesLabels) {
  const char* job = "workload: fake\n";
  EXPECT_EQ(names(plan(job)), (std::vector<std::string>{"default"}));
  EXPECT_EQ(names(plan(job, "all")), (std::vector<std::string>{"default"}));
  EXPECT_EQ(names(plan(job, "vanilla")), (std::vector<std::string>{"vanilla"}));
  EXPECT_EQ(names(plan(job, "vanilla,patched")), (std::vector<std::string>{"vanilla", "patched"}));
  EXPECT_EQ(names(plan("workload: fake\nvariant: base\n")), (std::vector<std::string>{"base"}));
  EXPECT_TRUE(plan(job, "x").variants[0].knobs.empty());
}

TEST_F(VariantsJob, CgroupOverrideMergesOverTheJobs) {
  PlannedJob p = plan(
      "workload: fake\n"
      "cgroup: {depth: 3, per_client: false}\n"
      "variants:\n"
      "  plain: {}\n"
      "  prot: {cgroup: {top: {memory.min: 64M, memory.low: 128M}}}\n");
  ASSERT_EQ(p.variants.size(), 2u);
  EXPECT_EQ(p.variants[0].cgroup.depth, 3);
  EXPECT_TRUE(p.variants[0].cgroup.top.empty());
  EXPECT_EQ(p.variants[1].cgroup.depth, 3);
  EXPECT_FALSE(p.variants[1].cgroup.per_client);
  ASSERT_EQ(p.variants[1].cgroup.top.size(), 2u);
  EXPECT_EQ(p.variants[1].cgroup.top[0].first, "memory.min");
  EXPECT_EQ(p.variants[1].cgroup.top[0].second, "64M");

  // Without a job-level cgroup: the variant's section alone (depth 1 by default).
  PlannedJob q = plan("workload: fake\nvariants:\n  prot: {cgroup: {top: {memory.low: 1G}}}\n");
  EXPECT_TRUE(q.variants[0].cgroup.enabled());
  EXPECT_EQ(q.variants[0].cgroup.top.at(0).first, "memory.low");
}

// ---- KnobSet on a fake tree ----------------------------------------------------

class FakeTree : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_.write("sys/kernel/mm/transparent_hugepage/enabled", "always [madvise] never\n");
    dir_.write("proc/sys/vm/swappiness", "60\n");
    dir_.write("proc/sys/net/ipv4/tcp_wmem", "4096\t16384\t4194304\n");
    std::filesystem::create_directories(dir_.path() + "/etc");
    dir_.write("etc/secret", "keep\n");
  }
  std::string read(const std::string& rel) { return test::read_file(dir_.path() + rel); }
  const std::string& root() { return dir_.path(); }
  TempDir dir_;
};

TEST_F(FakeTree, AppliesRecordsAndRestoresInReverse) {
  {
    KnobSet set(root());
    auto reason = set.apply({{kThp, "never", 3},
                             {"/proc/sys/vm/swappiness", "10", 4},
                             {"/proc/sys/net/ipv4/tcp_wmem", "4096 65536 4194304", 5}});
    ASSERT_FALSE(reason) << *reason;
    EXPECT_EQ(read(kThp), "never\n");
    EXPECT_EQ(read("/proc/sys/vm/swappiness"), "10\n");
    auto in_force = set.in_force();
    EXPECT_EQ(in_force.at(std::string("knob.") + kThp), "never");
    EXPECT_EQ(in_force.at("knob./proc/sys/vm/swappiness"), "10");
    EXPECT_EQ(in_force.at("knob./proc/sys/net/ipv4/tcp_wmem"), "4096 65536 4194304");
    EXPECT_TRUE(set.mismatches().empty());
  }  // destructor restores
  EXPECT_EQ(read(kThp), "madvise\n");
  EXPECT_EQ(read("/proc/sys/vm/swappiness"), "60\n");
  EXPECT_EQ(read("/proc/sys/net/ipv4/tcp_wmem"), "4096 16384 4194304\n");
}

TEST_F(FakeTree, UnchangedValueIsNotWrittenButRecorded) {
  KnobSet set(root());
  ASSERT_FALSE(set.apply({{kThp, "madvise", 1}}));
  EXPECT_EQ(read(kThp), "always [madvise] never\n");  // untouched
  EXPECT_EQ(set.in_force().at(std::string("knob.") + kThp), "madvise");
  EXPECT_TRUE(set.restore().empty());
  EXPECT_EQ(read(kThp), "always [madvise] never\n");
}

TEST_F(FakeTree, MissingKnobGivesReasonAndUndoesEarlierOnes) {
  KnobSet set(root());
  auto reason = set.apply({{"/proc/sys/vm/swappiness", "1", 1}, {"/sys/no/such", "1", 2}});
  ASSERT_TRUE(reason);
  EXPECT_EQ(*reason,
            "/sys/no/such: no such file (this kernel lacks the knob, or the path is misspelt)");
  EXPECT_EQ(read("/proc/sys/vm/swappiness"), "60\n");  // undone
  EXPECT_TRUE(set.in_force().empty());
}

TEST_F(FakeTree, UnwritableKnobGivesReason) {
  if (geteuid() == 0) GTEST_SKIP() << "root writes read-only files; covered by the root test";
  std::filesystem::permissions(dir_.path() + "/proc/sys/vm/swappiness",
                               std::filesystem::perms::owner_read);
  KnobSet set(root());
  auto reason = set.apply({{"/proc/sys/vm/swappiness", "1", 1}});
  ASSERT_TRUE(reason);
  EXPECT_NE(reason->find("writing '1' failed: Permission denied (run as root"), std::string::npos)
      << *reason;
}

TEST_F(FakeTree, SymlinkOutOfProcIsAUsageErrorBeforeAnyWrite) {
  std::filesystem::create_directories(root() + "/proc/self");
  std::filesystem::create_directory_symlink(root(), root() + "/proc/self/root");
  KnobSet set(root());
  try {
    set.apply({{"/proc/sys/vm/swappiness", "1", 1}, {"/proc/self/root/etc/secret", "x", 2}});
    FAIL() << "accepted a knob outside /proc";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()),
              "knob /proc/self/root/etc/secret resolves to /etc/secret, outside /sys and /proc; "
              "nightjar writes knobs only below /sys and /proc, name the file itself");
  }
  EXPECT_EQ(read("/etc/secret"), "keep\n");
  EXPECT_EQ(read("/proc/sys/vm/swappiness"), "60\n");

  VariantSpec v;
  v.name = "evil";
  v.knobs = {{"/proc/self/root/etc/secret", "x", 7}};
  try {
    check_knob_targets(v, "job.yaml", root());
    FAIL() << "check_knob_targets accepted it";
  } catch (const UsageError& e) {
    EXPECT_EQ(
        std::string(e.what()).rfind("job.yaml:7: variants.evil: knob /proc/self/root/etc/secret "
                                    "resolves to /etc/secret, outside /sys and /proc",
                                    0),
        0u)
        << e.what();
  }
  v.knobs = {{"/sys/not/there", "1", 8}};
  EXPECT_NO_THROW(check_knob_targets(v, "job.yaml", root()));  // missing: skipped at run time
}

TEST_F(FakeTree, ApplyAgainRestoresThePreviousSet) {
  KnobSet set(root());
  ASSERT_FALSE(set.apply({{kThp, "never", 1}}));
  ASSERT_FALSE(set.apply({{"/proc/sys/vm/swappiness", "5", 1}}));
  EXPECT_EQ(read(kThp), "madvise\n");
  EXPECT_EQ(read("/proc/sys/vm/swappiness"), "5\n");
  EXPECT_EQ(set.in_force().count(std::string("knob.") + kThp), 0u);
  set.restore();
  EXPECT_EQ(read("/proc/sys/vm/swappiness"), "60\n");
}

TEST_F(FakeTree, RestoreSurvivesAnException) {
  try {
    KnobSet set(root());
    ASSERT_FALSE(set.apply({{kThp, "never", 1}}));
    throw Interrupted();
  } catch (const Interrupted&) {
  }
  EXPECT_EQ(read(kThp), "madvise\n");
}

}  // namespace
}  // namespace nightjar
