// Google Benchmark microbenchmarks of nightjar itself (docs/data.md "Micro
// benchmarks"): the statistics module, committing samples to SQLite, and the
// tidy CSV export/import. Its JSON output is a Google Benchmark report like
// any other, so nightjar can store and compare its own speed:
//
//   build/bench/micro_bench --benchmark_repetitions=5 --benchmark_out=micro.json
//       --benchmark_out_format=json    (one command line)
//   nightjar import --format gbench micro.json --variant "$(git rev-parse --short HEAD)"
//   nightjar compare OLD NEW --workload gbench
//
// Benchmarks (items_per_second counts samples, bytes_per_second CSV bytes):
//   BM_Summarize/N       stats::summarize of N lognormal samples (CV 5%)
//   BM_WelchLogTest/N    stats::welch_log_test, N samples per side
//   BM_BcaRatioCi/N      stats::bca_ratio_ci (Hmean, 2000 resamples), N per side
//   BM_AddIteration      ResultsStore::add_iteration: one iteration of 4
//                        metrics and 8 monitor deltas, one transaction each
//   BM_CsvExport/R       write_samples_csv of R runs x 10 iterations x 2 metrics
//   BM_CsvParse/R        parse_samples_csv of that CSV (read + validate)
//   BM_CsvImport/R       import_samples_csv of it into a new database
//
// Databases live in a temporary directory removed at exit.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "results/io/csv.h"
#include "results/stats/bootstrap.h"
#include "results/stats/descriptive.h"
#include "results/stats/tests.h"
#include "results/store/store.h"
#include "workloads/sys/probe.h"
#include "workloads/workload.h"

namespace {

using namespace nightjar;

// A temporary directory for the benchmark databases, removed at exit.
class Scratch {
 public:
  Scratch() {
    std::string tmpl =
        (std::filesystem::temp_directory_path() / "nightjar-micro-bench-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) std::abort();
    path_ = tmpl;
  }
  ~Scratch() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

Scratch& scratch() {
  static Scratch s;
  return s;
}

// Removes a database and its WAL files.
void remove_db(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
}

// n lognormal samples with mean ~100 and CoeffVar ~5%, from a fixed seed.
std::vector<double> lognormal(std::size_t n, std::uint64_t seed, double scale = 1.0) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> z(0.0, 0.05);
  std::vector<double> v(n);
  for (auto& x : v) x = 100.0 * scale * std::exp(z(gen));
  return v;
}

void BM_Summarize(benchmark::State& state) {
  const auto samples = lognormal(static_cast<std::size_t>(state.range(0)), 1);
  for (auto _ : state) {
    stats::Summary s = stats::summarize(samples);
    benchmark::DoNotOptimize(s);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_Summarize)->Arg(10)->Arg(1000)->Arg(100000);

void BM_WelchLogTest(benchmark::State& state) {
  const auto base = lognormal(static_cast<std::size_t>(state.range(0)), 1);
  const auto now = lognormal(static_cast<std::size_t>(state.range(0)), 2, 1.01);
  for (auto _ : state) {
    auto r = stats::welch_log_test(base, now);
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0) * 2);
}
BENCHMARK(BM_WelchLogTest)->Arg(10)->Arg(1000);

void BM_BcaRatioCi(benchmark::State& state) {
  const auto base = lognormal(static_cast<std::size_t>(state.range(0)), 1);
  const auto now = lognormal(static_cast<std::size_t>(state.range(0)), 2, 1.01);
  for (auto _ : state) {
    auto r = stats::bca_ratio_ci(base, now, MeanKind::harmonic, 42);
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0) * 2);
}
BENCHMARK(BM_BcaRatioCi)->Arg(10)->Arg(100)->Unit(benchmark::kMicrosecond);

void BM_AddIteration(benchmark::State& state) {
  const std::string path = scratch().file("add_iteration.db");
  remove_db(path);
  ResultsStore store(path);
  NewRun run;
  run.job = "micro";
  run.cell.workload = "fake";
  run.variant = "bench";
  run.iterations = 1;
  const std::int64_t id = store.begin_run(run);
  IterationResult result;
  result.metrics = {{"throughput", 100.5}, {"latency", 9.95}, {"faults", 1e6}, {"cpu", 0.5}};
  std::map<std::string, double> monitors;
  for (int i = 0; i < 8; ++i) monitors["vmstat.counter" + std::to_string(i)] = 1000 + i;
  int iteration = 0;
  for (auto _ : state) store.add_iteration(id, ++iteration, result, monitors, 0.001);
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(result.metrics.size()));
}
BENCHMARK(BM_AddIteration)->Unit(benchmark::kMicrosecond);

