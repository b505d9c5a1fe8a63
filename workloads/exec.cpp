// The `exec` workload: see workloads/exec.h. Running the command is the
// process toolkit's (workloads/sys/process.h); this file parses its output.

#include "workloads/exec.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "results/model/exit_codes.h"
#include "results/model/text.h"
#include "workloads/sys/process.h"

namespace nightjar {

// ---------------------------------------------------------------------------
// Metric rules
// ---------------------------------------------------------------------------

namespace {

constexpr const char* kWallTime = "wall_time";
constexpr const char* kCpuTime = "cpu_time";

std::vector<MetricDescriptor> builtin_metrics() {
  return {
      {.name = kWallTime,
       .unit = "s",
       .direction = Direction::lower_is_better,
       .mean = MeanKind::arithmetic,
       .doc = "wall time of the command, from start to exit"},
      {.name = kCpuTime,
       .unit = "s",
       .direction = Direction::lower_is_better,
       .mean = MeanKind::arithmetic,
       .doc = "user + system CPU time of the command and the children it waited for",
       .zero_is_measured = true},
  };
}

// A number at the start of `text` (after blanks), followed by nothing, blanks,
// or a unit/word. nullopt when there is no number or it is not finite.
std::optional<double> leading_number(std::string_view text, bool whole) {
  std::string s(text);
  const char* begin = s.c_str();
  while (*begin == ' ' || *begin == '\t') ++begin;
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(begin, &end);
  if (end == begin || errno == ERANGE || !std::isfinite(v)) return std::nullopt;
  std::string_view rest(end);
  while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t' || rest.front() == '\r'))
    rest.remove_prefix(1);
  if (whole && !rest.empty()) return std::nullopt;
  // A number glued to more digits-like text ("1.2.3") is not a number.
  if (!rest.empty() &&
      (rest.front() == '.' || std::isdigit(static_cast<unsigned char>(rest.front()))))
    return std::nullopt;
  return v;
}

ParseRule parse_rule(const std::string& text) {
  if (text == "regex") return ParseRule::regex;
  if (text == "json") return ParseRule::json;
  return ParseRule::key_value;
}

std::regex compile_regex(const std::string& pattern, std::size_t metrics) {
  std::regex re;
  try {
    re = std::regex(pattern, std::regex::ECMAScript | std::regex::multiline);
  } catch (const std::regex_error& e) {
    throw ParamError{"regex", fmt::format("'{}' is not a valid ECMAScript regex ({}); write for "
                                          "example 'throughput: ([0-9.]+)'",
                                          pattern, e.what())};
  }
  if (re.mark_count() != metrics)
    throw ParamError{"regex",
                     fmt::format("'{}' has {} capture group(s) but {} metric(s) are declared; "
                                 "write one (...) per metric, in the order of `metrics`, and "
                                 "(?:...) for groups that capture nothing",
                                 pattern, re.mark_count(), metrics)};
  return re;
}

const nlohmann::json* json_lookup(const nlohmann::json& obj, const std::string& name) {
  if (auto it = obj.find(name); it != obj.end()) return &*it;
  const nlohmann::json* cur = &obj;
  std::size_t start = 0;
  while (start <= name.size()) {
    std::size_t dot = name.find('.', start);
    std::string part =
        name.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (!cur->is_object()) return nullptr;
    auto it = cur->find(part);
    if (it == cur->end()) return nullptr;
    cur = &*it;
    if (dot == std::string::npos) return cur;
    start = dot + 1;
  }
  return nullptr;
}

}  // namespace

std::vector<MetricDescriptor> parse_exec_metrics(const std::string& text) {
  return parse_metric_declarations(text, builtin_metrics());
}

namespace {

// The values of the declared metrics in output lines "NAME=NUMBER" (the
// last such line of a name wins) into `found`, or why a value is not a
// number into `bad`.
void extract_key_values(const std::string& output, const std::vector<MetricDescriptor>& declared,
                        std::map<std::string, double>& found,
                        std::map<std::string, std::string>& bad) {
  std::set<std::string> wanted;
  for (const auto& d : declared) wanted.insert(d.name);
  std::stringstream in(output);
  std::string line;
  while (std::getline(in, line)) {
    std::size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    std::string key(trim(std::string_view(line).substr(0, eq)));
    if (!wanted.count(key)) continue;
    std::string value(trim(std::string_view(line).substr(eq + 1)));
    if (auto v = leading_number(value, false)) {
      found[key] = *v;
      bad.erase(key);
    } else {
      found.erase(key);
      bad[key] = fmt::format("'{}={}' is not a finite number", key, value);
    }
  }
}

// The declared metrics from the capture groups of the last match of
// `regex` (group i+1: metric i) into `found`, or why a capture is not a
// number into `bad`. ParamError for a bad regex (compile_regex).
void extract_regex(const std::string& output, const std::vector<MetricDescriptor>& declared,
                   const std::string& regex, std::map<std::string, double>& found,
                   std::map<std::string, std::string>& bad) {
  std::regex re = compile_regex(regex, declared.size());
  std::smatch last;
  bool any = false;
  for (auto it = std::sregex_iterator(output.begin(), output.end(), re);
       it != std::sregex_iterator(); ++it) {
    last = *it;
    any = true;
  }
  if (!any) return;
  for (std::size_t i = 0; i < declared.size(); ++i) {
    const auto& name = declared[i].name;
    if (!last[i + 1].matched) continue;
    std::string text = last[i + 1].str();
    if (auto v = leading_number(trim(text), true))
      found[name] = *v;
    else
      bad[name] = fmt::format("capture {} ('{}') is not a finite number", i + 1, text);
  }
}

// The JSON object of the output: the whole output, else its last line that
// starts with '{'. nullopt when neither is a JSON object.
std::optional<nlohmann::json> output_json_object(const std::string& output) {
  try {
    nlohmann::json obj = nlohmann::json::parse(output);
    if (obj.is_object()) return obj;
  } catch (const nlohmann::json::exception&) {
  }
  std::stringstream in(output);
  std::string line, candidate;
  while (std::getline(in, line)) {
    std::string t(trim(line));
    if (!t.empty() && t.front() == '{') candidate = t;
  }
  try {
    if (!candidate.empty()) {
      nlohmann::json obj = nlohmann::json::parse(candidate);
      if (obj.is_object()) return obj;
    }
  } catch (const nlohmann::json::exception&) {
  }
  return std::nullopt;
}

// The declared metrics as keys (or dotted paths) of `obj` into `found`, or
// why a value is not a number into `bad`.
void extract_json(const nlohmann::json& obj, const std::vector<MetricDescriptor>& declared,
                  std::map<std::string, double>& found, std::map<std::string, std::string>& bad) {
  for (const auto& d : declared) {
    const nlohmann::json* v = json_lookup(obj, d.name);
    if (v == nullptr) continue;
    if (v->is_number() && std::isfinite(v->get<double>()))
      found[d.name] = v->get<double>();
    else
      bad[d.name] = fmt::format("\"{}\" is {}, not a finite number", d.name, v->dump());
  }
}

}  // namespace

std::map<std::string, double> extract_metrics(const std::string& output,
                                              const std::vector<MetricDescriptor>& all_declared,
                                              ParseRule rule, const std::string& regex,
                                              std::vector<std::string>& missing) {
  std::map<std::string, double> found;
  // wall_time and cpu_time are measured, not parsed.
  std::vector<MetricDescriptor> declared;
  for (const auto& d : all_declared)
    if (d.name != kWallTime && d.name != kCpuTime) declared.push_back(d);
  std::map<std::string, std::string> bad;  // name -> why the value is not a number
  switch (rule) {
    case ParseRule::key_value:
      extract_key_values(output, declared, found, bad);
      break;
    case ParseRule::regex:
      extract_regex(output, declared, regex, found, bad);
      break;
    case ParseRule::json: {
      const std::optional<nlohmann::json> obj = output_json_object(output);
      if (!obj) {
        for (const auto& d : declared)
          missing.push_back(fmt::format("{}: the output holds no JSON object", d.name));
        return found;
      }
      extract_json(*obj, declared, found, bad);
      break;
    }
  }
  for (const auto& d : declared) {
    if (found.count(d.name)) continue;
    if (auto it = bad.find(d.name); it != bad.end()) {
      missing.push_back(d.name + ": " + it->second);
      continue;
    }
    switch (rule) {
      case ParseRule::key_value:
        missing.push_back(fmt::format("{}: no line '{}=NUMBER'", d.name, d.name));
        break;
      case ParseRule::regex:
        missing.push_back(fmt::format("{}: the regex did not match", d.name));
        break;
      case ParseRule::json:
        missing.push_back(fmt::format("{}: no key \"{}\" in the JSON object", d.name, d.name));
        break;
    }
  }
  return found;
}

// ---------------------------------------------------------------------------
// The workload
// ---------------------------------------------------------------------------

namespace {

struct ExecConfig {
  std::vector<std::string> argv;
  std::string cwd;
  double timeout = 60;
  std::string stream = "stdout";
  ParseRule rule = ParseRule::key_value;
  std::string regex;
  std::vector<MetricDescriptor> metrics;  ///< declared (without the built-ins)
};

ExecConfig exec_config_of(const Cell& cell) {
  ExecConfig c;
  const std::string& command = cell.text("command");
  if (cell.flag("shell"))
    c.argv = {"/bin/sh", "-c", command};
  else
    c.argv = split_command_line(command);
  c.cwd = cell.text("cwd");
  c.timeout = cell.seconds("timeout");
  c.stream = cell.text("stream");
  c.rule = parse_rule(cell.text("parse"));
  c.regex = cell.text("regex");
  c.metrics = parse_exec_metrics(cell.text("metrics"));
  if (c.metrics.empty()) c.metrics.push_back(builtin_metrics().front());  // time the command
  return c;
}

class ExecSession : public CellSession {
 public:
  ExecSession(ExecConfig config, RunContext& ctx) : c_(std::move(config)), ctx_(ctx) {}

