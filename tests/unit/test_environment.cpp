// Unit under test: results/compare/environment.{h,cpp} (the named facts,
// the classification of differences, the diffconfig-style kconfig diff) and
// its text, results/render/environment.{h,cpp}.
#include "results/compare/environment.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "results/render/environment.h"

namespace nightjar {
namespace {

TEST(Kconfig, ParsesValuesAndNotSetLines) {
  auto m = parse_kconfig(
      "#\n# Automatically generated file\nCONFIG_A=y\n# CONFIG_B is not set\n"
      "CONFIG_S=\"x y\"\n\n# a comment\nCONFIG_A=m\n");
  EXPECT_EQ(m, (std::map<std::string, std::string>{
                   {"CONFIG_A", "m"}, {"CONFIG_B", "n"}, {"CONFIG_S", "\"x y\""}}));
}

TEST(Kconfig, DiffGroupsRemovedAddedChangedSortedAndCounts) {
  const KconfigDiff d = diff_kconfig("CONFIG_Z=y\nCONFIG_X=y\n# CONFIG_C is not set\nCONFIG_K=1\n",
                                     "CONFIG_Y=y\n CONFIG_C=y\nCONFIG_K=1\nCONFIG_B=m\n");
  ASSERT_EQ(d.count(), 5u);
  ASSERT_EQ(d.removed.size(), 2u);
  EXPECT_EQ(kconfig_line(d.removed[0], '-'), "-CONFIG_X y");
  EXPECT_EQ(kconfig_line(d.removed[1], '-'), "-CONFIG_Z y");
  ASSERT_EQ(d.added.size(), 2u);
  EXPECT_EQ(kconfig_line(d.added[0], '+'), "+CONFIG_B m");
  EXPECT_EQ(kconfig_line(d.added[1], '+'), "+CONFIG_Y y");
  ASSERT_EQ(d.changed.size(), 1u);
  EXPECT_EQ(kconfig_line(d.changed[0], ' '), "CONFIG_C n -> y");
  EXPECT_EQ(kconfig_count_text(d), "5 options differ (2 removed, 2 added, 1 changed)");
  EXPECT_EQ(diff_kconfig("CONFIG_A=y\n", "CONFIG_A=y\n").count(), 0u);
}

TEST(EnvironmentFacts, NamedListAndKnobFiles) {
  EXPECT_TRUE(is_environment_fact("thp.enabled"));
  EXPECT_TRUE(is_environment_fact("sysctl.vm.swappiness"));
  EXPECT_TRUE(is_environment_fact("knob./proc/sys/vm/swappiness"));
  EXPECT_FALSE(is_environment_fact("sysctl."));
  for (const char* never : {"load.avg1", "min_effect", "min_effect.throughput", "job.set",
                            "job.hash", "vm.boot_seconds", "lava.job_id"})
    EXPECT_FALSE(is_environment_fact(never)) << never;
  EXPECT_EQ(fact_knob_path("thp.enabled"), "/sys/kernel/mm/transparent_hugepage/enabled");
  EXPECT_EQ(fact_knob_path("sysctl.net.ipv4.tcp_congestion_control"),
            "/proc/sys/net/ipv4/tcp_congestion_control");
  EXPECT_EQ(fact_knob_path("kernel.release"), "");
}

TEST(EnvironmentDiff, ClassifiesIntendedAcceptedAndConfounders) {
  SideFingerprint a{{"thp.enabled", {"always"}},
                    {"kernel.release", {"6.1"}},
                    {"kernel.cmdline", {"quiet"}},
                    {"cpu.microcode", {"0x1"}},
                    {"sysctl.vm.swappiness", {"60"}},
                    {"knob./proc/sys/vm/swappiness", {"60"}},
                    {"aslr", {"2"}}};
  SideFingerprint b = a;
  b["thp.enabled"] = {"never"};
  b["kernel.release"] = {"6.2"};
  b["kernel.cmdline"] = {"quiet mitigations=off"};
  b["cpu.microcode"] = {"0x2", "0x3"};
  b["sysctl.vm.swappiness"] = {"10"};
  b["knob./proc/sys/vm/swappiness"] = {"10"};
  b.erase("aslr");

  EnvironmentPolicy p;
  p.kernels_intended = true;
  p.accepted = {"cpu.microcode"};
  const EnvironmentDiff d = diff_fingerprints(a, b, p);
  std::vector<std::string> got;
  for (const auto& f : d.facts)
    got.push_back(f.key + " " + f.base + " -> " + f.now +
                  (f.intended   ? " I"
                   : f.accepted ? " A"
                                : " C"));
  EXPECT_EQ(got, (std::vector<std::string>{
                     "cpu.microcode 0x1 -> 0x2 | 0x3 A",
                     "kernel.cmdline quiet -> quiet mitigations=off C",
                     "kernel.release 6.1 -> 6.2 I", "knob./proc/sys/vm/swappiness 60 -> 10 I",
                     "sysctl.vm.swappiness 60 -> 10 I", "thp.enabled always -> never C"}));
  EXPECT_EQ(d.confounders(), (std::vector<std::string>{"kernel.cmdline", "thp.enabled"}));
  // aslr is missing on NEW (a run of an older nightjar, an import): unknown.
  EXPECT_EQ(d.unrecorded, (std::vector<std::string>{"aslr"}));
  ASSERT_TRUE(confounder_warning(d));

  p.kernels_intended = false;
  EXPECT_FALSE(diff_fingerprints(a, b, p).facts[2].intended);  // kernel.release
  EXPECT_TRUE(diff_fingerprints(a, a, p).empty());
  EXPECT_FALSE(confounder_warning(diff_fingerprints(a, a, p)));
  EXPECT_EQ(render_environment_section({diff_fingerprints(a, a, p)}), "");
}

TEST(EnvironmentDiff, MinFreeKbytesFollowsAnIntendedThpChangeOnly) {
  // The kernel recomputes vm.min_free_kbytes when THP is turned on or off.
  SideFingerprint a{{"thp.enabled", {"never"}}, {"sysctl.vm.min_free_kbytes", {"19832"}}};
  SideFingerprint b{{"thp.enabled", {"madvise"}}, {"sysctl.vm.min_free_kbytes", {"67584"}}};
  // THP changed by hand: both are confounders.
  EXPECT_EQ(diff_fingerprints(a, b, {}).confounders(),
            (std::vector<std::string>{"sysctl.vm.min_free_kbytes", "thp.enabled"}));
  // THP as a declared variant: min_free_kbytes moves with it.
  a["knob./sys/kernel/mm/transparent_hugepage/enabled"] = {"never"};
  b["knob./sys/kernel/mm/transparent_hugepage/enabled"] = {"madvise"};
  EXPECT_TRUE(diff_fingerprints(a, b, {}).confounders().empty());
  // min_free_kbytes alone, with THP unchanged, stays a confounder.
  b["thp.enabled"] = {"never"};
  b["knob./sys/kernel/mm/transparent_hugepage/enabled"] = {"never"};
  EXPECT_EQ(diff_fingerprints(a, b, {}).confounders(),
            (std::vector<std::string>{"sysctl.vm.min_free_kbytes"}));
}

TEST(EnvironmentDiff, MinFreeKbytesFollowsAnIntendedKernelOnly) {
  // Each kernel computes its own at boot (a generic and a PREEMPT_RT guest
  // of the same Debian release: 45056 and 3925).
  SideFingerprint a{{"kernel.release", {"6.1.0-57-amd64"}},
                    {"sysctl.vm.min_free_kbytes", {"45056"}}};
  SideFingerprint b{{"kernel.release", {"6.1.0-57-rt-amd64"}},
                    {"sysctl.vm.min_free_kbytes", {"3925"}}};
  EnvironmentPolicy kernels;
  kernels.kernels_intended = true;
  EXPECT_TRUE(diff_fingerprints(a, b, kernels).confounders().empty());
  // The same kernels compared as variants (not as kernels): both confound.
  EXPECT_EQ(diff_fingerprints(a, b, {}).confounders(),
            (std::vector<std::string>{"kernel.release", "sysctl.vm.min_free_kbytes"}));
  // One kernel, min_free_kbytes changed by hand: a confounder even between
  // sides that are kernels.
  b["kernel.release"] = {"6.1.0-57-amd64"};
  EXPECT_EQ(diff_fingerprints(a, b, kernels).confounders(),
            (std::vector<std::string>{"sysctl.vm.min_free_kbytes"}));
}

TEST(EnvironmentRender, SectionShowsTheFirstOptionsWithTheCount) {
  EnvironmentDiff d;
  d.base_name = "kernel=a";
  d.now_name = "kernel=b";
  d.facts.push_back({"kernel.config_hash", "h1", "h2", true, false});
  d.kconfig =
      diff_kconfig("CONFIG_A=y\nCONFIG_B=y\nCONFIG_C=y\nCONFIG_E=m\n", "CONFIG_D=y\nCONFIG_E=y\n");
  EXPECT_EQ(render_environment_section({d}, 3),
            "\nenvironment:\n"
            "  BASE kernel=a vs NEW kernel=b: 1 fact differs (1 intended, 0 confounders)\n"
            "    intended    kernel.config_hash  h1 -> h2\n"
            "    kernel config: 5 options differ (3 removed, 1 added, 1 changed):\n"
            "      changed (1): CONFIG_E m -> y\n"
            "      added (1): +CONFIG_D y\n"
            "      removed (3): -CONFIG_A y,\n"
            "      ... 2 more: `nightjar env --diff kernel=a kernel=b` lists every one\n");
  // Long groups wrap at 100 columns under their group.
  std::string many;
  for (int i = 0; i < 12; ++i) many += fmt::format("CONFIG_OPTION_NUMBER_{}=y\n", i);
  d.kconfig = diff_kconfig(many, "");
  const std::string s = render_environment_section({d});
  EXPECT_NE(s.find("      removed (12): -CONFIG_OPTION_NUMBER_0 y, -CONFIG_OPTION_NUMBER_1 y,"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("\n        -CONFIG_OPTION_NUMBER_"), std::string::npos) << s;
  EXPECT_NE(s.find("-CONFIG_OPTION_NUMBER_9 y\n"), std::string::npos) << s;  // the last, no comma
  for (std::size_t at = 0, nl; (nl = s.find('\n', at)) != std::string::npos; at = nl + 1)
    EXPECT_LE(nl - at, 100u) << s.substr(at, nl - at);
}

}  // namespace
}  // namespace nightjar
