// tmpfs mounts owned by nightjar.
#include "workloads/sys/tmpfs.h"

#include <sys/mount.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "results/model/exit_codes.h"
#include "results/model/text.h"
#include "workloads/sys/fs.h"
#include "workloads/sys/probe.h"

namespace nightjar {
namespace {

void teardown_warning(const std::string& text) {
  std::fprintf(stderr, "nightjar: teardown: %s\n", text.c_str());
}

/// Six random letters and digits (from getrandom(2), else the clock).
std::string random_suffix() {
  static constexpr char kChars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  unsigned char bytes[6] = {};
  if (::getrandom(bytes, sizeof bytes, 0) != static_cast<ssize_t>(sizeof bytes)) {
    auto t = std::chrono::steady_clock::now().time_since_epoch().count();
    for (auto& b : bytes) b = static_cast<unsigned char>(t >>= 5);
  }
  std::string out;
  for (unsigned char b : bytes) out += kChars[b % (sizeof kChars - 1)];
  return out;
}

std::string sanitize(const std::string& tag) {
  std::string out = tag;
  for (char& c : out)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_')) c = '_';
  return out;
}

}  // namespace

TmpfsMount::TmpfsMount(std::uint64_t size_bytes, const std::string& tag, const std::string& options,
                       const std::string& parent, const std::string& fstype) {
  const std::string t = sanitize(tag);
  std::string dir = parent;
  if (dir.empty()) {
    struct stat st {};
    dir = ::stat("/run", &st) == 0 && S_ISDIR(st.st_mode) ? "/run" : "/tmp";
  }
  // mkdtemp(3) names the directory only once it exists; the journal needs
  // the name before: a random name, made with mkdir (EEXIST: another one).
  const std::string stem = dir + "/nightjar-" + std::to_string(::getpid()) + "-" + t + "-";
  for (int attempt = 0; path_.empty(); ++attempt) {
    const std::string candidate = stem + random_suffix();
    const std::uint64_t id = Journal::process().record(JournalKind::mount_point, {candidate});
    if (::mkdir(candidate.c_str(), 0700) == 0) {
      path_ = candidate;
      dir_journal_ = id;
      break;
    }
    const int err = errno;
    Journal::process().done(id);
    if (err != EEXIST || attempt >= 16)
      throw EnvironmentError("cannot create a mount point " + candidate + ": " + errno_text(err));
  }
  source_ = "nightjar-" + t;
  const std::string base = "size=" + std::to_string(size_bytes) + ",mode=0700";
  options_ = options.empty() ? base : base + "," + options;
  try {
    mount_journal_ = Journal::process().record(JournalKind::mount, {path_, source_, fstype});
  } catch (...) {
    ::rmdir(path_.c_str());
    Journal::process().done(dir_journal_);
    throw;
  }
  int rc = ::mount(source_.c_str(), path_.c_str(), fstype.c_str(), MS_NOSUID | MS_NODEV,
                   options_.c_str());
  int err = rc != 0 ? errno : 0;
  if (rc != 0 && err == EINVAL && !options.empty()) {
    // A kernel that does not know one of `options` (e.g. huge= without THP
    // support on an old kernel): mount with size and mode only.
    options_ = base;
    rc = ::mount(source_.c_str(), path_.c_str(), fstype.c_str(), MS_NOSUID | MS_NODEV,
                 options_.c_str());
    err = rc != 0 ? errno : 0;
  }
  if (rc != 0) {
    Journal::process().done(mount_journal_);
    if (::rmdir(path_.c_str()) == 0) Journal::process().done(dir_journal_);
    throw EnvironmentError("cannot mount a " + fstype + " (" + options_ + ") on " + path_ + ": " +
                           errno_text(err) + (err == EPERM ? "; run nightjar as root" : ""));
  }
  mounted_ = true;
}

std::string unmount_retrying(const std::string& path) noexcept {
  try {
    int err = 0;
    for (int i = 0; i < 50; ++i) {
      if (::umount2(path.c_str(), 0) == 0) return "";
      err = errno;
      if (err != EBUSY && err != EINTR) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (err == EBUSY && ::umount2(path.c_str(), MNT_DETACH) == 0) {
      teardown_warning(path +
                       " was busy (a process still uses it); detached it lazily: its "
                       "memory is freed when that process closes its files");
      return "";
    }
    return "cannot unmount " + path + " (" + errno_text(err) + "); run `umount " + path +
           " && rmdir " + path + "`";
  } catch (...) {
    return "cannot unmount " + path;
  }
}

TmpfsMount::~TmpfsMount() {
  if (path_.empty()) return;
  if (mounted_) {
    if (std::string problem = unmount_retrying(path_); !problem.empty()) {
      teardown_warning(problem);
      return;
    }
    mounted_ = false;
    Journal::process().done(mount_journal_);
  }
  if (::rmdir(path_.c_str()) != 0 && errno != ENOENT)
    teardown_warning("cannot remove " + path_ + " (" + errno_text(errno) + "); run `rmdir " +
                     path_ + "`");
  else
    Journal::process().done(dir_journal_);
}

UndoResult undo_journaled_mount(const JournalEntry& entry) {
  using State = UndoResult::State;
  const std::string& path = entry.field(0);
  const std::string& source = entry.field(1);
  const std::string fstype = entry.field(2).empty() ? "tmpfs" : entry.field(2);
  const MountEntry* top = nullptr;
  const auto mounts = parse_mountinfo(read_small_file("/proc/self/mountinfo").value_or(""));
  for (const auto& m : mounts)
    if (m.mount_point == path) top = &m;  // the last one is on top
  if (!top) return {State::absent, ""};
  if (top->fstype != fstype || top->source != source)
    return {State::declined, fmt::format("{} has a {} of '{}' mounted, not nightjar's {} '{}'; "
                                         "left alone",
                                         path, top->fstype, top->source, fstype, source)};
  if (std::string problem = unmount_retrying(path); !problem.empty()) return {State::left, problem};
  return {State::undone, "unmounted " + fstype + " " + path};
}

UndoResult undo_journaled_mount_point(const JournalEntry& entry) {
  using State = UndoResult::State;
  const std::string& path = entry.field(0);
  if (::rmdir(path.c_str()) == 0) return {State::undone, "removed directory " + path};
  const int err = errno;
  if (err == ENOENT) return {State::absent, ""};
  return {State::left, "cannot remove " + path + " (" + errno_text(err) + ")" +
                           (err == ENOTEMPTY ? "; it holds files: look, then `rm -r " + path + "`"
                                             : std::string())};
}

}  // namespace nightjar
