// LKP result trees into the store: see results/io/lkp.h.
#include "results/io/lkp.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <iterator>
#include <set>
#include <tuple>

#include "results/formats/json_text.h"
#include "results/io/import_checks.h"
#include "results/io/input_file.h"
#include "results/model/exit_codes.h"
#include "results/model/identity.h"
#include "results/model/text.h"

namespace nightjar {
namespace {

using ordered_json = nlohmann::ordered_json;

// The entries of LKP's direction table (etc/index-perf-all.yaml: 1 higher is
// better, -1 lower) that nightjar knows, with the unit the metric's name
// ends in. docs/data.md "LKP import" lists them; every other metric is
// stored without a descriptor.
struct LkpDirection {
  std::string_view name, unit;
  Direction direction;
};
constexpr LkpDirection kLkpDirections[] = {
    {"netperf.Throughput_Mbps", "Mbps", Direction::higher_is_better},
    {"netperf.Throughput_tps", "trans/s", Direction::higher_is_better},
    {"pft.faults_per_sec_per_cpu", "faults/cpu-sec", Direction::higher_is_better},
    {"pmbench.throughput.aps", "accesses/s", Direction::higher_is_better},
};

constexpr const char* kHow =
    "copy the file again from the LKP result root (LKP writes it when a job ends), or leave "
    "this directory out";

std::string list_names(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < 5; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > 5) out += fmt::format(", ... ({} in all)", names.size());
  return out;
}

// Adds value `v` of `key` as iteration `iteration`, or a warning when it is
// null (non-finite) or impossible for the key's metric.
void add_value(LkpTree& tree, const std::string& source, const std::string& key,
               const ordered_json& v, int iteration, const std::optional<MetricDescriptor>& d) {
  if (v.is_null()) {
    tree.warnings.push_back(
        fmt::format("{}: {} value {} is not a finite number; left out", source, key, iteration));
    return;
  }
  if (!v.is_number())
    throw UsageError(fmt::format(
        "{}: key '{}' holds {} where a number belongs (value {}); every value of {} is a "
        "number, or an array of numbers; {}",
        source, key, v.type_name(), iteration, source, kHow));
  const double value = v.get<double>();
  if (d) {
    if (auto why = impossible_value(*d, value)) {
      tree.warnings.push_back(fmt::format("{}: {} = {} {} (value {}): {}; left out", source, key,
                                          value, d->unit, iteration, *why));
      return;
    }
  }
  tree.samples.push_back({iteration, key, value});
  tree.iterations = std::max(tree.iterations, iteration);
}

}  // namespace

std::optional<MetricDescriptor> lkp_metric(std::string_view name) {
  for (const auto& e : kLkpDirections)
    if (e.name == name)
      return imported_metric(std::string(e.name), std::string(e.unit), e.direction);
  return std::nullopt;
}

LkpTree parse_lkp_values(std::string_view text, const std::string& source, bool matrix) {
  LkpTree tree;
  tree.values_file = source;
  tree.matrix = matrix;
  const ordered_json doc = parse_json_text(text, source, kHow);
  if (!doc.is_object())
    throw UsageError(
        fmt::format("{}: not an LKP {} (the document is {}, not an object of metric: value); {}",
                    source, matrix ? "matrix.json" : "stats.json", doc.type_name(), kHow));
  std::string first;  // matrix: the key whose length every array must have
  std::size_t columns = 0;
  for (const auto& [key, v] : doc.items()) {
    if (matrix) {
      if (!v.is_array())
        throw UsageError(fmt::format(
            "{}: key '{}' is {}, not an array; a result root's matrix.json holds one array "
            "per metric with one value per LKP run; {}",
            source, key, v.type_name(), kHow));
      if (first.empty()) {
        first = key;
        columns = v.size();
      } else if (v.size() != columns) {
        throw UsageError(fmt::format(
            "{}: key '{}' has {} values but '{}' (the first key) has {}: the arrays of a "
            "matrix.json are ragged; every array holds one value per LKP run. Copy the matrix "
            "again as LKP wrote it, or import the runs' own directories (DIR/0 DIR/1 ..., each "
            "with its stats.json); nothing imported",
            source, key, v.size(), first, columns));
      }
      if (key == "stats_source") continue;  // the runs' paths, not a metric
    }
    const auto d = lkp_metric(key);
    const std::size_t before = tree.samples.size();
    if (v.is_array()) {
      int k = 0;
      for (const auto& e : v) add_value(tree, source, key, e, ++k, d);
    } else {
      add_value(tree, source, key, v, 1, d);
    }
    if (tree.samples.size() == before) continue;
    if (d)
      tree.metrics.push_back(*d);
    else
      tree.unknown.push_back(key);
  }
  if (tree.samples.empty())
    throw UsageError(fmt::format("{}: no value to import (an empty {}); {}", source,
                                 matrix ? "matrix" : "stats file", kHow));
  return tree;
}

