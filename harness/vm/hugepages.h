// The host's huge pages behind a qemu guest's memory (`--vm-hugepages`;
// docs/qemu.md "Guest memory on huge pages"). Under TCG the same image ran
// pft at about 105 000 or about 65 000 faults/sec from one boot to the next
// on the development machine, depending on how much of the guest's memory
// the host happened to back with transparent huge pages; guest memory in a
// hugetlbfs file, preallocated, measured fast in every boot.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "workloads/sys/knobs.h"
#include "workloads/sys/tmpfs.h"

namespace nightjar {

/// 2 MiB huge pages for a guest of `memory_mb` MiB, held while it lives:
/// when the host's pool has fewer free pages than the guest needs
/// (ceil(memory_mb / 2)), /proc/sys/vm/nr_hugepages is raised by the
/// difference (a knob: journaled, restored by the destructor or by a sweep
/// if nightjar is killed), then a hugetlbfs (pagesize=2M, the guest's size)
/// is mounted on a directory of nightjar's (TmpfsMount, removed on every
/// path). qemu gets `-mem-path path() -mem-prealloc`. Throws
/// EnvironmentError naming the fix when the kernel has no 2 MiB pages, the
/// knob cannot be written (not root), or the host cannot find enough free
/// huge pages (fragmented memory), with nothing left changed.
class GuestHugePages {
 public:
  explicit GuestHugePages(int memory_mb, const std::string& sysfs = "/sys/kernel/mm/hugepages");
  /// The hugetlbfs mount point qemu's -mem-path names.
  const std::string& path() const { return mount_->path(); }
  /// Huge pages the guest uses, and how many nightjar added to the pool.
  std::uint64_t pages() const { return pages_; }
  std::uint64_t added() const { return added_; }

 private:
  KnobSet knobs_;  // destroyed after the mount: the pool shrinks once it is unused
  std::unique_ptr<TmpfsMount> mount_;
  std::uint64_t pages_ = 0, added_ = 0;
};

}  // namespace nightjar