  void warmup() override {
    CommandResult r = run(0, true);
    if (r.interrupted) throw Interrupted();
    if (!r.ok()) ctx_.warn("exec: warm-up run " + r.describe(c_.timeout) + "; " + r.tail());
  }

  IterationResult measure() override {
    ++iteration_;
    CommandResult r = run(iteration_, false);
    if (r.interrupted || ctx_.interrupted()) throw Interrupted();
    IterationResult result;
    if (!r.ok()) {
      result.failure = fmt::format("command {}; {}", r.describe(c_.timeout), r.tail());
      return result;
    }
    const std::string& text = c_.stream == "stderr" ? r.err : r.out;
    std::vector<std::string> missing;
    result.metrics = extract_metrics(text, c_.metrics, c_.rule, c_.regex, missing);
    if (!missing.empty()) {
      result.metrics.clear();
      result.failure = fmt::format("metric not found in the command's {}: {}; {}", c_.stream,
                                   join(missing, "; "), r.tail());
      return result;
    }
    for (const auto& d : c_.metrics) {
      if (d.name == kWallTime) result.metrics[kWallTime] = r.wall_sec;
      if (d.name == kCpuTime) result.metrics[kCpuTime] = r.cpu_sec;
    }
    if (r.truncated)
      result.flags.push_back("the command's output exceeded 16 MiB; only its beginning was parsed");
    return result;
  }

