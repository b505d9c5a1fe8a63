// Kernel and program symbols for the perf-profile monitor.
#include "workloads/sys/symbols.h"

#include <cxxabi.h>
#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>

#include "results/model/text.h"
#include "workloads/sys/fs.h"

namespace nightjar {
namespace {

std::optional<std::uint64_t> hex(std::string_view s) {
  std::uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 16);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

// Reads a T at `offset` of `bytes`, or nullopt when it does not fit.
template <typename T>
std::optional<T> at(std::string_view bytes, std::uint64_t offset) {
  if (offset > bytes.size() || bytes.size() - offset < sizeof(T)) return std::nullopt;
  T v;
  std::memcpy(&v, bytes.data() + offset, sizeof v);
  return v;
}

}  // namespace

KernelSymbols KernelSymbols::parse(std::string_view kallsyms) {
  KernelSymbols out;
  bool any_address = false;
  std::size_t lines = 0;
  while (!kallsyms.empty()) {
    const std::size_t nl = kallsyms.find('\n');
    std::string_view line = kallsyms.substr(0, nl);
    kallsyms = nl == std::string_view::npos ? std::string_view{} : kallsyms.substr(nl + 1);
    const std::vector<std::string> f = split_blanks(line);
    if (f.size() < 3 || f[1].size() != 1) continue;
    ++lines;
    const auto address = hex(f[0]);
    if (!address) continue;
    if (*address != 0) any_address = true;
    const char type = f[1][0];
    if (type != 't' && type != 'T' && type != 'w' && type != 'W') continue;
    out.symbols_.push_back({*address, f[2]});
  }
  if (!any_address) {
    out.symbols_.clear();
    out.unavailable_ =
        lines == 0 ? "no symbols in kallsyms"
                   : "kallsyms shows every address as 0: the kernel hides them "
                     "(kernel.kptr_restrict, or no CAP_SYSLOG: run as root); kernel frames are "
                     "stored as [kernel]";
    return out;
  }
  std::stable_sort(out.symbols_.begin(), out.symbols_.end(),
                   [](const Symbol& a, const Symbol& b) { return a.address < b.address; });
  return out;
}

KernelSymbols KernelSymbols::load(const std::string& path) {
  int err = 0;
  auto text = read_small_file(path, &err, std::size_t{256} << 20);
  if (!text) {
    KernelSymbols out;
    out.unavailable_ =
        "cannot read " + path + ": " + errno_text(err) + "; kernel frames are stored as [kernel]";
    return out;
  }
  KernelSymbols out = parse(*text);
  if (!out.unavailable_.empty()) out.unavailable_ = path + ": " + out.unavailable_;
  return out;
}

const std::string* KernelSymbols::find(std::uint64_t address) const {
  auto it = std::upper_bound(symbols_.begin(), symbols_.end(), address,
                             [](std::uint64_t a, const Symbol& s) { return a < s.address; });
  if (it == symbols_.begin()) return nullptr;
  --it;
  if (it + 1 == symbols_.end() && address - it->address > (std::uint64_t{16} << 20)) return nullptr;
  return &it->name;
}

std::string short_symbol_name(const std::string& mangled) {
  int status = 0;
  char* d = abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status);
  if (status != 0 || !d) return mangled;
  std::string name(d);
  std::free(d);
  // Cut at the '(' of the parameter list: the first one outside <...> and
  // {...} that does not open "(anonymous namespace)".
  int depth = 0;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (c == '<' || c == '{') ++depth;
    if ((c == '>' || c == '}') && depth > 0) --depth;
    if (c != '(' || depth != 0) continue;
    if (std::string_view(name).substr(i).starts_with("(anonymous namespace)")) {
      i += std::strlen("(anonymous namespace)") - 1;
      continue;
    }
    if (i > 0) name.resize(i);
    break;
  }
  return name;
}

std::vector<FileMapping> parse_mappings(std::string_view maps, std::string_view file) {
  std::vector<FileMapping> out;
  for (const auto& line : split(maps, '\n')) {
    // start-end perms offset dev inode path
    const std::vector<std::string> f = split_blanks(line);
    if (f.size() < 6 || f[5] != file) continue;
    const std::size_t dash = f[0].find('-');
    if (dash == std::string::npos) continue;
    auto start = hex(std::string_view(f[0]).substr(0, dash));
    auto end = hex(std::string_view(f[0]).substr(dash + 1));
    auto offset = hex(f[2]);
    if (start && end && offset) out.push_back({*start, *end, *offset});
  }
  return out;
}

