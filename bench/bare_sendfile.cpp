// The bare sendfile loop of bench/tcp_sendfile_vs_bare.sh: what tcp_sendfile
// measures, with no harness around it. N forked senders each connect to a
// receiver thread over loopback, wait for a common start, loop sendfile() of
// send_size bytes over a 2-chunk (SO_SNDBUF / send_size + 1) unlinked file for
// `seconds`, shut down and wait for the receiver's FIN; throughput per client
// = bytes received × 8 / 1e6 / elapsed. Written independently of
// workloads/tcp_sendfile.cpp so that the comparison means something.
//
//   bare_sendfile [CLIENTS=1] [SEND_SIZE_BYTES=10240] [SECONDS=5] [ipv6|ipv4]
//
// Prints one line on stdout: "bare_sendfile clients=N mean_mbps=X total_mbps=Y".
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

double now() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

[[noreturn]] void die(const char* what) {
  std::perror(what);
  std::exit(1);
}

struct Shared {
  double start, end;
  std::uint64_t sent;
};

}  // namespace

int main(int argc, char** argv) {
  const int clients = argc > 1 ? std::atoi(argv[1]) : 1;
  const std::size_t send_size = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 10240;
  const double seconds = argc > 3 ? std::atof(argv[3]) : 5;
  const bool v6 = argc > 4 ? std::string(argv[4]) != "ipv4" : true;
  if (clients < 1 || send_size < 1 || seconds <= 0) {
    std::fprintf(stderr, "usage: bare_sendfile [CLIENTS] [SEND_SIZE] [SECONDS] [ipv6|ipv4]\n");
    return 2;
  }
  signal(SIGPIPE, SIG_IGN);

  sockaddr_storage addr{};
  socklen_t alen;
  if (v6) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&addr);
    a->sin6_family = AF_INET6;
    a->sin6_addr = in6addr_loopback;
    alen = sizeof *a;
  } else {
    auto* a = reinterpret_cast<sockaddr_in*>(&addr);
    a->sin_family = AF_INET;
    a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    alen = sizeof *a;
  }
  int lfd = socket(addr.ss_family, SOCK_STREAM, 0);
  if (lfd < 0 || bind(lfd, reinterpret_cast<sockaddr*>(&addr), alen) != 0 ||
      listen(lfd, clients + 16) != 0)
    die("listen");
  getsockname(lfd, reinterpret_cast<sockaddr*>(&addr), &alen);

  auto* shared =
      static_cast<Shared*>(mmap(nullptr, sizeof(Shared) * clients, PROT_READ | PROT_WRITE,
                                MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  if (shared == MAP_FAILED) die("mmap");
  int go[2];
  if (pipe(go) != 0) die("pipe");

  std::vector<pid_t> pids;
  for (int i = 0; i < clients; ++i) {
    pid_t pid = fork();
    if (pid < 0) die("fork");
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      close(go[1]);
      close(lfd);
      int s = socket(addr.ss_family, SOCK_STREAM, 0);
      int sndbuf = 0;
      socklen_t l = sizeof sndbuf;
      getsockopt(s, SOL_SOCKET, SO_SNDBUF, &sndbuf, &l);
      std::size_t width = static_cast<std::size_t>(sndbuf) / send_size + 1;
      if (width < 2) width = 2;
      char path[] = "/tmp/bare_sendfile-XXXXXX";
      int fd = mkstemp(path);
      if (fd < 0) die("mkstemp");
      unlink(path);
      std::vector<char> buf(send_size, 'x');
      for (std::size_t c = 0; c < width; ++c)
        if (write(fd, buf.data(), send_size) != static_cast<ssize_t>(send_size)) die("write");
      if (connect(s, reinterpret_cast<sockaddr*>(&addr), alen) != 0) die("connect");
      char c;
      while (read(go[0], &c, 1) > 0) {
      }
      const double t0 = now();
      const double stop = t0 + seconds;
      std::uint64_t sent = 0;
      std::size_t chunk = 0;
      do {
        off_t off = static_cast<off_t>(chunk * send_size);
        ssize_t n = sendfile(s, fd, &off, send_size);
        if (n < 0) die("sendfile");
        sent += static_cast<std::uint64_t>(n);
        if (++chunk == width) chunk = 0;
      } while (now() < stop);
      shutdown(s, SHUT_WR);
      char sink[256];
      while (recv(s, sink, sizeof sink, 0) > 0) {
      }
      shared[i] = {t0, now(), sent};
      _exit(0);
    }
    pids.push_back(pid);
  }
  close(go[0]);

  std::vector<std::uint64_t> received(static_cast<std::size_t>(clients), 0);
  std::vector<std::thread> receivers;
  for (int i = 0; i < clients; ++i) {
    int c = accept(lfd, nullptr, nullptr);
    if (c < 0) die("accept");
    receivers.emplace_back([c, &received, i] {
      int rcvbuf = 0;
      socklen_t l = sizeof rcvbuf;
      getsockopt(c, SOL_SOCKET, SO_RCVBUF, &rcvbuf, &l);
      std::vector<char> buf(static_cast<std::size_t>(rcvbuf > 0 ? rcvbuf : 131072));
      std::uint64_t total = 0;
      ssize_t n;
      while ((n = recv(c, buf.data(), buf.size(), 0)) > 0) total += static_cast<std::uint64_t>(n);
      received[static_cast<std::size_t>(i)] = total;
      shutdown(c, SHUT_WR);
    });
  }
  close(go[1]);  // start
  for (pid_t p : pids) waitpid(p, nullptr, 0);
  for (auto& t : receivers) t.join();
  double total_mbps = 0;
  std::uint64_t sent = 0, recvd = 0;
  for (int i = 0; i < clients; ++i) sent += shared[i].sent;
  for (auto r : received) recvd += r;
  // Accepted order is not client order, so each client's figure uses its
  // sender's count; the totals of both sides are checked to agree.
  for (int i = 0; i < clients; ++i)
    total_mbps += static_cast<double>(shared[i].sent) * 8 / 1e6 / (shared[i].end - shared[i].start);
  if (sent != recvd)
    std::fprintf(stderr, "bare_sendfile: sent %llu received %llu\n",
                 static_cast<unsigned long long>(sent), static_cast<unsigned long long>(recvd));
  std::printf("bare_sendfile clients=%d mean_mbps=%.2f total_mbps=%.2f\n", clients,
              total_mbps / clients, total_mbps);
  return sent == recvd ? 0 : 1;
}
