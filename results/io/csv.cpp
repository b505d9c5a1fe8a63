// Tidy sample CSV export and import: see results/csv_io.h.
//
// Reading uses fast-cpp-csv-parser (libfccp, DESIGN.md "Dependencies"): its
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

#include <SQLiteCpp/SQLiteCpp.h>
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <istream>
#include <limits>
#include <optional>
#include <ostream>
#include <set>
#include <string_view>

#include "results/compare/selector.h"
#include "results/model/exit_codes.h"
#include "results/model/text.h"

namespace nightjar {
namespace {

constexpr std::string_view kParamPrefix = "param.";
// The fixed columns, in the order export writes them; the parameter columns
// go after `workload`.
const char* const kLeadColumns[] = {"run", "job", "workload"};
const char* const kTailColumns[] = {"variant", "build", "kernel",    "testbox", "iteration",
                                    "metric",  "unit",  "direction", "mean",    "value"};
constexpr const char* kLayout =
    "run,job,workload,param.NAME...,variant,build,kernel,testbox,iteration,metric,unit,"
    "direction,mean,value";

// ---------------------------------------------------------------------------
// Export
// ---------------------------------------------------------------------------

// Calls fn(lo, hi) for each run of consecutive ids in `ids` (ascending), so
// that each query is one primary-key range scan.
template <typename F>
void for_each_range(const std::vector<std::int64_t>& ids, F&& fn) {
  for (std::size_t first = 0; first < ids.size();) {
    std::size_t last = first;
    while (last + 1 < ids.size() && ids[last + 1] == ids[last] + 1) ++last;
    fn(ids[first], ids[last]);
    first = last + 1;
  }
}

struct ExportRun {
  std::string job, workload, variant, build, kernel, testbox;
  std::map<std::string, std::string> params;
};

std::string describe_narrowing(const std::string& job, const std::string& workload) {
  std::string out;
  if (!job.empty()) out += " --job " + job;
  if (!workload.empty()) out += " --workload " + workload;
  return out.empty() ? "" : " (with" + out + ")";
}

// ---------------------------------------------------------------------------
// Import
// ---------------------------------------------------------------------------

[[noreturn]] void fail(const std::string& source, int line, const std::string& what) {
  throw UsageError(fmt::format("{}:{}: {}", source, line, what));
}

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
// "" is a quote. Throws io::error::escaped_string_not_closed.
std::vector<std::string> split_record(std::string& record) {
  using Quote = io::double_quote_escape<',', '"'>;
  std::vector<std::string> fields;
  char* rest = record.data();
  while (rest != nullptr) {
    char* begin = nullptr;
    char* end = nullptr;
    io::detail::chop_next_column<Quote>(rest, begin, end);
    Quote::unescape(begin, end);
    fields.emplace_back(begin, end);
  }
  return fields;
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

struct Columns {
  std::size_t count = 0;
  std::map<std::string, std::size_t> fixed;                 // column name -> index
  std::vector<std::pair<std::string, std::size_t>> params;  // parameter name -> index
  std::optional<std::size_t> mean;
  std::size_t at(const char* name) const { return fixed.at(name); }
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
    } else if (known.count(n)) {
      c.fixed[n] = i;
      if (n == "mean") c.mean = i;
    } else {
      fail(source, line,
           fmt::format("unknown column '{}'; the columns are {} (mean is optional; columns may "
                       "come in any order)",
                       n.empty() ? std::string("(empty)") : n, kLayout));
    }
  }
  for (const std::string& n : known) {
    if (n == "mean" || c.fixed.count(n)) continue;
    fail(source, line,
         fmt::format("the header has no column '{}'; a tidy sample file has the columns {} "
                     "(as `nightjar export --format csv` writes them)",
                     n, kLayout));
  }
  return c;
}

// The mean of a metric whose file row gives none: the registered workload's
// declaration, else Hmean for higher-is-better (rates) and Amean for times,
// as DESIGN.md "direction" says.
MeanKind default_mean(const WorkloadCatalog& declared, const std::string& workload,
                      const std::string& metric, Direction d) {
  if (const WorkloadDeclaration* w = declared.find(workload))
    if (const MetricDescriptor* m = w->metric(metric); m && m->direction == d) return m->mean;
  return d == Direction::higher_is_better ? MeanKind::harmonic : MeanKind::arithmetic;
}

// run_param.number of an imported parameter: as the workload parses it
// (bytes, seconds, counts), else the text as a plain number, else 0 (text).
class ParamNumbers {
 public:
  ParamNumbers(const WorkloadCatalog& declared, const MachineFacts& machine)
      : declared_(declared), machine_(machine) {}
  double number(const std::string& workload, const std::string& name, const std::string& text) {
    if (const WorkloadDeclaration* w = declared_.find(workload)) {
      if (const ParamDescriptor* d = w->param(name)) {
        try {
          return parse_param(*d, text, machine_).number;
        } catch (const ParamError&) {
        }
      }
    }
    double v = 0;
    auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    return ec == std::errc() && p == text.data() + text.size() && std::isfinite(v) ? v : 0;
  }

