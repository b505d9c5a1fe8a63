// The ownership journal (workloads/sys/journal.h): the record file of one
// owner, its format, and the identity of processes across pid reuse.
#include "workloads/sys/journal.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include <fmt/format.h>

#include "results/model/exit_codes.h"
#include "results/model/text.h"
#include "workloads/sys/fs.h"

namespace nightjar {
namespace {

constexpr std::string_view kHeader = "nightjar-journal";
constexpr std::string_view kVersion = "1";

constexpr std::pair<JournalKind, std::string_view> kKinds[] = {
    {JournalKind::process, "process"}, {JournalKind::process_group, "process_group"},
    {JournalKind::cgroup, "cgroup"},   {JournalKind::zram, "zram"},
    {JournalKind::swap, "swap"},       {JournalKind::mount_point, "mount_point"},
    {JournalKind::mount, "mount"},     {JournalKind::knob, "knob"},
};

// The descriptor forked children close (journal_fd_for_children).
std::atomic<int> g_child_fd{-1};

std::string own_command() {
  auto text = read_small_file("/proc/self/cmdline", nullptr, 4096);
  if (!text) return "nightjar";
  std::string cmd = *text;
  while (!cmd.empty() && cmd.back() == '\0') cmd.pop_back();
  std::replace(cmd.begin(), cmd.end(), '\0', ' ');
  if (cmd.size() > 200) cmd = cmd.substr(0, 197) + "...";
  return cmd.empty() ? "nightjar" : cmd;
}

bool is_writable_dir(const std::string& dir) {
  struct stat st {};
  return ::stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && ::access(dir.c_str(), W_OK) == 0;
}

}  // namespace

std::string_view to_string(JournalKind kind) {
  for (const auto& [k, name] : kKinds)
    if (k == kind) return name;
  return "process";
}

std::optional<JournalKind> journal_kind_from_string(std::string_view text) {
  for (const auto& [k, name] : kKinds)
    if (name == text) return k;
  return std::nullopt;
}

const std::string& JournalEntry::field(std::size_t i) const {
  static const std::string empty;
  return i < fields.size() ? fields[i] : empty;
}

std::string JournalEntry::describe() const {
  switch (kind) {
    case JournalKind::process:
      return fmt::format("process {} ({})", field(0), field(2));
    case JournalKind::process_group:
      return fmt::format("process group {} ({})", field(0), field(2));
    case JournalKind::cgroup:
      return "cgroup " + field(0);
    case JournalKind::zram:
      if (field(1).empty()) return "a zram device being hot-added (number not read yet)";
      return fmt::format("zram{}{}", field(1), field(2) == "1" ? " (hot-added)" : " (configured)");
    case JournalKind::swap:
      return "swap area " + field(0);
    case JournalKind::mount_point:
      return "mount point " + field(0);
    case JournalKind::mount:
      return (field(2).empty() ? std::string("tmpfs") : field(2)) + " mount " + field(0);
    case JournalKind::knob:
      return fmt::format("knob {} ('{}', was '{}')", field(4).empty() ? field(0) : field(4),
                         field(2), field(1));
  }
  return "object";
}

std::optional<std::string> stat_field(std::string_view stat_text, int index) {
  if (index < 3) return std::nullopt;
  auto close = stat_text.rfind(')');
  if (close == std::string_view::npos) return std::nullopt;
  std::vector<std::string> rest = split_blanks(stat_text.substr(close + 1));
  const std::size_t at = static_cast<std::size_t>(index - 3);
  if (at >= rest.size()) return std::nullopt;
  return rest[at];
}

std::optional<std::uint64_t> process_start_ticks(pid_t pid, const std::string& proc_root) {
  if (pid <= 0) return std::nullopt;
  auto text = read_small_file(proc_root + "/" + std::to_string(pid) + "/stat");
  if (!text) return std::nullopt;
  auto f = stat_field(*text, 22);
  if (!f || f->empty() || f->find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  return std::strtoull(f->c_str(), nullptr, 10);
}

std::string current_boot_id() {
  auto text = read_small_file("/proc/sys/kernel/random/boot_id");
  return text ? std::string(trim(*text)) : std::string();
}

ProcessIdentity own_identity() {
  ProcessIdentity me;
  me.pid = ::getpid();
  me.start_ticks = process_start_ticks(me.pid).value_or(0);
  me.boot_id = current_boot_id();
  return me;
}

bool identity_alive(const ProcessIdentity& who) {
  if (who.boot_id != current_boot_id()) return false;
  auto start = process_start_ticks(who.pid);
  return start && *start == who.start_ticks;
}

std::string escape_journal_field(std::string_view field) {
  std::string out;
  out.reserve(field.size());
  for (char c : field) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '\t')
      out += "\\t";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

std::string unescape_journal_field(std::string_view field) {
  std::string out;
  out.reserve(field.size());
  for (std::size_t i = 0; i < field.size(); ++i) {
    if (field[i] != '\\' || i + 1 == field.size()) {
      out += field[i];
      continue;
    }
    const char n = field[++i];
    out += n == 't' ? '\t' : n == 'n' ? '\n' : n;
  }
  return out;
}

std::vector<const JournalEntry*> OwnerJournal::open() const {
  std::vector<const JournalEntry*> out;
  for (const auto& e : entries)
    if (!e.done) out.push_back(&e);
  return out;
}

std::optional<OwnerJournal> parse_journal(std::string_view text, const std::string& path) {
  OwnerJournal j;
  j.path = path;
  bool header = true;
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t nl = text.find('\n', at);
    if (nl == std::string_view::npos) break;  // torn last line: never complete
    const std::vector<std::string> f = split(text.substr(at, nl - at), '\t');
    at = nl + 1;
    if (header) {
      if (f.size() < 5 || f[0] != kHeader || f[1] != kVersion) return std::nullopt;
      j.owner.pid = static_cast<pid_t>(std::atol(f[2].c_str()));
      j.owner.start_ticks = std::strtoull(f[3].c_str(), nullptr, 10);
      j.owner.boot_id = unescape_journal_field(f[4]);
      j.command = f.size() > 5 ? unescape_journal_field(f[5]) : "";
      header = false;
      continue;
    }
    if (f.size() < 2 || f[1].empty() || f[1].find_first_not_of("0123456789") != std::string::npos)
      continue;
    const std::uint64_t id = std::strtoull(f[1].c_str(), nullptr, 10);
    if (f[0] == "-") {
      for (auto& e : j.entries)
        if (e.id == id) e.done = true;
    } else if (f[0] == "+" && f.size() >= 3) {
      auto kind = journal_kind_from_string(f[2]);
      if (!kind) continue;
      JournalEntry e;
      e.id = id;
      e.kind = *kind;
      for (std::size_t i = 3; i < f.size(); ++i) e.fields.push_back(unescape_journal_field(f[i]));
      j.entries.push_back(std::move(e));
    }
  }
  if (header) return std::nullopt;
  return j;
}

std::string journal_record_line(std::uint64_t id, JournalKind kind,
                                const std::vector<std::string>& fields) {
  std::string line = fmt::format("+\t{}\t{}", id, to_string(kind));
  for (const auto& f : fields) line += "\t" + escape_journal_field(f);
  return line + "\n";
}

std::string journal_done_line(std::uint64_t id) {
  return fmt::format("-\t{}\n", id);
}

std::string system_lock_path(const std::string& fs_prefix, std::string_view what) {
  if (!fs_prefix.empty()) return fs_prefix + "/.nightjar-" + std::string(what) + ".lock";
  if (::access("/run/lock", W_OK) == 0) return "/run/lock/nightjar-" + std::string(what) + ".lock";
  return "/tmp/nightjar-" + std::string(what) + ".lock";
}

std::string journal_directory() {
  if (const char* env = std::getenv("NIGHTJAR_JOURNAL_DIR"); env && *env) return env;
  if (is_writable_dir("/run/nightjar") || is_writable_dir("/run")) return "/run/nightjar";
  if (const char* xdg = std::getenv("XDG_RUNTIME_DIR"); xdg && *xdg && is_writable_dir(xdg))
    return std::string(xdg) + "/nightjar";
  return "/tmp/nightjar-" + std::to_string(::getuid());
}

int journal_fd_for_children() noexcept {
  return g_child_fd.load(std::memory_order_relaxed);
}

Journal::Journal(std::string directory) : dir_(std::move(directory)) {}

Journal::~Journal() {
  std::lock_guard<std::mutex> lock(mutex_);
  close_file();
}

Journal& Journal::process() {
  static Journal* journal = [] {
    auto* j = new Journal(journal_directory());  // never destroyed: used until exit
    j->is_process_ = true;
    return j;
  }();
  return *journal;
}

std::string Journal::directory() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return dir_;
}

