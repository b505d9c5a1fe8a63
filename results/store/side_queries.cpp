// The query behind one side of compare/check/plot: the runs matching a
// filter and their samples and monitor deltas, grouped by stored cell. It
// reads up to millions of rows (bench/compare_bench.cpp), so it reads through
// a read-only connection of its own (no per-call mutex, one per thread) and
// reads each table once, as primary-key range scans, selecting only the
// columns it uses. See results/store/store.h "Sides".
#include <sqlite3.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "results/model/exit_codes.h"
#include "results/store/detail.h"
#include "results/store/store.h"

namespace nightjar {

using namespace store_detail;

namespace {

// A read-only connection for one side: opened without SQLite's per-call mutex
// (one connection per thread). WAL mode lets it read while other processes
// write. No memory mapping (issue 19): a 1 GiB mmap_size counted the mapped
// database in the RSS of every compare (245 MB to select 20k samples per
// side) and bought nothing measurable over SQLite's page cache on
// bench/compare_bench (see README "Benchmarks"); memory stays bounded by what
// a side selects plus the default page cache.
SQLite::Database open_reader(const std::string& path, bool immutable) {
  try {
    if (immutable) return open_immutable(path);
    return SQLite::Database(path, SQLite::OPEN_READONLY | SQLite::OPEN_NOMUTEX, kBusyTimeoutMs);
  } catch (const SQLite::Exception& e) {
    throw EnvironmentError(path + ": cannot open the results database for reading: " + e.what());
  }
}

// WHERE clause (on run r, kernel k, testbox t) of a side filter.
struct Where {
  std::string sql = "1=1";
  std::vector<std::string> binds;
  bool kernel = false, testbox = false;  // the clause uses k / t

  // The joins the clause needs (kernel release, testbox hostname).
  std::string joins() const {
    std::string j;
    if (kernel) j += " LEFT JOIN kernel k ON k.id=r.kernel_id";
    if (testbox) j += " LEFT JOIN testbox t ON t.id=r.testbox_id";
    return j;
  }
};

Where side_where(const SideFilter& f) {
  Where w;
  auto add = [&](const std::string& value, const char* clause) {
    if (value.empty()) return false;
    w.sql += clause;
    w.binds.push_back(value);
    return true;
  };
  add(f.variant, " AND r.variant=?");
  add(f.build, " AND r.build=?");
  for (const auto& job : f.jobs) add(job, " AND r.job=?");
  for (const auto& workload : f.workloads) add(workload, " AND r.workload=?");
  w.kernel = add(f.kernel_release, " AND k.release=?");
  w.testbox = add(f.hostname, " AND t.hostname=?");
  if (f.run_id) w.sql += " AND r.id=" + std::to_string(*f.run_id);
  if (!f.run_ids.empty()) {  // integers, written into the SQL as run_id is
    w.sql += " AND r.id IN (";
    for (std::size_t i = 0; i < f.run_ids.size(); ++i)
      w.sql += (i ? "," : "") + std::to_string(f.run_ids[i]);
    w.sql += ")";
  }
  return w;
}

// A statement for the two loops of nightjar that read a row per run and a
// row per sample of a side: up to 100 000 and 1 000 000 rows
// (bench/compare_bench.cpp). There SQLiteCpp's Column objects (a shared_ptr
// copy and two checks per column read) cost about a tenth of the whole
// compare, so these loops read with SQLite's C API on the connection's
// handle (SQLite::Database::getHandle(), SQLiteCpp's way to what it does not
// wrap). Everything else of the store reads through SQLite::Statement.
class RowScan {
 public:
  RowScan(const SQLite::Database& db, const std::string& sql) : db_(db.getHandle()) {
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt_, nullptr) != SQLITE_OK)
      throw SQLite::Exception(db_, sqlite3_errcode(db_));
  }
  ~RowScan() { sqlite3_finalize(stmt_); }
  RowScan(const RowScan&) = delete;
  RowScan& operator=(const RowScan&) = delete;

