// Unit under test: the qemu kernel axis end to end (harness/vm/qemu.h) with the
// real binary: pft on two Debian kernels (generic and PREEMPT_RT) under
// whatever accelerator the host has (TCG here: figures measure emulation),
// both runs stored with their own `uname -r` and compared; a guest that
// panics, one that hangs, and SIGINT while qemu runs are recorded as failed
// or aborted with no qemu process left.
//
// Label `vm`. Skips (77) with the reason when qemu-system-x86_64, the static
// guest binary (-DNIGHTJAR_STATIC=ON) or the kernel images
// (ci/fetch-kernels.sh into $NIGHTJAR_KERNELS, default
// ~/.cache/nightjar/kernels) are missing. Under TCG each boot costs ~25 s.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "test_support.h"

using namespace nightjar::test;
namespace fs = std::filesystem;

namespace {

// The first vmlinuz-* of the Debian kernels' FLAVOUR (test_support.h).
std::string image(const std::string& flavour) {
  return kernel_image(flavour);
}

// Why the guest tests cannot run here ("" when they can): they need qemu,
// nightjar-static and the Debian kernel images of every flavour in `flavours`.
std::string skip_reason(const std::vector<std::string>& flavours = {"amd64", "rt-amd64"}) {
  if (system("command -v qemu-system-x86_64 >/dev/null 2>&1") != 0)
    return "qemu-system-x86_64 is not installed (ci/fetch-kernels.sh installs it)";
  std::string guest = fs::path(NIGHTJAR_BINARY).parent_path() / "nightjar-static";
  if (access(guest.c_str(), X_OK) != 0)
    return "no " + guest + " (configure with -DNIGHTJAR_STATIC=ON)";
  for (const auto& flavour : flavours)
    if (image(flavour).empty())
      return "no Debian " + flavour + " kernel image in " + kernels_dir() +
             " (run ci/fetch-kernels.sh, or set NIGHTJAR_KERNELS)";
  return "";
}

// Its `vm:` key reaches the guest's cgroup2 mount (docs/jobs.md); pft does
// not use cgroups, so the figures do not depend on it.
// The perf-profile monitor in a guest (docs/monitors.md "perf-profile"):
// its folded stacks come home with the iterations.
const char* kProfileJob = R"(workload: pft
description: pft with call-stack profiles, small enough for TCG
params: {clients: 1, mode: threads, size: 32M}
iterations: 2
warmup: 0
monitors: [perf-stat, perf-profile]
)";

const char* kJob = R"(workload: pft
description: pft quick, small enough for TCG
params: {clients: 1, mode: threads, size: 32M}
iterations: 2
warmup: 0
vm: {cgroup2_options: "nsdelegate,memory_recursiveprot"}
)";

// Both memcg workloads in one guest (one boot): tcp_sendfile over ::1 and
// 127.0.0.1 with clients in depth-3 cgroups, tmpfs_refault with every evict
// method, all in a cgroup v2 guest with memory_recursiveprot.
const char* kTcpJob = R"(workload: tcp_sendfile
description: tcp_sendfile in a guest
params: {clients: [1, 2], duration: 1s, send_size: 10K, family: [ipv6, ipv4]}
iterations: 2
warmup: 0
cgroup: {depth: 3, per_client: true}
)";
const char* kTmpfsJob = R"(workload: tmpfs_refault
description: tmpfs_refault in a guest
params: {size: 32M, pattern: mixed, evict: [reclaim, pageout, auto], block_size: 1M}
iterations: 2
warmup: 0
)";

}  // namespace

