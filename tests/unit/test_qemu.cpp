// Unit under test: the host-side helpers of the qemu kernel axis
// (harness/vm/qemu.h) that need no qemu: bzImage inspection, the KVM/TCG
// decision, module selection from modules.dep or from .modinfo, failure
// classification from console and qemu output, log tails, and the guest's
// cgroup2 mount options (job `vm:`, --vm-cgroup-options, one boot per set).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "harness/vm/qemu.h"
#include "results/model/exit_codes.h"
#include "test_support.h"

namespace nightjar {
namespace {

using test::TempDir;

using test::fake_bzimage;

TEST(KernelImage, ReadsBannerConfigAndModulesOfADpkgTree) {
  TempDir dir;
  const std::string banner =
      "6.1.0-57-rt-amd64 (debian-kernel@lists.debian.org) (gcc-12 (Debian 12.2.0-14) 12.2.0) "
      "#1 SMP PREEMPT_RT Debian 6.1.192-3 (2026-11-26)";
  std::string image = dir.write("rt/boot/vmlinuz-6.1.0-57-rt-amd64", fake_bzimage(banner));
  dir.write("rt/boot/config-6.1.0-57-rt-amd64", "CONFIG_PREEMPT_RT=y\n");
  dir.write("rt/lib/modules/6.1.0-57-rt-amd64/modules.builtin", "kernel/fs/ext4/ext4.ko\n");
  KernelImage k = inspect_kernel_image(image, "");
  EXPECT_EQ(k.release, "6.1.0-57-rt-amd64");
  EXPECT_EQ(k.version, "#1 SMP PREEMPT_RT Debian 6.1.192-3 (2026-11-26)");
  EXPECT_EQ(k.banner, banner);
  EXPECT_EQ(k.config, dir.path() + "/rt/boot/config-6.1.0-57-rt-amd64");
  EXPECT_EQ(k.modules_dir, dir.path() + "/rt/lib/modules/6.1.0-57-rt-amd64");

  // --modules DIR holding <release>/
  dir.write("mods/6.1.0-57-rt-amd64/modules.dep", "");
  EXPECT_EQ(inspect_kernel_image(image, dir.path() + "/mods").modules_dir,
            dir.path() + "/mods/6.1.0-57-rt-amd64");
  try {
    inspect_kernel_image(image, dir.path() + "/rt/boot");
    FAIL() << "accepted a --modules without this kernel's modules";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("no modules.dep for kernel 6.1.0-57-rt-amd64"),
              std::string::npos)
        << e.what();
  }
}

TEST(KernelImage, NotABzImageIsAUsageError) {
  TempDir dir;
  std::string junk = dir.write("vmlinux", std::string(4096, 'x'));
  try {
    inspect_kernel_image(junk, "");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()),
              "--kernel " + junk +
                  ": not a bzImage (no 'HdrS' setup header); give an x86 kernel image such as "
                  "boot/vmlinuz-* of a linux-image package");
  }
  EXPECT_THROW(inspect_kernel_image(dir.path() + "/missing", ""), UsageError);
}

TEST(Accelerator, NeedsVmxOrSvmNotJustDevKvm) {
  TempDir dir;
  std::string plain = dir.write("cpuinfo", "processor\t: 0\nflags\t\t: fpu sse2 avx2\n");
  std::string vmx = dir.write("cpuinfo-vmx", "processor\t: 0\nflags\t\t: fpu vmx sse2\n");
  std::string node = dir.write("kvm", "");  // a file is not a KVM device
  Accelerator a = choose_accelerator(plain, node);
  EXPECT_FALSE(a.kvm);
  EXPECT_NE(a.why.find("no vmx or svm"), std::string::npos) << a.why;
  EXPECT_NE(a.why.find("exists but is not used"), std::string::npos) << a.why;
  Accelerator b = choose_accelerator(vmx, node);
  EXPECT_FALSE(b.kvm);
  EXPECT_NE(b.why.find("does not answer KVM_GET_API_VERSION"), std::string::npos) << b.why;
  Accelerator c = choose_accelerator(vmx, dir.path() + "/nope");
  EXPECT_FALSE(c.kvm);
  EXPECT_NE(c.why.find("cannot be opened"), std::string::npos) << c.why;
}

