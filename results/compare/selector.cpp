#include "results/compare/selector.h"

#include <sqlite3.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <unordered_map>

#include <fmt/format.h>

#include "results/model/exit_codes.h"
#include "results/model/text.h"

namespace nightjar {
namespace {

constexpr const char* kSelectorHelp =
    "write a variant name (vanilla) or key=value pairs joined by commas, keys build, kernel, "
    "variant, run, testbox, job, workload (e.g. build=v6.18,kernel=6.1.0-13-amd64)";

[[noreturn]] void bad_selector(std::string_view text, const std::string& what) {
  throw UsageError(fmt::format("selector '{}': {}; {}", text, what, kSelectorHelp));
}

// A read-only connection of its own for loading a side: opened without
// SQLite's per-call mutex (one connection per thread) and with memory-mapped
// reads, because the sample loops read up to millions of rows. WAL mode lets it
// read while other processes write.
class ReadConnection {
 public:
  explicit ReadConnection(const std::string& path) {
    int rc =
        sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr);
    if (rc != SQLITE_OK) {
      std::string why = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
      sqlite3_close(db_);
      throw EnvironmentError(path + ": cannot open the results database for reading: " + why);
    }
    sqlite3_busy_timeout(db_, 30000);
    sqlite3_exec(db_, "PRAGMA mmap_size=1073741824", nullptr, nullptr, nullptr);
  }
  ~ReadConnection() { sqlite3_close(db_); }
  ReadConnection(const ReadConnection&) = delete;
  ReadConnection& operator=(const ReadConnection&) = delete;
  sqlite3* handle() const { return db_; }

 private:
  sqlite3* db_ = nullptr;
};

// A thin RAII statement on the raw sqlite3 API: SQLiteCpp's per-column objects
// cost more than the query itself at millions of rows.
class RawStatement {
 public:
  RawStatement(sqlite3* db, const std::string& sql) : db_(db) {
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt_, nullptr) != SQLITE_OK)
      throw SQLite::Exception(db_, sqlite3_errcode(db_));
  }
  RawStatement(const ResultsStore& store, const std::string& sql)
      : RawStatement(const_cast<SQLite::Database&>(store.db()).getHandle(), sql) {}
  ~RawStatement() { sqlite3_finalize(stmt_); }
  RawStatement(const RawStatement&) = delete;
  RawStatement& operator=(const RawStatement&) = delete;

  void bind(int i, const std::string& v) {
    sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  }
  void bind(int i, std::int64_t v) { sqlite3_bind_int64(stmt_, i, v); }
  void bind_all(const std::vector<std::string>& values) {
    for (std::size_t i = 0; i < values.size(); ++i) bind(static_cast<int>(i + 1), values[i]);
  }
  void reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  /// True when a row is available; throws on errors.
  bool step() {
    int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    throw SQLite::Exception(db_, rc);
  }
  std::int64_t int64(int c) const { return sqlite3_column_int64(stmt_, c); }
  double real(int c) const { return sqlite3_column_double(stmt_, c); }
  std::string_view text(int c) const {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, c));
    return p ? std::string_view(p, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, c)))
             : std::string_view();
  }

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

// WHERE clause (on run r, kernel k, testbox t) of a selector and the query.
struct Filter {
  std::string where = "1=1";
  std::vector<std::string> binds;
  bool kernel = false, testbox = false;  // the clause uses k / t
};

Filter make_filter(const Selector& s, const SideQuery& q) {
  Filter f;
  auto add = [&](const std::string& value, const char* clause) {
    if (value.empty()) return;
    f.where += clause;
    f.binds.push_back(value);
  };
  add(s.variant, " AND r.variant=?");
  add(s.build, " AND r.build=?");
  add(s.job, " AND r.job=?");
  add(s.workload, " AND r.workload=?");
  add(q.job, " AND r.job=?");
  add(q.workload, " AND r.workload=?");
  if (!s.kernel.empty()) {
    add(s.kernel, " AND k.release=?");
    f.kernel = true;
  }
  if (!s.testbox.empty()) {
    add(s.testbox, " AND t.hostname=?");
    f.testbox = true;
  }
  if (s.run_id) f.where += " AND r.id=" + std::to_string(*s.run_id);
  return f;
}

// The joins the filter needs (kernel release, testbox hostname).
std::string joins(const Filter& f) {
  std::string j;
  if (f.kernel) j += " LEFT JOIN kernel k ON k.id=r.kernel_id";
  if (f.testbox) j += " LEFT JOIN testbox t ON t.id=r.testbox_id";
  return j;
}

