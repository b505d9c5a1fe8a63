// Unit under test: workloads/sys/probe.{h,cpp} — KernelIdentity, Testbox,
// CgroupLayout::detect, SystemContext facts and warnings, against fake /proc
// and /sys trees built in a temporary directory, plus a smoke test on the real
// machine.
#include "workloads/sys/fingerprint.h"
#include "workloads/sys/probe.h"

#include <gtest/gtest.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

namespace nightjar {
namespace {

namespace fs = std::filesystem;

/// A temporary directory (mkdtemp under /tmp) holding a fake root tree.
class FakeRoot : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/nightjar-identity-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  /// Writes `text` to root_ + `path`, creating parent directories.
  void write(const std::string& path, const std::string& text) {
    fs::path p = root_ + path;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
  }
  std::string root_;
};

std::string uname_release() {
  struct utsname u {};
  EXPECT_EQ(::uname(&u), 0);
  return u.release;
}

// ------------------------------------------------------------ helpers

TEST(Fnv1a64, KnownVectors) {
  EXPECT_EQ(fnv1a64_hex(""), "cbf29ce484222325");
  EXPECT_EQ(fnv1a64_hex("a"), "af63dc4c8601ec8c");
  EXPECT_EQ(fnv1a64_hex("foobar"), "85944171f73967e8");
}

TEST(BracketedSelection, PicksTheBracketedWord) {
  EXPECT_EQ(bracketed_selection("always [madvise] never\n"), "madvise");
  EXPECT_EQ(bracketed_selection("[always] madvise never\n"), "always");
  EXPECT_EQ(bracketed_selection("always defer defer+madvise [madvise] never\n"), "madvise");
  EXPECT_EQ(bracketed_selection("always within_size advise [never] deny force\n"), "never");
  EXPECT_EQ(bracketed_selection("  plain\n"), "plain");
  EXPECT_EQ(bracketed_selection(""), "");
}

// ------------------------------------------------------------ cgroups

constexpr const char* kBaseMounts =
    "22 27 0:21 / /proc rw,relatime - proc proc rw\n"
    "23 27 0:22 / /sys rw,relatime - sysfs sysfs rw\n"
    "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard\n";

TEST_F(FakeRoot, CgroupHybridLikeThisMachine) {
  write("/proc/self/mountinfo",
        std::string(kBaseMounts) +
            "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
            "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
            "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
            "40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd\n"
            "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n");
  write("/sys/fs/cgroup/unified/cgroup.controllers", "hugetlb\n");
  auto l = CgroupLayout::detect(root_ + "/proc/self/mountinfo", root_);
  EXPECT_EQ(l.version, CgroupLayout::Version::hybrid);
  EXPECT_EQ(l.v2_root, "/sys/fs/cgroup/unified");
  EXPECT_EQ(l.v1_memory_root, "/sys/fs/cgroup/memory");
  EXPECT_FALSE(l.v2_memory_available);
  EXPECT_EQ(to_string(l.version), "hybrid");
}

TEST_F(FakeRoot, CgroupV1Only) {
  // Optional fields ("shared:9") before the separator, as systemd mounts have.
  write("/proc/self/mountinfo",
        std::string(kBaseMounts) +
            "30 23 0:26 / /sys/fs/cgroup ro,nosuid - tmpfs tmpfs ro,mode=755\n"
            "33 30 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid shared:9 - cgroup cgroup "
            "rw,cpu,cpuacct\n"
            "34 30 0:30 / /sys/fs/cgroup/memory rw,nosuid shared:10 - cgroup cgroup rw,memory\n");
  auto l = CgroupLayout::detect(root_ + "/proc/self/mountinfo", root_);
  EXPECT_EQ(l.version, CgroupLayout::Version::v1);
  EXPECT_EQ(l.v2_root, "");
  EXPECT_EQ(l.v1_memory_root, "/sys/fs/cgroup/memory");
  EXPECT_FALSE(l.v2_memory_available);
}

TEST_F(FakeRoot, CgroupV2OnlyWithMemory) {
  write("/proc/self/mountinfo",
        std::string(kBaseMounts) +
            "30 23 0:26 / /sys/fs/cgroup rw,nosuid shared:4 - cgroup2 cgroup2 "
            "rw,nsdelegate,memory_recursiveprot\n");
  write("/sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory hugetlb pids rdma misc\n");
  auto l = CgroupLayout::detect(root_ + "/proc/self/mountinfo", root_);
  EXPECT_EQ(l.version, CgroupLayout::Version::v2);
  EXPECT_EQ(l.v2_root, "/sys/fs/cgroup");
  EXPECT_EQ(l.v1_memory_root, "");
  EXPECT_TRUE(l.v2_memory_available);
}

TEST_F(FakeRoot, CgroupV2OnlyWithoutMemory) {
  write("/proc/self/mountinfo",
        std::string(kBaseMounts) +
            "30 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n");
  write("/sys/fs/cgroup/cgroup.controllers", "cpuset cpu io pids\n");
  auto l = CgroupLayout::detect(root_ + "/proc/self/mountinfo", root_);
  EXPECT_EQ(l.version, CgroupLayout::Version::v2);
  EXPECT_EQ(l.v2_root, "/sys/fs/cgroup");
  EXPECT_FALSE(l.v2_memory_available);
}

TEST_F(FakeRoot, CgroupV2WithNameOnlyV1MountIsV2) {
  // Containers sometimes add a controller-less v1 "name=systemd" hierarchy.
  write("/proc/self/mountinfo",
        std::string(kBaseMounts) +
            "30 23 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n"
            "31 30 0:27 / /sys/fs/cgroup/systemd rw - cgroup cgroup rw,xattr,name=systemd\n");
  write("/sys/fs/cgroup/cgroup.controllers", "memory pids\n");
  auto l = CgroupLayout::detect(root_ + "/proc/self/mountinfo", root_);
  EXPECT_EQ(l.version, CgroupLayout::Version::v2);
  EXPECT_TRUE(l.v2_memory_available);
}

TEST_F(FakeRoot, CgroupPrefersWholeHierarchyAndUnescapes) {
  // A container-style bind of a sub-cgroup first, then the whole hierarchy at
  // a mount point with a space (escaped as \040).
  write("/proc/self/mountinfo", std::string(kBaseMounts) +
                                    "50 27 0:32 /docker/abc /mnt/sub rw - cgroup cgroup rw,memory\n"
                                    "51 27 0:32 / /mnt/my\\040cg rw - cgroup cgroup rw,memory\n");
  auto l = CgroupLayout::detect(root_ + "/proc/self/mountinfo", root_);
  EXPECT_EQ(l.version, CgroupLayout::Version::v1);
  EXPECT_EQ(l.v1_memory_root, "/mnt/my cg");
}

TEST_F(FakeRoot, CgroupNoneAndUnreadable) {
  write("/proc/self/mountinfo", kBaseMounts);
  auto l = CgroupLayout::detect(root_ + "/proc/self/mountinfo", root_);
  EXPECT_EQ(l.version, CgroupLayout::Version::none);
  EXPECT_EQ(l.v2_root, "");
  EXPECT_EQ(l.v1_memory_root, "");
  auto missing = CgroupLayout::detect(root_ + "/no/such/mountinfo", root_);
  EXPECT_EQ(missing.version, CgroupLayout::Version::none);
}

// ------------------------------------------------------------ system context

TEST_F(FakeRoot, SystemContextParsesEveryFact) {
  write("/sys/kernel/mm/transparent_hugepage/enabled", "[always] madvise never\n");
  write("/sys/kernel/mm/transparent_hugepage/defrag",
        "always defer defer+madvise [madvise] never\n");
  write("/sys/kernel/mm/transparent_hugepage/shmem_enabled",
        "always [within_size] advise never deny force\n");
  write("/proc/sys/kernel/randomize_va_space", "2\n");
  write("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "powersave\n");
  write("/sys/devices/system/cpu/cpufreq/boost", "1\n");
  write("/proc/self/mountinfo", std::string(kBaseMounts) +
                                    "60 27 0:40 / /tmp rw,nosuid - tmpfs tmpfs rw\n"
                                    "30 23 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n");
  write("/sys/fs/cgroup/cgroup.controllers", "cpu io memory pids\n");
  write("/proc/sys/net/ipv4/tcp_wmem", "4096\t16384\t4194304\n");
  write("/proc/sys/net/ipv4/tcp_rmem", "4096\t131072\t6291456\n");
  write("/sys/module/zswap/parameters/enabled", "Y\n");
  write("/proc/loadavg", "1.80 0.90 0.40 3/120 4242\n");
  write("/proc/swaps",
        "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
        "/dev/zram0                              partition\t1048572\t\t0\t\t100\n");

  auto ctx = SystemContext::probe(root_);
  // The real working directory is below "/" of the fake mountinfo unless it is
  // under /tmp (tmpfs there).
  char cwd[4096];
  ASSERT_NE(::getcwd(cwd, sizeof cwd), nullptr);
  std::string cwd_fs = std::string(cwd).rfind("/tmp/", 0) == 0 ? "tmpfs" : "ext4";
  std::map<std::string, std::string> expected{
      {"aslr", "2"},
      {"cgroup.memory", "/sys/fs/cgroup"},
      {"cgroup.options", "rw"},
      {"cgroup.version", "v2"},
      {"cpufreq.boost", "1"},
      {"cpufreq.governor", "powersave"},
      {"fs.cwd", cwd_fs},
      {"fs.tmp", "tmpfs"},
      {"load.avg1", "1.80"},
      {"net.ipv4.tcp_rmem", "4096 131072 6291456"},
      {"net.ipv4.tcp_wmem", "4096 16384 4194304"},
      {"swap.devices", "1"},
      {"thp.defrag", "madvise"},
      {"thp.enabled", "always"},
      {"thp.shmem_enabled", "within_size"},
      {"zswap.enabled", "Y"},
  };
  EXPECT_EQ(ctx.facts, expected);

  auto w = ctx.warnings(2);
  ASSERT_EQ(w.size(), 5u);
  EXPECT_EQ(w[0].rfind("THP is 'always': ", 0), 0u) << w[0];
  EXPECT_NE(w[0].find("/sys/kernel/mm/transparent_hugepage/enabled"), std::string::npos);
  EXPECT_EQ(w[1].rfind("shmem THP is 'within_size': ", 0), 0u) << w[1];
  EXPECT_EQ(w[2].rfind("load average 1.80 on 2 CPUs: another process is busy", 0), 0u) << w[2];
  EXPECT_EQ(w[3].rfind("CPU governor is 'powersave': set 'performance'", 0), 0u) << w[3];
  EXPECT_EQ(w[4].rfind("zswap is enabled: ", 0), 0u) << w[4];
  for (const auto& line : w) EXPECT_EQ(line.find('\n'), std::string::npos);
  // THP and zswap change some workloads' figures only (Workload::sensitive_facts).
  std::vector<std::pair<std::string, bool>> kinds;
  for (const auto& f : ctx.fact_warnings(2)) kinds.emplace_back(f.fact, f.workload_specific);
  EXPECT_EQ(kinds, (std::vector<std::pair<std::string, bool>>{{"thp.enabled", true},
                                                              {"thp.shmem_enabled", true},
                                                              {"load.avg1", false},
                                                              {"cpufreq.governor", false},
                                                              {"zswap.enabled", true}}));
}

// The fingerprint facts (workloads/sys/fingerprint.h), each from its source.
TEST_F(FakeRoot, SystemContextReadsEveryFingerprintFact) {
  write("/proc/version",
        "Linux version 6.1.0-13-amd64 (debian-kernel@lists.debian.org) (gcc-12 (Debian "
        "12.2.0-14) 12.2.0, GNU ld (GNU Binutils for Debian) 2.40) #1 SMP PREEMPT_DYNAMIC\n");
  write("/proc/cpuinfo",
        "processor\t: 0\nmicrocode\t: 0xde\nflags\t\t: fpu  vme hypervisor\n\n"
        "processor\t: 1\nmicrocode\t: 0xdf\nflags\t\t: fpu\n");
  write("/sys/devices/system/node/online", "0-1,3\n");
  write("/sys/devices/system/cpu/vulnerabilities/spectre_v2",
        "Mitigation: Retpolines,  STIBP: disabled\n");
  write("/sys/devices/system/cpu/vulnerabilities/meltdown", "Not affected\n");
  write("/proc/sys/vm/swappiness", "60\n");
  write("/proc/sys/net/ipv4/tcp_congestion_control", "cubic\n");
  write("/sys/class/dmi/id/sys_vendor", "QEMU\n");
  write("/sys/module/zswap/parameters/compressor", "lzo\n");
  write("/proc/self/mountinfo", std::string(kBaseMounts) +
                                    "30 23 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 "
                                    "rw,nsdelegate,memory_recursiveprot\n");

  auto f = SystemContext::probe(root_).facts;
  EXPECT_EQ(f["kernel.compiler"],
            "gcc-12 (Debian 12.2.0-14) 12.2.0, GNU ld (GNU Binutils for Debian) 2.40");
  EXPECT_EQ(f["cpu.microcode"], "0xde");
  EXPECT_EQ(f["cpu.flags_hash"], fnv1a64_hex("fpu vme hypervisor"));
  EXPECT_EQ(f["numa.nodes"], "3");
  EXPECT_EQ(f["vuln.spectre_v2"], "Mitigation: Retpolines, STIBP: disabled");
  EXPECT_EQ(f["vuln.meltdown"], "Not affected");
  EXPECT_EQ(f["sysctl.vm.swappiness"], "60");
  EXPECT_EQ(f["sysctl.net.ipv4.tcp_congestion_control"], "cubic");
  EXPECT_EQ(f.count("sysctl.vm.dirty_ratio"), 0u);  // absent source, absent fact
  EXPECT_EQ(f["cgroup.options"], "rw,nsdelegate,memory_recursiveprot");
  EXPECT_EQ(f["hypervisor"], "flagged QEMU");
  EXPECT_EQ(f["zswap.compressor"], "lzo");

  // /sys/hypervisor/type wins over the CPU flag.
  write("/sys/hypervisor/type", "xen\n");
  EXPECT_EQ(SystemContext::probe(root_).facts["hypervisor"], "xen");
}

TEST(Fingerprint, KernelCompilerIsTheSecondGroupOfProcVersion) {
  EXPECT_EQ(kernel_compiler("Linux version 6.6.0 (me@box) (clang version 17.0.6, LLD 17.0.6) #3"),
            "clang version 17.0.6, LLD 17.0.6");
  EXPECT_EQ(kernel_compiler("Linux version 6.6.0 (me@box) #3"), "");
  EXPECT_EQ(kernel_compiler(""), "");
}

TEST_F(FakeRoot, SystemContextOmitsAbsentFactsAndQuietSystemHasNoWarnings) {
  // No cpufreq, no zswap module, no THP: a minimal VM.
  write("/proc/sys/kernel/randomize_va_space", "2\n");
  write("/proc/self/mountinfo",
        std::string(kBaseMounts) +
            "32 23 0:29 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n");
  write("/proc/loadavg", "0.05 0.10 0.01 1/88 4103\n");
  write("/proc/swaps", "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n");

  auto ctx = SystemContext::probe(root_);
  EXPECT_EQ(ctx.facts.count("cpufreq.governor"), 0u);
  EXPECT_EQ(ctx.facts.count("cpufreq.boost"), 0u);
  EXPECT_EQ(ctx.facts.count("thp.enabled"), 0u);
  EXPECT_EQ(ctx.facts.count("zswap.enabled"), 0u);
  EXPECT_EQ(ctx.facts.count("net.ipv4.tcp_wmem"), 0u);
  EXPECT_EQ(ctx.facts.at("cgroup.version"), "v1");
  EXPECT_EQ(ctx.facts.at("cgroup.memory"), "/sys/fs/cgroup/memory");
  EXPECT_EQ(ctx.facts.at("swap.devices"), "0");
  EXPECT_EQ(ctx.facts.at("load.avg1"), "0.05");
  EXPECT_EQ(ctx.facts.at("fs.tmp"), "ext4");
  EXPECT_TRUE(ctx.warnings(2).empty());
}

TEST(SystemContextWarnings, Thresholds) {
  SystemContext ctx;
  ctx.facts = {{"thp.enabled", "madvise"},
               {"thp.shmem_enabled", "never"},
               {"cpufreq.governor", "performance"},
               {"zswap.enabled", "N"},
               {"load.avg1", "0.70"}};
  EXPECT_TRUE(ctx.warnings(2).empty());
  ctx.facts["load.avg1"] = "0.75";
  ASSERT_EQ(ctx.warnings(1).size(), 1u);
  EXPECT_EQ(ctx.warnings(1)[0].rfind("load average 0.75 on 1 CPU: ", 0), 0u);
  // On 64 CPUs the threshold is 0.05 * 64 = 3.2.
  ctx.facts["load.avg1"] = "3.10";
  EXPECT_TRUE(ctx.warnings(64).empty());
  ctx.facts["load.avg1"] = "3.20";
  EXPECT_EQ(ctx.warnings(64).size(), 1u);
  ctx.facts["load.avg1"] = "0.00";
  ctx.facts["thp.enabled"] = "always";
  ASSERT_EQ(ctx.warnings(2).size(), 1u);
  EXPECT_EQ(ctx.warnings(2)[0].rfind("THP is 'always'", 0), 0u);
}

// ------------------------------------------------------------ kernel, testbox

TEST_F(FakeRoot, KernelConfigFromProcConfigGz) {
  const std::string config = "#\n# Automatically generated file; DO NOT EDIT.\nCONFIG_SWAP=y\n";
  write("/proc/cmdline", "BOOT_IMAGE=/vmlinuz root=/dev/vda ro quiet\n");
  fs::create_directories(root_ + "/proc");
  gzFile gz = ::gzopen((root_ + "/proc/config.gz").c_str(), "wb");
  ASSERT_NE(gz, nullptr);
  ASSERT_EQ(::gzwrite(gz, config.data(), static_cast<unsigned>(config.size())),
            static_cast<int>(config.size()));
  ::gzclose(gz);
  // A different /boot config must be ignored: /proc/config.gz comes first.
  write("/boot/config-" + uname_release(), "CONFIG_OTHER=y\n");

  auto k = probe_kernel_identity(root_);
  EXPECT_EQ(k.release, uname_release());
  EXPECT_FALSE(k.version.empty());
  EXPECT_EQ(k.cmdline, "BOOT_IMAGE=/vmlinuz root=/dev/vda ro quiet");
  EXPECT_EQ(k.config_source, "/proc/config.gz");
  EXPECT_EQ(k.config_hash, fnv1a64_hex(config));
  EXPECT_EQ(k.config_hash.size(), 16u);
}

TEST_F(FakeRoot, KernelConfigFallsBackToBootThenNone) {
  write("/boot/config-" + uname_release(), "CONFIG_OTHER=y\n");
  auto k = probe_kernel_identity(root_);
  EXPECT_EQ(k.config_source, "/boot/config-" + uname_release());
  EXPECT_EQ(k.config_hash, fnv1a64_hex("CONFIG_OTHER=y\n"));
  EXPECT_EQ(k.cmdline, "");

  fs::remove(root_ + "/boot/config-" + uname_release());
  auto none = probe_kernel_identity(root_);
  EXPECT_EQ(none.config_source, "");
  EXPECT_EQ(none.config_hash, "");
}

TEST_F(FakeRoot, TestboxFromFakeFiles) {
  write("/proc/cpuinfo",
        "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Gold 6252 "
        "CPU @ 2.10GHz\n\nprocessor\t: 1\nmodel name\t: Intel(R) Xeon(R) Gold 6252 CPU @ "
        "2.10GHz\n");
  write("/sys/devices/system/cpu/online", "0-3,8,10-11\n");
  write("/proc/meminfo", "MemTotal:       24684084 kB\nMemFree:        1000 kB\n");
  auto t = probe_testbox(root_);
  EXPECT_FALSE(t.hostname.empty());
  EXPECT_EQ(t.cpu_model, "Intel(R) Xeon(R) Gold 6252 CPU @ 2.10GHz");
  EXPECT_EQ(t.cpus, 7u);
  EXPECT_EQ(t.memory_bytes, 24684084ull * 1024);
}

TEST_F(FakeRoot, TestboxArm64CpuModel) {
  write("/proc/cpuinfo",
        "processor\t: 0\nBogoMIPS\t: 50.00\nCPU implementer\t: 0x41\nCPU part\t: 0xd0c\n");
  write("/sys/devices/system/cpu/online", "0\n");
  auto t = probe_testbox(root_);
  EXPECT_EQ(t.cpu_model, "arm64 implementer 0x41 part 0xd0c");
  EXPECT_EQ(t.cpus, 1u);
  EXPECT_EQ(t.memory_bytes, 0u);
}

// ------------------------------------------------------------ real machine

TEST(RealMachine, ProbeSmoke) {
  auto k = probe_kernel_identity();
  EXPECT_FALSE(k.release.empty());
  EXPECT_FALSE(k.version.empty());
  auto t = probe_testbox();
  EXPECT_FALSE(t.hostname.empty());
  EXPECT_GE(t.cpus, 1u);
  EXPECT_GT(t.memory_bytes, 0u);
  auto ctx = SystemContext::probe();
  EXPECT_EQ(ctx.facts.count("cgroup.version"), 1u);
  EXPECT_EQ(ctx.facts.count("load.avg1"), 1u);
  EXPECT_EQ(ctx.facts.count("fs.cwd"), 1u);

  // Printed so a reader of the test log sees what this machine records.
  std::cout << "kernel: " << k.release << " | " << k.version << "\n  config " << k.config_hash
            << " from " << k.config_source << "\n  cmdline " << k.cmdline << "\n";
  std::cout << "testbox: " << t.hostname << " | " << t.cpu_model << " | " << t.cpus << " CPUs | "
            << t.memory_bytes << " bytes\n";
  for (const auto& [key, value] : ctx.facts) std::cout << "  " << key << " = " << value << "\n";
  for (const auto& w : ctx.warnings(t.cpus)) std::cout << "  warning: " << w << "\n";
}

}  // namespace
}  // namespace nightjar
