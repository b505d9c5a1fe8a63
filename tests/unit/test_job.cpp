// Unit under test: harness/job/job.cpp — load_job (job file shape and its error
// messages with file:line), parse_set (--set NAME=V1,V2) and expand_matrix
// (defaults, axes, product order, overrides, canonical dedup, validation).
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "harness/job/job.h"
#include "results/model/exit_codes.h"
#include "workloads/sys/monitor_set.h"

namespace nightjar {
namespace {

constexpr std::uint64_t GiB = 1ULL << 30;

// A small workload declared here so the tests do not depend on pft:
// clients (count, min 1), duration, mode (threads|processes), size (min 4K).
// validate() rejects a size above MemTotal (field "size"), more than 8
// process clients (field "clients") and clients=3 with mode=processes (no field).
class MatrixWorkload : public Workload {
 public:
  std::string_view name() const override { return "matrix"; }
  std::string_view summary() const override { return "test workload"; }
  std::vector<ParamDescriptor> params() const override {
    ParamDescriptor clients{"clients", ParamType::count, "workers", "1", "workers", {}, 1, {}};
    ParamDescriptor duration{"duration", ParamType::duration, "s", "1s", "time", {}, {}, {}};
    ParamDescriptor mode{"mode",           ParamType::choice,        "", "threads",
                         "kind of worker", {"threads", "processes"}, {}, {}};
    ParamDescriptor size{"size", ParamType::size, "bytes", "4K", "bytes", {}, 4096, {}};
    return {clients, duration, mode, size};
  }
  std::vector<MetricDescriptor> metrics() const override { return {}; }
  void validate(const Cell& cell, const MachineFacts& machine) const override {
    if (cell.bytes("size") > machine.mem_total_bytes)
      throw ParamError{"size", cell.text("size") + " is larger than memory; write at most 100%mem"};
    if (cell.text("mode") == "processes" && cell.integer("clients") > 8)
      throw ParamError{"clients", "more than 8 processes; write at most 8"};
    if (cell.text("mode") == "processes" && cell.integer("clients") == 3)
      throw ParamError{"", "3 processes are unlucky; write another count"};
  }
  std::unique_ptr<CellSession> start(const Cell&, RunContext&) const override { return nullptr; }
};

// A workload with a required count (no default), an optional text (empty
// default: the empty text) and, on request, a bad default.
class RequiredWorkload : public Workload {
 public:
  explicit RequiredWorkload(std::string bad_default = "") : bad_default_(std::move(bad_default)) {}
  std::string_view name() const override { return "required"; }
  std::string_view summary() const override { return "test workload"; }
  std::vector<ParamDescriptor> params() const override {
    std::vector<ParamDescriptor> p;
    p.push_back(ParamDescriptor{"threads", ParamType::count, "", "", "workers", {}, 1, {}});
    p.push_back(ParamDescriptor{"label", ParamType::text, "", "", "a note", {}, {}, {}});
    if (!bad_default_.empty())
      p.push_back(ParamDescriptor{"size", ParamType::size, "", bad_default_, "", {}, {}, {}});
    return p;
  }
  std::vector<MetricDescriptor> metrics() const override { return {}; }
  std::unique_ptr<CellSession> start(const Cell&, RunContext&) const override { return nullptr; }

 private:
  std::string bad_default_;
};

MachineFacts test_machine() {
  MachineFacts m;
  m.mem_total_bytes = GiB;
  m.cpus = 4;
  return m;
}

class JobTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "nightjar-job-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Writes `text` to DIR/name and returns the path.
  std::string write(const std::string& text, const std::string& name = "job.yaml") {
    std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }

  // load_job's message for `text`, with the file's path shown as "JOB".
  std::string load_error(const std::string& text) {
    std::string path = write(text);
    try {
      load_job(path);
    } catch (const UsageError& e) {
      EXPECT_EQ(e.code(), ExitCode::usage);
      return replace_path(e.what(), path);
    }
    ADD_FAILURE() << "load_job accepted:\n" << text;
    return "";
  }

  std::vector<Cell> expand(const std::string& text, const std::vector<SetOverride>& sets = {}) {
    return expand_matrix(load_job(write(text)), workload_, sets, test_machine());
  }

  // expand_matrix's message for `text`, with the file's path shown as "JOB".
  std::string expand_error(const std::string& text, const std::vector<SetOverride>& sets = {},
                           const Workload* workload = nullptr) {
    std::string path = write(text);
    try {
      expand_matrix(load_job(path), workload ? *workload : workload_, sets, test_machine());
    } catch (const UsageError& e) {
      return replace_path(e.what(), path);
    }
    ADD_FAILURE() << "expand_matrix accepted:\n" << text;
    return "";
  }

  static std::string replace_path(std::string message, const std::string& path) {
    if (message.rfind(path, 0) == 0) message.replace(0, path.size(), "JOB");
    return message;
  }

  static std::vector<std::string> ids(const std::vector<Cell>& cells) {
    std::vector<std::string> out;
    for (const auto& c : cells) out.push_back(c.id());
    return out;
  }

