// Google Benchmark JSON -> nightjar samples: see results/formats/gbench.h.
#include "results/formats/gbench.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <iterator>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "results/formats/json_text.h"
#include "results/model/exit_codes.h"
#include "results/model/identity.h"
#include "results/model/text.h"

namespace nightjar {
namespace {

using ordered_json = nlohmann::ordered_json;

// Keys of a benchmark entry that are not measurements (Google Benchmark
// 1.5-1.8 JSON reporter; big_o/rms/coefficients belong to complexity
// aggregates).
const std::set<std::string, std::less<>> kNotMetrics = {"name",
                                                        "family_index",
                                                        "per_family_instance_index",
                                                        "run_name",
                                                        "run_type",
                                                        "repetitions",
                                                        "repetition_index",
                                                        "threads",
                                                        "iterations",
                                                        "time_unit",
                                                        "aggregate_name",
                                                        "aggregate_unit",
                                                        "error_occurred",
                                                        "error_message",
                                                        "skipped",
                                                        "skip_message",
                                                        "label",
                                                        "big_o",
                                                        "cpu_coefficient",
                                                        "real_coefficient",
                                                        "rms",
                                                        "complexity_n",
                                                        "real_time",
                                                        "cpu_time"};

// Google Benchmark's memory manager results: lower is better.
const std::map<std::string, std::string, std::less<>> kMemoryCounters = {
    {"allocs_per_iter", "allocs"},
    {"max_bytes_used", "bytes"},
    {"total_allocated_bytes", "bytes"},
    {"net_heap_growth", "bytes"}};

std::string scalar_text(const ordered_json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_number_integer()) return std::to_string(v.get<std::int64_t>());
  if (v.is_number()) return fmt::format("{}", v.get<double>());
  if (v.is_primitive()) return v.dump();  // null
  return v.type_name();  // never dump() an array or object: it recurses (deep nesting)
}

// A value for a message: a scalar as JSON text (cut and escaped, echo_input),
// an array or object by its type only (dump() would recurse into any depth).
std::string json_text(const ordered_json& v) {
  return v.is_primitive() ? echo_input(v.dump()) : std::string("an ") + v.type_name();
}

// Decimal exponent of a time unit (ns -9 ... s 0).
int time_unit_exponent(std::string_view unit) {
  if (unit == "ns") return -9;
  if (unit == "us") return -6;
  if (unit == "ms") return -3;
  return 0;
}

// `v` in `from` expressed in `to`: multiplied or divided by an exact power of
// ten, so that 1.5 us is 1500 ns exactly (a ratio of 1e-6 and 1e-9 is not).
double convert_time(double v, std::string_view from, std::string_view to) {
  int shift = time_unit_exponent(from) - time_unit_exponent(to);
  double scale = 1;
  for (int i = 0; i < (shift < 0 ? -shift : shift); ++i) scale *= 10;
  return shift >= 0 ? v * scale : v / scale;
}

}  // namespace

std::size_t GbenchReport::samples() const {
  std::size_t n = 0;
  for (const auto& r : repetitions) n += r.size();
  return n;
}

double gbench_time_unit_seconds(std::string_view unit) {
  if (unit == "ns") return 1e-9;
  if (unit == "us") return 1e-6;
  if (unit == "ms") return 1e-3;
  if (unit == "s") return 1.0;
  return 0;
}

std::vector<MetricDescriptor> parse_counter_declarations(const std::string& text,
                                                         const std::string& field) {
  std::vector<MetricDescriptor> out;
  try {
    out = parse_metric_declarations(text);
  } catch (const ParamError& e) {
    throw ParamError{field, e.message};
  }
  for (auto& d : out) {
    if (d.name == "real_time" || d.name == "cpu_time" || d.name == "wall_time")
      throw ParamError{field,
                       fmt::format("'{}' is not a counter: real_time and cpu_time are lower is "
                                   "better in the time unit (choose it with the time unit "
                                   "option); declare counters such as "
                                   "bytes_per_second:bytes/s:higher",
                                   d.name)};
    d.doc = "Google Benchmark user counter";
  }
  return out;
}

