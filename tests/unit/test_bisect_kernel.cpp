// Unit under test: harness/bisect/kernel_build.h (options, config recipe and
// key, image cache, make command lines) and the build half of
// kernel_measurer (harness/bisect/measurer_kernel.cpp) against a fake kernel
// tree whose Makefile plays make's part: a build that succeeds is cached by
// commit and config key and never rebuilt, a build that fails gives the
// reason and the tail of its log and leaves no cache entry.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "harness/bisect/kernel_build.h"
#include "harness/bisect/measurer.h"
#include "harness/bisect/options.h"
#include "results/model/exit_codes.h"
#include "results/store/store.h"
#include "test_support.h"

namespace nightjar {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

TEST(BisectKernelOptions, NeedsExactlyOneConfigAndNoBuildCommand) {
  TempDir d;
  const std::string frag = d.write("guest.config", "CONFIG_ZRAM=y\n");
  KernelBuildOptions o;
  o.enabled = true;
  EXPECT_THROW(check_kernel_build_options(o, ""), UsageError);  // neither
  o.defconfig = "tinyconfig";
  o.config = frag;
  EXPECT_THROW(check_kernel_build_options(o, ""), UsageError);  // both
  o.config.clear();
  EXPECT_THROW(check_kernel_build_options(o, "make"), UsageError);  // with --build
  o.fragments = {d.path() + "/missing.config"};
  try {
    check_kernel_build_options(o, "");
    ADD_FAILURE() << "a missing fragment was accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--config-fragment " + d.path() + "/missing.config"),
              std::string::npos)
        << e.what();
  }
  o.fragments = {frag};
  EXPECT_NO_THROW(check_kernel_build_options(o, ""));
  o.defconfig = "arch/x86/configs/x86_64_defconfig";
  EXPECT_THROW(check_kernel_build_options(o, ""), UsageError);  // a path, not a target
  KernelBuildOptions c;
  c.enabled = true;
  c.config = frag;
  c.fragments = {frag};
  EXPECT_THROW(check_kernel_build_options(c, ""), UsageError);  // fragments with a full config
  KernelBuildOptions off;
  off.defconfig = "tinyconfig";
  EXPECT_THROW(check_kernel_build_options(off, ""), UsageError);  // without --kernel-build
  KernelBuildOptions unpaired;
  unpaired.pair_good = false;  // --no-pair-good without --kernel-build
  EXPECT_THROW(check_kernel_build_options(unpaired, ""), UsageError);
}

TEST(BisectKernelOptions, ConfigKeyFollowsTheRecipeText) {
  TempDir d;
  KernelBuildOptions o;
  o.defconfig = "tinyconfig";
  o.fragments = {d.write("a.config", "CONFIG_ZRAM=y\n"), d.write("b.config", "CONFIG_IPV6=y\n")};
  EXPECT_EQ(config_recipe(o),
            "defconfig tinyconfig\nfragment a.config\nCONFIG_ZRAM=y\nfragment b.config\n"
            "CONFIG_IPV6=y\n");
  const std::string k1 = config_key(o);
  EXPECT_EQ(k1.size(), 16u);
  EXPECT_EQ(config_key(o), k1);
  std::swap(o.fragments[0], o.fragments[1]);  // the order of merging matters
  EXPECT_NE(config_key(o), k1);
  std::swap(o.fragments[0], o.fragments[1]);
  d.write("b.config", "CONFIG_IPV6=n\n");
  EXPECT_NE(config_key(o), k1);
  o.defconfig = "x86_64_defconfig";
  EXPECT_NE(config_key(o), k1);
  o.fragments = {d.path() + "/gone.config"};
  EXPECT_THROW(config_key(o), EnvironmentError);
}

