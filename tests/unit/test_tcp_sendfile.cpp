// Unit under test: the tcp_sendfile and tcp_stream workloads
// (workloads/tcp_sendfile.cpp): netperf's width and service-demand formulas,
// the per-iteration summary, parameter validation, and short real loopback
// passes — byte counts agree, bind failures are environment errors, and an
// interrupt leaves no child process or thread behind.
#include "workloads/tcp_sendfile.h"
#include "workloads/workload.h"

#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "results/model/exit_codes.h"
#include "test_support.h"

namespace nightjar {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const Workload& workload(const char* name) {
  const Workload* w = find_workload(name);
  if (!w) throw std::runtime_error(std::string("not registered: ") + name);
  return *w;
}

MachineFacts this_machine() {
  MachineFacts m;
  long cpus = ::sysconf(_SC_NPROCESSORS_ONLN);
  m.cpus = cpus > 0 ? static_cast<unsigned>(cpus) : 1;
  m.mem_total_bytes = 1ULL << 33;
  return m;
}

/// A cell of `w` with its defaults and `overrides` (name -> text), parsed as
/// job input is.
Cell make_cell(const Workload& w, const std::map<std::string, std::string>& overrides) {
  Cell c;
  c.workload = std::string(w.name());
  for (const auto& d : w.params()) {
    auto it = overrides.find(d.name);
    c.params[d.name] =
        parse_param(d, it != overrides.end() ? it->second : d.default_value, this_machine());
  }
  return c;
}

/// The ParamError field of parsing `text` for parameter `name`, or "" if it parses.
std::string param_error(const char* name, const std::string& text) {
  for (const auto& d : workload("tcp_sendfile").params())
    if (d.name == name) {
      try {
        parse_param(d, text, this_machine());
        return "";
      } catch (const ParamError& e) {
        return e.field + ": " + e.message;
      }
    }
  return "no such parameter";
}

std::size_t thread_count() {
  std::size_t n = 0;
  if (DIR* d = ::opendir("/proc/self/task")) {
    while (dirent* e = ::readdir(d))
      if (e->d_name[0] != '.') ++n;
    ::closedir(d);
  }
  return n;
}

}  // namespace

TEST(TcpFormulas, NetperfWidth) {
  EXPECT_EQ(tcp::send_width(16384, 10240), 2u);  // the reference's example
  EXPECT_EQ(tcp::send_width(16384, 4096), 5u);
  EXPECT_EQ(tcp::send_width(16384, 1 << 20), 2u);  // at least 2
  EXPECT_EQ(tcp::send_width(16384, 1), 16385u);
}

TEST(TcpFormulas, ServiceDemandIsNetperfs) {
  // 50% of 2 CPUs busy while 1024 MB/s moved: 1 CPU-second per second over
  // 1,048,576 KB/s = 0.953674 us per KB; netperf: 50 × 10000 / 1048576 × 2.
  double sd = tcp::service_demand_us_per_kb(50, 2, 1024.0 * 1024 * 1024, 1.0);
  EXPECT_NEAR(sd, 50.0 * 10000 / 1048576 * 2, 1e-12);
  EXPECT_NEAR(sd, 0.95367431640625, 1e-12);
  EXPECT_EQ(tcp::service_demand_us_per_kb(50, 2, 0, 1.0), 0);
}

TEST(TcpSummary, MeanSumMinMaxAndCounters) {
  std::vector<tcp::ClientFigures> c(2);
  c[0] = {1'000'000'000, 1'000'000'000, 2.0, 16384, 131072, 131072};  // 4000 Mbps
  c[1] = {500'000'000, 500'000'000, 2.0, 16384, 131072, 131072};      // 2000 Mbps
  IterationResult r = tcp::summarize(c, 10240, 80.0, 2.0, 2, 2.0);
  ASSERT_FALSE(r.failure);
  EXPECT_DOUBLE_EQ(r.metrics.at("throughput"), 3000);
  EXPECT_DOUBLE_EQ(r.metrics.at("throughput_total"), 6000);
  EXPECT_DOUBLE_EQ(r.metrics.at("throughput_min"), 2000);
  EXPECT_DOUBLE_EQ(r.metrics.at("throughput_max"), 4000);
  EXPECT_DOUBLE_EQ(r.metrics.at("cpu_util"), 80);
  EXPECT_NEAR(r.metrics.at("service_demand"), tcp::service_demand_us_per_kb(80, 2, 1.5e9, 2.0),
              1e-12);
  EXPECT_EQ(r.counters.at("client1.bytes_sent"), 500'000'000);
  EXPECT_EQ(r.counters.at("client1.bytes_received"), 500'000'000);
  EXPECT_EQ(r.counters.at("client0.throughput"), 4000);
  EXPECT_EQ(r.counters.at("client0.recv_socket_size"), 131072);
  EXPECT_EQ(r.counters.at("send_size"), 10240);
  IterationResult no_cpu = tcp::summarize(c, 10240, std::nullopt, 2.0, 2, 2.0);
  EXPECT_FALSE(no_cpu.metrics.count("cpu_util"));
  EXPECT_FALSE(no_cpu.metrics.count("service_demand"));
}

