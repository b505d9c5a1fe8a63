// The process toolkit: see workloads/sys/process.h. Its workers and shared
// memory are workloads/sys/workers.cpp.
#include "workloads/sys/process.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "results/model/exit_codes.h"
#include "results/model/params.h"
#include "results/model/text.h"
#include "workloads/sys/fs.h"
#include "workloads/sys/journal.h"
#include "workloads/sys/signals.h"

extern char** environ;

namespace nightjar {

// ---------------------------------------------------------------------------
// File descriptors, pipes, wait statuses
// ---------------------------------------------------------------------------

UniqueFd& UniqueFd::operator=(UniqueFd&& o) noexcept {
  if (this != &o) reset(o.release());
  return *this;
}

int UniqueFd::release() noexcept {
  return std::exchange(fd_, -1);
}

void UniqueFd::reset(int fd) noexcept {
  if (fd_ >= 0 && fd_ != fd) ::close(fd_);
  fd_ = fd;
}

Pipe make_pipe(std::string_view what) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    throw EnvironmentError(fmt::format("cannot create a pipe for {}: {}", what, errno_text(errno)));
  return Pipe{UniqueFd(fds[0]), UniqueFd(fds[1])};
}

pid_t wait_pid(pid_t pid, int* status, int flags) noexcept {
  pid_t r;
  while ((r = ::waitpid(pid, status, flags)) < 0 && errno == EINTR) {
  }
  return r;
}

std::string describe_exit(int wait_status) {
  if (WIFEXITED(wait_status)) return fmt::format("exited with {}", WEXITSTATUS(wait_status));
  if (WIFSIGNALED(wait_status)) return "killed by " + signal_text(WTERMSIG(wait_status));
  return fmt::format("ended with wait status {:#x}", wait_status);
}

int exit_code(int wait_status) {
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return WEXITSTATUS(wait_status);
}

// ---------------------------------------------------------------------------
// Programs
// ---------------------------------------------------------------------------

std::string program_search_path() {
  const char* path = std::getenv("PATH");
  return path ? path : "/usr/local/bin:/usr/bin:/bin";
}

std::string find_program(std::string_view name, std::string_view path) {
  auto runnable = [](const std::string& p) {
    struct stat st {};
    return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
  };
  if (name.empty()) return "";
  if (name.find('/') != std::string_view::npos) {
    std::string p(name);
    return runnable(p) ? p : "";
  }
  for (const std::string& dir : split(path, ':')) {
    std::string candidate = (dir.empty() ? "." : dir) + "/" + std::string(name);
    if (runnable(candidate)) return candidate;
  }
  return "";
}

std::string find_program(std::string_view name) {
  return find_program(name, program_search_path());
}