// A database of `runs` runs of 10 iterations x 2 metrics (two variants), and
// its CSV export, built once per size.
struct CsvFixture {
  std::string db, csv;
  std::size_t rows = 0;
};

const CsvFixture& csv_fixture(int runs) {
  static std::map<int, CsvFixture> cache;
  auto [it, fresh] = cache.try_emplace(runs);
  if (!fresh) return it->second;
  CsvFixture& f = it->second;
  f.db = scratch().file("export-" + std::to_string(runs) + ".db");
  remove_db(f.db);
  ResultsStore store(f.db);
  {
    ResultsStore::Transaction tx(store);
    store.add_missing_metrics(
        "fake", {{"throughput", "ops/s", Direction::higher_is_better, MeanKind::harmonic, ""},
                 {"latency", "ms", Direction::lower_is_better, MeanKind::arithmetic, ""}});
    std::mt19937_64 gen(7);
    std::normal_distribution<double> z(0.0, 0.02);
    for (int r = 0; r < runs; ++r) {
      ImportedRun run;
      run.job = "fx";
      run.workload = "fake";
      run.variant = r % 2 ? "patched" : "vanilla";
      run.build = "v" + std::to_string(r % 2);
      run.params["seed"] = {std::to_string(r / 2 + 1), static_cast<double>(r / 2 + 1)};
      run.params["value"] = {"100", 100};
      run.kernel.release = "6.1.0-bench";
      run.testbox.hostname = "benchbox";
      run.match_by_name = true;
      run.iterations = 10;
      for (int i = 1; i <= 10; ++i) {
        double x = 100.0 * std::exp(z(gen));
        run.samples.push_back({i, "latency", 1000.0 / x});
        run.samples.push_back({i, "throughput", x});
      }
      store.insert_imported_run(run);
    }
    tx.commit();
  }
  std::ostringstream out;
  f.rows = write_samples_csv(store, select_export_runs(store, {}, "", ""), out).samples;
  f.csv = out.str();
  return f;
}

void BM_CsvExport(benchmark::State& state) {
  const CsvFixture& f = csv_fixture(static_cast<int>(state.range(0)));
  ResultsStore store(f.db);
  const auto ids = select_export_runs(store, {}, "", "");
  for (auto _ : state) {
    std::ostringstream out;
    auto stats = write_samples_csv(store, ids, out);
    benchmark::DoNotOptimize(stats);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(f.rows));
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(f.csv.size()));
}
BENCHMARK(BM_CsvExport)->Arg(100)->Arg(10000)->Unit(benchmark::kMillisecond);

void BM_CsvParse(benchmark::State& state) {
  const CsvFixture& f = csv_fixture(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    std::istringstream in(f.csv);
    SamplesCsv csv = parse_samples_csv(in, "bench.csv", workload_catalog(), probe_machine_facts());
    benchmark::DoNotOptimize(csv.rows);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(f.rows));
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(f.csv.size()));
}
BENCHMARK(BM_CsvParse)->Arg(100)->Arg(10000)->Unit(benchmark::kMillisecond);

void BM_CsvImport(benchmark::State& state) {
  const CsvFixture& f = csv_fixture(static_cast<int>(state.range(0)));
  std::istringstream in(f.csv);
  const SamplesCsv csv =
      parse_samples_csv(in, "bench.csv", workload_catalog(), probe_machine_facts());
  const std::string path = scratch().file("import.db");
  for (auto _ : state) {
    state.PauseTiming();
    remove_db(path);
    auto store = std::make_unique<ResultsStore>(path);
    state.ResumeTiming();
    auto r = import_samples_csv(*store, csv, workload_catalog(), probe_machine_facts());
    benchmark::DoNotOptimize(r.samples);
    state.PauseTiming();
    store.reset();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(f.rows));
}
BENCHMARK(BM_CsvImport)->Arg(100)->Arg(10000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
