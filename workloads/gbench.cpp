// The `gbench` workload: runs a Google Benchmark binary and stores its
// results as samples, so that users' own micro benchmarks get nightjar's
// matrices, compare, check, trend and bisect (docs/data.md "The gbench
// workload").
//
// Parameters: `binary` (required), `filter` (--benchmark_filter), `repetitions`
// (--benchmark_repetitions per invocation), `args` (more arguments for the
// binary, split like exec's command), `counters` (units and directions of
// user counters), `time_unit` (ns by default) and `timeout`.
//
// Metrics are the benchmarks' own, named `<benchmark>.<field>` exactly as
// `nightjar import --format gbench` names them (results/formats/gbench.h):
// `BM_memcpy/8.real_time`, `BM_memcpy/8.cpu_time` (lower is better, in
// `time_unit`), `BM_memcpy/8.bytes_per_second` (bytes/s, higher is better)...
// They are declared before the run from `binary --benchmark_list_tests`
// (real_time, cpu_time, bytes_per_second, items_per_second and the
// `counters` of every listed benchmark), which is why real_time and cpu_time
// have one configured unit instead of each benchmark's own.
//
// Iterations: each invocation runs every benchmark `repetitions` times, with
// --benchmark_out=FILE --benchmark_out_format=json; repetition k of an
// invocation is one nightjar iteration, so with the default repetitions: 1
// every iteration is a fresh process, and with repetitions: R the binary runs
// once per R iterations (the first iteration of each batch carries the
// invocation's time and monitor deltas). Aggregates are never stored.
// A warm-up iteration runs the binary once with one repetition.
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "results/formats/gbench.h"
#include "results/model/exit_codes.h"
#include "workloads/sys/process.h"
#include "workloads/workload.h"

namespace nightjar {
namespace {

// Flags nightjar sets itself, or that would leave no repetitions in the JSON
// report: the user's `args` must not override them.
constexpr const char* kOwnFlags[] = {
    "--benchmark_out",    "--benchmark_out_format", "--benchmark_repetitions",
    "--benchmark_filter", "--benchmark_list_tests", "--benchmark_report_aggregates_only"};

struct GbenchConfig {
  std::string binary, filter, time_unit;
  int repetitions = 1;
  std::vector<std::string> args;
  std::vector<MetricDescriptor> counters;
  double timeout = 600;

  /// binary [--benchmark_filter=F] args...
  std::vector<std::string> argv() const {
    std::vector<std::string> v = {binary};
    if (!filter.empty()) v.push_back("--benchmark_filter=" + filter);
    v.insert(v.end(), args.begin(), args.end());
    return v;
  }
  GbenchOptions options() const { return {time_unit, counters}; }
};

GbenchConfig gbench_config_of(const Cell& cell) {
  GbenchConfig c;
  c.binary = cell.text("binary");
  c.filter = cell.text("filter");
  c.time_unit = cell.text("time_unit");
  c.repetitions = static_cast<int>(cell.integer("repetitions"));
  c.timeout = cell.seconds("timeout");
  const std::string& args = cell.text("args");
  if (args.find_first_not_of(" \t\r\n") != std::string::npos) {
    c.args = split_command_line(args, "args");
    for (const auto& a : c.args)
      for (const char* own : kOwnFlags) {
        std::string_view flag(own);
        if (a == flag || (a.starts_with(flag) && a[flag.size()] == '='))
          throw ParamError{"args", fmt::format("'{}' is set by nightjar; use the parameters "
                                               "filter and repetitions instead, and leave the "
                                               "output flags to nightjar",
                                               a)};
      }
  }
  c.counters = parse_counter_declarations(cell.text("counters"), "counters");
  return c;
}

// The benchmarks the binary would run: `binary --benchmark_list_tests`.
// Returns the names, or sets `error` (why the listing failed).
std::vector<std::string> list_benchmarks(const GbenchConfig& c, std::string& error,
                                         bool with_filter = true) {
  CommandSpec spec;
  spec.argv = c.argv();
  if (!with_filter && !c.filter.empty()) spec.argv.erase(spec.argv.begin() + 1);
  spec.argv.push_back("--benchmark_list_tests=true");
  spec.timeout_sec = 60;
  CommandResult r = run_command(spec);
  if (!r.ok()) {
    error =
        fmt::format("`{} --benchmark_list_tests=true` {}; {}", c.binary, r.describe(60), r.tail());
    return {};
  }
  std::vector<std::string> names;
  std::istringstream in(r.out);
  std::string line;
  while (std::getline(in, line)) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (!line.empty()) names.push_back(line);
  }
  return names;
}

// The metrics declared for the listed benchmarks (the file comment above).
std::vector<MetricDescriptor> declared_metrics(const GbenchConfig& c,
                                               const std::vector<std::string>& names) {
  std::vector<MetricDescriptor> out;
  GbenchOptions options = c.options();
  for (const auto& name : names) {
    out.push_back(gbench_time_metric(name, "real_time", c.time_unit));
    out.push_back(gbench_time_metric(name, "cpu_time", c.time_unit));
    std::vector<std::string> counters = {"bytes_per_second", "items_per_second"};
    for (const auto& d : c.counters)
      if (std::find(counters.begin(), counters.end(), d.name) == counters.end())
        counters.push_back(d.name);
    for (const auto& counter : counters)
      out.push_back(gbench_counter_metric(name, counter, options));
  }
  return out;
}

class GbenchSession : public CellSession {
 public:
  GbenchSession(GbenchConfig config, std::set<std::string> declared, std::string dir,
                RunContext& ctx)
      : c_(std::move(config)), declared_(std::move(declared)), dir_(std::move(dir)), ctx_(ctx) {}