namespace {

std::vector<std::string> split_json_command(const std::string& text, const std::string& field) {
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
  std::vector<std::string> words;
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

}  // namespace

std::vector<std::string> split_command_line(const std::string& text, const std::string& field) {
  std::size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos)
    throw ParamError{field,
                     "empty command; write the program and its arguments, such as "
                     "`" +
                         field + ": ./bench --size 1M`"};
  if (text[first] == '[') return split_json_command(text, field);
  std::vector<std::string> words;
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

std::string output_tail(const std::string& text, std::size_t max_lines, std::size_t max_chars) {
  std::string_view t = text;
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r' || t.back() == ' '))
    t.remove_suffix(1);
  std::vector<std::string> lines;
  std::size_t end = t.size();
  while (lines.size() < max_lines && end > 0) {
    std::size_t nl = t.rfind('\n', end - 1);
    std::size_t start = nl == std::string_view::npos ? 0 : nl + 1;
    std::string_view line = t.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.emplace_back(line);
    if (nl == std::string_view::npos) break;
    end = nl;
  }
  std::reverse(lines.begin(), lines.end());
  std::string out = join(lines, " | ");
  if (out.size() > max_chars) out = "..." + out.substr(out.size() - max_chars);
  return out;
}

// ---------------------------------------------------------------------------
// Starting a program
// ---------------------------------------------------------------------------

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

/// Everything the child needs between fork and exec, prepared before the
/// fork: after it the child only makes async-signal-safe calls.
struct ExecPlan {
  std::string program;  ///< the path exec'd (argv[0] resolved on PATH)
  std::string shown;    ///< argv[0] as given, for messages
  std::string cwd;
  std::vector<std::string> args, env;
  std::vector<char*> argv, envp;
};

/// Fills `plan` for `argv` with nightjar's environment plus `env` (which
/// replaces what it names; its PATH also finds argv[0]). Returns why the
/// program cannot run, or "".
std::string prepare_exec(const std::vector<std::string>& argv,
                         const std::map<std::string, std::string>& env, const std::string& cwd,
                         ExecPlan& plan) {
  if (argv.empty() || argv.front().empty()) return "empty command";
  plan.shown = argv.front();
  plan.cwd = cwd;
  plan.args = argv;
  for (char** e = environ; e && *e; ++e) {
    std::string_view kv(*e);
    if (!env.count(std::string(kv.substr(0, kv.find('='))))) plan.env.emplace_back(kv);
  }
  for (const auto& [k, v] : env) plan.env.push_back(k + "=" + v);
  for (auto& a : plan.args) plan.argv.push_back(a.data());
  plan.argv.push_back(nullptr);
  for (auto& s : plan.env) plan.envp.push_back(s.data());
  plan.envp.push_back(nullptr);
  plan.program = plan.shown;
  if (plan.shown.find('/') == std::string::npos) {
    const auto it = env.find("PATH");
    const std::string path = it != env.end() ? it->second : program_search_path();
    plan.program = find_program(plan.shown, path);
    if (plan.program.empty())
      return fmt::format("cannot run '{}': not found in PATH ({})", plan.shown, path);
  }
  return "";
}

/// What the child gets as stdin, stdout and stderr (-1: nightjar's own).
struct ChildFds {
  int in = -1, out = -1, err = -1;
};

/// Why a start failed, as the child reports it through the status pipe.
struct StartFailure {
  int stage = 0;  ///< 'f' fork, 'c' chdir, 'e' exec; 0: started
  int error = 0;  ///< errno
};

/// Makes `fd` the child's descriptor `target` (also when it already is:
/// then only close-on-exec is cleared).
void install_fd(int fd, int target) noexcept {
  if (fd < 0) return;
  if (fd == target)
    ::fcntl(fd, F_SETFD, 0);
  else
    ::dup2(fd, target);
}

/// The child between fork and exec: own process group, PR_SET_PDEATHSIG,
/// default signal handling, the standard descriptors, cwd, exec. A failure
/// is written to `status_fd` as two ints (stage, errno). Async-signal-safe.
[[noreturn]] void exec_child(const ExecPlan& plan, ChildFds fds, int status_fd,
                             pid_t parent) noexcept {
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
  install_fd(fds.in, 0);
  install_fd(fds.out, 1);
  install_fd(fds.err, 2);
  int report[2] = {0, 0};
  if (!plan.cwd.empty() && ::chdir(plan.cwd.c_str()) != 0) {
    report[0] = 'c';
    report[1] = errno;
  } else {
    ::execve(plan.program.c_str(), plan.argv.data(), plan.envp.data());
    report[0] = 'e';
    report[1] = errno;
  }
  ssize_t ignored = ::write(status_fd, report, sizeof report);
  (void)ignored;
  ::_exit(127);
}

/// Forks and execs `plan` and waits for the exec. Returns the pid, or -1
/// with `failure` filled (the failed child is reaped).
pid_t start_program(const ExecPlan& plan, ChildFds fds, StartFailure& failure) {
  Pipe status = make_pipe("the exec status of " + plan.shown);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    failure = {'f', errno};
    return -1;
  }
  if (pid == 0) exec_child(plan, fds, status.write.get(), parent);
  ::setpgid(pid, pid);  // also in the parent: no race with kill(-pid)
  status.write.reset();
  int report[2] = {0, 0};
  ssize_t got;
  while ((got = ::read(status.read.get(), report, sizeof report)) < 0 && errno == EINTR) {
  }
  if (got != static_cast<ssize_t>(sizeof report)) return pid;  // end of file: exec'd
  int ignored = 0;
  wait_pid(pid, &ignored, 0);
  failure = {report[0], report[1]};
  return -1;
}