  void reset() { sqlite3_reset(stmt_); }
  void bind(int i, std::int64_t v) { sqlite3_bind_int64(stmt_, i, v); }
  void bind(int i, const std::string& v) {
    sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  }
  // True when a row is available; throws on errors.
  bool step() {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    throw SQLite::Exception(db_, rc);
  }
  std::int64_t int64(int c) const { return sqlite3_column_int64(stmt_, c); }
  bool null(int c) const { return sqlite3_column_type(stmt_, c) == SQLITE_NULL; }
  double real(int c) const { return sqlite3_column_double(stmt_, c); }
  // Valid until the next step().
  std::string_view text(int c) const {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, c));
    return p ? std::string_view(p, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, c)))
             : std::string_view();
  }

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

// The rows of a scan handed to C++ inside SQLite's own loop. A statement
// "SELECT nightjar_rows(a, b, ...) FROM ... WHERE ..." runs the
// application-defined aggregate function nightjar_rows (sqlite3_create_function)
// on every row it selects, and that calls the visitor with the row's values;
// the statement itself returns one row (NULL). Returning a million rows
// through sqlite3_step and reading them with a sqlite3_column_* call per
// column cost a third more instructions than this on compare_bench's sample
// scan (issue 19). The rows come in the order of the scan: a primary-key
// range scan gives them in key order (no ORDER BY applies to the input of an
// aggregate, so the visitors check the order they rely on).
class RowSink {
 public:
  // Registers nightjar_rows on `db` (this connection only; DIRECTONLY: not
  // callable from a trigger or view). Statements that use it are prepared
  // afterwards; the sink outlives them.
  explicit RowSink(const SQLite::Database& db) {
    const int rc = sqlite3_create_function(db.getHandle(), "nightjar_rows", -1,
                                           SQLITE_UTF8 | SQLITE_DIRECTONLY, this, nullptr,
                                           &RowSink::step, &RowSink::final);
    if (rc != SQLITE_OK) throw SQLite::Exception(db.getHandle(), rc);
  }
  RowSink(const RowSink&) = delete;
  RowSink& operator=(const RowSink&) = delete;

  // Runs `q` (bound, reset) to its end, calling visit(sqlite3_value** row)
  // for every row nightjar_rows sees; an exception of the visitor ends the
  // statement and is rethrown here.
  template <class Visit>
  void run(RowScan& q, Visit& visit) {
    visit_ = [](void* v, sqlite3_value** row) { (*static_cast<Visit*>(v))(row); };
    visitor_ = &visit;
    try {
      while (q.step()) {
      }
    } catch (const SQLite::Exception&) {
      if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
      throw;
    }
  }

 private:
  static void step(sqlite3_context* c, int, sqlite3_value** row) {
    auto* self = static_cast<RowSink*>(sqlite3_user_data(c));
    try {
      self->visit_(self->visitor_, row);
    } catch (...) {  // no exception may unwind through SQLite's C frames
      self->error_ = std::current_exception();
      sqlite3_result_error(c, "nightjar_rows: the row visitor failed", -1);
    }
  }
  static void final(sqlite3_context* c) { sqlite3_result_null(c); }

  void (*visit_)(void*, sqlite3_value**) = nullptr;
  void* visitor_ = nullptr;
  std::exception_ptr error_;
};

// The text of an argument of nightjar_rows (valid during the call).
std::string_view text_of(sqlite3_value* v) {
  const auto* p = reinterpret_cast<const char*>(sqlite3_value_text(v));
  return p ? std::string_view(p, static_cast<std::size_t>(sqlite3_value_bytes(v)))
           : std::string_view();
}

// Values of one metric/monitor name, per cell, interned for speed: the value
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

// A side being read: each used run's cell, and the values of each cell by
// interned name.
struct Reading {
  std::vector<std::pair<std::int64_t, std::size_t>> run_cells;  // run id -> cell index, ascending
  std::vector<std::int64_t> kernel_ids, testbox_ids;  // of the used runs, repeats in a row dropped
  std::vector<std::vector<std::vector<double>>> metrics, monitors;  // [cell][name] -> values
  std::vector<std::size_t> run_ordinal;  // per run_cells entry: its index in its cell's run_ids
  std::vector<std::vector<std::vector<std::size_t>>> run_sizes;  // [cell][name][run] -> samples
};

