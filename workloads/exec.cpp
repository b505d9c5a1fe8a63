// The `exec` workload and run_command(): see workloads/exec.h.

#include "workloads/exec.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <regex>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "results/model/exit_codes.h"
#include "workloads/sys/signals.h"

extern char** environ;

namespace nightjar {

// ---------------------------------------------------------------------------
// Command lines
// ---------------------------------------------------------------------------

std::vector<std::string> split_command_line(const std::string& text, const std::string& field) {
  std::size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos)
    throw ParamError{field,
                     "empty command; write the program and its arguments, such as "
                     "`" +
                         field + ": ./bench --size 1M`"};
  std::vector<std::string> words;
  if (text[first] == '[') {
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception&) {
      throw ParamError{field,
                       "starts with '[' but is not a JSON array; write a JSON array of "
                       "strings such as '[\"./bench\", \"--size\", \"1M\"]' or a plain "
                       "command line such as ./bench --size 1M"};
    }
    if (!j.is_array() || j.empty())
      throw ParamError{field,
                       "the JSON array is empty; write at least the program, such as "
                       "'[\"./bench\"]'"};
    for (const auto& e : j) {
      if (!e.is_string())
        throw ParamError{field, "the JSON array holds " + std::string(e.type_name()) +
                                    "; every element must be a string, such as '[\"./bench\", "
                                    "\"10\"]'"};
      words.push_back(e.get<std::string>());
    }
    if (words.front().empty()) throw ParamError{field, "the program name is empty"};
    return words;
  }
  std::string word;
  bool in_word = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
    } else if (c == '\'') {
      std::size_t end = text.find('\'', i + 1);
      if (end == std::string::npos)
        throw ParamError{field, "unbalanced single quote in '" + text +
                                    "'; close it, or quote the whole command for the job file "
                                    "with the other kind of quotes"};
      word.append(text, i + 1, end - i - 1);
      in_word = true;
      i = end;
    } else if (c == '"') {
      std::size_t j = i + 1;
      for (; j < text.size() && text[j] != '"'; ++j) {
        if (text[j] == '\\' && j + 1 < text.size() &&
            std::strchr("\"\\$`", text[j + 1]) != nullptr) {
          word += text[++j];
        } else {
          word += text[j];
        }
      }
      if (j >= text.size())
        throw ParamError{field, "unbalanced double quote in '" + text + "'; close it"};
      in_word = true;
      i = j;
    } else if (c == '\\') {
      if (i + 1 >= text.size())
        throw ParamError{field, "trailing backslash in '" + text + "'; remove it or write \\\\"};
      word += text[++i];
      in_word = true;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(std::move(word));
  if (words.empty() || words.front().empty())
    throw ParamError{field, "empty program name in '" + text + "'"};
  return words;
}

// ---------------------------------------------------------------------------
// Child processes
// ---------------------------------------------------------------------------

std::string output_tail(const std::string& text, std::size_t max_lines, std::size_t max_chars) {
  std::string_view t = text;
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r' || t.back() == ' '))
    t.remove_suffix(1);
  std::vector<std::string_view> lines;
  std::size_t end = t.size();
  while (lines.size() < max_lines && end > 0) {
    std::size_t nl = t.rfind('\n', end - 1);
    std::size_t start = nl == std::string_view::npos ? 0 : nl + 1;
    std::string_view line = t.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    if (nl == std::string_view::npos) break;
    end = nl;
  }
  std::string out;
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    if (!out.empty()) out += " | ";
    out += *it;
  }
  if (out.size() > max_chars) out = "..." + out.substr(out.size() - max_chars);
  return out;
}

std::string CommandResult::describe(double timeout_sec) const {
  if (!started) return error;
  if (interrupted) return "interrupted";
  if (timed_out)
    return timeout_sec > 0 ? fmt::format("timed out after {:g} s", timeout_sec) : "timed out";
  if (signal != 0) {
    const char* name = sigabbrev_np(signal);
    return fmt::format("killed by SIG{}", name ? name : std::to_string(signal).c_str());
  }
  return fmt::format("exited with status {}", exit_code);
}

std::string CommandResult::tail(std::size_t max_lines, std::size_t max_chars) const {
  std::string e = output_tail(err, max_lines, max_chars);
  std::string o = output_tail(out, max_lines, max_chars);
  std::string r;
  if (!e.empty()) r += "stderr: " + e;
  if (!o.empty()) r += (r.empty() ? "" : "; ") + std::string("stdout: ") + o;
  return r.empty() ? "no output" : r;
}

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// A pipe whose ends are closed on destruction.
struct Pipe {
  int fd[2] = {-1, -1};
  explicit Pipe(const char* what) {
    if (::pipe2(fd, O_CLOEXEC) != 0)
      throw EnvironmentError(
          fmt::format("cannot create a pipe for {}: {}", what, std::strerror(errno)));
  }
  ~Pipe() {
    close_read();
    close_write();
  }
  void close_read() {
    if (fd[0] >= 0) ::close(fd[0]);
    fd[0] = -1;
  }
  void close_write() {
    if (fd[1] >= 0) ::close(fd[1]);
    fd[1] = -1;
  }
};