  ~GbenchSession() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  void warmup() override {
    CommandResult r = invoke(1);
    if (r.interrupted || ctx_.interrupted()) throw Interrupted();
    if (!r.ok()) ctx_.warn("gbench: warm-up run " + r.describe(c_.timeout) + "; " + r.tail());
  }

  IterationResult measure() override {
    IterationResult result;
    if (pending_.empty()) {
      CommandResult r = invoke(c_.repetitions);
      if (r.interrupted || ctx_.interrupted()) throw Interrupted();
      if (!r.ok()) {
        result.failure = fmt::format("{} {}; {}", c_.binary, r.describe(c_.timeout), r.tail());
        return result;
      }
      GbenchReport report;
      try {
        std::ifstream in(out_path(), std::ios::binary);
        if (!in) throw UsageError(out_path() + ": the benchmark binary wrote no JSON report");
        std::stringstream text;
        text << in.rdbuf();
        report = parse_gbench_json(text.str(), c_.options(), out_path());
      } catch (const UsageError& e) {
        result.failure = fmt::format("{}; {}", e.what(), r.tail());
        return result;
      }
      note_report(report);
      pending_.assign(report.repetitions.begin(), report.repetitions.end());
      result.flags = report.warnings;
      for (auto& f : result.flags) {
        if (f.starts_with("CPU frequency scaling")) f.clear();  // said once, for the run
      }
      std::erase(result.flags, std::string());
    }
    result.metrics = std::move(pending_.front());
    pending_.pop_front();
    if (result.metrics.empty())
      result.failure = "no benchmark reported a result in this repetition (all reported errors)";
    return result;
  }

 private:
  std::string out_path() const { return dir_ + "/report.json"; }

  CommandResult invoke(int repetitions) {
    std::error_code ec;
    std::filesystem::remove(out_path(), ec);
    CommandSpec spec;
    spec.argv = c_.argv();
    spec.argv.push_back(fmt::format("--benchmark_repetitions={}", repetitions));
    spec.argv.push_back("--benchmark_out=" + out_path());
    spec.argv.push_back("--benchmark_out_format=json");
    spec.timeout_sec = c_.timeout;
    spec.capture_limit = 1u << 20;  // the console table; the results are in the JSON file
    spec.interrupted = [this] { return ctx_.interrupted(); };
    return run_command(spec);
  }

  // What the first report says about the run: Google Benchmark's context as
  // run facts, warnings once, metrics without a declaration once each.
  void note_report(const GbenchReport& report) {
    if (!context_recorded_) {
      context_recorded_ = true;
      for (const auto& [key, value] : report.context) ctx_.record(key, value);
      for (const auto& w : report.warnings)
        if (w.starts_with("CPU frequency scaling")) ctx_.warn("gbench: " + w);
    }
    for (const auto& d : report.metrics) {
      if (declared_.count(d.name) || !undeclared_warned_.insert(d.name).second) continue;
      auto dot = d.name.rfind('.');
      std::string field = dot == std::string::npos ? d.name : d.name.substr(dot + 1);
      ctx_.warn(fmt::format(
          "gbench: metric {} was not declared before the run ({}); it is stored, but compare "
          "treats it as higher is better with no unit: {}",
          d.name,
          field == "real_time" || field == "cpu_time"
              ? "its benchmark was not listed by --benchmark_list_tests"
              : "a counter not in `counters`",
          field == "real_time" || field == "cpu_time"
              ? "check that `args` does not change which benchmarks run"
              : fmt::format("declare it, e.g. counters: \"{}:{}:{}\"", field,
                            d.unit.empty() ? "UNIT" : d.unit, to_string(d.direction))));
    }
  }

