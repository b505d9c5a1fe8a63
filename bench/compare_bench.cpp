// Benchmark of `nightjar compare` on a large results database: 100 000 runs ×
// 10 samples = 1 000 000 samples (issue 5, check 6; issue 19: goal <= 200 ms
// and <= 2x a bare SQLite scan of the same values).
//
// The database is written through the store's import API in one transaction
// (ResultsStore::Transaction, insert_imported_run): workload `fake`, one
// job, 100 cells (seed=1..100), variants a and b, builds b00..b49, 10 runs of
// every cell per (variant, build), 10 iterations of `throughput` each
// (lognormal, CV 2%; variant b is 1% slower in every 10th cell).
//
// Benchmarks (each times selectors -> loaded sides -> comparison record ->
// mmtests text, everything `nightjar compare` does after opening the store):
//   BM_CompareAllSamples  `compare a b`: each side is 50 000 runs, so every
//                         one of the 1M samples is loaded and summarised
//                         (5 000 pooled samples per cell and side): the worst case;
//   BM_CompareTwoBuilds   `compare build=b00 build=b01`: 2 000 runs (20 000
//                         samples) per side picked out of the 100 000.
// Times are wall clock ("Time") and CPU summed over the process's threads
// ("CPU"): compare loads the sides on one thread each and spreads the per-row
// statistics over the CPUs.
//
// After the Google Benchmark table the binary prints the figures of issue 19,
// from 7 repeats that each time, back to back:
//   - `compare a b` (as above: side queries, comparison, mmtests text);
//   - the bare scan: the sqlite3 C API reading just the `value` column of the
//     same rows (`SELECT s.value FROM run r JOIN sample s ON s.run_id=r.id
//     WHERE r.variant=?`, each side on its own connection and thread, as
//     compare loads its sides), summing the values so nothing is skipped;
//   - `report a b` (the same comparison, then the changelog blocks of every
//     cell and their legend: render_report, as `nightjar report` prints);
// and the ratios compare/bare and report/bare of each repeat: median and min-max of the 7,
// with the load average. The machine is shared and noisy: the ratio of one
// repeat compares two timings taken a few hundred ms apart, so it is steadier
// than either time alone, but a busy neighbour still moves every figure.
//
//   compare_bench [--db PATH] [--repeats N] [--only compare|report|bare|open] [google benchmark
//   flags]
//     --db PATH     reuse/keep the database at PATH (default: a temporary
//                   file, removed at exit)
//     --repeats N   repeats of the issue-19 figures (default 7)
//     --only WHAT   build (or reuse) the database, then run `compare a b`
//                   (WHAT=compare), `report a b` (WHAT=report) or the bare
//                   scan (WHAT=bare) once, or
//                   nothing (WHAT=open), and exit: for counting
//                   instructions, which a busy machine does not change
//                   (`valgrind --tool=callgrind compare_bench --db PATH
//                   --only compare`; the count of --only open, the start and
//                   the opening of the store, is subtracted from the others)
#include <SQLiteCpp/SQLiteCpp.h>
#include <benchmark/benchmark.h>
#include <sqlite3.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "results/compare/comparison.h"
#include "results/render/compare.h"
#include "results/render/report.h"
#include "results/stats/significance.h"
#include "results/store/store.h"

