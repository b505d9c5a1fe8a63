// Unit under test: harness/lava without LAVA: the console blocks (gzip +
// base64 between markers), LAVA log records, the guest's test cases and
// report, bringing a job's results home (collect_lava_job: CSV import scoped
// to the job, the guest's kernel identity and the LAVA device as testbox,
// skipped runs, planned runs that never came home, collecting twice), and
// the job definitions and ramdisk of `nightjar lava jobs` (a fake bzImage;
// the guest binary is any executable). LAVA's own validation of the
// definitions and real lava-run jobs are in tests/lava (label lava).
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <sstream>
#include <string>

#include "harness/lava/collect.h"
#include "harness/lava/jobs.h"
#include "harness/lava/log.h"
#include "harness/lava/report.h"
#include "harness/lava/samples_block.h"
#include "harness/vm/initramfs.h"
#include "lava_support.h"
#include "results/model/exit_codes.h"
#include "results/model/text.h"
#include "test_support.h"
#include "workloads/sys/process.h"

namespace nightjar {
namespace {

namespace fs = std::filesystem;
using test::query_one;
using test::run_nightjar;
using test::TempDir;

// ---------------------------------------------------------------- blocks

TEST(LavaBlocks, RoundTripThroughAConsoleWithKernelMessagesAndCarriageReturns) {
  std::string csv = "run,job\n";
  for (int i = 0; i < 500; ++i) csv += std::to_string(i) + ",pft-quick\n";
  const std::string block = encode_console_block("samples.csv", csv);
  EXPECT_EQ(block.rfind("nightjar-lava: begin samples.csv gzip+base64 bytes=", 0), 0u) << block;
  // A serial console: CR LF line ends, a kernel message between two lines,
  // the prompt and other output around the block.
  std::string console = "nightjar-lava# nightjar lava report ...\r\n";
  int n = 0;
  for (const auto& line : split(block, '\n')) {
    if (line.empty()) continue;
    console += line + "\r\n";
    if (++n == 3) console += "[   12.345678] zram: Added device: zram0\r\n";
  }
  console += encode_console_block("runs.json", "[]\n") + "nightjar-lava# ";
  const ConsoleBlocks found = decode_console_blocks(console);
  EXPECT_TRUE(found.broken.empty());
  ASSERT_EQ(found.files.count("samples.csv"), 1u);
  EXPECT_EQ(found.files.at("samples.csv"), csv);
  EXPECT_EQ(found.files.at("runs.json"), "[]\n");
}

TEST(LavaBlocks, DamagedOrCutBlocksAreReportedNotDecoded) {
  std::string csv;
  for (int i = 0; i < 2000; ++i) csv += std::to_string(i * 7919 % 104729) + "\n";
  std::string block = encode_console_block("samples.csv", csv);
  // One base64 character of the deflate data changed (the third line: past
  // the gzip header, whose time stamp nothing checks): gzip's CRC or the
  // digest refuses it.
  std::string damaged = block;
  std::size_t third_line = 0;
  for (int i = 0; i < 3; ++i) third_line = damaged.find('\n', third_line) + 1;
  ASSERT_LT(third_line + 10, damaged.size());
  damaged[third_line + 10] = damaged[third_line + 10] == 'A' ? 'B' : 'A';
  ConsoleBlocks found = decode_console_blocks(damaged);
  EXPECT_TRUE(found.files.empty());
  ASSERT_EQ(found.broken.count("samples.csv"), 1u);
  EXPECT_NE(found.broken.at("samples.csv").find("damaged"), std::string::npos)
      << found.broken.at("samples.csv");
  // The console stopped inside the block.
  found = decode_console_blocks(block.substr(0, block.size() / 2));
  ASSERT_EQ(found.broken.count("samples.csv"), 1u);
  EXPECT_NE(found.broken.at("samples.csv").find("end line never came"), std::string::npos);
  // A text without markers has no blocks at all.
  found = decode_console_blocks("Linux version 6.1.0\nnightjar-lava# \n");
  EXPECT_TRUE(found.files.empty() && found.broken.empty());
}

// ---------------------------------------------------------------- logs

const char* kLavaRunLog =
    R"({"dt": "2026-12-03T15:18:03.1", "lvl": "info", "msg": "start: 0 validate"}
{"dt": "2026-12-03T15:18:04.1", "lvl": "target", "msg": "Linux version 6.1.0-57-amd64"}
{"dt": "2026-12-03T15:18:05.1", "lvl": "target", "msg": "nightjar-lava# "}
{"dt": "2026-12-03T15:18:06.1", "lvl": "results", "msg": {"case": "pft-quick.default.clients_1", "definition": "0_nightjar", "measurement": 123456.7, "result": "pass", "units": "faults_sec"}}
not a record at all
{"dt": "2026-12-03T15:18:07.1", "lvl": "error", "msg": "Connection closed"}
{"dt": "2026-12-03T15:18:07.2", "lvl": "results", "msg": {"case": "job", "definition": "lava", "error_msg": "lava-test-shell timed out after 600 seconds", "error_type": "Test", "result": "fail"}}
)";

TEST(LavaLog, ReadsConsoleResultsErrorsAndTheJobResult) {
  const LavaLog log = parse_lava_log(kLavaRunLog);
  EXPECT_EQ(log.records, 6u);
  EXPECT_EQ(log.other_lines, 1u);
  EXPECT_EQ(log.console, "Linux version 6.1.0-57-amd64\nnightjar-lava# \n");
  ASSERT_EQ(log.results.size(), 2u);
  EXPECT_EQ(log.results[0].name, "pft-quick.default.clients_1");
  EXPECT_EQ(log.results[0].measurement, "123456.7");
  EXPECT_EQ(log.results[0].units, "faults_sec");
  EXPECT_FALSE(lava_job_passed(log));
  EXPECT_EQ(lava_job_error(log), "Test: lava-test-shell timed out after 600 seconds");
  // A server's log: the same records as items of a list.
  std::string server;
  for (const auto& line : split(kLavaRunLog, '\n'))
    if (!line.empty()) server += "- " + line + "\n";
  EXPECT_EQ(parse_lava_log(server).results.size(), 2u);
  // A dispatcher killed before the job result.
  const LavaLog cut = parse_lava_log(R"({"dt": "x", "lvl": "target", "msg": "Linux version 6.1"})"
                                     "\n");
  EXPECT_FALSE(lava_job_passed(cut));
  EXPECT_NE(lava_job_error(cut).find("ends before LAVA's job result"), std::string::npos);
}

// ---------------------------------------------------------------- guest report and collect

// A guest's database: `nightjar run` of a fake job with two cells and a
// skipped job, as the LAVA guest runs it; returns its report on stdout.
struct Guest {
  TempDir dir;
  std::string db, report, cases;
  Guest() {
    const std::string fx =
        dir.write("fx.yaml",
                  "workload: fake\nparams: {value: [100, 200], script: '100,102.5,98'}\n"
                  "iterations: 3\nwarmup: 0\n");
    const std::string fs = dir.write(
        "fs.yaml", "workload: fake\nparams: {skip: needs a board}\niterations: 2\nwarmup: 0\n");
    db = dir.path() + "/guest.db";
    auto r = run_nightjar({"run", fx, fs, "--db", db});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    auto rep = run_nightjar({"lava", "report", "--db", db, "--cases", dir.path() + "/cases"});
    EXPECT_EQ(rep.exit_code, 0) << rep.err;
    report = rep.out;
    cases = test::read_file(dir.path() + "/cases");
  }
};

TEST(LavaReport, OneTestCasePerRunWithTheMainMetricAndTheBlocks) {
  Guest g;
  // fake's first metric is throughput (ops/s, Hmean of 100, 102.5, 98).
  EXPECT_EQ(g.cases,
            "fx.default.script_100_102.5_98 pass 100.133 ops/s\n"
            "fx.default.script_100_102.5_98.value_200 pass 100.133 ops/s\n"
            "fs.default.skip_needs_a_board skip\n")
      << g.cases;
  const ConsoleBlocks blocks = decode_console_blocks(g.report);
  ASSERT_EQ(blocks.files.count("samples.csv"), 1u) << g.report;
  EXPECT_EQ(std::count(blocks.files.at("samples.csv").begin(), blocks.files.at("samples.csv").end(),
                       '\n'),
            1 + 2 * 3 * 2);  // header, 2 runs x 3 iterations x 2 metrics
  const auto runs = parse_guest_runs(blocks.files.at("runs.json"), "test");
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[2].status, RunStatus::skipped);
  EXPECT_EQ(runs[2].reason, "needs a board");
  EXPECT_FALSE(runs[0].kernel.release.empty());
  EXPECT_FALSE(runs[0].testbox.hostname.empty());
  EXPECT_EQ(runs[0].samples, 6u);
}

