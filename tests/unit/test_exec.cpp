// Unit under test: workloads/exec.{h,cpp} — metric declarations and
// extraction rules (kv, regex, JSON) and the exec workload's sessions
// (failed samples carry the output's tail). Running the command is
// run_command() of workloads/sys/process.h (tests/unit/test_process.cpp).
#include "workloads/exec.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <thread>

#include "results/model/exit_codes.h"
#include "test_support.h"

namespace nightjar {
namespace {

using test::TempDir;

Cell exec_cell(std::map<std::string, std::string> params) {
  const Workload* w = find_workload("exec");
  EXPECT_NE(w, nullptr);
  Cell cell;
  cell.workload = "exec";
  MachineFacts machine;
  machine.cpus = 2;
  machine.mem_total_bytes = 1ull << 30;
  for (const auto& d : w->params()) {
    auto it = params.find(d.name);
    cell.params[d.name] =
        parse_param(d, it == params.end() ? d.default_value : it->second, machine);
  }
  return cell;
}

// ---- metric declarations -----------------------------------------------------

TEST(ExecMetrics, WallAndCpuTimeAreMeasuredNotParsed) {
  auto m = parse_exec_metrics("cpu_time x wall_time:s:lower:amean");
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[0].name, "cpu_time");
  EXPECT_EQ(m[0].unit, "s");
  EXPECT_EQ(m[0].direction, Direction::lower_is_better);
  EXPECT_EQ(m[2].name, "wall_time");
  std::vector<std::string> missing;
  auto v = extract_metrics("x=1\n", m, ParseRule::key_value, "", missing);
  EXPECT_TRUE(missing.empty());
  EXPECT_EQ(v.size(), 1u);
  // A regex needs captures only for the parsed metrics.
  v = extract_metrics("x: 2\n", m, ParseRule::regex, "x: ([0-9]+)", missing);
  EXPECT_DOUBLE_EQ(v.at("x"), 2);
}

TEST(ExecMetrics, DeclarationsWithDefaults) {
  auto m = parse_exec_metrics("throughput:ops/s latency:ms:lower;ratio::higher:gmean plain");
  ASSERT_EQ(m.size(), 4u);
  EXPECT_EQ(m[0].name, "throughput");
  EXPECT_EQ(m[0].unit, "ops/s");
  EXPECT_EQ(m[0].direction, Direction::higher_is_better);
  EXPECT_EQ(m[0].mean, MeanKind::harmonic);
  EXPECT_EQ(m[1].direction, Direction::lower_is_better);
  EXPECT_EQ(m[1].mean, MeanKind::arithmetic);
  EXPECT_EQ(m[2].unit, "");
  EXPECT_EQ(m[2].mean, MeanKind::geometric);
  EXPECT_EQ(m[3].name, "plain");
  EXPECT_TRUE(parse_exec_metrics("").empty());
}

TEST(ExecMetrics, BadDeclarationsAreParamErrors) {
  for (const char* bad : {"x:u:sideways", "x:u:higher:median", "a b a", "wall_time:ms",
                          "cpu_time:s:higher", "wall_time wall_time", "na$me", "a:b:c:d:e"}) {
    EXPECT_THROW(parse_exec_metrics(bad), ParamError) << bad;
  }
}

// ---- extraction ---------------------------------------------------------------

std::vector<MetricDescriptor> decl(const std::string& s) {
  return parse_exec_metrics(s);
}

TEST(ExecExtract, KeyValueLastLineWinsAndUnitsAreIgnored) {
  std::vector<std::string> missing;
  auto v =
      extract_metrics("warming up\nthroughput=5\nthroughput = 100.5 ops/s\nlatency=2e-3\nother=1\n",
                      decl("throughput latency:s:lower"), ParseRule::key_value, "", missing);
  EXPECT_TRUE(missing.empty());
  EXPECT_DOUBLE_EQ(v.at("throughput"), 100.5);
  EXPECT_DOUBLE_EQ(v.at("latency"), 0.002);
  EXPECT_EQ(v.count("other"), 0u);
}

TEST(ExecExtract, KeyValueMissingAndNonNumbersAreExplained) {
  std::vector<std::string> missing;
  auto v = extract_metrics("a=nan\nb=fast\n", decl("a b c"), ParseRule::key_value, "", missing);
  EXPECT_TRUE(v.empty());
  ASSERT_EQ(missing.size(), 3u);
  EXPECT_NE(missing[0].find("not a finite number"), std::string::npos) << missing[0];
  EXPECT_NE(missing[1].find("'b=fast'"), std::string::npos) << missing[1];
  EXPECT_NE(missing[2].find("no line 'c=NUMBER'"), std::string::npos) << missing[2];
}

TEST(ExecExtract, RegexOneCapturePerMetricLastMatchCounts) {
  std::vector<std::string> missing;
  const std::string out = "run 1: 10 ops/s in 3 ms\nrun 2: 12.5 ops/s in 2.5 ms\nbye\n";
  auto v = extract_metrics(out, decl("tput latency:ms:lower"), ParseRule::regex,
                           R"(^run \d+: ([0-9.]+) ops/s in ([0-9.]+) ms$)", missing);
  EXPECT_TRUE(missing.empty());
  EXPECT_DOUBLE_EQ(v.at("tput"), 12.5);
  EXPECT_DOUBLE_EQ(v.at("latency"), 2.5);
  missing.clear();
  v = extract_metrics("nothing", decl("tput"), ParseRule::regex, "x=([0-9]+)", missing);
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_NE(missing[0].find("did not match"), std::string::npos);
  missing.clear();
  EXPECT_THROW(extract_metrics("", decl("a b"), ParseRule::regex, "(x)", missing), ParamError);
  EXPECT_THROW(extract_metrics("", decl("a"), ParseRule::regex, "([", missing), ParamError);
}

TEST(ExecExtract, JsonWholeOutputOrLastObjectLine) {
  std::vector<std::string> missing;
  auto v = extract_metrics(R"({"ops": 7, "lat": {"p50": 1.5}, "name": "x"})", decl("ops lat.p50"),
                           ParseRule::json, "", missing);
  EXPECT_TRUE(missing.empty());
  EXPECT_DOUBLE_EQ(v.at("ops"), 7);
  EXPECT_DOUBLE_EQ(v.at("lat.p50"), 1.5);
  v = extract_metrics("log line\n{\"ops\": 1}\n{\"ops\": 2}\n", decl("ops"), ParseRule::json, "",
                      missing);
  EXPECT_DOUBLE_EQ(v.at("ops"), 2);
  v = extract_metrics(R"({"ops": "7"})", decl("ops"), ParseRule::json, "", missing);
  EXPECT_TRUE(v.empty());
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_NE(missing[0].find("not a finite number"), std::string::npos);
  missing.clear();
  extract_metrics("plain text", decl("ops"), ParseRule::json, "", missing);
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_NE(missing[0].find("no JSON object"), std::string::npos);
}

// ---- the workload ------------------------------------------------------------

TEST(ExecWorkload, RegisteredWithParamsAndBuiltinMetrics) {
  const Workload* w = find_workload("exec");
  ASSERT_NE(w, nullptr);
  auto m = w->metrics();
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].name, "wall_time");
  EXPECT_EQ(m[1].name, "cpu_time");
  Cell c = exec_cell({{"command", "echo"}, {"metrics", "a:x b:y:lower cpu_time"}});
  auto cm = w->cell_metrics(c);
  ASSERT_EQ(cm.size(), 3u);
  EXPECT_EQ(cm[0].name, "a");
  EXPECT_EQ(cm[1].direction, Direction::lower_is_better);
  EXPECT_EQ(cm[2].name, "cpu_time");
  // No declaration: the command is timed.
  auto timed = w->cell_metrics(exec_cell({{"command", "echo"}}));
  ASSERT_EQ(timed.size(), 1u);
  EXPECT_EQ(timed[0].name, "wall_time");
}

