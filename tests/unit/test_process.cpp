// Unit under test: workloads/sys/process.{h,cpp} — the process toolkit:
// UniqueFd and pipes, wait statuses and their text, finding programs,
// command-line splitting, run_command() (exit status, signals, timeout,
// interruption, process-group cleanup, cwd, env, stdin/stdout redirection,
// input on stdin), ChildProcess (a long-running program) and Workers (gates,
// reports, the text of how a worker died, kill-and-reap on every path).
#include "workloads/sys/process.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "results/model/exit_codes.h"
#include "results/model/params.h"
#include "test_support.h"

namespace nightjar {
namespace {

using test::TempDir;

// ---- descriptors and wait statuses ------------------------------------------

bool fd_open(int fd) {
  return ::fcntl(fd, F_GETFD) != -1;
}

TEST(ProcessFd, ClosesOnResetDestructionAndMove) {
  Pipe p = make_pipe("the test");
  const int r = p.read.get(), w = p.write.get();
  ASSERT_TRUE(fd_open(r));
  ASSERT_TRUE(fd_open(w));
  EXPECT_TRUE(::fcntl(r, F_GETFD) & FD_CLOEXEC);
  UniqueFd moved = std::move(p.write);
  EXPECT_FALSE(p.write);
  EXPECT_EQ(moved.get(), w);
  moved.reset();
  EXPECT_FALSE(fd_open(w));
  {
    UniqueFd owner(p.read.release());
    EXPECT_FALSE(p.read);
  }
  EXPECT_FALSE(fd_open(r));
}

TEST(ProcessWait, DescribesExitAndSignal) {
  EXPECT_EQ(describe_exit(3 << 8), "exited with 3");
  EXPECT_EQ(describe_exit(0), "exited with 0");
  EXPECT_EQ(describe_exit(SIGKILL), "killed by SIGKILL");
  EXPECT_EQ(exit_code(3 << 8), 3);
  EXPECT_EQ(exit_code(SIGKILL), 128 + SIGKILL);
}

TEST(ProcessWait, WaitPidReapsAChild) {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(7);
  int status = 0;
  ASSERT_EQ(wait_pid(pid, &status, 0), pid);
  EXPECT_EQ(describe_exit(status), "exited with 7");
  EXPECT_EQ(wait_pid(pid, &status, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);
}

TEST(ProcessPrograms, FindsExecutablesOnAPath) {
  TempDir dir;
  const std::string tool = dir.write("tool", "#!/bin/sh\n");
  const std::string text = dir.write("text", "not a program\n");
  ::chmod(tool.c_str(), 0755);
  EXPECT_EQ(find_program("tool", "/nonexistent:" + dir.path()), tool);
  EXPECT_EQ(find_program("text", dir.path()), "");  // not executable
  EXPECT_EQ(find_program("tool", "/nonexistent"), "");
  EXPECT_EQ(find_program(tool, ""), tool);  // a path is itself
  EXPECT_EQ(find_program("sh", "/bin"), "/bin/sh");
  EXPECT_EQ(find_program(""), "");
}

// ---- split_command_line ------------------------------------------------------

TEST(ProcessCommandLine, SplitsLikeAShellWithoutExpansion) {
  using V = std::vector<std::string>;
  EXPECT_EQ(split_command_line("./bench --size 1M"), (V{"./bench", "--size", "1M"}));
  EXPECT_EQ(split_command_line("  a   b\tc "), (V{"a", "b", "c"}));
  EXPECT_EQ(split_command_line("echo 'a b' \"c d\" e\\ f"), (V{"echo", "a b", "c d", "e f"}));
  EXPECT_EQ(split_command_line("echo $HOME '*' ~"), (V{"echo", "$HOME", "*", "~"}));
  EXPECT_EQ(split_command_line("echo \"a\\\"b\" 'it''s'"), (V{"echo", "a\"b", "its"}));
  EXPECT_EQ(split_command_line("echo ''"), (V{"echo", ""}));
  EXPECT_EQ(split_command_line(R"(["./b", "x y", "--n"])"), (V{"./b", "x y", "--n"}));
}

TEST(ProcessCommandLine, BadInputNamesTheField) {
  for (const char* bad :
       {"", "   ", "echo 'open", "echo \"open", "echo \\", "[1, 2]", "[]", "[oops"}) {
    try {
      split_command_line(bad);
      ADD_FAILURE() << "accepted: " << bad;
    } catch (const ParamError& e) {
      EXPECT_EQ(e.field, "command");
      EXPECT_FALSE(e.message.empty());
    }
  }
}

// ---- run_command ------------------------------------------------------------

TEST(RunCommand, CapturesOutputAndExitStatus) {
  CommandSpec s;
  s.argv = {"/bin/sh", "-c", "echo out; echo err >&2; exit 3"};
  CommandResult r = run_command(s);
  EXPECT_TRUE(r.started);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "err\n");
  EXPECT_EQ(r.describe(), "exited with status 3");
  EXPECT_EQ(r.tail(), "stderr: err; stdout: out");
}

TEST(RunCommand, MergedStderrAndPathLookupAndEnvAndCwd) {
  TempDir dir;
  CommandSpec s;
  s.argv = {"sh", "-c", "pwd; echo x=$NJ_TEST_VALUE >&2"};
  s.cwd = dir.path();
  s.env["NJ_TEST_VALUE"] = "42";
  s.merge_stderr = true;
  CommandResult r = run_command(s);
  ASSERT_TRUE(r.ok()) << r.describe() << r.error;
  EXPECT_EQ(r.out, dir.path() + "\nx=42\n");
  EXPECT_TRUE(r.err.empty());
}

TEST(RunCommand, NotFoundAndBadCwdDoNotStart) {
  CommandSpec s;
  s.argv = {"no-such-program-nightjar"};
  CommandResult r = run_command(s);
  EXPECT_FALSE(r.started);
  EXPECT_NE(r.error.find("not found in PATH"), std::string::npos) << r.error;
  s.argv = {"/bin/true"};
  s.cwd = "/no/such/dir";
  r = run_command(s);
  EXPECT_FALSE(r.started);
  EXPECT_NE(r.error.find("/no/such/dir"), std::string::npos) << r.error;
  s.cwd = "";
  TempDir dir;
  std::string text = dir.write("plain.txt", "not a program\n");  // mode 0644
  s.argv = {text};
  r = run_command(s);
  EXPECT_FALSE(r.started);
  EXPECT_NE(r.error.find("cannot run '" + text + "'"), std::string::npos) << r.error;
}

TEST(RunCommand, SignalIsReported) {
  CommandSpec s;
  s.argv = {"/bin/sh", "-c", "kill -SEGV $$"};
  CommandResult r = run_command(s);
  EXPECT_EQ(r.signal, SIGSEGV);
  EXPECT_EQ(r.describe(), "killed by SIGSEGV");
}

bool pid_alive(pid_t pid) {
  if (::kill(pid, 0) != 0) return false;
  // A zombie (reparented to init, not yet reaped) counts as gone.
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string all;
  std::getline(stat, all);
  auto close = all.rfind(')');
  return close != std::string::npos && all.size() > close + 2 && all[close + 2] != 'Z';
}

TEST(RunCommand, TimeoutKillsTheWholeGroup) {
  TempDir dir;
  std::string pidfile = dir.path() + "/bg.pid";
  CommandSpec s;
  // A background grandchild and a foreground sleep: both must go.
  s.argv = {"/bin/sh", "-c", "sleep 30 & echo $! > " + pidfile + "; sleep 30"};
  s.timeout_sec = 0.3;
  auto t0 = std::chrono::steady_clock::now();
  CommandResult r = run_command(s);
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_TRUE(r.timed_out);
  EXPECT_LT(took, 5.0);
  EXPECT_EQ(r.describe(0.3), "timed out after 0.3 s");
  pid_t bg = static_cast<pid_t>(std::stol(test::read_file(pidfile)));
  for (int i = 0; i < 100 && pid_alive(bg); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_FALSE(pid_alive(bg));
}

TEST(RunCommand, LeftoverBackgroundProcessesAreKilledAtExit) {
  TempDir dir;
  std::string pidfile = dir.path() + "/bg.pid";
  CommandSpec s;
  s.argv = {"/bin/sh", "-c", "sleep 30 > /dev/null 2>&1 & echo $! > " + pidfile + "; echo done"};
  CommandResult r = run_command(s);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.out, "done\n");
  pid_t bg = static_cast<pid_t>(std::stol(test::read_file(pidfile)));
  for (int i = 0; i < 100 && pid_alive(bg); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_FALSE(pid_alive(bg));
}

TEST(RunCommand, InterruptionStopsPromptly) {
  std::atomic<bool> stop{false};
  CommandSpec s;
  s.argv = {"/bin/sleep", "30"};
  s.interrupted = [&] { return stop.load(); };
  std::thread t([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    stop = true;
  });
  auto t0 = std::chrono::steady_clock::now();
  CommandResult r = run_command(s);
  t.join();
  EXPECT_TRUE(r.interrupted);
  EXPECT_EQ(r.signal, SIGTERM);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 5.0);
}

TEST(RunCommand, CpuTimeOfABusyChild) {
  CommandSpec s;
  s.argv = {"/bin/sh", "-c", "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done"};
  CommandResult r = run_command(s);
  ASSERT_TRUE(r.ok());
  EXPECT_GT(r.cpu_sec, 0.0);
  EXPECT_GE(r.wall_sec, 0.0);
}

TEST(RunCommand, OutputTail) {
  EXPECT_EQ(output_tail("a\nb\nc\n\n", 2), "b | c");
  EXPECT_EQ(output_tail(""), "");
  EXPECT_EQ(output_tail("0123456789", 5, 4), "...6789");
}

TEST(RunCommand, InputGoesToStdin) {
  CommandSpec s;
  s.argv = {"/bin/sh", "-c", "tr a-z A-Z"};
  s.input = std::string(200000, 'x') + "\nend\n";  // more than a pipe holds
  CommandResult r = run_command(s);
  ASSERT_TRUE(r.ok()) << r.describe() << r.error;
  EXPECT_EQ(r.out, std::string(200000, 'X') + "\nEND\n");
}

TEST(RunCommand, ACommandThatIgnoresItsInputDoesNotKillNightjar) {
  // It exits before reading: the write meets a closed pipe (EPIPE, not SIGPIPE).
  CommandSpec s;
  s.argv = {"/bin/sh", "-c", "exit 4"};
  s.input = std::string(1 << 20, 'x');
  CommandResult r = run_command(s);
  EXPECT_TRUE(r.started);
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_EQ(describe_exit(r.wait_status), "exited with 4");
}

TEST(RunCommand, StdinAndStdoutFiles) {
  TempDir dir;
  const std::string in = dir.write("in.txt", "hello\n");
  CommandSpec s;
  s.argv = {"cat"};
  s.stdin_path = in;
  s.stdout_path = dir.path() + "/out.txt";
  CommandResult r = run_command(s);
  ASSERT_TRUE(r.ok()) << r.describe();
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(test::read_file(dir.path() + "/out.txt"), "hello\n");
  s.stdin_path = dir.path() + "/missing";
  r = run_command(s);
  EXPECT_FALSE(r.started);
  EXPECT_NE(r.error.find("cannot read '" + s.stdin_path + "'"), std::string::npos) << r.error;
}

TEST(RunCommand, StartErrnoNamesWhyExecFailed) {
  TempDir dir;
  CommandSpec s;
  s.argv = {dir.write("plain.txt", "x\n")};
  CommandResult r = run_command(s);
  EXPECT_FALSE(r.started);
  EXPECT_EQ(r.start_errno, EACCES);
}

// ---- ChildProcess -------------------------------------------------------------

SpawnSpec spawn_spec(std::vector<std::string> argv) {
  SpawnSpec s;
  s.argv = std::move(argv);
  return s;
}

TEST(ChildProcess, RunsPollsAndWritesItsOutputFile) {
  TempDir dir;
  const std::string log = dir.path() + "/log";
  std::optional<int> status;
  {
    ChildProcess child(SpawnSpec{.argv = {"/bin/sh", "-c", "echo out; echo err >&2; exit 5"},
                                 .stdout_path = log,
                                 .stderr_to_stdout = true});
    EXPECT_GT(child.pid(), 0);
    for (int i = 0; i < 500 && !(status = child.poll()); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(status);
  EXPECT_EQ(describe_exit(*status), "exited with 5");
  EXPECT_EQ(test::read_file(log), "out\nerr\n");
}

TEST(ChildProcess, DestructionKillsAndReaps) {
  pid_t pid = 0;
  {
    ChildProcess child(spawn_spec({"sleep", "30"}));
    pid = child.pid();
    EXPECT_FALSE(child.poll());
  }
  EXPECT_EQ(::kill(pid, 0), -1) << "still there (or a zombie)";
  EXPECT_TRUE(test::children_of(::getpid()).empty());
}

TEST(ChildProcess, AProgramThatCannotRunThrows) {
  try {
    ChildProcess child(spawn_spec({"no-such-program-nightjar"}));
    ADD_FAILURE() << "started";
  } catch (const EnvironmentError& e) {
    EXPECT_NE(std::string(e.what()).find("not found in PATH"), std::string::npos) << e.what();
  }
}

// ---- Workers ------------------------------------------------------------------

WorkersSpec workers_spec(std::string noun = "worker", bool numbered = true) {
  WorkersSpec s;
  s.name = "test";
  s.noun = std::move(noun);
  s.numbered = numbered;
  return s;
}

struct Slot {
  int value;
  int stage;
};

TEST(Workers, GatesReleaseAllAndReportsAreCounted) {
  SharedRecords<Slot> slots(4, "the test");
  WorkersSpec spec = workers_spec();
  spec.comm = "nj-test-worker";
  spec.gates = 2;
  Workers w(spec);
  auto body = [&slots](const WorkerLink& link) noexcept {
    slots[link.index()].stage = 1;
    link.report();
    link.wait_gate(0);
    slots[link.index()].stage = 2;
    slots[link.index()].value = static_cast<int>(link.index()) * 10;
    link.report();
    link.wait_gate(1);
    return 0;
  };
  for (int i = 0; i < 4; ++i) w.spawn(body, 4);
  ASSERT_TRUE(w.await(1));
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(slots[i].stage, 1) << "ran past the closed gate";
  // Nobody reports a second time before the gate opens.
  EXPECT_FALSE(w.await(2, std::chrono::steady_clock::now() + std::chrono::milliseconds(300)));
  w.open_gate(0);
  ASSERT_TRUE(w.await(2));
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(slots[i].value, static_cast<int>(i) * 10);
  w.open_gate(1);
  w.wait_all();
  EXPECT_EQ(w.failure(), std::nullopt);
  EXPECT_EQ(w.label(2).rfind("worker 2 (pid ", 0), 0u) << w.label(2);
}

TEST(Workers, AWorkerThatDiesEndsTheWaitWithTheReason) {
  Workers w(workers_spec("client"));
  auto body = [](const WorkerLink& link) noexcept {
    if (link.index() == 1) ::raise(SIGKILL);
    link.report();
    link.wait_gate(0);
    return 0;
  };
  w.spawn(body);
  w.spawn(body);
  EXPECT_FALSE(w.await(1));
  auto why = w.failure();
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("client 1 (pid "), std::string::npos) << *why;
  EXPECT_NE(why->find("killed by SIGKILL (the OOM killer? see dmesg)"), std::string::npos) << *why;
}

TEST(Workers, ExitStatusesAreExplained) {
  Workers w(workers_spec("reader", false));
  w.spawn([](const WorkerLink&) noexcept { return 3; });
  EXPECT_FALSE(w.await(1));
  w.wait_all();
  EXPECT_EQ(w.failure().value_or(""),
            "reader (pid " + std::to_string(w.pid(0)) + ") exited with 3");
}

TEST(Workers, DestructionKillsSurvivorsAlsoOnAnException) {
  std::vector<pid_t> pids;
  try {
    Workers w(workers_spec());
    auto body = [](const WorkerLink& link) noexcept {
      link.wait_gate(0);  // never opened
      return 0;
    };
    for (int i = 0; i < 3; ++i) pids.push_back(w.pid(w.spawn(body)));
    throw std::runtime_error("boom");
  } catch (const std::runtime_error&) {
  }
  for (pid_t pid : pids) EXPECT_EQ(::kill(pid, 0), -1) << pid << " survived";
  EXPECT_TRUE(test::children_of(::getpid()).empty());
}

TEST(Workers, InterruptionThrowsAndTheWorkersGo) {
  std::atomic<bool> stop{false};
  std::vector<pid_t> pids;
  std::thread trigger([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    stop = true;
  });
  try {
    WorkersSpec spec = workers_spec();
    spec.interrupted = [&] { return stop.load(); };
    Workers w(spec);
    auto body = [](const WorkerLink& link) noexcept {
      link.wait_gate(0);
      return 0;
    };
    pids.push_back(w.pid(w.spawn(body)));
    w.await(1);
    ADD_FAILURE() << "await returned";
  } catch (const Interrupted&) {
  }
  trigger.join();
  for (pid_t pid : pids) EXPECT_EQ(::kill(pid, 0), -1);
  EXPECT_TRUE(test::children_of(::getpid()).empty());
}

TEST(Workers, NoSpawnAfterTheStart) {
  Workers w(workers_spec());
  auto body = [](const WorkerLink&) noexcept { return 0; };
  w.spawn(body);
  w.open_gate(0);
  EXPECT_THROW(w.spawn(body), std::logic_error);
  w.wait_all();
}

}  // namespace
}  // namespace nightjar
