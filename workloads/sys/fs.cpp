// The one reader and writer of kernel attribute files (workloads/sys/fs.h).
#include "workloads/sys/fs.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace nightjar {

std::optional<std::string> read_small_file(const std::string& path, int* err, std::size_t limit) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (err) *err = errno;
    return std::nullopt;
  }
  std::string out;
  char buf[8192];
  while (out.size() < limit) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      if (err) *err = errno;
      ::close(fd);
      return std::nullopt;
    }
    if (n == 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  if (out.size() > limit) out.resize(limit);
  return out;
}

int write_attribute(const std::string& path, std::string_view text, AttributeWrite how) {
  int flags = O_WRONLY | O_CLOEXEC | (how.append ? O_APPEND : O_TRUNC);
  if (how.create) flags |= O_CREAT;
  const int fd = ::open(path.c_str(), flags, 0644);
  if (fd < 0) return errno;
  ssize_t n;
  do {
    n = ::write(fd, text.data(), text.size());
  } while (n < 0 && errno == EINTR && how.retry_eintr);
  int err = n < 0 ? errno : 0;
  if (::close(fd) != 0 && err == 0 && errno != EINTR) err = errno;
  return err;
}

}  // namespace nightjar
