// mmtests result directories into the store: see results/io/mmtests.h.
#include "results/io/mmtests.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <iterator>
#include <optional>
#include <regex>
#include <set>
#include <tuple>

#include "results/io/import_checks.h"
#include "results/io/input_file.h"
#include "results/model/exit_codes.h"
#include "results/model/identity.h"
#include "results/model/text.h"

namespace nightjar {
namespace {

namespace fs = std::filesystem;

constexpr const char* kLayout =
    "mmtests writes work/log/NAME/iter-N/BENCHMARK/logs/ (the layout compare-kernels.sh reads)";

std::optional<long> whole_number(std::string_view text) {
  long v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size() || text.empty() || v < 0)
    return std::nullopt;
  return v;
}

std::optional<double> number(std::string_view text) {
  double v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size() || text.empty()) return std::nullopt;
  return v;
}

std::vector<std::string> lines_of(const std::string& text) {
  return split(text, '\n');
}

bool has_letter(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](unsigned char c) { return std::isalpha(c) != 0; });
}

// A file of `files`, or a UsageError naming it.
const std::string& file_text(const std::map<std::string, std::string>& files,
                             const std::string& logs, const std::string& name,
                             const std::string& why) {
  auto it = files.find(name);
  if (it == files.end())
    throw UsageError(
        fmt::format("{}/{}: missing; {}; copy the whole logs directory", logs, name, why));
  return it->second;
}

// Numbers N of the files PREFIX N SUFFIX, ascending.
std::vector<long> numbered(const std::map<std::string, std::string>& files,
                           const std::string& prefix, const std::string& suffix) {
  std::vector<long> out;
  for (const auto& [name, text] : files) {
    if (!name.starts_with(prefix) || !name.ends_with(suffix) ||
        name.size() <= prefix.size() + suffix.size())
      continue;
    if (auto n = whole_number(std::string_view(name).substr(
            prefix.size(), name.size() - prefix.size() - suffix.size())))
      out.push_back(*n);
  }
  std::sort(out.begin(), out.end());
  return out;
}

void add_metric(MmtestsRun& run, const std::string& name, const std::string& unit,
                Direction direction) {
  for (const auto& m : run.metrics)
    if (m.name == name) return;
  run.metrics.push_back(imported_metric(name, unit, direction));
}

// netperf (shellpack_src/src/netperf/extract-report.pl of mmtests): the
// protocol from `protocols`, one sample file PROTOCOL-SIZE.N per sample; the
// throughput is the last field of the last data line (a line without
// letters) with more than 4 fields (UDP_STREAM: 6 fields send, 4 recv).
void parse_netperf(MmtestsRun& run, const std::map<std::string, std::string>& files) {
  const auto protocol_lines =
      lines_of(file_text(files, run.logs, "protocols", "it names the netperf test"));
  const std::string protocol = protocol_lines.empty() ? "" : std::string(trim(protocol_lines[0]));
  if (protocol.empty())
    throw UsageError(
        fmt::format("{}/protocols: empty; it names the netperf test (TCP_STREAM)", run.logs));
  std::string pretty;
  for (char c : protocol)
    if (c != '_') pretty += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const bool udp = protocol == "UDP_STREAM";
  const std::string unit = protocol.ends_with("_RR") ? "trans/s" : "Mbps";
  std::set<long> sizes;
  for (const auto& [name, text] : files)
    if (name.starts_with(protocol + "-") && name.ends_with(".1"))
      if (auto n = whole_number(std::string_view(name).substr(protocol.size() + 1,
                                                              name.size() - protocol.size() - 3)))
        sizes.insert(*n);
  for (long size : sizes) {
    const std::string prefix = fmt::format("{}-{}.", protocol, size);
    const std::vector<long> ns = numbered(files, prefix, "");
    for (std::size_t k = 0; k < ns.size(); ++k)
      if (ns[k] != static_cast<long>(k + 1))
        throw UsageError(fmt::format(
            "{}/{}{}: missing: the samples of {} size {} are {}1 to {}{}, and this one is not "
            "there (an interrupted or partly copied mmtests run); copy the missing file, or "
            "rerun the benchmark; nothing imported",
            run.logs, prefix, k + 1, protocol, size, prefix, prefix, ns.back()));
    for (long n : ns) {
      const std::string file = prefix + std::to_string(n);
      std::optional<double> send, recv;
      for (const auto& raw : lines_of(files.at(file))) {
        const std::string line(trim(raw));
        if (line.empty() || has_letter(line)) continue;
        const auto fields = split_blanks(line);
        const auto value = fields.empty() ? std::nullopt : number(fields.back());
        if (!value) continue;
        if (!udp && fields.size() > 4) send = value;
        if (udp && fields.size() == 6) send = value;
        if (udp && fields.size() == 4) recv = value;
      }
      if (!send)
        throw UsageError(fmt::format(
            "{}/{}: no throughput line (a line of numbers after netperf's header); netperf "
            "failed or the file is cut short: rerun the benchmark, or remove the file and the "
            "later samples",
            run.logs, file));
      const std::string op = fmt::format("{}-send-{}", pretty, size);
      add_metric(run, op, unit, Direction::higher_is_better);
      run.samples.push_back({static_cast<int>(n), op, *send});
      if (udp && recv) {
        const std::string rop = fmt::format("{}-recv-{}", pretty, size);
        add_metric(run, rop, unit, Direction::higher_is_better);
        run.samples.push_back({static_cast<int>(n), rop, *recv});
      }
    }
  }
}

