// Guest memory on the host's huge pages: see harness/vm/hugepages.h.
#include "harness/vm/hugepages.h"

#include <fmt/format.h>

#include "results/model/exit_codes.h"
#include "results/model/text.h"
#include "workloads/sys/fs.h"

namespace nightjar {
namespace {

constexpr std::uint64_t kHugePageBytes = 2ull << 20;

std::optional<std::uint64_t> read_count(const std::string& path) {
  const std::optional<std::string> text = read_small_file(path);
  if (!text) return std::nullopt;
  try {
    return std::stoull(std::string(trim(*text)));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace

GuestHugePages::GuestHugePages(int memory_mb, const std::string& sysfs) {
  const std::string dir = sysfs + "/hugepages-2048kB";
  pages_ = (static_cast<std::uint64_t>(memory_mb) + 1) / 2;
  std::optional<std::uint64_t> free = read_count(dir + "/free_hugepages");
  const std::optional<std::uint64_t> total = read_count(dir + "/nr_hugepages");
  if (!free || !total)
    throw EnvironmentError(fmt::format(
        "--vm-hugepages: this kernel has no 2 MiB huge pages ({} is missing or unreadable; "
        "CONFIG_HUGETLBFS); leave out --vm-hugepages",
        dir));
  if (*free < pages_) {
    const std::uint64_t want = *total + (pages_ - *free);
    if (auto why = knobs_.apply({{"/proc/sys/vm/nr_hugepages", std::to_string(want), 0}}))
      throw EnvironmentError("--vm-hugepages: cannot reserve huge pages: " + *why +
                             " (run as root, or leave out --vm-hugepages)");
    free = read_count(dir + "/free_hugepages");
    if (!free || *free < pages_) {
      knobs_.restore();
      throw EnvironmentError(fmt::format(
          "--vm-hugepages: the host found {} of the {} free 2 MiB huge pages a {} MiB guest "
          "needs (its memory is fragmented); `echo 1 > /proc/sys/vm/compact_memory` and try "
          "again, lower --vm-memory, or leave out --vm-hugepages",
          free.value_or(0), pages_, memory_mb));
    }
    added_ = want - *total;
  }
  mount_ = std::make_unique<TmpfsMount>(pages_ * kHugePageBytes, "vm-hugepages", "pagesize=2M", "",
                                        "hugetlbfs");
}

}  // namespace nightjar