TEST(LavaReport, ALongCaseNameIsCutToLavasLimitWithAHash) {
  TempDir dir;
  const std::string job = dir.write(
      "a-job-with-a-rather-long-name-that-goes-on.yaml",
      "workload: fake\nparams: {script: '1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20'}\n"
      "iterations: 1\nwarmup: 0\n");
  const std::string db = dir.path() + "/g.db";
  ASSERT_EQ(run_nightjar({"run", job, "--db", db}).exit_code, 0);
  ResultsStore store(db, ResultsStore::Access::read_only);
  const auto cases = lava_cases(store);
  ASSERT_EQ(cases.size(), 1u);
  EXPECT_EQ(cases[0].name.size(), 100u) << cases[0].name;
  EXPECT_EQ(cases[0].name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                            "0123456789._-"),
            std::string::npos)
      << cases[0].name;
}

// The manifest entry a `nightjar lava jobs` would have written for the
// guest's jobs, with one more planned cell (value=300) the guest never ran.
LavaJobEntry entry_for(const Guest& g) {
  LavaJobEntry e;
  e.file = "01-6.1.0-57-amd64-qemu.yaml";
  e.job_name = "nightjar fx+fs on 6.1.0-57-amd64 (qemu)";
  e.device_type = "qemu";
  e.kernel = "/k/vmlinuz-6.1.0-57-amd64";
  e.kernel_release = "6.1.0-57-amd64";
  auto cell = [](const std::string& value, const std::string& script, const std::string& skip) {
    std::map<std::string, ParamValue> p = {
        {"cv", {"0", 0}},        {"fail_at", {"0", 0}},
        {"invalid_at", {"", 0}}, {"script", {script, 0}},
        {"seed", {"1", 1}},      {"skip", {skip, 0}},
        {"sleep", {"0s", 0}},    {"value", {value, std::stod(value)}}};
    return p;
  };
  const std::string fx = g.dir.path() + "/fx.yaml", fs = g.dir.path() + "/fs.yaml";
  e.plan.push_back({"fx", fx, "fake", "default", "", cell("100", "100,102.5,98", ""), 3, 0});
  e.plan.push_back({"fx", fx, "fake", "default", "", cell("200", "100,102.5,98", ""), 3, 0});
  e.plan.push_back({"fx", fx, "fake", "default", "", cell("300", "100,102.5,98", ""), 3, 0});
  e.plan.push_back({"fs", fs, "fake", "default", "", cell("100", "", "needs a board"), 2, 0});
  return e;
}

