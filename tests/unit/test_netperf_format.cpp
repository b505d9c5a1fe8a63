// Unit under test: the netperf-compatible renderer (results/render/netperf.h):
// netperf's default block (docs/reference.md "netperf TCP_SENDFILE"; trailing blanks
// included), the IPv4 and TCP_STREAM headers, header-only blocks for failed
// iterations, and rendering from fixed stored records.
#include "results/render/netperf.h"

#include <gtest/gtest.h>

#include "test_support.h"

namespace nightjar {
namespace {

// netperf's default TCP_SENDFILE output, byte for byte (docs/reference.md
// "netperf TCP_SENDFILE" shows it without the header lines' trailing blanks).
const char* kReferenceBlock =
    "TCP SENDFILE TEST from ::0 (::) port 0 AF_INET6 to ::1 (::1) port 0 AF_INET6\n"
    "Recv   Send    Send                          \n"
    "Socket Socket  Message  Elapsed              \n"
    "Size   Size    Size     Time     Throughput  \n"
    "bytes  bytes   bytes    secs.    10^6bits/sec  \n"
    "\n"
    "131072  16384  10240    10.00    16069.37   \n";

const char* kHeaderLines =
    "Recv   Send    Send                          \n"
    "Socket Socket  Message  Elapsed              \n"
    "Size   Size    Size     Time     Throughput  \n"
    "bytes  bytes   bytes    secs.    10^6bits/sec  \n"
    "\n";

}  // namespace

TEST(NetperfFormat, ReferenceBlockByteForByte) {
  NetperfBlock b;
  b.result = NetperfResult{131072, 16384, 10240, 10.0, 16069.37};
  EXPECT_EQ(render_netperf_block(b), kReferenceBlock);
}

TEST(NetperfFormat, ResultLineLayoutWithOtherWidths) {
  NetperfBlock b;
  b.ipv6 = false;
  b.result = NetperfResult{87380, 16384, 1024, 5.0049, 123456.789};
  EXPECT_EQ(render_netperf_block(b),
            std::string("TCP SENDFILE TEST from 0.0.0.0 (0.0.0.0) port 0 AF_INET to 127.0.0.1 "
                        "(127.0.0.1) port 0 AF_INET\n") +
                kHeaderLines + " 87380  16384   1024    5.00     123456.79   \n");
}

TEST(NetperfFormat, StreamHeaderAndFailedIterationHasNoResultLine) {
  NetperfBlock b;
  b.stream = true;
  EXPECT_EQ(
      render_netperf_block(b),
      std::string("MIGRATED TCP STREAM TEST from ::0 (::) port 0 AF_INET6 to ::1 (::1) port 0 "
                  "AF_INET6\n") +
          kHeaderLines);
}

TEST(NetperfFormat, RendersStoredRunsClientByClient) {
  test::TempDir dir;
  ResultsStore store(dir.path() + "/r.db");
  NewRun run;
  run.job = "netperf";
  run.cell.workload = "tcp_sendfile";
  run.cell.params["clients"] = {"2", 2};
  run.cell.params["family"] = {"ipv6", 0};
  run.cell.params["send_size"] = {"10K", 10240};
  run.iterations = 2;
  std::int64_t id = store.begin_run(run);
  IterationResult ok;
  ok.metrics["throughput"] = 1;
  ok.counters = {{"send_size", 10240},
                 {"client0.recv_socket_size", 131072},
                 {"client0.send_socket_size", 16384},
                 {"client0.elapsed", 5.0012},
                 {"client0.throughput", 8000.126},
                 {"client1.recv_socket_size", 131072},
                 {"client1.send_socket_size", 16384},
                 {"client1.elapsed", 5.0101},
                 {"client1.throughput", 7999.5}};
  store.add_iteration(id, 1, ok, {{"cpu.util_pct", 99}}, 5.1);
  IterationResult bad;
  bad.failure = "client 1: the sender counted 10 bytes sent but the receiver 9 bytes received";
  store.add_iteration(id, 2, bad, {}, 5.1);
  store.finish_run(id, RunStatus::complete);

  NewRun other = run;
  other.cell.workload = "pft";
  std::int64_t pft = store.begin_run(other);

  std::vector<std::int64_t> not_rendered;
  std::string text = render_netperf(store, {id, pft}, &not_rendered);
  const std::string header =
      std::string(
          "TCP SENDFILE TEST from ::0 (::) port 0 AF_INET6 to ::1 (::1) port 0 AF_INET6\n") +
      kHeaderLines;
  EXPECT_EQ(text, header + "131072  16384  10240    5.00     8000.13   \n" + header +
                      "131072  16384  10240    5.01     7999.50   \n" + header + header);
  EXPECT_EQ(not_rendered, std::vector<std::int64_t>{pft});
}

}  // namespace nightjar
