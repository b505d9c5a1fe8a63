// gzip'd tar archives (results/io/bundle.h): what needs no libarchive. The
// writing and reading are results/io/bundle_libarchive.cpp (the host
// binary) or results/io/bundle_unavailable.cpp (the guests' static binaries).
#include <filesystem>
#include <fstream>

#include "results/io/bundle.h"

namespace nightjar {

bool looks_like_tar_gz(const std::string& path) {
  if (path == "-") return false;
  if (path.ends_with(".tar.gz") || path.ends_with(".tgz")) return true;
  // Only a regular file is peeked at: a FIFO or device would block or be
  // consumed here (the caller's InputFile refuses those, naming the file).
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return false;
  std::ifstream in(path, std::ios::binary);
  char magic[2] = {0, 0};
  return in.read(magic, 2) && static_cast<unsigned char>(magic[0]) == 0x1f &&
         static_cast<unsigned char>(magic[1]) == 0x8b;
}

}  // namespace nightjar
