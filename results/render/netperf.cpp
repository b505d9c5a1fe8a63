#include "results/render/netperf.h"

#include <fmt/format.h>
#include <fmt/printf.h>

#include <map>

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

std::string render_netperf(const ResultsStore& store, const std::vector<std::int64_t>& run_ids,
                           std::vector<std::int64_t>* not_rendered) {
  std::string out;
  for (auto id : run_ids) {
    RunFilter f;
    f.run_id = id;
    auto rows = store.runs(f);
    const bool ours = !rows.empty() && (rows.front().workload == "tcp_sendfile" ||
                                        rows.front().workload == "tcp_stream");
    if (!ours) {
      if (not_rendered) not_rendered->push_back(id);
      continue;
    }
    const bool stream = rows.front().workload == "tcp_stream";
    auto params = store.run_params(id);
    const bool ipv6 = !params.count("family") || params["family"] != "ipv4";
    int clients = 1;
    if (params.count("clients")) clients = std::max(1, std::atoi(params["clients"].c_str()));

    // iteration -> counter name -> value
    std::map<int, std::map<std::string, double>> counters;
    for (const auto& m : store.monitors(id)) counters[m.iteration][m.metric] = m.value;
    bool any = false;
    for (const IterationRow& row : store.iterations(id)) {
      any = true;
      const int it = row.iteration;
      const bool ok = row.status == IterationStatus::ok;
      auto& c = counters[it];
      auto get = [&](const std::string& k) {
        auto p = c.find(k);
        return p == c.end() ? std::optional<double>() : std::optional<double>(p->second);
      };
      for (int i = 0; i < clients; ++i) {
        NetperfBlock b;
        b.stream = stream;
        b.ipv6 = ipv6;
        const std::string p = fmt::format("client{}.", i);
        auto tp = get(p + "throughput");
        auto el = get(p + "elapsed");
        if (ok && tp && el) {
          NetperfResult r;
          r.recv_socket_size = static_cast<int>(get(p + "recv_socket_size").value_or(0));
          r.send_socket_size = static_cast<int>(get(p + "send_socket_size").value_or(0));
          r.send_size = static_cast<int>(get("send_size").value_or(0));
          r.elapsed = *el;
          r.throughput = *tp;
          b.result = r;
        }
        out += render_netperf_block(b);
      }
    }
    if (!any && not_rendered) not_rendered->push_back(id);
  }
  return out;
}

}  // namespace nightjar
