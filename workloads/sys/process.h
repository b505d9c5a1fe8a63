// The process toolkit: every program nightjar starts and every worker process
// it forks goes through this file (workloads/sys/process.cpp is the only
// source of nightjar that forks, execs or waits for a child).
//
//  - file descriptors and pipes (UniqueFd, make_pipe), EINTR-safe waiting
//    for a child (wait_pid) and the text of a wait status (describe_exit);
//  - finding a program on PATH (find_program);
//  - run_command(): an external program run to completion (argv, no shell),
//    with cwd, environment, stdin from /dev/null, a file or a string, output
//    captured or sent to a file, a timeout, and termination of its whole
//    process group on timeout or SIGINT/SIGTERM (workloads/sys/signals.h).
//    The exec and gbench workloads, bisect's git and build commands, mkswap,
//    qemu's helpers (cpio, module decompression) and gnuplot use it;
//  - ChildProcess: a long-running program (qemu) polled by its caller and
//    killed and reaped on destruction;
//  - Workers: a group of forked worker processes of a workload (pft,
//    tcp_sendfile, tmpfs_refault) with start gates, progress reports, and
//    kill-and-reap of survivors on every path.
//
// Every child nightjar starts gets PR_SET_PDEATHSIG(SIGKILL), so none
// outlives nightjar, and every one is reaped by the object that started it.
//
// Threads: programs and workers are started from one thread at a time
// (nightjar's runner thread); run_command() and ChildProcess wait for the
// exec of the program they start, and a fork in another thread during that
// window would hold the pipe that reports it.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "workloads/sys/journal.h"

namespace nightjar {

// ---------------------------------------------------------------------------
// File descriptors, pipes, wait statuses
// ---------------------------------------------------------------------------

/// A file descriptor owned by one object: closed on destruction and on
/// reset(). Movable, not copyable. -1 means none.
class UniqueFd {
 public:
  UniqueFd() noexcept = default;
  explicit UniqueFd(int fd) noexcept : fd_(fd) {}
  UniqueFd(UniqueFd&& o) noexcept : fd_(o.release()) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }

  int get() const noexcept { return fd_; }
  explicit operator bool() const noexcept { return fd_ >= 0; }
  /// Gives up ownership: returns the descriptor and holds none.
  int release() noexcept;
  /// Closes the descriptor held (if any) and holds `fd` instead.
  void reset(int fd = -1) noexcept;

 private:
  int fd_ = -1;
};

/// The two ends of a pipe.
struct Pipe {
  UniqueFd read;
  UniqueFd write;
};

/// A pipe with both ends close-on-exec. Throws EnvironmentError "cannot
/// create a pipe for WHAT: REASON" (EMFILE: too many open files).
Pipe make_pipe(std::string_view what);

/// Waits for child `pid` as wait(2) does (same status, flags, result and
/// errno), retried while it fails with EINTR (nightjar's signal handlers omit
/// SA_RESTART). Async-signal-safe.
pid_t wait_pid(pid_t pid, int* status, int flags) noexcept;

/// How a process ended, from its wait status: "exited with 3", "killed by
/// SIGKILL" (signal names by results/model/text.h signal_text).
std::string describe_exit(int wait_status);

/// The shell's `$?` of a wait status: the exit status, or 128 + the signal.
int exit_code(int wait_status);

// ---------------------------------------------------------------------------
// Programs
// ---------------------------------------------------------------------------

/// $PATH, or "/usr/local/bin:/usr/bin:/bin" when it is unset.
std::string program_search_path();

/// Where program `name` is: `name` itself when it contains a '/', else the
/// first DIR/name for DIR in `path` (':'-separated; an empty entry is the
/// working directory). Only executable regular files count. "" when none.
std::string find_program(std::string_view name, std::string_view path);
/// find_program() on program_search_path().
std::string find_program(std::string_view name);

/// Splits a command line into words without a shell: blanks separate words;
/// '…' keeps everything literally; "…" keeps everything but \" \\ \$ \`;
/// a backslash outside quotes escapes the next character. No expansion of
/// variables, globs or ~. A text starting with '[' is read as a JSON array of
/// strings instead (`["./bench", "--size", "1M"]`). Throws ParamError (field
/// `field`) for unbalanced quotes, a trailing backslash, a bad JSON array or
/// an empty command.
std::vector<std::string> split_command_line(const std::string& text,
                                            const std::string& field = "command");

/// The last `max_lines` lines of `text` (at most `max_chars` characters,
/// trailing blank lines dropped), joined with " | " for a one-line reason.
std::string output_tail(const std::string& text, std::size_t max_lines = 8,
                        std::size_t max_chars = 600);

// ---------------------------------------------------------------------------
// run_command
// ---------------------------------------------------------------------------

