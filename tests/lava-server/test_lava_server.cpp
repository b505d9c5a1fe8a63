// Unit under test: `nightjar lava submit` and `nightjar lava collect --wait`
// against a real lava-server 2023.01 on this machine, started as
// docs/lava.md "A one-machine lava-server" shows: the PostgreSQL cluster
// (pg_ctlcluster, started only when it is down, stopped again then),
// gunicorn3, `lava-server manage lava-scheduler` and lava-worker, each
// started here and killed by its PID (its process group) at the end. The
// pft-quick job on the generic kernel comes home with the job URL and the
// device LAVA chose; collecting again (--all) adds nothing; a job whose
// kernel URL does not exist is stored as failed runs with LAVA's error.
//
// Optional label `lava-server`: skips (77) unless lava-server is installed
// (CI does not install it), with root, lava-run, the Debian kernels,
// nightjar-static and ci/install-lava.sh's device dictionary. It creates
// (once) the user nightjar-test, the worker nightjar-test-worker and the
// device nightjar-qemu01 in lava-server's database, and a token it removes
// again. About 3 minutes (163 s on a loaded 2-CPU machine).
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <thread>

#include "harness/lava/http.h"
#include "lava_support.h"
#include "results/model/exit_codes.h"
#include "results/model/text.h"
#include "test_support.h"
#include "workloads/sys/process.h"

namespace nightjar {
namespace {

namespace fs = std::filesystem;
using test::kernel_image;
using test::query_one;
using test::run_nightjar;
using test::TempDir;

constexpr const char* kUrl = "http://127.0.0.1:8000";
constexpr const char* kWorker = "nightjar-test-worker";
constexpr const char* kDevice = "nightjar-qemu01";

std::string devices_dir() {
  return test::lava_dir() + "/devices";
}

std::string skip_reason() {
  if (auto why = test::lava_run_skip_reason(); !why.empty()) return why;
  if (find_program("lava-server").empty())
    return "lava-server is not installed (optional: docs/lava.md \"A one-machine lava-server\")";
  if (find_program("lava-worker").empty() || find_program("gunicorn3").empty())
    return "lava-worker or gunicorn3 is not installed";
  if (find_program("pg_ctlcluster").empty() || !fs::exists("/etc/postgresql/15/main"))
    return "no PostgreSQL 15 cluster 'main' (lava-server's database: apt-get install postgresql)";
  if (!fs::exists(devices_dir() + "/qemu01.jinja2"))
    return "no device dictionary in " + devices_dir() + " (run ci/install-lava.sh)";
  return "";
}

nightjar::CommandResult sh(const std::string& command, double timeout = 300) {
  CommandSpec spec;
  spec.argv = {"/bin/sh", "-c", command};
  spec.merge_stderr = true;
  spec.timeout_sec = timeout;
  return run_command(spec);
}

// lava-server with its scheduler and a worker, for one test.
class LavaServerOnThisMachine {
 public:
  explicit LavaServerOnThisMachine(const std::string& dir) : dir_(dir) {
    try {
      start();
    } catch (...) {
      stop();  // the destructor does not run when the constructor throws
      throw;
    }
  }
  ~LavaServerOnThisMachine() { stop(); }
  LavaServerOnThisMachine(const LavaServerOnThisMachine&) = delete;
  LavaServerOnThisMachine& operator=(const LavaServerOnThisMachine&) = delete;

