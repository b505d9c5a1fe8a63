#include "results/render/netperf.h"

#include <fmt/format.h>
#include <fmt/printf.h>

namespace nightjar {

std::string render_netperf_block(const NetperfBlock& b) {
  std::string out = b.stream ? "MIGRATED TCP STREAM TEST" : "TCP SENDFILE TEST";
  out += b.ipv6
             ? " from ::0 (::) port 0 AF_INET6 to ::1 (::1) port 0 AF_INET6\n"
             : " from 0.0.0.0 (0.0.0.0) port 0 AF_INET to 127.0.0.1 (127.0.0.1) port 0 AF_INET\n";
  // The header exactly as netperf prints it, trailing blanks included.
  out +=
      "Recv   Send    Send                          \n"
      "Socket Socket  Message  Elapsed              \n"
      "Size   Size    Size     Time     Throughput  \n"
      "bytes  bytes   bytes    secs.    10^6bits/sec  \n"
      "\n";
  if (b.result) {
    const NetperfResult& r = *b.result;
    out += fmt::sprintf("%6d %6d %6d    %-6.2f   %7.2f   \n", r.recv_socket_size,
                        r.send_socket_size, r.send_size, r.elapsed, r.throughput);
  }
  return out;
}

std::string render_netperf(const std::vector<NetperfRun>& runs,
                           std::vector<std::int64_t>* not_rendered) {
  std::string out;
  for (const NetperfRun& run : runs) {
    if (run.blocks.empty() && not_rendered) not_rendered->push_back(run.id);
    for (const NetperfBlock& b : run.blocks) out += render_netperf_block(b);
  }
  return out;
}

std::string render_netperf(const RunReader& store, const std::vector<std::int64_t>& run_ids,
                           std::vector<std::int64_t>* not_rendered) {
  return render_netperf(netperf_runs(store, run_ids, WorkloadCatalog::linked()), not_rendered);
}

}  // namespace nightjar