// 1. The matching runs: excluded ones, used ones with their cell, labels.
// Read through `sink` (a run is a row of up to 100 000); the rows may come
// in any order (the plan picks an index by the filter), so each run is kept
// as a few numbers and the side is built from them in run id order.
void read_runs(const SQLite::Database& db, RowSink& sink, const SideFilter& filter,
               StoredSide& side, Reading& r) {
  const Where where = side_where(filter);
  // Arguments: id, workload, job, cell, status, variant, build, kernel id,
  // testbox id (NULL reads as 0).
  RowScan q(db,
            "SELECT nightjar_rows(r.id, r.workload, r.job, r.cell, r.status, r.variant, r.build, "
            "r.kernel_id, r.testbox_id) FROM run r" +
                where.joins() + " WHERE " + where.sql);
  for (std::size_t i = 0; i < where.binds.size(); ++i)
    q.bind(static_cast<int>(i + 1), where.binds[i]);
  enum Use : std::uint8_t { complete, aborted, excluded };
  struct Run {
    std::int64_t id, kernel, testbox;
    std::uint32_t cell;  // index in `texts` (0 for excluded runs)
    Use use;
    RunStatus status;
  };
  std::vector<Run> runs;
  struct CellText {
    std::string workload, job, cell;
  };
  std::vector<CellText> texts;                                // in the order first seen
  std::unordered_map<std::string, std::uint32_t> cell_index;  // key: workload \0 job \0 cell
  std::string key;
  // Distinct labels of the side; they rarely change from run to run.
  auto note = [](std::set<std::string>& set, std::string_view v) {
    if (set.size() == 1 && *set.begin() == v) return;
    if (std::string text(v); set.find(text) == set.end()) set.insert(std::move(text));
  };
  auto visit = [&](sqlite3_value** row) {
    const std::int64_t id = sqlite3_value_int64(row[0]);
    const RunStatus status = stored_run_status(text_of(row[4]));
    if (status != RunStatus::complete && status != RunStatus::aborted &&
        !(filter.include_running && status == RunStatus::running)) {
      runs.push_back({id, 0, 0, 0, excluded, status});
      return;
    }
    const std::string_view workload = text_of(row[1]), job = text_of(row[2]),
                           cell = text_of(row[3]);
    key.assign(workload);
    key += '\0';
    key += job;
    key += '\0';
    key += cell;
    auto [it, fresh] = cell_index.try_emplace(key, static_cast<std::uint32_t>(texts.size()));
    if (fresh) texts.push_back({std::string(workload), std::string(job), std::string(cell)});
    runs.push_back({id, sqlite3_value_int64(row[7]), sqlite3_value_int64(row[8]), it->second,
                    status == RunStatus::aborted ? aborted : complete, status});
    note(side.variants, text_of(row[5]));
    note(side.builds, text_of(row[6]));
  };
  sink.run(q, visit);

  auto by_id = [](const Run& a, const Run& b) { return a.id < b.id; };
  if (!std::is_sorted(runs.begin(), runs.end(), by_id)) std::sort(runs.begin(), runs.end(), by_id);
  side.matched = runs.size();
  std::vector<std::size_t> stored(texts.size(), SIZE_MAX);  // texts index -> side.cells index
  std::int64_t last_kernel = -1, last_testbox = -1;
  for (const Run& run : runs) {
    if (run.use == excluded) {
      side.excluded.push_back({run.id, run.status, ""});
      continue;
    }
    std::size_t& at = stored[run.cell];
    if (at == SIZE_MAX) {  // cells in first-run order
      at = side.cells.size();
      StoredCell& added = side.cells.emplace_back();
      added.workload = std::move(texts[run.cell].workload);
      added.job = std::move(texts[run.cell].job);
      added.cell = std::move(texts[run.cell].cell);
      added.first_run = run.id;
    }
    StoredCell& sc = side.cells[at];
    sc.run_ids.push_back(run.id);
    if (run.use == aborted) ++sc.aborted_runs;
    r.run_cells.emplace_back(run.id, at);
    r.run_ordinal.push_back(sc.run_ids.size() - 1);
    side.run_ids.push_back(run.id);
    if (run.kernel != last_kernel) r.kernel_ids.push_back(last_kernel = run.kernel);
    if (run.testbox != last_testbox) r.testbox_ids.push_back(last_testbox = run.testbox);
  }
  // The excluded runs' reasons (few: a failed or skipped run).
  if (!side.excluded.empty()) {
    SQLite::Statement reason(db, "SELECT reason FROM run WHERE id=?");
    for (ExcludedRun& e : side.excluded) {
      reason.reset();
      reason.bind(1, e.id);
      if (reason.executeStep()) e.reason = reason.getColumn(0).getString();
    }
  }
}