TEST(BisectKernelOptions, DirectoriesAndCommandLines) {
  KernelBuildOptions o;
  ::setenv("XDG_CACHE_HOME", "/var/cache/x", 1);
  const std::string dir = kernel_dir(o, "/src/linux", "0123456789abcdef");
  ::unsetenv("XDG_CACHE_HOME");
  EXPECT_EQ(dir.rfind("/var/cache/x/nightjar/kernel-bisect/", 0), 0u) << dir;
  EXPECT_EQ(dir.substr(dir.size() - 17), "-0123456789abcdef");
  EXPECT_NE(kernel_dir(o, "/src/other", "0123456789abcdef").substr(dir.size() - 26),
            dir.substr(dir.size() - 26));
  o.dir = "/k";
  EXPECT_EQ(kernel_dir(o, "/src/linux", "k"), "/k");
  EXPECT_EQ(image_dir("/k", "abc", "0011"), "/k/images/abc-0011");
  EXPECT_EQ(make_argv("/k/out", {"bzImage"}, 2, true),
            (std::vector<std::string>{"make", "O=/k/out", "-j2", "CC=ccache gcc", "bzImage"}));
  EXPECT_EQ(make_argv("/k/out", {"olddefconfig"}, 0, false),
            (std::vector<std::string>{"make", "O=/k/out", "olddefconfig"}));
  EXPECT_EQ(merge_config_argv("/k/out", {"/f.config"}),
            (std::vector<std::string>{"scripts/kconfig/merge_config.sh", "-m", "-O", "/k/out",
                                      "/k/out/.config", "/f.config"}));
}

TEST(BisectKernelOptions, KernelOptionsSurviveTheSessionJson) {
  BisectJobOptions j;
  j.job_path = "/jobs/pft-quick.yaml";
  j.kernel.enabled = true;
  j.kernel.defconfig = "tinyconfig";
  j.kernel.fragments = {"/f.config"};
  j.kernel.dir = "/k";
  j.kernel.vm_timeout_sec = 300;
  BisectSession s;
  s.job_path = j.job_path;
  s.options = session_options_json(j, false);
  const SessionOptions back = session_options(s);
  EXPECT_TRUE(back.job.kernel.enabled);
  EXPECT_EQ(back.job.kernel.defconfig, "tinyconfig");
  EXPECT_EQ(back.job.kernel.fragments, j.kernel.fragments);
  EXPECT_EQ(back.job.kernel.dir, "/k");
  EXPECT_EQ(back.job.kernel.vm_timeout_sec, 300);
  EXPECT_TRUE(back.job.kernel.pair_good);
  j.kernel.pair_good = false;
  s.options = session_options_json(j, false);
  EXPECT_FALSE(session_options(s).job.kernel.pair_good);
  BisectJobOptions plain;
  s.options = session_options_json(plain, false);
  EXPECT_FALSE(session_options(s).job.kernel.enabled);
}

TEST(BisectKernelCache, EntryNeedsImageAndIdentity) {
  TempDir d;
  const std::string e = d.path() + "/images/abc-0011";
  fs::create_directories(e);
  EXPECT_FALSE(read_cached_image(e));
  d.write("images/abc-0011/bzImage", "MZ");
  EXPECT_FALSE(read_cached_image(e));  // no kernel.json: an interrupted build
  BuiltKernel k{"abc", "6.1.192+", "0011", "fedcba9876543210", 42.5};
  d.write("images/abc-0011/kernel.json", kernel_identity_json(k));
  auto back = read_cached_image(e);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->release, "6.1.192+");
  EXPECT_EQ(back->config_hash, "fedcba9876543210");
  EXPECT_DOUBLE_EQ(back->build_seconds, 42.5);
}