TEST(Vm, TcpSendfileAndTmpfsRefaultRunInACgroupV2Guest) {
  std::string why = skip_reason();
  if (!why.empty()) GTEST_SKIP() << why;
  TempDir dir;
  std::string tcp = dir.write("tcp-vm.yaml", kTcpJob);
  std::string tmpfs = dir.write("tmpfs-vm.yaml", kTmpfsJob);
  std::string db = dir.path() + "/r.db";
  auto t0 = std::chrono::steady_clock::now();
  // One vCPU, as guest:boot: two have wedged the TCG guest in the zram swap
  // work (tests/vm/guest-tests.sh, docs/qemu.md "A hang in the guest").
  auto r = run_nightjar({"run", tcp, tmpfs, "--db", db, "--kernel", image("amd64"), "--vm-memory",
                         "1024", "--vm-cpus", "1", "--vm-timeout", "400", "--vm-keep", dir.path()});
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cout << "[ guest    ] " << s << " s for 4 tcp_sendfile and 3 tmpfs_refault cells\n";
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_EQ(query_one(db, "SELECT count(*) FROM run WHERE status='complete'"), "7") << r.out;
  // Samples arrived: every iteration of every run has its main metric
  // (an invalid one, e.g. a refault read the guest's own reclaim disturbed,
  // is still stored: it is shown, not counted as missing).
  EXPECT_EQ(
      query_one(db, "SELECT count(*) FROM sample WHERE metric IN ('throughput', 'read_time')"),
      "14");
  std::cout << "[ invalid  ] "
            << query_one(db,
                         "SELECT count(*) || ' ' || ifnull(group_concat(metric || ': ' || invalid, "
                         "'; '), '') FROM sample WHERE invalid IS NOT NULL")
            << "\n";
  EXPECT_EQ(query_one(db,
                      "SELECT count(DISTINCT run_id) FROM run_context WHERE "
                      "key='vm.cgroup2_options' AND value='memory_recursiveprot'"),
            "7");
  EXPECT_EQ(
      query_one(db, "SELECT count(*) FROM run_context WHERE key='cgroup.version' AND value='v2'"),
      "7");
  // evict: auto picks memory.reclaim on cgroup v2; every method swaps the whole file.
  EXPECT_EQ(query_one(db,
                      "SELECT group_concat(value, ',') FROM (SELECT value FROM run_context "
                      "WHERE key='tmpfs_refault.evict_method' ORDER BY run_id)"),
            "reclaim,pageout,reclaim");
  EXPECT_EQ(query_one(db,
                      "SELECT count(*) FROM monitor a JOIN monitor b ON a.run_id=b.run_id AND "
                      "a.iteration=b.iteration WHERE a.name='tmpfs_refault.read.pswpin' AND "
                      "b.name='tmpfs_refault.pages' AND a.value >= 0.95 * b.value"),
            "6");
  EXPECT_EQ(qemu_processes(dir.path()), 0);
}

TEST(Vm, PftOnGenericAndRtKernelsStoredWithTheirOwnReleaseAndCompared) {
  std::string why = skip_reason();
  if (!why.empty()) GTEST_SKIP() << why;
  TempDir dir;
  std::string job = dir.write("pft-vm.yaml", kJob);
  std::string db = dir.path() + "/r.db";
  auto t0 = std::chrono::steady_clock::now();
  auto r = run_nightjar({"run", job, "--db", db, "--kernel", image("amd64"), "--kernel",
                         image("rt-amd64"), "--vm-timeout", "300", "--vm-keep", dir.path()});
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(query_one(db, "SELECT count(*) FROM run WHERE status='complete'"), "2");
  std::string generic = query_one(db,
                                  "SELECT k.release FROM run r JOIN kernel k ON "
                                  "k.id=r.kernel_id ORDER BY r.id LIMIT 1");
  std::string rt = query_one(db,
                             "SELECT k.release FROM run r JOIN kernel k ON k.id=r.kernel_id "
                             "ORDER BY r.id DESC LIMIT 1");
  EXPECT_NE(generic, rt);
  EXPECT_NE(rt.find("-rt-"), std::string::npos) << rt;
  EXPECT_NE(query_one(db,
                      "SELECT k.version FROM run r JOIN kernel k ON k.id=r.kernel_id ORDER BY "
                      "r.id DESC LIMIT 1")
                .find("PREEMPT_RT"),
            std::string::npos);
  EXPECT_EQ(
      query_one(db, "SELECT count(DISTINCT value) FROM run_context WHERE key='vm.accelerator'"),
      "1");
  // The job's cgroup2 options, asked for and really mounted in both guests.
  EXPECT_EQ(query_one(db,
                      "SELECT count(*) FROM run_context WHERE key='vm.cgroup2_options' AND "
                      "value='nsdelegate,memory_recursiveprot'"),
            "2");
  EXPECT_EQ(query_one(db,
                      "SELECT count(*) FROM run_context WHERE key='vm.cgroup2_mount' AND "
                      "(',' || value || ',') LIKE '%,nsdelegate,%' AND (',' || value || ',') "
                      "LIKE '%,memory_recursiveprot,%'"),
            "2")
      << query_one(db,
                   "SELECT group_concat(value, ' | ') FROM run_context WHERE "
                   "key='vm.cgroup2_mount'");
  EXPECT_EQ(query_one(db, "SELECT count(*) FROM flag WHERE message LIKE '%cgroup2 is mounted%'"),
            "0");
  EXPECT_NE(r.err.find("the guest reached nightjar's init after"), std::string::npos) << r.err;
  // Time per boot, for the record.
  std::size_t at = 0;
  while ((at = r.err.find("qemu ran ", at)) != std::string::npos) {
    std::cout << "[ boot     ] "
              << r.err.substr(r.err.rfind('\n', at) + 1,
                              r.err.find('\n', at) - r.err.rfind('\n', at) - 1)
              << "\n";
    ++at;
  }
  std::cout << "[ total    ] " << s << " s for both kernels\n";

  auto cmp = run_nightjar({"compare", "kernel=" + generic, "kernel=" + rt, "--db", db});
  ASSERT_EQ(cmp.exit_code, 0) << cmp.err;
  EXPECT_NE(cmp.out.find("faults_per_sec"), std::string::npos) << cmp.out;
  EXPECT_NE(cmp.out.find("kernel="), std::string::npos) << cmp.out;
  // The guests send their configs' hashes; the host stores the text beside
  // each image, so the comparison names the options that differ (issue 37).
  EXPECT_EQ(query_one(db, "SELECT count(*) FROM kernel_config"), "2");
  EXPECT_NE(cmp.out.find("+CONFIG_PREEMPT_RT y"), std::string::npos) << cmp.out;
  EXPECT_NE(cmp.out.find("CONFIG_PREEMPT_VOLUNTARY y -> n"), std::string::npos) << cmp.out;
  EXPECT_EQ(cmp.out.find("is not stored"), std::string::npos) << cmp.out;
  std::cout << cmp.out.substr(0, cmp.out.find("Hmean") == std::string::npos
                                     ? 0
                                     : cmp.out.find('\n', cmp.out.find("Hmean")) + 1);
  EXPECT_EQ(qemu_processes(dir.path()), 0);
}

