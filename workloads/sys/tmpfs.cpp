// tmpfs mounts owned by nightjar.
#include "workloads/sys/tmpfs.h"

#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include "results/model/exit_codes.h"
#include "results/model/text.h"

namespace nightjar {
namespace {

void teardown_warning(const std::string& text) {
  std::fprintf(stderr, "nightjar: teardown: %s\n", text.c_str());
}

std::string sanitize(const std::string& tag) {
  std::string out = tag;
  for (char& c : out)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_')) c = '_';
  return out;
}

}  // namespace

TmpfsMount::TmpfsMount(std::uint64_t size_bytes, const std::string& tag, const std::string& options,
                       const std::string& parent) {
  const std::string t = sanitize(tag);
  std::string dir = parent;
  if (dir.empty()) {
    struct stat st {};
    dir = ::stat("/run", &st) == 0 && S_ISDIR(st.st_mode) ? "/run" : "/tmp";
  }
  std::string templ = dir + "/nightjar-" + std::to_string(::getpid()) + "-" + t + "-XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (!::mkdtemp(buf.data()))
    throw EnvironmentError("cannot create a mount point " + templ + ": " + errno_text(errno));
  path_ = buf.data();
  source_ = "nightjar-" + t;
  const std::string base = "size=" + std::to_string(size_bytes) + ",mode=0700";
  options_ = options.empty() ? base : base + "," + options;
  int rc = ::mount(source_.c_str(), path_.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, options_.c_str());
  int err = rc != 0 ? errno : 0;
  if (rc != 0 && err == EINVAL && !options.empty()) {
    // A kernel that does not know one of `options` (e.g. huge= without THP
    // support on an old kernel): mount with size and mode only.
    options_ = base;
    rc = ::mount(source_.c_str(), path_.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, options_.c_str());
    err = rc != 0 ? errno : 0;
  }
  if (rc != 0) {
    ::rmdir(path_.c_str());
    throw EnvironmentError("cannot mount a tmpfs (" + options_ + ") on " + path_ + ": " +
                           errno_text(err) + (err == EPERM ? "; run nightjar as root" : ""));
  }
  mounted_ = true;
}

TmpfsMount::~TmpfsMount() {
  if (path_.empty()) return;
  if (mounted_) {
    int err = 0;
    for (int i = 0; i < 50; ++i) {
      if (::umount2(path_.c_str(), 0) == 0) {
        err = 0;
        break;
      }
      err = errno;
      if (err != EBUSY && err != EINTR) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (err == EBUSY && ::umount2(path_.c_str(), MNT_DETACH) == 0) {
      teardown_warning(path_ +
                       " was busy (a process still uses it); detached it lazily: its "
                       "memory is freed when that process closes its files");
      err = 0;
    }
    if (err) {
      teardown_warning("cannot unmount " + path_ + " (" + errno_text(err) + "); run `umount " +
                       path_ + " && rmdir " + path_ + "`");
      return;
    }
    mounted_ = false;
  }
  if (::rmdir(path_.c_str()) != 0 && errno != ENOENT)
    teardown_warning("cannot remove " + path_ + " (" + errno_text(errno) + "); run `rmdir " +
                     path_ + "`");
}

}  // namespace nightjar
