// The ownership journal: before nightjar creates or changes a kernel object
// (a cgroup directory, a zram device, a swap area, a tmpfs mount and its
// mount point, a sysfs/procfs/sysctl knob, a worker process or a program's
// process group) it records the object here, durably, naming itself as the
// owner. When the object is undone on the normal path the record is marked
// done; a file whose objects are all done is removed. What a killed nightjar
// (SIGKILL, the OOM killer) could not undo stays recorded, and the next
// `nightjar run` or `nightjar cleanup` undoes it (workloads/sys/sweep.h).
// docs/cleanup.md describes the design for users.
//
// One file per owner process, <dir>/<pid>-<start>.journal, where dir is
// journal_directory() (/run/nightjar: a tmpfs that vanishes with the objects
// at reboot) and <start> the owner's start time (/proc/PID/stat field 22).
// Text, one record a line, fields separated by a tab (a backslash, tab or
// newline inside a field is written \\, \t, \n):
//
//   nightjar-journal 1 <pid> <start ticks> <boot id> <command>   header
//   +   <id> <kind> <field>...                                   an object about to be made
//   -   <id>                                                     object <id> was undone
//
// Each line is appended with one write(2) and fdatasync(2)ed before the
// object is created (process records: right after the fork, before the
// process is let go). The owner holds an exclusive flock(2) on its file for
// as long as the file exists: the lock, not the pid alone, tells a live
// owner (also across pid reuse or another pid namespace); pid, start time
// and boot id name the owner and confirm that it ended.
//
// The kinds and their fields, in order (JournalKind):
//
// | kind | fields |
// |---|---|
// | process | pid, start ticks, label ("pft worker 3") |
// | process_group | process group id, start ticks of its leader, label |
// | cgroup | directory, where leftover tasks go (the hierarchy root), fake (1: a test tree) |
// | zram | sysfs root ("" = real), device number, hot-added (1/0), disksize written, algorithm
// found; while hot_add is read: no device number and a 6th field "before: 0 1" (the
// devices that existed) | | swap | device, UUID written by mkswap | | mount_point | directory | |
// mount | mount point, source ("nightjar-<tag>"), file system type (tmpfs when absent) | | knob |
// file, value before, value written, knob lock file, the path as the job wrote it |
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nightjar {

/// What a journal record is about (the table above).
enum class JournalKind { process, process_group, cgroup, zram, swap, mount_point, mount, knob };

/// "process", "process_group", "cgroup", "zram", "swap", "mount_point", "mount", "knob".
std::string_view to_string(JournalKind kind);
/// The kind spelt as to_string() gives it; nullopt for anything else.
std::optional<JournalKind> journal_kind_from_string(std::string_view text);

/// One recorded object.
struct JournalEntry {
  std::uint64_t id = 0;  ///< 1, 2, ... in the order recorded by one owner
  JournalKind kind = JournalKind::process;
  std::vector<std::string> fields;  ///< as the table in this header lists them
  bool done = false;                ///< undone (normally or by a sweep)

  /// Field `i`, or "" when the record has fewer fields.
  const std::string& field(std::size_t i) const;
  /// One line for people: "cgroup /sys/fs/cgroup/memory/nightjar-run3-77",
  /// "knob /sys/kernel/mm/transparent_hugepage/enabled (never, was madvise)".
  std::string describe() const;
};

/// What undoing one recorded object of an ended owner did (each module's
/// undo_journaled_* function, called by workloads/sys/sweep.h).
struct UndoResult {
  enum class State {
    undone,    ///< removed or restored: `text` says what was done
    absent,    ///< nothing to undo (never made, or gone already)
    declined,  ///< not nightjar's any more (changed or reused by something else): left alone
    left,      ///< could not be undone now (busy, error): stays recorded for a later sweep
  };
  State state = State::absent;
  std::string text;  ///< "swapoff /dev/zram1", "... holds 'always', not the 'never' nightjar wrote"
};

/// A process named so that a reused pid is not mistaken for it.
struct ProcessIdentity {
  pid_t pid = 0;
  std::uint64_t start_ticks = 0;  ///< /proc/PID/stat field 22: clock ticks after boot
  std::string boot_id;            ///< /proc/sys/kernel/random/boot_id

  bool operator==(const ProcessIdentity&) const = default;
};

/// Field 22 (starttime) of <proc_root>/PID/stat, or nullopt when the process
/// does not exist (or the file cannot be parsed). The command name in field 2
/// may hold blanks and parentheses: fields are counted after its last ')'.
std::optional<std::uint64_t> process_start_ticks(pid_t pid, const std::string& proc_root = "/proc");
/// The field `index` (1-based, as proc(5) numbers them; 3 and up) of the
/// text of a /proc/PID/stat file; nullopt when absent.
std::optional<std::string> stat_field(std::string_view stat_text, int index);
/// This boot's id (/proc/sys/kernel/random/boot_id, trimmed); "" when unreadable.
std::string current_boot_id();
/// This process: getpid(), its start ticks and the boot id.
ProcessIdentity own_identity();
/// True when `who` runs now: same boot, and its pid has the same start ticks.
bool identity_alive(const ProcessIdentity& who);

/// Escapes a field for a journal line (\\, \t, \n) and back.
std::string escape_journal_field(std::string_view field);
std::string unescape_journal_field(std::string_view field);

/// What one journal file says.
struct OwnerJournal {
  std::string path;                   ///< the file
  ProcessIdentity owner;              ///< from the header
  std::string command;                ///< the owner's command line, for messages
  std::vector<JournalEntry> entries;  ///< in the order recorded; `done` applied

  /// The entries not done, in the order recorded.
  std::vector<const JournalEntry*> open() const;
};

/// Parses the text of a journal file. nullopt when the header is not a
/// journal header (not a nightjar journal, or version other than 1). A last
/// line without its newline (the owner was killed during the write) and
/// malformed lines are ignored.
std::optional<OwnerJournal> parse_journal(std::string_view text, const std::string& path);

/// The file of a lock that serialises one kind of system change between
/// nightjar processes (`what`: "knobs", "zram"): <fs_prefix>/.nightjar-WHAT.lock
/// inside a test's fake tree, else /run/lock/nightjar-WHAT.lock where /run/lock
/// is writable, else /tmp/nightjar-WHAT.lock. Not created here.
std::string system_lock_path(const std::string& fs_prefix, std::string_view what);

/// The directory of the journals: $NIGHTJAR_JOURNAL_DIR when set and not
/// empty, else /run/nightjar when /run is writable (root), else
/// $XDG_RUNTIME_DIR/nightjar, else /tmp/nightjar-<uid>. Not created here.
std::string journal_directory();

/// The journal of one owner (normally this process: Journal::process()).
/// Thread-safe. The file is created on the first record and removed once
/// every object it records is done.
class Journal {
 public:
  /// A journal in `directory` (created, mode 0755, when missing) owned by
  /// this process.
  explicit Journal(std::string directory);
  /// Closes the file; it stays when it still records open objects (they are
  /// then swept as the objects of an ended owner).
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  /// The journal of this process, in journal_directory() as it is when its
  /// file is created (so a change of $NIGHTJAR_JOURNAL_DIR applies once
  /// the file has gone).
  static Journal& process();

  /// Appends the record of an object about to be created or changed (one
  /// write(2), then fdatasync(2)) and returns its id. Throws
  /// EnvironmentError naming the file and errno when it cannot be written:
  /// nightjar creates no object it could not record, so that a killed run
  /// can always be cleaned up.
  std::uint64_t record(JournalKind kind, std::vector<std::string> fields);
  /// record(), but a failure prints one warning on stderr (once per
  /// process) and returns 0: for worker processes, which PR_SET_PDEATHSIG
  /// already ties to nightjar.
  std::uint64_t record_or_warn(JournalKind kind, std::vector<std::string> fields) noexcept;
  /// Marks object `id` done (0: nothing). Removes the file once nothing is
  /// open. Never throws; a failed write is reported on stderr.
  void done(std::uint64_t id) noexcept;

  /// The directory of its file.
  std::string directory() const;
  /// The file while it exists, else "".
  std::string path() const;
  /// Objects recorded and not done.
  std::size_t open_count() const;

 private:
  void create_file();  // with mutex_ held
  void append(const std::string& line);
  void close_file() noexcept;

  std::string dir_;
  ProcessIdentity self_;
  mutable std::mutex mutex_;
  int fd_ = -1;
  std::string path_;
  std::uint64_t next_id_ = 1;
  std::vector<std::uint64_t> open_;
  bool is_process_ = false;  // Journal::process(): its descriptor is journal_fd_for_children()
};

/// The descriptor of this process's journal file, or -1: a forked child
/// that does not exec closes it (workloads/sys/process.h Workers), so that
/// it does not hold the owner's lock after nightjar ended. Async-signal-safe.
int journal_fd_for_children() noexcept;

/// The text of a record line of `id` (for tests and the sweep): "+\t<id>\t<kind>\t...\n".
std::string journal_record_line(std::uint64_t id, JournalKind kind,
                                const std::vector<std::string>& fields);
/// The line that marks `id` done: "-\t<id>\n".
std::string journal_done_line(std::uint64_t id);

}  // namespace nightjar