// 2. The kernel releases and testbox hostnames of the used runs.
void read_labels(const SQLite::Database& db, Reading& r, StoredSide& side) {
  auto names = [&](const char* sql, std::vector<std::int64_t>& ids, std::set<std::string>& out) {
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    SQLite::Statement q(db, sql);
    for (auto id : ids) {
      q.reset();
      q.bind(1, id);
      out.emplace(q.executeStep() ? q.getColumn(0).getString() : std::string());
    }
  };
  names("SELECT release FROM kernel WHERE id=?", r.kernel_ids, side.kernels);
  names("SELECT hostname FROM testbox WHERE id=?", r.testbox_ids, side.testboxes);
}

// 3. Each cell's parameters, from its first run.
void read_params(const SQLite::Database& db, StoredSide& side) {
  SQLite::Statement q(db, "SELECT name, value FROM run_param WHERE run_id=? ORDER BY name");
  for (StoredCell& cell : side.cells) {
    q.reset();
    q.bind(1, cell.first_run);
    while (q.executeStep()) {
      std::string value = q.getColumn(1).getString();
      if (!value.empty()) cell.params.emplace_back(q.getColumn(0).getString(), std::move(value));
    }
  }
}

// The (run id, iteration) of the used runs' iterations stored invalid: their
// monitor deltas are left out with their samples.
std::set<std::pair<std::int64_t, std::int64_t>> invalid_iterations(const SQLite::Database& db,
                                                                   const StoredSide& side) {
  std::set<std::pair<std::int64_t, std::int64_t>> out;
  RowScan q(db,
            "SELECT run_id, iteration FROM iteration WHERE run_id BETWEEN ?1 AND ?2 AND "
            "status='invalid'");
  for_each_range(side.run_ids, [&](std::int64_t lo, std::int64_t hi) {
    q.reset();
    q.bind(1, lo);
    q.bind(2, hi);
    while (q.step()) out.emplace(q.int64(0), q.int64(1));
  });
  return out;
}

// What read_values does with invalid rows.
struct ValidityRule {
  bool samples = false;          // the table is `sample`: count its invalid rows per metric
  bool include_invalid = false;  // pool invalid rows too (SideFilter::include_invalid)
  // monitor: the iterations whose deltas are left out
  const std::set<std::pair<std::int64_t, std::int64_t>>* skip = nullptr;
};

// Counts one invalid sample of `name` in `cell` (rows come in run id,
// iteration order: the first one counted is the lowest). The scan does not
// select the iteration (one column less on every row of up to a million):
// set_invalid_iterations looks it up after the scan, once per cell and
// metric.
void count_invalid(StoredCell& cell, std::string_view name, std::int64_t run,
                   std::string_view reason) {
  InvalidSamples& inv = cell.invalid[std::string(name)];
  if (inv.count++ == 0) {
    inv.reason = std::string(reason);
    inv.run_id = run;
  }
}

// The iteration of the first invalid sample of each cell and metric.
void set_invalid_iterations(const SQLite::Database& db, StoredSide& side) {
  std::optional<SQLite::Statement> it;
  for (StoredCell& cell : side.cells)
    for (auto& [name, inv] : cell.invalid) {
      if (!it)
        it.emplace(db,
                   "SELECT min(iteration) FROM sample WHERE run_id=? AND metric=? AND "
                   "invalid IS NOT NULL");
      it->reset();
      it->bind(1, inv.run_id);
      it->bind(2, name);
      inv.iteration = it->executeStep() ? it->getColumn(0).getInt() : 0;
    }
}

