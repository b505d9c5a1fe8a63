// Helpers shared by the files of results/store/ (and only by them: this
// header is the one place besides those files that names SQLiteCpp; nothing
// outside results/store/ includes it).
#pragma once

#include <SQLiteCpp/SQLiteCpp.h>
#include <SQLiteCpp/VariadicBind.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "results/model/identity.h"
#include "results/model/metric.h"
#include "results/store/runs.h"

namespace nightjar::store_detail {

/// How long a connection waits for another process's lock, milliseconds.
inline constexpr int kBusyTimeoutMs = 30000;

/// Applies the forward migrations up to ResultsStore::kSchemaVersion
/// (schema.cpp). `path` names the file in errors: EnvironmentError for a
/// newer schema or a file that is not a nightjar database.
void migrate(SQLite::Database& db, const std::string& path);

/// Checks, reading only, that `db` is a nightjar results database this
/// binary may open (schema.cpp): its user_version within
/// 0..ResultsStore::kSchemaVersion (else EnvironmentError naming the value
/// and the known version), no tables at version 0 (else it is someone
/// else's SQLite file), nightjar's `run` and `sample` tables at a version
/// above 0. Returns the version. Nothing is written, so a refused file stays
/// byte-identical.
int check_schema(SQLite::Database& db, const std::string& path);

/// Opens `path` read-only with SQLite's "immutable=1" URI parameter: no
/// locks and no -shm file. The store uses it only when a WAL database cannot
/// be opened read-only the normal way (a directory the reader may not
/// write, no -shm: SQLite's wal.html "Read-Only Databases"); every further
/// connection of that store (the side queries) opens the same way.
/// Throws SQLite::Exception when SQLite cannot open it.
SQLite::Database open_immutable(const std::string& path);

/// This machine's hostname ("" when unknown).
std::string hostname();
/// /proc/sys/kernel/random/boot_id.
std::string boot_id();
/// Field 22 of /proc/PID/stat: the process start time in clock ticks since
/// boot. With the pid it identifies a process across pid reuse. -1 when the
/// process does not exist.
long long process_start_ticks(long long pid);

/// Writes metric descriptors of `workload`: `replace` overwrites a stored
/// descriptor of the same name, else it is kept.
void write_metrics(SQLite::Database& db, const std::string& workload,
                   const std::vector<MetricDescriptor>& metrics, bool replace);
/// The id of the kernel row with exactly identity `k`, inserted when new.
std::int64_t kernel_row(SQLite::Database& db, const KernelIdentity& k);
/// The id of the testbox row of `t` (hostname, CPU model, CPUs), inserted
/// when new; `update_memory`: an existing row takes t's memory (a run knows
/// it, an import does not).
std::int64_t testbox_row(SQLite::Database& db, const Testbox& t, bool update_memory);

/// A metric descriptor from its stored columns (name, unit, direction, mean).
MetricDescriptor metric_from_columns(const std::string& name, const std::string& unit,
                                     const std::string& direction, const std::string& mean);

/// The SELECT of a run's labels (on run r, kernel k, testbox t; the
/// statement goes on with a WHERE clause), and a RunLabels from its row.
inline constexpr const char* kRunLabelsSelect =
    "SELECT r.id, r.job, r.workload, r.variant, r.build, COALESCE(k.release, ''), "
    "COALESCE(t.hostname, ''), r.started_at FROM run r "
    "LEFT JOIN kernel k ON k.id = r.kernel_id LEFT JOIN testbox t ON t.id = r.testbox_id ";
RunLabels run_labels_of_row(const SQLite::Statement& q);

/// The status of a run row (column run.status, whose CHECK allows only the
/// spellings of to_string(RunStatus)). Throws EnvironmentError naming any
/// other text: a database changed by hand.
RunStatus stored_run_status(std::string_view text);
/// The same for column iteration.status.
IterationStatus stored_iteration_status(std::string_view text);

/// A column that may be NULL.
std::optional<double> optional_double(const SQLite::Column& c);
std::optional<std::int64_t> optional_int64(const SQLite::Column& c);
/// Binds `v`, or NULL when it is empty or not finite.
void bind_optional(SQLite::Statement& q, int index, std::optional<double> v);
void bind_optional(SQLite::Statement& q, int index, std::optional<std::int64_t> v);

/// Calls fn(lo, hi) for each run of consecutive ids in `ids` (ascending), so
/// that a query over them is one primary-key range scan per run of ids.
template <typename F>
void for_each_range(const std::vector<std::int64_t>& ids, F&& fn) {
  for (std::size_t first = 0; first < ids.size();) {
    std::size_t last = first;
    while (last + 1 < ids.size() && ids[last + 1] == ids[last] + 1) ++last;
    fn(ids[first], ids[last]);
    first = last + 1;
  }
}

}  // namespace nightjar::store_detail