// Reads what is available from `fd` into `buf` (up to `limit` bytes kept).
// Returns false at end of file or on a hard error.
bool drain(int fd, std::string& buf, std::size_t limit, bool& truncated) {
  char chunk[65536];
  while (true) {
    ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n > 0) {
      std::size_t room = buf.size() < limit ? limit - buf.size() : 0;
      std::size_t keep = std::min<std::size_t>(room, static_cast<std::size_t>(n));
      buf.append(chunk, keep);
      if (keep < static_cast<std::size_t>(n)) truncated = true;
      continue;
    }
    if (n == 0) return false;
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return true;
    return false;
  }
}

}  // namespace

CommandResult run_command(const CommandSpec& spec) {
  CommandResult r;
  if (spec.argv.empty() || spec.argv.front().empty()) {
    r.error = "empty command";
    return r;
  }
  // Everything the child needs is prepared before fork(): after it the child
  // only makes async-signal-safe calls (and exec).
  std::vector<std::string> env_strings;
  for (char** e = environ; e && *e; ++e) {
    std::string_view kv(*e);
    std::string key(kv.substr(0, kv.find('=')));
    if (!spec.env.count(key)) env_strings.emplace_back(kv);
  }
  for (const auto& [k, v] : spec.env) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp, argv;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = spec.argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  // PATH lookup is done here, with nightjar's PATH (or the one in spec.env).
  std::string program = args.front();
  if (program.find('/') == std::string::npos) {
    std::string path = spec.env.count("PATH") ? spec.env.at("PATH")
                       : std::getenv("PATH")  ? std::getenv("PATH")
                                              : "/usr/local/bin:/usr/bin:/bin";
    std::string found;
    std::stringstream dirs(path);
    std::string dir;
    while (std::getline(dirs, dir, ':')) {
      std::string candidate = (dir.empty() ? "." : dir) + "/" + program;
      struct stat st {};
      if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
          ::access(candidate.c_str(), X_OK) == 0) {
        found = candidate;
        break;
      }
    }
    if (found.empty()) {
      r.error = fmt::format("cannot run '{}': not found in PATH ({})", program, path);
      return r;
    }
    program = found;
  }

  Pipe out("the command's output"), err("the command's errors"), status("exec status");
  int devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  const pid_t parent = ::getpid();
  const char* cwd = spec.cwd.empty() ? nullptr : spec.cwd.c_str();
  const auto t0 = Clock::now();
  pid_t pid = ::fork();
  if (pid < 0) {
    if (devnull >= 0) ::close(devnull);
    r.error = fmt::format("cannot start '{}': fork failed: {}", args.front(), std::strerror(errno));
    return r;
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    ::sigemptyset(&dfl.sa_mask);
    for (int sig : {SIGINT, SIGTERM, SIGPIPE, SIGQUIT, SIGHUP}) ::sigaction(sig, &dfl, nullptr);
    sigset_t none;
    ::sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    if (devnull >= 0) ::dup2(devnull, 0);
    ::dup2(out.fd[1], 1);
    ::dup2(spec.merge_stderr ? out.fd[1] : err.fd[1], 2);
    int report[2] = {0, 0};
    if (cwd != nullptr && ::chdir(cwd) != 0) {
      report[0] = 'c';
      report[1] = errno;
    } else {
      ::execve(program.c_str(), argv.data(), envp.data());
      report[0] = 'e';
      report[1] = errno;
    }
    ssize_t ignored = ::write(status.fd[1], report, sizeof report);
    (void)ignored;
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also in the parent: no race with kill(-pid) below
  if (devnull >= 0) ::close(devnull);
  out.close_write();
  err.close_write();
  status.close_write();
  r.started = true;

  for (int fd : {out.fd[0], err.fd[0]}) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  bool out_open = true, err_open = true;
  bool exited = false;  // the child has exited (not reaped yet: its pid stays ours)
  std::optional<Clock::time_point> kill_sent, exit_seen;
  auto interrupted_now = [&] {
    return spec.interrupted ? spec.interrupted() : nightjar::interrupted();
  };
  auto kill_group = [&](int sig) { ::kill(-pid, sig); };

  while (true) {
    if (!exited) {
      siginfo_t info{};
      info.si_pid = 0;
      if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
          info.si_pid == pid) {
        exited = true;
        exit_seen = Clock::now();
        // Whatever the command left running in its group goes now, while
        // the unreaped leader still reserves the group id.
        kill_group(SIGKILL);
      }
    }
    if (!exited && !r.interrupted && !r.timed_out) {
      if (interrupted_now()) {
        r.interrupted = true;
      } else if (spec.timeout_sec > 0 && seconds_since(t0) > spec.timeout_sec) {
        r.timed_out = true;
      }
      if (r.interrupted || r.timed_out) {
        kill_group(SIGTERM);
        kill_sent = Clock::now();
      }
    }
    if (!exited && kill_sent && seconds_since(*kill_sent) > spec.kill_grace_sec)
      kill_group(SIGKILL);
    if ((!out_open && !err_open) && exited) break;
    // Output held open by a process that left the group (setsid): stop
    // waiting for it a little after the command itself ended.
    if (exited && exit_seen && seconds_since(*exit_seen) > 2.0) break;

    pollfd fds[2];
    nfds_t n = 0;
    if (out_open) fds[n++] = {out.fd[0], POLLIN, 0};
    if (err_open) fds[n++] = {err.fd[0], POLLIN, 0};
    if (n > 0) {
      int pr = ::poll(fds, n, 10);
      if (pr < 0 && errno != EINTR) break;
      if (out_open) out_open = drain(out.fd[0], r.out, spec.capture_limit, r.truncated);
      if (err_open) err_open = drain(err.fd[0], r.err, spec.capture_limit, r.truncated);
    } else {
      ::usleep(2000);
    }
  }

  int wstatus = 0;
  struct rusage ru {};
  while (::wait4(pid, &wstatus, 0, &ru) < 0 && errno == EINTR) {
  }
  r.wall_sec = seconds_since(t0);
  r.cpu_sec = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
              static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
  if (WIFEXITED(wstatus)) r.exit_code = WEXITSTATUS(wstatus);
  if (WIFSIGNALED(wstatus)) r.signal = WTERMSIG(wstatus);

  int report[2] = {0, 0};
  ssize_t got;
  while ((got = ::read(status.fd[0], report, sizeof report)) < 0 && errno == EINTR) {
  }
  if (got == static_cast<ssize_t>(sizeof report)) {
    r.started = false;
    if (report[0] == 'c')
      r.error = fmt::format("cannot change to the directory '{}': {}", spec.cwd,
                            std::strerror(report[1]));
    else
      r.error = fmt::format("cannot run '{}': {}", args.front(), std::strerror(report[1]));
  }
  return r;
}

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
       .doc = "user + system CPU time of the command and the children it waited for"},
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