bool any_row(const SQLite::Database& db, const char* sql) {
  SQLite::Statement q(db, sql);
  return q.executeStep() && q.getColumn(0).getInt64() != 0;
}

// Which of the used runs (r.run_cells) hold invalid samples: through the
// partial index sample_invalid (schema version 7), one seek per range of
// consecutive run ids. Without the index (a version 4 to 6 file read by a
// read-only command) every run is taken to hold some: its samples are then
// all read with their invalid column, as before the index.
std::vector<char> runs_with_invalid(const SQLite::Database& db, const Reading& r) {
  const auto& runs = r.run_cells;
  if (!any_row(db,
               "SELECT EXISTS(SELECT 1 FROM sqlite_master WHERE type='index' AND "
               "name='sample_invalid')"))
    return std::vector<char>(runs.size(), 1);
  std::vector<char> flagged(runs.size(), 0);
  RowScan q(db,
            "SELECT DISTINCT run_id FROM sample WHERE run_id BETWEEN ?1 AND ?2 AND invalid IS "
            "NOT NULL ORDER BY run_id");
  for (std::size_t first = 0, last = 0; first < runs.size(); first = last + 1) {
    last = first;
    while (last + 1 < runs.size() && runs[last + 1].first == runs[last].first + 1) ++last;
    q.reset();
    q.bind(1, runs[first].first);
    q.bind(2, runs[last].first);
    while (q.step()) flagged[first + static_cast<std::size_t>(q.int64(0) - runs[first].first)] = 1;
  }
  return flagged;
}

// 4. The (run_id, name, value) rows of `table` (sample or monitor) of the used
// runs, appended to their cell's values in run order; invalid ones as `rule`
// says. Runs are read as ranges of consecutive ids, one primary-key range scan
// each, through `sink`: no join with the run table, which read_runs already
// read. Of the sample table, only the runs holding invalid samples
// (runs_with_invalid) are read with the invalid column: reading it for every
// row was a seventh of a 1M-sample compare (issue 19).
void read_values(const SQLite::Database& db, RowSink& sink, const char* table,
                 const char* name_column, const Reading& r, const ValidityRule& rule,
                 Interned& names, std::vector<std::vector<std::vector<double>>>& by_cell,
                 StoredSide& side,
                 std::vector<std::vector<std::vector<std::size_t>>>* run_sizes = nullptr) {
  const bool skip = rule.skip && !rule.skip->empty() && !rule.include_invalid;
  // Only the columns used: the reason only of samples of runs holding
  // invalid ones, the iteration only when iterations are skipped (monitors).
  // Arguments: run_id, name, value[, invalid | iteration].
  auto scan = [&](bool with_invalid) {
    return std::make_unique<RowScan>(
        db, std::string("SELECT nightjar_rows(run_id, ") + name_column + ", value" +
                (with_invalid ? ", invalid" : "") + (skip ? ", iteration" : "") + ") FROM " +
                table + " WHERE run_id BETWEEN ?1 AND ?2");
  };
  const auto& runs = r.run_cells;
  const std::vector<char> flagged =
      rule.samples ? runs_with_invalid(db, r) : std::vector<char>(runs.size(), 0);
  std::unique_ptr<RowScan> plain, checked;  // prepared when first needed
  bool with_invalid = false;                // the range being read has the invalid column
  std::size_t pos = 0, last = 0;            // the run being read and the range's last run
  std::size_t name = 0;                     // the interned name of the last row
  std::vector<double>* values = nullptr;    // where the last row went (null: fresh run)
  std::size_t* size = nullptr;              // its run's count of that name (run_sizes)
  auto visit = [&](sqlite3_value** row) {
    const std::int64_t run = sqlite3_value_int64(row[0]);
    if (run != runs[pos].first) {  // rows come in run_id order: the range's next runs
      while (pos < last && runs[pos].first < run) ++pos;
      if (runs[pos].first != run)
        throw std::logic_error(std::string("side_samples: a ") + table + " row of run " +
                               std::to_string(run) + " came out of run id order");
      values = nullptr;
    }
    const std::string_view text = text_of(row[1]);
    if (with_invalid && sqlite3_value_type(row[3]) != SQLITE_NULL) {
      count_invalid(side.cells[runs[pos].second], text, run, text_of(row[3]));
      if (!rule.include_invalid) return;
    }
    if (skip && rule.skip->count({run, sqlite3_value_int64(row[3])})) return;
    if (name >= names.names.size() || names.names[name] != text) {
      name = names.index(text);
      values = nullptr;
    }
    if (!values) {  // a new run or name: find the cell's vectors
      const std::size_t cell = runs[pos].second;
      auto& cell_values = by_cell[cell];
      if (cell_values.size() <= name) cell_values.resize(name + 1);
      values = &cell_values[name];
      if (run_sizes) {  // samples per run of this cell and name
        auto& sizes = (*run_sizes)[cell];
        if (sizes.size() <= name) sizes.resize(name + 1);
        auto& per_run = sizes[name];
        if (per_run.size() <= r.run_ordinal[pos]) per_run.resize(r.run_ordinal[pos] + 1, 0);
        size = &per_run[r.run_ordinal[pos]];
      }
    }
    values->push_back(sqlite3_value_double(row[2]));
    if (size) ++*size;
  };
  // Ranges of consecutive run ids that are all flagged or all not.
  for (std::size_t first = 0; first < runs.size(); first = last + 1) {
    last = first;
    while (last + 1 < runs.size() && runs[last + 1].first == runs[last].first + 1 &&
           flagged[last + 1] == flagged[first])
      ++last;
    with_invalid = flagged[first] != 0;
    std::unique_ptr<RowScan>& q = with_invalid ? checked : plain;
    if (!q) q = scan(with_invalid);
    q->reset();
    q->bind(1, runs[first].first);
    q->bind(2, runs[last].first);
    pos = first;
    values = nullptr;
    sink.run(*q, visit);
  }
}