TEST(GuestModules, FromModulesDepDependenciesFirstBuiltinsLeftOut) {
  TempDir dir;
  dir.write("modules.dep",
            "kernel/drivers/char/virtio_console.ko: kernel/drivers/virtio/virtio.ko "
            "kernel/drivers/virtio/virtio_ring.ko\n"
            "kernel/drivers/block/zram/zram.ko: kernel/mm/zsmalloc.ko\n"
            "kernel/drivers/virtio/virtio.ko: kernel/drivers/virtio/virtio_ring.ko\n"
            "kernel/drivers/virtio/virtio_ring.ko:\n"
            "kernel/mm/zsmalloc.ko:\n");
  dir.write("modules.builtin", "kernel/drivers/virtio/virtio_pci.ko\n");
  EXPECT_EQ(guest_modules(dir.path(), {"virtio_pci", "virtio_console", "zram"}),
            (std::vector<std::string>{
                "kernel/drivers/virtio/virtio_ring.ko", "kernel/drivers/virtio/virtio.ko",
                "kernel/drivers/char/virtio_console.ko", "kernel/mm/zsmalloc.ko",
                "kernel/drivers/block/zram/zram.ko"}));
  EXPECT_TRUE(guest_modules("", {"zram"}).empty());
}

TEST(GuestModules, FromModinfoWhenThereIsNoModulesDep) {
  TempDir dir;
  auto ko = [&](const std::string& path, const std::string& depends) {
    dir.write(path, std::string("\x7f"
                                "ELF junk",
                                9) +
                        std::string(1, '\0') + "license=GPL" + std::string(1, '\0') +
                        "depends=" + depends + std::string(1, '\0') + "name=x");
  };
  ko("kernel/drivers/char/virtio_console.ko", "virtio,virtio_ring");
  ko("kernel/drivers/virtio/virtio.ko", "virtio_ring");
  ko("kernel/drivers/virtio/virtio_ring.ko", "");
  ko("kernel/drivers/block/zram/zram.ko", "zsmalloc");
  ko("kernel/mm/zsmalloc.ko", "");
  dir.write("modules.builtin", "");
  EXPECT_EQ(guest_modules(dir.path(), {"virtio_console", "zram"}),
            (std::vector<std::string>{
                "kernel/drivers/virtio/virtio_ring.ko", "kernel/drivers/virtio/virtio.ko",
                "kernel/drivers/char/virtio_console.ko", "kernel/mm/zsmalloc.ko",
                "kernel/drivers/block/zram/zram.ko"}));
}

TEST(VmFailure, Classification) {
  const std::string booted = "nightjar-guest: init started, uptime 4.8 s\n";
  EXPECT_FALSE(classify_vm_failure(booted, "", false, 60, true, 0));
  EXPECT_EQ(*classify_vm_failure(booted + "[ 6.7] Kernel panic - not syncing: Attempted to kill "
                                          "init! exitcode=0x00000100\n[ 6.8] CPU: 0\n",
                                 "", false, 60, false, 0),
            "guest kernel panic (not syncing: Attempted to kill init! exitcode=0x00000100)");
  EXPECT_EQ(*classify_vm_failure(booted, "", true, 60, false, 137),
            "timeout: the guest did not finish within 60 s (--vm-timeout)");
  EXPECT_EQ(classify_vm_failure(booted, "KVM internal error. Suberror: 1\nemulation failure\n",
                                false, 60, true, 1)
                ->rfind("KVM internal error in qemu", 0),
            0u);
  EXPECT_EQ(
      *classify_vm_failure("", "qemu: linux kernel too old to load a ram disk\n", false, 60, false,
                           1),
      "qemu could not boot the kernel (exit 1): qemu: linux kernel too old to load a ram disk");
  EXPECT_EQ(*classify_vm_failure("[0.0] Linux version 6.1\n", "", false, 60, false, 0),
            "boot failure: the guest never reached nightjar's init");
  EXPECT_EQ(*classify_vm_failure(booted, "", false, 60, false, 0),
            "the guest stopped before nightjar reported the end of the job");
}