namespace {

constexpr int kCells = 100, kBuilds = 50, kRunsPerCell = 10, kIterations = 10;
constexpr const char* kVariants[] = {"a", "b"};

std::string g_db;

double process_cpu_ms() {
  timespec ts{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}
std::unique_ptr<nightjar::ResultsStore> g_store;

constexpr std::int64_t kRuns = std::int64_t{kBuilds} * kRunsPerCell * std::size(kVariants) * kCells;

// One run of the database: run `id` of cell seed=`cell` of `variant` and `build`.
nightjar::ImportedRun bench_run(std::int64_t id, int cell, const char* variant, const char* build,
                                std::mt19937_64& rng, std::normal_distribution<double>& z) {
  const double sigma = std::sqrt(std::log1p(0.02 * 0.02));
  nightjar::ImportedRun run;
  run.id = id;
  run.job = "fake";
  run.workload = "fake";
  run.variant = variant;
  run.build = build;
  run.params["seed"] = {std::to_string(cell), double(cell)};
  run.params["value"] = {"100", 100.0};
  run.kernel.release = "6.1.0-bench";
  run.testbox = {"bench", "cpu", 2, 0};
  run.match_by_name = true;  // one kernel and one testbox row for every run
  run.iterations = kIterations;
  run.started_at = "2026-01-01T00:00:00Z";
  const double mean = (variant[0] == 'b' && cell % 10 == 0) ? 99.0 : 100.0;
  for (int i = 1; i <= kIterations; ++i)
    run.samples.push_back({i, "throughput", mean * std::exp(sigma * z(rng) - sigma * sigma / 2)});
  return run;
}

void build_database(nightjar::ResultsStore& store) {
  if (store.run_count() >= kRuns) return;  // reused --db
  auto t0 = std::chrono::steady_clock::now();
  store.register_metrics("fake", {{"throughput", "ops/s", nightjar::Direction::higher_is_better,
                                   nightjar::MeanKind::harmonic, ""},
                                  {"latency", "ms", nightjar::Direction::lower_is_better,
                                   nightjar::MeanKind::arithmetic, ""}});
  nightjar::ResultsStore::Transaction tx(store);
  std::mt19937_64 rng(42);
  std::normal_distribution<double> z(0.0, 1.0);
  std::int64_t id = 0;
  for (int b = 0; b < kBuilds; ++b) {
    char build[8];
    std::snprintf(build, sizeof build, "b%02d", b);
    for (int r = 0; r < kRunsPerCell; ++r)
      for (const char* variant : kVariants)
        for (int c = 1; c <= kCells; ++c)
          store.insert_imported_run(bench_run(++id, c, variant, build, rng, z));
  }
  tx.commit();
  // The query planner's statistics, as a database that has lived a while has
  // them (bench/ may use SQL: it is outside the layered folders).
  SQLite::Database db(g_db, SQLite::OPEN_READWRITE, 30000);
  db.exec("ANALYZE");
  const auto samples = db.execAndGet("SELECT count(*) FROM sample").getInt64();
  auto secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::fprintf(stderr, "compare_bench: built %lld runs, %lld samples in %.1f s (%s)\n",
               static_cast<long long>(store.run_count()), static_cast<long long>(samples), secs,
               g_db.c_str());
}

std::size_t compare_once(const std::vector<std::string>& selectors) {
  nightjar::Comparison c = nightjar::compare_selectors(
      *g_store, nightjar::parse_selectors(selectors), {}, nightjar::stats::SignificanceOptions{});
  std::string text = nightjar::render_mmtests(c);
  return text.size() + c.rows.size();
}

// `nightjar report a b` after opening the store: the same comparison, then
// the changelog blocks (one per cell) and their legend.
std::size_t report_once() {
  nightjar::Comparison c = nightjar::compare_selectors(
      *g_store, nightjar::parse_selectors({"a", "b"}), {}, nightjar::stats::SignificanceOptions{});
  std::string text = nightjar::render_report(c, nightjar::ReportOptions{});
  return text.size() + c.rows.size();
}

// The bare scan of one side: the value column of the samples of the runs of
// `variant`, read with the sqlite3 C API on a read-only connection of its
// own. Returns the number of values (their sum goes to `sum`).
std::size_t bare_scan_side(const char* variant, double& sum) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(g_db.c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr) !=
      SQLITE_OK) {
    std::fprintf(stderr, "compare_bench: %s: %s\n", g_db.c_str(), sqlite3_errmsg(db));
    std::exit(1);
  }
  sqlite3_stmt* q = nullptr;
  sqlite3_prepare_v2(db,
                     "SELECT s.value FROM run r JOIN sample s ON s.run_id=r.id WHERE r.variant=?",
                     -1, &q, nullptr);
  sqlite3_bind_text(q, 1, variant, -1, SQLITE_STATIC);
  std::size_t n = 0;
  double s = 0;
  while (sqlite3_step(q) == SQLITE_ROW) {
    s += sqlite3_column_double(q, 0);
    ++n;
  }
  sqlite3_finalize(q);
  sqlite3_close(db);
  sum = s;
  return n;
}

// Both sides of the bare scan, each on its own thread (as compare loads its
// sides). Returns the values read.
std::size_t bare_scan() {
  double sums[2] = {0, 0};
  std::size_t counts[2] = {0, 0};
  std::thread other([&] { counts[1] = bare_scan_side("b", sums[1]); });
  counts[0] = bare_scan_side("a", sums[0]);
  other.join();
  benchmark::DoNotOptimize(sums[0] + sums[1]);
  return counts[0] + counts[1];
}

double elapsed_ms(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// "median M (min A, max B)" of `v` (sorted here).
std::string spread(std::vector<double> v, const char* format) {
  std::sort(v.begin(), v.end());
  auto fmt = [&](double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, format, x);
    return std::string(buf);
  };
  return "median " + fmt(v[v.size() / 2]) + " (min " + fmt(v.front()) + ", max " + fmt(v.back()) +
         ")";
}

