// tmpfs mounts owned by nightjar (RAII): a fresh directory named after
// nightjar, a tmpfs of a given size mounted on it, both removed on every exit
// path (docs/reference.md "The system is left as found").
#pragma once

#include <cstdint>
#include <string>

#include "workloads/sys/journal.h"

namespace nightjar {

/// A tmpfs mounted by nightjar on a directory it created. The mount's source
/// is "nightjar-<tag>" and the directory <parent>/nightjar-<pid>-<tag>-XXXXXX,
/// so `findmnt | grep nightjar` shows it while it exists. The directory and
/// the mount are each journaled before they are made
/// (workloads/sys/journal.h), so a sweep removes both if nightjar is killed.
class TmpfsMount {
 public:
  /// Creates the directory (a new name, mode 0700) under `parent` ("/run", or
  /// "/tmp" when /run does not exist) and mounts a tmpfs there with
  /// MS_NOSUID|MS_NODEV and the options "size=<size_bytes>,mode=0700" plus
  /// `options` (default "huge=never": base pages, so page counts are exact;
  /// dropped and retried when the kernel rejects it). `size_bytes` is the
  /// filesystem's capacity in bytes (pages swapped out still count against
  /// it). `tag` may hold letters, digits, '-' and '_'; anything else becomes
  /// '_'. Throws EnvironmentError naming the path and errno (EPERM: not
  /// root); the directory is removed again on failure. `fstype` "hugetlbfs"
  /// (with options such as "pagesize=2M") mounts huge pages the same way:
  /// the file system qemu backs a guest's memory with (harness/vm/qemu.cpp
  /// --vm-hugepages).
  explicit TmpfsMount(std::uint64_t size_bytes, const std::string& tag,
                      const std::string& options = "huge=never", const std::string& parent = "",
                      const std::string& fstype = "tmpfs");
  /// Unmounts (retrying EBUSY for up to 1 s, then detaching lazily with
  /// MNT_DETACH) and removes the directory. Never throws; a failed step is
  /// reported on stderr as "nightjar: teardown: ..." with the command to run.
  ~TmpfsMount();
  TmpfsMount(const TmpfsMount&) = delete;
  TmpfsMount& operator=(const TmpfsMount&) = delete;

  /// The mount point (absolute path).
  const std::string& path() const { return path_; }
  /// The mount's source name, "nightjar-<tag>".
  const std::string& source() const { return source_; }
  /// The options the mount was made with ("size=...,mode=0700,huge=never").
  const std::string& options() const { return options_; }

 private:
  std::string path_, source_, options_;
  bool mounted_ = false;
  std::uint64_t dir_journal_ = 0, mount_journal_ = 0;  // journal records
};

/// Unmounts `path`, retrying EBUSY and EINTR for up to 1 s, then detaching
/// it lazily (MNT_DETACH). Returns "" when it is unmounted (a lazy detach
/// is reported on stderr), else why not. Never throws.
std::string unmount_retrying(const std::string& path) noexcept;

/// Undoes a journaled `mount` record of an ended owner (the sweep): unmounts
/// the tmpfs (or the record's third field's file system type, hugetlbfs)
/// when /proc/self/mountinfo shows one at the recorded point with the
/// recorded source; `declined` when something else is mounted there.
UndoResult undo_journaled_mount(const JournalEntry& entry);
/// Undoes a journaled `mount_point` record: removes the directory when it
/// is empty; `left` when it holds something (named).
UndoResult undo_journaled_mount_point(const JournalEntry& entry);

}  // namespace nightjar
