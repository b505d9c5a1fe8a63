// Checks that the importers of other tools' results (results/io/lkp.h,
// results/io/mmtests.h) share. Internal to results/io.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "results/model/metric.h"
#include "results/store/store.h"

namespace nightjar {

/// A descriptor of another tool's metric: Hmean when higher is better (a
/// rate), else Amean (a time), as mmtests and LKP summarise them.
MetricDescriptor imported_metric(std::string name, std::string unit, Direction direction);

/// Whether a run with import identity `identity` is stored already
/// (docs/data.md "Importing twice"): nullopt when not; its run id when it
/// is, with the same `digest` (the caller skips it). With another digest
/// (the same measurement under other labels) throws UsageError "SOURCE: WHAT
/// was imported before as run N of DB (job J, variant V[, build B]) with
/// other labels or options; importing it again would count one measurement
/// twice. Nothing imported: import it into another database (--db), or with
/// the same FLAGS as before".
std::optional<std::int64_t> stored_import(const ResultsStore& store, const std::string& identity,
                                          const std::string& digest, const std::string& source,
                                          const std::string& what, std::string_view flags);

/// Throws UsageError ("SOURCE: metric M is already recorded for workload W
/// in DB as 'U' (D is better) but ORIGIN gives ...; import into another
/// database (--db); nothing imported") when `store` records a metric of
/// `metrics` for `workload` with another unit or direction. Call it inside
/// the import's transaction, before add_missing_metrics.
void refuse_other_descriptors(const ResultsStore& store, const std::string& workload,
                              const std::vector<MetricDescriptor>& metrics,
                              const std::string& source, std::string_view origin);

}  // namespace nightjar
