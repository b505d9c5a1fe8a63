// Unit under test: the table of `nightjar run --format` outputs
// (results/render/run_output.h): its names and order, and that each format
// renders what its renderer renders, byte for byte, with a note per run the
// netperf format leaves out.
#include "results/render/run_output.h"

#include <gtest/gtest.h>

#include <limits>

#include "results/render/netperf.h"
#include "results/render/run_summary.h"
#include "test_support.h"

namespace nightjar {
namespace {

TEST(RunOutput, TextIsTheDefaultAndNetperfIsListed) {
  const auto& formats = run_output_formats();
  ASSERT_GE(formats.size(), 2u);
  EXPECT_EQ(formats.front().name, "text");
  ASSERT_NE(find_run_output_format("netperf"), nullptr);
  EXPECT_EQ(find_run_output_format("netperf")->name, "netperf");
  EXPECT_EQ(find_run_output_format("csv"), nullptr);
  for (const auto& f : formats) {
    EXPECT_FALSE(f.doc.empty()) << f.name;
    EXPECT_NE(f.render, nullptr) << f.name;
  }
}

TEST(RunOutput, NamesAndHelpComeFromTheTable) {
  EXPECT_EQ(run_output_names(), (std::vector<std::string>{"text", "netperf"}));
  EXPECT_EQ(run_output_choices_text(),
            "text (per-cell summary) or netperf (one netperf result block per client and "
            "iteration of tcp_sendfile/tcp_stream runs)");
}

TEST(RunOutput, FormatsRenderAsTheirRenderers) {
  test::TempDir dir;
  ResultsStore store(dir.path() + "/r.db");
  NewRun run;
  run.job = "netperf";
  run.cell.workload = "tcp_sendfile";
  run.cell.params["clients"] = {"1", 1};
  run.cell.params["family"] = {"ipv4", 0};
  run.iterations = 1;
  std::int64_t tcp = store.begin_run(run);
  IterationResult failed;  // netperf prints the header alone
  failed.failure = "client 0: no bytes received";
  store.add_iteration(tcp, 1, failed, {}, 5.1);
  store.finish_run(tcp, RunStatus::complete);
  NewRun other = run;
  other.cell.workload = "pft";
  std::int64_t pft = store.begin_run(other);
  store.finish_run(pft, RunStatus::complete);
  const std::vector<std::int64_t> ids = {tcp, pft};

  RunOutput text = find_run_output_format("text")->render(store, ids);
  EXPECT_EQ(text.text, render_run_summary(summarize_runs(store, ids)));
  EXPECT_TRUE(text.notes.empty());

  RunOutput netperf = find_run_output_format("netperf")->render(store, ids);
  EXPECT_EQ(netperf.text, render_netperf(store, ids));
  EXPECT_EQ(netperf.text.rfind("TCP SENDFILE TEST from 0.0.0.0 (0.0.0.0) port 0 AF_INET to ", 0),
            0u)
      << netperf.text;
  EXPECT_EQ(netperf.notes,
            std::vector<std::string>{"run " + std::to_string(pft) +
                                     " has no netperf result blocks (not tcp_sendfile/tcp_stream, "
                                     "or no iterations)"});
}

TEST(RunSummaryText, AnUndefinedCoeffVarIsADashNotNan) {
  // Samples whose spread overflows (values near DBL_MAX) have no CoeffVar.
  MetricSummary m;
  m.metric = "faults_per_sec";
  m.unit = "faults/sec";
  m.n = 2;
  m.mean_value = 1e308;
  m.coeff_var = std::numeric_limits<double>::quiet_NaN();
  m.min = m.max = 1e308;
  RunSummary run;
  run.id = 1;
  run.variant = "a";
  run.cell = "c";
  run.status = "complete";
  run.metrics = {m};
  const std::string text = render_run_summary({run});
  EXPECT_EQ(text.find("nan"), std::string::npos) << text;
  EXPECT_NE(text.find(" - "), std::string::npos) << text;
}

TEST(RunSummaryText, AKernelColumnWhenTheRunsMeasuredSeveralKernels) {
  MetricSummary m;
  m.metric = "faults_per_sec";
  m.n = 3;
  m.mean_value = 100.0;
  m.coeff_var = 1.0;
  RunSummary a;
  a.id = 1;
  a.variant = "default";
  a.cell = "c";
  a.status = "complete";
  a.metrics = {m};
  a.kernel = "6.1.0-13-amd64";
  RunSummary b = a;
  b.id = 2;
  b.kernel = "6.1.0-13-rt-amd64";
  const std::string two = render_run_summary({a, b});
  EXPECT_EQ(two.rfind("run  variant  kernel", 0), 0u) << two;
  EXPECT_NE(two.find("6.1.0-13-rt-amd64"), std::string::npos) << two;
  b.kernel = a.kernel;
  const std::string one = render_run_summary({a, b});
  EXPECT_EQ(one.find("kernel"), std::string::npos) << one;
}

}  // namespace
}  // namespace nightjar
