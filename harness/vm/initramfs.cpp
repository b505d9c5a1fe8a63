// The nightjar guest's initramfs and /init: see harness/vm/initramfs.h.
#include "harness/vm/initramfs.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "results/model/exit_codes.h"
#include "workloads/sys/process.h"

namespace nightjar {

namespace fs = std::filesystem;

namespace {

// Runs a helper tool (decompressor, cpio) to completion through the process
// toolkit: stdin from `in_file` (or /dev/null), stdout to `out_file` (or
// /dev/null), in `cwd`; its stderr is captured for the error message.
CommandResult run_tool(const std::vector<std::string>& argv, const std::string& in_file,
                       const std::string& out_file, const std::string& cwd = "") {
  CommandSpec spec;
  spec.argv = argv;
  spec.stdin_path = in_file;
  spec.stdout_path = out_file.empty() ? "/dev/null" : out_file;
  spec.cwd = cwd;
  CommandResult r = run_command(spec);
  if (r.interrupted) throw Interrupted();
  return r;
}

// Module name as modprobe compares them: basename without .ko[.xz|.zst|.gz], '-' -> '_'.
std::string module_name(const std::string& rel) {
  std::string base = fs::path(rel).filename().string();
  auto ko = base.find(".ko");
  if (ko != std::string::npos) base = base.substr(0, ko);
  std::replace(base.begin(), base.end(), '-', '_');
  return base;
}

void replace_all(std::string& text, const std::string& from, const std::string& to) {
  for (std::size_t p = 0; (p = text.find(from, p)) != std::string::npos; p += to.size())
    text.replace(p, from.size(), to);
}

// Copies a module into the staging tree, decompressing .xz/.zst/.gz with the
// tools when needed (busybox insmod wants a plain .ko). Returns the name used.
std::string stage_module(const std::string& modules_dir, const std::string& rel,
                         const fs::path& dest_dir) {
  fs::path src = fs::path(modules_dir) / rel;
  std::string base = src.filename().string();
  std::string plain = base.substr(0, base.find(".ko") + 3);
  fs::path dest = dest_dir / plain;
  auto ends = [&](const char* sfx) {
    return base.size() > std::strlen(sfx) &&
           base.compare(base.size() - std::strlen(sfx), std::string::npos, sfx) == 0;
  };
  if (ends(".ko")) {
    fs::copy_file(src, dest, fs::copy_options::overwrite_existing);
  } else {
    std::string tool = ends(".xz") ? "xz" : ends(".zst") ? "zstd" : "gzip";
    if (CommandResult r = run_tool({tool, "-dc", src.string()}, "", dest.string()); !r.ok())
      throw EnvironmentError(fmt::format("cannot decompress module {} with {} ({}); install {}",
                                         src.string(), tool, r.describe(),
                                         tool == "zstd" ? "zstd"
                                         : tool == "xz" ? "xz-utils"
                                                        : "gzip"));
  }
  return plain;
}

}  // namespace

std::string read_whole_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_whole_file(const std::string& path, const std::string& text, fs::perms mode) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) throw EnvironmentError("cannot write " + path + ": " + std::strerror(errno));
  if (mode != fs::perms::none) fs::permissions(path, mode);
}

// ---------------------------------------------------------------- images

