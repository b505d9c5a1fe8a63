// Unit under test: `nightjar lava jobs` and `nightjar lava run` with LAVA's
// real dispatcher (lava-run of lava-dispatcher 2023.01, no server) on this
// machine: every generated definition passes `lava-run --validate` and
// LAVA's job schema (what lava-server checks on submit); pft-quick and the
// netperf PREEMPT_RT matrix on the Debian generic and rt kernels in the qemu
// device type under TCG, their runs stored with the guests' kernel
// identities and LAVA job ids, `show` and `compare kernel=A kernel=B`; a job
// whose kernel URL does not exist stored as failed runs with LAVA's error;
// no qemu left behind (lava-run starts it in a session of its own).
//
// Label `lava`. Needs root (lava-run's /var/lib/lava/dispatcher/tmp),
// lava-dispatcher and the rendered device configurations of
// ci/install-lava.sh (build/lava/qemu01.yaml, x86-01.yaml), the Debian
// kernels (ci/fetch-kernels.sh) and nightjar-static; skips (77) with the
// reason otherwise.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <string>

#include "lava_support.h"
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

using test::lava_dir;

std::string skip_reason() {
  if (auto why = test::lava_run_skip_reason(); !why.empty()) return why;
  if (!fs::exists(lava_dir() + "/qemu01.yaml") || !fs::exists(lava_dir() + "/x86-01.yaml"))
    return "no rendered LAVA devices in " + lava_dir() + " (run ci/install-lava.sh)";
  return "";
}

// `argv` to its end; `path_first`: a folder put before $PATH.
CommandResult run(const std::vector<std::string>& argv, const std::string& path_first = "",
                  double timeout = 120) {
  CommandSpec spec;
  spec.argv = argv;
  if (!path_first.empty()) spec.env["PATH"] = path_first + ":" + program_search_path();
  spec.merge_stderr = true;
  spec.timeout_sec = timeout;
  spec.reap_orphans = true;
  return run_command(spec);
}

std::string release_of(const std::string& image) {
  return fs::path(image).filename().string().substr(std::string("vmlinuz-").size());
}

