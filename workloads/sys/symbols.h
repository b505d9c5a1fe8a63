// Symbol lookup for the perf-profile monitor (docs/compare.md "How symbols
// are resolved"): kernel addresses through /proc/kallsyms, user addresses
// of nightjar's own program (and of the processes it forks, which share
// its mappings) through the function symbols of its ELF file.
//
// The ELF symbol table is read with glibc's <elf.h> declarations, not a
// library: Debian's libelf (elfutils) would add libelf-dev and its static
// archives (libelf.a, libz, libzstd) to the static guest binaries
// (docs/qemu.md), while what is needed here is one walk of .symtab and the
// program headers. Names are demangled with the C++ runtime's
// abi::__cxa_demangle.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nightjar {

/// The text symbols of the kernel, from the text of /proc/kallsyms.
class KernelSymbols {
 public:
  KernelSymbols() = default;
  /// Parses kallsyms text: "ADDRESS TYPE NAME [MODULE]" lines, hexadecimal
  /// addresses. Keeps text symbols (types t, T, w, W); a module's symbols
  /// keep their name without the module. When every address is 0 (the
  /// kernel hides them: kptr_restrict, or a reader without CAP_SYSLOG)
  /// nothing is kept and unavailable() says why. Never throws.
  static KernelSymbols parse(std::string_view kallsyms);
  /// Reads and parses `path` (default /proc/kallsyms); unavailable() names
  /// the file and errno when it cannot be read.
  static KernelSymbols load(const std::string& path = "/proc/kallsyms");

  /// The symbol whose range holds `address` (the last symbol at or below
  /// it), or nullptr when below the first symbol, above the last one by
  /// more than 16 MiB, or when nothing was kept.
  const std::string* find(std::uint64_t address) const;
  /// Text symbols kept.
  std::size_t size() const { return symbols_.size(); }
  /// "" or why kernel addresses stay unresolved ("/proc/kallsyms shows every
  /// address as 0 (kptr_restrict=1 ...)").
  const std::string& unavailable() const { return unavailable_; }

 private:
  struct Symbol {
    std::uint64_t address;
    std::string name;
  };
  std::vector<Symbol> symbols_;  // ascending by address
  std::string unavailable_;
};

/// One mapping of a file into a process's address space (a /proc/PID/maps
/// line): [start, end) at file offset `offset`.
struct FileMapping {
  std::uint64_t start = 0, end = 0, offset = 0;
};

/// The function symbols of one ELF program and where it is mapped, to name
/// the run-time addresses of its code.
class ProgramSymbols {
 public:
  ProgramSymbols() = default;
  /// From an ELF64 file's bytes (`elf`) and its mappings: the STT_FUNC
  /// symbols of .symtab (else .dynsym) with a size, names demangled and
  /// cut at their parameter list ("nightjar::Foo::bar"), and the PT_LOAD
  /// segments that turn a file offset into a link-time address. A file that
  /// is not ELF64 of this machine's byte order, or that has no function
  /// symbols (stripped), gives an empty table and unavailable() says why.
  static ProgramSymbols parse(std::string_view elf, std::vector<FileMapping> mappings);
  /// The running program: /proc/self/exe and its mappings in
  /// /proc/self/maps (the processes nightjar forks share them).
  static ProgramSymbols self();
  /// The ELF file at `path` mapped at `mappings` in some process (a program
  /// nightjar exec'd, or one of its libraries: the perf-profile monitor
  /// learns both from the kernel's PERF_RECORD_MMAP records). A file that
  /// cannot be read gives an empty table and unavailable() names it and
  /// errno.
  static ProgramSymbols file(const std::string& path, std::vector<FileMapping> mappings);

  /// The function holding run-time address `address`, or nullptr.
  const std::string* find(std::uint64_t address) const;
  std::size_t size() const { return functions_.size(); }
  /// "" or why user addresses of the program stay unresolved.
  const std::string& unavailable() const { return unavailable_; }

 private:
  struct Function {
    std::uint64_t address, size;
    std::string name;
  };
  struct Segment {
    std::uint64_t offset, filesz, vaddr;
  };
  std::optional<std::uint64_t> link_address(std::uint64_t address) const;
  std::vector<Function> functions_;  // ascending by address
  std::vector<Segment> segments_;
  std::vector<FileMapping> mappings_;
  std::string unavailable_;
};

/// A demangled C++ name cut before its parameter list and without a
/// trailing " const" etc.: "nightjar::(anonymous namespace)::run(int)" ->
/// "nightjar::(anonymous namespace)::run". A name that is not mangled is
/// returned as it is.
std::string short_symbol_name(const std::string& mangled);

/// The mappings of `file` (a path as /proc/PID/maps prints it) in the text
/// of a maps file.
std::vector<FileMapping> parse_mappings(std::string_view maps, std::string_view file);

}  // namespace nightjar
