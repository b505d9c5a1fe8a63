// tcp_sendfile / tcp_stream: netperf TCP_SENDFILE and TCP_STREAM over
// loopback (docs/reference.md "netperf TCP_SENDFILE"), reimplemented from that
// description.
//
// Roles and why:
//  - Senders are forked processes, one per client, like separate netperf
//    instances: each has its own mm, file and socket, and can sit in its own
//    memory cgroup (the posts measure memcg charging on this path).
//  - The receiver (netserver's role) is a thread per connection inside
//    nightjar. netserver forks a child per test; a thread keeps the receive
//    loop identical (recv() of recv_size until EOF, counting bytes) without a
//    second protocol to return its counts, and it is reaped with the session.
//    Receiver threads block SIGINT/SIGTERM so the runner's thread gets them.
//    The receiving sockets are charged to nightjar's own cgroup, as
//    netserver's are to its own: only the senders are placed.
//
// One iteration, and what is inside the timed window:
//   fork N senders; each blocks on the setup pipe
//   parent moves sender i into ctx.cgroups->leaf(i), then closes the setup
//     pipe (end-of-file releases all)
//   each sender (now in its cgroup, so its socket and file are charged
//     there): socket(), SO_SNDBUF -> width, a file of width × send_size bytes
//     of non-zero data opened O_TMPFILE (nothing to unlink; mkstemp+unlink at
//     once where O_TMPFILE is unsupported), connect(), reports ready
//   parent accepts the N connections (matched to senders by port), starts a
//     receiver thread for each, reads /proc/stat and closes the go pipe
//     -- the control exchange: connection setup is outside the timed window --
//   [timed] each sender: sendfile()/send() of send_size cyclically over the
//     width chunks on a blocking socket until `duration` has passed;
//     shutdown(SHUT_WR); read until the receiver's FIN. Elapsed = go -> FIN.
//   receiver: recv() until EOF, then shutdown(SHUT_WR) (the FIN).
//   parent: /proc/stat again after the last sender reported done; reap,
//     join, compare byte counts.
// The senders are a Workers group (workloads/sys/process.h) with two start
// gates (setup, go): they never outlive nightjar (PR_SET_PDEATHSIG SIGKILL)
// and are killed and reaped on every exit path of an iteration, including
// SIGINT.
#include "workloads/tcp_sendfile.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <system_error>
#include <thread>

#include <fmt/format.h>

#include "results/model/exit_codes.h"
#include "results/model/text.h"
#include "workloads/sys/cgroup.h"
#include "workloads/sys/process.h"
#include "workloads/workload.h"