 private:
  const WorkloadCatalog& declared_;
  const MachineFacts& machine_;
};

// A stored run, for "is this the run the file holds?".
struct StoredRun {
  std::string job, workload, variant, build, kernel, testbox;
  std::map<std::string, std::string> params;  // non-empty values
  std::vector<SampleRow> samples;             // by iteration, metric
};

std::optional<StoredRun> stored_run(const ResultsStore& store, std::int64_t id) {
  auto& db = const_cast<SQLite::Database&>(store.db());
  SQLite::Statement q(db,
                      "SELECT r.job, r.workload, r.variant, r.build, COALESCE(k.release, ''), "
                      "COALESCE(t.hostname, '') FROM run r "
                      "LEFT JOIN kernel k ON k.id = r.kernel_id "
                      "LEFT JOIN testbox t ON t.id = r.testbox_id WHERE r.id = ?");
  q.bind(1, id);
  if (!q.executeStep()) return std::nullopt;
  StoredRun r;
  r.job = q.getColumn(0).getString();
  r.workload = q.getColumn(1).getString();
  r.variant = q.getColumn(2).getString();
  r.build = q.getColumn(3).getString();
  r.kernel = q.getColumn(4).getString();
  r.testbox = q.getColumn(5).getString();
  for (const auto& [name, value] : store.run_params(id))
    if (!value.empty()) r.params[name] = value;
  r.samples = store.samples(id);
  return r;
}

bool same_run(const CsvRun& f, const StoredRun& s) {
  if (f.job != s.job || f.workload != s.workload || f.variant != s.variant || f.build != s.build ||
      f.kernel != s.kernel || f.testbox != s.testbox || f.params != s.params ||
      f.samples.size() != s.samples.size())
    return false;
  for (std::size_t i = 0; i < f.samples.size(); ++i)
    if (f.samples[i].iteration != s.samples[i].iteration ||
        f.samples[i].metric != s.samples[i].metric || f.samples[i].value != s.samples[i].value)
      return false;
  return true;
}

std::string list_ids(const std::vector<std::string>& items) {
  std::string out;
  for (std::size_t i = 0; i < items.size() && i < 10; ++i) out += (i ? ", " : "") + items[i];
  if (items.size() > 10) out += fmt::format(", ... ({} in all)", items.size());
  return out;
}

}  // namespace

// ---------------------------------------------------------------------------
// Export
// ---------------------------------------------------------------------------

std::vector<std::int64_t> select_export_runs(const ResultsStore& store,
                                             const std::vector<std::string>& selectors,
                                             const std::string& job, const std::string& workload) {
  std::vector<Selector> parsed;
  for (const auto& s : selectors) parsed.push_back(parse_selector(s));
  if (parsed.empty()) parsed.emplace_back();  // every run
  std::set<std::int64_t> ids;
  for (const auto& sel : parsed) {
    // A selector's job/workload and --job/--workload must both match.
    if ((!sel.job.empty() && !job.empty() && sel.job != job) ||
        (!sel.workload.empty() && !workload.empty() && sel.workload != workload)) {
      throw UsageError(fmt::format("selector '{}' cannot match{}: it names another {}; drop one",
                                   sel.text, describe_narrowing(job, workload),
                                   sel.job != job ? "job" : "workload"));
    }
    RunFilter f;
    f.run_id = sel.run_id;
    f.job = sel.job.empty() ? job : sel.job;
    f.workload = sel.workload.empty() ? workload : sel.workload;
    f.variant = sel.variant;
    f.build = sel.build;
    f.kernel_release = sel.kernel;
    f.hostname = sel.testbox;
    auto runs = store.runs(f);
    if (runs.empty())
      throw UsageError(fmt::format(
          "export: {} matched no runs{}; {}",
          sel.text.empty() ? std::string("the database") : "selector '" + sel.text + "'",
          describe_narrowing(job, workload), describe_stored_runs(store)));
    for (const auto& r : runs) ids.insert(r.id);
  }
  return {ids.begin(), ids.end()};
}

