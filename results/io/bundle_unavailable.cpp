// write_tar_gz and read_tar_gz of the static binaries the qemu guests
// run (nightjar-static, nightjar_root_tests_static; CMakeLists.txt): they are
// linked without libarchive (results/io/bundle_libarchive.cpp says why), so
// a bundle is written and read by the host's nightjar only.
#include <fmt/format.h>

#include "results/io/bundle.h"
#include "results/model/exit_codes.h"

namespace nightjar {

namespace {
[[noreturn]] void unavailable(const std::string& path) {
  throw EnvironmentError(fmt::format(
      "{}: this nightjar is the static binary of the qemu guests, linked without libarchive; "
      "write and import bundles with the host's nightjar",
      path));
}
}  // namespace

void write_tar_gz(const std::string& path, const std::vector<ArchiveMember>&, std::int64_t) {
  unavailable(path);
}

std::vector<ArchiveMember> read_tar_gz(const std::string& path, std::uintmax_t, std::uintmax_t) {
  unavailable(path);
}

}  // namespace nightjar