TEST(ExecWorkload, ValidateNamesTheField) {
  const Workload* w = find_workload("exec");
  MachineFacts machine;
  auto field_of = [&](std::map<std::string, std::string> p) -> std::string {
    try {
      w->validate(exec_cell(std::move(p)), machine);
    } catch (const ParamError& e) {
      return e.field;
    }
    return "";
  };
  EXPECT_EQ(field_of({{"command", ""}}), "command");
  EXPECT_EQ(field_of({{"command", "echo 'x"}}), "command");
  EXPECT_EQ(field_of({{"command", "echo"}, {"metrics", "a:b:up"}}), "metrics");
  EXPECT_EQ(field_of({{"command", "echo"}, {"metrics", "a"}, {"parse", "regex"}}), "regex");
  EXPECT_EQ(
      field_of({{"command", "echo"}, {"metrics", "a b"}, {"parse", "regex"}, {"regex", "(x)"}}),
      "regex");
  EXPECT_EQ(field_of({{"command", "echo"}, {"parse", "regex"}, {"regex", "(x)"}}), "metrics");
  EXPECT_EQ(field_of({{"command", "echo"}, {"regex", "(x)"}}), "regex");
  EXPECT_EQ(field_of({{"command", "echo"}, {"metrics", "a"}}), "");
  EXPECT_EQ(field_of({{"command", "echo $((1+1))"}, {"shell", "on"}}), "");
}