  std::string dir_;
  MatrixWorkload workload_;
};

// ---- load_job: what it keeps ---------------------------------------------------

TEST_F(JobTest, LoadsEveryKey) {
  std::string path = write(
      "workload: fake\n"                // 1
      "description: quick pft check\n"  // 2
      "iterations: 30\n"                // 3
      "warmup: 2\n"                     // 4
      "variant: vanilla\n"              // 5
      "params:\n"                       // 6
      "  size: 10K\n"                   // 7
      "  clients: [1, 2,\n"             // 8
      "            4]\n"                // 9
      "  mode:\n"                       // 10
      "    - threads\n"                 // 11
      "    - processes\n"               // 12
      "cgroup:\n"                       // 13
      "  depth: 3\n",                   // 14
      "pft-quick.yaml");
  JobFile job = load_job(path);
  EXPECT_EQ(job.path, path);
  EXPECT_EQ(job.name, "pft-quick");
  EXPECT_EQ(job.workload, "fake");
  EXPECT_EQ(job.workload_line, 1);
  EXPECT_EQ(job.description, "quick pft check");
  EXPECT_EQ(job.iterations, 30);
  EXPECT_EQ(job.warmup, 2);
  EXPECT_EQ(job.variant, "vanilla");
  ASSERT_EQ(job.params.size(), 3u);
  ASSERT_EQ(job.params["size"].size(), 1u);
  EXPECT_EQ(job.params["size"][0].text, "10K");
  EXPECT_EQ(job.params["size"][0].line, 7);
  ASSERT_EQ(job.params["clients"].size(), 3u);
  EXPECT_EQ(job.params["clients"][0].text, "1");
  EXPECT_EQ(job.params["clients"][0].line, 8);
  EXPECT_EQ(job.params["clients"][2].text, "4");
  EXPECT_EQ(job.params["clients"][2].line, 9);
  ASSERT_EQ(job.params["mode"].size(), 2u);
  EXPECT_EQ(job.params["mode"][0].text, "threads");
  EXPECT_EQ(job.params["mode"][0].line, 11);
  EXPECT_EQ(job.params["mode"][1].text, "processes");
  EXPECT_EQ(job.params["mode"][1].line, 12);
  EXPECT_EQ(job.param_lines["mode"], 10);
  EXPECT_EQ(job.cgroup.depth, 3);
  EXPECT_EQ(job.cgroup_line, 13);
}

TEST_F(JobTest, DefaultsWhenAbsent) {
  JobFile job = load_job(write("workload: fake\n", "plain.yml"));
  EXPECT_EQ(job.name, "plain");
  EXPECT_EQ(job.iterations, 5);
  EXPECT_EQ(job.warmup, 1);
  EXPECT_EQ(job.variant, "");
  EXPECT_EQ(job.description, "");
  EXPECT_TRUE(job.params.empty());
  EXPECT_FALSE(job.cgroup.enabled());
  EXPECT_EQ(job.cgroup_line, 0);
}

TEST_F(JobTest, YamlNullLiteralIsText) {
  // yaml-cpp reads a plain `null` as a Null node; the workload named null must survive.
  JobFile job = load_job(write("workload: null\nparams:\n  mode: ~\n  path: NULL # c\n"));
  EXPECT_EQ(job.workload, "null");
  EXPECT_EQ(job.params["mode"][0].text, "~");
  EXPECT_EQ(job.params["path"][0].text, "NULL");
  EXPECT_EQ(job.params["path"][0].line, 4);
}

TEST_F(JobTest, QuotedAndEmptyParams) {
  JobFile job = load_job(write("workload: fake\nparams:\n  size: \"10K\"\n  mode: 'on'\n"));
  EXPECT_EQ(job.params["size"][0].text, "10K");
  EXPECT_EQ(job.params["mode"][0].text, "on");
  EXPECT_TRUE(load_job(write("workload: fake\nparams:\n")).params.empty());
  EXPECT_TRUE(load_job(write("workload: fake\nparams: {}\n")).params.empty());
}

// ---- load_job: errors ------------------------------------------------------------

TEST_F(JobTest, MissingFile) {
  std::string path = dir_ + "/absent.yaml";
  try {
    load_job(path);
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), path + ": cannot read job file: No such file or directory");
  }
}

TEST_F(JobTest, SyntaxError) {
  EXPECT_EQ(load_error("workload: fake\nparams:\n  clients: [1, 2\n"),
            "JOB:4: syntax error: end of sequence flow not found; fix the YAML");
  EXPECT_EQ(load_error("workload: fake\niterations: 3: 4\n"),
            "JOB:2: syntax error: illegal map value; fix the YAML");
}

TEST_F(JobTest, UnknownWorkload) {
  std::string m = load_error("description: x\nworkload: nope\n");
  EXPECT_EQ(m.rfind("JOB:2: workload: unknown workload 'nope'; run `nightjar list` to see the "
                    "workloads (",
                    0),
            0u)
      << m;
  EXPECT_NE(m.find("fake"), std::string::npos) << m;
  EXPECT_NE(m.find("null"), std::string::npos) << m;
  EXPECT_NE(load_error("workload: fak\n").find("unknown workload 'fak' (did you mean 'fake'?); "),
            std::string::npos);
}