std::string lkp_job_path(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw UsageError(fmt::format(
        "{}: not a directory; --format lkp imports LKP result directories (a run's, with "
        "job.yaml and stats.json, or a result root's, with matrix.json and its run directories)",
        dir));
  if (fs::exists(fs::path(dir) / "job.yaml", ec)) return (fs::path(dir) / "job.yaml").string();
  std::optional<long> lowest;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() ||
        !std::all_of(name.begin(), name.end(),
                     [](unsigned char c) { return std::isdigit(c) != 0; }) ||
        name.size() > 9)
      continue;
    if (fs::exists(entry.path() / "job.yaml", ec) && (!lowest || std::stol(name) < *lowest))
      lowest = std::stol(name);
  }
  if (!lowest)
    throw UsageError(fmt::format(
        "{}: no job.yaml (neither {}/job.yaml nor DIR/N/job.yaml of a run directory N); the "
        "job names the testcase, testbox and kernel: copy it with the result directory",
        dir, dir));
  return (fs::path(dir) / std::to_string(*lowest) / "job.yaml").string();
}

LkpTree read_lkp_tree(const std::string& dir, const LkpJob& job) {
  namespace fs = std::filesystem;
  static constexpr InputKind kLkpFile{
      .noun = "LKP values file",
      .expect = "an LKP result directory holds stats.json (a run) or matrix.json (a result root)",
      .max_bytes = kMaxLkpFileBytes,
      .cap = "64 MiB",
      .too_large_fix = "import the runs' directories (with their stats.json) instead",
  };
  std::error_code ec;
  const fs::path stats = fs::path(dir) / "stats.json", matrix = fs::path(dir) / "matrix.json";
  const bool per_run = fs::exists(stats, ec);
  if (!per_run && !fs::exists(matrix, ec))
    throw UsageError(
        fmt::format("{}: neither stats.json nor matrix.json; import a run's directory (job.yaml, "
                    "stats.json) or a result root (matrix.json); a gzip'd matrix.json.gz must be "
                    "gunzip'd first",
                    dir));
  InputFile input((per_run ? stats : matrix).string(), kLkpFile);
  LkpTree tree = parse_lkp_values(input.read_all(), input.source(), !per_run);
  tree.dir = dir;
  tree.job = job;
  return tree;
}

namespace {

// The declaration whose LKP table names the tree's testcase and test, or
// UsageError listing the ones that exist.
const WorkloadDeclaration& mapped_workload(const LkpTree& tree, const WorkloadCatalog& catalog) {
  const auto test = tree.job.params.find("test");
  const std::string test_text = test == tree.job.params.end() ? "" : test->second;
  std::vector<std::string> known;
  const WorkloadDeclaration* found = nullptr;
  for (const WorkloadDeclaration* d : catalog.all()) {
    if (!d->lkp) continue;
    known.push_back(fmt::format("{}{} as {}", d->lkp->testcase,
                                d->lkp->test.empty() ? "" : " test=" + d->lkp->test, d->name));
    if (d->lkp->testcase == tree.job.testcase &&
        (d->lkp->test.empty() || d->lkp->test == test_text))
      found = d;
  }
  if (found) return *found;
  throw UsageError(fmt::format(
      "{}: testcase '{}'{}: no nightjar workload measures it, so --as-nightjar cannot store it "
      "as a nightjar run (it maps {}); import this directory without --as-nightjar, which keeps "
      "LKP's names; nothing imported",
      tree.job.source, tree.job.testcase,
      test_text.empty() ? "" : fmt::format(" with test '{}'", test_text), join(known, "; ")));
}

// The workload's cell of the tree's job: each LKP key by its rule, then the
// table's fixed values, then the workload's defaults.
std::map<std::string, ParamValue> mapped_cell(const LkpTree& tree, const WorkloadDeclaration& w) {
  const LkpMapping& m = *w.lkp;
  std::map<std::string, std::string> texts, from;  // parameter -> text, -> LKP key
  for (const auto& [param, text] : m.fixed) texts[param] = text;
  for (const auto& [key, value] : tree.job.params) {
    auto rule = std::find_if(m.params.begin(), m.params.end(),
                             [&](const LkpParamMap& p) { return p.lkp == key; });
    if (rule == m.params.end()) {
      std::vector<std::string> keys;
      for (const auto& p : m.params) keys.push_back(p.lkp);
      throw UsageError(fmt::format(
          "{}: {}: '{}' is not one of the LKP keys {} takes ({}); it may change what was "
          "measured, so the tree is not stored as a {} run: import it without --as-nightjar, "
          "which keeps LKP's names; nothing imported",
          tree.job.source, key, value, w.name, join(keys), w.name));
    }
    if (rule->rule == LkpParamRule::ignored) continue;
    std::string text = value;
    if (rule->rule == LkpParamRule::percent_cpus && text.ends_with('%')) text += "cpus";
    texts[rule->param] = text;
    from[rule->param] = key;
  }
  const MachineFacts facts{.mem_total_bytes = 0, .cpus = std::max(tree.job.nr_cpu, 1u)};
  std::map<std::string, ParamValue> cell;
  for (const ParamDescriptor& d : w.params) {
    auto it = texts.find(d.name);
    const std::string text = it == texts.end() ? d.default_value : it->second;
    // Relative to a figure of the LKP testbox that the job does not record:
    // the text names the cell, the number is unknown.
    if ((text.ends_with("%cpus") && tree.job.nr_cpu == 0) || text.ends_with("%mem") ||
        (text.empty() && d.type == ParamType::text)) {
      cell[d.name] = ParamValue{text, 0};
      continue;
    }
    try {
      cell[d.name] = parse_param(d, text, facts);
    } catch (const ParamError& e) {
      const auto key = from.find(d.name);
      throw UsageError(fmt::format(
          "{}: {}: '{}' is not a value of {}'s parameter {}: {}; import the directory without "
          "--as-nightjar, which keeps LKP's names; nothing imported",
          tree.job.source, key == from.end() ? d.name : key->second, text, w.name, d.name,
          e.message));
    }
  }
  return cell;
}

}  // namespace