CsvExportStats write_samples_csv(const ResultsStore& store,
                                 const std::vector<std::int64_t>& run_ids, std::ostream& out) {
  auto& db = const_cast<SQLite::Database&>(store.db());
  CsvExportStats stats;
  // One read transaction: every query sees the same snapshot (WAL), even
  // while `nightjar run` adds samples.
  SQLite::Transaction snapshot(db, SQLite::TransactionBehavior::DEFERRED);

  // 1. Which runs have samples, and their labels and parameters.
  std::map<std::int64_t, ExportRun> runs;
  {
    // Runs without samples write no row (and add no parameter column).
    SQLite::Statement info(db,
                           "SELECT r.id, r.job, r.workload, r.variant, r.build, "
                           "COALESCE(k.release, ''), COALESCE(t.hostname, '') FROM run r "
                           "LEFT JOIN kernel k ON k.id = r.kernel_id "
                           "LEFT JOIN testbox t ON t.id = r.testbox_id "
                           "WHERE r.id BETWEEN ? AND ? "
                           "AND EXISTS(SELECT 1 FROM sample s WHERE s.run_id = r.id)");
    SQLite::Statement params(
        db, "SELECT run_id, name, value FROM run_param WHERE run_id BETWEEN ? AND ?");
    for_each_range(run_ids, [&](std::int64_t lo, std::int64_t hi) {
      info.reset();
      info.bind(1, lo);
      info.bind(2, hi);
      while (info.executeStep()) {
        runs[info.getColumn(0).getInt64()] = {info.getColumn(1).getString(),
                                              info.getColumn(2).getString(),
                                              info.getColumn(3).getString(),
                                              info.getColumn(4).getString(),
                                              info.getColumn(5).getString(),
                                              info.getColumn(6).getString(),
                                              {}};
      }
      params.reset();
      params.bind(1, lo);
      params.bind(2, hi);
      while (params.executeStep()) {
        auto it = runs.find(params.getColumn(0).getInt64());
        std::string value = params.getColumn(2).getString();
        // An empty text value is an unset parameter (not part of the cell id).
        if (it != runs.end() && !value.empty())
          it->second.params[params.getColumn(1).getString()] = std::move(value);
      }
    });
  }
  std::set<std::string> param_names;
  for (const auto& [id, r] : runs)
    for (const auto& [name, value] : r.params) param_names.insert(name);

  // 2. Metric descriptors: ",unit,direction,mean" per (workload, metric).
  std::map<std::pair<std::string, std::string>, std::string> descriptors;
  {
    SQLite::Statement q(db, "SELECT workload, name, unit, direction, mean FROM metric");
    while (q.executeStep())
      descriptors[{q.getColumn(0).getString(), q.getColumn(1).getString()}] =
          fmt::format(",{},{},{}", csv_field(q.getColumn(2).getString()),
                      q.getColumn(3).getString(), q.getColumn(4).getString());
  }

  // 3. The header and the rows, run by run.
  std::string buf;
  buf.reserve(1 << 16);
  for (const char* c : kLeadColumns) buf += std::string(buf.empty() ? "" : ",") + c;
  for (const auto& name : param_names) buf += "," + csv_field(std::string(kParamPrefix) + name);
  for (const char* c : kTailColumns) buf += std::string(",") + c;
  buf += '\n';
  std::vector<std::int64_t> ids;
  for (const auto& [id, r] : runs) ids.push_back(id);
  SQLite::Statement q(db,
                      "SELECT run_id, iteration, metric, value FROM sample "
                      "WHERE run_id BETWEEN ? AND ? ORDER BY run_id, iteration, metric");
  const std::string undeclared = ",,,";
  for_each_range(ids, [&](std::int64_t lo, std::int64_t hi) {
    q.reset();
    q.bind(1, lo);
    q.bind(2, hi);
    std::int64_t current = -1;
    std::string prefix;
    const ExportRun* run = nullptr;
    std::string last_metric;
    const std::string* last_descriptor = &undeclared;
    while (q.executeStep()) {
      std::int64_t id = q.getColumn(0).getInt64();
      if (id != current) {
        current = id;
        run = &runs.at(id);
        prefix = fmt::format("{},{},{}", id, csv_field(run->job), csv_field(run->workload));
        for (const auto& name : param_names) {
          auto it = run->params.find(name);
          prefix += ',';
          if (it != run->params.end()) prefix += csv_field(it->second);
        }
        prefix += fmt::format(",{},{},{},{},", csv_field(run->variant), csv_field(run->build),
                              csv_field(run->kernel), csv_field(run->testbox));
        last_metric.clear();
        last_descriptor = &undeclared;
        ++stats.runs;
      }
      const char* metric = q.getColumn(2).getText();
      if (last_metric != metric) {
        last_metric = metric;
        auto it = descriptors.find({run->workload, last_metric});
        last_descriptor = it == descriptors.end() ? &undeclared : &it->second;
      }
      buf += prefix;
      fmt::format_to(std::back_inserter(buf), "{},{}{},{}\n", q.getColumn(1).getInt(),
                     csv_field(last_metric), *last_descriptor, q.getColumn(3).getDouble());
      ++stats.samples;
      if (buf.size() > (1 << 16) - 512) {
        out << buf;
        buf.clear();
      }
    }
  });
  out << buf;
  snapshot.commit();  // nothing was written: ends the read transaction
  return stats;
}