TEST(LavaJobs, EveryGeneratedDefinitionPassesLavaRunValidateAndLavasSchema) {
  if (auto why = skip_reason(); !why.empty()) GTEST_SKIP() << why;
  TempDir dir;
  const std::string out = dir.path() + "/jobs";
  // clang-format off
  auto r = run_nightjar({"lava", "jobs", test::source_path("jobs/pft-quick.yaml"),
      test::source_path("jobs/netperf-rt-matrix.yaml"),
      "--kernel", kernel_image("amd64"), "--kernel", kernel_image("rt-amd64"),
      "--device-type", "qemu", "--device-type", "x86",
      "--template", "x86=" + test::source_path("docs/lava-x86-ipxe.yaml"),
      "--variant", "unprotected", "--variant", "top-protected", "--testbox-tags", "tcg",
      "--set", "clients=1", "--iterations", "2", "--lava-context", "no_kvm=true", "-o", out});
  // clang-format on
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> files;
  for (const auto& line : split(r.out, '\n'))
    if (!line.empty()) files.push_back(line.substr(0, line.find("  ")));
  ASSERT_EQ(files.size(), 8u) << r.out;  // 2 kernels x 2 device types x 2 variants
  // lava-run --validate leaves its job directory in
  // /var/lib/lava/dispatcher/tmp (only a run removes it): a prefix of this
  // test's own, and the directory removed at the end.
  const std::string prefix = "nightjar-test-" + std::to_string(getpid()) + "-";
  const std::string dispatcher = dir.write("dispatcher.yaml", "prefix: " + prefix + "\n");
  struct RemoveJobDir {
    std::string path;
    ~RemoveJobDir() {
      std::error_code ec;
      fs::remove_all(path, ec);
    }
  } job_dir{"/var/lib/lava/dispatcher/tmp/" + prefix + "1"};
  // An iPXE/TFTP worker has tftpd-hpa (its /etc/default/tftpd-hpa names the
  // TFTP directory) and the device's connection command (telnet), which
  // lava-run's validation looks for. This machine has neither: the x86
  // definitions are validated in a private mount namespace whose
  // /etc/default holds a tftpd-hpa file (the host's /etc is not touched),
  // with stand-ins for in.tftpd and telnet on PATH that fail if ever run.
  for (const char* tool : {"in.tftpd", "telnet"}) {
    const std::string stand_in = dir.write(
        std::string("bin/") + tool, "#!/bin/sh\necho 'a test stand-in, not run' >&2\nexit 1\n");
    fs::permissions(stand_in, fs::perms(0755));
  }
  fs::create_directories(dir.path() + "/tftp");
  const std::string in_worker_namespace =
      "d=$(mktemp -d) && cp -a /etc/default/. \"$d\"/ && echo \"TFTP_DIRECTORY=$1\" > "
      "\"$d/tftpd-hpa\" && mount --bind \"$d\" /etc/default && shift && exec \"$@\"";
  for (const auto& f : files) {
    const bool x86 = f.find("-x86-") != std::string::npos;
    std::vector<std::string> argv = {"lava-run",
                                     "--validate",
                                     "--job-id",
                                     "1",
                                     "--output-dir",
                                     dir.path() + "/validate",
                                     "--dispatcher",
                                     dispatcher,
                                     "--device",
                                     lava_dir() + (x86 ? "/x86-01.yaml" : "/qemu01.yaml"),
                                     f};
    if (x86)
      argv.insert(argv.begin(), {"unshare", "--mount", "--propagation", "private", "/bin/sh", "-c",
                                 in_worker_namespace, "sh", dir.path() + "/tftp"});
    const auto v = run(argv, dir.path() + "/bin");
    EXPECT_TRUE(v.ok()) << f << ": " << v.describe() << "\n" << output_tail(v.out, 6, 2000);
    EXPECT_NE(v.out.find(R"("case": "validate", "definition": "lava", "result": "pass")"),
              std::string::npos)
        << f << "\n"
        << output_tail(v.out, 6, 2000);
    const auto s = run({"/usr/bin/python3", "-c",
                        "import sys, yaml\nfrom lava_common.schemas import validate\n"
                        "validate(yaml.safe_load(open(sys.argv[1])), strict=True)\n",
                        f});
    EXPECT_TRUE(s.ok()) << f << ": LAVA's job schema refuses it: " << s.out;
  }
}

