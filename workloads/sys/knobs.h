// Runtime knobs: files under /sys and /proc that a variant writes before its
// cells run (THP mode, sysctls), and the RAII KnobSet that restores them.
// A write outside /sys and /proc is refused (UsageError, exit 2), also
// through symlinks such as /proc/self/root; a knob that cannot be read or
// written is reported as a reason, and the runner records the variant's
// cells as skipped with it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "workloads/sys/journal.h"

namespace nightjar {

/// One runtime knob: a file under /sys or /proc and the value to write.
struct Knob {
  std::string path;   ///< absolute, normalised ("/proc/sys/vm/swappiness")
  std::string value;  ///< as written in the job ("never", "4096 65536 4194304")
  int line = 0;       ///< 1-based line of the knob in the job file; 0 = unknown
};

/// Checks and normalises a knob path written in a job: absolute, no "." or
/// ".." components, below /sys (`kind` "sysfs"), /proc ("procfs") or
/// /proc/sys ("sysctl"; a dotted name such as "vm.swappiness" is turned into
/// /proc/sys/vm/swappiness). Returns the path, or the problem with its fix in
/// `problem` (and "").
std::string normalise_knob_path(const std::string& kind, const std::string& written,
                                std::string& problem);

/// An example knob of `kind` ("sysfs", "procfs", "sysctl") for messages:
/// "`sysfs: {/sys/kernel/mm/transparent_hugepage/enabled: never}`".
std::string knob_example(const std::string& kind);

/// Checks, before anything runs, that every knob of `knobs` names a file
/// that does not resolve (through symlinks such as /proc/self/root) outside
/// `fs_prefix`/sys and `fs_prefix`/proc. A missing file is not an error here
/// (it is reported when the knob is written). Throws UsageError
/// "WHERE knob PATH resolves to ..., outside /sys and /proc; ..." where WHERE
/// is `where(knob)` ("job.yaml:4: variants.thp: ").
void check_knob_targets(const std::vector<Knob>& knobs,
                        const std::function<std::string(const Knob&)>& where,
                        const std::string& fs_prefix = "");

/// The value a knob file reads as, normalised for comparison and recording:
/// a selection file's bracketed choice ("always [madvise] never" -> "madvise"),
/// otherwise the text with runs of blanks collapsed to one space and trimmed.
std::string knob_reading(const std::string& text);

/// The file of the lock that serialises knob changes between nightjar
/// processes: /run/lock/nightjar-knobs.lock (else /tmp/nightjar-knobs.lock),
/// or <fs_prefix>/.nightjar-knobs.lock inside a test's fake tree.
std::string knob_lock_path(const std::string& fs_prefix = "");

/// Undoes a journaled `knob` record of an ended owner (the sweep): writes
/// the recorded previous value back when the file still reads as the value
/// nightjar wrote (knob_reading()); `declined` (said, and left as it is)
/// when it holds something else. Knobs are only restored under the knob
/// lock of the record: unless `lock_held` (the caller holds it), it is
/// taken without waiting, and a busy lock gives `left` (the nightjar holding
/// it restores ended owners' knobs itself when it takes the lock: KnobSet).
UndoResult undo_journaled_knob(const JournalEntry& entry, bool lock_held);

/// The knobs of one variant, written in order and restored in reverse order.
///
/// apply() reads each knob's current value, writes the new one when it
/// differs, reads it back and remembers the previous value. Any failure (file
/// missing, unreadable so that it could not be restored, write refused)
/// restores what was already written and returns the reason; nothing is left
/// changed. restore() (also run by the destructor) writes the previous values
/// back, last knob first, and releases the knob lock: between apply() and
/// restore() an exclusive flock on knob_lock_path() keeps other nightjar
/// processes from changing knobs (they wait; SIGINT still stops the wait).
/// Each knob is journaled with its previous value before it is written
/// (workloads/sys/journal.h), and right after taking the lock apply()
/// restores the knobs that ended (killed) nightjar processes left changed
/// (workloads/sys/sweep.h), so that the value it saves as "previous" is the
/// system's, not a killed run's. A path that resolves (through symlinks) outside
/// `fs_prefix`/sys and `fs_prefix`/proc throws UsageError before anything is
/// written.
class KnobSet {
 public:
  /// `fs_prefix` is prepended to every path (a fake tree for tests; "" for
  /// the real system).
  explicit KnobSet(std::string fs_prefix = "");
  ~KnobSet();
  KnobSet(const KnobSet&) = delete;
  KnobSet& operator=(const KnobSet&) = delete;

  /// Writes `knobs`. Returns nullopt on success, else why a knob could not
  /// be written ("/sys/kernel/mm/transparent_hugepage/enabled: write 'sometimes'
  /// failed: Invalid argument"), with nothing left changed. Calling apply()
  /// again first restores the knobs of the previous call.
  std::optional<std::string> apply(const std::vector<Knob>& knobs);

  /// Writes every previous value back (last knob first). Returns the
  /// problems (empty when all were restored); each is also printed on stderr.
  /// Idempotent.
  std::vector<std::string> restore() noexcept;

  /// The values in force after apply(), read back from the files:
  /// "knob.<path>" -> knob_reading() of the file ("never").
  std::map<std::string, std::string> in_force() const { return in_force_; }
  /// Knobs whose read-back value differs from the value written (the kernel
  /// rounded or ignored it): one line each, for run warnings.
  const std::vector<std::string>& mismatches() const { return mismatches_; }

 private:
  // An exclusive flock held from apply() to restore(): concurrent nightjar
  // processes change knobs one at a time (the second waits, saying so).
  void lock();
  void unlock() noexcept;

  struct Changed {
    std::string path;           ///< real path (with prefix)
    std::string shown;          ///< path as in the job
    std::string previous;       ///< value to write back
    std::uint64_t journal = 0;  ///< its journal record
  };
  std::string prefix_;
  std::vector<Changed> changed_;
  std::map<std::string, std::string> in_force_;
  std::vector<std::string> mismatches_;
  int lock_fd_ = -1;
};

}  // namespace nightjar