std::string as_lava_log(const std::string& console, const std::string& job_result) {
  std::string log;
  for (const auto& line : split(console, '\n')) {
    std::string escaped;
    for (char c : line) escaped += c == '"' ? std::string("\\\"") : std::string(1, c);
    log += R"({"dt": "2026-12-03T15:18:04", "lvl": "target", "msg": ")" + escaped + "\"}\n";
  }
  return log +
         R"({"dt": "2026-12-03T15:18:09", "lvl": "results", "msg": {"definition": "lava", "case": "job", )" +
         job_result + "}}\n";
}

TEST(LavaCollect, ImportsTheGuestsRunsStoresWhatNeverCameHomeAndCollectingTwiceAddsNothing) {
  Guest g;
  TempDir host;
  const std::string db = host.path() + "/host.db";
  const LavaJobEntry e = entry_for(g);
  const LavaLog log = parse_lava_log(as_lava_log(g.report, R"("result": "pass")"));
  LavaJobRef ref;
  ref.key = "http://lava.example/scheduler/job/42";
  ref.job_id = "42";
  ref.url = ref.key;
  ref.device = "qemu01";
  ref.passed = true;
  {
    ResultsStore store(db);
    const LavaCollected c = collect_lava_job(store, e, ref, log);
    EXPECT_EQ(c.complete, 2);
    EXPECT_EQ(c.skipped, 1);
    EXPECT_EQ(c.failed, 1);  // value=300: planned, never reported
    EXPECT_EQ(c.samples, 12u);
    EXPECT_EQ(c.run_ids.size(), 4u);
    // Again: nothing new.
    const LavaCollected again = collect_lava_job(store, e, ref, log);
    EXPECT_TRUE(again.run_ids.empty());
    EXPECT_EQ(again.already_stored, 4u);
  }
  EXPECT_EQ(query_one(db, "SELECT count(*) FROM run"), "4");
  EXPECT_EQ(query_one(db, "SELECT count(*) FROM sample"), "12");
  // Every run: the LAVA job, its URL and the device as testbox.
  EXPECT_EQ(
      query_one(db, "SELECT count(*) FROM run_context WHERE key='lava.job_id' AND value='42'"),
      "4");
  EXPECT_EQ(query_one(db, "SELECT count(DISTINCT value) FROM run_context WHERE key='lava.url'"),
            "1");
  EXPECT_EQ(query_one(db,
                      "SELECT group_concat(DISTINCT t.hostname) FROM run r JOIN testbox t ON "
                      "t.id = r.testbox_id"),
            "qemu01");
  // The guest's exact kernel identity (its uname -v too, not only -r).
  EXPECT_NE(query_one(db,
                      "SELECT k.version FROM run r JOIN kernel k ON k.id = r.kernel_id WHERE "
                      "r.status = 'complete' LIMIT 1"),
            "");
  EXPECT_EQ(query_one(db, "SELECT reason FROM run WHERE status='skipped'"), "needs a board");
  EXPECT_EQ(query_one(db, "SELECT reason FROM run WHERE status='failed'"),
            "the guest did not run it (its runs.json does not list it)");
  // The guest's own context came along (a fact every nightjar run records).
  EXPECT_EQ(query_one(db, "SELECT count(*) FROM run_context WHERE key='lava.guest_hostname'"), "3");
}

