// Helpers shared by nightjar's tests: temporary directories, files, and
// running the real `nightjar` binary as a user would.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace nightjar::test {

/// A temporary directory removed (recursively) on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  /// Writes `content` to path()/name and returns the full path.
  std::string write(const std::string& name, const std::string& content) const;

 private:
  std::string path_;
};

/// Exit code and captured output of one nightjar invocation.
struct CommandResult {
  int exit_code = -1;
  std::string out, err;
};

/// Runs the nightjar binary under test with `args` (and extra environment
/// variables) and waits for it.
CommandResult run_nightjar(const std::vector<std::string>& args,
                           const std::map<std::string, std::string>& env = {});

/// Runs the nightjar binary under a wrapper program: `wrapper...` (looked up
/// on PATH) then the binary and `args`, e.g. {"strace", "-f", ...}. Under a
/// sanitizer build, leak detection is turned off for that child (LSan cannot
/// run under ptrace).
CommandResult run_nightjar_under(const std::vector<std::string>& wrapper,
                                 const std::vector<std::string>& args);

/// A user and group to run a child as: real, effective and saved IDs, no
/// supplementary groups.
struct Credentials {
  uid_t uid = 65534;  ///< nobody
  gid_t gid = 65534;  ///< nogroup
};

/// Runs the nightjar binary as `who`: the forked child drops its privileges
/// itself (setgroups, setresgid, setresuid) before the exec, so no external
/// program (setpriv, su) is needed and it works wherever the test runs as
/// root, also in the busybox qemu guest. Exit 126 with the reason on stderr
/// when the IDs cannot be set (not root); 127 when the binary cannot be
/// executed as `who` (a parent directory not searchable).
CommandResult run_nightjar_as(const Credentials& who, const std::vector<std::string>& args);

/// Starts nightjar in the background (with extra environment variables)
/// with stdout/stderr to files in `dir`; returns its pid. Use
/// wait_exit_code() to reap it.
pid_t spawn_nightjar(const std::vector<std::string>& args, const std::string& dir,
                     const std::string& tag, const std::map<std::string, std::string>& env = {});
/// Waits for `pid` and returns its exit code (128+signal when killed), for
/// at most `limit`. A process still running at the limit is a hang: the test
/// fails with what it and each descendant were doing (from /proc: state,
/// wchan, and each thread's kernel stack where readable, which needs root),
/// then they are killed with SIGKILL and reaped, and -1 is returned. A hung
/// nightjar thus fails one test with the place it hung, instead of stalling
/// ctest (or the qemu guest running the root tests) until its timeout.
int wait_exit_code(pid_t pid, std::chrono::seconds limit = std::chrono::seconds(600));
/// What `pid` and its descendants are doing, one block per process: comm,
/// state and wchan from /proc, and each thread's /proc/PID/task/TID/stack
/// when readable. For hang reports.
std::string describe_process_tree(pid_t pid);
/// Reads a whole file ("" when missing).
std::string read_file(const std::string& path);
/// Pids whose parent is `parent` (from /proc/*/stat).
std::vector<pid_t> children_of(pid_t parent);
/// Forks a child that sleeps until killed (it dies with the test:
/// PR_SET_PDEATHSIG); returns its pid (-1 when fork failed).
pid_t fork_sleeper();
/// A minimal x86 kernel image: a bzImage setup header ("HdrS" at 0x202)
/// whose version string (at 0x200 + the u16 at 0x20E) is `banner`; enough
/// for inspect_kernel_image (harness/vm/initramfs.h).
std::string fake_bzimage(const std::string& banner);
/// Where the Debian test kernels are (ci/fetch-kernels.sh): $NIGHTJAR_KERNELS,
/// else build/kernels (where ci/test.sh fetches them), else
/// ~/.cache/nightjar/kernels.
std::string kernels_dir();
/// The first vmlinuz-* of kernels_dir()/FLAVOUR/boot ("amd64", "rt-amd64"), or "".
std::string kernel_image(const std::string& flavour);
/// How many qemu-system processes have `needle` in their command line.
int qemu_processes(const std::string& needle);
/// Path of a file in the source tree (e.g. "jobs/pft-quick.yaml").
std::string source_path(const std::string& relative);

/// Golden-file check: `actual` must equal tests/golden/NAME in the source
/// tree. With NIGHTJAR_UPDATE_GOLDEN=1 the file is rewritten instead and the
/// test skips (review the diff before committing it).
void expect_golden(const std::string& name, const std::string& actual);
/// Runs `sql` on the database at `db` with the sqlite3 C API and returns the
/// first column of the first row as text ("" when no row).
std::string query_one(const std::string& db, const std::string& sql);
/// Runs `sql` (statements that return no rows, such as UPDATE) on the
/// database at `db` through a connection of its own; throws on an error.
void exec_sql(const std::string& db, const std::string& sql);
/// Stores, for every cell, metric and testbox of the complete runs in `db`, a
/// calibration saying its runs do not differ (between-run variance 0, df
/// 1e6): a testbox as quiet as a script that replays the same values. Tests
/// of layouts and rules that are not about the between-run model use it so a
/// row with one run on a side is decided on its iterations' noise, as it
/// would be on such a testbox (docs/statistics.md "Where the between-run
/// variation comes from").
void calibrate_quietly(const std::string& db);

}  // namespace nightjar::test
