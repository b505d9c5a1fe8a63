// zram swap owned by nightjar: choosing a zram device nobody else uses,
// configuring it, making it a swap area and undoing all of it (RAII).
//
// The rule (docs/reference.md "The system is left as found"): nightjar never touches
// a zram device or swap area something else set up. It hot-adds a device of
// its own where /sys/class/zram-control/hot_add exists; otherwise it takes an
// existing device that is unused (disksize 0, not in /proc/swaps, no holders);
// otherwise it does nothing and reports why.
//
// Every path below can be prefixed with a `root` ("" = the real system), so the
// selection logic is tested against a fake /sys and /proc tree.
//
// Teardown (destructors) never throws: a step that fails is reported on stderr
// as "nightjar: teardown: ..." with the command that finishes the job by hand.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "workloads/sys/journal.h"

namespace nightjar {

/// One active swap area: a line of /proc/swaps after its header.
struct SwapEntry {
  std::string filename;        ///< as given to swapon ("/dev/zram0", "/swapfile"); the kernel's
                               ///< octal escapes (\040 for a blank) are decoded
  std::string type;            ///< "partition" or "file"
  std::uint64_t size_kib = 0;  ///< size in KiB
  std::uint64_t used_kib = 0;  ///< used in KiB
  int priority = 0;            ///< swap priority (-2, -3... when none was given)
};

/// Parses the text of /proc/swaps (header line first). Malformed lines are
/// skipped. Never throws.
std::vector<SwapEntry> parse_proc_swaps(std::string_view text);
/// Reads and parses <root>/proc/swaps; empty when unreadable.
std::vector<SwapEntry> read_proc_swaps(const std::string& root = "");

/// The largest swap priority swapon(2) accepts (SWAP_FLAG_PRIO_MASK).
constexpr int kMaxSwapPriority = 32767;
/// The priority that puts a new swap area above every active one, so the
/// kernel fills it first: highest active priority + 1, at least 0 (10 when
/// no swap is active). nullopt when an area already has kMaxSwapPriority.
std::optional<int> swap_priority_above(const std::vector<SwapEntry>& active);

/// How nightjar obtains a zram device on this machine.
struct ZramChoice {
  bool hot_add = false;  ///< true: read <root>/sys/class/zram-control/hot_add for a new device
  int id = -1;           ///< when !hot_add: the unused existing device /dev/zram<id>
};

/// The outcome of select_zram_device(): a choice, or the reason there is none.
struct ZramSelection {
  std::optional<ZramChoice> choice;
  /// When no choice: why, naming every device and what occupies it, and what
  /// to do ("modprobe zram", "swapoff /dev/zramN; echo 1 > .../reset").
  std::string reason;
};

/// Decides which zram device nightjar may use, without changing anything:
/// hot_add when <root>/sys/class/zram-control/hot_add is readable; else the
/// lowest-numbered /sys/block/zram<N> with disksize 0, not listed in
/// /proc/swaps (by name, and on the real system by device number) and with no
/// holders; else none, with the reason. zram missing altogether is a reason
/// too ("modprobe zram").
ZramSelection select_zram_device(const std::string& root = "");

/// Parses a zram comp_algorithm line, "[lzo-rle] lzo lz4 zstd": every
/// algorithm, in order, brackets removed.
std::vector<std::string> parse_algorithm_list(std::string_view text);
/// The bracketed (selected) algorithm of such a line, "" when none.
std::string selected_algorithm(std::string_view text);
/// The compression algorithms zram offers here: the comp_algorithm list of
/// the lowest-numbered zram device under <root>/sys/block; empty when no zram
/// device exists (the list is the same for every device).
std::vector<std::string> zram_algorithms(const std::string& root = "");

/// A zram device configured by nightjar. RAII: the destructor resets it
/// (frees its memory, disksize back to 0), restores the compression
/// algorithm it found on a device it did not create, and hot-removes a device
/// it hot-added. The device is journaled (workloads/sys/journal.h) right
/// after hot_add names it, or before an existing device is configured; the
/// record is marked done once every teardown step succeeded.
class ZramDevice {
 public:
  /// Obtains a device as select_zram_device(root) decides, writes
  /// `algorithm` to comp_algorithm (unless empty: the device's default stays)
  /// and `disksize_bytes` to disksize (the uncompressed capacity, in bytes;
  /// zram rounds it up to whole pages). Waits up to 2 s for the new device's
  /// sysfs directory and, on the real system, for /dev/zram<N>.
  /// Throws EnvironmentError naming the device, the attribute and errno
  /// (EBUSY on disksize: something else configured the device meanwhile; it
  /// is then left alone). Whatever was done before the error is undone.
  ZramDevice(std::uint64_t disksize_bytes, const std::string& algorithm,
             const std::string& root = "");
  ~ZramDevice();
  ZramDevice(const ZramDevice&) = delete;
  ZramDevice& operator=(const ZramDevice&) = delete;