// The figures of issue 19: `repeats` back-to-back timings of compare and of
// the bare scan, and their ratios.
void print_ratio(int repeats) {
  compare_once({"a", "b"});  // warm the page cache
  if (bare_scan() != 1'000'000) std::fprintf(stderr, "compare_bench: bare scan missed samples\n");
  std::vector<double> ms, cpu_ms, bare_ms, bare_cpu_ms, ratio, cpu_ratio, report_ms, report_ratio;
  for (int i = 0; i < repeats; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    double c0 = process_cpu_ms();
    benchmark::DoNotOptimize(compare_once({"a", "b"}));
    cpu_ms.push_back(process_cpu_ms() - c0);
    ms.push_back(elapsed_ms(t0));
    t0 = std::chrono::steady_clock::now();
    c0 = process_cpu_ms();
    benchmark::DoNotOptimize(bare_scan());
    bare_cpu_ms.push_back(process_cpu_ms() - c0);
    bare_ms.push_back(elapsed_ms(t0));
    t0 = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(report_once());
    report_ms.push_back(elapsed_ms(t0));
    ratio.push_back(ms.back() / bare_ms.back());
    cpu_ratio.push_back(cpu_ms.back() / bare_cpu_ms.back());
    report_ratio.push_back(report_ms.back() / bare_ms.back());
  }
  double load[3] = {0, 0, 0};
  if (::getloadavg(load, 3) < 1) load[0] = -1;
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  auto verdict = [](double median_ms, double median_ratio) {
    return std::string("goal <= 200 ms wall: ") + (median_ms <= 200.0 ? "met" : "NOT met") +
           "; goal ratio <= 2: " + (median_ratio <= 2.0 ? "met" : "NOT met");
  };
  std::printf(
      "compare of 1000000 samples (100000 runs x 10, both sides = every sample), %d repeats "
      "(load average %.2f on %u CPUs; a shared, noisy machine):\n"
      "  compare a b : %s ms wall, %s ms CPU summed over threads\n"
      "  bare scan   : %s ms wall, %s ms CPU (sqlite3 C API, value column of the same rows)\n"
      "  ratio       : %s compare/bare wall, %s CPU\n"
      "  compare     : %s\n"
      "  report a b  : %s ms wall (changelog blocks of every cell), ratio %s report/bare wall\n"
      "  report      : %s\n",
      repeats, load[0], std::thread::hardware_concurrency(), spread(ms, "%.1f").c_str(),
      spread(cpu_ms, "%.1f").c_str(), spread(bare_ms, "%.1f").c_str(),
      spread(bare_cpu_ms, "%.1f").c_str(), spread(ratio, "%.2f").c_str(),
      spread(cpu_ratio, "%.2f").c_str(), verdict(median(ms), median(ratio)).c_str(),
      spread(report_ms, "%.1f").c_str(), spread(report_ratio, "%.2f").c_str(),
      verdict(median(report_ms), median(report_ratio)).c_str());
}

void BM_CompareAllSamples(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(compare_once({"a", "b"}));
  state.counters["samples"] = 1'000'000;
}
BENCHMARK(BM_CompareAllSamples)
    ->Unit(benchmark::kMillisecond)
    ->MeasureProcessCPUTime()
    ->UseRealTime();

void BM_CompareTwoBuilds(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(compare_once({"build=b00", "build=b01"}));
  state.counters["samples"] = 2.0 * kCells * kRunsPerCell * 2 * kIterations;
}
BENCHMARK(BM_CompareTwoBuilds)
    ->Unit(benchmark::kMillisecond)
    ->MeasureProcessCPUTime()
    ->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  bool temporary = true;
  int repeats = 7;
  std::string only;
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--db") == 0 && i + 1 < argc) {
      g_db = argv[++i];
      temporary = false;
    } else if (std::strcmp(argv[i], "--repeats") == 0 && i + 1 < argc) {
      repeats = std::max(1, std::atoi(argv[++i]));
    } else if (std::strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
      only = argv[++i];
      if (only != "compare" && only != "report" && only != "bare" && only != "open") {
        std::fprintf(stderr,
                     "compare_bench: --only takes compare, report, bare or open, not '%s'\n",
                     only.c_str());
        return 2;
      }
    } else {
      args.push_back(argv[i]);
    }
  }
  if (g_db.empty())
    g_db = (std::filesystem::temp_directory_path() /
            ("nightjar-compare-bench-" + std::to_string(::getpid()) + ".db"))
               .string();
  int n = static_cast<int>(args.size());
  benchmark::Initialize(&n, args.data());
  g_store = std::make_unique<nightjar::ResultsStore>(g_db);
  build_database(*g_store);

  if (!only.empty()) {
    // One compare or scan, alone (for callgrind: see the header).
    std::size_t got = 0;
    if (only == "compare") got = compare_once({"a", "b"});
    if (only == "report") got = report_once();
    if (only == "bare") got = bare_scan();
    std::printf("compare_bench --only %s: %zu\n", only.c_str(), got);
  } else {
    benchmark::RunSpecifiedBenchmarks();
    print_ratio(repeats);
  }
  benchmark::Shutdown();
  g_store.reset();
  if (temporary) {
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(g_db + suffix);
  }
  return 0;
}
