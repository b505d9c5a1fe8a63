// What fingerprinting adds to a run (issue 37, docs/environment.md):
//   BM_SystemContextProbe   SystemContext::probe(): every context fact,
//                           the fingerprint facts included (what the runner
//                           reads per run)
//   BM_FingerprintFacts     add_fingerprint_facts() alone: kernel compiler,
//                           microcode, CPU flags hash, NUMA nodes,
//                           vulnerabilities, sysctls, hypervisor, zswap
//   BM_KernelIdentity       probe_kernel_identity(): uname, cmdline and the
//                           kernel config (decompressing /proc/config.gz)
//   BM_ReadLoadavg          the anchor: one read of /proc/loadavg, the
//                           cheapest fact (read_small_file)
// After the table: per repeat, the ratio fingerprint facts / whole probe and
// fingerprint facts / anchor (median and min-max of the repeats), and the
// bytes the fingerprint adds to the database: per run (the key and value
// text of its context facts) and per distinct config (the config text,
// stored once per hash in table kernel_config).
//
//   fingerprint_bench [--repeats N] [google benchmark flags]
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "workloads/sys/fingerprint.h"
#include "workloads/sys/fs.h"
#include "workloads/sys/probe.h"

namespace {

using namespace nightjar;

void BM_SystemContextProbe(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(SystemContext::probe());
}
BENCHMARK(BM_SystemContextProbe);

void BM_FingerprintFacts(benchmark::State& state) {
  for (auto _ : state) {
    std::map<std::string, std::string> facts;
    add_fingerprint_facts(facts, "", "rw");
    benchmark::DoNotOptimize(facts);
  }
}
BENCHMARK(BM_FingerprintFacts);

void BM_KernelIdentity(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(probe_kernel_identity());
}
BENCHMARK(BM_KernelIdentity);

void BM_ReadLoadavg(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(read_small_file("/proc/loadavg"));
}
BENCHMARK(BM_ReadLoadavg);

// Mean microseconds of `n` calls of f.
template <typename F>
double micros(F&& f, int n = 200) {
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) f();
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() /
         n;
}

std::string spread(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  char buf[96];
  std::snprintf(buf, sizeof buf, "%.2f (%.2f-%.2f)", v[v.size() / 2], v.front(), v.back());
  return buf;
}

void print_ratios(int repeats) {
  std::vector<double> to_probe, to_anchor, fingerprint_us;
  for (int r = 0; r < repeats; ++r) {
    const double fp = micros([] {
      std::map<std::string, std::string> f;
      add_fingerprint_facts(f, "", "rw");
      benchmark::DoNotOptimize(f);
    });
    const double probe = micros([] { benchmark::DoNotOptimize(SystemContext::probe()); });
    const double anchor =
        micros([] { benchmark::DoNotOptimize(read_small_file("/proc/loadavg")); }, 2000);
    fingerprint_us.push_back(fp);
    to_probe.push_back(fp / probe);
    to_anchor.push_back(fp / anchor);
  }
  std::map<std::string, std::string> facts;
  add_fingerprint_facts(facts, "", "rw");
  std::size_t bytes = 0;
  for (const auto& [k, v] : facts) bytes += k.size() + v.size();
  const KernelIdentity k = probe_kernel_identity();
  std::printf(
      "\nfingerprint facts (%d repeats; median (min-max)):\n"
      "  time        : %s us per run\n"
      "  ratio       : %s of SystemContext::probe, %s x one /proc/loadavg read (anchor)\n"
      "  size per run: %zu facts, %zu bytes of key and value text (run_context rows)\n"
      "  per config  : %zu bytes of config text (%s), once per distinct config hash\n",
      repeats, spread(fingerprint_us).c_str(), spread(to_probe).c_str(), spread(to_anchor).c_str(),
      facts.size(), bytes, k.config_text.size(),
      k.config_source.empty() ? "no config readable" : k.config_source.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  int repeats = 7;
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--repeats") == 0 && i + 1 < argc)
      repeats = std::max(1, std::atoi(argv[++i]));
    else
      args.push_back(argv[i]);
  }
  int n = static_cast<int>(args.size());
  benchmark::Initialize(&n, args.data());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  print_ratios(repeats);
  return 0;
}
