// Job files: loading and shape checks (load_job), --set parsing (parse_set)
// and matrix expansion (expand_matrix). See harness/job/job.h.
#include "harness/job/job.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <optional>
#include <string_view>
#include <unordered_set>

#include <fmt/format.h>

#include "harness/job/yaml_parse.h"
#include "results/io/input_file.h"
#include "results/model/exit_codes.h"
#include "results/model/text.h"
#include "workloads/sys/monitor_set.h"
#include "workloads/sys/signals.h"

namespace nightjar {

namespace {

constexpr const char* kKnownKeys =
    "workload, description, params, iterations, warmup, variant, cgroup, variants, min_effect, "
    "vm, monitors";
constexpr std::size_t kMaxCells = 1'000'000;

// ---- message helpers ---------------------------------------------------------

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

// The closest of `candidates` to a misspelt `word` (at most 2 edits), or "".
std::string closest(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_d = 3;
  for (const auto& c : candidates) {
    std::size_t d = edit_distance(word, c);
    if (d < best_d && d < std::max<std::size_t>(c.size(), 1)) {
      best_d = d;
      best = c;
    }
  }
  return best;
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  std::string c = closest(word, candidates);
  return c.empty() ? std::string() : fmt::format(" (did you mean '{}'?)", c);
}

// ---- YAML helpers ------------------------------------------------------------

// yaml-cpp turns the plain scalars `null`, `Null`, `NULL` and `~` into Null
// nodes with no text, which would lose `workload: null`. The node's mark
// points at the scalar in the source, so the literal is recovered from there;
// a Null node whose mark does not point at such a literal is an absent value
// (`key:` with nothing after it).
std::optional<std::string> null_literal(const YAML::Node& node, const std::string& source) {
  YAML::Mark m = node.Mark();
  if (m.is_null() || m.pos < 0 || static_cast<std::size_t>(m.pos) >= source.size())
    return std::nullopt;
  std::string_view rest = std::string_view(source).substr(static_cast<std::size_t>(m.pos));
  for (std::string_view lit : {"null", "Null", "NULL", "~"}) {
    if (rest.substr(0, lit.size()) != lit) continue;
    if (rest.size() == lit.size()) return std::string(lit);
    char next = rest[lit.size()];
    if (std::strchr(" \t\r\n#,]}", next) != nullptr) return std::string(lit);
  }
  return std::nullopt;
}

// The text of a scalar node; nullopt for an absent value. Throws for a list
// or mapping where a scalar is required.
std::optional<std::string> scalar_text(const YAML::Node& node, const std::string& source,
                                       const std::string& path, int line, std::string_view field,
                                       std::string_view expected) {
  if (node.IsScalar()) return node.Scalar();
  if (!node.IsDefined() || node.IsNull()) return null_literal(node, source);
  fail_job_field(
      path, line, field,
      fmt::format("expected {}, found {}; write {}", expected, kind_name(node), expected));
}

// A percentage such as `2%` or `2` (>= 0, finite) of `min_effect:`.
double parse_percent_field(const YAML::Node& node, const std::string& source,
                           const std::string& path, int line, std::string_view field) {
  const std::string expected = "a percentage such as 2%";
  std::optional<std::string> text = scalar_text(node, source, path, line, field, expected);
  std::string t = text.value_or("");
  if (!t.empty() && t.back() == '%') t.pop_back();
  double v = -1;
  try {
    std::size_t used = 0;
    v = std::stod(t, &used);
    if (used != t.size()) v = -1;
  } catch (const std::exception&) {
    v = -1;
  }
  if (!(v >= 0.0) || !std::isfinite(v))
    fail_job_field(
        path, line, field,
        fmt::format("'{}' is not a percentage >= 0; write {}", text.value_or(""), expected));
  return v;
}

// `min_effect: 2%` (every metric) or a mapping `min_effect: {default: 2%,
// faults_per_sec: 1%}`.
std::map<std::string, double> parse_min_effect(const YAML::Node& node, const std::string& source,
                                               const std::string& path, int line) {
  std::map<std::string, double> out;
  if (!node.IsMap()) {
    out[""] = parse_percent_field(node, source, path, line, "min_effect");
    return out;
  }
  for (const auto& kv : node) {
    const std::string metric = kv.first.Scalar();
    out[metric == "default" ? "" : metric] = parse_percent_field(
        kv.second, source, path, line_of(kv.second, line), "min_effect." + metric);
  }
  return out;
}

int parse_int_field(const YAML::Node& node, const std::string& source, const std::string& path,
                    int line, std::string_view field, int min, int example) {
  const std::string expected =
      fmt::format("a whole number of at least {} such as {}", min, example);
  std::optional<std::string> text = scalar_text(node, source, path, line, field, expected);
  if (!text) fail_job_field(path, line, field, fmt::format("no value; write {}", expected));
  std::string_view t = *text;
  bool neg = !t.empty() && t.front() == '-';
  std::string_view digits = neg ? t.substr(1) : t;
  bool ok = !digits.empty() &&
            std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!ok)
    fail_job_field(path, line, field,
                   fmt::format("'{}' is not a whole number; write {}", t, expected));
  long long v = 0;
  for (char c : digits) {
    v = v * 10 + (c - '0');
    if (v > std::numeric_limits<int>::max())
      fail_job_field(path, line, field, fmt::format("'{}' is too large; write {}", t, expected));
  }
  if (neg) v = -v;
  if (v < min)
    fail_job_field(path, line, field,
                   fmt::format("{} is below the minimum {}; write {}", v, min, expected));
  return static_cast<int>(v);
}

// The job file's text: a regular file of at most kMaxJobFileBytes, checked
// before it is read (results/io/input_file.h), so /dev/zero, a FIFO or a
// directory is refused at once instead of read until memory runs out or
// blocking forever.
std::string read_job_text(const std::string& path) {
  static constexpr InputKind kJobFile{
      .noun = "job file",
      .expect = "a job is a YAML file such as jobs/pft-quick.yaml",
      .max_bytes = kMaxJobFileBytes,
      .cap = "1 MiB",
      .too_large_fix = "a job file is a few lines of YAML: check that this is the job you meant",
  };
  return InputFile(path, kJobFile).read_all();
}

// The 1-based line of the `---` that starts the second YAML document
// (`second` is its root node), for the "one document" error.
// The line of the `---` (or the first content after a `...`) that starts a
// second YAML document, 0 when the text holds one document. Document
// markers stand at column 0 (YAML 1.2 §9.1); a `---` before any content only
// opens the first document. Blank lines, comments and directives (`%`) are
// not content.
int second_document_marker(const std::string& source) {
  bool content = false, ended = false;
  int line = 1;
  for (std::size_t i = 0; i < source.size(); ++line) {
    std::size_t end = source.find('\n', i);
    if (end == std::string::npos) end = source.size();
    std::string_view text(source.data() + i, end - i);
    i = end + 1;
    auto marker = [&](std::string_view m) {
      return text.substr(0, 3) == m && (text.size() == 3 || std::strchr(" \t\r", text[3]));
    };
    if (marker("---")) {
      if (content || ended) return line;
      // "--- value" on the marker's line is content of the first document.
      content = text.find_first_not_of(" \t\r", 3) != std::string_view::npos &&
                text[text.find_first_not_of(" \t\r", 3)] != '#';
      continue;
    }
    if (marker("...")) {
      ended = content;
      continue;
    }
    const std::size_t first = text.find_first_not_of(" \t\r");
    if (first == std::string_view::npos || text[first] == '#' || (first == 0 && text[0] == '%'))
      continue;
    if (ended) return line;
    content = true;
  }
  return 0;
}

// Applies YAML merge keys (`<<: *defaults`, `<<: [*a, *b]`) in place, since
// yaml-cpp 0.7 keeps `<<` as a plain key: the keys of the merged mappings
// that the mapping does not set itself are added (an earlier mapping of a
// list wins), as the YAML 1.1 merge type says (yaml.org/type/merge.html).
// Nodes are shared, so lines in errors still point at the source. `budget`
// bounds the nodes visited (aliases can make a small file a huge tree).
void apply_merge_keys(YAML::Node node, const std::string& path, int depth, std::size_t& budget) {
  if (depth > 64 || budget == 0)
    fail_job_field(
        path, line_of(node, 0), "job",
        "nested or aliased too deeply (more than 64 levels or 100000 nodes); write the job "
        "without that many aliases");
  --budget;
  if (node.IsSequence()) {
    for (std::size_t i = 0; i < node.size(); ++i)
      apply_merge_keys(node[i], path, depth + 1, budget);
    return;
  }
  if (!node.IsMap()) return;
  std::vector<std::pair<YAML::Node, YAML::Node>> entries;
  for (const auto& kv : node) entries.emplace_back(kv.first, kv.second);
  std::vector<YAML::Node> sources;
  int merges = 0, merge_line = 0;
  for (const auto& [k, v] : entries) {
    if (!k.IsScalar() || k.Scalar() != "<<") {
      apply_merge_keys(v, path, depth + 1, budget);
      continue;
    }
    merge_line = line_of(k, 0);
    if (++merges > 1)
      fail_job_field(path, merge_line, "<<",
                     "given twice in one mapping; keep one, with a list [*a, *b] to merge several");
    const std::string how =
        "merge a mapping: write `<<: *NAME` with `&NAME` on a mapping (under a top-level key "
        "starting with x-), or a list of them such as `<<: [*a, *b]`";
    if (v.IsMap()) {
      sources.push_back(v);
    } else if (v.IsSequence()) {
      for (const auto& element : v) {
        if (!element.IsMap())
          fail_job_field(path, line_of(element, merge_line), "<<",
                         fmt::format("a list element is {}; {}", kind_name(element), how));
        sources.push_back(element);
      }
    } else {
      fail_job_field(path, merge_line, "<<", fmt::format("found {}; {}", kind_name(v), how));
    }
  }
  if (merges == 0) return;
  for (auto& src : sources) apply_merge_keys(src, path, depth + 1, budget);
  node.remove("<<");
  std::unordered_set<std::string> present;
  for (const auto& [k, v] : entries)
    if (k.IsScalar() && k.Scalar() != "<<") present.insert(k.Scalar());
  for (const auto& src : sources)
    for (const auto& kv : src) {
      if (!kv.first.IsScalar() || !present.insert(kv.first.Scalar()).second) continue;
      node.force_insert(kv.first, kv.second);
    }
}

// A job file's problems, collected so that all are reported at once (at most
// kMaxJobErrors; each a complete `path:line: field: ...` message).
class JobErrors {
 public:
  // Runs `check`; a UsageError it throws is kept instead of ending the parse.
  template <class F>
  void check(F&& check) {
    try {
      check();
    } catch (const UsageError& e) {
      messages_.emplace_back(e.what());
    }
  }
  // Throws one UsageError holding every problem, one per line.
  void throw_if_any(const std::string& path) const {
    if (messages_.empty()) return;
    std::string text = messages_.front();
    const std::size_t shown = std::min(messages_.size(), kMaxJobErrors);
    for (std::size_t i = 1; i < shown; ++i) text += "\nnightjar: error: " + messages_[i];
    if (messages_.size() > shown)
      text += fmt::format("\nnightjar: error: {}: {} more problems not shown; fix these first",
                          path, messages_.size() - shown);
    throw UsageError(text);
  }