// Moves the interned values of each cell into its name -> values map.
void file_values(const Interned& names, std::vector<std::vector<std::vector<double>>>& by_cell,
                 std::vector<StoredCell>& cells,
                 std::map<std::string, std::vector<double>> StoredCell::*to) {
  for (std::size_t c = 0; c < cells.size(); ++c)
    for (std::size_t i = 0; i < by_cell[c].size(); ++i)
      if (!by_cell[c][i].empty()) (cells[c].*to)[names.names[i]] = std::move(by_cell[c][i]);
}

// 5. The distinct sets of the `keys` facts of the used runs
// (StoredSide::fact_sets). One EXISTS through run_context_by_fact first:
// most databases hold no vm.* fact, and then nothing more is read. Else one
// range scan of run_context's primary key per range of consecutive run ids
// ("+key" keeps SQLite from picking run_context_by_fact, which would read
// every run's facts of those keys once per range).
void read_fact_sets(const SQLite::Database& db, const std::vector<std::string>& keys,
                    StoredSide& side) {
  if (keys.empty()) return;
  std::string in;
  for (std::size_t i = 0; i < keys.size(); ++i) in += (i ? ",?" : "?") + std::to_string(i + 3);
  {
    SQLite::Statement any(db, "SELECT EXISTS(SELECT 1 FROM run_context WHERE key IN (" + in + "))");
    for (std::size_t i = 0; i < keys.size(); ++i) any.bind(static_cast<int>(i + 3), keys[i]);
    if (!any.executeStep() || any.getColumn(0).getInt64() == 0) {
      side.fact_sets.emplace();  // every run: none of the keys
      return;
    }
  }
  RowScan q(db,
            "SELECT run_id, key, value FROM run_context WHERE run_id BETWEEN ?1 AND ?2 AND "
            "+key IN (" +
                in + ") ORDER BY run_id");
  std::map<std::string, std::string> facts;      // of the run being read
  auto next_run = side.run_ids.begin();          // runs before it are done
  auto finish_through = [&](std::int64_t run) {  // the runs up to `run` are read
    for (; next_run != side.run_ids.end() && *next_run <= run; ++next_run) {
      side.fact_sets.insert(facts);
      facts.clear();
    }
  };
  for_each_range(side.run_ids, [&](std::int64_t lo, std::int64_t hi) {
    q.reset();
    q.bind(1, lo);
    q.bind(2, hi);
    for (std::size_t i = 0; i < keys.size(); ++i) q.bind(static_cast<int>(i + 3), keys[i]);
    while (q.step()) {
      const std::int64_t run = q.int64(0);
      finish_through(run - 1);
      facts.emplace(q.text(1), q.text(2));
    }
    finish_through(hi);
  });
}

}  // namespace