// ---------------------------------------------------------------------------
// Import
// ---------------------------------------------------------------------------

SamplesCsv parse_samples_csv(std::istream& in, const std::string& source,
                             const WorkloadCatalog& declared) {
  SamplesCsv csv;
  csv.source = source;
  std::map<std::int64_t, CsvRun> runs;
  std::map<std::int64_t, std::vector<int>> sample_lines;  // parallel to CsvRun::samples
  std::map<std::pair<std::string, std::string>, std::size_t> metric_index;
  std::vector<std::string> mean_text;  // the file's mean field per metric (for conflicts)
  std::optional<Columns> cols;
  std::string record;
  int line = 0;
  try {
    RecordReader reader(in, source);
    while (reader.next(record, line)) {
      if (record.empty()) continue;  // blank lines (a trailing one) carry nothing
      std::vector<std::string> f;
      try {
        f = split_record(record);
      } catch (const io::error::escaped_string_not_closed&) {
        fail(source, line,
             "a quoted field is not closed; end it with \" (write a quote inside a quoted field "
             "as \"\")");
      }
      if (!cols) {
        cols = parse_header(f, source, line);
        continue;
      }
      if (f.size() != cols->count)
        fail(source, line,
             fmt::format("{} columns where the header has {}; every row has one field per "
                         "header column (quote a field that holds a comma: \"a,b\")",
                         f.size(), cols->count));
      auto field = [&](const char* name) -> const std::string& { return f[cols->at(name)]; };
      auto need_text = [&](const char* name) -> const std::string& {
        const std::string& v = field(name);
        if (v.empty())
          fail(source, line,
               fmt::format("column '{}' is empty; every sample names its {}", name, name));
        return v;
      };
      auto run_id = positive_integer(field("run"));
      if (!run_id)
        fail(source, line,
             fmt::format("column 'run': '{}' is not a run id; write a positive integer",
                         field("run")));
      auto iteration = positive_integer(field("iteration"));
      if (!iteration || *iteration > std::numeric_limits<int>::max())
        fail(source, line,
             fmt::format("column 'iteration': '{}' is not an iteration number; write a positive "
                         "integer (1 is the first measured iteration)",
                         field("iteration")));
      auto value = finite_number(field("value"));
      if (!value)
        fail(source, line,
             fmt::format("column 'value': '{}' is not a finite number; write the sample in the "
                         "metric's unit as a decimal number such as 12.5 or 1.2e+06",
                         field("value")));
      const std::string& metric = need_text("metric");
      const std::string& workload = need_text("workload");

      // The run: every row repeats its identity.
      CsvRun here;
      here.id = *run_id;
      here.line = line;
      here.job = need_text("job");
      here.workload = workload;
      here.variant = need_text("variant");
      here.build = field("build");
      here.kernel = field("kernel");
      here.testbox = field("testbox");
      for (const auto& [name, index] : cols->params)
        if (!f[index].empty()) here.params[name] = f[index];
      auto [it, fresh] = runs.try_emplace(*run_id, here);
      CsvRun& run = it->second;
      if (!fresh) {
        auto differs = [&](const char* what, const std::string& a, const std::string& b) {
          if (a != b)
            fail(source, line,
                 fmt::format("run {} has {} '{}' here but '{}' on line {}; every row of a run "
                             "repeats the run's job, workload, parameters, variant, build, "
                             "kernel and testbox",
                             *run_id, what, b, a, run.line));
        };
        differs("job", run.job, here.job);
        differs("workload", run.workload, here.workload);
        differs("variant", run.variant, here.variant);
        differs("build", run.build, here.build);
        differs("kernel", run.kernel, here.kernel);
        differs("testbox", run.testbox, here.testbox);
        for (const auto& [name, index] : cols->params) {
          auto p = run.params.find(name);
          differs(("param." + name).c_str(), p == run.params.end() ? "" : p->second, f[index]);
        }
      }

      // The metric's descriptor.
      const std::string& unit = field("unit");
      const std::string& direction = field("direction");
      const std::string mean = cols->mean ? f[*cols->mean] : std::string();
      CsvMetric m;
      m.workload = workload;
      m.descriptor.name = metric;
      m.descriptor.unit = unit;
      m.line = line;
      if (direction.empty()) {
        if (!unit.empty() || !mean.empty())
          fail(source, line,
               fmt::format("column 'direction' is empty but metric '{}' has a {}; write higher "
                           "or lower (or leave unit, direction and mean all empty for a metric "
                           "without a descriptor)",
                           metric, unit.empty() ? "mean" : "unit"));
      } else {
        m.declared = true;
        try {
          m.descriptor.direction = direction_from_string(direction);
        } catch (const std::invalid_argument&) {
          fail(source, line,
               fmt::format("column 'direction': '{}' is not a direction; write higher (higher is "
                           "better) or lower (lower is better)",
                           direction));
        }
        if (mean.empty()) {
          m.descriptor.mean = default_mean(declared, workload, metric, m.descriptor.direction);
        } else {
          m.mean_given = true;
          try {
            m.descriptor.mean = mean_kind_from_string(mean);
          } catch (const std::invalid_argument&) {
            fail(source, line,
                 fmt::format("column 'mean': '{}' is not a mean; write hmean, amean or gmean "
                             "(or leave it empty)",
                             mean));
          }
        }
      }
      auto [mit, new_metric] = metric_index.try_emplace({workload, metric}, csv.metrics.size());
      if (new_metric) {
        csv.metrics.push_back(m);
        mean_text.push_back(mean);
      } else {
        const CsvMetric& first = csv.metrics[mit->second];
        if (first.descriptor.unit != unit || first.declared != m.declared ||
            (m.declared && first.descriptor.direction != m.descriptor.direction) ||
            mean_text[mit->second] != mean)
          fail(source, line,
               fmt::format("metric '{}' of workload '{}' has unit '{}', direction '{}', mean "
                           "'{}' here but '{}', '{}', '{}' on line {}; a metric has one unit, "
                           "direction and mean",
                           metric, workload, unit, direction, mean, first.descriptor.unit,
                           first.declared ? std::string(to_string(first.descriptor.direction))
                                          : std::string(),
                           mean_text[mit->second], first.line));
      }

      run.samples.push_back({static_cast<int>(*iteration), metric, *value});
      sample_lines[*run_id].push_back(line);
      ++csv.rows;
    }
  } catch (const io::error::base& e) {
    fail(source, line + 1, fmt::format("cannot read the file: {}", e.what()));
  }
  if (!cols)
    throw UsageError(
        fmt::format("{}: the file is empty; a tidy sample file starts with the "
                    "header line {}",
                    source, kLayout));

  // Samples in (iteration, metric) order; a sample given twice is an error.
  for (auto& [id, run] : runs) {
    const auto& lines = sample_lines[id];
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
        fail(source, lines[order[k]],
             fmt::format("run {} iteration {} metric '{}' is given twice (also line {}); keep "
                         "one row per sample",
                         id, s.iteration, s.metric, lines[order[k - 1]]));
      sorted.push_back(s);
    }
    run.samples = std::move(sorted);
    csv.runs.push_back(std::move(run));
  }
  return csv;
}