 private:
  CommandResult run(std::int64_t iteration, bool warmup) {
    CommandSpec spec;
    spec.argv = c_.argv;
    spec.cwd = c_.cwd;
    spec.timeout_sec = c_.timeout;
    spec.merge_stderr = c_.stream == "both";
    spec.env["NIGHTJAR_ITERATION"] = std::to_string(iteration);
    spec.env["NIGHTJAR_WARMUP"] = warmup ? "1" : "0";
    spec.interrupted = [this] { return ctx_.interrupted(); };
    return run_command(spec);
  }

  ExecConfig c_;
  RunContext& ctx_;
  std::int64_t iteration_ = 0;
};

class ExecWorkload : public Workload {
 public:
  std::string_view name() const override { return "exec"; }
  std::string_view summary() const override {
    return "runs a command per iteration; metrics parsed from its output (kv, regex or JSON)";
  }
  std::vector<ParamDescriptor> params() const override {
    return {
        {.name = "command",
         .type = ParamType::text,
         .unit = "argv",
         .default_value = "",
         .doc = "program and arguments, split like a shell without expansion (or a JSON array); "
                "required"},
        {.name = "shell",
         .type = ParamType::flag,
         .default_value = "off",
         .doc = "run `command` with /bin/sh -c instead"},
        {.name = "metrics",
         .type = ParamType::text,
         .default_value = "",
         .doc = "NAME[:UNIT[:higher|lower[:hmean|amean|gmean]]] ... (blank or ';' separated); "
                "the names wall_time and cpu_time are measured by exec; default: wall_time"},
        {.name = "parse",
         .type = ParamType::choice,
         .default_value = "kv",
         .doc = "how metrics are read from the output",
         .choices = {"kv", "regex", "json"}},
        {.name = "regex",
         .type = ParamType::text,
         .default_value = "",
         .doc = "parse: regex: ECMAScript pattern with one (...) per metric, in order; last "
                "match counts"},
        {.name = "stream",
         .type = ParamType::choice,
         .default_value = "stdout",
         .doc = "which output the metrics are read from",
         .choices = {"stdout", "stderr", "both"}},
        {.name = "timeout",
         .type = ParamType::duration,
         .unit = "s",
         .default_value = "60s",
         .doc = "the command is killed after this long",
         .min = 0.001,
         .max = 86400.0 * 7},
        {.name = "cwd",
         .type = ParamType::text,
         .unit = "path",
         .default_value = "",
         .doc = "working directory (default: nightjar's)"},
    };
  }
  std::vector<MetricDescriptor> metrics() const override { return builtin_metrics(); }
  std::vector<MetricDescriptor> cell_metrics(const Cell& cell) const override {
    std::vector<MetricDescriptor> declared;
    try {
      declared = parse_exec_metrics(cell.text("metrics"));
    } catch (const ParamError&) {
    }
    if (declared.empty()) declared.push_back(builtin_metrics().front());
    return declared;
  }
  std::vector<std::string> requirements() const override {
    return {"the command, runnable by this user"};
  }
  void validate(const Cell& cell, const MachineFacts&) const override {
    if (trim(cell.text("command")).empty())
      throw ParamError{"command",
                       "required; write the program and its arguments, such as "
                       "`command: ./bench --size 1M`"};
    ExecConfig c = exec_config_of(cell);  // throws ParamError for command/metrics
    if (c.rule == ParseRule::regex) {
      if (c.regex.empty())
        throw ParamError{"regex",
                         "parse: regex needs a pattern; write for example "
                         "`regex: 'throughput: ([0-9.]+)'`"};
      std::size_t parsed = 0;
      for (const auto& d : c.metrics) parsed += d.name != kWallTime && d.name != kCpuTime;
      if (parsed == 0)
        throw ParamError{"metrics",
                         "parse: regex needs the metrics its captures give; write "
                         "for example `metrics: throughput:ops/s:higher`"};
      (void)compile_regex(c.regex, parsed);
    } else if (!c.regex.empty()) {
      throw ParamError{"regex",
                       "a pattern is only used with `parse: regex`; set parse: regex or "
                       "remove regex"};
    }
  }
  std::optional<std::string> unmet_requirement(const Cell& cell) const override {
    const std::string& cwd = cell.text("cwd");
    if (!cwd.empty()) {
      struct stat st {};
      if (::stat(cwd.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
        return "the working directory '" + cwd + "' does not exist";
    }
    return std::nullopt;
  }
  std::unique_ptr<CellSession> start(const Cell& cell, RunContext& ctx) const override {
    ExecConfig c = exec_config_of(cell);
    // A program that cannot be found fails every iteration the same way: say
    // so once, as a failed run.
    const std::string& program = c.argv.front();
    if (program.find('/') != std::string::npos) {
      std::string path = program;
      if (program.front() != '/' && !c.cwd.empty()) path = c.cwd + "/" + program;
      if (::access(path.c_str(), X_OK) != 0)
        throw EnvironmentError(
            fmt::format("exec: cannot run '{}': {}{}", program, std::strerror(errno),
                        c.cwd.empty() ? "" : " (relative to cwd " + c.cwd + ")"));
    }
    ctx.record("exec.argv", nlohmann::json(c.argv).dump());
    return std::make_unique<ExecSession>(std::move(c), ctx);
  }
};

NIGHTJAR_WORKLOAD(ExecWorkload);

}  // namespace

}  // namespace nightjar
