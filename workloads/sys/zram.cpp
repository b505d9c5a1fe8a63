// zram swap owned by nightjar: selection, configuration and teardown.
#include "workloads/sys/zram.h"
#include "results/model/params.h"
#include "workloads/sys/fs.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/swap.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "results/model/exit_codes.h"
#include "results/model/text.h"
#include "workloads/sys/journal.h"
#include "workloads/sys/process.h"

namespace nightjar {
namespace {

std::optional<std::uint64_t> parse_u64(std::string_view s) {
  std::string t(trim(s));
  if (t.empty() || t.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  errno = 0;
  unsigned long long v = std::strtoull(t.c_str(), nullptr, 10);
  if (errno) return std::nullopt;
  return static_cast<std::uint64_t>(v);
}

/// "\040" -> " ": the escapes of seq_file_path() in /proc/swaps.
std::string unescape_octal(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1])) &&
        std::isdigit(static_cast<unsigned char>(s[i + 2])) &&
        std::isdigit(static_cast<unsigned char>(s[i + 3]))) {
      out.push_back(
          static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0')));
      i += 3;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

std::string basename_of(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

/// The zram<N> devices under <root>/sys/block, sorted by N.
std::vector<int> zram_ids(const std::string& root) {
  std::vector<int> ids;
  DIR* d = ::opendir((root + "/sys/block").c_str());
  if (!d) return ids;
  while (dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n.size() > 4 && n.compare(0, 4, "zram") == 0 &&
        n.find_first_not_of("0123456789", 4) == std::string::npos)
      ids.push_back(std::atoi(n.c_str() + 4));
  }
  ::closedir(d);
  std::sort(ids.begin(), ids.end());
  return ids;
}

bool dir_has_entries(const std::string& path) {
  DIR* d = ::opendir(path.c_str());
  if (!d) return false;
  bool any = false;
  while (dirent* e = ::readdir(d))
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) {
      any = true;
      break;
    }
  ::closedir(d);
  return any;
}

bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

/// Waits until `path` exists, up to `timeout`; true when it does.
bool wait_for(const std::string& path, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!exists(path)) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

void teardown_warning(const std::string& text) {
  std::fprintf(stderr, "nightjar: teardown: %s\n", text.c_str());
}

/// Writes `value` to `path`, retrying EBUSY and EINTR for up to 2 s (reset
/// and hot_remove return EBUSY while the device is still open: swapoff just
/// closed it, udev may hold it for a moment). 0 or the errno.
int write_retrying(const std::string& path, const std::string& value) {
  int err = 0;
  for (int i = 0; i < 100; ++i) {
    err = write_attribute(path, value);
    if (err != EBUSY && err != EINTR) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return err;
}

/// True when zram<id> (below `root`) is listed in /proc/swaps, by name or,
/// on the real system, by device number.
bool zram_is_swap(const std::string& root, int id) {
  const std::string name = "zram" + std::to_string(id);
  dev_t rdev = 0;
  if (root.empty()) {
    if (auto dev = read_small_file("/sys/block/" + name + "/dev")) {
      unsigned maj = 0, min = 0;
      if (std::sscanf(dev->c_str(), "%u:%u", &maj, &min) == 2) rdev = makedev(maj, min);
    }
  }
  for (const auto& e : read_proc_swaps(root)) {
    if (basename_of(e.filename) == name) return true;
    struct stat st {};
    if (rdev && ::stat(e.filename.c_str(), &st) == 0 && S_ISBLK(st.st_mode) && st.st_rdev == rdev)
      return true;
  }
  return false;
}

/// A new random UUID (the kernel's /proc/sys/kernel/random/uuid); "" when unreadable.
std::string random_uuid() {
  return std::string(trim(read_small_file("/proc/sys/kernel/random/uuid").value_or("")));
}

}  // namespace

std::vector<SwapEntry> parse_proc_swaps(std::string_view text) {
  std::vector<SwapEntry> out;
  std::istringstream in{std::string(text)};
  std::string line;
  bool header = true;
  while (std::getline(in, line)) {
    if (header) {
      header = false;
      if (line.rfind("Filename", 0) == 0) continue;
    }
    std::istringstream fields(line);
    SwapEntry e;
    std::string name;
    if (!(fields >> name >> e.type >> e.size_kib >> e.used_kib >> e.priority)) continue;
    e.filename = unescape_octal(name);
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<SwapEntry> read_proc_swaps(const std::string& root) {
  auto text = read_small_file(root + "/proc/swaps");
  return text ? parse_proc_swaps(*text) : std::vector<SwapEntry>{};
}

std::optional<int> swap_priority_above(const std::vector<SwapEntry>& active) {
  if (active.empty()) return 10;
  int highest = active.front().priority;
  for (const auto& e : active) highest = std::max(highest, e.priority);
  if (highest >= kMaxSwapPriority) return std::nullopt;
  return std::max(highest + 1, 0);
}

ZramSelection select_zram_device(const std::string& root) {
  ZramSelection sel;
  const std::string hot_add = root + "/sys/class/zram-control/hot_add";
  if (::access(hot_add.c_str(), R_OK) == 0) {
    sel.choice = ZramChoice{true, -1};
    return sel;
  }
  std::vector<int> ids = zram_ids(root);
  if (ids.empty()) {
    sel.reason =
        "zram is not available: no /sys/block/zram* device and no "
        "/sys/class/zram-control/hot_add; load the module with `modprobe zram` (kernel option "
        "CONFIG_ZRAM)";
    return sel;
  }
  std::vector<std::string> busy;
  for (int id : ids) {
    const std::string name = "zram" + std::to_string(id);
    const std::string dir = root + "/sys/block/" + name;
    auto disksize = read_small_file(dir + "/disksize");
    auto size = disksize ? parse_u64(*disksize) : std::nullopt;
    if (!size) {
      busy.push_back(name + ": disksize unreadable");
      continue;
    }
    if (*size != 0) {
      busy.push_back(name + ": set up by something else (disksize " + human_bytes(*size) + ")");
      continue;
    }
    // A device named in /proc/swaps, by name or (real system) by device number.
    if (zram_is_swap(root, id)) {
      busy.push_back(name + ": active swap (/proc/swaps)");
      continue;
    }
    if (dir_has_entries(dir + "/holders")) {
      busy.push_back(name + ": held by another block device (" + dir + "/holders)");
      continue;
    }
    sel.choice = ZramChoice{false, id};
    return sel;
  }
  std::string list;
  for (const auto& b : busy) list += (list.empty() ? "" : "; ") + b;
  sel.reason =
      "no free zram device: /sys/class/zram-control/hot_add is not available and every "
      "zram device is in use (" +
      list +
      "); nightjar never reuses a zram device it did not set up: free one (swapoff "
      "/dev/zramN; echo 1 > /sys/block/zramN/reset) or load zram with more devices "
      "(modprobe zram num_devices=N)";
  return sel;
}

std::vector<std::string> parse_algorithm_list(std::string_view text) {
  std::vector<std::string> out;
  std::istringstream in{std::string(text)};
  std::string word;
  while (in >> word) {
    word.erase(std::remove(word.begin(), word.end(), '['), word.end());
    word.erase(std::remove(word.begin(), word.end(), ']'), word.end());
    if (!word.empty()) out.push_back(word);
  }
  return out;
}

std::string selected_algorithm(std::string_view text) {
  auto open = text.find('[');
  auto close = text.find(']', open);
  if (open == std::string_view::npos || close == std::string_view::npos) return "";
  return std::string(text.substr(open + 1, close - open - 1));
}

std::vector<std::string> zram_algorithms(const std::string& root) {
  for (int id : zram_ids(root))
    if (auto t = read_small_file(root + "/sys/block/zram" + std::to_string(id) + "/comp_algorithm"))
      return parse_algorithm_list(*t);
  return {};
}

namespace {

// The zram lock (system_lock_path(root, "zram")), held by a nightjar from
// just before it reads hot_add until the new device's disksize is written
// (or the device is gone again). Reading hot_add creates a device whose
// number nobody knows until the read returns, so a SIGKILL between the read
// and the journal record would leave an unnamed device (0.25-0.38 ms here,
// hit 4 times in 4 aimed kills). Under the lock, a "pending" record lists the
// devices that existed before; the sweep of a pending record takes the lock
// (no nightjar is between the read and its record then, and every live
// nightjar's device has its disksize) and hot-removes the devices that are
// new, unconfigured (disksize 0), no swap and held by nothing.
class ZramAddLock {
 public:
  // wait: block (up to 10 s; EnvironmentError after) or try once.
  ZramAddLock(const std::string& root, bool wait) : path_(system_lock_path(root, "zram")) {
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) {
      unlockable_ = true;  // a read-only lock directory: go on without, as the knob lock
      return;
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      if ((errno != EWOULDBLOCK && errno != EINTR) || !wait) {
        ::close(fd_);
        fd_ = -1;
        return;
      }
      if (std::chrono::steady_clock::now() > deadline) {
        ::close(fd_);
        throw EnvironmentError("zram: another process held " + path_ +
                               " for 10 s while adding a zram device; let it finish (or end "
                               "it), then run again");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  ~ZramAddLock() {
    if (fd_ >= 0) ::close(fd_);  // releases the flock
  }
  ZramAddLock(const ZramAddLock&) = delete;
  ZramAddLock& operator=(const ZramAddLock&) = delete;
  // Held, or there was no lock to take.
  bool held() const { return fd_ >= 0 || unlockable_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
  bool unlockable_ = false;
};

std::string id_list(const std::vector<int>& ids) {
  std::string out;
  for (int id : ids) out += (out.empty() ? "" : " ") + std::to_string(id);
  return out;
}

}  // namespace

ZramDevice::ZramDevice(std::uint64_t disksize_bytes, const std::string& algorithm,
                       const std::string& root)
    : root_(root) {
  std::optional<ZramAddLock> adding;
  ZramSelection sel = select_zram_device(root);
  if (!sel.choice) throw EnvironmentError(sel.reason);
  try {
    if (sel.choice->hot_add) {
      adding.emplace(root, true);
      Journal& journal = Journal::process();
      // Recorded before the read: a kill right after it leaves this record,
      // and the sweep finds the new device by the list of the old ones.
      const std::uint64_t pending = journal.record(
          JournalKind::zram,
          {root, "", "1", std::to_string(disksize_bytes), "", "before:" + id_list(zram_ids(root))});
      const std::string path = root + "/sys/class/zram-control/hot_add";
      auto text = read_small_file(path);  // reading creates the device
      if (!text) journal.done(pending);
      if (!text)
        throw EnvironmentError("cannot add a zram device: reading " + path +
                               " failed: " + errno_text(errno));
      auto id = parse_u64(*text);
      if (!id)
        throw EnvironmentError("cannot add a zram device: " + path + " gave '" +
                               std::string(trim(*text)) + "', not a device number");
      id_ = static_cast<int>(*id);
      created_ = true;
      // The journal names it at once, then the pending record is done.
      journal_ = journal.record(
          JournalKind::zram, {root, std::to_string(id_), "1", std::to_string(disksize_bytes), ""});
      journal.done(pending);
      if (!wait_for(attr("disksize"), std::chrono::seconds(2)))
        throw EnvironmentError("zram: hot-added " + name() + " but " + attr("disksize") +
                               " did not appear within 2 s");
    } else {
      id_ = sel.choice->id;
      original_algorithm_ =
          selected_algorithm(read_small_file(attr("comp_algorithm")).value_or(""));
      journal_ = Journal::process().record(
          JournalKind::zram,
          {root, std::to_string(id_), "0", std::to_string(disksize_bytes), original_algorithm_});
    }
    if (!algorithm.empty()) {
      if (int err = write_attribute(attr("comp_algorithm"), algorithm)) {
        std::string available;
        for (const auto& a :
             parse_algorithm_list(read_small_file(attr("comp_algorithm")).value_or("")))
          available += (available.empty() ? "" : " ") + a;
        throw EnvironmentError("zram: " + name() + " refused compression algorithm '" + algorithm +
                               "' (" + errno_text(err) + "); available here: " + available);
      }
    }
    if (int err = write_attribute(attr("disksize"), std::to_string(disksize_bytes))) {
      if (err == EBUSY && !created_) {
        // Someone else initialised it between our check and our write: not ours.
        original_algorithm_.clear();
        throw EnvironmentError("zram: " + name() +
                               " was set up by something else meanwhile (disksize: EBUSY); "
                               "nightjar leaves it alone");
      }
      throw EnvironmentError("zram: cannot set " + attr("disksize") + " to " +
                             std::to_string(disksize_bytes) + " bytes: " + errno_text(err) +
                             (err == ENOMEM ? "; free memory or write a smaller size" : ""));
    }
    initialized_ = true;
    disksize_ = disksize_bytes;
    algorithm_ = selected_algorithm(read_small_file(attr("comp_algorithm")).value_or(""));
    device_path_ = root + "/dev/" + name();
    if (root.empty() && !wait_for(device_path_, std::chrono::seconds(2)))
      throw EnvironmentError("zram: " + device_path_ +
                             " did not appear within 2 s (is devtmpfs mounted on /dev?)");
  } catch (...) {
    release();
    throw;
  }
}

ZramDevice::~ZramDevice() {
  release();
}

std::string ZramDevice::attr(const std::string& n) const {
  return root_ + "/sys/block/" + name() + "/" + n;
}

void ZramDevice::release() noexcept {
  if (id_ < 0) return;
  bool clean = true;
  try {
    if (initialized_) {
      if (int err = write_retrying(attr("reset"), "1")) {
        teardown_warning("cannot reset " + name() + " (" + errno_text(err) +
                         "); run `echo 1 > /sys/block/" + name() + "/reset` once nothing uses it");
        clean = false;
      }
      initialized_ = false;
    }
    if (!created_ && !original_algorithm_.empty()) {
      std::string now = selected_algorithm(read_small_file(attr("comp_algorithm")).value_or(""));
      if (now != original_algorithm_)
        if (int err = write_attribute(attr("comp_algorithm"), original_algorithm_)) {
          teardown_warning("cannot restore " + name() + "'s compression algorithm to " +
                           original_algorithm_ + ": " + errno_text(err));
          clean = false;
        }
      original_algorithm_.clear();
    }
    if (created_) {
      const std::string path = root_ + "/sys/class/zram-control/hot_remove";
      if (int err = write_retrying(path, std::to_string(id_))) {
        teardown_warning("cannot remove " + name() + " (" + errno_text(err) + "); run `echo " +
                         std::to_string(id_) + " > " + path + "`");
        clean = false;
      }
      created_ = false;
    }
  } catch (...) {
    // allocation failure while building a message: nothing more to do
    clean = false;
  }
  // A step that failed leaves the record open: a later sweep retries it.
  if (clean) Journal::process().done(journal_);
  journal_ = 0;
  id_ = -1;
}

namespace {

// A pending hot_add record (no device number; field 5 lists the devices that
// existed before): its owner was killed between reading hot_add and naming
// the device. Under the zram lock, the devices not in that list that are
// unconfigured, no swap and held by nothing are hot-removed.
UndoResult undo_pending_hot_add(const JournalEntry& entry) {
  using State = UndoResult::State;
  const std::string& root = entry.field(0);
  const ZramAddLock lock(root, false);
  if (!lock.held())
    return {State::left, "a zram device being added now (" + lock.path() +
                             " is held); the next sweep looks again"};
  std::vector<int> before;
  for (const auto& word : split(entry.field(5).substr(std::strlen("before:")), ' '))
    if (auto id = parse_u64(word)) before.push_back(static_cast<int>(*id));
  std::vector<std::string> did, left;
  for (int id : zram_ids(root)) {
    if (std::find(before.begin(), before.end(), id) != before.end()) continue;
    const std::string name = "zram" + std::to_string(id);
    const std::string dir = root + "/sys/block/" + name;
    if (parse_u64(read_small_file(dir + "/disksize").value_or("")) != std::uint64_t{0} ||
        zram_is_swap(root, id) || dir_has_entries(dir + "/holders"))
      continue;  // configured or in use: not the unnamed device
    if (int err = write_retrying(root + "/sys/class/zram-control/hot_remove", std::to_string(id)))
      left.push_back("cannot hot-remove " + name + ": " + errno_text(err));
    else
      did.push_back("hot-removed " + name +
                    " (hot-added by a nightjar killed before it recorded the number)");
  }
  if (!left.empty()) return {State::left, join(left, "; ")};
  if (did.empty()) return {State::absent, ""};
  return {State::undone, join(did, ", ")};
}

}  // namespace

UndoResult undo_journaled_zram(const JournalEntry& entry) {
  using State = UndoResult::State;
  const std::string& root = entry.field(0);
  if (entry.field(1).empty() && entry.field(5).rfind("before:", 0) == 0)
    return undo_pending_hot_add(entry);
  const auto id_value = parse_u64(entry.field(1));
  if (!id_value) return {State::declined, "zram record without a device number"};
  const int id = static_cast<int>(*id_value);
  const bool hot_added = entry.field(2) == "1";
  const std::string name = "zram" + std::to_string(id);
  const std::string dir = root + "/sys/block/" + name;
  if (!exists(dir)) return {State::absent, ""};
  if (zram_is_swap(root, id))
    return {State::declined, name +
                                 " is an active swap area that nightjar did not record "
                                 "(or could not switch off); left alone"};
  const auto now = parse_u64(read_small_file(dir + "/disksize").value_or(""));
  const std::uint64_t wrote = parse_u64(entry.field(3)).value_or(0);
  const std::uint64_t page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  const std::uint64_t rounded = (wrote + page - 1) / page * page;
  if (!now) return {State::left, "cannot read " + dir + "/disksize"};
  if (*now != 0 && *now != wrote && *now != rounded)
    return {State::declined, fmt::format("{} holds disksize {}, not the {} nightjar set: set up by "
                                         "something else meanwhile; left alone",
                                         name, *now, wrote)};
  std::vector<std::string> did;
  if (*now != 0) {
    if (int err = write_retrying(dir + "/reset", "1"))
      return {State::left, "cannot reset " + name + ": " + errno_text(err)};
    did.push_back("reset " + name);
  }
  const std::string& algorithm = entry.field(4);
  if (!hot_added && !algorithm.empty() &&
      selected_algorithm(read_small_file(dir + "/comp_algorithm").value_or("")) != algorithm) {
    if (int err = write_attribute(dir + "/comp_algorithm", algorithm))
      return {State::left, "cannot restore " + name + "'s compression algorithm to " + algorithm +
                               ": " + errno_text(err)};
    did.push_back("restored its compression algorithm " + algorithm);
  }
  if (hot_added) {
    const std::string path = root + "/sys/class/zram-control/hot_remove";
    if (int err = write_retrying(path, std::to_string(id)))
      return {State::left, "cannot hot-remove " + name + ": " + errno_text(err)};
    did.push_back("hot-removed " + name);
  }
  if (did.empty()) return {State::absent, ""};
  return {State::undone, join(did, ", ")};
}

std::map<std::string, std::uint64_t> ZramDevice::mm_stat() const {
  static constexpr const char* kFields[] = {"orig_data_size",  "compr_data_size", "mem_used_total",
                                            "mem_limit",       "mem_used_max",    "same_pages",
                                            "pages_compacted", "huge_pages"};
  std::map<std::string, std::uint64_t> out;
  auto text = read_small_file(attr("mm_stat"));
  if (!text) return out;
  std::istringstream in(*text);
  for (const char* f : kFields) {
    std::uint64_t v = 0;
    if (!(in >> v)) break;
    out[f] = v;
  }
  return out;
}

std::string find_mkswap() {
  return find_program("mkswap", program_search_path() + ":/usr/sbin:/sbin:/usr/bin:/bin");
}

namespace {

// Writes a version-1 swap header on `device` as util-linux mkswap does
// (union swap_header, include/linux/swap.h: bootbits[1024], version = 1,
// last_page, nr_badpages = 0, sws_uuid[16], sws_volume[16]; "SWAPSPACE2"
// in the last 10 bytes of the first page). Used where the only mkswap is
// busybox's, which cannot set the UUID (-U) the sweep identifies the area by:
// the qemu guest (harness/vm/qemu.cpp). Throws EnvironmentError.
void write_swap_header(const std::string& device, const std::string& uuid,
                       const std::string& label) {
  const int fd = ::open(device.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) throw EnvironmentError("cannot open " + device + ": " + errno_text(errno));
  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  const off_t size = ::lseek(fd, 0, SEEK_END);
  if (size < static_cast<off_t>(10 * page)) {
    ::close(fd);
    throw EnvironmentError("cannot make swap on " + device + ": smaller than 10 pages");
  }
  std::string buf(page, '\0');
  auto put_u32 = [&buf](std::size_t at, std::uint32_t v) { std::memcpy(&buf[at], &v, 4); };
  put_u32(1024, 1);
  put_u32(1028, static_cast<std::uint32_t>(static_cast<std::size_t>(size) / page - 1));
  std::string hex;
  for (char c : uuid)
    if (std::isxdigit(static_cast<unsigned char>(c))) hex += c;
  for (std::size_t i = 0; i < 16 && 2 * i + 1 < hex.size(); ++i)
    buf[1036 + i] = static_cast<char>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
  label.copy(&buf[1052], std::min<std::size_t>(label.size(), 16));
  buf.replace(page - 10, 10, "SWAPSPACE2");
  const ssize_t n = ::pwrite(fd, buf.data(), page, 0);
  const int err = errno;
  const bool synced = ::fsync(fd) == 0;
  ::close(fd);
  if (n != static_cast<ssize_t>(page) || !synced)
    throw EnvironmentError("writing the swap header of " + device + " failed: " + errno_text(err));
}

// True when `program` is busybox (a link to it, or it itself).
bool is_busybox(const std::string& program) {
  char real[PATH_MAX];
  if (!::realpath(program.c_str(), real)) return false;
  const std::string r = real;
  return r.size() >= 7 && r.compare(r.size() - 7, 7, "busybox") == 0;
}

}  // namespace

SwapArea::SwapArea(const std::string& device, int priority, const std::string& label)
    : device_(device), priority_(priority) {
  const std::string mkswap = find_mkswap();
  if (mkswap.empty())
    throw EnvironmentError("mkswap not found on PATH, /usr/sbin or /sbin; install util-linux");
  // The UUID tells the sweep that an active swap area on `device` is this one.
  const std::string uuid = random_uuid();
  journal_ = Journal::process().record(JournalKind::swap, {device, uuid});
  struct Unrecord {  // until swapon succeeded, nothing is active: no record
    SwapArea& area;
    ~Unrecord() {
      if (!area.active_) Journal::process().done(std::exchange(area.journal_, 0));
    }
  } unrecord{*this};
  if (is_busybox(mkswap)) {
    write_swap_header(device, uuid, label.substr(0, 16));
  } else {
    CommandSpec spec;
    spec.argv = {mkswap, "-L", label.substr(0, 16), device};
    if (!uuid.empty()) spec.argv.insert(spec.argv.begin() + 3, {"-U", uuid});
    spec.stdout_path = "/dev/null";
    spec.capture_limit = 8192;
    spec.interrupted = [] { return false; };  // a swap header takes an instant: let it finish
    const CommandResult r = run_command(spec);
    if (!r.ok()) {
      const std::string why = r.started ? describe_exit(r.wait_status) : r.error;
      throw EnvironmentError("mkswap " + device + " failed (" + why +
                             "): " + std::string(trim(r.err)));
    }
  }
  const int p = std::clamp(priority, 0, kMaxSwapPriority);
  const int flags = SWAP_FLAG_PREFER | ((p << SWAP_FLAG_PRIO_SHIFT) & SWAP_FLAG_PRIO_MASK);
  int rc;
  while ((rc = ::swapon(device.c_str(), flags)) != 0 && errno == EINTR) {
  }
  if (rc != 0) {
    int e = errno;
    throw EnvironmentError("swapon " + device + " failed: " + errno_text(e) +
                           (e == EPERM ? "; run nightjar as root" : ""));
  }
  active_ = true;
}

int swapoff_retrying(const std::string& device) noexcept {
  int err = 0;
  // EINTR: a signal (a second Ctrl-C) arrived while pages were swapped back
  // in; EBUSY: transient. Both are retried: an active leftover swap area is
  // the worst outcome.
  for (int i = 0; i < 200; ++i) {
    if (::swapoff(device.c_str()) == 0) return 0;
    err = errno;
    if (err != EINTR && err != EBUSY) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return err;
}

SwapArea::~SwapArea() {
  if (!active_) return;
  if (int err = swapoff_retrying(device_))
    teardown_warning("swapoff " + device_ + " failed (" + errno_text(err) + "); run `swapoff " +
                     device_ + "`");
  else
    Journal::process().done(journal_);
  active_ = false;
}

std::string swap_header_uuid(const std::string& device) {
  const int fd = ::open(device.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  std::string buf(page, '\0');
  const ssize_t n = ::pread(fd, buf.data(), page, 0);
  ::close(fd);
  if (n != static_cast<ssize_t>(page) || buf.compare(page - 10, 10, "SWAPSPACE2") != 0) return "";
  // union swap_header (include/linux/swap.h): bootbits[1024], version,
  // last_page, nr_badpages (u32 each), then sws_uuid[16].
  std::string out;
  for (std::size_t i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    out += fmt::format("{:02x}", static_cast<unsigned char>(buf[1036 + i]));
  }
  return out;
}

UndoResult undo_journaled_swap(const JournalEntry& entry) {
  using State = UndoResult::State;
  const std::string& device = entry.field(0);
  bool active = false;
  for (const auto& e : read_proc_swaps())
    if (e.filename == device) active = true;
  if (!active) return {State::absent, ""};
  const std::string uuid = swap_header_uuid(device);
  if (entry.field(1).empty() || uuid != entry.field(1))
    return {State::declined, fmt::format("{} is an active swap area with UUID '{}', not the '{}' "
                                         "nightjar wrote; left alone",
                                         device, uuid, entry.field(1))};
  if (int err = swapoff_retrying(device))
    return {State::left, "swapoff " + device + " failed: " + errno_text(err)};
  return {State::undone, "swapoff " + device};
}

}  // namespace nightjar