LkpTree lkp_tree_as_nightjar(LkpTree tree, const WorkloadCatalog& catalog) {
  const WorkloadDeclaration& w = mapped_workload(tree, catalog);
  const LkpMapping& m = *w.lkp;
  tree.cell = mapped_cell(tree, w);
  std::vector<SampleRow> kept;
  std::set<std::string> left_out, metrics;
  tree.iterations = 0;
  for (SampleRow s : tree.samples) {
    auto map = std::find_if(m.metrics.begin(), m.metrics.end(),
                            [&](const LkpMetricMap& e) { return e.lkp == s.metric; });
    const MetricDescriptor* d = map == m.metrics.end() ? nullptr : w.metric(map->metric);
    if (!d) {
      left_out.insert(s.metric);
      continue;
    }
    if (auto why = impossible_value(*d, s.value)) {
      tree.warnings.push_back(fmt::format("{}: {} = {} {} (value {}, {}'s {}): {}; left out",
                                          tree.values_file, s.metric, s.value, d->unit, s.iteration,
                                          w.name, d->name, *why));
      continue;
    }
    s.metric = d->name;
    metrics.insert(d->name);
    tree.iterations = std::max(tree.iterations, s.iteration);
    kept.push_back(std::move(s));
  }
  if (kept.empty()) {
    std::vector<std::string> names;
    for (const auto& e : m.metrics) names.push_back(e.lkp + " (" + e.metric + ")");
    throw UsageError(
        fmt::format("{}: no value of the LKP metrics {} stores ({}); import the directory without "
                    "--as-nightjar, which keeps every LKP metric; nothing imported",
                    tree.values_file, w.name, join(names)));
  }
  if (!left_out.empty())
    tree.warnings.push_back(
        fmt::format("{}: {} LKP metric(s) that {} has no metric for left out (import without "
                    "--as-nightjar keeps them): {}",
                    tree.values_file, left_out.size(), w.name,
                    list_names(std::vector<std::string>(left_out.begin(), left_out.end()))));
  tree.samples = std::move(kept);
  tree.metrics.clear();
  for (const MetricDescriptor& d : w.metrics)
    if (metrics.contains(d.name)) tree.metrics.push_back(d);
  tree.unknown.clear();
  const auto test = tree.job.params.find("test");
  tree.lkp_test =
      tree.job.testcase + (test == tree.job.params.end() ? "" : " test=" + test->second);
  tree.job.testcase = w.name;
  tree.as_nightjar = true;
  return tree;
}