 private:
  std::vector<std::string> messages_;
};

std::vector<std::string> workload_names() {
  std::vector<std::string> names;
  for (const auto& w : workload_registry()) names.emplace_back(w->name());
  return names;
}

// `monitors: [perf-stat, meminfo]`: names of workloads/sys/monitor_set.h's
// catalog, each once; `[]` records no optional monitor.
std::vector<std::string> parse_monitors(const YAML::Node& node, const std::string& path,
                                        int key_line) {
  std::vector<std::string> known;
  for (const auto& m : monitor_catalog()) known.emplace_back(m.name);
  const std::string example =
      "`monitors: [perf-stat, meminfo]` (known: " + join(known, ", ") + "; docs/monitors.md)";
  if (!node.IsSequence())
    fail_job_field(path, line_of(node, key_line), "monitors",
                   fmt::format("expected a list of monitor names, found {}; write {}",
                               kind_name(node), example));
  std::vector<std::string> out;
  for (const auto& item : node) {
    const int line = line_of(item, key_line);
    const std::string name = item.IsScalar() ? item.Scalar() : std::string();
    if (!find_monitor(name))
      fail_job_field(path, line, "monitors",
                     fmt::format("unknown monitor '{}'{}; write {}", name,
                                 did_you_mean(name, known), example));
    if (std::find(out.begin(), out.end(), name) != out.end())
      fail_job_field(path, line, "monitors", fmt::format("'{}' given twice; keep one", name));
    out.push_back(name);
  }
  return out;
}

// `vm: {cgroup2_options: OPTS}`: settings of the qemu guest (--kernel).
void parse_vm(JobFile& job, const YAML::Node& node, const std::string& source, int key_line) {
  const std::string example = "`vm: {cgroup2_options: memory_recursiveprot}`";
  if (!node.IsMap())
    fail_job_field(job.path, line_of(node, key_line), "vm",
                   fmt::format("expected a mapping, found {}; write {}, or remove the key",
                               kind_name(node), example));
  for (const auto& entry : node) {
    const int kline = line_of(entry.first, key_line);
    const std::string key = entry.first.IsScalar() ? entry.first.Scalar() : std::string();
    if (key != "cgroup2_options")
      fail_job_field(job.path, kline, "vm." + key,
                     fmt::format("unknown key{}; the key of `vm:` is cgroup2_options, as in {}",
                                 did_you_mean(key, {"cgroup2_options"}), example));
    const std::string expected =
        "a comma list of cgroup2 mount options such as memory_recursiveprot, or \"\" for the "
        "kernel's defaults";
    std::optional<std::string> text =
        scalar_text(entry.second, source, job.path, kline, "vm.cgroup2_options", expected);
    if (!text)
      fail_job_field(job.path, kline, "vm.cgroup2_options",
                     fmt::format("no value; write {}", expected));
    if (std::string problem = cgroup2_options_problem(*text); !problem.empty())
      fail_job_field(job.path, line_of(entry.second, kline), "vm.cgroup2_options", problem);
    job.vm_cgroup2_options = *text;
  }
}

void load_params(JobFile& job, const YAML::Node& node, const std::string& source, int key_line,
                 JobErrors& errors) {
  if (!node.IsDefined() || node.IsNull()) return;  // `params:` with nothing: no parameters
  if (!node.IsMap())
    fail_job_field(
        job.path, key_line, "params",
        fmt::format("expected a mapping of parameter names to values, found {}; write "
                    "`params:` followed by indented `NAME: VALUE` lines such as `clients: [1, 2]`",
                    kind_name(node)));
  for (const auto& entry : node)
    errors.check([&] {
      int kline = line_of(entry.first, key_line);
      if (!entry.first.IsScalar())
        fail_job_field(
            job.path, kline, "params",
            fmt::format("a parameter name must be a plain name, found {}; write `NAME: VALUE`",
                        kind_name(entry.first)));
      const std::string name = entry.first.Scalar();
      const std::string field = "params." + name;
      if (job.params.count(name))
        fail_job_field(
            job.path, kline, field,
            fmt::format("given twice (first on line {}); keep one, with a list [a, b] for several "
                        "values",
                        job.param_lines[name]));
      const YAML::Node& value = entry.second;
      std::vector<JobValue> values;
      const std::string expected =
          fmt::format("a value such as `{}: 4` or a list such as `{}: [1, 2]`", name, name);
      if (value.IsSequence()) {
        if (value.size() == 0)
          fail_job_field(job.path, kline, field,
                         fmt::format("empty list; write at least one value, {}", expected));
        for (const auto& element : value) {
          int eline = line_of(element, kline);
          if (element.IsMap() || element.IsSequence())
            fail_job_field(job.path, eline, field,
                           fmt::format("a list element is {}; lists hold plain values, write {}",
                                       kind_name(element), expected));
          std::optional<std::string> text =
              scalar_text(element, source, job.path, eline, field, expected);
          if (!text)
            fail_job_field(job.path, eline, field,
                           fmt::format("empty list element; write {}", expected));
          values.push_back(JobValue{*text, eline});
        }
      } else if (value.IsMap()) {
        fail_job_field(
            job.path, kline, field,
            fmt::format("a nested mapping is not a parameter value; write {}", expected));
      } else {
        std::optional<std::string> text =
            scalar_text(value, source, job.path, kline, field, expected);
        // An absent value's mark points past the key; report the key's line.
        if (!text)
          fail_job_field(job.path, kline, field,
                         fmt::format("no value; write {}, or remove the key", expected));
        values.push_back(JobValue{*text, line_of(value, kline)});
      }
      job.params.emplace(name, std::move(values));
      job.param_lines.emplace(name, kline);
    });
}

// The job file's one YAML document (Null when the file is empty), with its
// merge keys applied.
YAML::Node load_document(const std::string& source, const std::string& path) {
  YAML::Node root;
  // A second document is found in the text, not with YAML::LoadAll, which
  // never returns on some malformed second documents (yaml-cpp 0.7; found
  // by fuzz/fuzz_job.cpp: "workload: fake\n---\n,'").
  if (const int line = second_document_marker(source); line > 0)
    fail_job_field(
        path, line, "---",
        "a second YAML document; a job file holds one job: remove this `---` and what follows, "
        "or put that job in a file of its own");
  try {
    root = YAML::Load(source);
  } catch (const YAML::ParserException& e) {
    int line = e.mark.is_null() || e.mark.line < 0 ? 0 : e.mark.line + 1;
    std::string where = line > 0 ? fmt::format("{}:{}", path, line) : path;
    throw UsageError(fmt::format("{}: syntax error: {}; fix the YAML", where, e.msg));
  }
  std::size_t budget = 100000;
  apply_merge_keys(root, path, 0, budget);
  return root;
}

// The value of the job's `workload:` key (on line `kline`): the name of a
// registered workload. UsageError when it is empty or unknown.
std::string parse_workload_name(const YAML::Node& value, const std::string& source,
                                const std::string& path, int kline) {
  std::optional<std::string> name = scalar_text(value, source, path, kline, "workload",
                                                "a workload name such as `workload: pft`");
  std::vector<std::string> names = workload_names();
  if (!name || name->empty())
    fail_job_field(
        path, kline, "workload",
        fmt::format("no workload named; write `workload: NAME` with one of {} (run `nightjar "
                    "list` to see them)",
                    join(names)));
  if (find_workload(*name) == nullptr)
    fail_job_field(
        path, kline, "workload",
        fmt::format("unknown workload '{}'{}; run `nightjar list` to see the workloads ({})", *name,
                    did_you_mean(*name, names), join(names)));
  return *name;
}

// The value of the job's `variant:` key (on line `kline`): a label
// (docs/input.md "Labels"). UsageError when it is empty or not a label.
std::string parse_variant_label(const YAML::Node& value, const std::string& source,
                                const std::string& path, int kline) {
  std::optional<std::string> v = scalar_text(value, source, path, kline, "variant",
                                             "a variant label such as `variant: vanilla`");
  if (!v || v->empty())
    fail_job_field(path, kline, "variant",
                   "no label; write a variant label such as `variant: vanilla`, or remove the key");
  if (std::string problem = label_problem(*v); !problem.empty())
    fail_job_field(
        path, kline, "variant",
        fmt::format("'{}' {}; a label is 1 to {} bytes of printable UTF-8 (docs/input.md "
                    "\"Labels\")",
                    echo_input(*v), problem, kMaxLabelBytes));
  return *v;
}

// With `variants:`, `variant:` (on line `line`) names the default selection:
// UsageError when it is not one of them.
void check_default_variant(const JobFile& job, int line) {
  if (job.variants.empty() || job.variant.empty()) return;
  std::vector<std::string> names;
  for (const auto& v : job.variants) names.push_back(v.name);
  if (std::find(names.begin(), names.end(), job.variant) == names.end())
    fail_job_field(job.path, line, "variant",
                   fmt::format("'{}' is not one of the job's variants{}; write one of {} or remove "
                               "`variant:` to run them all",
                               job.variant, did_you_mean(job.variant, names), join(names)));
}

}  // namespace