// pft (bin/lib/MMTests/ExtractPft.pm of mmtests before pft was removed):
// pft-CLIENTS.log, each line without letters (after the `s` of the times is
// dropped) a sample: fields 7 and 8 are faults per CPU-second and per
// wall-second.
void parse_pft(MmtestsRun& run, const std::map<std::string, std::string>& files) {
  const std::vector<long> clients = numbered(files, "pft-", ".log");
  std::vector<std::pair<std::string, std::string>> ops;  // faults/cpu-* first, as mmtests
  for (long c : clients) {
    const std::string file = fmt::format("pft-{}.log", c);
    int sample = 0;
    int line_no = 0;
    for (std::string line : lines_of(files.at(file))) {
      ++line_no;
      line.erase(std::remove(line.begin(), line.end(), 's'), line.end());
      if (has_letter(line) || trim(line).empty()) continue;
      const auto fields = split_blanks(line);
      const auto cpu = fields.size() >= 8 ? number(fields[6]) : std::nullopt;
      const auto wall = fields.size() >= 8 ? number(fields[7]) : std::nullopt;
      if (!cpu || !wall)
        throw UsageError(fmt::format(
            "{}/{}:{}: not a pft result line (Gb Threads CLine User System Wall flt/cpu/s "
            "fault/wsec: 8 numbers); the file is cut short or not pft's output: rerun the "
            "benchmark, or delete the line",
            run.logs, file, line_no));
      ++sample;
      run.samples.push_back({sample, fmt::format("faults/cpu-{}", c), *cpu});
      run.samples.push_back({sample, fmt::format("faults/sec-{}", c), *wall});
    }
    if (sample == 0)
      throw UsageError(fmt::format(
          "{}/{}: no result line; pft failed or the file is empty: rerun the benchmark, or "
          "remove the file",
          run.logs, file));
  }
  for (const char* heading : {"faults/cpu", "faults/sec"})
    for (long c : clients)
      add_metric(run, fmt::format("{}-{}", heading, c),
                 heading == std::string_view("faults/cpu") ? "faults/cpu-sec" : "faults/sec",
                 Direction::higher_is_better);
}