  GbenchConfig c_;
  std::set<std::string> declared_;
  std::string dir_;
  RunContext& ctx_;
  std::deque<std::map<std::string, double>> pending_;  // repetitions not yet handed out
  bool context_recorded_ = false;
  std::set<std::string> undeclared_warned_;
};

class GbenchWorkload : public Workload {
 public:
  std::string_view name() const override { return "gbench"; }
  std::string_view summary() const override {
    return "runs a Google Benchmark binary; each benchmark's real_time, cpu_time and counters "
           "are metrics, its repetitions samples";
  }
  std::vector<ParamDescriptor> params() const override {
    return {
        {.name = "binary",
         .type = ParamType::text,
         .unit = "path",
         .default_value = "",
         .doc = "the Google Benchmark executable (BENCHMARK_MAIN); required"},
        {.name = "filter",
         .type = ParamType::text,
         .unit = "regex",
         .default_value = "",
         .doc = "--benchmark_filter: which benchmarks run (default: all)"},
        {.name = "repetitions",
         .type = ParamType::count,
         .default_value = "1",
         .doc = "--benchmark_repetitions per invocation; each repetition is one iteration",
         .min = 1.0,
         .max = 10000.0},
        {.name = "args",
         .type = ParamType::text,
         .unit = "argv",
         .default_value = "",
         .doc = "more arguments for the binary, split like exec's command (e.g. "
                "--benchmark_min_time=0.1)"},
        {.name = "counters",
         .type = ParamType::text,
         .default_value = "",
         .doc = "NAME[:UNIT[:higher|lower[:hmean|amean|gmean]]] ... for user counters (default: "
                "*_per_second are rates: higher, Hmean; others higher, Amean, no unit)"},
        {.name = "time_unit",
         .type = ParamType::choice,
         .default_value = "ns",
         .doc = "unit of real_time and cpu_time",
         .choices = {"ns", "us", "ms", "s"}},
        {.name = "timeout",
         .type = ParamType::duration,
         .unit = "s",
         .default_value = "10m",
         .doc = "one invocation is killed after this long",
         .min = 0.001,
         .max = 86400.0 * 7},
    };
  }
  std::vector<MetricDescriptor> metrics() const override {
    return {};  // the binary's benchmarks: cell_metrics()
  }
  std::vector<MetricDescriptor> cell_metrics(const Cell& cell) const override {
    try {
      GbenchConfig c = gbench_config_of(cell);
      std::string error;
      return declared_metrics(c, list_benchmarks(c, error));
    } catch (const std::exception&) {
    } catch (const ParamError&) {
    }
    return {};  // start() reports why
  }
  std::vector<std::string> requirements() const override {
    return {"a Google Benchmark binary, runnable by this user"};
  }
  void validate(const Cell& cell, const MachineFacts&) const override {
    if (cell.text("binary").find_first_not_of(" \t") == std::string::npos)
      throw ParamError{"binary",
                       "required; write the path of a Google Benchmark executable, such as "
                       "`binary: build/bench/micro_bench`"};
    (void)gbench_config_of(cell);  // throws ParamError for args/counters
  }
  std::unique_ptr<CellSession> start(const Cell& cell, RunContext& ctx) const override {
    GbenchConfig c = gbench_config_of(cell);
    if (c.binary.find('/') != std::string::npos && ::access(c.binary.c_str(), X_OK) != 0)
      throw EnvironmentError(fmt::format("gbench: cannot run '{}': {}; build it, or fix `binary`",
                                         c.binary, std::strerror(errno)));
    std::string error;
    std::vector<std::string> names = list_benchmarks(c, error);
    if (!error.empty())
      throw EnvironmentError(fmt::format(
          "gbench: {}; is {} a Google Benchmark binary (BENCHMARK_MAIN)?", error, c.binary));
    if (names.empty()) {
      std::string all_error;
      std::vector<std::string> all = list_benchmarks(c, all_error, false);
      std::string listed;
      for (std::size_t i = 0; i < all.size() && i < 10; ++i) listed += (i ? ", " : "") + all[i];
      if (all.size() > 10) listed += fmt::format(", ... ({} in all)", all.size());
      throw EnvironmentError(
          fmt::format("gbench: filter '{}' matches no benchmark of {}; its benchmarks are: {}",
                      c.filter, c.binary, listed.empty() ? std::string("none") : listed));
    }
    std::set<std::string> declared;
    for (const auto& d : declared_metrics(c, names)) declared.insert(d.name);
    ctx.record("gbench.argv", nlohmann::json(c.argv()).dump());
    ctx.record("gbench.benchmarks", std::to_string(names.size()));
    std::string tmpl = (std::filesystem::temp_directory_path() / "nightjar-gbench-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr)
      throw EnvironmentError(
          fmt::format("gbench: cannot create a directory for the JSON report "
                      "in {}: {}; set TMPDIR to a writable directory",
                      std::filesystem::temp_directory_path().string(), std::strerror(errno)));
    return std::make_unique<GbenchSession>(std::move(c), std::move(declared), tmpl, ctx);
  }
};

NIGHTJAR_WORKLOAD(GbenchWorkload);

}  // namespace

}  // namespace nightjar