namespace {

std::string kernel_release(const LkpJob& job) {
  const std::string base = std::filesystem::path(job.kernel).filename().string();
  return base.starts_with("vmlinuz-") ? base.substr(8) : "";
}

// A tree's identity: where it was measured and what (docs/data.md "Importing
// twice"): the testbox, commit, testcase, cell and every sample.
std::string lkp_identity(const LkpTree& tree) {
  std::string text = fmt::format("{}\n{}\n{}\n{}\n", tree.job.testbox, tree.job.commit,
                                 tree.job.kernel, tree.job.testcase);
  for (const auto& [k, v] : tree.job.params) text += k + "=" + v + "\n";
  for (const auto& s : tree.samples)
    fmt::format_to(std::back_inserter(text), "{}\t{}\t{}\n", s.iteration, s.metric, s.value);
  return fmt::format("lkp testbox={} commit={} values={}", tree.job.testbox,
                     tree.job.commit.empty() ? "unknown" : tree.job.commit, fnv1a64_hex(text));
}

// A digest of what an import stores: the identity and the labels.
std::string lkp_digest(const ImportedRun& run) {
  return fnv1a64_hex(fmt::format("{}\n{}\n{}\n{}\n{}\n{}\n", run.identity, run.job, run.workload,
                                 run.variant, run.build, run.kernel.release));
}

ImportedRun imported_run(const LkpTree& tree, const LkpImportOptions& options) {
  ImportedRun run;
  run.job = !options.job.empty()                              ? options.job
            : tree.as_nightjar || tree.job.job_origin.empty() ? tree.job.testcase
                                                              : tree.job.job_origin;
  run.workload = tree.job.testcase;
  run.variant = options.variant;
  run.build = options.build.empty() ? tree.job.commit : options.build;
  if (tree.as_nightjar) {
    run.params = tree.cell;
  } else {  // LKP's own keys, as text
    for (const auto& [name, text] : tree.job.params) {
      double number = 0;
      auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
      if (ec != std::errc() || p != text.data() + text.size()) number = 0;
      run.params[name] = ParamValue{text, number};
    }
  }
  run.kernel.release = options.kernel.empty() ? kernel_release(tree.job) : options.kernel;
  run.testbox.hostname = tree.job.testbox;
  run.testbox.cpus = tree.job.nr_cpu;
  run.match_by_name = true;
  run.iterations = tree.iterations;
  run.samples = tree.samples;
  std::sort(run.samples.begin(), run.samples.end(), [](const SampleRow& a, const SampleRow& b) {
    return std::tie(a.iteration, a.metric) < std::tie(b.iteration, b.metric);
  });
  run.context["import.format"] = "lkp";
  run.context["import.file"] = tree.values_file;
  if (tree.as_nightjar) run.context["lkp.as_nightjar"] = tree.lkp_test;
  for (const auto& [fact, value] :
       {std::pair{"lkp.commit", &tree.job.commit}, std::pair{"lkp.rootfs", &tree.job.rootfs},
        std::pair{"lkp.kconfig", &tree.job.kconfig}, std::pair{"lkp.compiler", &tree.job.compiler},
        std::pair{"lkp.kernel", &tree.job.kernel}})
    if (!value->empty()) run.context[fact] = *value;
  run.identity = lkp_identity(tree);
  run.digest = lkp_digest(run);
  return run;
}

}  // namespace

LkpImportResult import_lkp(ResultsStore& store, const std::vector<LkpTree>& trees,
                           const LkpImportOptions& options) {
  LkpImportResult result;
  ResultsStore::Transaction tx(store);
  for (const LkpTree& tree : trees) {
    const ImportedRun run = imported_run(tree, options);
    if (auto stored =
            stored_import(store, run.identity, run.digest, tree.dir,
                          fmt::format("this result (testbox {}, commit {})", tree.job.testbox,
                                      tree.job.commit.empty() ? "unknown" : tree.job.commit),
                          "--job/--variant/--build/--kernel")) {
      result.already_stored.emplace_back(tree.dir, *stored);
      continue;
    }
    refuse_other_descriptors(store, run.workload, tree.metrics, tree.values_file,
                             "LKP's direction table");
    store.add_missing_metrics(run.workload, tree.metrics);
    result.run_ids.push_back(store.insert_imported_run(run));
    result.samples += run.samples.size();
    if (!tree.unknown.empty())
      result.notes.push_back(fmt::format(
          "warning: {}: {} metric(s) not in LKP's direction table stored without a direction "
          "(compare reads them as higher is better, Amean): {}",
          tree.values_file, tree.unknown.size(), list_names(tree.unknown)));
    for (const auto& w : tree.warnings) result.notes.push_back("warning: " + w);
  }
  tx.commit();
  return result;
}

}  // namespace nightjar