// futexbench (shellpack_src/src/futexbench/extract-report.pl of mmtests):
// `workloads` lists perf bench futex's workloads; WORKLOAD-THREADS.log holds
// one sample per matching line (ops/sec of a thread, or a run's time).
void parse_futexbench(MmtestsRun& run, const std::map<std::string, std::string>& files) {
  const auto wl_lines =
      lines_of(file_text(files, run.logs, "workloads", "it lists the futex workloads run"));
  const std::vector<std::string> workloads =
      wl_lines.empty() ? std::vector<std::string>{} : split_blanks(wl_lines[0]);
  std::set<long> threads;
  for (const auto& wl : workloads)
    for (long t : numbered(files, wl + "-", ".log")) threads.insert(t);
  static const std::regex ops(R"(.*futex(es)?:.* \[ ([0-9]+) ops/sec.*)");
  static const std::regex ms(R"(.*: (Requeued|Awoke and Requeued|Wokeup).* in ([0-9.]+) ms.*)");
  static const std::regex avg(R"(.*: Avg per-thread latency.* in ([0-9.]+) ms.*)");
  for (long t : threads)
    for (const auto& wl : workloads) {
      const std::string file = fmt::format("{}-{}.log", wl, t);
      const std::string& text = file_text(
          files, run.logs, file,
          fmt::format("workload {} ran with {} threads in another workload's log", wl, t));
      std::string type = "private";
      int sample = 0;
      for (const auto& line : lines_of(text)) {
        if (line.find("shared") != std::string::npos) type = "shared";
        std::smatch m;
        double value = 0;
        std::string unit;
        Direction direction = Direction::lower_is_better;
        if (std::regex_match(line, m, ops)) {
          value = *number(m[2].str());
          unit = "ops/sec";
          direction = Direction::higher_is_better;
        } else if (std::regex_match(line, m, ms)) {
          value = number(m[2].str()).value_or(0);
          unit = "ms";
        } else if (std::regex_match(line, m, avg)) {
          value = number(m[1].str()).value_or(0) * 1000;  // mmtests: usec
          unit = "us";
        } else {
          continue;
        }
        const std::string op = fmt::format("{}-{}-{}", wl, type, t);
        add_metric(run, op, unit, direction);
        run.samples.push_back({++sample, op, value});
      }
      if (sample == 0)
        throw UsageError(fmt::format(
            "{}/{}: no result line (perf bench futex prints one per thread or run); the "
            "benchmark failed: rerun it, or remove {} from the workloads file",
            run.logs, file, wl));
    }
}

}  // namespace

bool mmtests_benchmark_known(const std::string& benchmark) {
  return benchmark.starts_with("netperf") || benchmark == "pft" ||
         benchmark.starts_with("futexbench");
}

MmtestsRun parse_mmtests_logs(const std::string& benchmark, const std::string& logs,
                              const std::map<std::string, std::string>& files) {
  MmtestsRun run;
  run.benchmark = benchmark;
  run.logs = logs;
  if (benchmark.starts_with("netperf"))
    parse_netperf(run, files);
  else if (benchmark == "pft")
    parse_pft(run, files);
  else if (benchmark.starts_with("futexbench"))
    parse_futexbench(run, files);
  else
    throw UsageError(fmt::format(
        "{}: benchmark {} is not one nightjar reads; it reads netperf*, pft and futexbench", logs,
        benchmark));
  if (run.samples.empty())
    throw UsageError(
        fmt::format("{}: no {} results (no result files); {}", logs, benchmark, kLayout));
  return run;
}