// `run --format netperf` asks the workload (Workload::netperf_output): its
// blocks read back the counters summarize() stores, by their names; a
// counter renamed on one side only empties the result lines and fails here.
TEST(TcpNetperf, BlocksReadTheCountersSummarizeStores) {
  std::vector<tcp::ClientFigures> c(2);
  c[0] = {1'000'000'000, 1'000'000'000, 2.0, 16384, 131072, 131072};  // 4000 Mbps
  c[1] = {500'000'000, 500'000'000, 2.0, 16384, 87380, 131072};       // 2000 Mbps
  IterationResult r = tcp::summarize(c, 10240, std::nullopt, 2.0, 2, 2.0);
  const std::map<std::string, std::string> params = {{"clients", "2"}, {"family", "ipv4"}};
  auto blocks = tcp::netperf_blocks(true, NetperfIteration{params, true, r.counters});
  ASSERT_EQ(blocks.size(), 2u);
  for (const auto& b : blocks) {
    EXPECT_TRUE(b.stream);
    EXPECT_FALSE(b.ipv6);
    ASSERT_TRUE(b.result);
    EXPECT_EQ(b.result->send_size, 10240);
    EXPECT_EQ(b.result->send_socket_size, 16384);
    EXPECT_DOUBLE_EQ(b.result->elapsed, 2.0);
  }
  EXPECT_DOUBLE_EQ(blocks[0].result->throughput, 4000);
  EXPECT_DOUBLE_EQ(blocks[1].result->throughput, 2000);
  EXPECT_EQ(blocks[0].result->recv_socket_size, 131072);
  EXPECT_EQ(blocks[1].result->recv_socket_size, 87380);
  // A failed iteration: headers only.
  blocks = tcp::netperf_blocks(false, NetperfIteration{params, false, r.counters});
  ASSERT_EQ(blocks.size(), 2u);
  EXPECT_FALSE(blocks[0].result);
  // The hook is the workloads' declared netperf output; pft has none.
  for (const char* name : {"tcp_sendfile", "tcp_stream"}) {
    const WorkloadDeclaration* d = workload_catalog().find(name);
    ASSERT_NE(d, nullptr) << name;
    ASSERT_TRUE(d->netperf) << name;
    EXPECT_EQ(d->netperf(NetperfIteration{params, true, r.counters}).size(), 2u) << name;
  }
  EXPECT_FALSE(workload_catalog().find("pft")->netperf);
  EXPECT_EQ(&WorkloadCatalog::linked(), &workload_catalog());
}

TEST(TcpSummary, DisagreeingByteCountsFailTheSample) {
  std::vector<tcp::ClientFigures> c(1);
  c[0] = {1000, 999, 1.0, 16384, 131072, 131072};
  IterationResult r = tcp::summarize(c, 10240, std::nullopt, 1.0, 2, 1.0);
  ASSERT_TRUE(r.failure);
  EXPECT_NE(r.failure->find("client 0"), std::string::npos) << *r.failure;
  EXPECT_NE(r.failure->find("1000 bytes sent"), std::string::npos) << *r.failure;
  EXPECT_TRUE(r.metrics.empty());
  EXPECT_EQ(r.counters.at("client0.bytes_received"), 999);  // kept for the record
}

TEST(TcpSummary, TwoNormalClientsAreValid) {
  std::vector<tcp::ClientFigures> c(2);
  c[0] = {1'000'000, 1'000'000, 2.004, 16384, 131072, 131072};
  c[1] = {1'000'000, 1'000'000, 2.1, 16384, 131072, 131072};  // within 0.25 s
  IterationResult r = tcp::summarize(c, 10240, 50.0, 2.1, 2, 2.0);
  EXPECT_FALSE(r.failure);
  EXPECT_FALSE(r.invalid) << *r.invalid;
}