CsvImportResult import_samples_csv(ResultsStore& store, const SamplesCsv& csv,
                                   const WorkloadCatalog& declared, const MachineFacts& machine) {
  CsvImportResult result;
  SQLite::Transaction tx(store.db(), SQLite::TransactionBehavior::IMMEDIATE);

  // Descriptors: the database's recorded ones must agree with the file.
  std::map<std::string, std::vector<MetricDescriptor>> missing;
  for (const auto& m : csv.metrics) {
    if (!m.declared) continue;
    auto stored = stored_metric(store, m.workload, m.descriptor.name);
    if (!stored) {
      missing[m.workload].push_back(m.descriptor);
      continue;
    }
    if (stored->unit != m.descriptor.unit || stored->direction != m.descriptor.direction ||
        (m.mean_given && stored->mean != m.descriptor.mean))
      fail(csv.source, m.line,
           fmt::format("metric '{}' of workload '{}' is recorded in {} with unit '{}', "
                       "direction {}, mean {}, but the file says unit '{}', direction {}, "
                       "mean {}; make the file's unit/direction/mean columns match, or import "
                       "into another database (--db); nothing imported",
                       m.descriptor.name, m.workload, store.path(), stored->unit,
                       to_string(stored->direction), to_string(stored->mean), m.descriptor.unit,
                       to_string(m.descriptor.direction), to_string(m.descriptor.mean)));
  }
  for (const auto& [workload, metrics] : missing) add_missing_metrics(store, workload, metrics);

  // Which runs are new, and whether their ids are free. When one id is used
  // by another run, every new run gets a new id, in file order, so that the
  // runs keep their order (compare orders cells as they were run).
  std::vector<const CsvRun*> fresh;
  std::vector<std::string> renumbered, skipped;
  bool keep_ids = true;
  for (const auto& run : csv.runs) {
    if (auto existing = stored_run(store, run.id)) {
      if (same_run(run, *existing)) {
        ++result.already_stored;
        skipped.push_back(std::to_string(run.id));
        continue;
      }
      keep_ids = false;
    }
    fresh.push_back(&run);
  }

  ParamNumbers numbers(declared, machine);
  for (const CsvRun* p : fresh) {
    const CsvRun& run = *p;
    ImportedRun ir;
    if (keep_ids) ir.id = run.id;
    ir.job = run.job;
    ir.workload = run.workload;
    ir.variant = run.variant;
    ir.build = run.build;
    for (const auto& [name, text] : run.params)
      ir.params[name] = ParamValue{text, numbers.number(run.workload, name, text)};
    ir.kernel.release = run.kernel;
    ir.testbox.hostname = run.testbox;
    ir.match_by_name = true;
    ir.iterations = run.samples.empty() ? 0 : run.samples.back().iteration;  // sorted
    ir.context["import.format"] = "csv";
    ir.context["import.file"] = csv.source;
    ir.samples = run.samples;
    std::int64_t id = insert_imported_run(store, ir);
    if (!ir.id) renumbered.push_back(fmt::format("{} -> {}", run.id, id));
    result.run_ids.push_back(id);
    result.samples += run.samples.size();
  }
  tx.commit();
  if (!skipped.empty())
    result.notes.push_back(
        fmt::format("{} run(s) of {} already stored with the same samples, not imported again: {}",
                    skipped.size(), csv.source, list_ids(skipped)));
  if (!renumbered.empty())
    result.notes.push_back(fmt::format(
        "run ids of {} are used by other runs in {}; its {} run(s) are stored under new ids: "
        "{}",
        csv.source, store.path(), renumbered.size(), list_ids(renumbered)));
  return result;
}

}  // namespace nightjar
