// Tidy sample CSV parsing (`nightjar import FILE.csv`, before anything is
// stored: csv_import.cpp): see results/io/csv.h.
//
// Reading uses fast-cpp-csv-parser (libfccp, docs/reference.md "Dependencies"): its
// LineReader (buffered, asynchronous reads, line numbers) and its RFC 4180
// field splitting (double_quote_escape). Its CSVReader is not used because it
// needs the column count at compile time and nightjar's parameter columns
// depend on the data; its number parser is not used because it is not exact
// (it accumulates digits in a double), and the round trip must give back the
// very same doubles: numbers are read with std::from_chars.
#include "results/io/csv.h"

// GCC 12 reports -Wstringop-truncation inside libfccp's own error type
// (strncpy of the file name into a fixed buffer, which it then terminates)
// once LineReader::next_line is inlined here; this file has no strncpy.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wstringop-truncation"
#endif
#include <libfccp/csv.h>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <istream>
#include <limits>
#include <optional>
#include <set>
#include <string_view>

#include "results/io/csv_detail.h"
#include "results/model/exit_codes.h"
#include "results/model/identity.h"
#include "results/model/text.h"

namespace nightjar {
namespace {

using namespace csv_detail;

// Tail columns an import may go without: mean (derived from the direction)
// and started_at (files written before it was exported; the import time).
bool optional_column(std::string_view name) {
  return name == "mean" || name == "started_at";
}
constexpr const char* kLayout =
    "run,job,workload,param.NAME...,variant,build,kernel,testbox,started_at,iteration,metric,"
    "unit,direction,mean,value[,invalid]";

std::optional<std::int64_t> positive_integer(std::string_view text) {
  text = trim(text);
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  std::int64_t v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size() || v <= 0) return std::nullopt;
  return v;
}

std::optional<double> finite_number(std::string_view text) {
  text = trim(text);
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  double v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

// Splits one record (possibly several physical lines) into its fields with
// fast-cpp-csv-parser's RFC 4180 rules: separators inside "..." do not count,
// "" is a quote. Throws io::error::escaped_string_not_closed. `fields` is
// reused from record to record (its strings keep their capacity).
void split_record(std::string& record, std::vector<std::string>& fields) {
  using Quote = io::double_quote_escape<',', '"'>;
  std::size_t count = 0;
  char* rest = record.data();
  while (rest != nullptr) {
    char* begin = nullptr;
    char* end = nullptr;
    io::detail::chop_next_column<Quote>(rest, begin, end);
    Quote::unescape(begin, end);
    if (count == fields.size())
      fields.emplace_back(begin, end);
    else
      fields[count].assign(begin, end);
    ++count;
  }
  fields.resize(count);
}

// Reads records: a line whose quotes do not balance continues on the next
// line (a quoted field holding a line break, as csv_field writes it).
class RecordReader {
 public:
  RecordReader(std::istream& in, const std::string& source) : reader_(source, in) {}

  /// The next record and the line it starts on; false at the end.
  bool next(std::string& record, int& line) {
    char* text = reader_.next_line();
    if (text == nullptr) return false;
    line = static_cast<int>(reader_.get_file_line());
    record.assign(text);
    while (std::count(record.begin(), record.end(), '"') % 2 != 0) {
      char* more = reader_.next_line();
      if (more == nullptr) break;  // split_record reports the unclosed quote
      record += '\n';
      record += more;
    }
    return true;
  }

 private:
  io::LineReader reader_;
};

// The columns every data row is read by (the required ones), as indexes
// into Columns::index.
enum class Col {
  run,
  job,
  workload,
  variant,
  build,
  kernel,
  testbox,
  iteration,
  metric,
  unit,
  direction,
  value,
  count
};
constexpr const char* kColName[] = {"run",    "job",    "workload",  "variant",
                                    "build",  "kernel", "testbox",   "iteration",
                                    "metric", "unit",   "direction", "value"};
static_assert(std::size(kColName) == static_cast<std::size_t>(Col::count));

struct Columns {
  std::size_t count = 0;
  std::array<std::size_t, static_cast<std::size_t>(Col::count)> index{};  // Col -> field index
  std::map<std::string, std::size_t, std::less<>> fixed;                  // column name -> index
  std::vector<std::pair<std::string, std::size_t>> params;                // parameter name -> index
  std::optional<std::size_t> mean;
  std::optional<std::size_t> started_at;  // the optional `started_at` column
  std::optional<std::size_t> invalid;     // the optional `invalid` column
  std::size_t at(Col c) const { return index[static_cast<std::size_t>(c)]; }
};

Columns parse_header(const std::vector<std::string>& names, const std::string& source, int line) {
  Columns c;
  c.count = names.size();
  std::set<std::string> known(std::begin(kLeadColumns), std::end(kLeadColumns));
  known.insert(std::begin(kTailColumns), std::end(kTailColumns));
  std::set<std::string> seen;
  for (std::size_t i = 0; i < names.size(); ++i) {
    const std::string& n = names[i];
    if (!seen.insert(n).second)
      fail(source, line, fmt::format("column '{}' appears twice in the header; keep one", n));
    if (n.starts_with(kParamPrefix)) {
      std::string name = n.substr(kParamPrefix.size());
      if (name.empty())
        fail(source, line,
             "column 'param.' has no parameter name; write param.NAME, such as param.clients");
      c.params.emplace_back(name, i);
    } else if (n == kInvalidColumn) {
      c.invalid = i;
    } else if (known.count(n)) {
      c.fixed[n] = i;
      if (n == "mean") c.mean = i;
      if (n == "started_at") c.started_at = i;
    } else {
      fail(source, line,
           fmt::format("unknown column '{}'; the columns are {} (mean, started_at and invalid "
                       "are optional; columns may come in any order)",
                       n.empty() ? std::string("(empty)") : n, kLayout));
    }
  }
  for (const std::string& n : known) {
    if (optional_column(n) || c.fixed.count(n)) continue;
    fail(source, line,
         fmt::format("the header has no column '{}'; a tidy sample file has the columns {} "
                     "(as `nightjar export --format csv` writes them)",
                     n, kLayout));
  }
  for (std::size_t k = 0; k < c.index.size(); ++k) c.index[k] = c.fixed.at(kColName[k]);
  return c;
}

// The mean of a metric whose file row gives none: the registered workload's
// declaration, else Hmean for higher-is-better (rates) and Amean for times,
// as docs/reference.md "Vocabulary" says of direction.
MeanKind default_mean(const WorkloadCatalog& declared, const std::string& workload,
                      const std::string& metric, Direction d) {
  if (const WorkloadDeclaration* w = declared.find(workload))
    if (const MetricDescriptor* m = w->metric(metric); m && m->direction == d) return m->mean;
  return d == Direction::higher_is_better ? MeanKind::harmonic : MeanKind::arithmetic;
}

// One data row of a tidy CSV file, with its header's columns.
class Row {
 public:
  Row(const std::vector<std::string>& fields, const Columns& cols, const std::string& source,
      int line)
      : f_(fields), cols_(cols), source_(source), line_(line) {}

  const std::string& field(Col c) const { return f_[cols_.at(c)]; }
  const std::string& at(std::size_t index) const { return f_[index]; }
  const std::string& need_text(Col c) const {
    const std::string& v = field(c);
    const char* name = kColName[static_cast<std::size_t>(c)];
    if (v.empty())
      fail(source_, line_,
           fmt::format("column '{}' is empty; every sample names its {}", name, name));
    return v;
  }
  // The optional columns' fields ("" when the file has no such column):
  // references, as every row reads them (no copy per row).
  const std::string& mean() const { return optional_field(cols_.mean); }
  const std::string& started_at() const { return optional_field(cols_.started_at); }
  const std::string& invalid() const { return optional_field(cols_.invalid); }
  const Columns& columns() const { return cols_; }
  int line() const { return line_; }
  [[noreturn]] void fail_here(const std::string& what) const { fail(source_, line_, what); }

 private:
  const std::string& optional_field(const std::optional<std::size_t>& index) const {
    static const std::string none;
    return index ? f_[*index] : none;
  }
  const std::vector<std::string>& f_;
  const Columns& cols_;
  const std::string& source_;
  int line_;
};

// A sample row's run id, iteration and value, checked.
struct RowNumbers {
  std::int64_t run_id = 0;
  int iteration = 0;
  double value = 0;
};

RowNumbers row_numbers(const Row& row) {
  RowNumbers n;
  auto run_id = positive_integer(row.field(Col::run));
  if (!run_id)
    row.fail_here(fmt::format("column 'run': '{}' is not a run id; write a positive integer",
                              row.field(Col::run)));
  auto iteration = positive_integer(row.field(Col::iteration));
  if (!iteration || *iteration > std::numeric_limits<int>::max())
    row.fail_here(
        fmt::format("column 'iteration': '{}' is not an iteration number; write a positive "
                    "integer (1 is the first measured iteration)",
                    row.field(Col::iteration)));
  auto value = finite_number(row.field(Col::value));
  if (!value)
    row.fail_here(
        fmt::format("column 'value': '{}' is not a finite number; write the sample in the "
                    "metric's unit as a decimal number such as 12.5 or 1.2e+06",
                    row.field(Col::value)));
  n.run_id = *run_id;
  n.iteration = static_cast<int>(*iteration);
  n.value = *value;
  return n;
}

// The run a row names (every row repeats its identity).
CsvRun run_of_row(const Row& row, std::int64_t run_id) {
  CsvRun here;
  here.id = run_id;
  here.line = row.line();
  here.job = row.need_text(Col::job);
  here.workload = row.need_text(Col::workload);
  here.variant = row.need_text(Col::variant);
  here.build = row.field(Col::build);
  here.kernel = row.field(Col::kernel);
  here.testbox = row.field(Col::testbox);
  if (const std::string started = row.started_at(); !started.empty()) {
    std::optional<std::string> utc = utc_iso8601(started);
    if (!utc)
      row.fail_here(fmt::format(
          "column 'started_at': '{}' is not a date and time; write ISO 8601 in UTC such as "
          "2026-12-01T09:30:00Z (as `nightjar export` writes it), or leave it empty",
          echo_input(started)));
    here.started_at = *utc;
  }
  for (const auto& [name, index] : row.columns().params)
    if (!row.at(index).empty()) here.params[name] = row.at(index);
  // Labels follow the one rule (results/model/text.h label_problem).
  for (const auto& [column, label] :
       {std::pair{"job", &here.job}, std::pair{"variant", &here.variant},
        std::pair{"build", &here.build}, std::pair{"kernel", &here.kernel},
        std::pair{"testbox", &here.testbox}})
    if (!label->empty())
      if (std::string problem = label_problem(*label); !problem.empty())
        row.fail_here(fmt::format(
            "column '{}': '{}' {}; a label is 1 to {} bytes of printable UTF-8 (docs/input.md "
            "\"Labels\")",
            column, echo_input(*label), problem, kMaxLabelBytes));
  return here;
}

// Fails unless the row's run identity is `run`'s, as its first row gave it.
void check_same_run(const Row& row, const CsvRun& run, const CsvRun& here) {
  auto differs = [&](const char* what, const std::string& a, const std::string& b) {
    if (a != b)
      row.fail_here(fmt::format(
          "run {} has {} '{}' here but '{}' on line {}; every row of a run repeats the run's job, "
          "workload, parameters, variant, build, kernel, testbox and started_at",
          run.id, what, b, a, run.line));
  };
  differs("job", run.job, here.job);
  differs("workload", run.workload, here.workload);
  differs("variant", run.variant, here.variant);
  differs("build", run.build, here.build);
  differs("kernel", run.kernel, here.kernel);
  differs("testbox", run.testbox, here.testbox);
  differs("started_at", run.started_at, here.started_at);
  for (const auto& [name, index] : row.columns().params) {
    auto p = run.params.find(name);
    differs(("param." + name).c_str(), p == run.params.end() ? "" : p->second, row.at(index));
  }
}

// The metric descriptor a row gives (unit, direction, mean columns).
CsvMetric metric_of_row(const Row& row, const std::string& workload, const std::string& metric,
                        const WorkloadCatalog& declared) {
  const std::string& unit = row.field(Col::unit);
  const std::string& direction = row.field(Col::direction);
  const std::string mean = row.mean();
  CsvMetric m;
  m.workload = workload;
  m.descriptor.name = metric;
  m.descriptor.unit = unit;
  m.line = row.line();
  if (direction.empty()) {
    if (!unit.empty() || !mean.empty())
      row.fail_here(fmt::format(
          "column 'direction' is empty but metric '{}' has a {}; write higher or lower (or leave "
          "unit, direction and mean all empty for a metric without a descriptor)",
          metric, unit.empty() ? "mean" : "unit"));
    return m;
  }
  m.declared = true;
  try {
    m.descriptor.direction = direction_from_string(direction);
  } catch (const std::invalid_argument&) {
    row.fail_here(fmt::format(
        "column 'direction': '{}' is not a direction; write higher (higher is better) or lower "
        "(lower is better)",
        direction));
  }
  if (mean.empty()) {
    m.descriptor.mean = default_mean(declared, workload, metric, m.descriptor.direction);
    return m;
  }
  m.mean_given = true;
  try {
    m.descriptor.mean = mean_kind_from_string(mean);
  } catch (const std::invalid_argument&) {
    row.fail_here(fmt::format(
        "column 'mean': '{}' is not a mean; write hmean, amean or gmean (or leave it empty)",
        mean));
  }
  return m;
}

// A run while its file is read: the run, the line of each of its samples
// (parallel to run.samples) and its first row's started_at text.
struct RunBeingRead {
  CsvRun run;
  std::vector<int> lines;
  std::string started_text;
};

// Orders (workload, metric) keys; finds them by string_view pairs too.
struct MetricKeyLess {
  using is_transparent = void;
  template <class A, class B>
  bool operator()(const A& a, const B& b) const {
    const std::string_view a1(a.first), b1(b.first);
    if (a1 != b1) return a1 < b1;
    return std::string_view(a.second) < std::string_view(b.second);
  }
};

// Reads the rows of a tidy CSV file into runs and metrics (see parse_samples_csv).
class SamplesCsvReader {
 public:
  SamplesCsvReader(const std::string& source, const WorkloadCatalog& declared,
                   const MachineFacts& machine)
      : declared_(declared), machine_(machine) {
    csv_.source = source;
  }

  // One record's fields: the header, then data rows.
  void record(const std::vector<std::string>& f, int line) {
    if (!cols_) {
      cols_ = parse_header(f, csv_.source, line);
      return;
    }
    if (f.size() != cols_->count)
      fail(csv_.source, line,
           fmt::format("{} columns where the header has {}; every row has one field per header "
                       "column (quote a field that holds a comma: \"a,b\")",
                       f.size(), cols_->count));
    const Row row(f, *cols_, csv_.source, line);
    const RowNumbers n = row_numbers(row);
    const std::string& metric = row.need_text(Col::metric);
    if (std::string problem = printable_problem(metric); !problem.empty())
      row.fail_here(
          fmt::format("column 'metric': '{}' {}; a metric name is printable UTF-8 on "
                      "one line",
                      echo_input(metric), problem));
    const std::string& workload = row.need_text(Col::workload);
    auto it = runs_.find(n.run_id);
    if (it == runs_.end()) {
      CsvRun here = run_of_row(row, n.run_id);
      check_params(row, here);
      // A file's runs are mostly of one size: room for as many samples as
      // the run begun last holds now, so a big run is not copied as its
      // vector grows (a guess; a smaller run gives the rest back at finish()).
      std::vector<int> lines;
      if (last_run_) {
        here.samples.reserve(last_run_->run.samples.size());
        lines.reserve(last_run_->run.samples.size());
      }
      it =
          runs_.emplace(n.run_id, RunBeingRead{std::move(here), std::move(lines), row.started_at()})
              .first;
      last_run_ = &it->second;
    } else if (!same_identity_text(row, it->second)) {
      // Only a row whose fields differ from its run's first row is read
      // again: the same text passed the same checks there.
      check_same_run(row, it->second.run, run_of_row(row, n.run_id));
    }
    std::string invalid = row.invalid();
    const std::size_t metric_at = known_metric(row, workload, metric);
    if (metric_at < csv_.metrics.size()) {
      if (invalid.empty()) refuse_impossible(row, metric_at, n.value);
    } else {
      CsvMetric m = metric_of_row(row, workload, metric, declared_);
      if (invalid.empty()) refuse_impossible(row, m, n.value);
      add_metric(row, std::move(m));
    }
    it->second.run.samples.push_back({n.iteration, metric, n.value, std::move(invalid)});
    it->second.lines.push_back(line);
    ++csv_.rows;
  }

  // The file read: samples sorted; throws for an empty file and a sample given twice.
  SamplesCsv finish() {
    if (!cols_)
      throw UsageError(
          fmt::format("{}: the file is empty; a tidy sample file starts with the header line {}",
                      csv_.source, kLayout));
    for (auto& [id, read] : runs_) {
      sort_samples(read.run, read.lines);
      csv_.runs.push_back(std::move(read.run));
    }
    return std::move(csv_);
  }

 private:
  // A sample the file does not mark invalid must be possible
  // (impossible_value(), with the registered workload's declaration when
  // there is one: it knows which times may be 0); else the line is refused.
  void refuse_impossible(const Row& row, const CsvMetric& m, double value) const {
    refuse_impossible(row, value_check(m), value);
  }
  // As above, for the metric at `index` of csv_.metrics.
  void refuse_impossible(const Row& row, std::size_t index, double value) const {
    const std::optional<MetricDescriptor>& d = value_check_[index];
    refuse_impossible(row, d ? &*d : nullptr, value);
  }
  void refuse_impossible(const Row& row, const MetricDescriptor* d, double value) const {
    if (!d) return;
    if (auto why = impossible_value(*d, value))
      row.fail_here(fmt::format(
          "{}: not a measurement; remove the row, or keep it as an invalid sample with its "
          "reason in an `invalid` column (as `nightjar export --include-invalid` writes it)",
          *why));
  }

  // The descriptor `m`'s values are checked against: the registered
  // workload's when it agrees on the direction, else the file's (null when
  // the file gives none).
  const MetricDescriptor* value_check(const CsvMetric& m) const {
    const MetricDescriptor* d = m.declared ? &m.descriptor : nullptr;
    if (const WorkloadDeclaration* w = declared_.find(m.workload))
      if (const MetricDescriptor* known = w->metric(m.descriptor.name);
          known && known->direction == m.descriptor.direction)
        d = known;
    return d;
  }

  // The index in csv_.metrics of the row's metric when an earlier row gave it
  // with the same unit, direction and mean text (the row then says nothing
  // new); else csv_.metrics.size().
  std::size_t known_metric(const Row& row, const std::string& workload,
                           const std::string& metric) const {
    auto mit = metric_index_.find(std::pair<std::string_view, std::string_view>(workload, metric));
    if (mit == metric_index_.end()) return csv_.metrics.size();
    const std::size_t i = mit->second;
    if (row.field(Col::unit) != csv_.metrics[i].descriptor.unit ||
        row.field(Col::direction) != direction_text_[i] || row.mean() != mean_text_[i])
      return csv_.metrics.size();
    return i;
  }

  // Whether every identity field of `row` (job, workload, parameters,
  // variant, build, kernel, testbox, started_at) is the text of its run's first row.
  static bool same_identity_text(const Row& row, const RunBeingRead& read) {
    const CsvRun& run = read.run;
    if (row.field(Col::job) != run.job || row.field(Col::workload) != run.workload ||
        row.field(Col::variant) != run.variant || row.field(Col::build) != run.build ||
        row.field(Col::kernel) != run.kernel || row.field(Col::testbox) != run.testbox ||
        row.started_at() != read.started_text)
      return false;
    for (const auto& [name, index] : row.columns().params) {
      auto p = run.params.find(name);
      if (row.at(index) != (p == run.params.end() ? std::string_view() : p->second)) return false;
    }
    return true;
  }

  // Records the metric's first descriptor; fails when a later row disagrees.
  void add_metric(const Row& row, CsvMetric m) {
    const std::string mean = row.mean();
    auto [mit, fresh] =
        metric_index_.try_emplace({m.workload, m.descriptor.name}, csv_.metrics.size());
    if (fresh) {
      const MetricDescriptor* check = value_check(m);
      value_check_.push_back(check ? std::optional(*check) : std::nullopt);
      csv_.metrics.push_back(std::move(m));
      mean_text_.push_back(mean);
      direction_text_.push_back(row.field(Col::direction));
      return;
    }
    const CsvMetric& first = csv_.metrics[mit->second];
    if (first.descriptor.unit != m.descriptor.unit || first.declared != m.declared ||
        (m.declared && first.descriptor.direction != m.descriptor.direction) ||
        mean_text_[mit->second] != mean)
      row.fail_here(fmt::format(
          "metric '{}' of workload '{}' has unit '{}', direction '{}', mean '{}' here but '{}', "
          "'{}', '{}' on line {}; a metric has one unit, direction and mean",
          m.descriptor.name, m.workload, m.descriptor.unit, row.field(Col::direction), mean,
          first.descriptor.unit,
          first.declared ? std::string(to_string(first.descriptor.direction)) : std::string(),
          mean_text_[mit->second], first.line));
  }

  // Samples in (iteration, metric) order; a sample given twice is an error.
  // A run already in that order without repeats (as `nightjar export` writes
  // it) is left as it is.
  void sort_samples(CsvRun& run, const std::vector<int>& lines) const {
    auto before = [](const SampleRow& x, const SampleRow& y) {
      return x.iteration != y.iteration ? x.iteration < y.iteration : x.metric < y.metric;
    };
    if (std::adjacent_find(run.samples.begin(), run.samples.end(),
                           [&](const SampleRow& x, const SampleRow& y) { return !before(x, y); }) ==
        run.samples.end()) {
      run.samples.shrink_to_fit();
      return;
    }
    std::vector<std::size_t> order(run.samples.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      const auto& x = run.samples[a];
      const auto& y = run.samples[b];
      if (x.iteration != y.iteration) return x.iteration < y.iteration;
      if (x.metric != y.metric) return x.metric < y.metric;
      return lines[a] < lines[b];
    });
    std::vector<SampleRow> sorted;
    sorted.reserve(order.size());
    for (std::size_t k = 0; k < order.size(); ++k) {
      const auto& s = run.samples[order[k]];
      if (!sorted.empty() && sorted.back().iteration == s.iteration &&
          sorted.back().metric == s.metric)
        fail(csv_.source, lines[order[k]],
             fmt::format("run {} iteration {} metric '{}' is given twice (also line {}); keep "
                         "one row per sample",
                         run.id, s.iteration, s.metric, lines[order[k - 1]]));
      sorted.push_back(std::move(run.samples[order[k]]));
    }
    run.samples = std::move(sorted);
  }

  // The parameters of a run of a workload nightjar knows must be its own,
  // with values its descriptors take (parse_param: type, unit, choices,
  // range); a workload from another tool keeps whatever the file says.
  void check_params(const Row& row, const CsvRun& run) const {
    const WorkloadDeclaration* w = declared_.find(run.workload);
    if (!w) return;
    for (const auto& [name, text] : run.params) {
      const ParamDescriptor* d = w->param(name);
      if (!d) {
        std::vector<std::string> known;
        for (const auto& p : w->params) known.push_back(p.name);
        row.fail_here(fmt::format(
            "column 'param.{}': workload '{}' has no parameter '{}'; its parameters are {} "
            "(`nightjar list`); leave the field empty for runs of this workload",
            echo_input(name), run.workload, echo_input(name), join(known)));
      }
      try {
        (void)parse_param(*d, text, machine_);
      } catch (const ParamError& e) {
        row.fail_here(
            fmt::format("column 'param.{}': {} (workload {}, `nightjar list` "
                        "describes its parameters)",
                        name, e.message, run.workload));
      }
    }
  }

  const WorkloadCatalog& declared_;
  const MachineFacts& machine_;
  SamplesCsv csv_;
  std::optional<Columns> cols_;
  std::map<std::int64_t, RunBeingRead> runs_;
  const RunBeingRead* last_run_ = nullptr;  // the run begun last (map nodes stay put)
  // (workload, metric) -> index in csv_.metrics
  std::map<std::pair<std::string, std::string>, std::size_t, MetricKeyLess> metric_index_;
  std::vector<std::string> mean_text_;       // the file's mean field per metric (for conflicts)
  std::vector<std::string> direction_text_;  // the file's direction field per metric
  // The descriptor refuse_impossible checks a metric's values against (null: none).
  std::vector<std::optional<MetricDescriptor>> value_check_;
};

}  // namespace

SamplesCsv parse_samples_csv(std::istream& in, const std::string& source,
                             const WorkloadCatalog& declared, const MachineFacts& machine) {
  SamplesCsvReader reader(source, declared, machine);
  std::string record;
  std::vector<std::string> f;
  int line = 0;
  try {
    RecordReader records(in, source);
    while (records.next(record, line)) {
      if (record.empty()) continue;  // blank lines (a trailing one) carry nothing
      try {
        split_record(record, f);
      } catch (const io::error::escaped_string_not_closed&) {
        fail(source, line,
             "a quoted field is not closed; end it with \" (write a quote inside a quoted field "
             "as \"\")");
      }
      reader.record(f, line);
    }
  } catch (const io::error::base& e) {
    fail(source, line + 1, fmt::format("cannot read the file: {}", e.what()));
  }
  return reader.finish();
}

}  // namespace nightjar
