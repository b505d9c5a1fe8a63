// netperf's result blocks as data: what one `netperf -t TCP_SENDFILE` (or
// TCP_STREAM) instance prints per test, and the hook through which a
// workload says how its stored iterations become such blocks. The workload
// owns its counter and parameter names (its Workload::netperf_output()); the
// results layer finds the hook in the workload's declaration
// (results/model/declarations.h) and prints the blocks it returns
// (results/render/netperf.h). Pure data: no I/O.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

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

/// One stored iteration as a workload's netperf hook reads it.
struct NetperfIteration {
  /// The run's cell parameters: name -> canonical text ("ipv4", "2").
  const std::map<std::string, std::string>& params;
  bool ok = false;  ///< stored with status "ok" (failed and invalid iterations are not)
  /// The iteration's workload counters and monitor deltas, by name.
  const std::map<std::string, double>& counters;
};

/// A workload's netperf-compatible output: the blocks of one stored
/// iteration, in the order netperf instances would print them (one per
/// client). Empty (no target) for a workload without netperf output.
using NetperfOutput = std::function<std::vector<NetperfBlock>(const NetperfIteration&)>;

}  // namespace nightjar
