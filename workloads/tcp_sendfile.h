// tcp_sendfile and tcp_stream: netperf's TCP_SENDFILE and TCP_STREAM over
// loopback, reimplemented from docs/reference.md "netperf TCP_SENDFILE" (no netperf
// code). N sender processes, released together by a start barrier, each
// stream to a receiver run by nightjar for `duration`; throughput is
// bytes received × 8 / 1e6 / elapsed per client, as netperf reports it.
// See docs/workloads.md "tcp_sendfile" for parameters, metrics and cgroup
// placement. The workloads themselves are declared and registered in
// workloads/tcp_sendfile.cpp; this header declares the pure functions of the
// file that tests/unit/test_tcp_sendfile.cpp checks.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "results/model/iteration.h"
#include "results/model/netperf.h"

namespace nightjar {

namespace tcp {

/// netperf's ring width: SO_SNDBUF / send_size + 1, at least 2
/// (16384 / 10240 + 1 = 2).
std::uint64_t send_width(std::uint64_t sndbuf, std::uint64_t send_size);

/// Service demand in microseconds of CPU per KB (1024 bytes) moved, netperf's
/// formula: util% × 10000 / (KB/s) × ncpus, i.e. CPU-seconds per second ×
/// 1e6 / KB per second. `util_pct` is the whole machine's busy percentage
/// (0..100) over `seconds`, in which `bytes` were received. 0 when nothing moved.
double service_demand_us_per_kb(double util_pct, unsigned cpus, double bytes, double seconds);

/// The names of the counters summarize() stores and netperf_blocks() reads
/// back: per client (client_counter()) and per iteration. One spelling for
/// both, so that a renamed counter renames what `run --format netperf`
/// reads (tests/unit/test_netperf_format.cpp stores them by their literal
/// names and fails when they change).
namespace counter {
inline constexpr std::string_view bytes_sent = "bytes_sent";
inline constexpr std::string_view bytes_received = "bytes_received";
inline constexpr std::string_view elapsed = "elapsed";                    ///< s
inline constexpr std::string_view send_socket_size = "send_socket_size";  ///< bytes
inline constexpr std::string_view recv_socket_size = "recv_socket_size";  ///< bytes
inline constexpr std::string_view recv_size = "recv_size";                ///< bytes
inline constexpr std::string_view throughput = "throughput";              ///< Mbps
inline constexpr std::string_view send_size = "send_size";            ///< bytes; one per iteration
inline constexpr std::string_view window_elapsed = "window_elapsed";  ///< s; one per iteration
}  // namespace counter

/// Client `i`'s counter `name`: "client0.throughput".
std::string client_counter(std::size_t i, std::string_view name);

/// What one client measured in one iteration.
struct ClientFigures {
  std::uint64_t bytes_sent = 0;      ///< counted by the sender (sendfile/send return values)
  std::uint64_t bytes_received = 0;  ///< counted by the receiver (recv return values)
  double elapsed = 0;                ///< s, start barrier -> receiver's FIN seen by the sender
  int send_socket_size = 0;          ///< SO_SNDBUF of the sender's socket, bytes
  int recv_socket_size = 0;          ///< SO_RCVBUF of the receiver's socket, bytes
  std::uint64_t recv_size = 0;       ///< bytes asked per recv() call
};

/// How far a client's own window (ClientFigures::elapsed) may be from the
/// test window (`duration`) before its sample is invalid: the larger of
/// kWindowToleranceSec and kWindowTolerance × duration. A sender's window is
/// `duration` plus the drain of its last sends and the FIN exchange (a few
/// ms on loopback; tens of ms on a loaded machine): a window much longer
/// means the sender was stopped or starved while the others ran, so the
/// clients were not concurrent (docs/workloads.md "Invalid samples").
constexpr double kWindowToleranceSec = 0.25;
constexpr double kWindowTolerance = 0.05;

/// The iteration result of per-client figures (docs/workloads.md):
/// metrics throughput (mean per client), throughput_total (sum),
/// throughput_min, throughput_max (Mbps: bytes_received × 8 / 1e6 / elapsed),
/// and when `cpu_util_pct` is given cpu_util and service_demand (over all
/// clients' bytes in `window_sec`; not given when no byte moved: a service
/// demand of nothing is no figure); counters client<i>.bytes_sent,
/// client<i>.bytes_received, client<i>.elapsed, client<i>.send_socket_size,
/// client<i>.recv_socket_size, client<i>.recv_size, client<i>.throughput (Mbps),
/// send_size, window_elapsed.
/// `failure` is set when a client's sender and receiver counts disagree or
/// a client's elapsed time is not positive. `invalid` is set, naming each
/// client, when a client moved 0 bytes or when its window differs from
/// `duration_sec` (the test window asked for) by more than the tolerance
/// above.
IterationResult summarize(const std::vector<ClientFigures>& clients, std::uint64_t send_size,
                          std::optional<double> cpu_util_pct, double window_sec, unsigned cpus,
                          double duration_sec);

/// Why a pass of `clients` is not a measurement, or nullopt: clients that
/// moved 0 bytes, clients whose window differs from `duration_sec` by more
/// than max(kWindowToleranceSec, kWindowTolerance × duration_sec). Names
/// every such client and both windows.
std::optional<std::string> invalid_pass(const std::vector<ClientFigures>& clients,
                                        double duration_sec);

/// netperf's blocks of one stored iteration of a tcp_sendfile (`stream`
/// false: "TCP SENDFILE TEST") or tcp_stream run: one per client (parameter
/// `clients`, at least 1), AF_INET when parameter `family` is ipv4 (else
/// AF_INET6), each with a result line when the iteration is ok and holds
/// the client's throughput and elapsed counters (sizes missing read 0).
/// The workloads' Workload::netperf_output().
std::vector<NetperfBlock> netperf_blocks(bool stream, const NetperfIteration& iteration);

/// Why a TCP socket cannot be bound to the IPv6 loopback (::1) here, or
/// nullopt when it can.
std::optional<std::string> ipv6_loopback_unavailable();

}  // namespace tcp
}  // namespace nightjar
