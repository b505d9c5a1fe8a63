#include "test_support.h"

#include <SQLiteCpp/SQLiteCpp.h>
#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "results/model/text.h"
#include "results/store/calibration.h"

namespace nightjar::test {

TempDir::TempDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "nightjar-test-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string TempDir::write(const std::string& name, const std::string& content) const {
  std::string p = path_ + "/" + name;
  std::filesystem::create_directories(std::filesystem::path(p).parent_path());
  std::ofstream(p) << content;
  return p;
}

namespace {
// Starts `wrapper...` NIGHTJAR_BINARY `args...` (no wrapper: the binary
// itself), as `as` when given.
pid_t start(const std::vector<std::string>& args, const std::map<std::string, std::string>& env,
            const std::string& out_path, const std::string& err_path,
            const std::vector<std::string>& wrapper = {}, const Credentials* as = nullptr) {
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(out, 1);
    dup2(err, 2);
    int devnull = open("/dev/null", O_RDONLY);
    dup2(devnull, 0);
    for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
    // Groups first: once the user ID is dropped they can no longer be changed.
    if (as && (setgroups(0, nullptr) != 0 || setresgid(as->gid, as->gid, as->gid) != 0 ||
               setresuid(as->uid, as->uid, as->uid) != 0)) {
      dprintf(2, "cannot run as uid %u gid %u: %s\n", static_cast<unsigned>(as->uid),
              static_cast<unsigned>(as->gid), strerror(errno));
      _exit(126);
    }
    std::vector<char*> argv;
    std::string bin = NIGHTJAR_BINARY;
    for (const auto& w : wrapper) argv.push_back(const_cast<char*>(w.c_str()));
    argv.push_back(bin.data());
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    if (wrapper.empty())
      execv(bin.c_str(), argv.data());
    else
      execvp(argv[0], argv.data());
    dprintf(2, "cannot execute %s: %s\n", argv[0], strerror(errno));
    _exit(127);
  }
  return pid;
}
}  // namespace

namespace {
// pid and every descendant, parents before children.
std::vector<pid_t> process_tree(pid_t pid) {
  std::vector<pid_t> out{pid};
  for (std::size_t i = 0; i < out.size(); ++i)
    for (pid_t c : children_of(out[i])) out.push_back(c);
  return out;
}
}  // namespace

std::string describe_process_tree(pid_t pid) {
  // "(comm) state S, wchan W" of a /proc/PID or /proc/PID/task/TID directory.
  auto status = [](const std::string& dir) {
    const std::string stat = read_file(dir + "/stat");
    const auto close = stat.rfind(')');
    return "(" + std::string(trim(read_file(dir + "/comm"))) + ") state " +
           (close == std::string::npos ? "?" : stat.substr(close + 2, 1)) + ", wchan " +
           std::string(trim(read_file(dir + "/wchan")));
  };
  std::ostringstream out;
  for (pid_t p : process_tree(pid)) {
    const std::string proc = "/proc/" + std::to_string(p);
    out << "pid " << p << " " << status(proc) << "\n";
    std::error_code ec;
    for (const auto& t : std::filesystem::directory_iterator(proc + "/task", ec)) {
      out << "  thread " << t.path().filename().string() << " " << status(t.path().string())
          << "\n";
      std::istringstream stack(read_file(t.path().string() + "/stack"));
      for (std::string frame; std::getline(stack, frame);) out << "    " << frame << "\n";
    }
  }
  return out.str();
}

int wait_exit_code(pid_t pid, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  int status = 0;
  for (;;) {
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) return -1;
    if (std::chrono::steady_clock::now() >= deadline) {
      const std::vector<pid_t> tree = process_tree(pid);
      ADD_FAILURE() << "pid " << pid << " was still running after " << limit.count()
                    << " s: a hang. What it and its descendants were doing:\n"
                    << describe_process_tree(pid);
      for (pid_t p : tree) ::kill(p, SIGKILL);
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

namespace {
// Starts nightjar as start() does, waits for it and returns its exit code and output.
CommandResult run_to_end(const std::vector<std::string>& args,
                         const std::map<std::string, std::string>& env,
                         const std::vector<std::string>& wrapper, const Credentials* as) {
  TempDir dir;
  std::string out = dir.path() + "/out", err = dir.path() + "/err";
  pid_t pid = start(args, env, out, err, wrapper, as);
  CommandResult r;
  r.exit_code = wait_exit_code(pid);
  r.out = read_file(out);
  r.err = read_file(err);
  return r;
}
}  // namespace

CommandResult run_nightjar(const std::vector<std::string>& args,
                           const std::map<std::string, std::string>& env) {
  return run_to_end(args, env, {}, nullptr);
}

CommandResult run_nightjar_under(const std::vector<std::string>& wrapper,
                                 const std::vector<std::string>& args) {
  // LeakSanitizer cannot run in a traced process (it aborts with "does not
  // work under ptrace"); a wrapper such as strace traces nightjar, so leak
  // checking is off for this child only. Address and UB checks stay on.
  std::map<std::string, std::string> env;
  if (const char* asan = std::getenv("ASAN_OPTIONS"))
    env["ASAN_OPTIONS"] = std::string(asan) + ":detect_leaks=0";
  return run_to_end(args, env, wrapper, nullptr);
}

CommandResult run_nightjar_as(const Credentials& who, const std::vector<std::string>& args) {
  return run_to_end(args, {}, {}, &who);
}

pid_t spawn_nightjar(const std::vector<std::string>& args, const std::string& dir,
                     const std::string& tag, const std::map<std::string, std::string>& env) {
  return start(args, env, dir + "/" + tag + ".out", dir + "/" + tag + ".err");
}

pid_t fork_sleeper() {
  const pid_t pid = fork();
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    for (;;) pause();
  }
  return pid;
}

std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> out;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string stat = read_file(e.path().string() + "/stat");
    auto close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 2));
    std::string state;
    long ppid = 0;
    rest >> state >> ppid;
    if (ppid == parent) out.push_back(static_cast<pid_t>(std::stol(name)));
  }
  return out;
}