 private:
  void start() {
    const auto cluster = sh("pg_lsclusters -h | awk '$1==15 && $2==\"main\" {print $4}'");
    started_cluster_ = trim(cluster.out) == "down";
    if (started_cluster_) {
      const auto r = sh("pg_ctlcluster 15 main start");
      if (!r.ok()) throw EnvironmentError("pg_ctlcluster 15 main start: " + r.out);
    }
    // Users, worker and device once; a token of its own for this test.
    sh("lava-server manage users list | grep -q '^\\* nightjar-test$' || lava-server manage users "
       "add --superuser --staff --passwd nightjar-test nightjar-test");
    token_ = trim(sh("lava-server manage tokens add --user nightjar-test").out);
    sh(std::string("lava-server manage workers list | grep -q '^\\* ") + kWorker +
       " ' || lava-server manage workers add " + kWorker);
    const auto details = sh(std::string("lava-server manage workers details ") + kWorker);
    const auto at = details.out.find("token      : ");
    if (at == std::string::npos) throw EnvironmentError("no worker token: " + details.out);
    worker_token_ = trim(details.out.substr(at + 13, details.out.find('\n', at) - at - 13));
    sh("lava-server manage device-types list | grep -q 'qemu' || lava-server manage device-types "
       "add qemu");
    fs::copy_file(devices_dir() + "/qemu01.jinja2",
                  std::string("/etc/lava-server/dispatcher-config/devices/") + kDevice + ".jinja2",
                  fs::copy_options::overwrite_existing);
    sh(std::string("lava-server manage devices list | grep -q '") + kDevice +
       "' || lava-server manage devices add --device-type qemu --worker " + kWorker + " " +
       kDevice);
    sh(std::string("lava-server manage devices update --health GOOD ") + kDevice);
    write(dir_ + "/token", token_ + "\n");
    write(dir_ + "/worker-token", worker_token_ + "\n");
    gunicorn_ = std::make_unique<ChildProcess>(SpawnSpec{
        .argv = {"gunicorn3", "lava_server.wsgi", "-u", "lavaserver", "-g", "lavaserver",
                 "--worker-class", "eventlet", "--workers", "2", "--bind", "127.0.0.1:8000"},
        .stdout_path = dir_ + "/gunicorn.log"});
    scheduler_ = std::make_unique<ChildProcess>(
        SpawnSpec{.argv = {"lava-server", "manage", "lava-scheduler"},
                  .stdout_path = dir_ + "/scheduler.log"});
    worker_ = std::make_unique<ChildProcess>(SpawnSpec{
        .argv = {"lava-worker", "--name", kWorker, "--url", std::string(kUrl) + "/", "--token-file",
                 dir_ + "/worker-token", "--worker-dir", dir_ + "/worker"},
        .stdout_path = dir_ + "/worker.log"});
    for (int i = 0; i < 120; ++i) {  // gunicorn answers
      try {
        if (http_request({.url = std::string(kUrl) + "/api/v0.2/system/version/"}).status == 200)
          return;
      } catch (const EnvironmentError&) {
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    throw EnvironmentError("lava-server did not answer on " + std::string(kUrl) + ": " +
                           output_tail(test::read_file(dir_ + "/gunicorn.log"), 5));
  }
  // Everything start() started, by PID, and the cluster if it was down.
  void stop() {
    worker_.reset();  // killed and reaped by PID (its process group)
    scheduler_.reset();
    gunicorn_.reset();
    if (!token_.empty()) sh("lava-server manage tokens rm " + token_);
    token_.clear();
    if (started_cluster_) sh("pg_ctlcluster 15 main stop");
    started_cluster_ = false;
  }
  static void write(const std::string& path, const std::string& text) {
    std::ofstream(path) << text;
  }
  std::string dir_, token_, worker_token_;
  bool started_cluster_ = false;
  std::unique_ptr<ChildProcess> gunicorn_, scheduler_, worker_;
};

TEST(LavaServer, SubmitAndCollectBringTheRunsHomeOnceAndAFailedJobAsFailedRuns) {
  if (auto why = skip_reason(); !why.empty()) GTEST_SKIP() << why;
  TempDir dir;
  const std::string db = dir.path() + "/r.db";
  LavaServerOnThisMachine server(dir.path());
  const std::string generic = kernel_image("amd64");
  auto jobs =
      run_nightjar({"lava", "jobs", test::source_path("jobs/pft-quick.yaml"), "--kernel", generic,
                    "--kernel", "file://" + dir.path() + "/no-such-kernel/bzImage", "--device-type",
                    "qemu", "--set", "clients=1", "--iterations", "2", "--warmup", "0",
                    "--lava-context", "no_kvm=true", "-o", dir.path() + "/jobs"});
  ASSERT_EQ(jobs.exit_code, 0) << jobs.err;
  const auto t0 = std::chrono::steady_clock::now();
  auto submit = run_nightjar({"lava", "submit", dir.path() + "/jobs", "--server", kUrl,
                              "--token-file", dir.path() + "/token", "--db", db});
  ASSERT_EQ(submit.exit_code, 0) << submit.err;
  std::cout << submit.out;
  EXPECT_EQ(query_one(db, "SELECT count(*) FROM lava_job"), "2");
  auto collect = run_nightjar({"lava", "collect", "--wait", "--max-wait", "900", "--poll", "5",
                               "--token-file", dir.path() + "/token", "--db", db});
  std::cout << "[ server   ] "
            << std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()
            << " s from submit to collected\n"
            << collect.err;
  EXPECT_EQ(collect.exit_code, 4) << collect.err;  // the failed job's runs
  EXPECT_EQ(query_one(db, "SELECT count(*) FROM run WHERE status='complete'"), "2") << collect.err;
  EXPECT_EQ(query_one(db, "SELECT count(*) FROM run WHERE status='failed'"), "2");
  const std::string reason = query_one(db, "SELECT reason FROM run WHERE status='failed' LIMIT 1");
  EXPECT_NE(reason.find("no-such-kernel"), std::string::npos) << reason;
  std::cout << "[ reason   ] " << reason << "\n";
  EXPECT_EQ(query_one(db,
                      "SELECT count(*) FROM run_context WHERE key='lava.url' AND value LIKE "
                      "'http://127.0.0.1:8000/scheduler/job/%'"),
            "4");
  EXPECT_EQ(query_one(db,
                      "SELECT DISTINCT t.hostname FROM run r JOIN testbox t ON t.id = "
                      "r.testbox_id WHERE r.status='complete'"),
            kDevice);
  // Collecting again, even every job once more, adds nothing.
  const std::string before = query_one(db,
                                       "SELECT count(*) || ' ' || (SELECT count(*) FROM "
                                       "sample) FROM run");
  auto again =
      run_nightjar({"lava", "collect", "--all", "--token-file", dir.path() + "/token", "--db", db});
  EXPECT_NE(again.err.find("already stored"), std::string::npos) << again.err;
  EXPECT_EQ(query_one(db, "SELECT count(*) || ' ' || (SELECT count(*) FROM sample) FROM run"),
            before);
  auto show = run_nightjar({"show", "--db", db, "--fact", "lava.url"});
  std::cout << show.out;
}

}  // namespace
}  // namespace nightjar