MetricDescriptor gbench_counter_metric(const std::string& benchmark, const std::string& counter,
                                       const GbenchOptions& options) {
  MetricDescriptor d;
  d.name = benchmark + "." + counter;
  for (const auto& c : options.counters)
    if (c.name == counter) {
      d.unit = c.unit;
      d.direction = c.direction;
      d.mean = c.mean;
      d.doc = "Google Benchmark counter " + counter + " (declared)";
      return d;
    }
  if (auto it = kMemoryCounters.find(counter); it != kMemoryCounters.end()) {
    d.unit = it->second;
    d.direction = Direction::lower_is_better;
    d.mean = MeanKind::arithmetic;
    d.doc = "Google Benchmark memory manager: " + counter;
    return d;
  }
  constexpr std::string_view kRate = "_per_second";
  if (counter.size() > kRate.size() && counter.ends_with(kRate)) {
    d.unit = counter.substr(0, counter.size() - kRate.size()) + "/s";
    d.direction = Direction::higher_is_better;
    d.mean = MeanKind::harmonic;
    d.doc = "Google Benchmark rate counter " + counter;
    return d;
  }
  d.unit = "";
  d.direction = Direction::higher_is_better;
  d.mean = MeanKind::arithmetic;
  d.doc = "Google Benchmark user counter " + counter;
  return d;
}

MetricDescriptor gbench_time_metric(const std::string& benchmark, const std::string& field,
                                    const std::string& unit) {
  return {benchmark + "." + field, unit, Direction::lower_is_better, MeanKind::arithmetic,
          "Google Benchmark " + field + " per iteration"};
}

namespace {

constexpr const char* kHow =
    "write it with the benchmark binary's --benchmark_out=FILE (or --benchmark_format=json)";

ordered_json parse_document(std::string_view text, const std::string& source) {
  // A report nests 3 levels.
  ordered_json doc = parse_json_text(text, source, kHow);
  if (!doc.is_object() || !doc.contains("benchmarks") || !doc["benchmarks"].is_array())
    throw UsageError(fmt::format(
        "{}: not a Google Benchmark JSON report (no \"benchmarks\" array); {}", source, kHow));
  return doc;
}

// The report's `context` object: run facts, date, host, executable, CPUs.
void read_context(const ordered_json& context, GbenchReport& report, const std::string& source) {
  for (const auto& [key, value] : context.items()) {
    if (value.is_primitive() && !value.is_null()) {
      report.context["gbench." + key] = scalar_text(value);
    } else if (value.is_array() && key == "load_avg") {
      std::string joined;
      for (const auto& x : value) joined += (joined.empty() ? "" : " ") + scalar_text(x);
      report.context["gbench.load_avg"] = joined;
    }
  }
  auto str = [&](const char* key) {
    auto f = context.find(key);
    return f != context.end() && f->is_string() ? f->get<std::string>() : std::string();
  };
  report.date = str("date");
  if (!report.date.empty()) {
    std::optional<std::string> utc = utc_iso8601(report.date);
    if (!utc)
      throw UsageError(fmt::format(
          "{}: context.date '{}' is not an ISO 8601 date and time with a zone (Google "
          "Benchmark writes 2026-11-30T08:46:49+00:00); fix or remove it (the import time is "
          "used without one)",
          source, echo_input(report.date)));
    report.started_at = *utc;
  }
  report.host_name = str("host_name");
  report.executable = str("executable");
  if (auto f = context.find("num_cpus"); f != context.end() && f->is_number_unsigned())
    report.num_cpus = f->get<unsigned>();
  if (auto f = context.find("cpu_scaling_enabled");
      f != context.end() && f->is_boolean() && f->get<bool>())
    report.warnings.push_back(
        "CPU frequency scaling was enabled while the benchmarks ran (Google Benchmark's "
        "context): real time is noisy; set the cpufreq governor to performance");
}

// Reads the entries of `benchmarks` one by one into the report's repetitions.
class EntryReader {
 public:
  EntryReader(GbenchReport& report, const GbenchOptions& options, const std::string& source)
      : report_(report), options_(options), source_(source) {}