std::string source_path(const std::string& relative) {
  return std::string(NIGHTJAR_SOURCE_DIR) + "/" + relative;
}

std::string query_one(const std::string& db, const std::string& sql) {
  sqlite3* h = nullptr;
  if (sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    sqlite3_close(h);
    return "";
  }
  sqlite3_busy_timeout(h, 10000);
  sqlite3_stmt* st = nullptr;
  std::string result;
  if (sqlite3_prepare_v2(h, sql.c_str(), -1, &st, nullptr) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW) {
    const unsigned char* t = sqlite3_column_text(st, 0);
    result = t ? reinterpret_cast<const char*>(t) : "";
  }
  sqlite3_finalize(st);
  sqlite3_close(h);
  return result;
}

void exec_sql(const std::string& db, const std::string& sql) {
  SQLite::Database d(db, SQLite::OPEN_READWRITE, 10000);
  d.exec(sql);
}

void calibrate_quietly(const std::string& db) {
  SQLite::Database d(db, SQLite::OPEN_READWRITE, 10000);
  d.exec(kCalibrationTableSql);
  d.exec(
      "INSERT OR REPLACE INTO calibration(workload, job, cell, metric, testbox, between_var, df, "
      "runs) SELECT DISTINCT r.workload, r.job, r.cell, s.metric, t.hostname, 0, 1e6, 2 FROM run r "
      "JOIN testbox t ON t.id=r.testbox_id JOIN sample s ON s.run_id=r.id WHERE "
      "r.status='complete'");
}

void expect_golden(const std::string& name, const std::string& actual) {
  const std::string path = source_path("tests/golden/" + name);
  const char* update = std::getenv("NIGHTJAR_UPDATE_GOLDEN");
  if (update && std::string(update) == "1") {
    std::ofstream(path) << actual;
    GTEST_SKIP() << "rewrote " << path;
  }
  const std::string expected = read_file(path);
  ASSERT_FALSE(expected.empty()) << path << " is missing; run with NIGHTJAR_UPDATE_GOLDEN=1";
  EXPECT_EQ(actual, expected) << "differs from " << path
                              << " (NIGHTJAR_UPDATE_GOLDEN=1 rewrites it; review the diff)";
}

std::string fake_bzimage(const std::string& banner) {
  std::string img(0x1000, '\0');
  img.replace(0x202, 4, "HdrS");
  unsigned off = 0x600;  // string at 0x200 + off
  img[0x20E] = static_cast<char>(off & 0xff);
  img[0x20F] = static_cast<char>(off >> 8);
  img.replace(0x200 + off, banner.size(), banner);
  return img;
}

std::string kernels_dir() {
  const char* env = std::getenv("NIGHTJAR_KERNELS");
  if (env && *env) return env;
  std::filesystem::path build = std::filesystem::path(NIGHTJAR_BINARY).parent_path() / "kernels";
  if (std::filesystem::is_directory(build)) return build.string();
  const char* home = std::getenv("HOME");
  return std::string(home ? home : "/root") + "/.cache/nightjar/kernels";
}

std::string kernel_image(const std::string& flavour) {
  std::filesystem::path boot = std::filesystem::path(kernels_dir()) / flavour / "boot";
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(boot, ec))
    if (e.path().filename().string().rfind("vmlinuz-", 0) == 0) return e.path().string();
  return "";
}

int qemu_processes(const std::string& needle) {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    std::string cmd = read_file(e.path().string() + "/cmdline");
    for (auto& c : cmd)
      if (c == '\0') c = ' ';
    if (cmd.find("qemu-system") != std::string::npos && cmd.find(needle) != std::string::npos) ++n;
  }
  return n;
}

}  // namespace nightjar::test
