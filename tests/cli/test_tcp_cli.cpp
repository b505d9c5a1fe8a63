// Unit under test: the `nightjar` binary running tcp_sendfile — bad job input
// (exit 2 naming file:line and field, database unchanged), a receiver that
// cannot bind (exit 4, run stored failed), `run --format netperf`, and SIGINT
// mid-run (exit 130, no sender left).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <sstream>
#include <thread>

#include "test_support.h"

using namespace nightjar::test;

namespace {

int count(const std::string& db, const std::string& sql) {
  std::string v = query_one(db, sql);
  return v.empty() ? -1 : std::stoi(v);
}

const char* kGoodJob =
    "workload: tcp_sendfile\nparams:\n  clients: 1\n  duration: 300ms\n  family: ipv4\n"
    "iterations: 1\nwarmup: 0\n";

struct TcpBadJob {
  const char* name;
  const char* yaml;
  const char* expect_location;  // ":line:" after the job path
  const char* expect_field;
};

void PrintTo(const TcpBadJob& c, std::ostream* os) {
  *os << c.name;
}

class TcpBadJobFile : public ::testing::TestWithParam<TcpBadJob> {};

TEST_P(TcpBadJobFile, ExitsTwoNamingFileLineFieldAndWritesNothing) {
  const TcpBadJob& c = GetParam();
  TempDir dir;
  std::string db = dir.path() + "/r.db";
  std::string good = dir.write("good.yaml", kGoodJob);
  ASSERT_EQ(run_nightjar({"run", good, "--db", db}).exit_code, 0);
  int runs_before = count(db, "SELECT count(*) FROM run");
  std::string job = dir.write(std::string(c.name) + ".yaml", c.yaml);
  auto r = run_nightjar({"run", job, "--db", db});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(job + c.expect_location), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(c.expect_field), std::string::npos) << r.err;
  EXPECT_EQ(count(db, "SELECT count(*) FROM run"), runs_before);
  EXPECT_EQ(query_one(db, "PRAGMA integrity_check"), "ok");
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, TcpBadJobFile,
    ::testing::Values(
        TcpBadJob{"clients_zero", "workload: tcp_sendfile\nparams:\n  clients: [1, 0]\n",
                  ":3:", "clients"},
        TcpBadJob{"send_size_zero", "workload: tcp_sendfile\nparams:\n  send_size: 0\n",
                  ":3:", "send_size"},
        TcpBadJob{"send_size_above_1G",
                  "workload: tcp_sendfile\nparams:\n  clients: 1\n  send_size: 2G\n",
                  ":4:", "send_size"},
        TcpBadJob{"duration_zero", "workload: tcp_sendfile\nparams:\n  duration: 0\n",
                  ":3:", "duration"},
        TcpBadJob{"family_unknown", "workload: tcp_sendfile\nparams:\n  family: ipx\n",
                  ":3:", "family"},
        TcpBadJob{"port_out_of_range", "workload: tcp_sendfile\nparams:\n  port: 70000\n",
                  ":3:", "port"},
        TcpBadJob{"cgroup_unknown_key",
                  "workload: tcp_sendfile\ncgroup:\n  depth: 3\n  levels: 2\n",
                  ":4:", "cgroup.levels"},
        TcpBadJob{"cgroup_depth", "workload: tcp_sendfile\ncgroup:\n  depth: 12\n",
                  ":3:", "cgroup.depth"},
        TcpBadJob{"cgroup_knob",
                  "workload: tcp_sendfile\ncgroup:\n  depth: 3\n  top:\n    memory.mni: 64M\n",
                  ":5:", "cgroup.top.memory.mni"}),
    [](const auto& info) { return std::string(info.param.name); });

}  // namespace

TEST(TcpCli, ReceiverThatCannotBindIsStoredFailedWithExitFour) {
  int s = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(s, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::listen(s, 1), 0);
  socklen_t len = sizeof a;
  ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len);
  TempDir dir;
  std::string job = dir.write("busy.yaml", kGoodJob);
  std::string db = dir.path() + "/r.db";
  auto r =
      run_nightjar({"run", job, "--db", db, "--set", "port=" + std::to_string(ntohs(a.sin_port))});
  ::close(s);
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_NE(r.err.find("cannot bind the receiver"), std::string::npos) << r.err;
  EXPECT_EQ(query_one(db, "SELECT status FROM run"), "failed");
  EXPECT_NE(query_one(db, "SELECT reason FROM run").find("port is in use"), std::string::npos);
}

TEST(TcpCli, FormatNetperfPrintsOneBlockPerClientAndIteration) {
  TempDir dir;
  std::string job = dir.write("np.yaml", kGoodJob);
  std::string db = dir.path() + "/r.db";
  auto r = run_nightjar(
      {"run", job, "--db", db, "--set", "clients=2", "--iterations", "2", "--format", "netperf"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream in(r.out);
  std::string line;
  int headers = 0, results = 0;
  while (std::getline(in, line)) {
    if (line.rfind("TCP SENDFILE TEST from 0.0.0.0 (0.0.0.0) port 0 AF_INET to 127.0.0.1", 0) == 0)
      ++headers;
    int rs = 0, ss = 0, ms = 0;
    double el = 0, tp = 0;
    if (std::sscanf(line.c_str(), "%d %d %d %lf %lf", &rs, &ss, &ms, &el, &tp) == 5) {
      ++results;
      EXPECT_EQ(ms, 10240) << line;
      EXPECT_GT(tp, 0) << line;
      EXPECT_EQ(line.substr(line.size() - 3), "   ")
          << "'" << line << "'";  // netperf's trailing blanks
    }
  }
  EXPECT_EQ(headers, 4) << r.out;
  EXPECT_EQ(results, 4) << r.out;
  EXPECT_EQ(r.out.find("Hmean"), std::string::npos);  // not the text summary

  auto bad = run_nightjar({"run", job, "--db", db, "--format", "csv"});
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
}

TEST(TcpCli, SigintMidRunLeavesNoSender) {
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  TempDir dir;
  std::string job = dir.write("long.yaml",
                              "workload: tcp_sendfile\nparams:\n  clients: 2\n  duration: 30s\n"
                              "  family: ipv4\niterations: 3\nwarmup: 0\n");
  std::string db = dir.path() + "/r.db";
  pid_t pid = spawn_nightjar({"run", job, "--db", db}, dir.path(), "run");
  for (int i = 0; i < 100 && children_of(pid).size() < 2; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  auto t0 = std::chrono::steady_clock::now();
  kill(pid, SIGINT);
  EXPECT_EQ(wait_exit_code(pid), 130) << read_file(dir.path() + "/run.err");
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 5.0);
  EXPECT_EQ(query_one(db, "SELECT status FROM run"), "aborted");
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_TRUE(children_of(getpid()).empty());
  prctl(PR_SET_CHILD_SUBREAPER, 0);
}
