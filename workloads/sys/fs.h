// Reading and writing the kernel's small attribute files (procfs, sysfs,
// cgroupfs): the one reader and the one writer of workloads/sys. The kernel
// acts on each write(2) of such a file, so a value is written with exactly
// one write.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace nightjar {

/// The whole content of a small file, read with read(2) until end of file
/// (EINTR retried), at most `limit` bytes (the rest is not read). nullopt
/// when the file cannot be opened or read; then `*err` (when given) holds
/// the errno.
std::optional<std::string> read_small_file(const std::string& path, int* err = nullptr,
                                           std::size_t limit = std::size_t{1} << 20);

/// How write_attribute opens the file.
struct AttributeWrite {
  bool append = false;      ///< O_APPEND instead of O_TRUNC (cgroup.procs of a fake tree)
  bool create = false;      ///< O_CREAT, mode 0644 (fake trees in tests); else it must exist
  bool retry_eintr = true;  ///< false: one write(2), EINTR returned (a long memory.reclaim
                            ///< stopped by Ctrl-C)
};

/// Writes `text` to `path` with one write(2). Returns 0, or the errno of
/// open, write or close.
int write_attribute(const std::string& path, std::string_view text, AttributeWrite how = {});

}  // namespace nightjar