JobFile load_job(const std::string& path) {
  return parse_job(read_job_text(path), path);
}

JobFile parse_job(const std::string& source, const std::string& path) {
  const YAML::Node root = load_document(source, path);

  JobFile job;
  job.path = path;
  job.name = std::filesystem::path(path).stem().string();

  if (!root.IsDefined() || root.IsNull())
    fail_job_field(
        path, 0, "workload",
        "the job file is empty; write at least `workload: NAME` (run `nightjar list` to see the "
        "workloads)");
  if (!root.IsMap())
    fail_job_field(
        path, line_of(root, 1), "job",
        fmt::format("expected a mapping of keys ({}), found {}; write `workload: NAME` and the "
                    "other keys one per line",
                    kKnownKeys, kind_name(root)));

  std::map<std::string, int> seen;
  bool have_workload = false;
  YAML::Node cgroup_node, variants_node;  // parsed once both are known
  JobErrors errors;
  for (const auto& entry : root)
    errors.check([&] {
      int kline = line_of(entry.first, 0);
      if (!entry.first.IsScalar())
        fail_job_field(path, kline, "job",
                       fmt::format("a key must be a plain name, found {}; known keys are {}",
                                   kind_name(entry.first), kKnownKeys));
      const std::string key = entry.first.Scalar();
      const YAML::Node& value = entry.second;
      // x-NAME: free for anchors (`x-defaults: &d {...}`), as docker compose does.
      if (key.rfind("x-", 0) == 0) return;
      if (auto it = seen.find(key); it != seen.end())
        fail_job_field(path, kline, key,
                       fmt::format("given twice (first on line {}); keep one", it->second));
      seen.emplace(key, kline);

      if (key == "workload") {
        job.workload = parse_workload_name(value, source, path, kline);
        job.workload_line = kline;
        have_workload = true;
      } else if (key == "description") {
        job.description =
            scalar_text(value, source, path, kline, key, "one line of text").value_or("");
      } else if (key == "variant") {
        job.variant = parse_variant_label(value, source, path, kline);
      } else if (key == "iterations") {
        job.iterations = parse_int_field(value, source, path, kline, key, 1, 5);
      } else if (key == "warmup") {
        job.warmup = parse_int_field(value, source, path, kline, key, 0, 1);
      } else if (key == "min_effect") {
        job.min_effect = parse_min_effect(value, source, path, kline);
      } else if (key == "params") {
        load_params(job, value, source, kline, errors);
      } else if (key == "cgroup") {
        if (!value.IsMap())
          fail_job_field(
              path, line_of(value, kline), key,
              fmt::format("expected a mapping, found {}; write `cgroup:` followed by indented "
                          "settings, or remove the key",
                          kind_name(value)));
        cgroup_node = value;
        job.cgroup_line = kline;
      } else if (key == "variants") {
        variants_node = value;
        job.variants_line = kline;
      } else if (key == "vm") {
        job.vm_line = kline;
        parse_vm(job, value, source, kline);
      } else if (key == "monitors") {
        job.monitors = parse_monitors(value, path, kline);
      } else {
        std::vector<std::string> known = {"workload",   "description", "params",  "iterations",
                                          "warmup",     "variant",     "cgroup",  "variants",
                                          "min_effect", "vm",          "monitors"};
        fail_job_field(
            path, kline, key,
            fmt::format("unknown key{}; known keys are {}", did_you_mean(key, known), kKnownKeys));
      }
    });
  if (!have_workload && !seen.count("workload"))
    errors.check([&] {
      fail_job_field(path, 0, "workload",
                     "missing; add `workload: NAME` (run `nightjar list` to see the workloads)");
    });
  errors.check([&] { job.cgroup = parse_cgroup_spec(cgroup_node, path); });
  if (job.variants_line > 0)
    errors.check([&] {
      job.variants = parse_variants(variants_node, path, job.variants_line, cgroup_node);
    });
  errors.throw_if_any(path);
  check_default_variant(job, seen["variant"]);
  return job;
}

