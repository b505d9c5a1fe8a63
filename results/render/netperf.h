// netperf-compatible output of tcp_sendfile / tcp_stream runs
// (`nightjar run --format netperf`): for every iteration and client, the
// block one `netperf -t TCP_SENDFILE` (or TCP_STREAM) instance prints, byte
// for byte as docs/reference.md "netperf TCP_SENDFILE" gives it, so that parsers of
// netperf output (LKP's) read nightjar's. A renderer: it reads stored
// records and measures nothing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "results/store/store.h"

namespace nightjar {

/// One client's result of one iteration, as netperf's result line shows it.
struct NetperfResult {
  int recv_socket_size = 0;  ///< bytes (the receiver's SO_RCVBUF)
  int send_socket_size = 0;  ///< bytes (the sender's SO_SNDBUF)
  int send_size = 0;         ///< bytes per send (netperf -m)
  double elapsed = 0;        ///< s
  double throughput = 0;     ///< 10^6 bits/s
};

/// One netperf block: the header, and the result line unless the iteration
/// failed (netperf prints only the header when a test fails; parsers treat
/// a missing result line as a failed run).
struct NetperfBlock {
  bool stream = false;  ///< TCP_STREAM ("MIGRATED TCP STREAM TEST") instead of TCP_SENDFILE
  bool ipv6 = true;     ///< AF_INET6 ::1 (netperf -6) or AF_INET 127.0.0.1
  std::optional<NetperfResult> result;
};

/// The text of one block. Header lines keep netperf's trailing blanks; the
/// result line is printf "%6d %6d %6d    %-6.2f   %7.2f   " followed by '\n'.
std::string render_netperf_block(const NetperfBlock& block);

/// The blocks of every tcp_sendfile/tcp_stream run of `run_ids`, iteration
/// by iteration, client by client, from the stored counters
/// (client<i>.recv_socket_size, .send_socket_size, .elapsed, .throughput,
/// send_size) and the `family` parameter. Runs of other workloads, and runs
/// without iterations (skipped), produce nothing; their ids are appended to
/// `not_rendered` when given.
std::string render_netperf(const ResultsStore& store, const std::vector<std::int64_t>& run_ids,
                           std::vector<std::int64_t>* not_rendered = nullptr);

}  // namespace nightjar