  void read(const ordered_json& e, std::size_t index) {
    if (!e.is_object())
      throw UsageError(fmt::format("{}: benchmarks[{}] is {}, not an object; {}", source_, index,
                                   e.type_name(), kHow));
    auto name_it = e.find("name");
    if (name_it == e.end() || !name_it->is_string() || name_it->get<std::string>().empty())
      throw UsageError(fmt::format("{}: benchmarks[{}] has no \"name\"; {}", source_, index, kHow));
    const std::string name = name_it->get<std::string>();
    std::string run_name = name;
    if (auto r = e.find("run_name"); r != e.end() && r->is_string())
      run_name = r->get<std::string>();
    for (const auto& [field, text] :
         {std::pair<const char*, const std::string*>{"name", &name}, {"run_name", &run_name}})
      if (std::string problem = printable_problem(*text); !problem.empty())
        throw UsageError(fmt::format(
            "{}: benchmarks[{}] \"{}\": '{}' {}; a benchmark name is printable UTF-8 on one line "
            "(it becomes a metric name); {}",
            source_, index, field, echo_input(*text), problem, kHow));
    const std::string where = fmt::format("{}: benchmarks[{}] ({})", source_, index, name);
    if (skipped(e, run_name)) return;
    const std::size_t repetition = repetition_of(e, run_name, where, index);
    const std::string unit = time_unit_of(e, where);
    // One unit per metric: the time unit option, else the unit of the
    // benchmark's first repetition; a later repetition in another unit
    // (a report merged from two runs) is converted to it.
    const std::string to_unit = options_.time_unit.empty()
                                    ? first_unit_.try_emplace(run_name, unit).first->second
                                    : options_.time_unit;
    if (report_.repetitions.size() <= repetition) report_.repetitions.resize(repetition + 1);
    auto& values = report_.repetitions[repetition];
    // A value that cannot be a measurement of its metric (impossible_value:
    // a time or a rate <= 0) is left out with the reason, as CSV refuses it.
    auto add = [&](const MetricDescriptor& d, double v) {
      if (auto why = impossible_value(d, v)) {
        report_.warnings.push_back(
            fmt::format("{} (repetition {}); left out", *why, repetition + 1));
        return;
      }
      values[d.name] = v;
      if (described_.insert(d.name).second) report_.metrics.push_back(d);
      names_.insert(run_name);
    };
    for (const char* field : {"real_time", "cpu_time"}) {
      auto f = e.find(field);
      if (f == e.end()) throw UsageError(fmt::format("{}: no \"{}\"; {}", where, field, kHow));
      if (f->is_null()) {
        left_out(run_name, field, repetition);
        continue;
      }
      if (!f->is_number())
        throw UsageError(
            fmt::format("{}: \"{}\" is {}, not a number; {}", where, field, json_text(*f), kHow));
      add(gbench_time_metric(run_name, field, to_unit),
          convert_time(f->get<double>(), unit, to_unit));
    }
    for (const auto& [key, value] : e.items()) {
      if (kNotMetrics.count(key)) continue;
      if (value.is_null()) {
        left_out(run_name, key, repetition);
        continue;
      }
      if (!value.is_number() || value.is_boolean()) continue;  // a label or other text
      add(gbench_counter_metric(run_name, key, options_), value.get<double>());
    }
    ++report_.iteration_entries;
  }

  /// Distinct run names with at least one sample.
  std::size_t benchmarks() const { return names_.size(); }

 private:
  // Aggregates summarise the repetitions that are already samples; entries
  // that report an error have no samples. Both are counted and skipped.
  bool skipped(const ordered_json& e, const std::string& run_name) {
    bool aggregate = e.contains("aggregate_name");
    if (auto t = e.find("run_type"); t != e.end() && t->is_string())
      aggregate = t->get<std::string>() == "aggregate";
    if (aggregate) {
      ++report_.aggregate_entries;
      return true;
    }
    bool error = false;
    std::string message;
    if (auto f = e.find("error_occurred"); f != e.end() && f->is_boolean()) error = f->get<bool>();
    if (auto f = e.find("skipped"); f != e.end())
      error = error || (f->is_boolean() ? f->get<bool>() : f->is_number() && f->get<double>() != 0);
    if (!error) return false;
    for (const char* key : {"error_message", "skip_message"})
      if (auto f = e.find(key); f != e.end() && f->is_string()) message = f->get<std::string>();
    ++report_.error_entries;
    report_.warnings.push_back(fmt::format("{}: skipped by the benchmark{}{}; no samples", run_name,
                                           message.empty() ? "" : ": ", message));
    return true;
  }

  // The 0-based repetition of an entry: repetition_index, else the count of
  // entries of the same run name before it; a repetition given twice is an error.
  std::size_t repetition_of(const ordered_json& e, const std::string& run_name,
                            const std::string& where, std::size_t index) {
    std::size_t repetition = static_cast<std::size_t>(occurrences_[run_name]++);
    if (auto r = e.find("repetition_index"); r != e.end()) {
      if (!r->is_number_unsigned())
        throw UsageError(fmt::format("{}: \"repetition_index\" is {}, not an integer >= 0; {}",
                                     where, json_text(*r), kHow));
      repetition = r->get<std::size_t>();
    }
    if (!seen_.insert({run_name, repetition}).second)
      throw UsageError(fmt::format(
          "{}: repetition {} of {} is given twice (also benchmarks[{}]); keep one report per file",
          where, repetition + 1, run_name, entry_of_[{run_name, repetition}]));
    entry_of_[{run_name, repetition}] = index;
    return repetition;
  }

