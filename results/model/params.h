// Typed workload parameters and matrix cells.
//
// A parameter is declared by a workload (ParamDescriptor) and given by a job
// file or --set as text: "10K", "20%mem", "500ms", "100%cpus", "threads".
// parse_param() turns text into a ParamValue: a canonical text (used in the
// cell id, so "10240" and "10K" name the same cell) and the resolved number in
// base units (bytes, seconds, count). A Cell is one point of the matrix.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace nightjar {

/// The kinds of parameter value and their base units.
enum class ParamType {
  count,  ///< integer; "4", "100%cpus" (percent of online CPUs, at least 1)
  size,   ///< bytes; "4096", "10K"/"1M"/"1G"/"1T" (powers of 2), "10k"/"1m"/"1g" (powers of 10, as
          ///< netperf), "20%mem" (of MemTotal)
  duration,  ///< seconds; "60s", "500ms", "2m", "1h", plain number = seconds
  number,    ///< real number, no suffix: "2.5"
  text,      ///< free text (a path, a label)
  choice,    ///< one of ParamDescriptor::choices
  flag,      ///< on/off, true/false, yes/no, 1/0
};

/// "count", "size", ...: the name `nightjar list` prints.
const char* to_string(ParamType t);

/// A workload's declaration of one parameter (shown by `nightjar list`).
/// Workloads write it with designated initializers, fields in this order
/// (`{.name = "clients", .type = ParamType::count, .doc = "..."}`): `name`
/// and `doc` have no default, so -Wextra's -Wmissing-field-initializers
/// reports a declaration without them; every other field may be left out.
struct ParamDescriptor {
  std::string name;
  ParamType type = ParamType::count;
  std::string unit = {};  ///< for humans: "bytes", "s", "workers"
  /// Text form, parsed like job input. "" = required, except for ParamType::text,
  /// where "" means the default is the empty text (an optional text such as fake's `script`).
  std::string default_value = {};
  std::string doc;                        ///< one line: what it means
  std::vector<std::string> choices = {};  ///< for ParamType::choice
  std::optional<double> min = {};         ///< inclusive lower bound in base units
  std::optional<double> max = {};         ///< inclusive upper bound in base units
};

/// Facts about the machine needed to resolve relative values ("20%mem").
struct MachineFacts {
  std::uint64_t mem_total_bytes = 0;  ///< MemTotal from /proc/meminfo
  unsigned cpus = 1;                  ///< online CPUs
  // Probed from the running system by probe_machine_facts() (workloads/sys/probe.h).
};

/// A parsed parameter value.
struct ParamValue {
  std::string text;   ///< canonical text: "10K", "20%mem", "60s", "threads", "on"
  double number = 0;  ///< resolved in base units: bytes, seconds, count, the number, 1/0 for flags;
                      ///< 0 for text/choice
};

/// One point of the matrix: a workload and a value for every declared parameter.
struct Cell {
  std::string workload;
  std::map<std::string, ParamValue> params;  ///< sorted by key

  /// Canonical identity, keys sorted, space separated: "clients=2 mode=threads size=256M".
  /// Parameters whose text is empty (an unset text parameter) are left out.
  std::string id() const;
  /// Whether the cell has parameter `name` (set, or defaulted by the job loader).
  bool has(const std::string& name) const;
  /// Typed accessors, one per ParamType; throw std::out_of_range naming the
  /// parameter when absent. integer: a ParamType::count value, exact beyond
  /// 2^53 ("4", "100%cpus" resolved).
  std::int64_t integer(const std::string& name) const;
  std::uint64_t bytes(const std::string& name) const;
  double seconds(const std::string& name) const;
  const std::string& text(const std::string& name) const;
  bool flag(const std::string& name) const;
  double number(const std::string& name) const;
};

/// Thrown by parse_param and by workload validation for a bad value. `field`
/// is the parameter name; the message says what is wrong and what to write.
/// The job loader adds file and line.
struct ParamError {
  std::string field;
  std::string message;
};

/// Parses `text` as a value of `desc`, resolving relative units with `machine`.
/// Throws ParamError for a bad suffix, a wrong type, a value outside
/// [desc.min, desc.max], or a choice not in desc.choices.
ParamValue parse_param(const ParamDescriptor& desc, const std::string& text,
                       const MachineFacts& machine);

/// Canonical text of a byte count: the largest binary suffix that divides it
/// exactly (10240 -> "10K", 268435456 -> "256M", 1000 -> "1000").
std::string format_size(std::uint64_t bytes);

/// Human text of a byte count in powers of 1024, one decimal: "4.0 GiB",
/// "23.5 MiB"; below 1 KiB the exact count, "512 bytes". For messages.
std::string human_bytes(std::uint64_t bytes);

/// A cell's `size` as the job wrote it, then its byte count in human units:
/// "20%mem (4.7 GiB)"; the bare byte count when the cell has no `size`. For
/// the workloads' messages about sizes (pft, tmpfs_refault).
std::string size_text(const Cell& cell, std::uint64_t bytes);

}  // namespace nightjar