std::string Journal::path() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return path_;
}

std::size_t Journal::open_count() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return open_.size();
}

void Journal::close_file() noexcept {
  if (fd_ < 0) return;
  if (is_process_) g_child_fd.store(-1);
  ::close(fd_);  // releases the owner lock
  fd_ = -1;
  path_.clear();
}

void Journal::create_file() {
  if (self_.pid != ::getpid()) self_ = own_identity();
  if (::mkdir(dir_.c_str(), 0755) != 0 && errno != EEXIST)
    throw EnvironmentError(fmt::format(
        "cannot create the journal directory {}: {}; nightjar records every object it creates "
        "there so that a killed run can be cleaned up (set NIGHTJAR_JOURNAL_DIR to a writable "
        "directory)",
        dir_, errno_text(errno)));
  struct stat st {};
  if (::lstat(dir_.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid())
    throw EnvironmentError(
        fmt::format("the journal directory {} is not a directory owned by uid {}; remove it or set "
                    "NIGHTJAR_JOURNAL_DIR to a directory of your own",
                    dir_, ::geteuid()));
  const std::string name = fmt::format("{}-{}", self_.pid, self_.start_ticks);
  const std::string tmp = dir_ + "/." + name + ".tmp";
  const std::string final_path = dir_ + "/" + name + ".journal";
  ::unlink(tmp.c_str());  // ours: same pid and start time
  // Made under a temporary name, locked, then renamed: a sweeper never sees
  // an owner's file before its lock is held.
  const int fd = ::open(tmp.c_str(), O_RDWR | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0)
    throw EnvironmentError(fmt::format("cannot create the journal {}: {}", tmp, errno_text(errno)));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    throw EnvironmentError(fmt::format("cannot lock the journal {}: {}", tmp, errno_text(err)));
  }
  fd_ = fd;
  const std::string header =
      fmt::format("{}\t{}\t{}\t{}\t{}\t{}\n", kHeader, kVersion, self_.pid, self_.start_ticks,
                  escape_journal_field(self_.boot_id), escape_journal_field(own_command()));
  try {
    path_ = tmp;
    append(header);
  } catch (...) {
    ::unlink(tmp.c_str());
    close_file();
    throw;
  }
  if (::rename(tmp.c_str(), final_path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    close_file();
    throw EnvironmentError(
        fmt::format("cannot rename the journal {} to {}: {}", tmp, final_path, errno_text(err)));
  }
  path_ = final_path;
  if (int dfd = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dfd >= 0) {
    ::fsync(dfd);  // the new name is durable too
    ::close(dfd);
  }
  if (is_process_) g_child_fd.store(fd_);
}

void Journal::append(const std::string& line) {
  ssize_t n;
  do {
    n = ::write(fd_, line.data(), line.size());
  } while (n < 0 && errno == EINTR);
  if (n != static_cast<ssize_t>(line.size()))
    throw EnvironmentError(fmt::format("cannot write the journal {}: {}", path_,
                                       n < 0 ? errno_text(errno) : std::string("short write")));
  int rc;
  while ((rc = ::fdatasync(fd_)) != 0 && errno == EINTR) {
  }
  if (rc != 0)
    throw EnvironmentError(fmt::format("cannot sync the journal {}: {}", path_, errno_text(errno)));
}

std::uint64_t Journal::record(JournalKind kind, std::vector<std::string> fields) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (fd_ < 0) {
    // The process journal follows journal_directory() whenever it has no
    // file (a test that sets NIGHTJAR_JOURNAL_DIR).
    if (is_process_) dir_ = journal_directory();
    create_file();
  }
  const std::uint64_t id = next_id_;
  append(journal_record_line(id, kind, fields));
  ++next_id_;
  open_.push_back(id);
  return id;
}

std::uint64_t Journal::record_or_warn(JournalKind kind, std::vector<std::string> fields) noexcept {
  static std::atomic<bool> warned{false};
  try {
    return record(kind, std::move(fields));
  } catch (const std::exception& e) {
    if (!warned.exchange(true)) std::fprintf(stderr, "nightjar: warning: %s\n", e.what());
  }
  return 0;
}

void Journal::done(std::uint64_t id) noexcept {
  if (id == 0) return;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = std::find(open_.begin(), open_.end(), id);
  if (it == open_.end() || fd_ < 0) return;
  open_.erase(it);
  if (open_.empty()) {
    // Nothing left to undo: the file goes (under the lock), then the lock.
    if (::unlink(path_.c_str()) != 0)
      std::fprintf(stderr, "nightjar: warning: cannot remove the journal %s: %s\n", path_.c_str(),
                   errno_text(errno).c_str());
    close_file();
    return;
  }
  try {
    append(journal_done_line(id));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nightjar: warning: %s (a later sweep may try to undo it again)\n",
                 e.what());
  }
}

}  // namespace nightjar