KernelImage inspect_kernel_image(const std::string& path, const std::string& modules_flag) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw UsageError(
        fmt::format("--kernel {}: cannot read the kernel image: {}; give the path "
                    "of a bzImage such as /boot/vmlinuz-$(uname -r)",
                    path, std::strerror(errno)));
  std::string head(0x10000, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(in.gcount()));
  if (head.size() < 0x210 || head.compare(0x202, 4, "HdrS") != 0)
    throw UsageError(fmt::format(
        "--kernel {}: not a bzImage (no 'HdrS' setup header); give an x86 kernel image such "
        "as boot/vmlinuz-* of a linux-image package",
        path));
  KernelImage k;
  k.path = path;
  unsigned off = static_cast<unsigned char>(head[0x20E]) |
                 (static_cast<unsigned>(static_cast<unsigned char>(head[0x20F])) << 8);
  if (off != 0 && off + 0x200 < head.size()) {
    std::size_t b = off + 0x200;
    std::size_t e = head.find('\0', b);
    k.banner = head.substr(b, (e == std::string::npos ? head.size() : e) - b);
  }
  k.release = k.banner.substr(0, k.banner.find(' '));
  if (auto hash = k.banner.find(" #"); hash != std::string::npos)
    k.version = k.banner.substr(hash + 1);
  if (k.release.empty()) k.release = fs::path(path).filename().string();

  fs::path dir = fs::path(path).parent_path();
  if (dir.empty()) dir = ".";
  if (fs::exists(dir / ("config-" + k.release)))
    k.config = (dir / ("config-" + k.release)).string();

  std::vector<fs::path> candidates;
  if (!modules_flag.empty()) {
    fs::path m(modules_flag);
    candidates = {m / k.release, m / "lib/modules" / k.release, m};
  } else {
    candidates = {dir.parent_path() / "lib/modules" / k.release, dir / "lib/modules" / k.release};
  }
  for (const auto& c : candidates) {
    // modules.dep when depmod ran; modules.builtin in a `dpkg -x` tree.
    if (fs::exists(c / "modules.dep") || fs::exists(c / "modules.builtin")) {
      k.modules_dir = c.string();
      break;
    }
  }
  if (!modules_flag.empty() && k.modules_dir.empty())
    throw UsageError(fmt::format(
        "--modules {}: no modules.dep for kernel {} in it, in {}/{} or in {}/lib/modules/{}; "
        "give the lib/modules/<release> directory of that kernel",
        modules_flag, k.release, modules_flag, k.release, modules_flag, k.release));
  return k;
}

std::string find_guest_binary(const std::string& flag) {
  const std::string how =
      "build it with `cmake -S . -B build -DNIGHTJAR_STATIC=ON && cmake --build build --target "
      "nightjar-static` (or pass --guest-binary PATH)";
  if (!flag.empty()) {
    if (access(flag.c_str(), X_OK) != 0)
      throw UsageError(fmt::format("--guest-binary {}: not an executable file; {}", flag, how));
    return flag;
  }
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    fs::path next = self.parent_path() / "nightjar-static";
    if (access(next.c_str(), X_OK) == 0) return next.string();
  }
  if (const char* env = std::getenv("NIGHTJAR_STATIC_BINARY");
      env && *env && access(env, X_OK) == 0)
    return env;
  throw EnvironmentError("no statically linked nightjar for the guest (nightjar-static next to " +
                         (ec ? std::string("nightjar") : self.string()) +
                         ", or $NIGHTJAR_STATIC_BINARY); " + how);
}