  /// N of zram<N>.
  int id() const { return id_; }
  /// "zram<N>".
  std::string name() const { return "zram" + std::to_string(id_); }
  /// Block device node: <root>/dev/zram<N>.
  const std::string& device_path() const { return device_path_; }
  /// True when nightjar hot-added the device (it is removed on destruction).
  bool created() const { return created_; }
  /// disksize as written, in bytes.
  std::uint64_t disksize() const { return disksize_; }
  /// The compression algorithm in effect (read back after configuration).
  const std::string& algorithm() const { return algorithm_; }
  /// mm_stat of the device: orig_data_size, compr_data_size, mem_used_total,
  /// mem_limit, mem_used_max, same_pages, pages_compacted, huge_pages (bytes,
  /// or pages for the last three, as the kernel documents); absent fields
  /// (older kernels) are omitted.
  std::map<std::string, std::uint64_t> mm_stat() const;

 private:
  void release() noexcept;
  std::string attr(const std::string& name) const;

  std::string root_;
  int id_ = -1;
  bool created_ = false;      // hot-added by us
  bool initialized_ = false;  // disksize written by us
  std::uint64_t disksize_ = 0;
  std::string algorithm_;
  std::string original_algorithm_;  // selected before we changed it (existing device)
  std::string device_path_;
  std::uint64_t journal_ = 0;  // its journal record
};

/// Undoes a journaled `zram` record of an ended owner (the sweep): a device
/// whose disksize is the one recorded (or 0) and that is not an active swap
/// area is reset, its compression algorithm restored (a device nightjar did
/// not hot-add) and a hot-added one hot-removed. `declined` when the device
/// was set up by something else meanwhile (another disksize, or swap that
/// nightjar did not record); `absent` when the device is gone.
UndoResult undo_journaled_zram(const JournalEntry& entry);

/// Path of mkswap (util-linux) on $PATH, then /usr/sbin, /sbin, /usr/bin,
/// /bin (root's tools are not on every user's PATH); "" when none.
std::string find_mkswap();

/// The UUID in the swap header of `device` (mkswap's, offset 1036 of a
/// header whose page ends in "SWAPSPACE2"), lower-case 8-4-4-4-12 hex; ""
/// when the device cannot be read or holds no swap header.
std::string swap_header_uuid(const std::string& device);

/// swapoff(2) of `device`, retried while it returns EINTR or EBUSY (about 2
/// s). 0 or the errno.
int swapoff_retrying(const std::string& device) noexcept;

/// Undoes a journaled `swap` record of an ended owner (the sweep): swapoff
/// when the device is an active swap area whose header carries the UUID
/// nightjar wrote; `declined` when another swap header is active there,
/// `absent` when the device is not an active swap area.
UndoResult undo_journaled_swap(const JournalEntry& entry);

/// A swap area on a block device, active while the object lives. RAII: the
/// destructor runs swapoff(2), retrying while it returns EINTR or EBUSY (a
/// second Ctrl-C during teardown must not leave the area active). The area
/// is journaled with the UUID its header gets before mkswap runs.
class SwapArea {
 public:
  /// Writes a swap header with `mkswap -L label -U UUID device` (util-linux, run by
  /// run_command of workloads/sys/process.h; its stderr becomes the error
  /// message) and activates it
  /// with swapon(2) at `priority` (SWAP_FLAG_PREFER; 0..kMaxSwapPriority).
  /// `label` is at most 16 characters. Throws EnvironmentError: mkswap
  /// missing or failing, swapon errno (EPERM: not root; EBUSY: already in use).
  SwapArea(const std::string& device, int priority, const std::string& label);
  ~SwapArea();
  SwapArea(const SwapArea&) = delete;
  SwapArea& operator=(const SwapArea&) = delete;

  const std::string& device() const { return device_; }
  int priority() const { return priority_; }

 private:
  std::string device_;
  int priority_ = 0;
  bool active_ = false;
  std::uint64_t journal_ = 0;  // its journal record
};

}  // namespace nightjar