TEST_F(JobTest, MissingWorkload) {
  EXPECT_EQ(load_error("iterations: 3\n"),
            "JOB: workload: missing; add `workload: NAME` (run `nightjar list` to see the "
            "workloads)");
  EXPECT_EQ(load_error(""),
            "JOB: workload: the job file is empty; write at least `workload: NAME` (run `nightjar "
            "list` to see the workloads)");
  EXPECT_EQ(load_error("workload:\n").rfind("JOB:1: workload: no workload named; ", 0), 0u);
  EXPECT_EQ(load_error("workload: [fake]\n"),
            "JOB:1: workload: expected a workload name such as `workload: pft`, found a list; "
            "write a workload name such as `workload: pft`");
}

TEST_F(JobTest, UnknownTopLevelKey) {
  EXPECT_EQ(load_error("workload: fake\ncolour: blue\n"),
            "JOB:2: colour: unknown key; known keys are workload, description, params, "
            "iterations, warmup, variant, cgroup, variants, min_effect, vm, monitors");
  EXPECT_EQ(load_error("workload: fake\n\niteration: 3\n"),
            "JOB:3: iteration: unknown key (did you mean 'iterations'?); known keys are workload, "
            "description, params, iterations, warmup, variant, cgroup, variants, min_effect, vm, "
            "monitors");
}

// `monitors:` (docs/monitors.md): the monitors recorded per iteration.
TEST_F(JobTest, MonitorsAreKeptInOrderAndDefaultWhenAbsent) {
  JobFile absent = load_job(write("workload: fake\n"));
  EXPECT_EQ(absent.monitors, std::nullopt);
  EXPECT_EQ(job_monitors(absent), default_monitors());
  EXPECT_NE(std::find(default_monitors().begin(), default_monitors().end(), "perf-stat"),
            default_monitors().end());
  JobFile job = load_job(write("workload: fake\nmonitors: [net, perf-stat]\n"));
  EXPECT_EQ(job_monitors(job), (std::vector<std::string>{"net", "perf-stat"}));
  EXPECT_EQ(job_monitors(load_job(write("workload: fake\nmonitors: []\n"))),
            std::vector<std::string>{});
}

TEST_F(JobTest, MonitorsRefusesUnknownNamesAndOtherShapes) {
  EXPECT_EQ(load_error("workload: fake\nmonitors:\n  - perf-stat\n  - perf-stats\n"),
            "JOB:4: monitors: unknown monitor 'perf-stats' (did you mean 'perf-stat'?); write "
            "`monitors: [perf-stat, meminfo]` (known: vmstat, cpu, perf-stat, memcg, meminfo, "
            "softirqs, schedstat, interrupts, net, perf-profile; docs/monitors.md)");
  EXPECT_EQ(load_error("workload: fake\nmonitors: perf-stat\n"),
            "JOB:2: monitors: expected a list of monitor names, found a scalar; write `monitors: "
            "[perf-stat, meminfo]` (known: vmstat, cpu, perf-stat, memcg, meminfo, softirqs, "
            "schedstat, interrupts, net, perf-profile; docs/monitors.md)");
  EXPECT_EQ(load_error("workload: fake\nmonitors: [net, net]\n"),
            "JOB:2: monitors: 'net' given twice; keep one");
}

// `vm: {cgroup2_options: ...}`: the guest's cgroup2 mount options (docs/jobs.md).
TEST_F(JobTest, VmCgroup2OptionsAreKeptWithTheirLine) {
  JobFile absent = load_job(write("workload: fake\n"));
  EXPECT_EQ(absent.vm_cgroup2_options, std::nullopt);
  EXPECT_EQ(absent.vm_line, 0);
  JobFile job =
      load_job(write("workload: fake\nvm:\n  cgroup2_options: nsdelegate,memory_recursiveprot\n"));
  EXPECT_EQ(job.vm_cgroup2_options, "nsdelegate,memory_recursiveprot");
  EXPECT_EQ(job.vm_line, 2);
  // "" is the kernel's defaults, not "absent".
  EXPECT_EQ(load_job(write("workload: fake\nvm: {cgroup2_options: \"\"}\n")).vm_cgroup2_options,
            "");
}