StoredSide ResultsStore::side_samples(const SideFilter& filter) const {
  SQLite::Database db = open_reader(path_, immutable_);
  // One read transaction for all of the side's queries: they read one
  // snapshot (a run committed meanwhile is in all of them or in none), and
  // the up to thousands of range scans do not each take and drop the WAL
  // read lock (an fstat and fcntl calls apiece). Rolled back on every path;
  // nothing is written.
  SQLite::Transaction snapshot(db, SQLite::TransactionBehavior::DEFERRED);
  StoredSide side;
  Reading r;
  RowSink sink(db);
  read_runs(db, sink, filter, side, r);
  if (side.run_ids.empty()) return side;
  read_labels(db, r, side);
  read_params(db, side);
  Interned metric_names, monitor_names;
  r.metrics.resize(side.cells.size());
  r.monitors.resize(side.cells.size());
  r.run_sizes.resize(side.cells.size());
  read_values(db, sink, "sample", "metric", r, {true, filter.include_invalid, nullptr},
              metric_names, r.metrics, side, &r.run_sizes);
  set_invalid_iterations(db, side);
  if (any_row(db, "SELECT EXISTS(SELECT 1 FROM monitor)")) {
    const auto skip = invalid_iterations(db, side);
    read_values(db, sink, "monitor", "name", r, {false, filter.include_invalid, &skip},
                monitor_names, r.monitors, side);
  }
  read_fact_sets(db, filter.fact_keys, side);
  file_values(metric_names, r.metrics, side.cells, &StoredCell::metrics);
  file_values(monitor_names, r.monitors, side.cells, &StoredCell::monitors);
  for (std::size_t c = 0; c < side.cells.size(); ++c)
    for (std::size_t i = 0; i < r.run_sizes[c].size(); ++i) {
      auto& sizes = r.run_sizes[c][i];
      if (sizes.empty()) continue;
      sizes.resize(side.cells[c].run_ids.size(), 0);
      side.cells[c].metric_run_sizes[metric_names.names[i]] = std::move(sizes);
    }
  return side;
}

StoredRunsSummary ResultsStore::stored_runs_summary() const {
  const SQLite::Database& db = database();
  StoredRunsSummary s;
  {
    SQLite::Statement q(db, "SELECT count(*), COALESCE(min(id), 0), COALESCE(max(id), 0) FROM run");
    q.executeStep();
    s.runs = q.getColumn(0).getInt64();
    s.first_id = q.getColumn(1).getInt64();
    s.last_id = q.getColumn(2).getInt64();
  }
  auto distinct = [&](const char* sql) {
    std::vector<std::string> out;
    SQLite::Statement q(db, sql);
    while (q.executeStep()) out.push_back(q.getColumn(0).getString());
    return out;
  };
  s.variants = distinct("SELECT DISTINCT variant FROM run ORDER BY variant LIMIT 11");
  s.builds = distinct("SELECT DISTINCT build FROM run ORDER BY build LIMIT 11");
  s.kernels = distinct(
      "SELECT DISTINCT k.release FROM run r JOIN kernel k ON k.id=r.kernel_id ORDER BY 1 LIMIT 11");
  s.jobs = distinct("SELECT DISTINCT job FROM run ORDER BY job LIMIT 11");
  return s;
}

}  // namespace nightjar