// A kernel tree whose Makefile plays make's part: tinyconfig and olddefconfig
// write O/.config, bzImage writes O/arch/x86/boot/bzImage (or fails when the
// tree holds a file named BROKEN), kernelrelease prints 6.1.0-fake; every
// call appends its goal to O/../calls.
class FakeKernelTree : public ::testing::Test {
 protected:
  FakeKernelTree() : store(d.path() + "/r.db") {
    d.write("linux/Makefile",
            "calls := $(O)/../calls\n"
            "tinyconfig:\n\techo tinyconfig >> $(calls); echo CONFIG_X=y > $(O)/.config\n"
            "olddefconfig:\n\techo olddefconfig >> $(calls); echo '# ok' >> $(O)/.config\n"
            "bzImage:\n\techo bzImage >> $(calls); test ! -e BROKEN || "
            "{ echo 'mm/memory.c:42: error: planted'; exit 2; }; "
            "mkdir -p $(O)/arch/x86/boot; echo image > $(O)/arch/x86/boot/bzImage\n"
            "kernelrelease:\n\t@echo 6.1.0-fake\n");
    d.write("linux/scripts/kconfig/merge_config.sh",
            "#!/bin/sh\necho merge >> \"$3/../calls\"; cat \"$5\" >> \"$4\"\n");
    fs::permissions(d.path() + "/linux/scripts/kconfig/merge_config.sh", fs::perms(0755));
    job.kernel.enabled = true;
    job.kernel.defconfig = "tinyconfig";
    job.kernel.fragments = {d.write("guest.config", "CONFIG_ZRAM=y\n")};
    job.kernel.dir = d.path() + "/k";
    job.kernel.jobs = 1;
    prep.top = d.path() + "/linux";
  }
  std::string calls() { return test::read_file(d.path() + "/k/calls"); }

  TempDir d;
  ResultsStore store;
  BisectJobOptions job;
  Prepared prep;
};

TEST_F(FakeKernelTree, BuildsOnceThenUsesTheCache) {
  auto m = kernel_measurer(store, job, prep);
  BuildResult b = m->build("aaaa", prep.top);
  EXPECT_TRUE(b.ok) << b.tail;
  EXPECT_EQ(calls(), "tinyconfig\nmerge\nolddefconfig\nbzImage\n");
  const std::string key = config_key(job.kernel);
  auto id = read_cached_image(image_dir(job.kernel.dir, "aaaa", key));
  ASSERT_TRUE(id);
  EXPECT_EQ(id->release, "6.1.0-fake");
  EXPECT_EQ(id->commit, "aaaa");
  EXPECT_TRUE(fs::exists(image_dir(job.kernel.dir, "aaaa", key) + "/config-6.1.0-fake"));
  EXPECT_EQ(test::read_file(job.kernel.dir + "/assembled.config"),
            "CONFIG_X=y\nCONFIG_ZRAM=y\n# ok\n");
  EXPECT_TRUE(m->build("aaaa", prep.top).ok);  // cached: make is not called again
  EXPECT_EQ(calls(), "tinyconfig\nmerge\nolddefconfig\nbzImage\n");
  EXPECT_TRUE(m->build("bbbb", prep.top).ok);  // the assembled config, no defconfig again
  EXPECT_EQ(calls(), "tinyconfig\nmerge\nolddefconfig\nbzImage\nolddefconfig\nbzImage\n");
}

TEST_F(FakeKernelTree, AFailedBuildSaysWhyAndIsNotCached) {
  auto m = kernel_measurer(store, job, prep);
  d.write("linux/BROKEN", "");
  BuildResult b = m->build("cccc", prep.top);
  EXPECT_FALSE(b.ok);
  EXPECT_NE(b.tail.find("make bzImage exited with status 2"), std::string::npos) << b.tail;
  EXPECT_NE(b.tail.find("mm/memory.c:42: error: planted"), std::string::npos) << b.tail;
  EXPECT_NE(b.tail.find(job.kernel.dir + "/logs/cccc.log"), std::string::npos) << b.tail;
  EXPECT_FALSE(read_cached_image(image_dir(job.kernel.dir, "cccc", config_key(job.kernel))));
  fs::remove(d.path() + "/linux/BROKEN");
  EXPECT_TRUE(m->build("cccc", prep.top).ok);  // built again, now fixed
}

}  // namespace
}  // namespace nightjar