TEST(TailLines, LastLinesWithoutCarriageReturns) {
  EXPECT_EQ(tail_lines("a\r\nb\r\nc\r\n", 2), "b\nc");
  EXPECT_EQ(tail_lines("a\nb", 5), "a\nb");
  EXPECT_EQ(tail_lines("", 3), "");
}

// --vm-cgroup-options over the job's `vm: cgroup2_options` over the default.
TEST(GuestCgroup2Options, FlagOverJobOverDefault) {
  JobFile plain, own;
  own.vm_cgroup2_options = "nsdelegate";
  QemuOptions q;
  EXPECT_EQ(guest_cgroup2_options(plain, q), "memory_recursiveprot");
  EXPECT_EQ(guest_cgroup2_options(own, q), "nsdelegate");
  own.vm_cgroup2_options = "";
  EXPECT_EQ(guest_cgroup2_options(own, q), "");  // the kernel's defaults, not the default
  q.cgroup2_options = "memory_localevents";
  EXPECT_EQ(guest_cgroup2_options(plain, q), "memory_localevents");
  EXPECT_EQ(guest_cgroup2_options(own, q), "memory_localevents");
}

// Jobs asking for other options boot a guest of their own, job order kept.
TEST(GuestCgroup2Options, OneBootPerDistinctSetOfOptions) {
  std::vector<PlannedJob> plan(4);
  plan[1].job.vm_cgroup2_options = "";
  plan[2].job.vm_cgroup2_options = "memory_recursiveprot";  // the default, written out
  plan[3].job.vm_cgroup2_options = "";
  QemuOptions q;
  std::vector<GuestBoot> boots = plan_guest_boots(plan, q);
  ASSERT_EQ(boots.size(), 2u);
  EXPECT_EQ(boots[0].cgroup2_options, "memory_recursiveprot");
  EXPECT_EQ(boots[0].jobs, (std::vector<std::size_t>{0, 2}));
  EXPECT_EQ(boots[1].cgroup2_options, "");
  EXPECT_EQ(boots[1].jobs, (std::vector<std::size_t>{1, 3}));
  q.cgroup2_options = "nsdelegate";  // the flag: every job in one guest
  boots = plan_guest_boots(plan, q);
  ASSERT_EQ(boots.size(), 1u);
  EXPECT_EQ(boots[0].jobs, (std::vector<std::size_t>{0, 1, 2, 3}));
}

// A guest kernel that refused an option mounts cgroup2 without it: warned.
TEST(GuestCgroup2Options, AMountWithoutARequestedOptionIsWarned) {
  EXPECT_EQ(cgroup2_mount_warning("memory_recursiveprot", "rw,nosuid,memory_recursiveprot"),
            std::nullopt);
  EXPECT_EQ(cgroup2_mount_warning("", "rw"), std::nullopt);
  EXPECT_EQ(cgroup2_mount_warning("nsdelegate,memory_recursiveprot",
                                  "rw,nsdelegate,memory_recursiveprot"),
            std::nullopt);
  EXPECT_EQ(cgroup2_mount_warning("memory_recursiveprot,memory_hugetlb_accounting", "rw,relatime")
                .value_or(""),
            "the guest's cgroup2 is mounted with 'rw,relatime', without memory_recursiveprot, "
            "memory_hugetlb_accounting (the guest kernel refused the mount options "
            "'memory_recursiveprot,memory_hugetlb_accounting' and mounted cgroup2 without them): "
            "memcg settings that depend on them are not in force in this run");
}

}  // namespace
}  // namespace nightjar