MmtestsResults read_mmtests_dir(const std::string& dir) {
  static constexpr InputKind kLog{
      .noun = "mmtests log",
      .expect = kLayout,
      .max_bytes = kMaxMmtestsLogBytes,
      .cap = "64 MiB",
      .too_large_fix = "check that this is an mmtests log directory",
  };
  std::error_code ec;
  fs::path root = fs::path(dir) / "work" / "log";
  if (!fs::is_directory(root, ec)) root = dir;
  if (!fs::is_directory(root, ec))
    throw UsageError(fmt::format("{}: not a directory; {}", dir, kLayout));
  MmtestsResults results;
  results.dir = dir;
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(root, ec))
    if (e.is_directory() && fs::is_directory(e.path() / "iter-0"))
      names.insert(e.path().filename().string());
  if (names.empty())
    throw UsageError(fmt::format("{}: no mmtests run (no NAME/iter-0 under {}); {}", dir,
                                 root.string(), kLayout));
  std::set<std::string> skipped;
  for (const auto& name : names) {
    const fs::path base = root / name;
    std::vector<long> iters;
    for (const auto& e : fs::directory_iterator(base, ec)) {
      const std::string f = e.path().filename().string();
      if (e.is_directory() && f.starts_with("iter-"))
        if (auto n = whole_number(std::string_view(f).substr(5))) iters.push_back(*n);
    }
    std::sort(iters.begin(), iters.end());
    for (std::size_t k = 0; k < iters.size(); ++k)
      if (iters[k] != static_cast<long>(k))
        throw UsageError(fmt::format(
            "{}/iter-{}: missing: {} has iter-0 to iter-{} with this iteration missing; an "
            "interrupted or partly copied mmtests run: copy the missing iteration, or remove "
            "the later iter-N directories; nothing imported",
            base.string(), k, base.string(), iters.back()));
    std::set<std::string> first_benchmarks;
    for (long n : iters) {
      const fs::path iter = base / fmt::format("iter-{}", n);
      std::set<std::string> benchmarks;
      for (const auto& e : fs::directory_iterator(iter, ec))
        if (e.is_directory() && fs::is_directory(e.path() / "logs"))
          benchmarks.insert(e.path().filename().string());
      if (n == 0) first_benchmarks = benchmarks;
      for (const auto& b : first_benchmarks)
        if (!benchmarks.contains(b) && mmtests_benchmark_known(b))
          throw UsageError(fmt::format(
              "{}/{}/logs: missing: iter-0 of {} ran {} but iteration {} has no logs of it; "
              "copy the missing iteration, or remove iter-{} and the later ones; nothing "
              "imported",
              iter.string(), b, name, b, n, n));
      for (const auto& b : benchmarks) {
        if (!mmtests_benchmark_known(b)) {
          skipped.insert(b);
          continue;
        }
        const fs::path logs = iter / b / "logs";
        std::map<std::string, std::string> files;
        for (const auto& e : fs::directory_iterator(logs, ec))
          if (e.is_regular_file())
            files[e.path().filename().string()] = InputFile(e.path().string(), kLog).read_all();
        MmtestsRun run = parse_mmtests_logs(b, logs.string(), files);
        run.name = name;
        run.iter = static_cast<int>(n);
        results.runs.push_back(std::move(run));
      }
    }
  }
  if (!skipped.empty())
    results.warnings.push_back(
        fmt::format("{}: benchmark(s) {} skipped: nightjar reads netperf*, pft and futexbench", dir,
                    join(std::vector<std::string>(skipped.begin(), skipped.end()))));
  if (results.runs.empty())
    throw UsageError(fmt::format("{}: no benchmark nightjar reads (netperf*, pft, futexbench); {}",
                                 dir, kLayout));
  return results;
}

MmtestsImportResult import_mmtests(ResultsStore& store, const MmtestsResults& results,
                                   const MmtestsImportOptions& options) {
  MmtestsImportResult result;
  ResultsStore::Transaction tx(store);
  for (const MmtestsRun& r : results.runs) {
    ImportedRun run;
    run.job = r.benchmark;
    run.workload = r.benchmark;
    run.variant = options.variant;
    run.build = r.name;
    run.testbox.hostname = options.testbox;
    run.match_by_name = true;
    run.samples = r.samples;
    std::sort(run.samples.begin(), run.samples.end(), [](const SampleRow& a, const SampleRow& b) {
      return std::tie(a.iteration, a.metric) < std::tie(b.iteration, b.metric);
    });
    run.iterations = run.samples.empty() ? 0 : run.samples.back().iteration;
    run.context["import.format"] = "mmtests";
    run.context["import.file"] = r.logs;
    run.context["mmtests.iteration"] = std::to_string(r.iter);
    std::string text;
    for (const auto& s : run.samples)
      fmt::format_to(std::back_inserter(text), "{}\t{}\t{}\n", s.iteration, s.metric, s.value);
    run.identity = fmt::format("mmtests name={} benchmark={} iter={} values={}", r.name,
                               r.benchmark, r.iter, fnv1a64_hex(text));
    run.digest = fnv1a64_hex(run.identity + "\n" + run.variant + "\n" + run.testbox.hostname);
    if (stored_import(store, run.identity, run.digest, r.logs,
                      fmt::format("this mmtests run ({} iter-{}, {})", r.name, r.iter, r.benchmark),
                      "--variant")) {
      ++result.already_stored;
      continue;
    }
    refuse_other_descriptors(store, run.workload, r.metrics, r.logs, "these logs");
    store.add_missing_metrics(run.workload, r.metrics);
    result.run_ids.push_back(store.insert_imported_run(run));
    result.samples += run.samples.size();
  }
  tx.commit();
  return result;
}

}  // namespace nightjar