ProgramSymbols ProgramSymbols::parse(std::string_view elf, std::vector<FileMapping> mappings) {
  ProgramSymbols out;
  out.mappings_ = std::move(mappings);
  const auto eh = at<Elf64_Ehdr>(elf, 0);
  if (!eh || std::memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
      eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_ident[EI_DATA] != ELFDATA2LSB) {
    out.unavailable_ = "the program is not a little-endian ELF64 file";
    return out;
  }
  for (int i = 0; i < eh->e_phnum; ++i) {
    auto ph = at<Elf64_Phdr>(elf, eh->e_phoff + std::uint64_t{eh->e_phentsize} * i);
    if (ph && ph->p_type == PT_LOAD)
      out.segments_.push_back({ph->p_offset, ph->p_filesz, ph->p_vaddr});
  }
  std::optional<Elf64_Shdr> table;
  for (std::uint32_t want : {SHT_SYMTAB, SHT_DYNSYM}) {
    for (int i = 0; i < eh->e_shnum && !table; ++i) {
      auto sh = at<Elf64_Shdr>(elf, eh->e_shoff + std::uint64_t{eh->e_shentsize} * i);
      if (sh && sh->sh_type == want) table = sh;
    }
    if (table) break;
  }
  const auto strings =
      table ? at<Elf64_Shdr>(elf, eh->e_shoff + std::uint64_t{eh->e_shentsize} * table->sh_link)
            : std::nullopt;
  if (table && strings && table->sh_entsize == sizeof(Elf64_Sym)) {
    for (std::uint64_t off = 0; off + sizeof(Elf64_Sym) <= table->sh_size;
         off += sizeof(Elf64_Sym)) {
      auto sym = at<Elf64_Sym>(elf, table->sh_offset + off);
      if (!sym || ELF64_ST_TYPE(sym->st_info) != STT_FUNC || sym->st_size == 0 ||
          sym->st_value == 0)
        continue;
      if (sym->st_name >= strings->sh_size || strings->sh_offset + sym->st_name >= elf.size())
        continue;
      const char* s = elf.data() + strings->sh_offset + sym->st_name;
      const std::size_t room = elf.size() - (strings->sh_offset + sym->st_name);
      const std::string name(s, strnlen(s, room));
      out.functions_.push_back({sym->st_value, sym->st_size, short_symbol_name(name)});
    }
  }
  if (out.functions_.empty()) {
    out.unavailable_ =
        "the program has no function symbols (stripped); its frames are stored as "
        "[unknown]";
    return out;
  }
  std::sort(out.functions_.begin(), out.functions_.end(),
            [](const Function& a, const Function& b) { return a.address < b.address; });
  return out;
}

ProgramSymbols ProgramSymbols::file(const std::string& path, std::vector<FileMapping> mappings) {
  ProgramSymbols out;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st {};
  if (fd < 0 || ::fstat(fd, &st) != 0 || st.st_size <= 0) {
    const int err = errno;
    if (fd >= 0) ::close(fd);
    out.unavailable_ = "cannot read " + path + ": " + errno_text(err);
    return out;
  }
  const auto size = static_cast<std::size_t>(st.st_size);
  void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  const int err = errno;
  ::close(fd);
  if (map == MAP_FAILED) {
    out.unavailable_ = "cannot map " + path + ": " + errno_text(err);
    return out;
  }
  out = parse(std::string_view(static_cast<const char*>(map), size), std::move(mappings));
  ::munmap(map, size);
  return out;
}

ProgramSymbols ProgramSymbols::self() {
  char path[4096];
  const ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) {
    ProgramSymbols out;
    out.unavailable_ = "cannot read /proc/self/exe: " + errno_text(errno);
    return out;
  }
  const std::string maps =
      read_small_file("/proc/self/maps", nullptr, std::size_t{16} << 20).value_or("");
  // /proc/self/exe, not the link's target: it stays readable when the file
  // was replaced or deleted since the program started.
  return file("/proc/self/exe",
              parse_mappings(maps, std::string_view(path, static_cast<std::size_t>(n))));
}

std::optional<std::uint64_t> ProgramSymbols::link_address(std::uint64_t address) const {
  for (const auto& m : mappings_) {
    if (address < m.start || address >= m.end) continue;
    const std::uint64_t file_offset = address - m.start + m.offset;
    for (const auto& s : segments_)
      if (file_offset >= s.offset && file_offset < s.offset + s.filesz)
        return s.vaddr + (file_offset - s.offset);
  }
  return std::nullopt;
}

const std::string* ProgramSymbols::find(std::uint64_t address) const {
  const auto link = link_address(address);
  if (!link) return nullptr;
  auto it = std::upper_bound(functions_.begin(), functions_.end(), *link,
                             [](std::uint64_t a, const Function& f) { return a < f.address; });
  if (it == functions_.begin()) return nullptr;
  --it;
  return *link < it->address + it->size ? &it->name : nullptr;
}

}  // namespace nightjar