namespace nightjar {
namespace tcp {

std::string client_counter(std::size_t i, std::string_view name) {
  return fmt::format("client{}.{}", i, name);
}

std::vector<NetperfBlock> netperf_blocks(bool stream, const NetperfIteration& iteration) {
  const auto& params = iteration.params;
  auto family = params.find("family");
  const bool ipv6 = family == params.end() || family->second != "ipv4";
  int clients = 1;
  if (auto c = params.find("clients"); c != params.end())
    clients = std::max(1, std::atoi(c->second.c_str()));
  auto get = [&](const std::string& k) {
    auto p = iteration.counters.find(k);
    return p == iteration.counters.end() ? std::optional<double>() : p->second;
  };
  std::vector<NetperfBlock> blocks;
  for (int i = 0; i < clients; ++i) {
    const auto client = static_cast<std::size_t>(i);
    NetperfBlock b;
    b.stream = stream;
    b.ipv6 = ipv6;
    auto tp = get(client_counter(client, counter::throughput));
    auto el = get(client_counter(client, counter::elapsed));
    if (iteration.ok && tp && el) {
      NetperfResult r;
      r.recv_socket_size =
          static_cast<int>(get(client_counter(client, counter::recv_socket_size)).value_or(0));
      r.send_socket_size =
          static_cast<int>(get(client_counter(client, counter::send_socket_size)).value_or(0));
      r.send_size = static_cast<int>(get(std::string(counter::send_size)).value_or(0));
      r.elapsed = *el;
      r.throughput = *tp;
      b.result = r;
    }
    blocks.push_back(b);
  }
  return blocks;
}

std::uint64_t send_width(std::uint64_t sndbuf, std::uint64_t send_size) {
  if (send_size == 0) return 2;
  return std::max<std::uint64_t>(2, sndbuf / send_size + 1);
}

double service_demand_us_per_kb(double util_pct, unsigned cpus, double bytes, double seconds) {
  if (!(bytes > 0) || !(seconds > 0)) return 0;
  const double kb_per_sec = bytes / 1024.0 / seconds;
  // netperf: util% × 10000 / (KB/s) × ncpus  =  (util/100 × ncpus) × 1e6 / (KB/s)
  return util_pct * 10000.0 / kb_per_sec * static_cast<double>(cpus);
}

std::optional<std::string> invalid_pass(const std::vector<ClientFigures>& clients,
                                        double duration_sec) {
  std::vector<std::string> idle, stretched;
  const double tolerance = std::max(kWindowToleranceSec, kWindowTolerance * duration_sec);
  for (std::size_t i = 0; i < clients.size(); ++i) {
    const ClientFigures& c = clients[i];
    if (c.bytes_received == 0) idle.push_back(std::to_string(i));
    if (std::fabs(c.elapsed - duration_sec) > tolerance)
      stretched.push_back(fmt::format("client {}'s window is {:.3f} s", i, c.elapsed));
  }
  std::vector<std::string> why;
  if (!idle.empty())
    why.push_back(
        fmt::format("{} {} moved 0 bytes (sendfile()/send() sent nothing: nothing was measured)",
                    idle.size() == 1 ? "client" : "clients", join(idle)));
  if (!stretched.empty())
    why.push_back(fmt::format(
        "{} where the test window is {:.3f} s (tolerance {:.3f} s): the clients did not run "
        "concurrently (a sender stopped or starved?)",
        join(stretched), duration_sec, tolerance));
  if (why.empty()) return std::nullopt;
  return join(why, "; ");
}

IterationResult summarize(const std::vector<ClientFigures>& clients, std::uint64_t send_size,
                          std::optional<double> cpu_util_pct, double window_sec, unsigned cpus,
                          double duration_sec) {
  IterationResult r;
  double sum = 0, lo = std::numeric_limits<double>::infinity(), hi = 0;
  double total_bytes = 0;
  std::string failure;
  for (std::size_t i = 0; i < clients.size(); ++i) {
    const ClientFigures& c = clients[i];
    r.counters[client_counter(i, counter::bytes_sent)] = static_cast<double>(c.bytes_sent);
    r.counters[client_counter(i, counter::bytes_received)] = static_cast<double>(c.bytes_received);
    r.counters[client_counter(i, counter::elapsed)] = c.elapsed;
    r.counters[client_counter(i, counter::send_socket_size)] = c.send_socket_size;
    r.counters[client_counter(i, counter::recv_socket_size)] = c.recv_socket_size;
    r.counters[client_counter(i, counter::recv_size)] = static_cast<double>(c.recv_size);
    if (failure.empty() && c.bytes_sent != c.bytes_received)
      failure = fmt::format(
          "client {}: the sender counted {} bytes sent but the receiver {} bytes received", i,
          c.bytes_sent, c.bytes_received);
    if (failure.empty() && !(c.elapsed > 0))
      failure = fmt::format("client {}: no measurable elapsed time", i);
    const double mbps =
        c.elapsed > 0 ? static_cast<double>(c.bytes_received) * 8 / 1e6 / c.elapsed : 0;
    r.counters[client_counter(i, counter::throughput)] = mbps;
    sum += mbps;
    lo = std::min(lo, mbps);
    hi = std::max(hi, mbps);
    total_bytes += static_cast<double>(c.bytes_received);
  }
  r.counters[std::string(counter::send_size)] = static_cast<double>(send_size);
  r.counters[std::string(counter::window_elapsed)] = window_sec;
  if (clients.empty()) failure = "no clients";
  if (!failure.empty()) {
    r.failure = failure;
    return r;
  }
  r.metrics["throughput"] = sum / static_cast<double>(clients.size());
  r.metrics["throughput_total"] = sum;
  r.metrics["throughput_min"] = lo;
  r.metrics["throughput_max"] = hi;
  if (cpu_util_pct) {
    r.metrics["cpu_util"] = *cpu_util_pct;
    // A service demand of 0 bytes would be 0, the best value a lower-is-
    // better metric can take: derived from nothing, it is not stored.
    if (total_bytes > 0)
      r.metrics["service_demand"] =
          service_demand_us_per_kb(*cpu_util_pct, cpus, total_bytes, window_sec);
  }
  r.invalid = invalid_pass(clients, duration_sec);
  return r;
}

std::optional<std::string> ipv6_loopback_unavailable() {
  int s = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0)
    return fmt::format("no IPv6 (socket(AF_INET6) failed: {}); write family: ipv4",
                       std::strerror(errno));
  sockaddr_in6 a{};
  a.sin6_family = AF_INET6;
  a.sin6_addr = in6addr_loopback;
  a.sin6_port = 0;
  int rc = ::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a);
  int err = errno;
  ::close(s);
  if (rc != 0)
    return fmt::format(
        "no IPv6 loopback (cannot bind ::1: {}); write family: ipv4, or enable IPv6 on lo "
        "(sysctl net.ipv6.conf.lo.disable_ipv6=0)",
        std::strerror(err));
  return std::nullopt;
}

}  // namespace tcp