bool usable_status(std::string_view status) {
  return status == "complete" || status == "aborted";
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

// Values of one metric/monitor name, per cell, interned for speed: the sample
// loop compares names with the few seen so far instead of hashing strings.
struct Interned {
  std::vector<std::string> names;
  std::size_t index(std::string_view name) {
    for (std::size_t i = 0; i < names.size(); ++i)
      if (names[i] == name) return i;
    names.emplace_back(name);
    return names.size() - 1;
  }
};

struct CellBuild {
  CellSamples* cell = nullptr;
  std::vector<std::vector<double>> metrics, monitors;  // by interned index
};

// Reads the (run_id, name, value) rows of `table` (sample or monitor) of the
// runs in `run_cells` (ascending ids) and appends each value to its run's
// cell. Runs are read as ranges of consecutive ids, one primary-key range scan
// each: no join with the run table, which the selector filter already read.
void read_values(sqlite3* db, const char* table, const char* name_column,
                 const std::vector<std::pair<std::int64_t, CellBuild*>>& run_cells, Interned& names,
                 bool monitors) {
  RawStatement q(db, fmt::format("SELECT run_id, {}, value FROM {} WHERE run_id BETWEEN ?1 AND ?2",
                                 name_column, table));
  std::size_t last_name = 0;
  for (std::size_t first = 0; first < run_cells.size();) {
    std::size_t last = first;
    while (last + 1 < run_cells.size() && run_cells[last + 1].first == run_cells[last].first + 1)
      ++last;
    q.reset();
    q.bind(1, run_cells[first].first);
    q.bind(2, run_cells[last].first);
    std::int64_t current = run_cells[first].first;
    std::size_t pos = first;
    while (q.step()) {
      std::int64_t run = q.int64(0);
      while (current != run) current = run_cells[++pos].first;  // rows come in run_id order
      CellBuild* cell = run_cells[pos].second;
      std::string_view name = q.text(1);
      if (last_name >= names.names.size() || names.names[last_name] != name)
        last_name = names.index(name);
      auto& by = monitors ? cell->monitors : cell->metrics;
      if (by.size() <= last_name) by.resize(last_name + 1);
      by[last_name].push_back(q.real(2));
    }
    first = last + 1;
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

std::string describe_stored_runs(const ResultsStore& store) {
  auto distinct = [&](const std::string& sql) {
    std::vector<std::string> out;
    RawStatement q(store, sql);
    while (q.step()) {
      std::string v(q.text(0));
      out.push_back(v.empty() ? "(none)" : v);
    }
    return out;
  };
  auto ids = distinct(
      "SELECT min(id) || '-' || max(id) || ' (' || count(*) || ' runs)' FROM run "
      "HAVING count(*) > 0");
  if (ids.empty())
    return "the database holds no runs; store some with `nightjar run JOB --variant NAME`";
  std::string out = "the database holds variants " +
                    list_of(distinct("SELECT DISTINCT variant FROM run ORDER BY variant LIMIT 11"));
  out += "; builds " + list_of(distinct("SELECT DISTINCT build FROM run ORDER BY build LIMIT 11"));
  out += "; kernels " +
         list_of(distinct("SELECT DISTINCT k.release FROM run r JOIN kernel k ON k.id=r.kernel_id "
                          "ORDER BY 1 LIMIT 11"));
  out += "; jobs " + list_of(distinct("SELECT DISTINCT job FROM run ORDER BY job LIMIT 11"));
  out += "; runs " + ids.front() + " (see `nightjar show`)";
  return out;
}

LoadedSide load_side(const ResultsStore& store, const Selector& selector, const SideQuery& query,
                     const std::string& role) {
  LoadedSide side;
  side.selector = selector;
  const Filter filter = make_filter(selector, query);
  const std::set<std::string> ignored(query.ignore_params.begin(), query.ignore_params.end());
  ReadConnection conn(store.path());
  sqlite3* db = conn.handle();

  // 1. The runs, with their raw cell identity (workload, job, cell id).
  struct RawCell {
    std::int64_t first_run = 0;
    std::string workload, job, cell;
    CellSamples* target = nullptr;
  };
  std::unordered_map<std::string, RawCell> raw_cells;   // key: workload \0 job \0 cell
  std::vector<std::pair<std::int64_t, RawCell*>> used;  // run id -> raw cell, ascending
  std::vector<std::int64_t> aborted_ids;
  std::set<std::int64_t> kernel_ids, testbox_ids;
  std::size_t matched = 0;
  {
    RawStatement q(
        db,
        "SELECT r.id, r.workload, r.job, r.cell, r.status, r.reason, r.variant, r.build, "
        "COALESCE(r.kernel_id, 0), COALESCE(r.testbox_id, 0) FROM run r" +
            joins(filter) + " WHERE " + filter.where + " ORDER BY r.id");
    q.bind_all(filter.binds);
    std::string key;
    std::int64_t last_kernel = -1, last_testbox = -1;
    while (q.step()) {
      ++matched;
      std::int64_t id = q.int64(0);
      std::string_view status = q.text(4);
      if (!usable_status(status)) {
        side.excluded.push_back({id, std::string(status), std::string(q.text(5))});
        continue;
      }
      key.assign(q.text(1));
      key += '\0';
      key += q.text(2);
      key += '\0';
      key += q.text(3);
      auto [it, fresh] = raw_cells.try_emplace(key);
      if (fresh)
        it->second = {id, std::string(q.text(1)), std::string(q.text(2)), std::string(q.text(3)),
                      nullptr};
      used.emplace_back(id, &it->second);
      side.run_ids.push_back(id);
      if (status == "aborted") aborted_ids.push_back(id);
      // Distinct labels of the side; they rarely change from run to run.
      auto note = [](std::set<std::string>& set, std::string_view v) {
        if (set.empty() || set.find(std::string(v)) == set.end()) set.emplace(v);
      };
      if (side.variants.size() != 1 || *side.variants.begin() != q.text(6))
        note(side.variants, q.text(6));
      if (side.builds.size() != 1 || *side.builds.begin() != q.text(7))
        note(side.builds, q.text(7));
      if (q.int64(8) != last_kernel) kernel_ids.insert(last_kernel = q.int64(8));
      if (q.int64(9) != last_testbox) testbox_ids.insert(last_testbox = q.int64(9));
    }
  }
  if (matched == 0)
    throw UsageError(fmt::format("{} selector '{}' matched no runs{}; {}", role, selector.text,
                                 describe_filters(query), describe_stored_runs(store)));
  if (side.run_ids.empty()) {
    std::vector<std::string> why;
    for (const auto& r : side.excluded)
      why.push_back(
          fmt::format("run {} {}{}", r.id, r.status, r.reason.empty() ? "" : ": " + r.reason));
    throw Error(ExitCode::inconclusive,
                fmt::format("{} selector '{}' matched {} run(s) but none has samples ({}); "
                            "nothing to compare: rerun the job for this side",
                            role, selector.text, side.excluded.size(), list_of(why, 5)));
  }
  {
    RawStatement k(db, "SELECT release FROM kernel WHERE id=?");
    for (auto id : kernel_ids) {
      k.reset();
      k.bind(1, id);
      side.kernels.emplace(k.step() ? std::string(k.text(0)) : std::string());
    }
    RawStatement t(db, "SELECT hostname FROM testbox WHERE id=?");
    for (auto id : testbox_ids) {
      t.reset();
      t.bind(1, id);
      side.testboxes.emplace(t.step() ? std::string(t.text(0)) : std::string());
    }
  }

  // 2. Each raw cell's parameters (from its first run) and its matching key.
  {
    RawStatement q(db, "SELECT name, value FROM run_param WHERE run_id=? ORDER BY name");
    std::vector<RawCell*> ordered;
    for (auto& [key, raw] : raw_cells) ordered.push_back(&raw);
    std::sort(ordered.begin(), ordered.end(),
              [](const RawCell* a, const RawCell* b) { return a->first_run < b->first_run; });
    for (RawCell* raw : ordered) {
      q.reset();
      q.bind(1, raw->first_run);
      std::vector<std::pair<std::string, std::string>> params;
      while (q.step()) {
        std::string name(q.text(0));
        std::string value(q.text(1));
        if (value.empty() || ignored.count(name)) continue;
        params.emplace_back(std::move(name), std::move(value));
      }
      CellKey ck{raw->workload, raw->job, raw->cell};
      if (!ignored.empty()) {
        ck.cell.clear();
        for (const auto& [name, value] : params)
          ck.cell += (ck.cell.empty() ? "" : " ") + name + "=" + value;
      }
      auto [it, fresh] = side.cells.try_emplace(ck);
      CellSamples& cs = it->second;
      if (fresh) {
        cs.first_run = raw->first_run;
        cs.params = std::move(params);
      }
      raw->target = &cs;
    }
  }
  for (const auto& [id, raw] : used) raw->target->run_ids.push_back(id);  // ascending
  for (auto id : aborted_ids) {
    auto it = std::lower_bound(used.begin(), used.end(), id,
                               [](const auto& p, std::int64_t v) { return p.first < v; });
    it->second->target->aborted_runs++;
  }

  // 3. Samples and monitor deltas, appended to their cell in run order.
  std::map<CellSamples*, CellBuild> builds;
  std::vector<std::pair<std::int64_t, CellBuild*>> run_cells;
  run_cells.reserve(used.size());
  for (const auto& [id, raw] : used) {
    CellBuild& b = builds[raw->target];
    b.cell = raw->target;
    run_cells.emplace_back(id, &b);
  }
  Interned metric_names, monitor_names;
  read_values(db, "sample", "metric", run_cells, metric_names, false);
  bool any_monitor = false;
  {
    RawStatement m(db, "SELECT EXISTS(SELECT 1 FROM monitor)");
    any_monitor = m.step() && m.int64(0) != 0;
  }
  if (any_monitor) read_values(db, "monitor", "name", run_cells, monitor_names, true);
  // Sorted here, in the side's own loading thread: every statistic is
  // order-free, and the statistics module skips its sorts on sorted input.
  for (auto& [cell, b] : builds) {
    for (std::size_t i = 0; i < b.metrics.size(); ++i) {
      if (b.metrics[i].empty()) continue;
      std::sort(b.metrics[i].begin(), b.metrics[i].end());
      cell->metrics[metric_names.names[i]] = std::move(b.metrics[i]);
    }
    for (std::size_t i = 0; i < b.monitors.size(); ++i) {
      if (b.monitors[i].empty()) continue;
      std::sort(b.monitors[i].begin(), b.monitors[i].end());
      cell->monitors[monitor_names.names[i]] = std::move(b.monitors[i]);
    }
  }
  return side;
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
