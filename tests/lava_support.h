// Checks shared by the LAVA tests (tests/unit/test_lava.cpp,
// tests/cli/test_lava_cli.cpp, tests/lava/, tests/lava-server/): why a test
// cannot run here, or "" when it can.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>

#include "harness/vm/initramfs.h"
#include "results/model/exit_codes.h"
#include "test_support.h"
#include "workloads/sys/process.h"

namespace nightjar::test {

/// Building a ramdisk needs busybox-static and cpio.
inline std::string ramdisk_skip_reason() {
  try {
    check_static_busybox();
  } catch (const Error& e) {
    return e.what();
  }
  if (find_program("cpio").empty()) return "cpio is not installed";
  return "";
}

/// Running LAVA jobs here needs root (lava-run works in
/// /var/lib/lava/dispatcher/tmp), lava-run, nightjar-static and the Debian
/// generic and rt kernels (ci/fetch-kernels.sh).
inline std::string lava_run_skip_reason() {
  if (geteuid() != 0)
    return "not root: lava-run works in /var/lib/lava/dispatcher/tmp (run the label as root)";
  if (find_program("lava-run").empty())
    return "lava-run is not installed (ci/install-lava.sh installs lava-dispatcher)";
  const std::filesystem::path guest =
      std::filesystem::path(NIGHTJAR_BINARY).parent_path() / "nightjar-static";
  if (access(guest.c_str(), X_OK) != 0)
    return "no " + guest.string() + " (configure with -DNIGHTJAR_STATIC=ON)";
  if (kernel_image("amd64").empty() || kernel_image("rt-amd64").empty())
    return "no Debian kernel images in " + kernels_dir() + " (run ci/fetch-kernels.sh)";
  return ramdisk_skip_reason();
}

/// ci/install-lava.sh's folder: $NIGHTJAR_LAVA, else build/lava (rendered
/// devices NAME.yaml, dictionaries devices/NAME.jinja2).
inline std::string lava_dir() {
  if (const char* env = std::getenv("NIGHTJAR_LAVA"); env && *env) return env;
  return (std::filesystem::path(NIGHTJAR_BINARY).parent_path() / "lava").string();
}

}  // namespace nightjar::test