namespace {

using tcp::ClientFigures;

std::int64_t now_ns(clockid_t clock = CLOCK_MONOTONIC) noexcept {
  timespec ts{};
  ::clock_gettime(clock, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

/// Where a sender stopped when it failed.
enum Stage : int {
  kStageNone = 0,
  kStageSocket,
  kStageFile,
  kStageConnect,
  kStageSend,
  kStageShutdown,
};

const char* stage_text(int stage) {
  switch (stage) {
    case kStageSocket:
      return "socket()";
    case kStageFile:
      return "creating its data file";
    case kStageConnect:
      return "connect()";
    case kStageSend:
      return "sending";
    case kStageShutdown:
      return "waiting for the receiver's FIN";
  }
  return "setup";
}

/// One sender's results, written by the child into a MAP_SHARED region;
/// 128-byte aligned so neighbours never share a cache line pair.
struct alignas(128) SenderRecord {
  int error;       ///< errno of the failed step, 0 = none
  int stage;       ///< Stage of the failure
  int local_port;  ///< the sender's port, to match the accepted connection
  int sndbuf;      ///< SO_SNDBUF, bytes
  std::uint64_t width;
  std::uint64_t bytes_sent;
  std::int64_t start_ns;  ///< CLOCK_MONOTONIC at the start barrier
  std::int64_t end_ns;    ///< CLOCK_MONOTONIC when the receiver's FIN arrived
  int done;
  sockaddr_storage local_addr;  ///< getsockname() of the connected socket
  sockaddr_storage peer_addr;   ///< getpeername() of the connected socket
};

/// Everything a sender needs, prepared before spawn() so that the child only
/// makes system calls (the worker contract of workloads/sys/process.h).
struct SenderArgs {
  const SharedRecords<SenderRecord>* records;
  bool stream;  ///< send() from a ring instead of sendfile()
  int family;
  sockaddr_storage addr;
  socklen_t addr_len;
  std::uint64_t send_size;
  std::int64_t duration_ns;
  const char* file_dir;  ///< where the data file is created
  bool use_tmpfile;      ///< O_TMPFILE works there
  char file_template[4096];
  const char* pattern;  ///< kPatternBytes of non-zero data
  int listener;         ///< the parent's listening socket, closed in the child
};

constexpr std::size_t kPatternBytes = 64 * 1024;

/// The senders' start gates: `setup` once each is in its cgroup, `go` for
/// the timed window.
enum Gate : std::size_t { kSetupGate = 0, kGoGate = 1 };

/// What a sender holds once set up.
struct SenderSetup {
  int sock = -1;
  int fd = -1;           ///< the data file (sendfile)
  char* ring = nullptr;  ///< the data ring (stream)
  std::uint64_t width = 0;
  int sndbuf = 0;
};

/// Fills the sender's data: a file (sendfile) or a ring of buffers
/// (stream), `bytes` of non-zero data. False (errno set) on failure.
bool make_sender_data(const SenderArgs& a, std::uint64_t bytes, SenderSetup& s) noexcept {
  if (a.stream) {
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return false;
    s.ring = static_cast<char*>(p);
    for (std::uint64_t done = 0; done < bytes; done += kPatternBytes)
      std::memcpy(s.ring + done, a.pattern,
                  static_cast<std::size_t>(std::min<std::uint64_t>(kPatternBytes, bytes - done)));
    return true;
  }
  if (a.use_tmpfile) {
    s.fd = ::open(a.file_dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  } else {
    char path[sizeof a.file_template];
    std::memcpy(path, a.file_template, sizeof path);
    s.fd = ::mkstemp(path);
    if (s.fd >= 0) ::unlink(path);  // at once: nothing to remove even after SIGKILL
  }
  if (s.fd < 0) return false;
  for (std::uint64_t done = 0; done < bytes;) {
    std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(kPatternBytes, bytes - done));
    ssize_t w = ::write(s.fd, a.pattern, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    done += static_cast<std::uint64_t>(w);
  }
  return true;
}

/// A sender's setup, charged to its cgroup: the socket and netperf's width
/// from its send buffer, the data, the connection. False with the failed
/// step in `r` (error, stage).
bool set_up_sender(const SenderArgs& a, SenderRecord& r, SenderSetup& s) noexcept {
  auto fail = [&](int stage) {
    r.error = errno ? errno : EIO;
    r.stage = stage;
    return false;
  };
  s.sock = ::socket(a.family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s.sock < 0) return fail(kStageSocket);
  socklen_t len = sizeof s.sndbuf;
  if (::getsockopt(s.sock, SOL_SOCKET, SO_SNDBUF, &s.sndbuf, &len) != 0) return fail(kStageSocket);
  s.width = tcp::send_width(static_cast<std::uint64_t>(s.sndbuf), a.send_size);
  if (!make_sender_data(a, s.width * a.send_size, s)) return fail(kStageFile);
  if (::connect(s.sock, reinterpret_cast<const sockaddr*>(&a.addr), a.addr_len) != 0)
    return fail(kStageConnect);
  sockaddr_storage& local = r.local_addr;
  socklen_t llen = sizeof local;
  ::getsockname(s.sock, reinterpret_cast<sockaddr*>(&local), &llen);
  socklen_t plen = sizeof r.peer_addr;
  ::getpeername(s.sock, reinterpret_cast<sockaddr*>(&r.peer_addr), &plen);
  r.local_port =
      ntohs(local.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&local)->sin6_port
                                        : reinterpret_cast<sockaddr_in*>(&local)->sin_port);
  r.sndbuf = s.sndbuf;
  r.width = s.width;
  return true;
}

/// The timed loop: sendfile()/send() of send_size cyclically over the width
/// chunks until the duration has passed; then our FIN and the wait for the
/// receiver's. The deadline is checked with the coarse clock (a few ns per
/// call); elapsed is measured with the precise one.
void send_for_duration(const SenderArgs& a, const SenderSetup& s, SenderRecord& r) noexcept {
  const std::int64_t start = now_ns();
  const std::int64_t deadline = now_ns(CLOCK_MONOTONIC_COARSE) + a.duration_ns;
  std::uint64_t sent = 0, chunk = 0;
  int send_error = 0;
  for (;;) {
    ssize_t n;
    if (!a.stream) {
      off_t off = static_cast<off_t>(chunk * a.send_size);
      n = ::sendfile(s.sock, s.fd, &off, a.send_size);
    } else {
      n = ::send(s.sock, s.ring + chunk * a.send_size, a.send_size, 0);
    }
    if (n < 0) {
      if (errno == EINTR) continue;
      send_error = errno;
      break;
    }
    sent += static_cast<std::uint64_t>(n);
    if (++chunk == s.width) chunk = 0;
    if (now_ns(CLOCK_MONOTONIC_COARSE) >= deadline) break;
  }
  r.bytes_sent = sent;
  ::shutdown(s.sock, SHUT_WR);
  char sink[256];
  ssize_t k;
  while ((k = ::recv(s.sock, sink, sizeof sink, 0)) > 0 || (k < 0 && errno == EINTR)) {
  }
  const std::int64_t end = now_ns();
  r.start_ns = start;
  r.end_ns = end;
  if (send_error) {
    r.error = send_error;
    r.stage = kStageSend;
  } else if (k < 0) {
    r.error = errno;
    r.stage = kStageShutdown;
  }
}

/// The body of a sender process (a worker of workloads/sys/process.h):
/// reports twice, once set up (or failed) and once done. Its record, not its
/// exit status, says how it went: it exits with 0 once it has reported.
int sender_main(const SenderArgs& a, const WorkerLink& link) noexcept {
  ::close(a.listener);
  SenderRecord& r = (*a.records)[link.index()];
  // Wait until the parent has moved us into our cgroup: what we allocate
  // from here on (socket, file pages) is charged there.
  link.wait_gate(kSetupGate);
  SenderSetup s;
  if (!set_up_sender(a, r, s)) {
    link.report();
    return 0;
  }
  link.report();  // ready
  link.wait_gate(kGoGate);
  send_for_duration(a, s, r);
  r.done = 1;
  link.report();
  return 0;
}

/// "[::1]:40312" or "127.0.0.1:40312": an address as a socket reports it;
/// "unknown" for an unset or foreign family.
std::string address_text(const sockaddr_storage& a) {
  char host[INET6_ADDRSTRLEN] = {};
  if (a.ss_family == AF_INET6) {
    const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&a);
    if (!::inet_ntop(AF_INET6, &v6->sin6_addr, host, sizeof host)) return "unknown";
    return fmt::format("[{}]:{}", host, ntohs(v6->sin6_port));
  }
  if (a.ss_family == AF_INET) {
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(&a);
    if (!::inet_ntop(AF_INET, &v4->sin_addr, host, sizeof host)) return "unknown";
    return fmt::format("{}:{}", host, ntohs(v4->sin_port));
  }
  return "unknown";
}

/// The aggregate "cpu" line of /proc/stat: busy and total ticks (busy = all
/// but idle: iowait counts as busy, as netperf -c does).
struct CpuTicks {
  std::uint64_t busy = 0, total = 0;
  bool ok = false;
};

CpuTicks read_cpu_ticks() {
  CpuTicks t;
  std::ifstream in("/proc/stat");
  std::string cpu;
  if (!(in >> cpu) || cpu != "cpu") return t;
  std::uint64_t v[8] = {};
  for (int i = 0; i < 8 && (in >> v[i]); ++i) {
  }
  for (int i = 0; i < 8; ++i) t.total += v[i];
  t.busy = t.total - v[3];
  t.ok = t.total > 0;
  return t;
}

/// One accepted connection and its receiving thread.
struct Receiver {
  UniqueFd fd;
  int rcvbuf = 0;
  std::uint64_t recv_size = 0;
  std::atomic<std::uint64_t> bytes{0};
  std::atomic<int> error{0};
  std::thread thread;
};

/// The receive loop (netserver's): recv() of recv_size until EOF, counting;
/// then our FIN.
void receive_loop(Receiver* r) noexcept {
  std::vector<char> buf;
  try {
    buf.resize(static_cast<std::size_t>(r->recv_size));
  } catch (const std::bad_alloc&) {
    r->error.store(ENOMEM);
    ::shutdown(r->fd.get(), SHUT_RDWR);
    return;
  }
  std::uint64_t total = 0;
  for (;;) {
    ssize_t n = ::recv(r->fd.get(), buf.data(), buf.size(), 0);
    if (n > 0) {
      total += static_cast<std::uint64_t>(n);
      continue;
    }
    if (n == 0) break;
    if (errno == EINTR) continue;
    r->error.store(errno);
    break;
  }
  r->bytes.store(total);
  ::shutdown(r->fd.get(), SHUT_WR);
}

/// True when O_TMPFILE files can be created in `dir`.
bool tmpfile_works(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  ::close(fd);
  return true;
}

bool dir_writable(const std::string& dir) {
  return !dir.empty() && ::access(dir.c_str(), W_OK) == 0;
}

/// Advice for a socket errno in messages.
std::string socket_advice(int err) {
  switch (err) {
    case EADDRNOTAVAIL:
      return "; no free local port (ephemeral ports exhausted? see "
             "net.ipv4.ip_local_port_range and sockets in TIME_WAIT) or no such loopback address";
    case EADDRINUSE:
      return "; the port is in use: write port: 0 for an ephemeral port";
    case EMFILE:
    case ENFILE:
      return "; too many open files: lower clients or raise the limit (ulimit -n)";
    case ECONNREFUSED:
      return "; nothing listens there any more";
    case EACCES:
      return "; a port below 1024 needs root: write port: 0";
  }
  return "";
}

class TcpSession : public CellSession {
 public:
  TcpSession(const Cell& cell, RunContext& ctx, bool stream)
      : ctx_(ctx),
        stream_(stream),
        clients_(static_cast<int>(cell.integer("clients"))),
        send_size_(cell.bytes("send_size")),
        recv_size_(cell.bytes("recv_size")),
        duration_(cell.seconds("duration")),
        cpu_util_(cell.flag("cpu_util")),
        ipv6_(cell.text("family") == "ipv6"),
        records_(static_cast<std::size_t>(clients_),
                 name() + std::string(": the senders' results")) {
    // The listener for the whole cell: loopback only, an ephemeral port
    // unless the job names one.
    const int port = static_cast<int>(cell.integer("port"));
    family_ = ipv6_ ? AF_INET6 : AF_INET;
    listener_.reset(::socket(family_, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (listener_.get() < 0)
      throw EnvironmentError(fmt::format("{}: socket() failed: {}{}", name(), errno_text(errno),
                                         socket_advice(errno)));
    int one = 1;
    ::setsockopt(listener_.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    std::memset(&addr_, 0, sizeof addr_);
    if (ipv6_) {
      ::setsockopt(listener_.get(), IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
      auto* a = reinterpret_cast<sockaddr_in6*>(&addr_);
      a->sin6_family = AF_INET6;
      a->sin6_addr = in6addr_loopback;
      a->sin6_port = htons(static_cast<std::uint16_t>(port));
      addr_len_ = sizeof(sockaddr_in6);
    } else {
      auto* a = reinterpret_cast<sockaddr_in*>(&addr_);
      a->sin_family = AF_INET;
      a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      a->sin_port = htons(static_cast<std::uint16_t>(port));
      addr_len_ = sizeof(sockaddr_in);
    }
    const std::string where = fmt::format("{} port {}", ipv6_ ? "::1" : "127.0.0.1", port);
    if (::bind(listener_.get(), reinterpret_cast<sockaddr*>(&addr_), addr_len_) != 0) {
      int err = errno;
      throw EnvironmentError(fmt::format("{}: cannot bind the receiver to {}: {}{}", name(), where,
                                         errno_text(err), socket_advice(err)));
    }
    if (::listen(listener_.get(), clients_ + 16) != 0)
      throw EnvironmentError(
          fmt::format("{}: listen() on {} failed: {}", name(), where, errno_text(errno)));
    ::getsockname(listener_.get(), reinterpret_cast<sockaddr*>(&addr_), &addr_len_);
    listen_port_ = ntohs(ipv6_ ? reinterpret_cast<sockaddr_in6*>(&addr_)->sin6_port
                               : reinterpret_cast<sockaddr_in*>(&addr_)->sin_port);

    // The data pattern, prepared before any fork.
    pattern_.resize(kPatternBytes);
    // Non-zero, not trivially repeating data (a file of zeros may be treated
    // specially by some paths).
    std::uint32_t x = 2463534242u;
    for (auto& c : pattern_) {
      x ^= x << 13;
      x ^= x >> 17;
      x ^= x << 5;
      c = static_cast<char>((x & 0xff) | 1);
    }

    if (!stream_) {
      // netperf creates its file in the working directory; /tmp when that is
      // not writable. O_TMPFILE leaves no name behind at all.
      char cwd[4096];
      std::string dir = ::getcwd(cwd, sizeof cwd) ? cwd : "";
      if (!dir_writable(dir)) dir = "/tmp";
      if (!dir_writable(dir))
        throw EnvironmentError(name() + std::string(": neither the working directory nor /tmp is "
                                                    "writable; the senders need a small file"));
      file_dir_ = dir;
      use_tmpfile_ = tmpfile_works(dir);
      ctx.record(name() + std::string(".file_dir"), file_dir_);
    }
    ctx.record(
        name() + std::string(".receiver"),
        fmt::format("{} port {} (threads in nightjar)", ipv6_ ? "::1" : "127.0.0.1", listen_port_));
    if (ctx.cgroups)
      for (int i = 0; i < clients_; ++i)
        ctx.record(fmt::format("cgroup.client{}", i), ctx.cgroups->relative(ctx.cgroups->leaf(i)));
  }

  ~TcpSession() override { abort_pass(); }

  /// An untimed pass of at most 1 s: connection setup, page cache and CPU
  /// frequency warm without doubling a 60 s cell.
  void warmup() override {
    if (ctx_.interrupted()) throw Interrupted();
    auto result = run_pass(std::min(duration_, 1.0));
    if (result.failure)
      ctx_.warn(name() + std::string(": the warm-up pass failed: ") + *result.failure);
  }

  IterationResult measure() override {
    if (ctx_.interrupted()) throw Interrupted();
    return run_pass(duration_);
  }

 private:
  const char* name() const { return stream_ ? "tcp_stream" : "tcp_sendfile"; }

  /// Kills and reaps the senders, wakes and joins the receivers, closes
  /// every socket of the pass. Never throws.
  void abort_pass() noexcept {
    senders_.reset();  // SIGKILL and reap (workloads/sys/process.h Workers)
    for (auto& r : receivers_)
      if (r->fd) ::shutdown(r->fd.get(), SHUT_RDWR);
    for (auto& r : receivers_)
      if (r->thread.joinable()) r->thread.join();
    receivers_.clear();
  }

  [[noreturn]] void fail_env(const std::string& message) {
    abort_pass();
    throw EnvironmentError(message);
  }

  /// Throws Interrupted (after cleaning up) when the runner was signalled.
  void check_interrupt() {
    if (ctx_.interrupted()) {
      abort_pass();
      throw Interrupted();
    }
  }

  /// The error of a sender's setup, as an EnvironmentError message, or "".
  std::string setup_error() const {
    for (int i = 0; i < clients_; ++i) {
      const SenderRecord& r = records_[static_cast<std::size_t>(i)];
      if (!r.error || r.stage == kStageSend || r.stage == kStageShutdown) continue;
      std::string what = stage_text(r.stage);
      if (r.stage == kStageConnect)
        what += fmt::format(" to {} port {}", ipv6_ ? "::1" : "127.0.0.1", listen_port_);
      if (r.stage == kStageFile) what += stream_ ? " (mmap of its send ring)" : " in " + file_dir_;
      return fmt::format("{}: client {} failed at {}: {}{}", name(), i, what, errno_text(r.error),
                         socket_advice(r.error));
    }
    return "";
  }

  /// A failed sample: the first sender that died on its own, else `otherwise`.
  IterationResult failed_pass(const std::string& otherwise) {
    std::optional<std::string> why = senders_->failure();
    abort_pass();
    IterationResult r;
    r.failure = why ? *why : otherwise;
    return r;
  }

  /// Forks the senders (each blocks at the setup gate), moves each into its
  /// cgroup before it allocates anything, then opens the setup gate.
  void start_senders(SenderArgs& args) {
    senders_.emplace(WorkersSpec{.name = name(),
                                 .noun = "client",
                                 .numbered = true,
                                 .comm = stream_ ? "tcp_stream-tx" : "tcp_sendfile-tx",
                                 .gates = 2,
                                 .interrupted = ctx_.interrupted});
    auto body = [&args](const WorkerLink& link) noexcept { return sender_main(args, link); };
    const auto clients = static_cast<std::size_t>(clients_);
    for (std::size_t i = 0; i < clients; ++i) {
      try {
        senders_->spawn(body, clients);
      } catch (const EnvironmentError& e) {
        fail_env(e.what());
      }
      if (!ctx_.cgroups) continue;
      try {
        ctx_.cgroups->attach(ctx_.cgroups->leaf(static_cast<int>(i)), senders_->pid(i));
      } catch (const std::exception& e) {
        fail_env(e.what());
      }
    }
    senders_->open_gate(kSetupGate);
  }

  /// Accepts the N connections and matches each to its sender by port.
  std::vector<Receiver*> accept_connections() {
    std::map<int, int> by_port;
    for (int i = 0; i < clients_; ++i)
      by_port[records_[static_cast<std::size_t>(i)].local_port] = i;
    std::vector<Receiver*> slot(static_cast<std::size_t>(clients_), nullptr);
    int accepted = 0;
    const std::int64_t accept_deadline = now_ns() + 10'000'000'000LL;
    while (accepted < clients_) {
      check_interrupt();
      if (now_ns() > accept_deadline)
        fail_env(fmt::format("{}: only {} of {} connections arrived at the receiver", name(),
                             accepted, clients_));
      pollfd pfd{listener_.get(), POLLIN, 0};
      if (::poll(&pfd, 1, 100) <= 0) continue;
      sockaddr_storage peer{};
      socklen_t plen = sizeof peer;
      int fd = ::accept4(listener_.get(), reinterpret_cast<sockaddr*>(&peer), &plen, SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == EAGAIN || errno == ECONNABORTED) continue;
        fail_env(fmt::format("{}: accept failed: {}{}", name(), errno_text(errno),
                             socket_advice(errno)));
      }
      UniqueFd conn(fd);
      int pport =
          ntohs(peer.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&peer)->sin6_port
                                           : reinterpret_cast<sockaddr_in*>(&peer)->sin_port);
      auto it = by_port.find(pport);
      if (it == by_port.end() || slot[static_cast<std::size_t>(it->second)]) continue;  // not ours
      auto rec = std::make_unique<Receiver>();
      rec->fd = std::move(conn);
      socklen_t len = sizeof rec->rcvbuf;
      ::getsockopt(rec->fd.get(), SOL_SOCKET, SO_RCVBUF, &rec->rcvbuf, &len);
      rec->recv_size =
          recv_size_ ? recv_size_ : static_cast<std::uint64_t>(std::max(rec->rcvbuf, 1));
      slot[static_cast<std::size_t>(it->second)] = rec.get();
      receivers_.push_back(std::move(rec));
      ++accepted;
    }
    return slot;
  }

  /// A receiving thread per connection; they inherit a mask without
  /// SIGINT/SIGTERM, so the runner's thread gets them.
  void start_receivers(const std::vector<Receiver*>& slot) {
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    ::pthread_sigmask(SIG_BLOCK, &block, &old);
    try {
      for (auto* r : slot) r->thread = std::thread(receive_loop, r);
    } catch (const std::system_error& e) {
      ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
      fail_env(
          fmt::format("{}: cannot start a receiver thread: {}; lower clients", name(), e.what()));
    }
    ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  }

  /// The figures of a completed pass: failures of senders or receivers,
  /// else the summary (tcp::summarize) over the window t0..t1 (ns) of a
  /// test window of `seconds`.
  IterationResult pass_result(const std::vector<Receiver*>& slot, const CpuTicks& before,
                              const CpuTicks& after, std::int64_t t0, std::int64_t t1,
                              double seconds) const {
    for (int i = 0; i < clients_; ++i) {
      const SenderRecord& rec = records_[static_cast<std::size_t>(i)];
      std::optional<std::string> failure;
      if (rec.error)
        failure = fmt::format("client {}: {} failed: {}", i, stage_text(rec.stage),
                              errno_text(rec.error));
      else if (int err = slot[static_cast<std::size_t>(i)]->error.load())
        failure = fmt::format("client {}: the receiver's recv() failed: {}", i, errno_text(err));
      if (failure) {
        IterationResult r;
        r.failure = std::move(failure);
        return r;
      }
    }
    std::vector<ClientFigures> figures;
    for (int i = 0; i < clients_; ++i) {
      const SenderRecord& rec = records_[static_cast<std::size_t>(i)];
      const Receiver& rv = *slot[static_cast<std::size_t>(i)];
      ClientFigures f;
      f.bytes_sent = rec.bytes_sent;
      f.bytes_received = rv.bytes.load();
      f.elapsed = static_cast<double>(rec.end_ns - rec.start_ns) / 1e9;
      f.send_socket_size = rec.sndbuf;
      f.recv_socket_size = rv.rcvbuf;
      f.recv_size = rv.recv_size;
      figures.push_back(f);
    }
    std::optional<double> util;
    if (cpu_util_ && before.ok && after.ok && after.total > before.total)
      util = 100.0 * static_cast<double>(after.busy - before.busy) /
             static_cast<double>(after.total - before.total);
    return tcp::summarize(figures, send_size_, util, static_cast<double>(t1 - t0) / 1e9,
                          ctx_.machine.cpus, seconds);
  }

  /// Records once per run, from the first pass, each client's local and
  /// peer address and port as its connected socket reports them
  /// (getsockname/getpeername): "tcp_sendfile.client<i>.local" and ".peer".
  /// Later passes connect from other ephemeral ports of the same addresses.
  void record_addresses() {
    if (addresses_recorded_) return;
    addresses_recorded_ = true;
    for (int i = 0; i < clients_; ++i) {
      const SenderRecord& r = records_[static_cast<std::size_t>(i)];
      ctx_.record(fmt::format("{}.client{}.local", name(), i), address_text(r.local_addr));
      ctx_.record(fmt::format("{}.client{}.peer", name(), i), address_text(r.peer_addr));
    }
  }

  SenderArgs sender_args(double seconds) const {
    SenderArgs args{};
    args.records = &records_;
    args.stream = stream_;
    args.family = family_;
    args.addr = addr_;
    args.addr_len = addr_len_;
    args.send_size = send_size_;
    args.duration_ns = static_cast<std::int64_t>(seconds * 1e9);
    args.file_dir = file_dir_.c_str();
    args.use_tmpfile = use_tmpfile_;
    std::snprintf(args.file_template, sizeof args.file_template, "%s/nightjar-%s-XXXXXX",
                  file_dir_.c_str(), name());
    args.pattern = pattern_.data();
    args.listener = listener_.get();
    return args;
  }

  IterationResult run_pass(double seconds) {
    using Clock = std::chrono::steady_clock;
    records_.clear();
    // From here on, every path out kills/reaps senders and joins receivers.
    struct Guard {
      TcpSession& s;
      ~Guard() { s.abort_pass(); }
    } guard{*this};
    SenderArgs args = sender_args(seconds);
    start_senders(args);

    // Every sender: socket, file, connect -> ready (or its error recorded).
    const bool all_ready = senders_->await(1, Clock::now() + std::chrono::seconds(60));
    if (std::string err = setup_error(); !err.empty()) fail_env(err);
    if (!all_ready) return failed_pass("a client did not get ready within 60 s");
    const std::vector<Receiver*> slot = accept_connections();
    record_addresses();
    start_receivers(slot);

    // The timed window: from the go gate to the last sender's done.
    const CpuTicks before = cpu_util_ ? read_cpu_ticks() : CpuTicks{};
    const std::int64_t t0 = now_ns();
    const auto limit = std::chrono::duration<double>(seconds + std::max(30.0, seconds));
    senders_->open_gate(kGoGate);
    const bool all_done =
        senders_->await(2, Clock::now() + std::chrono::duration_cast<Clock::duration>(limit));
    const std::int64_t t1 = now_ns();
    const CpuTicks after = cpu_util_ ? read_cpu_ticks() : CpuTicks{};
    if (!all_done)
      return failed_pass(
          fmt::format("a client did not finish within {:.0f} s of the start", limit.count()));
    senders_->wait_all();
    for (auto* r : slot)
      if (r->thread.joinable()) r->thread.join();
    return pass_result(slot, before, after, t0, t1, seconds);
  }

  RunContext& ctx_;
  bool stream_;
  int clients_;
  std::uint64_t send_size_, recv_size_;
  double duration_;
  bool cpu_util_, ipv6_;
  int family_ = AF_INET6;
  UniqueFd listener_;
  sockaddr_storage addr_{};
  socklen_t addr_len_ = 0;
  int listen_port_ = 0;
  SharedRecords<SenderRecord> records_;  ///< written by the senders
  std::vector<char> pattern_;
  std::string file_dir_;
  bool use_tmpfile_ = false;
  std::optional<Workers> senders_;  ///< during a pass
  std::vector<std::unique_ptr<Receiver>> receivers_;
  bool addresses_recorded_ = false;  ///< record_addresses() ran
};

class TcpWorkload : public Workload {
 public:
  explicit TcpWorkload(bool stream) : stream_(stream) {}

  std::string_view name() const override { return stream_ ? "tcp_stream" : "tcp_sendfile"; }
  std::string_view summary() const override {
    return stream_ ? "netperf TCP_STREAM over loopback: N senders send() to a receiver; Mbps"
                   : "netperf TCP_SENDFILE over loopback: N senders sendfile() to a receiver; Mbps";
  }

  std::vector<ParamDescriptor> params() const override {
    return {
        {.name = "clients",
         .type = ParamType::count,
         .unit = "senders",
         .default_value = "1",
         .doc = "concurrent sender processes, each with its own connection (netperf instances)",
         .min = 1.0,
         .max = 4096.0},
        {.name = "send_size",
         .type = ParamType::size,
         .unit = "bytes",
         .default_value = "10K",
         .doc = "bytes per sendfile()/send() call (netperf -m); 10K = 10240",
         .min = 1.0,
         .max = static_cast<double>(1ULL << 30)},
        {.name = "duration",
         .type = ParamType::duration,
         .unit = "s",
         .default_value = "60s",
         .doc = "length of the timed window (netperf -l)",
         .min = 0.1,
         .max = 86400.0},
        {.name = "family",
         .type = ParamType::choice,
         .default_value = "ipv6",
         .doc = "loopback address: ipv6 = ::1 (netperf -6), ipv4 = 127.0.0.1",
         .choices = {"ipv6", "ipv4"}},
        {.name = "recv_size",
         .type = ParamType::size,
         .unit = "bytes",
         .default_value = "0",
         .doc = "bytes per recv() call of the receiver; 0 = its SO_RCVBUF (netperf's default)",
         .min = 0.0,
         .max = static_cast<double>(1ULL << 30)},
        {.name = "cpu_util",
         .type = ParamType::flag,
         .default_value = "on",
         .doc = "measure CPU utilisation from /proc/stat and service demand (netperf -c)"},
        {.name = "port",
         .type = ParamType::count,
         .default_value = "0",
         .doc = "receiver's port on loopback; 0 = an ephemeral port (default)",
         .min = 0.0,
         .max = 65535.0},
    };
  }

  std::vector<MetricDescriptor> metrics() const override {
    return {
        {.name = "throughput",
         .unit = "Mbps",
         .direction = Direction::higher_is_better,
         .mean = MeanKind::harmonic,
         .doc = "mean per client of bytes received x 8 / 1e6 / elapsed (netperf's "
                "10^6bits/sec; LKP Throughput_Mbps)"},
        {.name = "throughput_total",
         .unit = "Mbps",
         .direction = Direction::higher_is_better,
         .mean = MeanKind::harmonic,
         .doc = "sum over clients (LKP Throughput_total_Mbps)"},
        {.name = "throughput_min",
         .unit = "Mbps",
         .direction = Direction::higher_is_better,
         .mean = MeanKind::harmonic,
         .doc = "slowest client"},
        {.name = "throughput_max",
         .unit = "Mbps",
         .direction = Direction::higher_is_better,
         .mean = MeanKind::harmonic,
         .doc = "fastest client"},
        {.name = "cpu_util",
         .unit = "%",
         .direction = Direction::lower_is_better,
         .mean = MeanKind::arithmetic,
         .doc = "100 - idle% of all CPUs over the timed window, iowait busy (netperf -c); "
                "cpu_util: on"},
        {.name = "service_demand",
         .unit = "us/KB",
         .direction = Direction::lower_is_better,
         .mean = MeanKind::arithmetic,
         .doc = "cpu_util% x 10000 / (KB/s of all clients) x CPUs (netperf's formula, KB = "
                "1024)"},
    };
  }

  std::vector<std::string> requirements() const override {
    std::vector<std::string> r{"loopback networking (IPv6 ::1 for family: ipv6)"};
    if (!stream_) r.emplace_back("a writable working directory or /tmp (an O_TMPFILE file)");
    r.emplace_back("root and a memory cgroup controller when the job has a cgroup: section");
    return r;
  }

  void validate(const Cell& cell, const MachineFacts&) const override {
    if (cell.integer("clients") < 1)
      throw ParamError{"clients",
                       "clients must be at least 1; write clients: 1 or a list such as [1, 2]"};
    const std::uint64_t send = cell.bytes("send_size");
    if (send < 1 || send > (1ULL << 30))
      throw ParamError{"send_size", "send_size must be 1 byte .. 1G; write send_size: 10K"};
    if (!(cell.seconds("duration") > 0))
      throw ParamError{"duration", "duration must be positive; write duration: 60s"};
    const std::string& family = cell.text("family");
    if (family != "ipv6" && family != "ipv4")
      throw ParamError{"family", "'" + family + "' is not a family; write ipv6 or ipv4"};
  }

  std::optional<std::string> unmet_requirement(const Cell& cell) const override {
    if (cell.text("family") == "ipv6") return tcp::ipv6_loopback_unavailable();
    return std::nullopt;
  }

  /// One leaf per sender: sender i is moved into ctx.cgroups->leaf(i).
  int cgroup_clients(const Cell& cell) const override {
    return static_cast<int>(cell.integer("clients"));
  }

  /// netperf's blocks, one per client and iteration (tcp::netperf_blocks).
  NetperfOutput netperf_output() const override {
    return
        [stream = stream_](const NetperfIteration& it) { return tcp::netperf_blocks(stream, it); };
  }

  /// LKP's netperf testcase with `test: TCP_SENDFILE` (TCP_STREAM for
  /// tcp_stream), as lkp-tests' netperf job file runs it: nr_threads
  /// instances of `netperf -t TEST -l runtime [-m send_size]` over loopback
  /// (docs/data.md "LKP trees as nightjar runs").
  std::optional<LkpMapping> lkp_mapping() const override {
    return LkpMapping{
        .testcase = "netperf",
        .test = stream_ ? "TCP_STREAM" : "TCP_SENDFILE",
        .params =
            {
                {.lkp = "test", .rule = LkpParamRule::ignored, .why = "selects the workload"},
                {.lkp = "nr_threads", .param = "clients", .rule = LkpParamRule::percent_cpus},
                {.lkp = "runtime", .param = "duration"},
                {.lkp = "send_size", .param = "send_size"},
                {.lkp = "ip", .param = "family"},
            },
        .metrics =
            {
                {.lkp = "netperf.Throughput_Mbps", .metric = "throughput"},
                {.lkp = "netperf.Throughput_total_Mbps", .metric = "throughput_total"},
            },
    };
  }

  std::unique_ptr<CellSession> start(const Cell& cell, RunContext& ctx) const override {
    return std::make_unique<TcpSession>(cell, ctx, stream_);
  }

 private:
  bool stream_;
};

/// `tcp_sendfile`: each sender loops sendfile(2) of `send_size` bytes over a
/// small unlinked file of width × send_size bytes (netperf -t TCP_SENDFILE).
NIGHTJAR_WORKLOAD(TcpWorkload, false);
/// `tcp_stream`: the same with send(2) from a ring of width buffers
/// (netperf -t TCP_STREAM).
NIGHTJAR_WORKLOAD(TcpWorkload, true);

}  // namespace

}  // namespace nightjar
