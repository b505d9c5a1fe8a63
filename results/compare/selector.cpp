#include "results/compare/selector.h"

#include <algorithm>
#include <charconv>
#include <tuple>

#include <fmt/format.h>

#include "results/model/exit_codes.h"
#include "results/model/text.h"
#include "results/stats/sorting.h"

namespace nightjar {
namespace {

constexpr const char* kSelectorHelp =
    "write a variant name (vanilla) or key=value pairs joined by commas, keys build, kernel, "
    "variant, run, testbox, job, workload (e.g. build=v6.18,kernel=6.1.0-13-amd64)";

[[noreturn]] void bad_selector(std::string_view text, const std::string& what) {
  throw UsageError(fmt::format("selector '{}': {}; {}", text, what, kSelectorHelp));
}

std::string list_of(const std::vector<std::string>& items, std::size_t max = 10) {
  std::string out;
  for (std::size_t i = 0; i < items.size() && i < max; ++i) out += (i ? ", " : "") + items[i];
  if (items.size() > max) out += fmt::format(", ... ({} in all)", items.size());
  return out;
}

std::string describe_filters(const SideQuery& q) {
  std::string out;
  if (!q.job.empty()) out += " --job " + q.job;
  if (!q.workload.empty()) out += " --workload " + q.workload;
  return out.empty() ? "" : " (with" + out + ")";
}

// The store's filter of a selector and the options that narrow every side.
SideFilter side_filter(const Selector& s, const SideQuery& q) {
  SideFilter f;
  f.run_id = s.run_id;
  f.run_ids = s.run_ids;
  f.variant = s.variant;
  f.build = s.build;
  f.kernel_release = s.kernel;
  f.hostname = s.testbox;
  for (const std::string* job : {&s.job, &q.job})
    if (!job->empty()) f.jobs.push_back(*job);
  for (const std::string* workload : {&s.workload, &q.workload})
    if (!workload->empty()) f.workloads.push_back(*workload);
  f.include_invalid = q.include_invalid;
  f.include_running = q.include_running;
  // What run_accelerator and run_guest_size read.
  f.fact_keys = {"vm.accelerator", "vm.accel", "vm.cpus", "vm.memory_mb"};
  return f;
}

// Runs match but none has samples (all skipped, failed or running).
[[noreturn]] void no_samples(const std::string& role, const Selector& selector,
                             const std::vector<ExcludedRun>& excluded) {
  std::vector<std::string> why;
  for (const auto& r : excluded)
    why.push_back(fmt::format("run {} {}{}", r.id, to_string(r.status),
                              r.reason.empty() ? "" : ": " + r.reason));
  throw Error(ExitCode::inconclusive,
              fmt::format("{} selector '{}' matched {} run(s) but none has samples ({}); "
                          "nothing to compare: rerun the job for this side",
                          role, selector.text, excluded.size(), list_of(why, 5)));
}

// The matching key of a stored cell: its identity, with the cell id rebuilt
// from the parameters that are not ignored when some are. Leaves those
// parameters in `params`.
CellKey cell_key(const StoredCell& stored, const std::set<std::string>& ignored,
                 std::vector<std::pair<std::string, std::string>>& params) {
  CellKey key{stored.workload, stored.job, stored.cell};
  for (const auto& [name, value] : stored.params)
    if (!ignored.count(name)) params.emplace_back(name, value);
  if (!ignored.empty()) {
    key.cell.clear();
    for (const auto& [name, value] : params)
      key.cell += (key.cell.empty() ? "" : " ") + name + "=" + value;
  }
  return key;
}

void append_values(std::map<std::string, std::vector<double>>& to,
                   std::map<std::string, std::vector<double>>& from) {
  for (auto& [name, values] : from) {
    auto& v = to[name];
    if (v.empty())
      v = std::move(values);
    else
      v.insert(v.end(), values.begin(), values.end());
  }
}

// Splits each metric's samples (in run order) into its runs by
// metric_run_sizes, appended to `to` (runs without samples dropped).
void append_runs(std::map<std::string, std::vector<std::vector<double>>>& to,
                 const StoredCell& from) {
  for (const auto& [name, values] : from.metrics) {
    auto sizes = from.metric_run_sizes.find(name);
    auto& runs = to[name];
    if (sizes == from.metric_run_sizes.end()) {
      runs.push_back(values);
      continue;
    }
    std::size_t at = 0;
    for (std::size_t n : sizes->second) {
      if (n == 0 || at + n > values.size()) continue;
      runs.emplace_back(values.begin() + static_cast<std::ptrdiff_t>(at),
                        values.begin() + static_cast<std::ptrdiff_t>(at + n));
      at += n;
    }
  }
}

// Pools the stored cells (first-run order) into the side's cells: stored
// cells with the same key are one cell. Sorted here, in the side's own
// loading thread: every statistic is order-free, and the statistics module
// skips its sorts on sorted input. stats::sort_ascending (a radix sort, the
// same order as std::sort) takes 0.3 of std::sort's time on these vectors
// (5 000 lognormal samples: 23 vs 75 ms per million values; issue 19).
void pool_cells(std::vector<StoredCell>& stored, const std::set<std::string>& ignored,
                LoadedSide& side) {
  for (StoredCell& sc : stored) {
    for (const auto& [name, _] : sc.params) side.param_names.insert(name);
    std::vector<std::pair<std::string, std::string>> params;
    auto [it, fresh] = side.cells.try_emplace(cell_key(sc, ignored, params));
    CellSamples& cell = it->second;
    if (fresh) {
      cell.first_run = sc.first_run;
      cell.stored_cell = sc.cell;
      cell.params = std::move(params);
    }
    cell.run_ids.insert(cell.run_ids.end(), sc.run_ids.begin(), sc.run_ids.end());
    cell.aborted_runs += sc.aborted_runs;
    append_runs(cell.metric_runs, sc);
    append_values(cell.metrics, sc.metrics);
    append_values(cell.monitors, sc.monitors);
    // Stored cells come in first-run order: the first reason kept is the
    // lowest run's.
    for (auto& [name, inv] : sc.invalid) {
      InvalidSamples& to = cell.invalid[name];
      if (to.count == 0 || inv.run_id < to.run_id) {
        const int count = to.count;
        to = std::move(inv);
        to.count += count;
      } else {
        to.count += inv.count;
      }
    }
  }
  for (auto& [key, cell] : side.cells) {
    std::sort(cell.run_ids.begin(), cell.run_ids.end());
    for (auto* by : {&cell.metrics, &cell.monitors})
      for (auto& [name, values] : *by) stats::sort_ascending(values);
  }
}

}  // namespace

Selector parse_selector(std::string_view text) {
  Selector s;
  s.text = std::string(text);
  if (trim(text).empty()) bad_selector(text, "it is empty");
  std::set<std::string> seen;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    std::string item(trim(text.substr(start, comma - start)));
    start = comma + 1;
    if (item.empty()) bad_selector(text, "an item between commas is empty");
    std::string key, value;
    auto eq = item.find('=');
    if (eq == std::string::npos) {
      key = "variant";  // a bare word is a variant name
      value = item;
    } else {
      key = std::string(trim(std::string_view(item).substr(0, eq)));
      value = std::string(trim(std::string_view(item).substr(eq + 1)));
      if (key.empty()) bad_selector(text, "'" + item + "' has no key before '='");
    }
    if (value.empty()) bad_selector(text, "'" + key + "=' has no value");
    if (!seen.insert(key).second) bad_selector(text, "'" + key + "' is given twice");
    if (key == "variant") {
      s.variant = value;
    } else if (key == "build") {
      s.build = value;
    } else if (key == "kernel") {
      s.kernel = value;
    } else if (key == "testbox") {
      s.testbox = value;
    } else if (key == "job") {
      s.job = value;
    } else if (key == "workload") {
      s.workload = value;
    } else if (key == "run") {
      std::int64_t id = 0;
      auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), id);
      if (ec != std::errc() || p != value.data() + value.size() || id <= 0)
        bad_selector(text,
                     "run=" + value + " is not a run id (a positive integer from `nightjar show`)");
      s.run_id = id;
    } else {
      bad_selector(text, "unknown key '" + key + "'");
    }
    if (comma == text.size()) break;
  }
  return s;
}