TEST_F(JobTest, VmCgroup2OptionsErrorsNameTheLineAndTheFix) {
  const std::string fix =
      "write a comma list of nsdelegate, favordynmods, memory_localevents, "
      "memory_recursiveprot, memory_hugetlb_accounting, pids_localevents, or \"\" for the "
      "kernel's defaults";
  EXPECT_EQ(load_error("workload: fake\nvm:\n  cgroup2_options: memory_recursivprot\n"),
            "JOB:3: vm.cgroup2_options: 'memory_recursivprot' is not a cgroup2 mount option (did "
            "you mean 'memory_recursiveprot'?); " +
                fix);
  EXPECT_EQ(load_error("workload: fake\nvm: {cgroup2_options: 'nsdelegate,,memory_localevents'}\n"),
            "JOB:2: vm.cgroup2_options: 'nsdelegate,,memory_localevents' has an empty item (two "
            "commas, or one at an end); " +
                fix);
  EXPECT_EQ(load_error("workload: fake\nvm: {cgroup2_options: 'nsdelegate,nsdelegate'}\n"),
            "JOB:2: vm.cgroup2_options: 'nsdelegate' is given twice; name each option once");
  EXPECT_EQ(load_error("workload: fake\nvm:\n  cgroup2_option: nsdelegate\n"),
            "JOB:3: vm.cgroup2_option: unknown key (did you mean 'cgroup2_options'?); the key of "
            "`vm:` is cgroup2_options, as in `vm: {cgroup2_options: memory_recursiveprot}`");
  EXPECT_EQ(load_error("workload: fake\nvm: nsdelegate\n"),
            "JOB:2: vm: expected a mapping, found a scalar; write `vm: {cgroup2_options: "
            "memory_recursiveprot}`, or remove the key");
  EXPECT_EQ(load_error("workload: fake\nvm:\n  cgroup2_options:\n"),
            "JOB:3: vm.cgroup2_options: no value; write a comma list of cgroup2 mount options "
            "such as memory_recursiveprot, or \"\" for the kernel's defaults");
  EXPECT_EQ(load_error("workload: fake\nvm:\n  cgroup2_options: [nsdelegate]\n"),
            "JOB:3: vm.cgroup2_options: expected a comma list of cgroup2 mount options such as "
            "memory_recursiveprot, or \"\" for the kernel's defaults, found a list; write a comma "
            "list of cgroup2 mount options such as memory_recursiveprot, or \"\" for the "
            "kernel's defaults");
}

TEST(Cgroup2Options, TheCommandLinesCheckIsTheJobFilesCheck) {
  EXPECT_EQ(cgroup2_options_problem(""), "");
  EXPECT_EQ(cgroup2_options_problem("memory_recursiveprot"), "");
  EXPECT_EQ(cgroup2_options_problem("nsdelegate,memory_recursiveprot,memory_localevents"), "");
  EXPECT_NE(cgroup2_options_problem("memory_recursiveprot,"), "");
  EXPECT_NE(cgroup2_options_problem(" nsdelegate"), "");
  EXPECT_NE(cgroup2_options_problem("nsdelegate;reboot"), "");  // never reaches the guest's shell
  EXPECT_NE(cgroup2_options_problem("NSDELEGATE"), "");
}

TEST_F(JobTest, NotAMapping) {
  EXPECT_EQ(load_error("- workload: fake\n").rfind("JOB:1: job: expected a mapping of keys", 0),
            0u);
}

TEST_F(JobTest, DuplicateKeys) {
  EXPECT_EQ(load_error("workload: fake\niterations: 3\niterations: 4\n"),
            "JOB:3: iterations: given twice (first on line 2); keep one");
  EXPECT_EQ(load_error("workload: fake\nparams:\n  clients: 1\n  clients: 2\n"),
            "JOB:4: params.clients: given twice (first on line 3); keep one, with a list [a, b] "
            "for several values");
}

TEST_F(JobTest, WrongTypeIterations) {
  EXPECT_EQ(load_error("workload: fake\niterations: abc\n"),
            "JOB:2: iterations: 'abc' is not a whole number; write a whole number of at least 1 "
            "such as 5");
  EXPECT_EQ(load_error("workload: fake\niterations: 0\n"),
            "JOB:2: iterations: 0 is below the minimum 1; write a whole number of at least 1 such "
            "as 5");
  EXPECT_EQ(load_error("workload: fake\niterations: 2.5\n"),
            "JOB:2: iterations: '2.5' is not a whole number; write a whole number of at least 1 "
            "such as 5");
  EXPECT_EQ(load_error("workload: fake\niterations: [1, 2]\n"),
            "JOB:2: iterations: expected a whole number of at least 1 such as 5, found a list; "
            "write a whole number of at least 1 such as 5");
  EXPECT_EQ(load_error("workload: fake\niterations: 99999999999\n"),
            "JOB:2: iterations: '99999999999' is too large; write a whole number of at least 1 "
            "such as 5");
}

TEST_F(JobTest, WrongTypeWarmup) {
  EXPECT_EQ(load_error("workload: fake\nwarmup: -1\n"),
            "JOB:2: warmup: -1 is below the minimum 0; write a whole number of at least 0 such as "
            "1");
  EXPECT_EQ(load_job(write("workload: fake\nwarmup: 0\n")).warmup, 0);
}

TEST_F(JobTest, WrongTypeParams) {
  EXPECT_EQ(load_error("workload: fake\nparams: [1, 2]\n"),
            "JOB:2: params: expected a mapping of parameter names to values, found a list; write "
            "`params:` followed by indented `NAME: VALUE` lines such as `clients: [1, 2]`");
  EXPECT_EQ(
      load_error("workload: fake\nparams: 4\n")
          .rfind("JOB:2: params: expected a mapping of parameter names to values, found a scalar;",
                 0),
      0u);
}

