// gzip'd tar archives through libarchive (results/io/bundle.h): writing and
// reading. Kept out of nightjar_core (CMakeLists.txt: nightjar_archive):
// Debian's libarchive.a pulls every format it knows (7zip, xar, ...) and
// their libraries, several of which Debian ships only as shared objects, so
// the static binaries the qemu guests run (nightjar-static and the static
// needs-root tests) link results/io/bundle_unavailable.cpp instead.
#include "results/io/bundle.h"

#include <archive.h>
#include <archive_entry.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>

#include "results/model/exit_codes.h"

namespace nightjar {
namespace {

using ArchivePtr = std::unique_ptr<archive, int (*)(archive*)>;
using EntryPtr = std::unique_ptr<archive_entry, void (*)(archive_entry*)>;

std::string archive_message(archive* a) {
  const char* m = archive_error_string(a);
  return m ? m : "unknown libarchive error";
}

// Writes the members to `tmp`; throws EnvironmentError on any failure.
void write_members(const std::string& path, const std::string& tmp,
                   const std::vector<ArchiveMember>& members, std::int64_t mtime) {
  ArchivePtr a(archive_write_new(), archive_write_free);
  auto fail = [&](const std::string& what) {
    throw EnvironmentError(fmt::format("-o {}: {}: {}; write to a writable directory", path, what,
                                       archive_message(a.get())));
  };
  if (archive_write_add_filter_gzip(a.get()) != ARCHIVE_OK ||
      archive_write_set_format_ustar(a.get()) != ARCHIVE_OK)
    fail("cannot set up the archive");
  if (archive_write_open_filename(a.get(), tmp.c_str()) != ARCHIVE_OK) fail("cannot create " + tmp);
  for (const auto& m : members) {
    EntryPtr e(archive_entry_new(), archive_entry_free);
    archive_entry_set_pathname(e.get(), m.name.c_str());
    archive_entry_set_size(e.get(), static_cast<la_int64_t>(m.data.size()));
    archive_entry_set_filetype(e.get(), AE_IFREG);
    archive_entry_set_perm(e.get(), 0644);
    archive_entry_set_mtime(e.get(), static_cast<time_t>(mtime), 0);
    if (archive_write_header(a.get(), e.get()) != ARCHIVE_OK) fail("cannot add " + m.name);
    if (!m.data.empty() && archive_write_data(a.get(), m.data.data(), m.data.size()) !=
                               static_cast<la_ssize_t>(m.data.size()))
      fail("cannot write " + m.name);
  }
  if (archive_write_close(a.get()) != ARCHIVE_OK) fail("cannot finish the archive");
}

}  // namespace

void write_tar_gz(const std::string& path, const std::vector<ArchiveMember>& members,
                  std::int64_t mtime) {
  const std::string tmp = fmt::format("{}.tmp{}", path, ::getpid());
  try {
    write_members(path, tmp, members, mtime);
  } catch (...) {
    std::remove(tmp.c_str());
    throw;
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw EnvironmentError(fmt::format("-o {}: cannot rename {} to it", path, tmp));
  }
}

std::vector<ArchiveMember> read_tar_gz(const std::string& path, std::uintmax_t max_member_bytes,
                                       std::uintmax_t max_total_bytes) {
  const std::string fix = "import a bundle as `nightjar bundle -o FILE.tar.gz` writes it";
  ArchivePtr a(archive_read_new(), archive_read_free);
  auto bad = [&](const std::string& what) {
    return UsageError(fmt::format("{}: {} ({}); {}", path, what, archive_message(a.get()), fix));
  };
  archive_read_support_filter_gzip(a.get());
  archive_read_support_format_tar(a.get());
  if (archive_read_open_filename(a.get(), path.c_str(), 64 * 1024) != ARCHIVE_OK)
    throw bad("not a gzip'd tar archive");
  if (archive_filter_code(a.get(), 0) != ARCHIVE_FILTER_GZIP)
    throw UsageError(fmt::format("{}: not gzip-compressed; {}", path, fix));
  std::vector<ArchiveMember> members;
  std::uintmax_t total = 0;
  auto too_big = [&](const std::string& name, std::uintmax_t size) {
    if (size > max_member_bytes)
      throw UsageError(fmt::format("{}: {} is larger than {} bytes; split the bundle by run", path,
                                   name, max_member_bytes));
    if (total + size > max_total_bytes)
      throw UsageError(fmt::format(
          "{}: its members hold more than {} bytes in all (at {}); split the bundle by run", path,
          max_total_bytes, name));
  };
  archive_entry* e = nullptr;
  for (;;) {
    const int r = archive_read_next_header(a.get(), &e);
    if (r == ARCHIVE_EOF) break;
    if (r != ARCHIVE_OK) throw bad("truncated or damaged archive");
    if (archive_entry_filetype(e) != AE_IFREG) continue;
    ArchiveMember& m = members.emplace_back();
    m.name = archive_entry_pathname(e);
    if (archive_entry_size_is_set(e))
      too_big(m.name, static_cast<std::uintmax_t>(archive_entry_size(e)));
    char buf[64 * 1024];
    for (;;) {
      const la_ssize_t n = archive_read_data(a.get(), buf, sizeof buf);
      if (n == 0) break;
      if (n < 0)
        throw bad("truncated or damaged archive: " + m.name + " cannot be read to its end");
      m.data.append(buf, static_cast<std::size_t>(n));
      too_big(m.name, m.data.size());
    }
    total += m.data.size();
  }
  return members;
}

}  // namespace nightjar
