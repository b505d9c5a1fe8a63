// Runtime knobs: checking knob paths and the RAII KnobSet that writes
// sysfs/procfs/sysctl knobs and restores them (workloads/sys/knobs.h).
#include "workloads/sys/knobs.h"
#include "workloads/sys/fs.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <iostream>
#include <string_view>
#include <thread>

#include <fmt/format.h>

#include "results/model/exit_codes.h"
#include "workloads/sys/probe.h"
#include "workloads/sys/signals.h"
#include "workloads/sys/sweep.h"

namespace nightjar {
namespace {

std::string example_for(const std::string& kind) {
  if (kind == "sysfs") return "`sysfs: {/sys/kernel/mm/transparent_hugepage/enabled: never}`";
  if (kind == "procfs") return "`procfs: {/proc/sys/vm/swappiness: 10}`";
  return "`sysctl: {vm.swappiness: 10}`";
}

std::string real_path(const std::string& path) {
  char buf[PATH_MAX];
  if (::realpath(path.c_str(), buf) == nullptr) return {};
  return buf;
}

bool is_below(const std::string& path, const std::string& root) {
  if (root.empty()) return false;
  return path.size() > root.size() && path.compare(0, root.size(), root) == 0 &&
         path[root.size()] == '/';
}

// The real path of knob `path` below `prefix`: "" when the file does not
// exist; throws UsageError (prefixed by `where`) when it resolves outside
// prefix/sys and prefix/proc or is not a normalised path.
std::string resolve_target(const std::string& prefix, const std::string& path,
                           const std::string& where) {
  std::string problem;
  if (normalise_knob_path(is_below(path, "/sys") ? "sysfs" : "procfs", path, problem) != path)
    throw UsageError(
        fmt::format("{}knob {}: {}", where, path,
                    problem.empty() ? "not a normalised path below /sys or /proc" : problem));
  std::string real = real_path(prefix + path);
  if (real.empty()) return {};
  const std::string sys_root = real_path(prefix + "/sys");
  const std::string proc_root = real_path(prefix + "/proc");
  if (!is_below(real, sys_root) && !is_below(real, proc_root))
    throw UsageError(fmt::format(
        "{}knob {} resolves to {}, outside /sys and /proc; nightjar writes knobs only below "
        "/sys and /proc, name the file itself",
        where, path,
        prefix.empty() || real.compare(0, prefix.size(), prefix) != 0
            ? real
            : real.substr(prefix.size())));
  return real;
}

/// Opens and takes the knob lock `path` without waiting: the descriptor, or
/// -1 (busy, or it cannot be opened: then `*busy` says which).
int try_lock(const std::string& path, bool* busy) {
  *busy = false;
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return -1;
  if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return fd;
  *busy = errno == EWOULDBLOCK;
  ::close(fd);
  return -1;
}

}  // namespace

// The lock serialises knob changes between nightjar processes, so that two
// runs cannot save each other's values as "previous" and restore the wrong one.
std::string knob_lock_path(const std::string& prefix) {
  return system_lock_path(prefix, "knobs");
}

UndoResult undo_journaled_knob(const JournalEntry& entry, bool lock_held) {
  using State = UndoResult::State;
  const std::string& path = entry.field(0);
  const std::string& previous = entry.field(1);
  const std::string& written = entry.field(2);
  const std::string& shown = entry.field(4).empty() ? path : entry.field(4);
  int fd = -1;
  if (!lock_held && !entry.field(3).empty()) {
    bool busy = false;
    fd = try_lock(entry.field(3), &busy);
    if (fd < 0 && busy)
      return {State::left, fmt::format("knob {} not restored yet: another nightjar holds the knob "
                                       "lock {} (it restores it when it takes the lock; else run "
                                       "`nightjar cleanup` once it ended)",
                                       shown, entry.field(3))};
  }
  struct Unlock {
    int fd;
    ~Unlock() {
      if (fd >= 0) ::close(fd);
    }
  } unlock{fd};
  int err = 0;
  auto now = read_small_file(path, &err);
  if (!now) {
    if (err == ENOENT) return {State::absent, ""};
    return {State::left, fmt::format("cannot read knob {}: {}", shown, std::strerror(err))};
  }
  const std::string current = knob_reading(*now);
  if (current != knob_reading(written))
    return {State::declined,
            fmt::format("knob {} holds '{}', not the '{}' nightjar wrote: something changed it "
                        "since; left as it is (before nightjar it was '{}')",
                        shown, current, knob_reading(written), previous)};
  if (int e = write_attribute(path, previous + "\n"))
    return {State::left,
            fmt::format("cannot restore knob {} to '{}': {}", shown, previous, std::strerror(e))};
  return {State::undone, fmt::format("restored knob {} to '{}' (the killed run had written '{}')",
                                     shown, previous, current)};
}

std::string knob_example(const std::string& kind) {
  return example_for(kind);
}

void check_knob_targets(const std::vector<Knob>& knobs,
                        const std::function<std::string(const Knob&)>& where,
                        const std::string& fs_prefix) {
  for (const auto& k : knobs) resolve_target(fs_prefix, k.path, where(k));
}

std::string normalise_knob_path(const std::string& kind, const std::string& written,
                                std::string& problem) {
  std::string path = written;
  if (kind == "sysctl" && !path.empty() && path.front() != '/') {
    // vm.swappiness -> /proc/sys/vm/swappiness; each dotted component must be
    // a plain name (an interface name with a dot needs the /proc/sys/... form).
    bool plain = path.front() != '.' && path.back() != '.' &&
                 path.find("..") == std::string::npos &&
                 std::all_of(path.begin(), path.end(), [](char c) {
                   return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                          (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
                 });
    if (!plain) {
      problem = fmt::format(
          "'{}' is not a sysctl name; write a dotted name such as vm.swappiness or a path below "
          "/proc/sys/ such as /proc/sys/net/ipv4/conf/eth0.1/rp_filter",
          written);
      return {};
    }
    for (char& c : path)
      if (c == '.') c = '/';
    path = "/proc/sys/" + path;
  }
  if (path.empty() || path.front() != '/') {
    problem = fmt::format("'{}' is not an absolute path; write {}", written, example_for(kind));
    return {};
  }
  // Split into components, refusing "." and ".." so the path says what it means.
  std::string out;
  std::size_t i = 0;
  while (i < path.size()) {
    while (i < path.size() && path[i] == '/') ++i;
    std::size_t b = i;
    while (i < path.size() && path[i] != '/') ++i;
    if (i == b) break;
    std::string_view comp(path.data() + b, i - b);
    if (comp == "." || comp == "..") {
      problem = fmt::format("'{}' contains '{}'; write the path without . or .. components",
                            written, comp);
      return {};
    }
    out += '/';
    out += comp;
  }
  const char* root = kind == "sysfs" ? "/sys" : kind == "procfs" ? "/proc" : "/proc/sys";
  if (!is_below(out, root)) {
    bool outside =
        !is_below(out, "/sys") && !is_below(out, "/proc") && out != "/sys" && out != "/proc";
    problem = fmt::format(
        "'{}' is {}; {} knobs are files below {}/ (nightjar writes nothing outside /sys and "
        "/proc), write {}",
        written, outside ? "outside /sys and /proc" : fmt::format("not below {}/", root), kind,
        root, example_for(kind));
    return {};
  }
  return out;
}

std::string knob_reading(const std::string& text) {
  auto open = text.find('[');
  if (open != std::string::npos && text.find(']', open) != std::string::npos)
    return bracketed_selection(text);
  std::string out;
  bool blank = false;
  for (char c : text) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      blank = true;
      continue;
    }
    if (blank && !out.empty()) out += ' ';
    blank = false;
    out += c;
  }
  return out;
}