TEST_F(JobTest, NestedValuesInParams) {
  EXPECT_EQ(load_error("workload: fake\nparams:\n  clients:\n    a: 1\n"),
            "JOB:3: params.clients: a nested mapping is not a parameter value; write a value such "
            "as `clients: 4` or a list such as `clients: [1, 2]`");
  EXPECT_EQ(load_error("workload: fake\nparams:\n  clients:\n    - 1\n    - [2, 3]\n"),
            "JOB:5: params.clients: a list element is a list; lists hold plain values, write a "
            "value such as `clients: 4` or a list such as `clients: [1, 2]`");
  EXPECT_EQ(load_error("workload: fake\nparams:\n  clients: [1, {a: 2}]\n")
                .rfind("JOB:3: params.clients: a list element is a mapping;", 0),
            0u);
  EXPECT_EQ(load_error("workload: fake\nparams:\n  clients: []\n"),
            "JOB:3: params.clients: empty list; write at least one value, a value such as "
            "`clients: 4` or a list such as `clients: [1, 2]`");
  EXPECT_EQ(load_error("workload: fake\nparams:\n  clients:\n  mode: threads\n"),
            "JOB:3: params.clients: no value; write a value such as `clients: 4` or a list such "
            "as `clients: [1, 2]`, or remove the key");
}

TEST_F(JobTest, WrongTypeOtherKeys) {
  EXPECT_EQ(load_error("workload: fake\ncgroup: 3\n"),
            "JOB:2: cgroup: expected a mapping, found a scalar; write `cgroup:` followed by "
            "indented settings, or remove the key");
  EXPECT_EQ(load_error("workload: fake\nvariant: [a, b]\n")
                .rfind("JOB:2: variant: expected a variant label", 0),
            0u);
  EXPECT_EQ(load_error("workload: fake\nvariant:\n"),
            "JOB:2: variant: no label; write a variant label such as `variant: vanilla`, or "
            "remove the key");
  EXPECT_EQ(load_error("workload: fake\ndescription: {a: b}\n")
                .rfind("JOB:2: description: expected one line of text, found a mapping", 0),
            0u);
}

// ---- parse_set -------------------------------------------------------------------

TEST(ParseSet, NameAndValues) {
  SetOverride s = parse_set("clients=1,2");
  EXPECT_EQ(s.key, "clients");
  EXPECT_EQ(s.values, (std::vector<std::string>{"1", "2"}));
  s = parse_set(" clients = [1, 2 ,4] ");
  EXPECT_EQ(s.key, "clients");
  EXPECT_EQ(s.values, (std::vector<std::string>{"1", "2", "4"}));
  s = parse_set("size=10K");
  EXPECT_EQ(s.values, (std::vector<std::string>{"10K"}));
  s = parse_set("path=a=b");
  EXPECT_EQ(s.key, "path");
  EXPECT_EQ(s.values, (std::vector<std::string>{"a=b"}));
}

