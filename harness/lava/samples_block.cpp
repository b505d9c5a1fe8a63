// Files between marker lines on a serial console: see harness/lava/samples_block.h.
// gzip through zlib (deflate with a gzip header, RFC 1952), base64 through
// Boost.Serialization's dataflow iterators (header-only).
#include "harness/lava/samples_block.h"

#include <zlib.h>

#include <boost/archive/iterators/base64_from_binary.hpp>
#include <boost/archive/iterators/binary_from_base64.hpp>
#include <boost/archive/iterators/dataflow_exception.hpp>
#include <boost/archive/iterators/transform_width.hpp>

#include <fmt/format.h>

#include <cctype>
#include <optional>
#include <regex>
#include <stdexcept>
#include <vector>

#include "results/model/identity.h"
#include "results/model/text.h"

namespace nightjar {
namespace {

constexpr std::size_t kLineChars = 76;  // RFC 2045's line length
constexpr const char* kBegin = "nightjar-lava: begin ";
constexpr const char* kEnd = "nightjar-lava: end ";

// gzip (windowBits 15 + 16) of `data`, level 9.
std::string gzip(std::string_view data) {
  z_stream z{};
  if (deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw std::runtime_error("zlib: deflateInit2 failed");
  std::string out(deflateBound(&z, static_cast<uLong>(data.size())) + 32, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  if (rc != Z_STREAM_END) throw std::runtime_error("zlib: deflate did not finish");
  return out;
}

// The content of a gzip stream, at most `limit` bytes; nullopt when it is
// not one or holds more.
std::optional<std::string> gunzip(std::string_view data, std::size_t limit) {
  z_stream z{};
  if (inflateInit2(&z, 15 + 16) != Z_OK) return std::nullopt;
  std::string out(limit + 1, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int rc = inflate(&z, Z_FINISH);
  const std::size_t n = z.total_out;
  inflateEnd(&z);
  if (rc != Z_STREAM_END || n > limit) return std::nullopt;
  out.resize(n);
  return out;
}

std::string base64(std::string_view data) {
  using namespace boost::archive::iterators;
  using It = base64_from_binary<transform_width<const char*, 6, 8>>;
  std::string out(It(data.data()), It(data.data() + data.size()));
  out.append((3 - data.size() % 3) % 3, '=');
  return out;
}

// nullopt for text that is not base64 (a bad character, a bad length).
std::optional<std::string> unbase64(std::string text) {
  using namespace boost::archive::iterators;
  using It = transform_width<binary_from_base64<const char*>, 8, 6>;
  if (text.size() % 4 != 0) return std::nullopt;
  std::size_t pad = 0;
  while (!text.empty() && text.back() == '=' && pad < 2) {
    text.pop_back();
    ++pad;
  }
  if (text.find('=') != std::string::npos) return std::nullopt;
  try {
    std::string out(It(text.data()), It(text.data() + text.size()));
    // The decoder emits the bits of the last group padded to a whole byte.
    const std::size_t bytes = (text.size() + pad) / 4 * 3 - pad;
    out.resize(bytes);
    return out;
  } catch (const dataflow_exception&) {
    return std::nullopt;
  }
}

bool base64_line(std::string_view line) {
  if (line.empty()) return false;
  for (char c : line)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '+' && c != '/' && c != '=')
      return false;
  return true;
}

// One block while its lines are read.
struct OpenBlock {
  std::string name;
  std::size_t bytes = 0;
  std::string digest;
  std::string text;  // the base64 lines joined
};

}  // namespace

std::string encode_console_block(const std::string& name, std::string_view content) {
  const std::string b64 = base64(gzip(content));
  std::string out = fmt::format("{}{} gzip+base64 bytes={} fnv1a64={}\n", kBegin, name,
                                content.size(), fnv1a64_hex(content));
  for (std::size_t at = 0; at < b64.size(); at += kLineChars)
    out += b64.substr(at, kLineChars) + "\n";
  return out + kEnd + name + "\n";
}

ConsoleBlocks decode_console_blocks(std::string_view console) {
  static const std::regex begin_re(
      R"re(nightjar-lava: begin ([A-Za-z0-9._-]+) gzip\+base64 bytes=([0-9]{1,12}) fnv1a64=([0-9a-f]{16}))re");
  ConsoleBlocks found;
  std::optional<OpenBlock> open;
  auto refuse = [&](const std::string& name, const std::string& why) {
    if (!found.files.count(name)) found.broken[name] = why;
  };
  for (const auto& raw : split(std::string(console), '\n')) {
    const std::string line(trim(raw));
    std::smatch m;
    if (line.find(kBegin) != std::string::npos && std::regex_search(line, m, begin_re)) {
      if (open) refuse(open->name, "its block was cut short by another block's begin line");
      open = OpenBlock{m[1].str(), std::stoull(m[2].str()), m[3].str(), ""};
      continue;
    }
    if (!open) continue;
    if (line == kEnd + open->name) {
      std::optional<std::string> packed = unbase64(open->text);
      std::optional<std::string> content =
          packed ? gunzip(*packed, open->bytes) : std::optional<std::string>();
      if (!packed)
        refuse(open->name, "its base64 text is damaged");
      else if (!content)
        refuse(open->name, "its gzip data is damaged or longer than its begin line says");
      else if (content->size() != open->bytes || fnv1a64_hex(*content) != open->digest)
        refuse(open->name,
               fmt::format("its content ({} bytes, fnv1a64 {}) is not what its begin line says "
                           "({} bytes, fnv1a64 {})",
                           content->size(), fnv1a64_hex(*content), open->bytes, open->digest));
      else {
        found.broken.erase(open->name);
        found.files[open->name] = std::move(*content);
      }
      open.reset();
      continue;
    }
    if (base64_line(line)) open->text += line;
  }
  if (open) refuse(open->name, "its end line never came (the console stopped inside the block)");
  return found;
}

}  // namespace nightjar
