// Unit under test: workloads/exec.{h,cpp} — command-line splitting, metric
// declarations and extraction rules (kv, regex, JSON), run_command() (exit
// status, signals, timeout, interruption, process-group cleanup, cwd, env)
// and the exec workload's sessions (failed samples carry the output's tail).
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

// ---- split_command_line ------------------------------------------------------

TEST(ExecCommandLine, SplitsLikeAShellWithoutExpansion) {
  using V = std::vector<std::string>;
  EXPECT_EQ(split_command_line("./bench --size 1M"), (V{"./bench", "--size", "1M"}));
  EXPECT_EQ(split_command_line("  a   b\tc "), (V{"a", "b", "c"}));
  EXPECT_EQ(split_command_line("echo 'a b' \"c d\" e\\ f"), (V{"echo", "a b", "c d", "e f"}));
  EXPECT_EQ(split_command_line("echo $HOME '*' ~"), (V{"echo", "$HOME", "*", "~"}));
  EXPECT_EQ(split_command_line("echo \"a\\\"b\" 'it''s'"), (V{"echo", "a\"b", "its"}));
  EXPECT_EQ(split_command_line("echo ''"), (V{"echo", ""}));
  EXPECT_EQ(split_command_line(R"(["./b", "x y", "--n"])"), (V{"./b", "x y", "--n"}));
}

TEST(ExecCommandLine, BadInputNamesTheField) {
  for (const char* bad :
       {"", "   ", "echo 'open", "echo \"open", "echo \\", "[1, 2]", "[]", "[oops"}) {
    try {
      split_command_line(bad);
      ADD_FAILURE() << "accepted: " << bad;
    } catch (const ParamError& e) {
      EXPECT_EQ(e.field, "command");
      EXPECT_FALSE(e.message.empty());
    }
  }
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

// ---- run_command ------------------------------------------------------------

TEST(ExecRunCommand, CapturesOutputAndExitStatus) {
  CommandSpec s;
  s.argv = {"/bin/sh", "-c", "echo out; echo err >&2; exit 3"};
  CommandResult r = run_command(s);
  EXPECT_TRUE(r.started);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "err\n");
  EXPECT_EQ(r.describe(), "exited with status 3");
  EXPECT_EQ(r.tail(), "stderr: err; stdout: out");
}

TEST(ExecRunCommand, MergedStderrAndPathLookupAndEnvAndCwd) {
  TempDir dir;
  CommandSpec s;
  s.argv = {"sh", "-c", "pwd; echo x=$NJ_TEST_VALUE >&2"};
  s.cwd = dir.path();
  s.env["NJ_TEST_VALUE"] = "42";
  s.merge_stderr = true;
  CommandResult r = run_command(s);
  ASSERT_TRUE(r.ok()) << r.describe() << r.error;
  EXPECT_EQ(r.out, dir.path() + "\nx=42\n");
  EXPECT_TRUE(r.err.empty());
}

TEST(ExecRunCommand, NotFoundAndBadCwdDoNotStart) {
  CommandSpec s;
  s.argv = {"no-such-program-nightjar"};
  CommandResult r = run_command(s);
  EXPECT_FALSE(r.started);
  EXPECT_NE(r.error.find("not found in PATH"), std::string::npos) << r.error;
  s.argv = {"/bin/true"};
  s.cwd = "/no/such/dir";
  r = run_command(s);
  EXPECT_FALSE(r.started);
  EXPECT_NE(r.error.find("/no/such/dir"), std::string::npos) << r.error;
  s.cwd = "";
  TempDir dir;
  std::string text = dir.write("plain.txt", "not a program\n");  // mode 0644
  s.argv = {text};
  r = run_command(s);
  EXPECT_FALSE(r.started);
  EXPECT_NE(r.error.find("cannot run '" + text + "'"), std::string::npos) << r.error;
}

TEST(ExecRunCommand, SignalIsReported) {
  CommandSpec s;
  s.argv = {"/bin/sh", "-c", "kill -SEGV $$"};
  CommandResult r = run_command(s);
  EXPECT_EQ(r.signal, SIGSEGV);
  EXPECT_EQ(r.describe(), "killed by SIGSEGV");
}

bool pid_alive(pid_t pid) {
  if (::kill(pid, 0) != 0) return false;
  // A zombie (reparented to init, not yet reaped) counts as gone.
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string all;
  std::getline(stat, all);
  auto close = all.rfind(')');
  return close != std::string::npos && all.size() > close + 2 && all[close + 2] != 'Z';
}

TEST(ExecRunCommand, TimeoutKillsTheWholeGroup) {
  TempDir dir;
  std::string pidfile = dir.path() + "/bg.pid";
  CommandSpec s;
  // A background grandchild and a foreground sleep: both must go.
  s.argv = {"/bin/sh", "-c", "sleep 30 & echo $! > " + pidfile + "; sleep 30"};
  s.timeout_sec = 0.3;
  auto t0 = std::chrono::steady_clock::now();
  CommandResult r = run_command(s);
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_TRUE(r.timed_out);
  EXPECT_LT(took, 5.0);
  EXPECT_EQ(r.describe(0.3), "timed out after 0.3 s");
  pid_t bg = static_cast<pid_t>(std::stol(test::read_file(pidfile)));
  for (int i = 0; i < 100 && pid_alive(bg); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_FALSE(pid_alive(bg));
}

TEST(ExecRunCommand, LeftoverBackgroundProcessesAreKilledAtExit) {
  TempDir dir;
  std::string pidfile = dir.path() + "/bg.pid";
  CommandSpec s;
  s.argv = {"/bin/sh", "-c", "sleep 30 > /dev/null 2>&1 & echo $! > " + pidfile + "; echo done"};
  CommandResult r = run_command(s);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.out, "done\n");
  pid_t bg = static_cast<pid_t>(std::stol(test::read_file(pidfile)));
  for (int i = 0; i < 100 && pid_alive(bg); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_FALSE(pid_alive(bg));
}

TEST(ExecRunCommand, InterruptionStopsPromptly) {
  std::atomic<bool> stop{false};
  CommandSpec s;
  s.argv = {"/bin/sleep", "30"};
  s.interrupted = [&] { return stop.load(); };
  std::thread t([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    stop = true;
  });
  auto t0 = std::chrono::steady_clock::now();
  CommandResult r = run_command(s);
  t.join();
  EXPECT_TRUE(r.interrupted);
  EXPECT_EQ(r.signal, SIGTERM);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 5.0);
}

TEST(ExecRunCommand, CpuTimeOfABusyChild) {
  CommandSpec s;
  s.argv = {"/bin/sh", "-c", "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done"};
  CommandResult r = run_command(s);
  ASSERT_TRUE(r.ok());
  EXPECT_GT(r.cpu_sec, 0.0);
  EXPECT_GE(r.wall_sec, 0.0);
}

TEST(ExecRunCommand, OutputTail) {
  EXPECT_EQ(output_tail("a\nb\nc\n\n", 2), "b | c");
  EXPECT_EQ(output_tail(""), "");
  EXPECT_EQ(output_tail("0123456789", 5, 4), "...6789");
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