std::string set_error(const std::string& arg) {
  try {
    parse_set(arg);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(ParseSet, Errors) {
  EXPECT_EQ(set_error("clients"),
            "--set 'clients': missing '='; write --set NAME=VALUE or NAME=V1,V2, such as --set "
            "clients=1,2");
  EXPECT_EQ(set_error("=4"),
            "--set '=4': missing the parameter name; write --set NAME=VALUE or NAME=V1,V2, such "
            "as --set clients=1,2");
  EXPECT_EQ(set_error("clients="),
            "--set clients: empty value; write --set clients=VALUE or a list such as --set "
            "clients=V1,V2");
  EXPECT_EQ(set_error("clients=1,,2"),
            "--set clients: empty value in '1,,2'; separate values with single commas, such as "
            "--set clients=1,2");
  EXPECT_EQ(set_error("clients=[]"),
            "--set clients: empty value; write --set clients=VALUE or a list such as --set "
            "clients=V1,V2");
}

// ---- expand_matrix ---------------------------------------------------------------

TEST_F(JobTest, DefaultsFillEveryParameter) {
  std::vector<Cell> cells = expand("workload: fake\n");
  ASSERT_EQ(cells.size(), 1u);
  EXPECT_EQ(cells[0].workload, "matrix");
  EXPECT_EQ(cells[0].id(), "clients=1 duration=1s mode=threads size=4K");
  EXPECT_EQ(cells[0].integer("clients"), 1);
  EXPECT_EQ(cells[0].bytes("size"), 4096u);
}

TEST_F(JobTest, ProductOrderFirstSortedAxisSlowest) {
  // Written order of the keys does not matter; sorted: clients, mode.
  std::vector<Cell> cells = expand(
      "workload: fake\nparams:\n  mode: [threads, processes]\n  clients: [1, 2]\n"
      "  duration: 60\n");
  EXPECT_EQ(ids(cells), (std::vector<std::string>{
                            "clients=1 duration=60s mode=threads size=4K",
                            "clients=1 duration=60s mode=processes size=4K",
                            "clients=2 duration=60s mode=threads size=4K",
                            "clients=2 duration=60s mode=processes size=4K",
                        }));
}

TEST_F(JobTest, ProductOrderThreeAxesValuesInGivenOrder) {
  std::vector<Cell> cells = expand(
      "workload: fake\nparams:\n  size: [8K, 4K]\n  clients: [4, 1]\n"
      "  mode: [processes, threads]\n");
  std::vector<std::string> got;
  for (const auto& c : cells)
    got.push_back(c.text("clients") + "/" + c.text("mode") + "/" + c.text("size"));
  EXPECT_EQ(got, (std::vector<std::string>{
                     "4/processes/8K",
                     "4/processes/4K",
                     "4/threads/8K",
                     "4/threads/4K",
                     "1/processes/8K",
                     "1/processes/4K",
                     "1/threads/8K",
                     "1/threads/4K",
                 }));
}

TEST_F(JobTest, CanonicalValuesNameOneCell) {
  std::vector<Cell> cells = expand("workload: fake\nparams:\n  size: [10240, 10K, 10KiB, 10k]\n");
  EXPECT_EQ(ids(cells), (std::vector<std::string>{
                            "clients=1 duration=1s mode=threads size=10K",
                            "clients=1 duration=1s mode=threads size=10000",
                        }));
  EXPECT_EQ(expand("workload: fake\nparams:\n  size: 10240\n  duration: 1000ms\n")[0].id(),
            expand("workload: fake\nparams:\n  size: 10K\n  duration: 1\n")[0].id());
}

TEST_F(JobTest, RelativeValuesResolvedWithMachine) {
  std::vector<Cell> cells =
      expand("workload: fake\nparams:\n  size: 25%mem\n  clients: 100%cpus\n");
  ASSERT_EQ(cells.size(), 1u);
  EXPECT_EQ(cells[0].id(), "clients=100%cpus duration=1s mode=threads size=25%mem");
  EXPECT_EQ(cells[0].bytes("size"), GiB / 4);
  EXPECT_EQ(cells[0].integer("clients"), 4);
}

TEST_F(JobTest, SetReplacesAxis) {
  std::vector<Cell> cells =
      expand("workload: fake\nparams:\n  clients: [1, 2]\n", {parse_set("clients=4")});
  EXPECT_EQ(ids(cells), (std::vector<std::string>{"clients=4 duration=1s mode=threads size=4K"}));
}

TEST_F(JobTest, SetAddsAxis) {
  std::vector<Cell> cells =
      expand("workload: fake\nparams:\n  clients: 2\n", {parse_set("mode=threads,processes")});
  EXPECT_EQ(ids(cells), (std::vector<std::string>{
                            "clients=2 duration=1s mode=threads size=4K",
                            "clients=2 duration=1s mode=processes size=4K",
                        }));
}

TEST_F(JobTest, LaterSetWins) {
  std::vector<Cell> cells =
      expand("workload: fake\n", {parse_set("size=1M,2M"), parse_set("size=8K")});
  EXPECT_EQ(ids(cells), (std::vector<std::string>{"clients=1 duration=1s mode=threads size=8K"}));
}

TEST_F(JobTest, JobFileBuiltInCode) {
  JobFile job;
  job.params["clients"] = {JobValue{"3", 0}, JobValue{"0", 7}};
  try {
    expand_matrix(job, workload_, {}, test_machine());
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()),
              "params.clients: 0 is below the minimum 1; write a positive count such as 1 or "
              "[1, 2]");
  }
  job.params.clear();
  job.params["clients"] = {JobValue{"3", 0}};
  EXPECT_EQ(expand_matrix(job, workload_, {}, test_machine()).size(), 1u);
}

TEST_F(JobTest, BadValuesNameFileLineAndField) {
  EXPECT_EQ(expand_error("workload: fake\nparams:\n  clients: [1, 0]\n"),
            "JOB:3: params.clients: 0 is below the minimum 1; write a positive count such as 1 or "
            "[1, 2]");
  EXPECT_EQ(expand_error("workload: fake\nparams:\n  clients:\n    - 1\n    - -2\n"),
            "JOB:5: params.clients: '-2' is a negative count; write a whole number such as 4, or "
            "N%cpus such as 100%cpus");
  EXPECT_EQ(expand_error("workload: fake\nparams:\n  mode: threads\n  size: 0\n"),
            "JOB:4: params.size: 0 is below the minimum 4K; write a size of at least 4K such as "
            "4K or [4K, 8K]");
  EXPECT_EQ(expand_error("workload: fake\nparams:\n  size: 10Q\n"),
            "JOB:3: params.size: '10Q' has an unknown suffix; write bytes or use K, M, G, T "
            "(powers of 2), k, m, g (powers of 10) or N%mem");
  EXPECT_EQ(expand_error("workload: fake\nparams:\n  mode: [threads, thread]\n"),
            "JOB:3: params.mode: 'thread' is not one of threads, processes; write one of them, "
            "such as threads or [threads, processes]");
  EXPECT_EQ(expand_error("workload: fake\nparams:\n  duration: soon\n"),
            "JOB:3: params.duration: 'soon' is not a duration; write seconds or use ms, s, m, h "
            "(such as 500ms, 60s, 2m, 1h)");
  EXPECT_EQ(expand_error("workload: fake\nparams:\n  clients: ''\n"),
            "JOB:3: params.clients: empty value; write a count such as 1");
}

