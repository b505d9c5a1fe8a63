// Unit under test: the workload registry (workloads/registry.cpp,
// NIGHTJAR_WORKLOAD in workloads/workload.h): its defined order (by name),
// unique names, lookup, the catalog built from it, every declaration's
// defaults, the cgroup_clients hook, every LKP table (lkp_mapping: its
// parameters and metrics the workload's own, in LKP's unit), and that the
// skeleton workload is registered by its own file alone.
#include "workloads/workload.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "results/io/lkp.h"
#include "test_support.h"
#include "workloads/sys/probe.h"

namespace nightjar {
namespace {

// A cell of `w` with every default, and `overrides` (name -> text) on top.
Cell default_cell(const Workload& w, const std::map<std::string, std::string>& overrides = {}) {
  const MachineFacts machine = probe_machine_facts();
  Cell cell;
  cell.workload = std::string(w.name());
  for (const auto& p : w.params()) {
    auto it = overrides.find(p.name);
    const std::string text = it != overrides.end() ? it->second : p.default_value;
    if (text.empty() && p.type != ParamType::text) continue;  // required: no default
    cell.params[p.name] = parse_param(p, text, machine);
  }
  return cell;
}

TEST(Registry, SortedByNameWithUniqueNames) {
  const auto& r = workload_registry();
  ASSERT_FALSE(r.empty());
  for (std::size_t i = 1; i < r.size(); ++i)
    EXPECT_LT(r[i - 1]->name(), r[i]->name()) << "registry order at " << i;
}

TEST(Registry, KnowsEveryBuiltInWorkload) {
  for (const char* name : {"exec", "fake", "gbench", "null", "pft", "skeleton", "tcp_sendfile",
                           "tcp_stream", "tmpfs_refault"}) {
    const Workload* w = find_workload(name);
    ASSERT_NE(w, nullptr) << name;
    EXPECT_EQ(w->name(), name);
    EXPECT_NE(workload_catalog().find(name), nullptr) << name;
  }
  EXPECT_EQ(find_workload("nope"), nullptr);
  EXPECT_EQ(workload_catalog().find("nope"), nullptr);
}

TEST(Registry, SensitiveFactsAreFactsTheProbeWarnsAbout) {
  // pft's faults change with THP; tmpfs_refault's swap with shmem THP and zswap.
  EXPECT_EQ(find_workload("pft")->sensitive_facts(), std::vector<std::string>{"thp.enabled"});
  EXPECT_EQ(find_workload("tmpfs_refault")->sensitive_facts(),
            (std::vector<std::string>{"thp.shmem_enabled", "zswap.enabled"}));
  EXPECT_TRUE(find_workload("tcp_sendfile")->sensitive_facts().empty());
  // Every declared fact is one a warning is about: a typo would silence it.
  SystemContext worst;
  worst.facts = {{"thp.enabled", "always"},
                 {"thp.shmem_enabled", "always"},
                 {"zswap.enabled", "Y"},
                 {"cpufreq.governor", "powersave"},
                 {"load.avg1", "9"}};
  std::set<std::string> warned;
  for (const auto& w : worst.fact_warnings(1)) warned.insert(w.fact);
  for (const auto& w : workload_registry())
    for (const auto& fact : w->sensitive_facts()) EXPECT_EQ(warned.count(fact), 1u) << fact;
}

TEST(Registry, EveryDeclarationIsDocumentedAndEveryDefaultParses) {
  const MachineFacts machine = probe_machine_facts();
  for (const auto& w : workload_registry()) {
    SCOPED_TRACE(std::string(w->name()));
    EXPECT_FALSE(w->summary().empty());
    for (const auto& p : w->params()) {
      EXPECT_FALSE(p.name.empty());
      EXPECT_FALSE(p.doc.empty()) << p.name;
      if (p.type == ParamType::choice) {
        EXPECT_FALSE(p.choices.empty()) << p.name;
      }
      if (p.default_value.empty() && p.type != ParamType::text) continue;
      EXPECT_NO_THROW((void)parse_param(p, p.default_value, machine)) << p.name;
    }
    for (const auto& m : w->metrics()) {
      EXPECT_TRUE(valid_metric_name(m.name)) << m.name;
      EXPECT_FALSE(m.unit.empty()) << m.name;
      EXPECT_FALSE(m.doc.empty()) << m.name;
    }
  }
}

// A workload's LKP table names its own parameters and metrics, each LKP
// metric LKP's direction table knows in the same unit and direction, and no
// two workloads claim one LKP testcase and test.
TEST(Registry, EveryLkpTableNamesTheWorkloadsOwnParametersAndMetrics) {
  std::set<std::string> claimed, mapped;
  for (const auto& w : workload_registry()) {
    const auto m = w->lkp_mapping();
    if (!m) continue;
    SCOPED_TRACE(std::string(w->name()));
    mapped.insert(std::string(w->name()));
    EXPECT_TRUE(claimed.insert(m->testcase + " " + m->test).second) << m->testcase;
    const auto params = w->params();
    auto declared = [&](const std::string& name) {
      return std::any_of(params.begin(), params.end(),
                         [&](const ParamDescriptor& p) { return p.name == name; });
    };
    for (const auto& p : m->params) {
      if (p.rule == LkpParamRule::ignored) {
        EXPECT_TRUE(p.param.empty() && !p.why.empty()) << p.lkp;
      } else {
        EXPECT_TRUE(declared(p.param)) << p.lkp << " -> " << p.param;
      }
    }
    for (const auto& [param, text] : m->fixed) EXPECT_TRUE(declared(param)) << param;
    const auto metrics = w->metrics();
    for (const auto& e : m->metrics) {
      auto d = std::find_if(metrics.begin(), metrics.end(),
                            [&](const MetricDescriptor& x) { return x.name == e.metric; });
      ASSERT_NE(d, metrics.end()) << e.lkp << " -> " << e.metric;
      if (const auto lkp = lkp_metric(e.lkp)) {
        EXPECT_EQ(lkp->unit, d->unit) << e.lkp;
        EXPECT_EQ(lkp->direction, d->direction) << e.lkp;
      }
    }
  }
  EXPECT_EQ(mapped, (std::set<std::string>{"pft", "tcp_sendfile", "tcp_stream"}));
}

TEST(Registry, CgroupClientsIsTheSendersForTcpAndOneOtherwise) {
  for (const char* name : {"tcp_sendfile", "tcp_stream"}) {
    const Workload* w = find_workload(name);
    ASSERT_NE(w, nullptr) << name;
    EXPECT_EQ(w->cgroup_clients(default_cell(*w)), 1) << name;
    EXPECT_EQ(w->cgroup_clients(default_cell(*w, {{"clients", "3"}})), 3) << name;
  }
  // pft has `clients` too, but attaches no worker to a cgroup: one leaf.
  const Workload* pft = find_workload("pft");
  ASSERT_NE(pft, nullptr);
  EXPECT_EQ(pft->cgroup_clients(default_cell(*pft, {{"clients", "4"}})), 1);
  for (const char* name : {"skeleton", "tmpfs_refault", "fake", "null"}) {
    const Workload* w = find_workload(name);
    ASSERT_NE(w, nullptr) << name;
    EXPECT_EQ(w->cgroup_clients(default_cell(*w)), 1) << name;
  }
}

// "Adding a workload is one file": nothing but workloads/skeleton.cpp (and
// comments naming it) mentions the skeleton workload in the code.
TEST(Registry, SkeletonIsRegisteredByItsOwnFileAlone) {
  namespace fs = std::filesystem;
  const fs::path root = test::source_path("");
  int files = 0;
  for (const char* dir : {"harness", "workloads", "results", "plots"})
    for (const auto& e : fs::recursive_directory_iterator(root / dir)) {
      const auto ext = e.path().extension();
      if (!e.is_regular_file() || (ext != ".cpp" && ext != ".h")) continue;
      ++files;
      if (e.path().filename() == "skeleton.cpp") continue;
      std::ifstream in(e.path());
      std::string line;
      int n = 0;
      while (std::getline(in, line)) {
        ++n;
        const auto code = line.substr(0, line.find("//"));
        EXPECT_EQ(code.find("Skeleton"), std::string::npos) << e.path() << ":" << n;
        EXPECT_EQ(code.find("\"skeleton\""), std::string::npos) << e.path() << ":" << n;
      }
    }
  EXPECT_GT(files, 20);
  const Workload* w = find_workload("skeleton");
  ASSERT_NE(w, nullptr);
  EXPECT_NE(w->summary().find("example"), std::string::npos) << w->summary();
}

// A second workload named "fake", to register twice.
class DuplicateFake : public Workload {
 public:
  std::string_view name() const override { return "fake"; }
  std::string_view summary() const override { return "a second fake"; }
  std::vector<ParamDescriptor> params() const override { return {}; }
  std::vector<MetricDescriptor> metrics() const override { return {}; }
  std::unique_ptr<CellSession> start(const Cell&, RunContext&) const override { return nullptr; }
};

TEST(RegistryDeathTest, DuplicateNameAbortsNamingBoth) {
  EXPECT_DEATH(register_workload(std::make_unique<DuplicateFake>()),
               "two workloads are registered as 'fake'.*scripted, seeded samples.*a second fake");
}

}  // namespace
}  // namespace nightjar
