// Files that come home from a LAVA device over its serial console
// (docs/lava.md "How the data comes home"). LAVA 2023.01 has no artifact
// upload from the device, so the guest prints each file gzip-compressed and
// base64-encoded (RFC 4648, 76 characters a line) between marker lines:
//
//   nightjar-lava: begin samples.csv gzip+base64 bytes=1234 fnv1a64=0123456789abcdef
//   H4sIAAAAAAAAA+2d...
//   nightjar-lava: end samples.csv
//
// `bytes` and `fnv1a64` (results/model/identity.h fnv1a64_hex) are those of
// the file itself, before compression, so that the host can tell a complete,
// unchanged file from one cut short or mixed with kernel messages. By hand:
// copy the lines between the markers and `base64 -d | gunzip`.
#pragma once

#include <map>
#include <string>
#include <string_view>

namespace nightjar {

/// The block of file `name` (a word: letters, digits, '.', '-', '_') holding
/// `content`, with its marker lines, each line ending in "\n".
std::string encode_console_block(const std::string& name, std::string_view content);

/// What the blocks found in a console text hold.
struct ConsoleBlocks {
  std::map<std::string, std::string> files;  ///< name -> content of each intact block
  /// name -> why its block was refused (cut short, digest mismatch, bad
  /// base64 or gzip); a name found intact later is not listed.
  std::map<std::string, std::string> broken;
};

/// Finds every block in `console` (lines; "\r" and surrounding blanks are
/// ignored, so do lines between the markers that hold anything but base64
/// characters: kernel messages) and decodes it. A name given twice keeps the
/// last intact block. Never throws for bad content: it is reported in
/// `broken`.
ConsoleBlocks decode_console_blocks(std::string_view console);

}  // namespace nightjar