/// What to run and how.
struct CommandSpec {
  std::vector<std::string> argv;           ///< argv[0] is looked up in PATH unless it contains '/'
  std::string cwd;                         ///< working directory; "" = nightjar's own
  std::map<std::string, std::string> env;  ///< added to (or replacing in) nightjar's environment
  double timeout_sec = 0;                  ///< > 0: the group is killed after this many seconds
  /// Written to the command's stdin (which then reaches end of file); a
  /// command that exits without reading it all is not an error. "" with
  /// stdin_path "": stdin is /dev/null.
  std::string input;
  std::string stdin_path;   ///< stdin read from this file (when `input` is "")
  std::string stdout_path;  ///< stdout written to this file (created/truncated, 0644), not captured
  bool merge_stderr = false;  ///< true: stderr goes where stdout goes (interleaved as written)
  /// Bytes kept of each captured stream; beyond that the output is read and
  /// dropped (the result says `truncated`).
  std::size_t capture_limit = 16u << 20;
  /// Polled every few milliseconds; when it returns true the group gets
  /// SIGTERM, then SIGKILL after `kill_grace_sec`, and the result says
  /// `interrupted`. Default: nightjar's SIGINT/SIGTERM flag
  /// (workloads/sys/signals.h). `[] { return false; }` runs the command to
  /// completion whatever happens.
  std::function<bool()> interrupted;
  double kill_grace_sec = 1.0;
  /// true: nightjar is a child subreaper (PR_SET_CHILD_SUBREAPER) while the
  /// command runs, so that processes of its tree that left its process group
  /// (a new session: qemu under lava-run, started through a pty) and outlive
  /// their parent are reparented to nightjar instead of init; every such
  /// process left when the command ends is SIGKILLed and reaped by its PID.
  /// For commands whose descendants may escape the group kill.
  bool reap_orphans = false;
};

/// How a command ended and what it wrote.
struct CommandResult {
  bool started = false;      ///< false: fork/chdir/exec failed (see `error`)
  std::string error;         ///< why it did not start ("cannot run 'x': No such file or directory")
  int start_errno = 0;       ///< the errno of that failure, 0 when there was none
  int exit_code = -1;        ///< exit status when it exited normally, else -1
  int signal = 0;            ///< the signal that killed it, else 0
  int wait_status = 0;       ///< its wait status (for describe_exit), once reaped
  bool timed_out = false;    ///< killed because timeout_sec passed
  bool interrupted = false;  ///< killed because `interrupted()` became true
  bool truncated = false;    ///< a stream exceeded capture_limit
  std::string out, err;      ///< captured stdout (and stderr when merged) / stderr
  double wall_sec = 0;       ///< from fork to reaping, seconds
  double cpu_sec = 0;        ///< user + system CPU of the child and the descendants it waited for
  /// reap_orphans: the PIDs of the adopted descendants killed at the end
  std::vector<int> orphans_killed;

  /// Exited with status 0.
  bool ok() const { return started && exit_code == 0 && !timed_out && !interrupted; }
  /// "exited with status 2", "killed by SIGSEGV", "timed out after 5 s",
  /// "interrupted", or `error` (the wording docs/bisect.md shows).
  std::string describe(double timeout_sec = 0) const;
  /// The last lines of stderr and stdout for a failure reason:
  /// "stderr: ...; stdout: ..." (each at most `max_lines` lines / `max_chars`).
  std::string tail(std::size_t max_lines = 8, std::size_t max_chars = 600) const;
};

/// Runs `spec` to completion (or timeout, or interruption) and returns how it
/// ended. The child runs in a new process group with PR_SET_PDEATHSIG(SIGKILL)
/// and default signal handling; whatever is left of its group when it ends
/// (background processes) is SIGKILLed, so nothing started here outlives the
/// call. Never throws for the command's own failures (a stdin/stdout file
/// that cannot be opened is one: not started); throws EnvironmentError only
/// when pipes cannot be created.
CommandResult run_command(const CommandSpec& spec);

// ---------------------------------------------------------------------------
// ChildProcess: a long-running program
// ---------------------------------------------------------------------------

/// How to start a ChildProcess.
struct SpawnSpec {
  std::vector<std::string> argv;  ///< argv[0] is looked up in PATH unless it contains '/'
  std::string stdout_path;        ///< stdout to this file (created/truncated, 0644); "" = /dev/null
  bool stderr_to_stdout = true;   ///< false: stderr is nightjar's own
};