std::vector<Selector> parse_selectors(const std::vector<std::string>& texts) {
  std::vector<Selector> out;
  out.reserve(texts.size());
  for (const auto& t : texts) out.push_back(parse_selector(t));
  return out;
}

void check_distinct_sides(const std::vector<Selector>& sides) {
  auto key = [](const Selector& s) {
    return std::tie(s.run_id, s.run_ids, s.variant, s.build, s.kernel, s.testbox, s.job,
                    s.workload);
  };
  for (std::size_t i = 0; i < sides.size(); ++i)
    for (std::size_t j = i + 1; j < sides.size(); ++j)
      if (key(sides[i]) == key(sides[j]))
        throw UsageError(fmt::format(
            "sides {} ('{}') and {} ('{}') select the same runs: a side compared with itself "
            "always looks unchanged; name two different sides (`nightjar show` lists the "
            "variants and builds stored)",
            i + 1, sides[i].text, j + 1, sides[j].text));
}

std::string describe_stored_runs(const SampleReader& store) {
  StoredRunsSummary s = store.stored_runs_summary();
  if (s.runs == 0)
    return "the database holds no runs; store some with `nightjar run JOB --variant NAME`";
  auto shown = [](std::vector<std::string>& values) {
    for (auto& v : values)
      if (v.empty()) v = "(none)";
    return list_of(values);
  };
  std::string out = "the database holds variants " + shown(s.variants);
  out += "; builds " + shown(s.builds);
  out += "; kernels " + shown(s.kernels);
  out += "; jobs " + shown(s.jobs);
  out += fmt::format("; runs {}-{} ({} runs) (see `nightjar show`)", s.first_id, s.last_id, s.runs);
  return out;
}