TEST(LavaRun, PftAndTheNetperfMatrixOnTheGenericAndRtKernelsComeHome) {
  if (auto why = skip_reason(); !why.empty()) GTEST_SKIP() << why;
  TempDir dir;
  const std::string out = dir.path() + "/jobs", db = dir.path() + "/r.db";
  const std::string generic = kernel_image("amd64"), rt = kernel_image("rt-amd64");
  const auto t0 = std::chrono::steady_clock::now();
  // Shrunk for TCG on 2 CPUs: one client, two iterations, no warm-up;
  // pft-quick at its 512 MiB, netperf at its 5 s, both variants.
  auto jobs = run_nightjar({"lava",
                            "jobs",
                            test::source_path("jobs/pft-quick.yaml"),
                            test::source_path("jobs/netperf-rt-matrix.yaml"),
                            "--kernel",
                            generic,
                            "--kernel",
                            rt,
                            "--device-type",
                            "qemu",
                            "--set",
                            "clients=1",
                            "--iterations",
                            "2",
                            "--warmup",
                            "0",
                            "--lava-context",
                            "no_kvm=true",
                            "-o",
                            out});
  ASSERT_EQ(jobs.exit_code, 0) << jobs.err;
  auto r = run_nightjar({"lava", "run", out, "--device", lava_dir() + "/qemu01.yaml", "--db", db});
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cout << "[ lava     ] " << s << " s for 2 LAVA jobs (lava-run, TCG)\n" << r.err;
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(test::qemu_processes("/lava/dispatcher/tmp/nightjar-"), 0);
  // 2 kernels x (pft: threads and processes; netperf: 2 variants x 1 client)
  EXPECT_EQ(query_one(db, "SELECT count(*) FROM run WHERE status='complete'"), "8") << r.err;
  EXPECT_EQ(query_one(db,
                      "SELECT group_concat(DISTINCT k.release) FROM (SELECT k.release FROM "
                      "run r JOIN kernel k ON k.id = r.kernel_id ORDER BY k.release) k"),
            release_of(generic) + "," + release_of(rt));
  EXPECT_EQ(query_one(db, "SELECT count(DISTINCT value) FROM run_context WHERE key='lava.job_id'"),
            "2");
  // lava-run removed its job directories (nightjar's dispatcher prefix).
  for (const auto& id : split(query_one(db,
                                        "SELECT group_concat(DISTINCT value) FROM run_context "
                                        "WHERE key='lava.job_id'"),
                              ','))
    EXPECT_FALSE(fs::exists("/var/lib/lava/dispatcher/tmp/nightjar-" + id)) << id;
  EXPECT_EQ(query_one(db,
                      "SELECT count(*) FROM run_context WHERE key='cgroup.version' AND "
                      "value='v2'"),
            "8");
  const auto show = run_nightjar({"show", "--db", db});
  EXPECT_EQ(show.exit_code, 0) << show.err;
  EXPECT_NE(show.out.find("lava.job_id"), std::string::npos) << show.out;
  EXPECT_NE(show.out.find(release_of(rt)), std::string::npos) << show.out;
  std::cout << show.out;
  const auto cmp = run_nightjar(
      {"compare", "kernel=" + release_of(generic), "kernel=" + release_of(rt), "--db", db});
  EXPECT_EQ(cmp.exit_code, 0) << cmp.err;
  EXPECT_NE(cmp.out.find("faults_per_sec"), std::string::npos) << cmp.out;
  EXPECT_NE(cmp.out.find("throughput"), std::string::npos) << cmp.out;
  // The guests said they ran under TCG, and which kernel is PREEMPT_RT.
  EXPECT_NE(cmp.out.find("TCG: measures emulation"), std::string::npos) << cmp.out;
  EXPECT_EQ(query_one(db,
                      "SELECT group_concat(value) FROM (SELECT DISTINCT c.value FROM run r JOIN "
                      "kernel k ON k.id = r.kernel_id JOIN run_context c ON c.run_id = r.id "
                      "AND c.key = 'kernel.preempt_rt' ORDER BY k.release)"),
            "no,yes");
  std::cout << cmp.out;
}

TEST(LavaRun, AJobWhoseKernelDoesNotExistIsStoredAsFailedRunsWithLavasError) {
  if (auto why = skip_reason(); !why.empty()) GTEST_SKIP() << why;
  TempDir dir;
  const std::string out = dir.path() + "/jobs", db = dir.path() + "/r.db";
  auto jobs = run_nightjar({"lava", "jobs", test::source_path("jobs/pft-quick.yaml"), "--kernel",
                            "file://" + dir.path() + "/no-such-kernel/bzImage", "--device-type",
                            "qemu", "--lava-context", "no_kvm=true", "-o", out});
  ASSERT_EQ(jobs.exit_code, 0) << jobs.err;
  auto r = run_nightjar({"lava", "run", out, "--device", lava_dir() + "/qemu01.yaml", "--db", db});
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_EQ(query_one(db, "SELECT count(*) FROM run WHERE status='failed'"), "4") << r.err;
  const std::string reason = query_one(db, "SELECT reason FROM run LIMIT 1");
  EXPECT_NE(reason.find("failed: "), std::string::npos) << reason;
  EXPECT_NE(reason.find("no-such-kernel"), std::string::npos) << reason;
  std::cout << "[ reason   ] " << reason << "\n";
  EXPECT_EQ(test::qemu_processes("/lava/dispatcher/tmp/nightjar-"), 0);
}

}  // namespace
}  // namespace nightjar