std::vector<std::string> job_monitors(const JobFile& job) {
  return job.monitors ? *job.monitors : default_monitors();
}

std::string cgroup2_options_problem(std::string_view options) {
  if (options.empty()) return "";
  std::vector<std::string> known(std::begin(kCgroup2MountOptions), std::end(kCgroup2MountOptions));
  const std::string fix =
      fmt::format("write a comma list of {}, or \"\" for the kernel's defaults", join(known, ", "));
  std::vector<std::string> seen;
  for (const std::string& item : split(options, ',')) {
    if (item.empty())
      return fmt::format("'{}' has an empty item (two commas, or one at an end); {}",
                         echo_input(options), fix);
    if (std::find(known.begin(), known.end(), item) == known.end())
      return fmt::format("'{}' is not a cgroup2 mount option{}; {}", echo_input(item),
                         did_you_mean(item, known), fix);
    if (std::find(seen.begin(), seen.end(), item) != seen.end())
      return fmt::format("'{}' is given twice; name each option once", item);
    seen.push_back(item);
  }
  return "";
}

void require_label(std::string_view option, std::string_view value) {
  const std::string problem = label_problem(value);
  if (!problem.empty())
    throw UsageError(fmt::format(
        "{} '{}': {}; a label is 1 to {} bytes of printable UTF-8 (docs/input.md \"Labels\")",
        option, echo_input(value), problem, kMaxLabelBytes));
}