// The strace inject=sendfile:retval=0 case of issue 12: both senders' sendfile()
// returned 0 for the whole window, so both agree on 0 bytes.
TEST(TcpSummary, ClientsThatMovedNothingMakeTheSampleInvalid) {
  std::vector<tcp::ClientFigures> c(2);
  c[0] = {0, 0, 2.001, 16384, 131072, 131072};
  c[1] = {0, 0, 2.002, 16384, 131072, 131072};
  IterationResult r = tcp::summarize(c, 10240, 40.0, 2.002, 2, 2.0);
  EXPECT_FALSE(r.failure);
  ASSERT_TRUE(r.invalid);
  EXPECT_THAT(*r.invalid, HasSubstr("clients 0, 1 moved 0 bytes"));
  // The values are kept (stored invalid), but no service demand of nothing.
  EXPECT_EQ(r.metrics.at("throughput"), 0);
  EXPECT_EQ(r.metrics.at("cpu_util"), 40);
  EXPECT_FALSE(r.metrics.count("service_demand"));

  // One idle client of two: still invalid, naming that client only; the
  // service demand of the other's bytes is a figure (stored, marked invalid).
  c[0] = {1'000'000, 1'000'000, 2.001, 16384, 131072, 131072};
  r = tcp::summarize(c, 10240, 40.0, 2.002, 2, 2.0);
  ASSERT_TRUE(r.invalid);
  EXPECT_THAT(*r.invalid, HasSubstr("client 1 moved 0 bytes"));
  EXPECT_THAT(*r.invalid, Not(HasSubstr("client 0")));
  EXPECT_TRUE(r.metrics.count("service_demand"));
}

// The SIGSTOP case: a sender stopped 3 s in a 2 s test has a window of ~5 s.
TEST(TcpSummary, AStretchedClientWindowMakesTheSampleInvalid) {
  std::vector<tcp::ClientFigures> c(2);
  c[0] = {4'000'000'000, 4'000'000'000, 2.003, 16384, 131072, 131072};
  c[1] = {2'000'000'000, 2'000'000'000, 5.012, 16384, 131072, 131072};
  IterationResult r = tcp::summarize(c, 10240, 60.0, 5.012, 2, 2.0);
  EXPECT_FALSE(r.failure);
  ASSERT_TRUE(r.invalid);
  EXPECT_THAT(*r.invalid, HasSubstr("client 1's window is 5.012 s"));
  EXPECT_THAT(*r.invalid, HasSubstr("the test window is 2.000 s"));
  EXPECT_THAT(*r.invalid, HasSubstr("not run concurrently"));
  EXPECT_THAT(*r.invalid, Not(HasSubstr("client 0")));
  // The tolerance: max(0.25 s, 5%): 3 s of a 60 s test is still within it.
  EXPECT_FALSE(tcp::invalid_pass({{1, 1, 62.9, 0, 0, 0}}, 60.0));
  EXPECT_TRUE(tcp::invalid_pass({{1, 1, 63.1, 0, 0, 0}}, 60.0));
  EXPECT_FALSE(tcp::invalid_pass({{1, 1, 0.349, 0, 0, 0}}, 0.1));
  EXPECT_TRUE(tcp::invalid_pass({{1, 1, 0.351, 0, 0, 0}}, 0.1));
}

TEST(TcpParams, BadValuesAreParamErrors) {
  EXPECT_NE(param_error("clients", "0").find("clients: 0 is below the minimum"), std::string::npos);
  EXPECT_NE(param_error("send_size", "0").find("send_size: 0 is below the minimum"),
            std::string::npos);
  EXPECT_NE(param_error("send_size", "2G").find("send_size: 2G is above the maximum 1G"),
            std::string::npos);
  EXPECT_NE(param_error("duration", "0").find("duration"), std::string::npos);
  EXPECT_NE(param_error("family", "ipx").find("family"), std::string::npos);
  EXPECT_NE(param_error("port", "70000").find("port"), std::string::npos);
  EXPECT_EQ(param_error("send_size", "10K"), "");
  EXPECT_EQ(param_error("send_size", "1G"), "");
  EXPECT_EQ(param_error("family", "ipv4"), "");
}

TEST(TcpParams, ValidateRejectsWhatBoundsCannotSee) {
  const Workload& w = workload("tcp_sendfile");
  Cell c = make_cell(w, {});
  EXPECT_NO_THROW(w.validate(c, this_machine()));
  Cell zero = c;
  zero.params["clients"] = {"0", 0};
  EXPECT_THROW(w.validate(zero, this_machine()), ParamError);
  Cell nodur = c;
  nodur.params["duration"] = {"0s", 0};
  EXPECT_THROW(w.validate(nodur, this_machine()), ParamError);
  Cell fam = c;
  fam.params["family"] = {"ipx", 0};
  try {
    w.validate(fam, this_machine());
    FAIL();
  } catch (const ParamError& e) {
    EXPECT_EQ(e.field, "family");
  }
}