std::string run_accelerator(const std::map<std::string, std::string>& context) {
  for (const char* key : {"vm.accelerator", "vm.accel"})
    if (auto it = context.find(key); it != context.end()) return it->second;
  return "";
}

std::string run_guest_size(const std::map<std::string, std::string>& context) {
  auto cpus = context.find("vm.cpus"), memory = context.find("vm.memory_mb");
  if (cpus == context.end() || memory == context.end()) return "";
  return fmt::format("{} CPUs, {} MiB", cpus->second, memory->second);
}

LoadedSide load_side(const ResultsStore& store, const Selector& selector, const SideQuery& query,
                     const std::string& role) {
  StoredSide read = store.side_samples(side_filter(selector, query));
  if (read.matched == 0)
    throw UsageError(fmt::format("{} selector '{}' matched no runs{}; {}", role, selector.text,
                                 describe_filters(query), describe_stored_runs(store)));
  if (read.run_ids.empty()) no_samples(role, selector, read.excluded);
  LoadedSide side;
  side.selector = selector;
  side.run_ids = std::move(read.run_ids);
  side.excluded = std::move(read.excluded);
  side.variants = std::move(read.variants);
  side.builds = std::move(read.builds);
  side.kernels = std::move(read.kernels);
  side.testboxes = std::move(read.testboxes);
  // The vm.* facts of the runs, read with the side (one query per run took
  // over half of a 1M-sample compare; issue 19).
  for (const auto& facts : read.fact_sets) {
    side.accelerators.insert(run_accelerator(facts));
    side.guest_sizes.insert(run_guest_size(facts));
  }
  // A side mixing runs under TCG with others: which runs were emulated, so
  // that only their rows and points are marked (runs_emulated). One
  // run_context query per run, made only for such a side (small: guest runs).
  if (side.accelerators.count("tcg") > 0 && side.accelerators.size() > 1)
    for (const auto id : side.run_ids)
      if (run_accelerator(store.run_context(id)) == "tcg") side.emulated_runs.insert(id);
  pool_cells(read.cells, {query.ignore_params.begin(), query.ignore_params.end()}, side);
  return side;
}

void check_ignored_params(const std::vector<LoadedSide>& sides,
                          const std::vector<std::string>& ignored) {
  std::set<std::string> have;
  for (const auto& side : sides) have.insert(side.param_names.begin(), side.param_names.end());
  for (const auto& name : ignored)
    if (!have.count(name))
      throw UsageError(fmt::format(
          "--ignore-param {}: no cell of the compared runs has a parameter '{}' (they have: {}); "
          "check the spelling (`nightjar show` lists the cells), or leave the flag out",
          name, name,
          have.empty() ? std::string("none")
                       : join(std::vector<std::string>(have.begin(), have.end()), ", ")));
}

MetricCatalog load_metric_catalog(const ResultsStore& store, const std::set<std::string>& workloads,
                                  const WorkloadCatalog& declared) {
  MetricCatalog out;
  for (const auto& w : workloads) {
    std::vector<MetricDescriptor> stored = store.metrics(w);  // name order
    std::vector<MetricDescriptor> ordered;
    if (const WorkloadDeclaration* reg = declared.find(w)) {
      for (const auto& d : reg->metrics) {
        auto it = std::find_if(stored.begin(), stored.end(),
                               [&](const MetricDescriptor& m) { return m.name == d.name; });
        if (it != stored.end()) {
          ordered.push_back(*it);
          stored.erase(it);
        }
      }
    }
    for (auto& m : stored) ordered.push_back(std::move(m));
    out[w] = std::move(ordered);
  }
  return out;
}

}  // namespace nightjar