/// A program started in its own process group (Ctrl-C reaches nightjar, which
/// decides when it stops), stdin from /dev/null, with PR_SET_PDEATHSIG. The
/// destructor SIGKILLs and reaps it unless it was reaped before, so no path
/// leaves it running.
class ChildProcess {
 public:
  /// Starts `spec` and returns once the program runs (its exec succeeded).
  /// Throws EnvironmentError "cannot run 'PROGRAM': REASON" otherwise.
  explicit ChildProcess(const SpawnSpec& spec);
  ~ChildProcess() { kill_and_reap(); }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  /// The wait status once the program ended (it is reaped then), nullopt
  /// while it runs. Non-blocking.
  std::optional<int> poll();
  /// SIGKILLs the program (unless it ended already), reaps it and returns
  /// its wait status. Never throws.
  int kill_and_reap() noexcept;

 private:
  pid_t pid_ = -1;
  int status_ = 0;
  std::uint64_t journaled_ = 0;  ///< its process group's journal record
};

// ---------------------------------------------------------------------------
// Workers: forked worker processes of a workload
// ---------------------------------------------------------------------------
//
// The contract of a worker body: it runs in a child forked from a process
// that may have other threads (the runner, receiver threads), where another
// thread may have held the allocator's or any other lock at the fork. So the
// body makes async-signal-safe calls only (signal-safety(7): system calls,
// clock_gettime, memcpy, ...): no malloc/new, no std::string, no iostreams,
// no locks, no exceptions. Everything it needs (paths, buffers, parameters)
// is prepared before spawn() and captured by reference; results go to shared
// memory (SharedRecords) and the return value is the exit status.
//
// Before the body runs, the toolkit has set PR_SET_PDEATHSIG(SIGKILL) (and
// exits with kWorkerOrphaned if nightjar was already gone), blocked SIGINT,
// SIGTERM and SIGPIPE (Ctrl-C reaches the whole process group, but nightjar
// decides what an interrupt means and stops workers with SIGKILL; writes to
// a closed pipe or socket fail with EPIPE), named the process (PR_SET_NAME)
// and closed the parent's ends of the group's pipes.

/// Exit statuses the toolkit gives a worker itself; bodies use others (0 =
/// success).
inline constexpr int kWorkerOrphaned = 121;    ///< nightjar was gone before the worker started
inline constexpr int kWorkerGateFailed = 122;  ///< reading a start gate failed

/// A worker's side of its group: async-signal-safe members only.
class WorkerLink {
 public:
  /// The worker's index in its group (0-based, in spawn order).
  std::size_t index() const noexcept { return index_; }
  /// Blocks until the parent opens start gate `gate` (Workers::open_gate),
  /// which releases every worker waiting on it at once (end of file on a
  /// pipe). Exits the worker with kWorkerGateFailed if the gate fails.
  void wait_gate(std::size_t gate) const noexcept;
  /// Tells the parent that this worker reached its next step (one report;
  /// Workers::await counts them).
  void report() const noexcept;

 private:
  friend class Workers;
  WorkerLink(const int* gate_fds, std::size_t gates, int report_fd, std::size_t index) noexcept
      : gate_fds_(gate_fds), gates_(gates), report_fd_(report_fd), index_(index) {}
  const int* gate_fds_;
  std::size_t gates_;
  int report_fd_;
  std::size_t index_;
};

/// How a worker group is named and stopped.
struct WorkersSpec {
  std::string name;             ///< prefixes error messages: "pft"
  std::string noun = "worker";  ///< one worker in messages: "worker 2 (pid 123)"
  bool numbered = true;         ///< false: "tmpfs_refault-r (pid 123)" (no index)
  const char* comm = nullptr;   ///< the workers' process name (PR_SET_NAME, 15 chars)
  std::size_t gates = 1;        ///< start gates (WorkerLink::wait_gate)
  /// Polled by await(); true -> Interrupted. Default: nightjar's
  /// SIGINT/SIGTERM flag (workloads/sys/signals.h).
  std::function<bool()> interrupted;
};

/// A group of worker processes. Spawn them, open their start gates (the
/// timed window of every worker starts together: the parent opens a gate
/// only once every worker reported ready), await their reports, wait for
/// them; the destructor SIGKILLs and reaps every worker still there, so
/// every path out (return, exception, Interrupted) leaves no process behind.
class Workers {
 public:
  /// Creates the gates and the report pipe. Throws EnvironmentError.
  explicit Workers(WorkersSpec spec);
  ~Workers();
  Workers(const Workers&) = delete;
  Workers& operator=(const Workers&) = delete;

  /// Forks one worker that runs `body(const WorkerLink&)` (an int-returning
  /// callable that keeps the contract above; its result is the exit status)
  /// and returns the worker's index. Throws EnvironmentError "NAME: fork of
  /// NOUN I+1 of `of` failed: REASON; lower clients or raise the process
  /// limit (ulimit -u)" ("of the NOUN process" when not numbered). No spawn
  /// after the first open_gate() or await().
  template <class Body>
  std::size_t spawn(const Body& body, std::size_t of = 0) {
    return spawn_with(&call<Body>, &body, of);
  }