TEST(TcpParams, DefaultsMirrorNetperf) {
  Cell c = make_cell(workload("tcp_sendfile"), {});
  EXPECT_EQ(c.bytes("send_size"), 10240u);
  EXPECT_EQ(c.seconds("duration"), 60);
  EXPECT_EQ(c.text("family"), "ipv6");
  EXPECT_EQ(c.count("port"), 0);
}

// ---- real passes over loopback --------------------------------------------------
class TcpPass : public ::testing::TestWithParam<std::tuple<const char*, const char*>> {};

TEST_P(TcpPass, BytesAgreeAndNothingIsLeftBehind) {
  auto [name, family] = GetParam();
  const Workload& w = workload(name);
  Cell cell = make_cell(w, {{"clients", "2"}, {"duration", "300ms"}, {"family", family}});
  if (auto why = w.unmet_requirement(cell)) GTEST_SKIP() << *why;
  const std::size_t threads_before = thread_count();
  RunContext ctx;
  ctx.machine = this_machine();
  std::map<std::string, std::string> recorded;
  ctx.record = [&](const std::string& k, const std::string& v) { recorded[k] = v; };
  {
    auto session = w.start(cell, ctx);
    for (int i = 0; i < 2; ++i) {
      IterationResult r = session->measure();
      ASSERT_FALSE(r.failure) << *r.failure;
      EXPECT_GT(r.metrics.at("throughput"), 10);  // Mbps; thousands here
      EXPECT_NEAR(r.metrics.at("throughput_total"), 2 * r.metrics.at("throughput"), 1e-6);
      for (int c = 0; c < 2; ++c) {
        const std::string p = "client" + std::to_string(c) + ".";
        EXPECT_EQ(r.counters.at(p + "bytes_sent"), r.counters.at(p + "bytes_received"));
        EXPECT_GT(r.counters.at(p + "bytes_received"), 0);
        EXPECT_GE(r.counters.at(p + "elapsed"), 0.29);
        EXPECT_GT(r.counters.at(p + "send_socket_size"), 0);
        EXPECT_GT(r.counters.at(p + "recv_socket_size"), 0);
      }
      EXPECT_TRUE(r.metrics.count("cpu_util"));
      EXPECT_GT(r.metrics.at("service_demand"), 0);
    }
  }
  EXPECT_TRUE(test::children_of(getpid()).empty());
  EXPECT_EQ(thread_count(), threads_before);
  EXPECT_TRUE(recorded.count(std::string(name) + ".receiver"));
}

INSTANTIATE_TEST_SUITE_P(Modes, TcpPass,
                         ::testing::Values(std::make_tuple("tcp_sendfile", "ipv6"),
                                           std::make_tuple("tcp_sendfile", "ipv4"),
                                           std::make_tuple("tcp_stream", "ipv6")));

TEST(TcpSession, PortInUseIsAnEnvironmentError) {
  // Occupy a loopback port, then ask the workload to listen there.
  int s = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(s, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::listen(s, 1), 0);
  socklen_t len = sizeof a;
  ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len);
  const int port = ntohs(a.sin_port);
  const Workload& w = workload("tcp_sendfile");
  Cell cell =
      make_cell(w, {{"family", "ipv4"}, {"port", std::to_string(port)}, {"duration", "1s"}});
  RunContext ctx;
  ctx.machine = this_machine();
  try {
    auto session = w.start(cell, ctx);
    FAIL() << "expected EnvironmentError";
  } catch (const EnvironmentError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("cannot bind the receiver to 127.0.0.1 port " + std::to_string(port)),
              std::string::npos)
        << m;
    EXPECT_NE(m.find("write port: 0"), std::string::npos) << m;
  }
  ::close(s);
}

TEST(TcpSession, InterruptStopsPromptlyAndReapsEverything) {
  const Workload& w = workload("tcp_sendfile");
  Cell cell = make_cell(w, {{"clients", "3"}, {"duration", "30s"}, {"family", "ipv4"}});
  const std::size_t threads_before = thread_count();
  std::atomic<bool> stop{false};
  RunContext ctx;
  ctx.machine = this_machine();
  ctx.interrupted = [&] { return stop.load(); };
  auto session = w.start(cell, ctx);
  std::thread trigger([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    stop = true;
  });
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_THROW(session->measure(), Interrupted);
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  trigger.join();
  EXPECT_LT(took, 3.0);
  EXPECT_TRUE(test::children_of(getpid()).empty());
  EXPECT_EQ(thread_count(), threads_before);
  session.reset();
}

}  // namespace nightjar
