// FNV-1a-64 of a kernel config (results/model/identity.h).
#include "results/model/identity.h"

#include <cstdio>

namespace nightjar {

std::string fnv1a64_hex(std::string_view data) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : data) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace nightjar
