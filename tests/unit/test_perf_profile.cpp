// The perf-profile monitor without the kernel: folding call chains
// (results/model/profile.h), kernel symbols from a fake kallsyms and the
// test program's own ELF symbols (workloads/sys/symbols.h), the profile
// tables of the results store (round trip, the migration from schema
// version 8), and the profile block of `compare --why` (results/compare/
// why.h: shares, Welch, BH, ranking; results/render/why.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/bisect/git.h"
#include "results/compare/why.h"
#include "results/model/profile.h"
#include "results/render/why.h"
#include "results/store/store.h"
#include "test_support.h"
#include "workloads/sys/monitor_set.h"
#include "workloads/sys/symbols.h"

// A function of this program with external linkage, for the ELF lookup.
extern "C" __attribute__((noinline)) int nightjar_profile_test_marker(int x) {
  asm volatile("" ::: "memory");
  return x * 3 + 1;
}

namespace nightjar {
namespace {

using test::exec_sql;
using test::query_one;
using test::TempDir;

TEST(ProfileFold, FoldsLeafFirstChainsRootFirst) {
  const std::vector<std::string> chain = {"clear_page_erms", "", "do_anonymous_page", "a;b"};
  EXPECT_EQ(fold_frames(chain), "a:b;do_anonymous_page;[unknown];clear_page_erms");
  EXPECT_EQ(fold_frames(std::vector<std::string>{}), "");
}

TEST(ProfileFold, CountsSelfAndChildrenOncePerStack) {
  IterationProfile p;
  p.stacks = {{"main;f;g", 3}, {"main;f;f;h", 2}, {"main;f", 5}};
  EXPECT_EQ(p.samples(), 10u);
  const SymbolCounts c = symbol_counts(p.stacks);
  EXPECT_EQ(c.samples, 10u);
  EXPECT_EQ(c.self.at("g"), 3u);
  EXPECT_EQ(c.self.at("h"), 2u);
  EXPECT_EQ(c.self.at("f"), 5u);
  EXPECT_EQ(c.self.count("main"), 0u);
  EXPECT_EQ(c.children.at("main"), 10u);
  EXPECT_EQ(c.children.at("f"), 10u);  // recursion counted once per stack
  EXPECT_EQ(folded_text(p), "main;f 5\nmain;f;f;h 2\nmain;f;g 3\n");
}

TEST(ProfileSymbols, KernelSymbolsFromAFakeKallsyms) {
  const KernelSymbols k = KernelSymbols::parse(
      "ffffffff81000000 T _stext\n"
      "ffffffff81001000 t do_anonymous_page\n"
      "ffffffff81002000 D some_data\n"
      "ffffffff81003000 T clear_page_erms\n"
      "ffffffffc0000000 t ext4_fill_super\t[ext4]\n"
      "garbage\n");
  EXPECT_TRUE(k.unavailable().empty());
  EXPECT_EQ(k.size(), 4u);  // data symbols are not kept
  ASSERT_NE(k.find(0xffffffff81001abc), nullptr);
  EXPECT_EQ(*k.find(0xffffffff81001abc), "do_anonymous_page");
  EXPECT_EQ(*k.find(0xffffffff81002abc), "do_anonymous_page");  // data is no boundary
  EXPECT_EQ(*k.find(0xffffffff81003000), "clear_page_erms");
  EXPECT_EQ(*k.find(0xffffffffc0000010), "ext4_fill_super");
  EXPECT_EQ(k.find(0xffffffff80000000), nullptr);
  EXPECT_EQ(k.find(0xffffffffc5000000), nullptr);  // far past the last symbol
}

TEST(ProfileSymbols, HiddenKernelAddressesAreSaidNotGuessed) {
  const KernelSymbols k =
      KernelSymbols::parse("0000000000000000 T _stext\n0000000000000000 t do_anonymous_page\n");
  EXPECT_EQ(k.size(), 0u);
  EXPECT_NE(k.unavailable().find("kptr_restrict"), std::string::npos) << k.unavailable();
  EXPECT_EQ(k.find(0x1000), nullptr);
  const KernelSymbols missing = KernelSymbols::load("/nonexistent/kallsyms");
  EXPECT_NE(missing.unavailable().find("/nonexistent/kallsyms"), std::string::npos);
}

TEST(ProfileSymbols, ProgramSymbolsNameThisProgramsFunctions) {
  const ProgramSymbols self = ProgramSymbols::self();
  ASSERT_TRUE(self.unavailable().empty()) << self.unavailable();
  EXPECT_GT(self.size(), 100u);
  const auto address = reinterpret_cast<std::uintptr_t>(&nightjar_profile_test_marker);
  const std::string* name = self.find(address + 1);
  ASSERT_NE(name, nullptr);
  EXPECT_EQ(*name, "nightjar_profile_test_marker");
  EXPECT_EQ(self.find(0x10), nullptr);
  EXPECT_EQ(nightjar_profile_test_marker(1), 4);
}

TEST(ProfileSymbols, ShortNamesDropTheParameterList) {
  EXPECT_EQ(short_symbol_name("_ZN8nightjar12_GLOBAL__N_13runEi"),
            "nightjar::(anonymous namespace)::run");
  EXPECT_EQ(short_symbol_name("do_anonymous_page"), "do_anonymous_page");
  const auto maps = parse_mappings(
      "55d0c0000000-55d0c0100000 r-xp 00001000 08:01 42 /usr/bin/nightjar\n"
      "7f0000000000-7f0000001000 r--p 00000000 08:01 43 /usr/lib/libc.so.6\n",
      "/usr/bin/nightjar");
  ASSERT_EQ(maps.size(), 1u);
  EXPECT_EQ(maps[0].start, 0x55d0c0000000u);
  EXPECT_EQ(maps[0].offset, 0x1000u);
}

TEST(ProfileCatalog, PerfProfileIsSelectableAndOffByDefault) {
  const MonitorInfo* m = find_monitor("perf-profile");
  ASSERT_NE(m, nullptr);
  EXPECT_FALSE(m->on_by_default);
  for (const auto& name : default_monitors()) EXPECT_NE(name, "perf-profile");
}

NewRun profile_run(const std::string& variant) {
  NewRun run;
  run.job = "fx";
  run.cell.workload = "fake";
  run.cell.params["seed"] = {"1", 1};
  run.variant = variant;
  run.iterations = 3;
  run.kernel.release = "6.1.0-test";
  run.testbox = {"box", "cpu", 2, 1 << 30};
  return run;
}

IterationProfile profile_of(std::map<std::string, std::uint64_t> stacks) {
  IterationProfile p;
  p.event = "cpu-clock";
  p.frequency_hz = 499;
  p.stacks = std::move(stacks);
  return p;
}

TEST(ProfileStore, StacksRoundTripWithTheIterationsSamples) {
  TempDir dir;
  const std::string path = dir.path() + "/p.db";
  ResultsStore store(path);
  const std::int64_t id = store.begin_run(profile_run("a"));
  IterationResult ok;
  ok.metrics["throughput"] = 1;
  IterationProfile p1 = profile_of({{"main;f;g", 7}, {"main;h", 2}});
  p1.lost = 3;
  store.add_iteration(id, 1, ok, {}, 0.1, &p1);
  const IterationProfile p2 = profile_of({{"main;f;g", 4}});
  store.add_iteration(id, 2, ok, {}, 0.1, &p2);
  IterationResult failed;
  failed.failure = "boom";
  store.add_iteration(id, 3, failed, {}, 0.1, &p2);
  store.add_iteration(id, 4, ok, {}, 0.1);  // no profile
  store.finish_run(id, RunStatus::complete);

  // Each distinct stack is stored once.
  EXPECT_EQ(query_one(path, "SELECT count(*) FROM profile_stack"), "2");
  const std::vector<StoredProfile> back = store.iteration_profiles({id});
  ASSERT_EQ(back.size(), 2u);  // the failed iteration's is left out
  EXPECT_EQ(back[0].iteration, 1);
  EXPECT_EQ(back[0].profile.event, "cpu-clock");
  EXPECT_EQ(back[0].profile.frequency_hz, 499);
  EXPECT_EQ(back[0].profile.lost, 3u);
  EXPECT_EQ(back[0].profile.stacks, p1.stacks);
  EXPECT_EQ(back[1].profile.stacks, p2.stacks);
  EXPECT_TRUE(store.iteration_profiles({id + 1}).empty());
}

TEST(ProfileStore, MigratesAVersion8DatabaseAndReadsItReadOnly) {
  TempDir dir;
  const std::string path = dir.path() + "/v8.db";
  std::int64_t id = 0;
  {
    ResultsStore store(path);
    id = store.begin_run(profile_run("a"));
    IterationResult ok;
    ok.metrics["throughput"] = 1;
    store.add_iteration(id, 1, ok, {{"vmstat.pgfault", 5}}, 0.1);
    store.finish_run(id, RunStatus::complete);
  }
  exec_sql(path,
           "BEGIN; DROP TABLE profile_sample; DROP TABLE profile; DROP TABLE profile_stack;"
           "PRAGMA user_version=8; COMMIT;");
  {
    // A read command reads version 8 as it is: no profiles, no error.
    const ResultsStore old(path, ResultsStore::Access::read_only);
    EXPECT_TRUE(old.iteration_profiles({id}).empty());
    EXPECT_EQ(old.samples(id).size(), 1u);
  }
  EXPECT_EQ(query_one(path, "PRAGMA user_version"), "8");
  ResultsStore store(path);
  EXPECT_EQ(query_one(path, "PRAGMA user_version"), "9");
  EXPECT_EQ(ResultsStore::kSchemaVersion, 9);
  EXPECT_EQ(query_one(path,
                      "SELECT count(*) FROM sqlite_master WHERE name LIKE 'profile%' AND "
                      "type='table'"),
            "3");
  EXPECT_EQ(store.samples(id).size(), 1u);
  IterationResult ok;
  ok.metrics["throughput"] = 2;
  const IterationProfile p = profile_of({{"main;f", 1}});
  store.add_iteration(id, 2, ok, {}, 0.1, &p);
  ASSERT_EQ(store.iteration_profiles({id}).size(), 1u);
}

// Base: g takes ~80% of the samples and h ~20%; new: g ~30%, h ~70%, with
// a little noise per iteration; main and f hold every sample on both sides.
std::vector<IterationProfile> side_profiles(std::uint64_t g, std::uint64_t h) {
  std::vector<IterationProfile> out;
  const std::uint64_t noise[] = {0, 3, 1, 4, 2};
  for (std::uint64_t n : noise)
    out.push_back(profile_of({{"main;f;g", g + n}, {"main;f;h", h + 4 - n}, {"main;f", 1}}));
  return out;
}

TEST(ProfileWhy, WelchOnSharesBhAcrossSymbolsRankedByEffect) {
  const auto base = side_profiles(80, 20);
  const auto now = side_profiles(30, 70);
  const ProfileDelta d = explain_profile("cell", base, now, 0.05);
  EXPECT_EQ(d.base_n, 5);
  EXPECT_EQ(d.new_n, 5);
  EXPECT_EQ(d.base_event, "cpu-clock");
  // self: g, h, f; children: main, f, g, h
  EXPECT_EQ(d.family, 7u);
  ASSERT_GE(d.moved.size(), 4u);
  // g and h moved by about 48 points each, self and children alike; main
  // and f (children) hold every sample on both sides and do not move.
  for (const auto& m : d.moved) {
    EXPECT_TRUE(m.symbol == "g" || m.symbol == "h") << m.symbol;
    EXPECT_LT(m.q, 0.05);
    EXPECT_LE(m.lo_pts, m.diff_pts);
    EXPECT_GE(m.hi_pts, m.diff_pts);
  }
  EXPECT_NEAR(std::abs(d.moved[0].diff_pts), 48.5, 1.5);
  for (std::size_t i = 1; i < d.moved.size(); ++i)
    EXPECT_GE(std::abs(d.moved[i - 1].diff_pts), std::abs(d.moved[i].diff_pts));
  const auto g = std::find_if(d.moved.begin(), d.moved.end(),
                              [](const ProfileMove& m) { return m.symbol == "g" && m.self; });
  ASSERT_NE(g, d.moved.end());
  EXPECT_GT(g->base_pct, 75);
  EXPECT_LT(g->new_pct, 35);
  EXPECT_LT(g->diff_pts, 0);

  WhySide side{"never", "always", 0, {}, {d}};
  const std::string text = render_profile_text(side, 0.05);
  EXPECT_NE(text.find("profile, always vs never, cell: cpu-clock, 5 vs 5 iterations"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  g  "), std::string::npos) << text;
  EXPECT_NE(text.find("self      "), std::string::npos) << text;
  EXPECT_NE(text.find(" pts ["), std::string::npos) << text;
  WhyBlock block;
  block.sides.push_back(side);
  EXPECT_NE(render_why_json(block).find("\"share\":\"self\""), std::string::npos);
  EXPECT_NE(render_why_markdown(block).find("#### Profile: always vs never"), std::string::npos);
}

TEST(ProfileWhy, EqualProfilesMoveNothingAndOneIterationIsNotTested) {
  const auto base = side_profiles(80, 20);
  EXPECT_TRUE(explain_profile("cell", base, base, 0.05).moved.empty());
  const ProfileDelta one =
      explain_profile("cell", base, std::vector<IterationProfile>{base[0]}, 0.05);
  EXPECT_EQ(one.family, 0u);
  EXPECT_TRUE(one.moved.empty());
  EXPECT_THROW(explain_profile("cell", base, base, 0), std::invalid_argument);
}

TEST(ProfileAttribution, HunkHeadersAndDefinitionsNameTheChangedFunctions) {
  const std::string diff =
      "diff --git a/mm/memory.c b/mm/memory.c\n"
      "--- a/mm/memory.c\n"
      "+++ b/mm/memory.c\n"
      "@@ -4100,2 +4100,3 @@ static vm_fault_t do_anonymous_page(struct vm_fault *vmf)\n"
      "-\tif (x)\n"
      "+\tif (y)\n"
      "@@ -10,0 +11,4 @@ struct foo {\n"
      "+static int new_helper(int a)\n"
      "+{\n"
      "+\treturn call_it(a);\n"
      "diff --git a/old.c b/old.c\n"
      "--- a/old.c\n"
      "+++ /dev/null\n"
      "@@ -1,3 +0,0 @@\n"
      "-void gone(void)\n"
      "-{\n";
  const auto changed = parse_changed_functions(diff);
  EXPECT_EQ(changed.at("do_anonymous_page"), "mm/memory.c");
  EXPECT_EQ(changed.at("new_helper"), "mm/memory.c");
  EXPECT_EQ(changed.at("gone"), "old.c");
  EXPECT_EQ(changed.count("call_it"), 0u);  // a call, not a definition
  EXPECT_EQ(changed.count("if"), 0u);
}

TEST(ProfileAttribution, MovedSymbolsChangedByTheCommitAreMarked) {
  EXPECT_EQ(source_function_name("clear_page_erms.isra.0"), "clear_page_erms");
  EXPECT_EQ(source_function_name("nightjar::(anonymous namespace)::touch"), "touch");
  WhyBlock block;
  WhySide side{"never", "always", 0, {}, {}};
  ProfileDelta d;
  d.cell = "cell";
  d.base_n = d.new_n = 5;
  d.moved.push_back({"do_anonymous_page", true, 12.3, 3.1, -9.2, -10.1, -8.3, 1e-6, 1e-5, ""});
  d.moved.push_back({"clear_page_erms", true, 1, 50, 49, 45, 53, 1e-6, 1e-5, ""});
  side.profiles.push_back(d);
  block.sides.push_back(side);
  attribute_to_commit(block, "3f2a1b2c4d5e6f70", {{"do_anonymous_page", "mm/memory.c"}});
  EXPECT_EQ(block.sides[0].profiles[0].moved[0].changed_in, "mm/memory.c");
  EXPECT_EQ(block.sides[0].profiles[0].moved[1].changed_in, "");
  const std::string text = render_why_text(block);
  EXPECT_NE(text.find("do_anonymous_page  self      12.3% -> 3.1%  (-9.2 pts [-10.1, -8.3])"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("changed by 3f2a1b2c4d5e (mm/memory.c)"), std::string::npos) << text;
}

const FlameNode* child(const FlameNode& n, const std::string& name) {
  for (const auto& c : n.children)
    if (c.name == name) return &c;
  return nullptr;
}

// The merged differential tree (docs/compare.md "The flame graph"): the
// stacks of each side summed over its iterations, merged into call paths,
// each node with both sides' inclusive samples and delta = now − base·scale,
// scale = NEW samples / BASE samples (here 40/20 = 2).
TEST(ProfileFlame, MergesStacksPerPathWithScaledDeltas) {
  const std::vector<IterationProfile> base = {profile_of({{"main;f;g", 8}, {"main;f;h", 2}}),
                                              profile_of({{"main;f;g", 8}, {"main;f;h", 2}})};
  const std::vector<IterationProfile> now = {
      profile_of({{"main;f;g", 6}, {"main;f;h", 30}, {"main;n", 4}})};
  double scale = 0;
  const FlameNode root = merge_flame(base, now, &scale);
  EXPECT_DOUBLE_EQ(scale, 2.0);
  EXPECT_EQ(root.name, "all");
  EXPECT_EQ(root.base, 20u);
  EXPECT_EQ(root.now, 40u);
  EXPECT_DOUBLE_EQ(root.delta, 0);
  ASSERT_EQ(root.children.size(), 1u);
  const FlameNode& main = root.children[0];
  EXPECT_EQ(main.name, "main");
  EXPECT_EQ(main.base, 20u);
  EXPECT_EQ(main.now, 40u);
  ASSERT_EQ(main.children.size(), 2u);
  EXPECT_EQ(main.children[0].name, "f");  // children by name
  EXPECT_EQ(main.children[1].name, "n");
  const FlameNode* f = child(main, "f");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->base, 20u);
  EXPECT_EQ(f->now, 36u);
  EXPECT_DOUBLE_EQ(f->delta, -4);
  const FlameNode* g = child(*f, "g");
  const FlameNode* h = child(*f, "h");
  ASSERT_TRUE(g && h);
  EXPECT_EQ(g->base, 16u);
  EXPECT_EQ(g->now, 6u);
  EXPECT_DOUBLE_EQ(g->delta, 6 - 32);  // fewer in NEW: blue
  EXPECT_EQ(h->base, 4u);
  EXPECT_EQ(h->now, 30u);
  EXPECT_DOUBLE_EQ(h->delta, 30 - 8);  // more in NEW: red
  const FlameNode* n = child(main, "n");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->base, 0u);
  EXPECT_DOUBLE_EQ(n->delta, 4);  // only in NEW
  EXPECT_TRUE(g->children.empty());

  // explain_profile records the same tree and scale.
  const ProfileDelta d = explain_profile("cell", base, now, 0.05);
  EXPECT_DOUBLE_EQ(d.flame_scale, 2.0);
  EXPECT_EQ(d.flame.now, 40u);
  ASSERT_EQ(d.flame.children.size(), 1u);
  EXPECT_EQ(d.flame.children[0].children.size(), 2u);
}

// Without BASE samples the scale is 1 and every delta is NEW's samples.
TEST(ProfileFlame, NoBaseSamplesScaleOne) {
  const std::vector<IterationProfile> now = {profile_of({{"main;f", 3}})};
  double scale = 0;
  const FlameNode root = merge_flame({}, now, &scale);
  EXPECT_DOUBLE_EQ(scale, 1.0);
  EXPECT_DOUBLE_EQ(root.delta, 3);
  EXPECT_EQ(root.children.at(0).children.at(0).name, "f");
}

}  // namespace
}  // namespace nightjar