KnobSet::KnobSet(std::string fs_prefix) : prefix_(std::move(fs_prefix)) {}

KnobSet::~KnobSet() {
  restore();
}

void KnobSet::lock() {
  if (lock_fd_ >= 0) return;
  const std::string path = knob_lock_path(prefix_);
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return;  // no lock possible (read-only /tmp): go on without
  bool told = false;
  auto waited = std::chrono::steady_clock::now();
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR) break;
    if (interrupted()) {
      ::close(fd);
      throw Interrupted();
    }
    if (!told && std::chrono::steady_clock::now() - waited > std::chrono::seconds(1)) {
      std::cerr << "nightjar: waiting for another nightjar to restore its knobs (" << path << ")\n";
      told = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  lock_fd_ = fd;
  // A killed nightjar changed knobs under this lock and could not restore
  // them: put the system's values back before reading "previous" ones.
  SweepOptions sweep;
  sweep.knobs_only = true;
  sweep.knob_lock_held = path;
  for (const auto& line : sweep_journals(sweep).lines()) std::cerr << "nightjar: " << line << "\n";
}

void KnobSet::unlock() noexcept {
  if (lock_fd_ < 0) return;
  ::close(lock_fd_);  // releases the flock
  lock_fd_ = -1;
}

std::optional<std::string> KnobSet::apply(const std::vector<Knob>& knobs) {
  restore();
  if (knobs.empty()) return std::nullopt;
  // Every target is checked before anything is written: a job that names a
  // file outside /sys and /proc (also through a symlink such as
  // /proc/self/root/...) is a usage error, not something to try.
  std::vector<std::string> targets;
  for (const auto& k : knobs) targets.push_back(resolve_target(prefix_, k.path, ""));
  lock();

  for (std::size_t i = 0; i < knobs.size(); ++i) {
    const Knob& k = knobs[i];
    const std::string& real = targets[i];
    auto give_up = [&](const std::string& why) -> std::optional<std::string> {
      restore();
      return fmt::format("{}: {}", k.path, why);
    };
    if (real.empty())
      return give_up("no such file (this kernel lacks the knob, or the path is misspelt)");
    int err = 0;
    auto before = read_small_file(real, &err);
    if (!before)
      return give_up(
          fmt::format("cannot read the current value ({}), so it could not be "
                      "restored afterwards",
                      std::strerror(err)));
    const std::string previous = knob_reading(*before);
    const std::string wanted = knob_reading(k.value);
    if (previous != wanted) {
      // Journaled with the value to restore before it changes.
      std::uint64_t id = 0;
      try {
        id = Journal::process().record(JournalKind::knob,
                                       {real, previous, k.value, knob_lock_path(prefix_), k.path});
      } catch (const EnvironmentError& e) {
        return give_up(e.what());
      }
      if (int e = write_attribute(real, k.value + "\n"); e != 0) {
        Journal::process().done(id);
        return give_up(fmt::format("writing '{}' failed: {}{}", k.value, std::strerror(e),
                                   e == EACCES || e == EPERM || e == EROFS
                                       ? " (run as root, on a writable /sys and /proc)"
                                       : ""));
      }
      changed_.push_back(Changed{real, k.path, previous, id});
    }
    auto after = read_small_file(real, &err);
    std::string now = after ? knob_reading(*after) : std::string();
    if (!after) {
      mismatches_.push_back(fmt::format("{}: written '{}' but could not be read back ({})", k.path,
                                        k.value, std::strerror(err)));
      now = wanted;
    } else if (now != wanted) {
      mismatches_.push_back(
          fmt::format("{}: written '{}' but the kernel reads back '{}'", k.path, k.value, now));
    }
    in_force_["knob." + k.path] = now;
  }
  return std::nullopt;
}

std::vector<std::string> KnobSet::restore() noexcept {
  std::vector<std::string> problems;
  try {
    for (auto it = changed_.rbegin(); it != changed_.rend(); ++it) {
      int e = write_attribute(it->path, it->previous + "\n");
      if (e != 0) {
        problems.push_back(fmt::format("could not restore {} to '{}': {}; set it by hand",
                                       it->shown, it->previous, std::strerror(e)));
        std::cerr << "nightjar: warning: " << problems.back() << "\n";
      } else {
        Journal::process().done(it->journal);
      }
    }
  } catch (...) {
    // Allocation failure while formatting: nothing sensible left to do.
  }
  changed_.clear();
  in_force_.clear();
  mismatches_.clear();
  unlock();
  return problems;
}

}  // namespace nightjar