  std::size_t size() const { return workers_.size(); }
  pid_t pid(std::size_t i) const { return workers_.at(i).pid; }
  /// "worker 2 (pid 123)", or "tmpfs_refault-r (pid 123)" when not numbered.
  std::string label(std::size_t i) const;

  /// Opens start gate `gate`: every worker blocked in wait_gate(gate) runs.
  void open_gate(std::size_t gate);
  /// Waits until every worker has made `reports` reports in all, polling
  /// every 100 ms. Returns true then; false when a worker ended with fewer,
  /// when every worker has closed its end, or at `deadline`. Throws
  /// Interrupted when interrupted() (the workers are killed by the
  /// destructor) and EnvironmentError when the report pipe fails.
  bool await(unsigned reports, std::chrono::steady_clock::time_point deadline =
                                   std::chrono::steady_clock::time_point::max());
  /// Waits (blocking) until every worker has ended, and reaps it.
  void wait_all();
  /// SIGKILLs every worker not reaped yet, then reaps them. Never throws.
  void kill_and_reap() noexcept;
  /// How the first worker that ended abnormally died: "worker 0 (pid 12)
  /// killed by SIGKILL (the OOM killer? see dmesg)", "... exited with 2",
  /// "... found nightjar gone before it started", "... could not read the
  /// start barrier"; nullopt when every ended worker exited with 0. Reaps
  /// the workers that ended (non-blocking) first. Throws Interrupted when a
  /// worker was killed by a signal while interrupted() is true: the user
  /// stopped the run.
  std::optional<std::string> failure();

 private:
  struct Worker {
    pid_t pid = -1;
    bool reaped = false;
    int status = 0;
    unsigned reports = 0;
    std::uint64_t journal = 0;  ///< its record in the journal (workloads/sys/journal.h)
    /// Reaped: marks its journal record done.
    void mark_reaped() noexcept;
  };
  using BodyFn = int (*)(const void* body, const WorkerLink& link) noexcept;
  template <class Body>
  static int call(const void* body, const WorkerLink& link) noexcept {
    return (*static_cast<const Body*>(body))(link);
  }
  std::size_t spawn_with(BodyFn fn, const void* body, std::size_t of);
  [[noreturn]] void run_worker(BodyFn fn, const void* body, std::size_t index) noexcept;
  void seal();
  bool read_reports();
  void reap_ended() noexcept;
  bool interrupted() const;

  WorkersSpec spec_;
  pid_t parent_;
  std::vector<Pipe> gates_;
  std::vector<int> gate_read_fds_;  ///< what WorkerLink reads, prepared before any fork
  Pipe reports_;
  std::vector<Worker> workers_;
  bool sealed_ = false;
  unsigned char partial_[4] = {};  ///< a report split across reads
  std::size_t partial_len_ = 0;
};

/// Undoes a journaled `process` or `process_group` record of an ended owner
/// (workloads/sys/journal.h, called by the sweep): a process whose pid still
/// has the recorded start time is SIGKILLed; a group is SIGKILLed when its
/// leader still has the recorded start time, or when the leader is gone but
/// members remain (Linux does not reuse a pid while a group of that id
/// exists, so those members are the recorded group's). Then waits up to 5 s
/// until every one has gone (init reaps an ended owner's orphans). `absent`
/// when nothing of it runs, `left` when something survived SIGKILL (a
/// process in uninterruptible sleep).
UndoResult undo_journaled_process(const JournalEntry& entry);

/// MAP_SHARED anonymous memory, zeroed: what forked workers write their
/// results into and the parent reads after they reported. Unmapped on
/// destruction.
class SharedMemory {
 public:
  /// Throws EnvironmentError "WHAT: cannot map N bytes of shared memory: REASON".
  SharedMemory(std::size_t bytes, std::string_view what);
  ~SharedMemory();
  SharedMemory(const SharedMemory&) = delete;
  SharedMemory& operator=(const SharedMemory&) = delete;

  void* get() const { return addr_; }
  std::size_t size() const { return bytes_; }
  /// Zeroes the whole region (before a pass).
  void clear() const noexcept;

 private:
  void* addr_ = nullptr;
  std::size_t bytes_ = 0;
};

/// `count` records of T in SharedMemory, zeroed. T must be trivially
/// copyable (it is written by one process and read by another).
template <class T>
class SharedRecords {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  /// Throws EnvironmentError (SharedMemory).
  SharedRecords(std::size_t count, std::string_view what)
      : count_(count), memory_(count * sizeof(T), what) {}

  T& operator[](std::size_t i) const { return static_cast<T*>(memory_.get())[i]; }
  std::size_t size() const { return count_; }
  /// Zeroes every record (before a pass).
  void clear() const noexcept { memory_.clear(); }

 private:
  std::size_t count_;
  SharedMemory memory_;
};

}  // namespace nightjar