SetOverride parse_set(const std::string& arg) {
  constexpr const char* kExample =
      "write --set NAME=VALUE or NAME=V1,V2, such as --set clients=1,2";
  std::size_t eq = arg.find('=');
  if (eq == std::string::npos)
    throw UsageError(fmt::format("--set '{}': missing '='; {}", arg, kExample));
  SetOverride out;
  out.key = std::string(trim(std::string_view(arg).substr(0, eq)));
  if (out.key.empty())
    throw UsageError(fmt::format("--set '{}': missing the parameter name; {}", arg, kExample));
  std::string_view list = trim(std::string_view(arg).substr(eq + 1));
  if (list.size() >= 2 && list.front() == '[' && list.back() == ']')
    list = trim(list.substr(1, list.size() - 2));
  if (list.empty())
    throw UsageError(
        fmt::format("--set {}: empty value; write --set {}=VALUE or a list such as "
                    "--set {}=V1,V2",
                    out.key, out.key, out.key));
  std::size_t start = 0;
  while (true) {
    std::size_t comma = list.find(',', start);
    std::string_view item =
        trim(list.substr(start, comma == std::string_view::npos ? list.npos : comma - start));
    if (item.empty())
      throw UsageError(
          fmt::format("--set {}: empty value in '{}'; separate values with single "
                      "commas, such as --set {}=1,2",
                      out.key, list, out.key));
    out.values.emplace_back(item);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

namespace {

using Origin = MatrixValue::Origin;

// "path:line: params.NAME", "--set NAME" or "path: params.NAME": the prefix of
// an error about one value.
[[noreturn]] void fail_value(const JobFile& job, const std::string& name, const Origin& origin,
                             const std::string& message) {
  if (origin.kind == Origin::Kind::set)
    throw UsageError(fmt::format("--set {}: {}", name, message));
  fail_job_field(job.path, origin.kind == Origin::Kind::job ? origin.line : 0, "params." + name,
                 message);
}

}  // namespace

Matrix plan_matrix(const JobFile& job, const Workload& workload,
                   const std::vector<SetOverride>& overrides, const MachineFacts& machine) {
  const std::vector<ParamDescriptor> descs = workload.params();
  std::map<std::string, const ParamDescriptor*> by_name;
  std::vector<std::string> names;
  for (const auto& d : descs) {
    by_name.emplace(d.name, &d);
    names.push_back(d.name);
  }
  const std::string wname(workload.name());
  auto unknown = [&](const std::string& name) {
    if (names.empty())
      return fmt::format("unknown parameter; {} has no parameters, remove it", wname);
    return fmt::format(
        "unknown parameter{}; {}'s parameters are {} (run `nightjar list` for "
        "their meaning)",
        did_you_mean(name, names), wname, join(names));
  };

  // name -> (text, origin) in the order given, before parsing.
  struct RawValue {
    std::string text;
    Origin origin;
  };
  std::map<std::string, std::vector<RawValue>> raw;
  JobErrors errors;  // every unknown name and bad value, not only the first
  for (const auto& [name, values] : job.params)
    errors.check([&] {
      int key_line = 0;
      if (auto it = job.param_lines.find(name); it != job.param_lines.end())
        key_line = it->second;
      else if (!values.empty())
        key_line = values.front().line;
      if (!by_name.count(name)) fail_job_field(job.path, key_line, "params." + name, unknown(name));
      if (values.empty())
        fail_job_field(job.path, key_line, "params." + name, "no value; write a value or a list");
      auto& axis = raw[name];
      for (const auto& v : values)
        axis.push_back(RawValue{v.text, Origin{Origin::Kind::job, v.line}});
    });
  for (const auto& o : overrides)
    errors.check([&] {
      if (!by_name.count(o.key))
        throw UsageError(fmt::format("--set {}: {}", o.key, unknown(o.key)));
      if (o.values.empty())
        throw UsageError(fmt::format("--set {}: empty value; write --set {}=VALUE", o.key, o.key));
      auto& axis = raw[o.key];
      axis.clear();
      for (const auto& v : o.values) axis.push_back(RawValue{v, Origin{Origin::Kind::set, 0}});
    });
  for (const auto& d : descs)
    errors.check([&] {
      if (raw.count(d.name)) return;
      // An empty default makes a parameter required, except a text one, whose
      // default is then the empty text (params.h).
      if (d.default_value.empty() && d.type != ParamType::text)
        fail_job_field(
            job.path, 0, "params." + d.name,
            fmt::format("required parameter has no value; add `{}: VALUE` under params ({}){}",
                        d.name, d.doc.empty() ? to_string(d.type) : d.doc,
                        " or pass --set " + d.name + "=VALUE"));
      raw[d.name].push_back(RawValue{d.default_value, Origin{Origin::Kind::fallback, 0}});
    });

  // Parse every value once, so a bad value is reported once with its origin.
  Matrix m;
  for (const auto& [name, values] : raw) {
    const ParamDescriptor& desc = *by_name.at(name);
    std::vector<MatrixValue> parsed;
    for (const auto& v : values)
      errors.check([&] {
        try {
          parsed.push_back(MatrixValue{parse_param(desc, v.text, machine), v.origin});
        } catch (const ParamError& e) {
          fail_value(job, name, v.origin, e.message);
        }
      });
    m.axis_names.push_back(name);
    m.axes.push_back(std::move(parsed));
  }
  errors.throw_if_any(job.path);

  // The product, counted before any cell is built.
  m.cells = 1;
  for (const auto& a : m.axes) {
    if (__builtin_mul_overflow(m.cells, a.size(), &m.cells) || m.cells > kMaxCells)
      fail_job_field(
          job.path, 0, "params",
          fmt::format("the matrix has more than {} cells; shorten some lists or split the job",
                      kMaxCells));
  }
  return m;
}

std::vector<Cell> expand_cells(const Matrix& m, const JobFile& job, const Workload& workload,
                               const MachineFacts& machine) {
  const std::string wname(workload.name());
  const auto& axes = m.axes;
  const auto& axis_names = m.axis_names;
  // Odometer over the axes: the last (in sorted name order) varies fastest.
  std::vector<Cell> cells;
  std::unordered_set<std::string> ids;
  std::vector<std::size_t> index(axes.size(), 0);
  for (std::size_t n = 0; n < m.cells; ++n) {
    if (n % 1024 == 0) throw_if_interrupted();  // a large matrix takes seconds: SIGINT ends it
    Cell cell;
    cell.workload = wname;
    for (std::size_t a = 0; a < axes.size(); ++a)
      cell.params.emplace(axis_names[a], axes[a][index[a]].value);
    try {
      workload.validate(cell, machine);
    } catch (const ParamError& e) {
      auto pos = std::find(axis_names.begin(), axis_names.end(), e.field);
      if (pos != axis_names.end()) {
        std::size_t a = static_cast<std::size_t>(pos - axis_names.begin());
        fail_value(job, e.field, axes[a][index[a]].origin, e.message);
      }
      fail_job_field(job.path, 0, e.field.empty() ? std::string("params") : "params." + e.field,
                     e.message);
    }
    if (ids.insert(cell.id()).second) cells.push_back(std::move(cell));
    for (std::size_t a = axes.size(); a-- > 0;) {
      if (++index[a] < axes[a].size()) break;
      index[a] = 0;
    }
  }
  return cells;
}

std::vector<Cell> expand_matrix(const JobFile& job, const Workload& workload,
                                const std::vector<SetOverride>& overrides,
                                const MachineFacts& machine) {
  return expand_cells(plan_matrix(job, workload, overrides, machine), job, workload, machine);
}

[[noreturn]] void fail_job_field(const std::string& path, int line, std::string_view field,
                                 const std::string& message) {
  std::string where = path;
  if (!path.empty() && line > 0) where += fmt::format(":{}", line);
  if (where.empty()) throw UsageError(fmt::format("{}: {}", field, message));
  throw UsageError(fmt::format("{}: {}: {}", where, field, message));
}

}  // namespace nightjar