TEST_F(JobTest, UnknownParameterListsKnownOnes) {
  EXPECT_EQ(expand_error("workload: fake\nparams:\n  clients: 1\n  clientz:\n    - 2\n"),
            "JOB:4: params.clientz: unknown parameter (did you mean 'clients'?); matrix's "
            "parameters are clients, duration, mode, size (run `nightjar list` for their "
            "meaning)");
  EXPECT_EQ(expand_error("workload: fake\nparams:\n  colour: red\n"),
            "JOB:3: params.colour: unknown parameter; matrix's parameters are clients, duration, "
            "mode, size (run `nightjar list` for their meaning)");
}

TEST_F(JobTest, SetErrorsNameSet) {
  EXPECT_EQ(expand_error("workload: fake\n", {parse_set("clients=0")}),
            "--set clients: 0 is below the minimum 1; write a positive count such as 1 or [1, 2]");
  EXPECT_EQ(expand_error("workload: fake\n", {parse_set("size=1K")}),
            "--set size: 1K is below the minimum 4K; write a size of at least 4K such as 4K or "
            "[4K, 8K]");
  EXPECT_EQ(expand_error("workload: fake\n", {parse_set("threads=2")}),
            "--set threads: unknown parameter; matrix's parameters are clients, duration, mode, "
            "size (run `nightjar list` for their meaning)");
  // A bad value in the job is not reported when --set replaces it.
  EXPECT_EQ(expand("workload: fake\nparams:\n  clients: 0\n", {parse_set("clients=2")}).size(), 1u);
}

TEST_F(JobTest, DefaultsAndRequiredParameters) {
  RequiredWorkload required;
  EXPECT_EQ(expand_error("workload: fake\n", {}, &required),
            "JOB: params.threads: required parameter has no value; add `threads: VALUE` under "
            "params (workers) or pass --set threads=VALUE");
  std::vector<Cell> cells = expand_matrix(load_job(write("workload: fake\n")), required,
                                          {parse_set("threads=2")}, test_machine());
  ASSERT_EQ(cells.size(), 1u);
  EXPECT_EQ(cells[0].id(), "threads=2");
  EXPECT_EQ(cells[0].text("label"), "");
  cells = expand_matrix(load_job(write("workload: fake\nparams:\n  threads: 1\n  label: hi\n")),
                        required, {}, test_machine());
  EXPECT_EQ(cells[0].text("label"), "hi");
  RequiredWorkload bad_default("10Q");
  EXPECT_EQ(expand_error("workload: fake\nparams:\n  threads: 1\n", {}, &bad_default),
            "JOB: params.size: '10Q' has an unknown suffix; write bytes or use K, M, G, T (powers "
            "of 2), k, m, g (powers of 10) or N%mem");
}

TEST_F(JobTest, ValidateErrorsPointAtTheValue) {
  // size 2G > MemTotal 1G: the line of "2G" in the block list.
  EXPECT_EQ(expand_error("workload: fake\nparams:\n  size:\n    - 4K\n    - 2G\n"),
            "JOB:5: params.size: 2G is larger than memory; write at most 100%mem");
  // from --set
  EXPECT_EQ(expand_error("workload: fake\n", {parse_set("size=2G")}),
            "--set size: 2G is larger than memory; write at most 100%mem");
  // a default value
  EXPECT_EQ(expand_error("workload: fake\nparams:\n  clients: 9\n  mode: [threads, processes]\n"),
            "JOB:3: params.clients: more than 8 processes; write at most 8");
  // no field: the cell as a whole
  EXPECT_EQ(expand_error("workload: fake\nparams:\n  clients: 3\n  mode: processes\n"),
            "JOB: params: 3 processes are unlucky; write another count");
}

// ---- issue 15: files, documents, anchors and merge keys, every error -----------

