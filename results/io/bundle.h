// Reproducer bundles: the gzip'd tar archive `nightjar bundle` writes and
// `nightjar import FILE.tar.gz` reads (docs/publish.md "Bundles"). This file
// is the archive layer only (libarchive: ustar members, gzip filter); what
// goes into a bundle is harness/cli/cmd_bundle.cpp's business.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nightjar {

/// One file of an archive: its path inside the archive ("README.txt",
/// "jobs/" and the job file's name) and its bytes.
struct ArchiveMember {
  std::string name;
  std::string data;
};

/// Writes `members`, in order, as a gzip'd ustar archive to `path` (mode
/// 0644 files, modification time `mtime`, seconds since the epoch). Written
/// as PATH.tmpPID and renamed, so a failure leaves no half archive. Throws
/// EnvironmentError naming `path` and libarchive's message when the file
/// cannot be created or written.
void write_tar_gz(const std::string& path, const std::vector<ArchiveMember>& members,
                  std::int64_t mtime);

/// True when `path` names a gzip file: its name ends in .tar.gz or .tgz, or
/// it is a regular file whose first two bytes are the gzip magic 1f 8b (RFC
/// 1952). False for "-", for FIFOs and devices (never read here) and for a
/// file that cannot be read (the caller's open reports those).
bool looks_like_tar_gz(const std::string& path);

/// Every regular member of the gzip'd tar archive `path`, in archive order
/// (one pass). Throws UsageError naming `path` and the fix when the file is
/// not a gzip'd tar archive or is truncated or damaged (libarchive's
/// message), when a member is larger than `max_member_bytes`, or when the
/// members hold more than `max_total_bytes` in all.
std::vector<ArchiveMember> read_tar_gz(const std::string& path, std::uintmax_t max_member_bytes,
                                       std::uintmax_t max_total_bytes);

}  // namespace nightjar
