// The sweep of ended owners' journals (workloads/sys/sweep.h): which journal
// files belong to ended owners, the order of the undo steps, and marking
// each step done. The undo of each kind lives with the code that creates
// the object (undo_journaled_* of process.h, cgroup.h, zram.h, tmpfs.h,
// knobs.h).
#include "workloads/sys/sweep.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include <fmt/format.h>

#include "results/model/text.h"
#include "workloads/sys/cgroup.h"
#include "workloads/sys/knobs.h"
#include "workloads/sys/process.h"
#include "workloads/sys/tmpfs.h"
#include "workloads/sys/zram.h"

namespace nightjar {
namespace {

/// The whole file behind `fd`, read from its start.
std::string read_all(int fd) {
  std::string out;
  char buf[8192];
  off_t at = 0;
  for (;;) {
    const ssize_t n = ::pread(fd, buf, sizeof buf, at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
    at += n;
  }
  return out;
}

/// A journal file opened and, when it could be, locked.
struct OpenJournal {
  int fd = -1;
  bool locked = false;
  ~OpenJournal() {
    if (fd >= 0) ::close(fd);
  }
};

bool same_file(int fd, const std::string& path) {
  struct stat a {
  }, b{};
  return ::fstat(fd, &a) == 0 && ::stat(path.c_str(), &b) == 0 && a.st_dev == b.st_dev &&
         a.st_ino == b.st_ino;
}

/// Removes a temporary journal (".PID-START.tmp") whose owner ended before
/// it was renamed into place: it records no object.
void remove_stale_temporary(const std::string& dir, const std::string& name, bool list_only) {
  const std::string path = dir + "/" + name;
  const std::vector<std::string> parts = split(name.substr(1, name.size() - 5), '-');
  if (list_only || parts.size() != 2) return;
  ProcessIdentity who{static_cast<pid_t>(std::atol(parts[0].c_str())),
                      std::strtoull(parts[1].c_str(), nullptr, 10), current_boot_id()};
  OpenJournal j;
  j.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (j.fd < 0 || ::flock(j.fd, LOCK_EX | LOCK_NB) != 0) return;
  if (!identity_alive(who) && same_file(j.fd, path)) ::unlink(path.c_str());
}

/// Undoes one entry with the function of its kind.
UndoResult undo_entry(const JournalEntry& e, const SweepOptions& o) {
  switch (e.kind) {
    case JournalKind::process:
    case JournalKind::process_group:
      return undo_journaled_process(e);
    case JournalKind::cgroup:
      return undo_journaled_cgroup(e);
    case JournalKind::zram:
      return undo_journaled_zram(e);
    case JournalKind::swap:
      return undo_journaled_swap(e);
    case JournalKind::mount_point:
      return undo_journaled_mount_point(e);
    case JournalKind::mount:
      return undo_journaled_mount(e);
    case JournalKind::knob:
      return undo_journaled_knob(e, !o.knob_lock_held.empty() && e.field(3) == o.knob_lock_held);
  }
  return {UndoResult::State::left, "unknown kind"};
}

/// The entries to undo now, in order: processes, then the rest last first.
std::vector<const JournalEntry*> undo_order(const OwnerJournal& j, const SweepOptions& o) {
  std::vector<const JournalEntry*> open = j.open();
  std::reverse(open.begin(), open.end());
  std::stable_partition(open.begin(), open.end(), [](const JournalEntry* e) {
    return e->kind == JournalKind::process || e->kind == JournalKind::process_group;
  });
  if (o.knobs_only)
    open.erase(
        std::remove_if(open.begin(), open.end(),
                       [&](const JournalEntry* e) {
                         return e->kind != JournalKind::knob ||
                                (!o.knob_lock_held.empty() && e->field(3) != o.knob_lock_held);
                       }),
        open.end());
  return open;
}

/// Appends "object `id` done" to an ended owner's journal.
void mark_done(int fd, std::uint64_t id) {
  const std::string line = journal_done_line(id);
  ssize_t n;
  do {
    n = ::write(fd, line.data(), line.size());
  } while (n < 0 && errno == EINTR);
  ::fdatasync(fd);
}

/// Undoes the open objects of the ended owner `j`, whose file is locked as `fd`.
void sweep_owner(const OwnerJournal& j, int fd, const SweepOptions& o, OwnerSweep& out) {
  std::size_t finished = 0;
  const std::vector<const JournalEntry*> todo = undo_order(j, o);
  for (const JournalEntry* e : todo) {
    const UndoResult r = undo_entry(*e, o);
    switch (r.state) {
      case UndoResult::State::undone:
        out.undone.push_back(r.text);
        break;
      case UndoResult::State::declined:
        out.declined.push_back(r.text);
        break;
      case UndoResult::State::left:
        out.left.push_back(r.text);
        continue;  // stays open
      case UndoResult::State::absent:
        break;
    }
    mark_done(fd, e->id);
    ++finished;
  }
  if (finished == j.open().size()) ::unlink(j.path.c_str());  // under the lock
}

/// Looks at one journal file: lists or sweeps it as `o` says.
void visit(const std::string& path, const SweepOptions& o, SweepReport& report) {
  OpenJournal f;
  f.fd = ::open(path.c_str(), (o.list_only ? O_RDONLY : O_RDWR | O_APPEND) | O_CLOEXEC);
  if (f.fd < 0 && errno == EACCES) f.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (f.fd < 0) {
    if (errno != ENOENT) report.errors.push_back(path + ": " + errno_text(errno));
    return;
  }
  f.locked = ::flock(f.fd, LOCK_EX | LOCK_NB) == 0;
  if (f.locked && !same_file(f.fd, path)) return;  // removed or replaced meanwhile
  auto j = parse_journal(read_all(f.fd), path);
  if (!j) {
    report.errors.push_back(path + ": not a nightjar journal (left alone)");
    return;
  }
  OwnerSweep out;
  out.path = path;
  out.owner = j->owner;
  out.command = j->command;
  out.ended = f.locked && !identity_alive(j->owner);
  if (!out.ended || o.list_only) {
    for (const JournalEntry* e : j->open()) out.open.push_back(e->describe());
    if (!out.open.empty()) report.owners.push_back(std::move(out));
    return;
  }
  if (j->open().empty()) {
    ::unlink(path.c_str());
    return;
  }
  sweep_owner(*j, f.fd, o, out);
  if (!out.undone.empty() || !out.declined.empty() || !out.left.empty())
    report.owners.push_back(std::move(out));
}

}  // namespace

std::size_t SweepReport::undone_count() const {
  std::size_t n = 0;
  for (const auto& o : owners) n += o.undone.size();
  return n;
}

std::size_t SweepReport::leftover_count() const {
  std::size_t n = 0;
  for (const auto& o : owners)
    if (o.ended) n += o.left.size() + o.open.size();
  return n;
}

std::size_t SweepReport::live_count() const {
  std::size_t n = 0;
  for (const auto& o : owners)
    if (!o.ended) n += o.open.size();
  return n;
}

std::vector<std::string> SweepReport::lines() const {
  std::vector<std::string> out;
  for (const auto& o : owners) {
    if (!o.ended) continue;
    const std::string who = fmt::format("nightjar pid {} ({})", o.owner.pid, o.command);
    for (const auto& t : o.undone)
      out.push_back(fmt::format("cleanup: {} ended without cleaning up: {}", who, t));
    for (const auto& t : o.declined) out.push_back("cleanup: left alone: " + t);
    for (const auto& t : o.left) out.push_back("cleanup: could not undo: " + t);
    for (const auto& t : o.open)
      out.push_back(fmt::format("cleanup: {} ended and left {}", who, t));
  }
  for (const auto& e : errors) out.push_back("cleanup: " + e);
  return out;
}

SweepReport sweep_journals(const SweepOptions& options) {
  SweepReport report;
  report.dir = options.dir;
  std::vector<std::string> names;
  if (DIR* d = ::opendir(options.dir.c_str())) {
    while (dirent* e = ::readdir(d)) names.emplace_back(e->d_name);
    ::closedir(d);
  }
  std::sort(names.begin(), names.end());
  auto ends_with = [](const std::string& s, std::string_view tail) {
    return s.size() > tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
  };
  for (const auto& name : names) {
    if (name.front() == '.' && ends_with(name, ".tmp")) {
      if (!options.knobs_only) remove_stale_temporary(options.dir, name, options.list_only);
      continue;
    }
    if (name.front() != '.' && ends_with(name, ".journal"))
      visit(options.dir + "/" + name, options, report);
  }
  return report;
}

}  // namespace nightjar