std::string trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return std::string(s);
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
    case ParseRule::key_value: {
      std::set<std::string> wanted;
      for (const auto& d : declared) wanted.insert(d.name);
      std::stringstream in(output);
      std::string line;
      while (std::getline(in, line)) {
        std::size_t eq = line.find('=');
        if (eq == std::string::npos) continue;
        std::string key = trim(std::string_view(line).substr(0, eq));
        if (!wanted.count(key)) continue;
        std::string value = trim(std::string_view(line).substr(eq + 1));
        if (auto v = leading_number(value, false)) {
          found[key] = *v;
          bad.erase(key);
        } else {
          found.erase(key);
          bad[key] = fmt::format("'{}={}' is not a finite number", key, value);
        }
      }
      break;
    }
    case ParseRule::regex: {
      std::regex re = compile_regex(regex, declared.size());
      std::smatch last;
      bool any = false;
      for (auto it = std::sregex_iterator(output.begin(), output.end(), re);
           it != std::sregex_iterator(); ++it) {
        last = *it;
        any = true;
      }
      if (any) {
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
      break;
    }
    case ParseRule::json: {
      nlohmann::json obj;
      bool parsed = false;
      try {
        obj = nlohmann::json::parse(output);
        parsed = obj.is_object();
      } catch (const nlohmann::json::exception&) {
      }
      if (!parsed) {
        std::stringstream in(output);
        std::string line, candidate;
        while (std::getline(in, line)) {
          std::string t = trim(line);
          if (!t.empty() && t.front() == '{') candidate = t;
        }
        try {
          if (!candidate.empty()) {
            obj = nlohmann::json::parse(candidate);
            parsed = obj.is_object();
          }
        } catch (const nlohmann::json::exception&) {
        }
      }
      if (!parsed) {
        for (const auto& d : declared)
          missing.push_back(fmt::format("{}: the output holds no JSON object", d.name));
        return found;
      }
      for (const auto& d : declared) {
        const nlohmann::json* v = json_lookup(obj, d.name);
        if (v == nullptr) continue;
        if (v->is_number() && std::isfinite(v->get<double>()))
          found[d.name] = v->get<double>();
        else
          bad[d.name] = fmt::format("\"{}\" is {}, not a finite number", d.name, v->dump());
      }
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

ExecConfig config_of(const Cell& cell) {
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
      std::string why;
      for (const auto& m : missing) why += (why.empty() ? "" : "; ") + m;
      result.metrics.clear();
      result.failure =
          fmt::format("metric not found in the command's {}: {}; {}", c_.stream, why, r.tail());
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
    ExecConfig c = config_of(cell);  // throws ParamError for command/metrics
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
    ExecConfig c = config_of(cell);
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
