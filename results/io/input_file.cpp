// Input files: see results/io/input_file.h.
#include "results/io/input_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <streambuf>

#include "results/model/exit_codes.h"
#include "results/model/text.h"

namespace nightjar {

// A read-only stream buffer over a file descriptor that counts the bytes it
// hands out and throws once more than the cap have been read.
class InputFile::Buffer : public std::streambuf {
 public:
  Buffer(int fd, bool owned, std::string source, const InputKind& kind)
      : fd_(fd), owned_(owned), source_(std::move(source)), kind_(kind) {}
  ~Buffer() override {
    if (owned_) ::close(fd_);
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  /// The get area: the bytes read but not consumed yet.
  std::string_view pending() const { return {gptr(), static_cast<std::size_t>(egptr() - gptr())}; }

  [[noreturn]] void too_large() const {
    throw UsageError(fmt::format("{}: larger than a {} may be ({} bytes, {}); {}", source_,
                                 kind_.noun, kind_.max_bytes, kind_.cap, kind_.too_large_fix));
  }
  [[noreturn]] void cannot_read(int err) const {
    throw UsageError(fmt::format("{}: cannot read {}: {}", source_, kind_.noun, errno_text(err)));
  }

 protected:
  int_type underflow() override {
    if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
    ssize_t n = 0;
    do n = ::read(fd_, buf_, sizeof buf_);
    while (n < 0 && errno == EINTR);
    if (n < 0) cannot_read(errno);
    if (n == 0) return traits_type::eof();
    total_ += static_cast<std::uintmax_t>(n);
    if (total_ > kind_.max_bytes) too_large();  // grew while read, or an endless pipe
    setg(buf_, buf_, buf_ + n);
    return traits_type::to_int_type(*gptr());
  }

  // A large read (the CSV reader asks for a MiB at a time) takes the pending
  // bytes, then reads straight into the caller's buffer: one copy less, and
  // fewer read(2) calls, than refilling the 64 KiB get area.
  std::streamsize xsgetn(char* out, std::streamsize count) override {
    std::streamsize done = std::min<std::streamsize>(count, egptr() - gptr());
    std::copy_n(gptr(), done, out);
    gbump(static_cast<int>(done));
    if (count - done < static_cast<std::streamsize>(sizeof buf_))
      return done + std::streambuf::xsgetn(out + done, count - done);
    while (done < count) {
      ssize_t n = ::read(fd_, out + done, static_cast<std::size_t>(count - done));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) cannot_read(errno);
      if (n == 0) break;
      total_ += static_cast<std::uintmax_t>(n);
      if (total_ > kind_.max_bytes) too_large();
      done += n;
    }
    return done;
  }

 private:
  int fd_;
  bool owned_;
  std::string source_;
  InputKind kind_;
  std::uintmax_t total_ = 0;
  char buf_[65536];
};

namespace {

const char* file_type(mode_t mode) {
  return S_ISDIR(mode)    ? "a directory"
         : S_ISFIFO(mode) ? "a FIFO"
         : S_ISCHR(mode)  ? "a character device"
         : S_ISBLK(mode)  ? "a block device"
         : S_ISSOCK(mode) ? "a socket"
                          : "not a plain file";
}

}  // namespace

InputFile::InputFile(const std::string& path, const InputKind& kind)
    : source_(kind.allow_stdin && path == "-" ? "(stdin)" : path) {
  if (kind.allow_stdin && path == "-") {
    buffer_ = std::make_unique<Buffer>(STDIN_FILENO, false, source_, kind);
  } else {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
      throw UsageError(fmt::format("{}: cannot read {}: {}", path, kind.noun, errno_text(errno)));
    buffer_ = std::make_unique<Buffer>(fd, true, source_, kind);  // closes fd from here on
    struct stat st {};
    if (::fstat(fd, &st) != 0) buffer_->cannot_read(errno);
    if (!S_ISREG(st.st_mode))
      throw UsageError(
          fmt::format("{}: not a regular file ({}); {}", path, file_type(st.st_mode), kind.expect));
    if (static_cast<std::uintmax_t>(st.st_size) > kind.max_bytes) buffer_->too_large();
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);  // a regular file: plain reads
  }
  stream_ = std::make_unique<std::istream>(buffer_.get());
  stream_->exceptions(std::ios::badbit);
}

InputFile::~InputFile() = default;

std::istream& InputFile::stream() {
  return *stream_;
}

std::string_view InputFile::head() {
  if (stream_->peek() == std::char_traits<char>::eof()) return {};
  return buffer_->pending();
}

std::string InputFile::read_all() {
  std::string text;
  char buf[65536];
  while (stream_->read(buf, sizeof buf) || stream_->gcount() > 0)
    text.append(buf, static_cast<std::size_t>(stream_->gcount()));
  return text;
}

}  // namespace nightjar