TEST(ExecWorkload, MeasuresParsesAndFailsWithTheTail) {
  const Workload* w = find_workload("exec");
  RunContext ctx;
  TempDir dir;
  std::string script =
      dir.write("s.sh",
                "if [ \"$NIGHTJAR_ITERATION\" = 2 ]; then echo boom >&2; exit 7; fi\n"
                "if [ \"$NIGHTJAR_ITERATION\" = 3 ]; then echo nothing; exit 0; fi\n"
                "echo \"throughput=$((100 * NIGHTJAR_ITERATION))\"\n");
  Cell cell =
      exec_cell({{"command", "sh " + script}, {"metrics", "throughput:ops/s wall_time cpu_time"}});
  auto session = w->start(cell, ctx);
  session->warmup();
  IterationResult r1 = session->measure();
  ASSERT_FALSE(r1.failure) << *r1.failure;
  EXPECT_DOUBLE_EQ(r1.metrics.at("throughput"), 100);
  EXPECT_GT(r1.metrics.at("wall_time"), 0);
  EXPECT_EQ(r1.metrics.count("cpu_time"), 1u);
  IterationResult r2 = session->measure();
  ASSERT_TRUE(r2.failure);
  EXPECT_NE(r2.failure->find("exited with status 7"), std::string::npos) << *r2.failure;
  EXPECT_NE(r2.failure->find("stderr: boom"), std::string::npos) << *r2.failure;
  EXPECT_TRUE(r2.metrics.empty());
  IterationResult r3 = session->measure();
  ASSERT_TRUE(r3.failure);
  EXPECT_NE(r3.failure->find("no line 'throughput=NUMBER'"), std::string::npos) << *r3.failure;
  EXPECT_NE(r3.failure->find("stdout: nothing"), std::string::npos) << *r3.failure;
  IterationResult r4 = session->measure();
  ASSERT_FALSE(r4.failure);
  EXPECT_DOUBLE_EQ(r4.metrics.at("throughput"), 400);
}

TEST(ExecWorkload, WithoutMetricsTheCommandIsTimed) {
  const Workload* w = find_workload("exec");
  RunContext ctx;
  auto session = w->start(exec_cell({{"command", "true"}}), ctx);
  IterationResult r = session->measure();
  ASSERT_FALSE(r.failure) << *r.failure;
  ASSERT_EQ(r.metrics.size(), 1u);
  EXPECT_GT(r.metrics.at("wall_time"), 0);
}

TEST(ExecWorkload, TimeoutFailsTheSampleAndMissingProgramFailsTheStart) {
  const Workload* w = find_workload("exec");
  RunContext ctx;
  auto session = w->start(exec_cell({{"command", "sleep 5"}, {"timeout", "200ms"}}), ctx);
  IterationResult r = session->measure();
  ASSERT_TRUE(r.failure);
  EXPECT_NE(r.failure->find("timed out after 0.2 s"), std::string::npos) << *r.failure;
  EXPECT_THROW(w->start(exec_cell({{"command", "./no-such-prog"}}), ctx), EnvironmentError);
}

TEST(ExecWorkload, InterruptedIterationThrows) {
  const Workload* w = find_workload("exec");
  RunContext ctx;
  std::atomic<bool> stop{false};
  ctx.interrupted = [&] { return stop.load(); };
  auto session = w->start(exec_cell({{"command", "sleep 30"}}), ctx);
  std::thread t([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    stop = true;
  });
  EXPECT_THROW(session->measure(), Interrupted);
  t.join();
}

TEST(ExecWorkload, StderrAndJsonRules) {
  const Workload* w = find_workload("exec");
  RunContext ctx;
  auto s1 = w->start(
      exec_cell(
          {{"command", "echo 'v=3' >&2"}, {"shell", "on"}, {"metrics", "v"}, {"stream", "stderr"}}),
      ctx);
  IterationResult r = s1->measure();
  ASSERT_FALSE(r.failure) << *r.failure;
  EXPECT_DOUBLE_EQ(r.metrics.at("v"), 3);
  auto s2 = w->start(
      exec_cell({{"command", R"(["echo", "{\"v\": 4.5}"])"}, {"metrics", "v"}, {"parse", "json"}}),
      ctx);
  r = s2->measure();
  ASSERT_FALSE(r.failure) << *r.failure;
  EXPECT_DOUBLE_EQ(r.metrics.at("v"), 4.5);
}

}  // namespace
}  // namespace nightjar