TEST(LavaCollect, AFailedJobWithoutMarkersStoresEveryPlannedRunFailedWithLavasError) {
  Guest g;
  TempDir host;
  const std::string db = host.path() + "/host.db";
  const LavaLog log = parse_lava_log(as_lava_log(
      "Linux version 6.1.0-57-amd64\nKernel panic - not syncing: VFS\n",
      R"("result": "fail", "error_type": "Infrastructure", "error_msg": "Unable to fetch http://example/missing")"));
  LavaJobRef ref;
  ref.key = "lava-run:/tmp/d/01.yaml#7";
  ref.job_id = "7";
  ref.passed = lava_job_passed(log);
  ref.error = lava_job_error(log);
  ResultsStore store(db);
  const LavaCollected c = collect_lava_job(store, entry_for(g), ref, log);
  EXPECT_EQ(c.failed, 4);
  EXPECT_EQ(c.complete, 0);
  EXPECT_EQ(query_one(db,
                      "SELECT count(*) FROM run WHERE status='failed' AND reason LIKE "
                      "'LAVA job 7 failed: Infrastructure: Unable to fetch "
                      "http://example/missing; the guest printed no samples%'"),
            "4");
  // No guest: the testbox is the device type, the kernel the image's release.
  EXPECT_EQ(query_one(db,
                      "SELECT DISTINCT t.hostname || ' ' || k.release FROM run r JOIN testbox "
                      "t ON t.id = r.testbox_id JOIN kernel k ON k.id = r.kernel_id"),
            "qemu 6.1.0-57-amd64");
  EXPECT_TRUE(collect_lava_job(store, entry_for(g), ref, log).run_ids.empty());
}

// ---------------------------------------------------------------- job definitions

using test::ramdisk_skip_reason;

TEST(LavaJobs, QemuDefinitionsDeployTheRamdiskBootWithoutQuietAndRunNightjar) {
  if (auto why = ramdisk_skip_reason(); !why.empty()) GTEST_SKIP() << why;
  TempDir dir;
  const std::string k1 = dir.write("a/boot/vmlinuz-6.1.0-57-amd64",
                                   test::fake_bzimage("6.1.0-57-amd64 (x) #1 SMP Debian"));
  const std::string k2 = dir.write("b/boot/vmlinuz-6.1.0-57-rt-amd64",
                                   test::fake_bzimage("6.1.0-57-rt-amd64 (x) #1 SMP PREEMPT_RT"));
  LavaJobsOptions o;
  o.job_paths = {test::source_path("jobs/pft-quick.yaml"),
                 test::source_path("jobs/netperf-rt-matrix.yaml")};
  o.kernels = {k1, k2};
  o.device_types = {"qemu"};
  o.variants = {"unprotected,top-protected"};
  o.sets = {"clients=1"};
  o.iterations = 2;
  o.tags = {"tcg"};
  o.out_dir = dir.path() + "/out";
  o.guest_binary = "/bin/true";  // any executable: the ramdisk is not booted here
  const LavaManifest m = write_lava_jobs(o);
  ASSERT_EQ(m.jobs.size(), 4u);  // 2 kernels x 1 device type x 2 variants
  EXPECT_EQ(m.jobs[0].file, "01-6.1.0-57-amd64-qemu-unprotected.yaml");
  // pft-quick: 2 modes (clients=1) in the variant; netperf: 1 client.
  EXPECT_EQ(m.jobs[0].plan.size(), 3u);
  const YAML::Node job = YAML::LoadFile(o.out_dir + "/" + m.jobs[0].file);
  EXPECT_EQ(job["device_type"].as<std::string>(), "qemu");
  EXPECT_EQ(job["priority"].as<std::string>(), "medium");
  EXPECT_EQ(job["visibility"].as<std::string>(), "public");
  EXPECT_EQ(job["tags"][0].as<std::string>(), "tcg");
  EXPECT_NE(job["job_name"].as<std::string>().find("6.1.0-57-amd64"), std::string::npos);
  const YAML::Node deploy = job["actions"][0]["deploy"];
  EXPECT_EQ(deploy["to"].as<std::string>(), "tmpfs");
  const YAML::Node ramdisk = deploy["images"]["ramdisk"];
  EXPECT_EQ(ramdisk["format"].as<std::string>(), "cpio.newc");
  EXPECT_TRUE(ramdisk["overlays"]["lava"].as<bool>());
  EXPECT_EQ(ramdisk["url"].as<std::string>(), "file://" + m.dir + "/ramdisk-6.1.0-57-amd64.cpio");
  const std::string kernel_arg = deploy["images"]["kernel"]["image_arg"].as<std::string>();
  EXPECT_NE(kernel_arg.find("console=ttyS0,115200"), std::string::npos);
  EXPECT_EQ(kernel_arg.find("quiet"), std::string::npos);
  const YAML::Node boot = job["actions"][1]["boot"];
  EXPECT_EQ(boot["method"].as<std::string>(), "qemu");
  EXPECT_EQ(boot["prompts"][0].as<std::string>(), kLavaPrompt);
  const YAML::Node steps =
      job["actions"][2]["test"]["definitions"][0]["repository"]["run"]["steps"];
  std::string all;
  for (const auto& s : steps) all += s.as<std::string>() + "\n";
  EXPECT_NE(all.find("nightjar run /nightjar/jobs/0/pft-quick.yaml "
                     "/nightjar/jobs/1/netperf-rt-matrix.yaml --db /tmp/nightjar-lava.db "
                     "--variant unprotected --set clients=1 --iterations 2"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("lava-test-case \"$name\" --result \"$result\" --measurement"),
            std::string::npos);
  // The ramdisk: nightjar's guest /init ending in LAVA's shell, the binary, the jobs.
  const std::string list = m.dir + "/list";
  CommandSpec cpio;
  cpio.argv = {"cpio", "-t", "--quiet"};
  cpio.stdin_path = m.dir + "/ramdisk-6.1.0-57-amd64.cpio";
  const auto r = run_command(cpio);
  ASSERT_TRUE(r.ok()) << r.describe();
  for (const char* f : {"init", "bin/busybox", "nightjar/nightjar",
                        "nightjar/jobs/0/pft-quick.yaml", "nightjar/jobs/1/netperf-rt-matrix.yaml"})
    EXPECT_NE(r.out.find(std::string(f) + "\n"), std::string::npos) << f << " missing:\n" << r.out;
  // The manifest reads back.
  const LavaManifest back = read_lava_manifest(o.out_dir);
  ASSERT_EQ(back.jobs.size(), 4u);
  EXPECT_EQ(back.jobs[3].kernel_release, "6.1.0-57-rt-amd64");
  EXPECT_EQ(back.jobs[3].variant, "top-protected");
  EXPECT_EQ(back.jobs[0].plan[0].params.at("size").number, 512.0 * 1024 * 1024);
}

TEST(LavaJobs, OtherDeviceTypesTakeTheirDeployAndBootFromATemplate) {
  if (auto why = ramdisk_skip_reason(); !why.empty()) GTEST_SKIP() << why;
  TempDir dir;
  LavaJobsOptions o;
  o.job_paths = {test::source_path("jobs/pft-quick.yaml")};
  o.kernels = {"https://example.org/k/bzImage-6.19"};
  o.device_types = {"x86"};
  o.templates = {{"x86", test::source_path("docs/lava-x86-ipxe.yaml")}};
  o.url_base = "http://files.example.org/nightjar";
  o.out_dir = dir.path() + "/out";
  o.guest_binary = "/bin/true";  // any executable: the ramdisk is not booted here
  const LavaManifest m = write_lava_jobs(o);
  ASSERT_EQ(m.jobs.size(), 1u);
  const YAML::Node job = YAML::LoadFile(o.out_dir + "/" + m.jobs[0].file);
  const YAML::Node deploy = job["actions"][0]["deploy"];
  EXPECT_EQ(deploy["to"].as<std::string>(), "tftp");
  EXPECT_EQ(deploy["kernel"]["url"].as<std::string>(), "https://example.org/k/bzImage-6.19");
  EXPECT_EQ(deploy["ramdisk"]["url"].as<std::string>(),
            "http://files.example.org/nightjar/ramdisk-bzImage-6.19.cpio");
  EXPECT_EQ(job["actions"][1]["boot"]["prompts"][0].as<std::string>(), kLavaPrompt);
  EXPECT_EQ(job["context"]["extra_kernel_args"].as<std::string>(), lava_kernel_cmdline());
  EXPECT_TRUE(job["actions"][2]["test"]);
  EXPECT_EQ(m.jobs[0].kernel_release, "");  // a URL: the guest says which
}

// The jobs' `vm: cgroup2_options` reach the ramdisk's /init, as they reach
// the guest of `run --kernel`; jobs that disagree cannot share a ramdisk.
TEST(LavaJobs, TheJobsCgroup2OptionsReachTheRamdisksInit) {
  if (auto why = ramdisk_skip_reason(); !why.empty()) GTEST_SKIP() << why;
  TempDir dir;
  const std::string pft = test::read_file(test::source_path("jobs/pft-quick.yaml"));
  LavaJobsOptions o;
  o.job_paths = {dir.write("a/pft.yaml", pft + "vm: {cgroup2_options: nsdelegate}\n")};
  o.kernels = {dir.write("vmlinuz", test::fake_bzimage("6.1.0-57-amd64 (x) #1"))};
  o.device_types = {"qemu"};
  o.out_dir = dir.path() + "/out";
  o.guest_binary = "/bin/true";  // any executable: the ramdisk is not booted here
  const LavaManifest m = write_lava_jobs(o);
  CommandSpec cpio;
  cpio.argv = {"cpio", "-i", "--quiet", "--to-stdout", "init"};
  cpio.stdin_path = m.dir + "/ramdisk-6.1.0-57-amd64.cpio";
  const auto init = run_command(cpio);
  ASSERT_TRUE(init.ok()) << init.describe();
  EXPECT_NE(init.out.find("mount -t cgroup2 -o \"nsdelegate\""), std::string::npos) << init.out;

  o.job_paths.push_back(test::source_path("jobs/pft-quick.yaml"));  // the default options
  o.out_dir = dir.path() + "/out2";
  try {
    write_lava_jobs(o);
    ADD_FAILURE() << "jobs with different cgroup2 options were accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("share one ramdisk per kernel"), std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(fs::exists(o.out_dir));
}

TEST(LavaJobs, BadInputIsRefusedBeforeAnythingIsWritten) {
  TempDir dir;
  LavaJobsOptions base;
  base.job_paths = {test::source_path("jobs/pft-quick.yaml")};
  base.kernels = {dir.write("vmlinuz", test::fake_bzimage("6.1.0-57-amd64 (x) #1"))};
  base.device_types = {"qemu"};
  base.out_dir = dir.path() + "/out";
  base.guest_binary = NIGHTJAR_BINARY;
  auto refused = [&](LavaJobsOptions o, const std::string& want) {
    try {
      write_lava_jobs(o);
      ADD_FAILURE() << "accepted; wanted an error with: " << want;
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
    }
    EXPECT_FALSE(fs::exists(o.out_dir)) << want;
  };
  LavaJobsOptions o = base;
  o.device_types = {"beaglebone-black"};
  refused(o, "--device-type beaglebone-black: no deploy and boot for it");
  o = base;
  o.kernels = {dir.path() + "/missing/vmlinuz"};
  refused(o, "cannot read the kernel image");
  o = base;
  o.kernels = {"ftp://example.org/bzImage"};
  refused(o, "not a URL LAVA downloads");
  o = base;
  o.priority = "urgent";
  refused(o, "LAVA's priorities are high, medium, low");
  o = base;
  o.sets = {"sizes=1G"};
  refused(o, "--set sizes: unknown parameter");
  o = base;
  o.device_types = {"x86"};
  o.templates = {{"x86", dir.write("quiet.yaml",
                                   "actions:\n- deploy: {to: tftp, ramdisk: {url: "
                                   "'@RAMDISK_URL@'}}\n- boot: {method: ipxe, commands: "
                                   "ramdisk}\ncontext: {extra_kernel_args: 'quiet'}\n")}};
  refused(o, "puts `quiet` on the kernel command line");
  o.templates = {{"x86", dir.write("noramdisk.yaml",
                                   "actions:\n- deploy: {to: tftp}\n- boot: {method: ipxe}\n")}};
  refused(o, "never names @RAMDISK_URL@");
  o.templates = {{"x86", dir.write("noboot.yaml", "actions:\n- deploy: {to: tftp}\n")}};
  refused(o, "needs a `- deploy:` and a `- boot:` entry");
}

}  // namespace
}  // namespace nightjar