std::vector<std::string> guest_modules(const std::string& modules_dir,
                                       const std::vector<std::string>& wanted) {
  std::vector<std::string> order;
  if (modules_dir.empty()) return order;
  std::set<std::string> builtin;
  {
    std::ifstream in(modules_dir + "/modules.builtin");
    std::string line;
    while (std::getline(in, line)) builtin.insert(module_name(line));
  }
  // name -> (path relative to modules_dir, dependency paths in modules.dep order)
  std::map<std::string, std::pair<std::string, std::vector<std::string>>> deps;
  if (std::ifstream in(modules_dir + "/modules.dep"); in) {
    std::string line;
    while (std::getline(in, line)) {
      auto colon = line.find(':');
      if (colon == std::string::npos) continue;
      std::string path = line.substr(0, colon);
      std::vector<std::string> d;
      std::stringstream rest(line.substr(colon + 1));
      std::string p;
      while (rest >> p) d.push_back(p);
      deps[module_name(path)] = {path, d};
    }
  } else {
    // No modules.dep (a `dpkg -x` tree: depmod runs at install time): index
    // the .ko files by name and read each one's "depends=" from its .modinfo.
    std::map<std::string, std::string> paths;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(modules_dir, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      std::string name = it->path().filename().string();
      if (it->is_regular_file() && name.find(".ko") != std::string::npos)
        paths[module_name(name)] = fs::relative(it->path(), modules_dir).string();
    }
    std::function<void(const std::string&)> add = [&](const std::string& name) {
      if (deps.count(name) || !paths.count(name)) return;
      deps[name] = {paths[name], {}};
      std::string bin = read_whole_file(modules_dir + "/" + paths[name]);
      std::vector<std::string> direct;
      for (std::size_t at = bin.find(std::string("\0depends=", 9)); at != std::string::npos;
           at = std::string::npos) {
        std::string list = bin.c_str() + at + 9;
        std::stringstream ss(list);
        std::string d;
        while (std::getline(ss, d, ','))
          if (!d.empty()) direct.push_back(module_name(d));
      }
      // Load order: each dependency after its own dependencies; stored
      // reversed, as modules.dep lists them (the last is loaded first).
      std::vector<std::string> load;
      for (const auto& d : direct) {
        add(d);
        auto dit = deps.find(d);
        if (dit == deps.end()) continue;
        std::vector<std::string> sub(dit->second.second.rbegin(), dit->second.second.rend());
        sub.push_back(dit->second.first);
        for (const auto& p : sub)
          if (std::find(load.begin(), load.end(), p) == load.end()) load.push_back(p);
      }
      deps[name].second.assign(load.rbegin(), load.rend());
    };
    for (const auto& w : wanted) add(module_name(w));
  }
  std::set<std::string> seen;
  for (const auto& w : wanted) {
    std::string name = module_name(w);
    if (builtin.count(name)) continue;
    auto it = deps.find(name);
    if (it == deps.end()) continue;
    // modules.dep lists dependencies so that the last must be loaded first.
    std::vector<std::string> chain(it->second.second.rbegin(), it->second.second.rend());
    chain.push_back(it->second.first);
    for (const auto& p : chain)
      if (seen.insert(p).second) order.push_back(p);
  }
  return order;
}

void check_static_busybox(const std::string& busybox) {
  std::string bb = read_whole_file(busybox);
  // busybox-static is a static ELF; the dynamic busybox would need libc in the guest.
  if (bb.empty() || bb.find("/lib64/ld-linux") != std::string::npos)
    throw EnvironmentError(busybox +
                           " is missing or dynamically linked; apt-get install busybox-static");
}

// ---------------------------------------------------------------- initramfs

std::string guest_init_script(const GuestInit& init) {
  std::string script = R"SH(#!/bin/busybox sh
# nightjar guest init (harness/vm/initramfs.cpp): mounts, loads modules, brings
# up lo and cgroup2; then the tail written by @SOURCE@.
/bin/busybox mkdir -p /bin /sbin /usr/bin /usr/sbin /proc /sys /dev /tmp /run
/bin/busybox --install -s
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null || mdev -s
# Files the initramfs put under /tmp (a checkout under /tmp puts nightjar
# there: --vm-file keeps host paths) move into the tmpfs, not under it.
mv /tmp /.initramfs-tmp && mkdir /tmp
mount -t tmpfs -o size=50% tmpfs /tmp
cp -a /.initramfs-tmp/. /tmp/ && rm -rf /.initramfs-tmp
mount -t tmpfs -o mode=0755 tmpfs /run
hostname "@HOSTNAME@"
echo "nightjar-guest: init started, uptime $(cut -d' ' -f1 /proc/uptime) s, kernel $(uname -r)"
if [ -f /nightjar/modules.order ]; then
  while read -r m; do
    insmod "/nightjar/modules/$m" 2>/dev/null || echo "nightjar-guest: insmod $m failed"
  done < /nightjar/modules.order
fi
# Loopback for tcp_sendfile: lo up gives 127.0.0.1/8 and ::1 on a default
# kernel; the addresses are added explicitly in case it did not.
ip link set lo up
ip addr add 127.0.0.1/8 dev lo 2>/dev/null
ip -6 addr add ::1/128 dev lo 2>/dev/null
echo "nightjar-guest: lo $(ip -o addr show dev lo | awk '{print $4}' | tr '\n' ' ')"
# cgroup v2 with the mount options of the run (@CGOPTS@). nightjar owns this
# guest, so here, and only here, the memory controller is enabled in the
# root's subtree_control for the workloads' memcgs (on a host nightjar never
# changes a cgroup it did not create: workloads/sys/cgroup.cpp).
mount -t cgroup2 -o "@CGOPTS@" cgroup2 /sys/fs/cgroup 2>/dev/null ||
  mount -t cgroup2 cgroup2 /sys/fs/cgroup ||
  echo "nightjar-guest: cannot mount cgroup2"
echo +memory > /sys/fs/cgroup/cgroup.subtree_control ||
  echo "nightjar-guest: cannot enable +memory in /sys/fs/cgroup/cgroup.subtree_control"
echo "nightjar-guest: cgroup2 $(grep cgroup2 /proc/mounts | cut -d' ' -f4), subtree_control: $(cat /sys/fs/cgroup/cgroup.subtree_control)"
)SH";
  replace_all(script, "@SOURCE@", init.tail_source.empty() ? "its caller" : init.tail_source);
  replace_all(script, "@HOSTNAME@", init.hostname);
  // "" mounts with the kernel's defaults ("-o" with an empty list is refused).
  replace_all(script, "@CGOPTS@", init.cgroup2_options.empty() ? "defaults" : init.cgroup2_options);
  return script + init.tail;
}