TEST_F(JobTest, OnlyRegularFilesOfAtMostOneMiB) {
  auto message = [](const std::string& path) {
    try {
      load_job(path);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(message("/dev/zero"),
            "/dev/zero: not a regular file (a character device); a job is a YAML file such as "
            "jobs/pft-quick.yaml");
  EXPECT_EQ(message(dir_), dir_ +
                               ": not a regular file (a directory); a job is a YAML file such as "
                               "jobs/pft-quick.yaml");
  const std::string fifo = dir_ + "/fifo.yaml";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(message(fifo).find(fifo + ": not a regular file (a FIFO)"), 0u);  // no writer: no hang
  std::string big = "workload: fake\n# " + std::string(kMaxJobFileBytes, 'x') + "\n";
  EXPECT_EQ(message(write(big)).find("larger than a job file may be (1048576 bytes, 1 MiB)"),
            dir_.size() + std::string("/job.yaml: ").size());
  // Exactly at the cap is read.
  std::string at_cap = "workload: fake\n#";
  at_cap += std::string(kMaxJobFileBytes - at_cap.size() - 1, 'x') + "\n";
  ASSERT_EQ(at_cap.size(), kMaxJobFileBytes);
  EXPECT_EQ(load_job(write(at_cap)).workload, "fake");
}

TEST_F(JobTest, ASecondDocumentIsAnErrorNamingItsLine) {
  EXPECT_EQ(load_error("workload: fake\niterations: 2\n---\nworkload: null\n"),
            "JOB:3: ---: a second YAML document; a job file holds one job: remove this `---` and "
            "what follows, or put that job in a file of its own");
  EXPECT_EQ(load_error("---\nworkload: fake\n---\nworkload: fake\n").rfind("JOB:3: ---: ", 0), 0u);
  // A leading `---` alone starts the one document.
  EXPECT_EQ(load_job(write("---\nworkload: fake\n")).workload, "fake");
}

TEST_F(JobTest, AnchorsUnderXKeysAndMergeKeysWork) {
  const std::string text =
      "x-defaults: &base\n"
      "  clients: [1, 2]\n"
      "  mode: threads\n"
      "x-run: &run {iterations: 3, warmup: 0}\n"
      "<<: *run\n"
      "workload: fake\n"
      "params:\n"
      "  <<: *base\n"
      "  mode: processes\n";
  JobFile job = load_job(write(text));
  EXPECT_EQ(job.iterations, 3);
  EXPECT_EQ(job.warmup, 0);
  ASSERT_EQ(job.params.count("clients"), 1u);
  EXPECT_EQ(job.params.at("clients").size(), 2u);
  EXPECT_EQ(job.params.at("clients")[1].line, 2);  // lines point at the anchor
  EXPECT_EQ(job.params.at("mode").front().text, "processes");
  EXPECT_EQ(ids(expand(text)),
            (std::vector<std::string>{"clients=1 duration=1s mode=processes size=4K",
                                      "clients=2 duration=1s mode=processes size=4K"}));
  // A list of mappings: the earlier one wins.
  JobFile two =
      load_job(write("x-a: &a {iterations: 4}\nx-b: &b {iterations: 9, warmup: 2}\n"
                     "<<: [*a, *b]\nworkload: fake\n"));
  EXPECT_EQ(two.iterations, 4);
  EXPECT_EQ(two.warmup, 2);
  EXPECT_EQ(load_error("workload: fake\nparams:\n  <<: 5\n"),
            "JOB:3: <<: found a scalar; merge a mapping: write `<<: *NAME` with `&NAME` on a "
            "mapping (under a top-level key starting with x-), or a list of them such as `<<: "
            "[*a, *b]`");
  // A merged key that is wrong is reported at its own line.
  EXPECT_EQ(load_error("x-d: &d\n  iterations: 0\nworkload: fake\n<<: *d\n")
                .rfind("JOB:2: iterations: 0 is below the minimum 1", 0),
            0u);
}

TEST_F(JobTest, EveryProblemIsReportedUpToALimit) {
  // Every line names the file (load_error shows only the first as JOB).
  auto every_path = [&](std::string m) {
    const std::string path = dir_ + "/job.yaml";
    for (auto at = m.find(path); at != std::string::npos; at = m.find(path))
      m.replace(at, path.size(), "JOB");
    return m;
  };
  EXPECT_EQ(every_path(load_error("workload: fake\niterations: 0\nwarmup: -1\ncolour: red\n")),
            "JOB:2: iterations: 0 is below the minimum 1; write a whole number of at least 1 such "
            "as 5\n"
            "nightjar: error: JOB:3: warmup: -1 is below the minimum 0; write a whole number of "
            "at least 0 such as 1\n"
            "nightjar: error: JOB:4: colour: unknown key; known keys are workload, description, "
            "params, iterations, warmup, variant, cgroup, variants, min_effect, vm, monitors");
  std::string many = "workload: fake\n";
  for (int i = 0; i < 25; ++i) many += "k" + std::to_string(i) + ": 1\n";
  const std::string m = load_error(many);
  std::size_t lines = std::count(m.begin(), m.end(), '\n');
  EXPECT_EQ(lines, kMaxJobErrors) << m;  // 20 problems and the "more" line
  EXPECT_NE(m.find(": 5 more problems not shown; fix these first"), std::string::npos) << m;
  // expand_matrix: every unknown name and bad value.
  EXPECT_EQ(every_path(expand_error(
                "workload: fake\nparams:\n  clients: 0\n  size: 10Q\n  colour: red\n")),
            "JOB:5: params.colour: unknown parameter; matrix's parameters are clients, duration, "
            "mode, size (run `nightjar list` for their meaning)\n"
            "nightjar: error: JOB:3: params.clients: 0 is below the minimum 1; write a positive "
            "count such as 1 or [1, 2]\n"
            "nightjar: error: JOB:4: params.size: '10Q' has an unknown suffix; write bytes or use "
            "K, M, G, T (powers of 2), k, m, g (powers of 10) or N%mem");
}

}  // namespace
}  // namespace nightjar