  static std::string time_unit_of(const ordered_json& e, const std::string& where) {
    std::string unit = "ns";  // Google Benchmark's default, for reports without time_unit
    if (auto u = e.find("time_unit"); u != e.end()) {
      if (!u->is_string() || gbench_time_unit_seconds(u->get<std::string>()) == 0)
        throw UsageError(
            fmt::format("{}: time_unit {} is not ns, us, ms or s; {}", where, json_text(*u), kHow));
      unit = u->get<std::string>();
    }
    return unit;
  }

  void left_out(const std::string& run_name, const std::string& field, std::size_t repetition) {
    report_.warnings.push_back(
        fmt::format("{}.{} of repetition {} is not a finite number; left out", run_name, field,
                    repetition + 1));
  }

  GbenchReport& report_;
  const GbenchOptions& options_;
  const std::string& source_;
  std::set<std::string> names_;                         // benchmarks with samples
  std::set<std::string> described_;                     // metric names in report.metrics
  std::map<std::string, int> occurrences_;              // run name -> entries seen
  std::map<std::string, std::string> first_unit_;       // run name -> its first time_unit
  std::set<std::pair<std::string, std::size_t>> seen_;  // (run name, repetition)
  std::map<std::pair<std::string, std::size_t>, std::size_t> entry_of_;  // for duplicate errors
};

[[noreturn]] void no_results(const GbenchReport& report, std::size_t entries,
                             const std::string& source) {
  std::string why;
  if (entries == 0)
    why = "the \"benchmarks\" array is empty (did the filter match nothing?)";
  else if (report.aggregate_entries > 0 && report.error_entries == 0)
    why = fmt::format(
        "it holds only {} aggregate entries (mean, median, ...), no repetitions: run the "
        "benchmarks without --benchmark_report_aggregates_only",
        report.aggregate_entries);
  else
    why = fmt::format("every benchmark reported an error ({} entries)", report.error_entries);
  throw UsageError(fmt::format("{}: no benchmark results to import: {}", source, why));
}

// The report's content for its identity: the context facts, then every
// entry's scalar fields in file order (a nested value counts by its type
// only). Independent of the import options and of the file's layout, and
// never recursive: json::dump() of a deeply nested value overflows the stack.
std::string content_digest(const GbenchReport& report, const ordered_json& entries) {
  std::string text;
  for (const auto& [key, value] : report.context) text += key + "=" + value + "\n";
  for (const auto& e : entries) {
    text += "{\n";
    if (e.is_object()) {
      for (const auto& [key, value] : e.items())
        text += key + "=" + (value.is_primitive() ? value.dump() : value.type_name()) + "\n";
    } else {
      text += e.is_primitive() ? e.dump() : e.type_name();
    }
    text += "}\n";
  }
  return fnv1a64_hex(text);
}

}  // namespace

GbenchReport parse_gbench_json(std::string_view text, const GbenchOptions& options,
                               const std::string& source) {
  if (!options.time_unit.empty() && gbench_time_unit_seconds(options.time_unit) == 0)
    throw UsageError(fmt::format("time unit '{}': write ns, us, ms or s", options.time_unit));
  const ordered_json doc = parse_document(text, source);
  GbenchReport report;
  if (auto it = doc.find("context"); it != doc.end() && it->is_object())
    read_context(*it, report, source);
  else
    report.warnings.push_back(
        "the report has no \"context\" object: its host, date and CPUs are unknown (recorded "
        "testbox 'unknown', dated at import)");
  EntryReader reader(report, options, source);
  const auto& entries = doc["benchmarks"];
  for (std::size_t index = 0; index < entries.size(); ++index) reader.read(entries[index], index);
  // Drop trailing repetitions that hold nothing (every entry errored).
  while (!report.repetitions.empty() && report.repetitions.back().empty())
    report.repetitions.pop_back();
  report.benchmarks = reader.benchmarks();
  if (report.samples() == 0) no_results(report, entries.size(), source);
  report.report_digest = content_digest(report, entries);
  return report;
}

std::string default_gbench_job(const GbenchReport& report, const std::string& file_path) {
  namespace fs = std::filesystem;
  std::string stem;
  if (!report.executable.empty()) stem = fs::path(report.executable).stem().string();
  if (stem.empty()) stem = fs::path(file_path).stem().string();
  if (stem.empty() || stem == "-") stem = "gbench";
  return stem;
}

}  // namespace nightjar