TEST(Vm, GuestProfilesComeHomeWithTheirIterations) {
  std::string why = skip_reason({"amd64"});
  if (!why.empty()) GTEST_SKIP() << why;
  TempDir dir;
  std::string job = dir.write("pft-profile-vm.yaml", kProfileJob);
  std::string db = dir.path() + "/r.db";
  auto r = run_nightjar({"run", job, "--db", db, "--kernel", image("amd64"), "--vm-memory", "512",
                         "--vm-timeout", "300", "--vm-keep", dir.path()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(query_one(db, "SELECT count(*) FROM run WHERE status='complete'"), "1");
  // Both measured iterations have a profile, with the event the guest used
  // (cpu-clock under TCG: no PMU) and samples.
  EXPECT_EQ(query_one(db, "SELECT count(*) FROM profile WHERE event IN ('cpu-clock', 'cycles')"),
            "2")
      << query_one(db, "SELECT group_concat(event, ',') FROM profile");
  EXPECT_NE(query_one(db, "SELECT sum(count) FROM profile_sample"), "0");
  // Kernel frames named from the guest's /proc/kallsyms: pft's faults.
  EXPECT_NE(
      query_one(db, "SELECT count(*) FROM profile_stack WHERE folded LIKE '%handle_mm_fault%'"),
      "0")
      << query_one(db,
                   "SELECT group_concat(folded, char(10)) FROM (SELECT folded FROM "
                   "profile_stack LIMIT 10)");
  EXPECT_EQ(query_one(db, "SELECT count(*) FROM flag WHERE message LIKE '%profile record%'"), "0");
  EXPECT_EQ(qemu_processes(dir.path()), 0);
}

// A guest whose run line holds a corrupt profile record (sent by a --vm-init
// script over the real results port): an error naming the field, the run
// and its samples stored, the iteration without its profile.
TEST(Vm, ACorruptProfileRecordFromTheGuestIsAnErrorNamingTheField) {
  std::string why = skip_reason({"amd64"});
  if (!why.empty()) GTEST_SKIP() << why;
  TempDir dir;
  std::string job = dir.write("pft-profile-vm.yaml", kProfileJob);
  std::string lines = dir.write(
      "lines.jsonl",
      R"({"t":"hello","kernel":{"release":"6.1.0-57-amd64"},"testbox":{"hostname":"nightjar-vm","cpus":2},"uptime":3.0}
{"t":"plan","runs":[{"job":"pft-profile-vm","variant":"","cell":"clients=1 mode=threads size=32M","job_index":0}]}
{"t":"run","job":"pft-profile-vm","workload":"pft","cell_id":"clients=1 mode=threads size=32M","variant":"","status":"complete","params":{"clients":{"text":"1","number":1}},"iterations_data":[{"i":1,"metrics":{"faults_per_sec":100},"profile":{"event":"cpu-clock","frequency_hz":499,"lost":0,"stacks":{"[unknown];exc_page_fault":3}}},{"i":2,"metrics":{"faults_per_sec":101},"profile":{"event":"cpu-clock","stacks":{"[unknown];exc_page_fault":"many"}}}]}
{"t":"done","interrupted":false}
)");
  std::string db = dir.path() + "/r.db";
  auto r = run_nightjar({"run", job, "--db", db, "--kernel", image("amd64"), "--vm-memory", "512",
                         "--vm-file", lines + "=/lines.jsonl", "--vm-init",
                         "cat /lines.jsonl > \"$port\"", "--vm-timeout", "300", "--vm-keep",
                         dir.path()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("nightjar: error: run pft-profile-vm [] clients=1 mode=threads size=32M "
                       "from the guest: iteration 2: the guest's profile record is corrupt "
                       "(profile.stacks[\"[unknown];exc_page_fault\"]: expected an integer >= 1, "
                       "got \"many\"); stored without its profile"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(query_one(db, "SELECT count(*) FROM run WHERE status='complete'"), "1");
  EXPECT_EQ(query_one(db, "SELECT count(*) FROM sample WHERE metric='faults_per_sec'"), "2");
  EXPECT_EQ(query_one(db, "SELECT group_concat(iteration) FROM profile"), "1");
  EXPECT_EQ(query_one(db,
                      "SELECT count(*) FROM flag WHERE message LIKE 'iteration 2: the "
                      "guest''s profile record is corrupt (profile.stacks[%'"),
            "1");
  EXPECT_EQ(qemu_processes(dir.path()), 0);
}

TEST(Vm, PanicAndHangAreFailedRunsWithTheConsoleTail) {
  std::string why = skip_reason();
  if (!why.empty()) GTEST_SKIP() << why;
  TempDir dir;
  std::string job = dir.write("pft-vm.yaml", kJob);
  std::string db = dir.path() + "/r.db";
  auto panic = run_nightjar({"run", job, "--db", db, "--kernel", image("amd64"), "--vm-init",
                             "exit 1", "--vm-keep", dir.path()});
  EXPECT_EQ(panic.exit_code, 4) << panic.err;
  std::string reason =
      query_one(db, "SELECT reason FROM run WHERE status='failed' ORDER BY id LIMIT 1");
  EXPECT_EQ(reason.rfind("guest kernel panic (not syncing: Attempted to kill init!", 0), 0u)
      << reason;
  EXPECT_NE(reason.find("console tail:\n"), std::string::npos) << reason;
  EXPECT_EQ(qemu_processes(dir.path()), 0);

  auto hang = run_nightjar({"run", job, "--db", db, "--kernel", image("amd64"), "--vm-init",
                            "sleep 100000", "--vm-timeout", "40", "--vm-keep", dir.path()});
  EXPECT_EQ(hang.exit_code, 4) << hang.err;
  reason = query_one(db, "SELECT reason FROM run WHERE status='failed' ORDER BY id DESC LIMIT 1");
  EXPECT_EQ(reason.rfind("timeout: the guest did not finish within 40 s", 0), 0u) << reason;
  EXPECT_NE(reason.find("nightjar-guest: running the --vm-init override"), std::string::npos)
      << reason;
  EXPECT_EQ(query_one(db, "SELECT count(*) FROM run WHERE status='failed'"), "2");
  EXPECT_EQ(qemu_processes(dir.path()), 0);
}

TEST(Vm, SigintKillsQemuAndExits130) {
  std::string why = skip_reason();
  if (!why.empty()) GTEST_SKIP() << why;
  TempDir dir;
  std::string job = dir.write("pft-vm.yaml", kJob);
  std::string db = dir.path() + "/r.db";
  pid_t pid = spawn_nightjar({"run", job, "--db", db, "--kernel", image("amd64"), "--vm-init",
                              "sleep 100000", "--vm-keep", dir.path()},
                             dir.path(), "int");
  auto end = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (qemu_processes(dir.path()) == 0 && std::chrono::steady_clock::now() < end)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_EQ(qemu_processes(dir.path()), 1) << read_file(dir.path() + "/int.err");
  std::this_thread::sleep_for(std::chrono::seconds(2));
  kill(pid, SIGINT);
  EXPECT_EQ(wait_exit_code(pid), 130) << read_file(dir.path() + "/int.err");
  EXPECT_EQ(qemu_processes(dir.path()), 0);
}
