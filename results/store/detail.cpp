// Helpers shared by the files of results/store/: see results/store/detail.h.
#include "results/store/detail.h"

#include <unistd.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "results/model/exit_codes.h"

namespace nightjar::store_detail {

namespace {
std::string read_first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}
}  // namespace

std::string hostname() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "";
  return buf;
}

std::string boot_id() {
  return read_first_line("/proc/sys/kernel/random/boot_id");
}

long long process_start_ticks(long long pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string all;
  if (!std::getline(in, all)) return -1;
  auto close = all.rfind(')');  // comm may contain spaces and parentheses
  if (close == std::string::npos) return -1;
  std::istringstream rest(all.substr(close + 2));
  std::string field;
  // after ")": field 3 (state) is the first; we want field 22.
  for (int i = 3; i <= 22; ++i) {
    if (!(rest >> field)) return -1;
  }
  return std::stoll(field);
}

void write_metrics(SQLite::Database& db, const std::string& workload,
                   const std::vector<MetricDescriptor>& metrics, bool replace) {
  SQLite::Statement q(db, std::string(replace ? "INSERT OR REPLACE" : "INSERT OR IGNORE") +
                              " INTO metric(workload, name, unit, direction, mean) "
                              "VALUES(?,?,?,?,?)");
  for (const auto& m : metrics) {
    SQLite::bind(q, workload, m.name, m.unit, std::string(to_string(m.direction)),
                 std::string(to_string(m.mean)));
    q.exec();
    q.reset();
  }
}

std::int64_t kernel_row(SQLite::Database& db, const KernelIdentity& k) {
  SQLite::Statement ins(db,
                        "INSERT OR IGNORE INTO kernel(release, version, cmdline, config_hash) "
                        "VALUES(?,?,?,?)");
  SQLite::bind(ins, k.release, k.version, k.cmdline, k.config_hash);
  ins.exec();
  if (!k.config_hash.empty() && !k.config_text.empty()) {
    SQLite::Statement cfg(db,
                          "INSERT OR IGNORE INTO kernel_config(hash, source, text) VALUES(?,?,?)");
    SQLite::bind(cfg, k.config_hash, k.config_source, k.config_text);
    cfg.exec();
  }
  SQLite::Statement q(db,
                      "SELECT id FROM kernel WHERE release=? AND version=? AND cmdline=? AND "
                      "config_hash=?");
  SQLite::bind(q, k.release, k.version, k.cmdline, k.config_hash);
  q.executeStep();
  return q.getColumn(0).getInt64();
}

std::int64_t testbox_row(SQLite::Database& db, const Testbox& t, bool update_memory) {
  SQLite::Statement ins(
      db, update_memory ? "INSERT INTO testbox(hostname, cpu_model, cpus, memory_bytes) "
                          "VALUES(?,?,?,?) ON CONFLICT(hostname, cpu_model, cpus) DO UPDATE SET "
                          "memory_bytes=excluded.memory_bytes"
                        : "INSERT OR IGNORE INTO testbox(hostname, cpu_model, cpus, memory_bytes) "
                          "VALUES(?,?,?,?)");
  SQLite::bind(ins, t.hostname, t.cpu_model, static_cast<std::int64_t>(t.cpus),
               static_cast<std::int64_t>(t.memory_bytes));
  ins.exec();
  SQLite::Statement q(db, "SELECT id FROM testbox WHERE hostname=? AND cpu_model=? AND cpus=?");
  SQLite::bind(q, t.hostname, t.cpu_model, static_cast<std::int64_t>(t.cpus));
  q.executeStep();
  return q.getColumn(0).getInt64();
}

MetricDescriptor metric_from_columns(const std::string& name, const std::string& unit,
                                     const std::string& direction, const std::string& mean) {
  MetricDescriptor m;
  m.name = name;
  m.unit = unit;
  m.direction = direction_from_string(direction);
  m.mean = mean_kind_from_string(mean);
  return m;
}

RunLabels run_labels_of_row(const SQLite::Statement& q) {
  return {q.getColumn(0).getInt64(),  q.getColumn(1).getString(), q.getColumn(2).getString(),
          q.getColumn(3).getString(), q.getColumn(4).getString(), q.getColumn(5).getString(),
          q.getColumn(6).getString(), q.getColumn(7).getString()};
}

RunStatus stored_run_status(std::string_view text) {
  if (const std::optional<RunStatus> s = parse_run_status(text)) return *s;
  throw EnvironmentError("results database: a run's status is '" + std::string(text) +
                         "', which nightjar never writes");
}

IterationStatus stored_iteration_status(std::string_view text) {
  if (const std::optional<IterationStatus> s = parse_iteration_status(text)) return *s;
  throw EnvironmentError("results database: an iteration's status is '" + std::string(text) +
                         "', which nightjar never writes");
}

std::optional<double> optional_double(const SQLite::Column& c) {
  if (c.isNull()) return std::nullopt;
  return c.getDouble();
}

std::optional<std::int64_t> optional_int64(const SQLite::Column& c) {
  if (c.isNull()) return std::nullopt;
  return c.getInt64();
}

void bind_optional(SQLite::Statement& q, int index, std::optional<double> v) {
  if (v && std::isfinite(*v))
    q.bind(index, *v);
  else
    q.bind(index);
}

void bind_optional(SQLite::Statement& q, int index, std::optional<std::int64_t> v) {
  if (v)
    q.bind(index, *v);
  else
    q.bind(index);
}

}  // namespace nightjar::store_detail
