// Input files (issue 15, docs/input.md "Input files"): the one check that a
// file nightjar reads — a job file, a CSV or a Google Benchmark report — is a
// regular file of bounded size, so that /dev/zero, a FIFO or a directory is
// refused at once instead of being read until memory runs out or blocking
// forever. harness/job (load_job) and `nightjar import` both use it.
#pragma once

#include <cstdint>
#include <istream>
#include <memory>
#include <string>
#include <string_view>

namespace nightjar {

/// What an input is, for its messages and its size cap.
struct InputKind {
  std::string_view noun;     ///< "job file", "CSV file", ...: "cannot read NOUN"
  std::string_view expect;   ///< ends the not-a-regular-file error: "a job is a YAML file ..."
  std::uintmax_t max_bytes;  ///< the largest input read, bytes
  std::string_view cap;      ///< the cap in words ("1 MiB"), for the too-large error
  std::string_view too_large_fix;  ///< ends the too-large error
  bool allow_stdin = false;        ///< "-" reads standard input (not checked: a pipe is fine)
};

/// An input opened for reading. The file is opened O_NONBLOCK (a FIFO without
/// a writer returns at once) and checked with fstat before one byte is read:
/// anything but a regular file, or a regular file larger than the cap, throws
/// UsageError "PATH: not a regular file (a FIFO); EXPECT" or "PATH: larger
/// than a NOUN may be (N bytes, CAP); FIX". A file that cannot be opened
/// throws UsageError "PATH: cannot read NOUN: ERRNO TEXT". With
/// `kind.allow_stdin`, "-" is standard input; its bytes are counted as they
/// are read and more than the cap throws the too-large error (an endless
/// pipe is stopped, not buffered).
class InputFile {
 public:
  InputFile(const std::string& path, const InputKind& kind);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  /// The input as a stream (binary, unbuffered beyond 64 KiB). Its bad bit
  /// raises exceptions, so a read error or the cap reaches the caller as
  /// UsageError instead of looking like the end of the file.
  std::istream& stream();
  /// The whole input (at most the cap).
  std::string read_all();
  /// The first bytes of the input (up to 64 KiB, fewer for a shorter file),
  /// read but not consumed: stream() still starts at the first byte. For
  /// telling formats apart (JSON given to the CSV reader).
  std::string_view head();
  /// The name for messages: the path, or "(stdin)" for "-".
  const std::string& source() const { return source_; }

 private:
  class Buffer;
  std::string source_;
  std::unique_ptr<Buffer> buffer_;
  std::unique_ptr<std::istream> stream_;
};

}  // namespace nightjar