std::string start_failure_text(const StartFailure& f, const ExecPlan& plan) {
  switch (f.stage) {
    case 'f':
      return fmt::format("cannot start '{}': fork failed: {}", plan.shown, errno_text(f.error));
    case 'c':
      return fmt::format("cannot change to the directory '{}': {}", plan.cwd, errno_text(f.error));
  }
  return fmt::format("cannot run '{}': {}", plan.shown, errno_text(f.error));
}

}  // namespace

// ---------------------------------------------------------------------------
// run_command
// ---------------------------------------------------------------------------

std::string CommandResult::describe(double timeout_sec) const {
  if (!started) return error;
  if (interrupted) return "interrupted";
  if (timed_out)
    return timeout_sec > 0 ? fmt::format("timed out after {:g} s", timeout_sec) : "timed out";
  if (signal != 0) return "killed by " + signal_text(signal);
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

/// The command's standard streams: the child's ends (closed in nightjar once
/// it started) and nightjar's (-1 where a stream is not a pipe).
struct CommandIo {
  UniqueFd child_in, child_out, child_err;
  UniqueFd in, out, err;  ///< nightjar writes `in`, reads `out` and `err`

  ChildFds child() const {
    return {child_in.get(), child_out.get(), child_err ? child_err.get() : child_out.get()};
  }
  void started() {
    child_in.reset();
    child_out.reset();
    child_err.reset();
  }
};

/// Opens the streams `spec` asks for. Returns why a file cannot be opened,
/// or "". Throws EnvironmentError when a pipe cannot be created.
std::string open_io(const CommandSpec& spec, CommandIo& io) {
  if (!spec.input.empty()) {
    Pipe p = make_pipe("the command's input");
    io.child_in = std::move(p.read);
    io.in = std::move(p.write);
    ::fcntl(io.in.get(), F_SETFL, ::fcntl(io.in.get(), F_GETFL) | O_NONBLOCK);
  } else {
    const std::string& path = spec.stdin_path.empty() ? "/dev/null" : spec.stdin_path;
    io.child_in.reset(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!io.child_in)
      return fmt::format("cannot read '{}' for the input of '{}': {}", path, spec.argv.front(),
                         errno_text(errno));
  }
  if (!spec.stdout_path.empty()) {
    io.child_out.reset(
        ::open(spec.stdout_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (!io.child_out)
      return fmt::format("cannot write '{}' for the output of '{}': {}", spec.stdout_path,
                         spec.argv.front(), errno_text(errno));
  } else {
    Pipe p = make_pipe("the command's output");
    io.child_out = std::move(p.write);
    io.out = std::move(p.read);
  }
  if (!spec.merge_stderr) {
    Pipe p = make_pipe("the command's errors");
    io.child_err = std::move(p.write);
    io.err = std::move(p.read);
  }
  for (const UniqueFd* fd : {&io.out, &io.err})
    if (*fd) ::fcntl(fd->get(), F_SETFL, ::fcntl(fd->get(), F_GETFL) | O_NONBLOCK);
  return "";
}

/// Reads what is available from `fd` into `buf` (up to `limit` bytes kept).
/// Returns false at end of file or on a hard error.
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

/// Writes what the pipe takes now of `data` from `offset`. Returns false
/// once everything is written or the reader is gone (EPIPE: the command
/// exited without reading it all). SIGPIPE is blocked in this thread around
/// the write and the one it raised is consumed, so nightjar never dies of it.
bool feed(int fd, const std::string& data, std::size_t& offset) {
  sigset_t pipe_only, old;
  ::sigemptyset(&pipe_only);
  ::sigaddset(&pipe_only, SIGPIPE);
  ::pthread_sigmask(SIG_BLOCK, &pipe_only, &old);
  bool more = true, broken = false;
  while (offset < data.size()) {
    ssize_t n = ::write(fd, data.data() + offset, data.size() - offset);
    if (n > 0) {
      offset += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    broken = n < 0 && errno == EPIPE;
    more = false;
    break;
  }
  if (offset >= data.size()) more = false;
  if (broken && !::sigismember(&old, SIGPIPE)) {
    const timespec zero{};
    while (::sigtimedwait(&pipe_only, nullptr, &zero) == SIGPIPE) {
    }
  }
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return more;
}

/// Watches a started command until it ended and its output is read: feeds
/// its input, drains its output, and stops its group on timeout or
/// interruption.
class CommandWatch {
 public:
  CommandWatch(const CommandSpec& spec, pid_t pid, CommandIo& io, CommandResult& r,
               Clock::time_point t0)
      : spec_(spec), pid_(pid), io_(io), r_(r), t0_(t0) {}

  void run() {
    while (true) {
      if (!exited_) notice_exit();
      if (!exited_) stop_if_asked();
      if (!exited_ && kill_sent_ && seconds_since(*kill_sent_) > spec_.kill_grace_sec)
        ::kill(-pid_, SIGKILL);
      if (!io_.out && !io_.err && exited_) break;
      // Output held open by a process that left the group (setsid): stop
      // waiting for it a little after the command itself ended.
      if (exited_ && seconds_since(*exit_seen_) > 2.0) break;
      pump();
    }
  }

 private:
  /// The command exited (not reaped yet: its pid and group id stay ours).
  void notice_exit() {
    siginfo_t info{};
    info.si_pid = 0;
    if (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) != 0 ||
        info.si_pid != pid_)
      return;
    exited_ = true;
    exit_seen_ = Clock::now();
    // Whatever the command left running in its group goes now, while the
    // unreaped leader still reserves the group id.
    ::kill(-pid_, SIGKILL);
    io_.in.reset();  // nobody reads it any more
  }

  void stop_if_asked() {
    if (r_.interrupted || r_.timed_out) return;
    if (spec_.interrupted ? spec_.interrupted() : nightjar::interrupted())
      r_.interrupted = true;
    else if (spec_.timeout_sec > 0 && seconds_since(t0_) > spec_.timeout_sec)
      r_.timed_out = true;
    if (r_.interrupted || r_.timed_out) {
      ::kill(-pid_, SIGTERM);
      kill_sent_ = Clock::now();
    }
  }

  /// One round of I/O: waits up to 10 ms for any stream.
  void pump() {
    pollfd fds[3];
    nfds_t n = 0;
    if (io_.out) fds[n++] = {io_.out.get(), POLLIN, 0};
    if (io_.err) fds[n++] = {io_.err.get(), POLLIN, 0};
    if (io_.in) fds[n++] = {io_.in.get(), POLLOUT, 0};
    if (n == 0) {
      ::usleep(2000);
      return;
    }
    if (::poll(fds, n, 10) < 0 && errno != EINTR) {
      io_.out.reset();
      io_.err.reset();
      io_.in.reset();
      return;
    }
    if (io_.out && !drain(io_.out.get(), r_.out, spec_.capture_limit, r_.truncated))
      io_.out.reset();
    if (io_.err && !drain(io_.err.get(), r_.err, spec_.capture_limit, r_.truncated))
      io_.err.reset();
    if (io_.in && !feed(io_.in.get(), spec_.input, fed_)) io_.in.reset();
  }

  const CommandSpec& spec_;
  const pid_t pid_;
  CommandIo& io_;
  CommandResult& r_;
  const Clock::time_point t0_;
  bool exited_ = false;
  std::optional<Clock::time_point> kill_sent_, exit_seen_;
  std::size_t fed_ = 0;
};

/// Journals the process group a program started with start_program()
/// leads (workloads/sys/journal.h), so that a sweep can end it if nightjar
/// is killed before it does. 0 when the journal cannot be written (the
/// program still has PR_SET_PDEATHSIG).
std::uint64_t record_group(pid_t pid, const std::string& label) noexcept {
  return Journal::process().record_or_warn(
      JournalKind::process_group,
      {std::to_string(pid), std::to_string(process_start_ticks(pid).value_or(0)), label});
}

/// The pids of every process whose /proc/PID/stat field `field` is `value`
/// (4: the parent, 5: the process group).
std::vector<pid_t> processes_where(int field, long value) {
  std::vector<pid_t> out;
  DIR* d = ::opendir("/proc");
  if (!d) return out;
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
    auto text = read_small_file(std::string("/proc/") + e->d_name + "/stat");
    if (!text) continue;
    auto f = stat_field(*text, field);
    if (f && std::atol(f->c_str()) == value) out.push_back(std::atoi(e->d_name));
  }
  ::closedir(d);
  return out;
}

/// The children of this process.
std::vector<pid_t> own_children() {
  return processes_where(4, ::getpid());
}

/// While it lives, this process is a child subreaper (CommandSpec::
/// reap_orphans); on destruction every child that was not one before (the
/// command's adopted descendants) is SIGKILLed and reaped by PID, until none
/// is left, and the previous subreaper setting comes back.
class OrphanReaper {
 public:
  explicit OrphanReaper(bool on) : on_(on) {
    if (!on_) return;
    ::prctl(PR_GET_CHILD_SUBREAPER, &was_);
    ::prctl(PR_SET_CHILD_SUBREAPER, 1);
    for (pid_t p : own_children()) before_.push_back(p);
  }
  /// Kills and reaps the adopted processes (all but `command` and the
  /// children from before); their PIDs are added to `killed`.
  void finish(pid_t command, std::vector<int>& killed) {
    if (!on_) return;
    for (int round = 0; round < 50; ++round) {  // an orphan's own children are adopted next
      std::vector<pid_t> adopted;
      for (pid_t p : own_children())
        if (p != command && std::find(before_.begin(), before_.end(), p) == before_.end())
          adopted.push_back(p);
      if (adopted.empty()) break;
      for (pid_t p : adopted) {
        ::kill(p, SIGKILL);
        int status = 0;
        wait_pid(p, &status, 0);
        killed.push_back(p);
      }
    }
    ::prctl(PR_SET_CHILD_SUBREAPER, was_);
    on_ = false;
  }
  ~OrphanReaper() {
    std::vector<int> ignored;
    finish(0, ignored);
  }
  OrphanReaper(const OrphanReaper&) = delete;
  OrphanReaper& operator=(const OrphanReaper&) = delete;

 private:
  bool on_;
  int was_ = 0;
  std::vector<pid_t> before_;
};

/// Reaps the command and records its status, wall and CPU time.
void reap_command(pid_t pid, Clock::time_point t0, CommandResult& r) {
  int status = 0;
  struct rusage ru {};
  while (::wait4(pid, &status, 0, &ru) < 0 && errno == EINTR) {
  }
  r.wall_sec = seconds_since(t0);
  r.cpu_sec = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
              static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
  r.wait_status = status;
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
}

}  // namespace

CommandResult run_command(const CommandSpec& spec) {
  CommandResult r;
  ExecPlan plan;
  r.error = prepare_exec(spec.argv, spec.env, spec.cwd, plan);
  if (!r.error.empty()) return r;
  CommandIo io;
  r.error = open_io(spec, io);
  if (!r.error.empty()) return r;
  const auto t0 = Clock::now();
  OrphanReaper orphans(spec.reap_orphans);
  StartFailure failure;
  const pid_t pid = start_program(plan, io.child(), failure);
  if (pid < 0) {
    r.error = start_failure_text(failure, plan);
    r.start_errno = failure.error;
    return r;
  }
  io.started();
  r.started = true;
  const std::uint64_t journaled = record_group(pid, plan.shown);
  CommandWatch(spec, pid, io, r, t0).run();
  reap_command(pid, t0, r);
  orphans.finish(pid, r.orphans_killed);
  Journal::process().done(journaled);
  return r;
}

// ---------------------------------------------------------------------------
// ChildProcess
// ---------------------------------------------------------------------------

ChildProcess::ChildProcess(const SpawnSpec& spec) {
  ExecPlan plan;
  if (std::string why = prepare_exec(spec.argv, {}, "", plan); !why.empty())
    throw EnvironmentError(why);
  UniqueFd in(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  const std::string out_path = spec.stdout_path.empty() ? "/dev/null" : spec.stdout_path;
  UniqueFd out(::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!out)
    throw EnvironmentError(fmt::format("cannot write '{}' for the output of '{}': {}", out_path,
                                       plan.shown, errno_text(errno)));
  StartFailure failure;
  pid_ =
      start_program(plan, {in.get(), out.get(), spec.stderr_to_stdout ? out.get() : -1}, failure);
  if (pid_ < 0) throw EnvironmentError(start_failure_text(failure, plan));
  journaled_ = record_group(pid_, plan.shown);
}

std::optional<int> ChildProcess::poll() {
  if (pid_ <= 0) return status_;
  int status = 0;
  const pid_t r = wait_pid(pid_, &status, WNOHANG);
  if (r == 0) return std::nullopt;
  // r < 0 (ECHILD): reaped elsewhere, its status is lost: exit status 255.
  status_ = r == pid_ ? status : 255 << 8;
  pid_ = 0;
  Journal::process().done(std::exchange(journaled_, 0));
  return status_;
}

int ChildProcess::kill_and_reap() noexcept {
  if (pid_ <= 0) return status_;
  ::kill(-pid_, SIGKILL);  // its group: whatever it started goes too
  ::kill(pid_, SIGKILL);
  int status = 0;
  status_ = wait_pid(pid_, &status, 0) == pid_ ? status : 255 << 8;
  pid_ = 0;
  Journal::process().done(std::exchange(journaled_, 0));
  return status_;
}

// ---------------------------------------------------------------------------
// Undoing journaled processes
// ---------------------------------------------------------------------------

namespace {

/// The pids of every process in process group `pgid`.
std::vector<pid_t> group_members(pid_t pgid) {
  return processes_where(5, pgid);
}

/// True once `pid` no longer is the process that started at `start` (gone,
/// or a zombie waiting for init).
bool ended(pid_t pid, std::uint64_t start) {
  auto text = read_small_file("/proc/" + std::to_string(pid) + "/stat");
  if (!text) return true;
  auto ticks = stat_field(*text, 22);
  if (!ticks || std::strtoull(ticks->c_str(), nullptr, 10) != start) return true;
  auto state = stat_field(*text, 3);
  return state && (*state == "Z" || *state == "X");
}

/// Waits up to 5 s until every (pid, start) has ended; the ones left.
std::vector<pid_t> wait_ended(const std::vector<std::pair<pid_t, std::uint64_t>>& procs) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  std::vector<pid_t> left;
  for (;;) {
    left.clear();
    for (const auto& [pid, start] : procs)
      if (!ended(pid, start)) left.push_back(pid);
    if (left.empty() || std::chrono::steady_clock::now() >= deadline) return left;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace

UndoResult undo_journaled_process(const JournalEntry& entry) {
  using State = UndoResult::State;
  const pid_t pid = static_cast<pid_t>(std::atol(entry.field(0).c_str()));
  const std::uint64_t start = std::strtoull(entry.field(1).c_str(), nullptr, 10);
  const std::string& label = entry.field(2);
  if (pid <= 1)
    return {State::declined,
            fmt::format("pid '{}' is not a process nightjar started", entry.field(0))};
  std::vector<std::pair<pid_t, std::uint64_t>> targets;
  if (entry.kind == JournalKind::process) {
    if (ended(pid, start)) return {State::absent, ""};
    targets.emplace_back(pid, start);
    ::kill(pid, SIGKILL);
  } else {
    auto leader = process_start_ticks(pid);
    if (leader && *leader != start) return {State::absent, ""};  // pid reused: the group is gone
    for (pid_t m : group_members(pid))
      if (auto t = process_start_ticks(m)) targets.emplace_back(m, *t);
    if (targets.empty()) return {State::absent, ""};
    ::kill(-pid, SIGKILL);
  }
  const std::vector<pid_t> left = wait_ended(targets);
  const std::string what =
      entry.kind == JournalKind::process
          ? fmt::format("process {} ({})", pid, label)
          : fmt::format("process group {} ({}, {} process(es))", pid, label, targets.size());
  if (!left.empty())
    return {State::left,
            fmt::format("{}: pid {} still runs 5 s after SIGKILL (uninterruptible sleep? see "
                        "/proc/{}/stack); run `nightjar cleanup` again later",
                        what, left.front(), left.front())};
  return {State::undone, "killed " + what};
}

}  // namespace nightjar