std::string guest_job_path(std::size_t index, const std::string& host_path) {
  return fmt::format("/nightjar/jobs/{}/{}", index, fs::path(host_path).filename().string());
}

void build_initramfs(const fs::path& staging, const std::string& out, const KernelImage& k,
                     const InitramfsContent& c) {
  fs::create_directories(staging / "bin");
  fs::create_directories(staging / "nightjar/modules");
  fs::create_directories(staging / "boot");
  fs::copy_file(c.busybox, staging / "bin/busybox", fs::copy_options::overwrite_existing);
  fs::permissions(staging / "bin/busybox", fs::perms(0755));
  fs::copy_file(c.guest_binary, staging / "nightjar/nightjar",
                fs::copy_options::overwrite_existing);
  fs::permissions(staging / "nightjar/nightjar", fs::perms(0755));
  for (std::size_t i = 0; i < c.job_paths.size(); ++i) {
    const fs::path to = staging / fs::path(guest_job_path(i, c.job_paths[i])).relative_path();
    fs::create_directories(to.parent_path());
    fs::copy_file(c.job_paths[i], to, fs::copy_options::overwrite_existing);
  }
  if (!c.spec_json.empty())
    write_whole_file((staging / "nightjar/spec.json").string(), c.spec_json);
  for (const auto& [src, dest] : c.extra_files) {
    const fs::path to = staging / fs::path(dest).relative_path();
    fs::create_directories(to.parent_path());
    fs::copy(src, to, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
  }
  if (!k.config.empty())
    fs::copy_file(k.config, staging / "boot" / ("config-" + k.release),
                  fs::copy_options::overwrite_existing);
  std::string order;
  for (const auto& rel : guest_modules(k.modules_dir, {"virtio_pci", "virtio_console", "zram"}))
    order += stage_module(k.modules_dir, rel, staging / "nightjar/modules") + "\n";
  if (!order.empty()) write_whole_file((staging / "nightjar/modules.order").string(), order);
  write_whole_file((staging / "init").string(), c.init, fs::perms(0755));

  // The archive: `cpio -o -H newc` (the format the kernel unpacks), every file
  // owned by root, names NUL-separated from a list written here.
  std::string list;
  std::vector<std::string> names;
  for (const auto& e : fs::recursive_directory_iterator(staging))
    names.push_back(fs::relative(e.path(), staging).string());
  std::sort(names.begin(), names.end());
  for (const auto& n : names) list += n + '\0';
  std::string list_file = (staging.parent_path() / "initramfs.list").string();
  write_whole_file(list_file, list);
  CommandResult r = run_tool({"cpio", "--null", "--quiet", "-o", "-H", "newc", "-R", "0:0"},
                             list_file, out, staging.string());
  if (!r.ok())
    throw EnvironmentError(fmt::format(
        "building the initramfs with cpio failed ({}){}", r.describe(),
        r.started ? (r.err.empty() ? "" : ": " + output_tail(r.err, 3))
                  : "; install cpio (apt-get install cpio, or run ci/fetch-kernels.sh)"));
}

}  // namespace nightjar
