// The process toolkit's worker processes (Workers, WorkerLink) and the
// shared memory they count in (SharedMemory): see workloads/sys/process.h.
// The rest of the toolkit (programs, run_command, ChildProcess, undoing
// journaled processes) is process.cpp.
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "results/model/exit_codes.h"
#include "results/model/text.h"
#include "workloads/sys/journal.h"
#include "workloads/sys/process.h"
#include "workloads/sys/signals.h"

namespace nightjar {

// ---------------------------------------------------------------------------
// Workers
// ---------------------------------------------------------------------------

void WorkerLink::wait_gate(std::size_t gate) const noexcept {
  if (gate >= gates_) ::_exit(kWorkerGateFailed);
  char c;
  ssize_t n;
  while ((n = ::read(gate_fds_[gate], &c, 1)) < 0 && errno == EINTR) {
  }
  if (n != 0) ::_exit(kWorkerGateFailed);
}

void WorkerLink::report() const noexcept {
  // One 4-byte record, written atomically (less than PIPE_BUF): the index.
  const std::uint32_t index = static_cast<std::uint32_t>(index_);
  while (::write(report_fd_, &index, sizeof index) < 0 && errno == EINTR) {
  }
}

Workers::Workers(WorkersSpec spec) : spec_(std::move(spec)), parent_(::getpid()) {
  for (std::size_t g = 0; g < spec_.gates; ++g) {
    gates_.push_back(make_pipe(spec_.name + ": a start gate of the workers"));
    gate_read_fds_.push_back(gates_.back().read.get());
  }
  reports_ = make_pipe(spec_.name + ": the workers' reports");
}

Workers::~Workers() {
  // Killed before the gates close: a closed gate would release them.
  kill_and_reap();
}

std::string Workers::label(std::size_t i) const {
  if (!spec_.numbered) return fmt::format("{} (pid {})", spec_.noun, pid(i));
  return fmt::format("{} {} (pid {})", spec_.noun, i, pid(i));
}

std::size_t Workers::spawn_with(BodyFn fn, const void* body, std::size_t of) {
  if (sealed_) throw std::logic_error("Workers::spawn after the workers were started");
  workers_.reserve(workers_.size() + 1);  // no allocation between fork and push_back
  const std::size_t index = workers_.size();
  const pid_t pid = ::fork();
  if (pid == 0) run_worker(fn, body, index);
  if (pid < 0) {
    const int err = errno;
    if (!spec_.numbered)
      throw EnvironmentError(fmt::format("{}: fork of the {} process failed: {}", spec_.name,
                                         spec_.noun, errno_text(err)));
    throw EnvironmentError(fmt::format(
        "{}: fork of {} {} of {} failed: {}; lower clients or raise the process limit (ulimit -u)",
        spec_.name, spec_.noun, index + 1, std::max(of, index + 1), errno_text(err)));
  }
  workers_.push_back(Worker{pid});
  // Journaled once it exists (before any gate opens, so before it does
  // anything): a sweep kills it if nightjar dies and PR_SET_PDEATHSIG did not.
  workers_.back().journal = Journal::process().record_or_warn(
      JournalKind::process,
      {std::to_string(pid), std::to_string(process_start_ticks(pid).value_or(0)),
       spec_.numbered ? fmt::format("{} {} {}", spec_.name, spec_.noun, index) : spec_.noun});
  return index;
}

void Workers::run_worker(BodyFn fn, const void* body, std::size_t index) noexcept {
  // Never outlive nightjar: SIGKILL when the forking thread goes away; if it
  // already went before prctl took effect, leave now.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent_) ::_exit(kWorkerOrphaned);
  sigset_t set;
  ::sigemptyset(&set);
  ::sigaddset(&set, SIGINT);
  ::sigaddset(&set, SIGTERM);
  ::sigaddset(&set, SIGPIPE);
  ::pthread_sigmask(SIG_BLOCK, &set, nullptr);
  if (spec_.comm) ::prctl(PR_SET_NAME, spec_.comm);
  // The owner's journal lock is nightjar's, not the worker's: a worker that
  // outlived nightjar must not make its journal look alive.
  if (const int journal = journal_fd_for_children(); journal >= 0) ::close(journal);
  for (const Pipe& g : gates_) ::close(g.write.get());
  ::close(reports_.read.get());
  const WorkerLink link(gate_read_fds_.data(), gate_read_fds_.size(), reports_.write.get(), index);
  ::_exit(fn(body, link));
}

void Workers::seal() {
  if (sealed_) return;
  sealed_ = true;
  for (Pipe& g : gates_) g.read.reset();
  reports_.write.reset();  // end of file once every worker is gone
}

void Workers::open_gate(std::size_t gate) {
  seal();
  gates_.at(gate).write.reset();
}

bool Workers::read_reports() {
  unsigned char buf[1024];
  std::memcpy(buf, partial_, partial_len_);
  const ssize_t n = ::read(reports_.read.get(), buf + partial_len_, sizeof buf - partial_len_);
  if (n == 0) return false;
  if (n < 0) {
    if (errno == EINTR || errno == EAGAIN) return true;
    throw EnvironmentError(fmt::format("{}: reading the workers' report pipe failed: {}",
                                       spec_.name, errno_text(errno)));
  }
  const std::size_t total = partial_len_ + static_cast<std::size_t>(n);
  std::size_t at = 0;
  for (; at + sizeof(std::uint32_t) <= total; at += sizeof(std::uint32_t)) {
    std::uint32_t index;
    std::memcpy(&index, buf + at, sizeof index);
    if (index < workers_.size()) ++workers_[index].reports;
  }
  partial_len_ = total - at;
  std::memcpy(partial_, buf + at, partial_len_);
  return true;
}

bool Workers::await(unsigned reports, std::chrono::steady_clock::time_point deadline) {
  seal();
  auto all_reported = [&] {
    return std::all_of(workers_.begin(), workers_.end(),
                       [&](const Worker& w) { return w.reports >= reports; });
  };
  for (;;) {
    if (all_reported()) return true;
    if (interrupted()) throw Interrupted();
    if (std::chrono::steady_clock::now() >= deadline) return false;
    pollfd pfd{reports_.read.get(), POLLIN, 0};
    const int r = ::poll(&pfd, 1, 100);
    if (r < 0 && errno != EINTR)
      throw EnvironmentError(fmt::format("{}: poll on the workers' report pipe failed: {}",
                                         spec_.name, errno_text(errno)));
    if (r > 0) {
      if (!read_reports()) return all_reported();  // every worker closed its end
      continue;
    }
    // A quiet spell: a worker that ended with fewer reports makes no more.
    reap_ended();
    const bool short_ended = std::any_of(workers_.begin(), workers_.end(), [&](const Worker& w) {
      return w.reaped && w.reports < reports;
    });
    pollfd last{reports_.read.get(), POLLIN, 0};  // what it wrote before ending, if anything
    if (short_ended && ::poll(&last, 1, 0) <= 0) return false;
  }
}

void Workers::Worker::mark_reaped() noexcept {
  reaped = true;
  Journal::process().done(std::exchange(journal, 0));
}

void Workers::wait_all() {
  seal();
  for (Worker& w : workers_) {
    if (w.reaped) continue;
    if (wait_pid(w.pid, &w.status, 0) == w.pid || errno == ECHILD) w.mark_reaped();
  }
}

void Workers::reap_ended() noexcept {
  for (Worker& w : workers_)
    if (!w.reaped && wait_pid(w.pid, &w.status, WNOHANG) == w.pid) w.mark_reaped();
}

void Workers::kill_and_reap() noexcept {
  // Waits only for our own pids: other parts of nightjar may have children.
  for (Worker& w : workers_)
    if (!w.reaped && w.pid > 0) ::kill(w.pid, SIGKILL);
  for (Worker& w : workers_) {
    if (w.reaped || w.pid <= 0) continue;
    if (wait_pid(w.pid, &w.status, 0) == w.pid || errno == ECHILD) w.mark_reaped();
  }
}

std::optional<std::string> Workers::failure() {
  reap_ended();
  for (std::size_t i = 0; i < workers_.size(); ++i) {
    const Worker& w = workers_[i];
    if (!w.reaped) continue;
    if (WIFSIGNALED(w.status)) {
      if (interrupted()) throw Interrupted();
      return label(i) + " " + describe_exit(w.status) +
             (WTERMSIG(w.status) == SIGKILL ? " (the OOM killer? see dmesg)" : "");
    }
    if (!WIFEXITED(w.status) || WEXITSTATUS(w.status) == 0) continue;
    if (WEXITSTATUS(w.status) == kWorkerOrphaned)
      return label(i) + " found nightjar gone before it started";
    if (WEXITSTATUS(w.status) == kWorkerGateFailed)
      return label(i) + " could not read the start barrier";
    return label(i) + " " + describe_exit(w.status);
  }
  return std::nullopt;
}

bool Workers::interrupted() const {
  return spec_.interrupted ? spec_.interrupted() : nightjar::interrupted();
}

// ---------------------------------------------------------------------------
// SharedMemory
// ---------------------------------------------------------------------------

SharedMemory::SharedMemory(std::size_t bytes, std::string_view what)
    : bytes_(std::max<std::size_t>(bytes, 1)) {
  void* p = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    throw EnvironmentError(fmt::format("{}: cannot map {} bytes of shared memory: {}", what, bytes_,
                                       errno_text(errno)));
  addr_ = p;
}

SharedMemory::~SharedMemory() {
  if (addr_) ::munmap(addr_, bytes_);
}

void SharedMemory::clear() const noexcept {
  std::memset(addr_, 0, bytes_);
}

}  // namespace nightjar
