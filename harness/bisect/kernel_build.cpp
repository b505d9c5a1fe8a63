// Kernel builds of `nightjar bisect run --kernel-build`: see
// harness/bisect/kernel_build.h.
#include "harness/bisect/kernel_build.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/vm/initramfs.h"
#include "results/model/exit_codes.h"
#include "results/model/identity.h"

namespace nightjar {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// `path` made absolute; UsageError naming `option` when it is not a readable file.
std::string readable_file(const std::string& option, const std::string& path) {
  std::error_code ec;
  const std::string abs = fs::absolute(path, ec).lexically_normal().string();
  if (!fs::is_regular_file(abs, ec) || ::access(abs.c_str(), R_OK) != 0)
    throw UsageError(fmt::format("{} {}: not a readable file; write {} PATH of a kernel config{}",
                                 option, path, option,
                                 option == "--config-fragment" ? " fragment" : ""));
  return abs;
}

// The file's text; EnvironmentError naming it when it cannot be read.
std::string file_text(const std::string& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec))
    throw EnvironmentError(
        fmt::format("kernel config {}: cannot be read (was it removed since "
                    "the session started?)",
                    path));
  return read_whole_file(path);
}

}  // namespace

void check_kernel_build_options(KernelBuildOptions& o, const std::string& build_command) {
  if (!o.enabled) {
    if (!o.config.empty() || !o.defconfig.empty() || !o.fragments.empty() || !o.dir.empty())
      throw UsageError(
          "--kernel-config, --defconfig, --config-fragment and --kernel-dir describe kernel "
          "builds: add --kernel-build");
    if (o.vm_hugepages)
      throw UsageError("--vm-hugepages backs the guests of --kernel-build: add --kernel-build");
    if (!o.pair_good)
      throw UsageError(
          "--no-pair-good: only with --kernel-build (commits of a work tree are measured once "
          "each; re-measuring the good endpoint there would rebuild it at every step)");
    return;
  }
  if (!build_command.empty())
    throw UsageError(
        "--build and --kernel-build: --kernel-build builds the kernel itself; leave out --build");
  if (o.config.empty() == o.defconfig.empty())
    throw UsageError(
        "--kernel-build needs one config: --kernel-config FILE (a full .config) or --defconfig "
        "TARGET [--config-fragment FILE...] (e.g. --defconfig tinyconfig --config-fragment "
        "ci/kernel/nightjar-guest.config)");
  if (!o.config.empty() && !o.fragments.empty())
    throw UsageError(
        "--config-fragment goes with --defconfig: a --kernel-config is used as it is; merge "
        "fragments into it yourself or use --defconfig");
  if (!o.defconfig.empty() && o.defconfig.find_first_of("/ \t") != std::string::npos)
    throw UsageError(fmt::format(
        "--defconfig {}: a make target such as tinyconfig or x86_64_defconfig; for a file write "
        "--kernel-config FILE",
        o.defconfig));
  if (!o.config.empty()) o.config = readable_file("--kernel-config", o.config);
  for (auto& f : o.fragments) f = readable_file("--config-fragment", f);
  if (!o.dir.empty()) {
    std::error_code ec;
    o.dir = fs::absolute(o.dir, ec).lexically_normal().string();
  }
}

std::string config_recipe(const KernelBuildOptions& o) {
  if (!o.config.empty()) return "config\n" + file_text(o.config);
  std::string r = "defconfig " + o.defconfig + "\n";
  for (const auto& f : o.fragments)
    r += "fragment " + fs::path(f).filename().string() + "\n" + file_text(f);
  return r;
}

std::string config_key(const KernelBuildOptions& o) {
  return fnv1a64_hex(config_recipe(o));
}

std::string kernel_dir(const KernelBuildOptions& o, const std::string& repo_top,
                       const std::string& key) {
  if (!o.dir.empty()) return o.dir;
  std::string cache;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x)
    cache = x;
  else if (const char* h = std::getenv("HOME"); h && *h)
    cache = std::string(h) + "/.cache";
  else
    cache = "/tmp";
  return fmt::format("{}/nightjar/kernel-bisect/{}-{}", cache, fnv1a64_hex(repo_top).substr(0, 8),
                     key);
}

std::string image_dir(const std::string& dir, const std::string& sha, const std::string& key) {
  return fmt::format("{}/images/{}-{}", dir, sha, key);
}

std::map<std::string, std::string> built_kernel_context(const BuiltKernel& k) {
  return {{"kbuild.commit", k.commit},
          {"kbuild.release", k.release},
          {"kbuild.config_hash", k.config_hash},
          {"kbuild.config_key", k.config_key},
          {"kbuild.build_seconds", fmt::format("{:.1f}", k.build_seconds)}};
}

std::string kernel_identity_json(const BuiltKernel& k) {
  return json{{"commit", k.commit},
              {"release", k.release},
              {"config_key", k.config_key},
              {"config_hash", k.config_hash},
              {"build_seconds", k.build_seconds}}
      .dump();
}

std::optional<BuiltKernel> read_cached_image(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_regular_file(dir + "/bzImage", ec)) return std::nullopt;
  const json j = json::parse(read_whole_file(dir + "/kernel.json"), nullptr, false);
  if (!j.is_object() || !j.contains("commit") || !j.contains("release")) return std::nullopt;
  BuiltKernel k;
  k.commit = j.value("commit", "");
  k.release = j.value("release", "");
  k.config_key = j.value("config_key", "");
  k.config_hash = j.value("config_hash", "");
  k.build_seconds = j.value("build_seconds", 0.0);
  if (k.commit.empty() || k.release.empty()) return std::nullopt;
  return k;
}

std::vector<std::string> make_argv(const std::string& out, const std::vector<std::string>& targets,
                                   int jobs, bool ccache) {
  std::vector<std::string> argv = {"make", "O=" + out};
  if (jobs > 0) argv.push_back("-j" + std::to_string(jobs));
  if (ccache) argv.push_back("CC=ccache gcc");
  argv.insert(argv.end(), targets.begin(), targets.end());
  return argv;
}

std::vector<std::string> merge_config_argv(const std::string& out,
                                           const std::vector<std::string>& fragments) {
  std::vector<std::string> argv = {"scripts/kconfig/merge_config.sh", "-m", "-O", out,
                                   out + "/.config"};
  argv.insert(argv.end(), fragments.begin(), fragments.end());
  return argv;
}

}  // namespace nightjar
