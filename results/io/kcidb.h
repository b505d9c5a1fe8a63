// KernelCI's report database (KCIDB) out: `nightjar export --format kcidb`
// writes loaded sides as one KCIDB I/O document of schema version 5.3 (the
// kcidb-io project's kcidb_io/schema/v05_03.py; the schema is the test
// fixture tests/fixtures/kcidb/kcidb-v05_03.schema.json, docs/data.md "KCIDB
// export" has the mapping and what it loses).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "results/compare/comparison.h"
#include "results/compare/selector.h"
#include "results/store/store.h"

namespace nightjar {

/// The KCIDB I/O schema version written (major 5, the current major version).
inline constexpr int kKcidbMajor = 5;
inline constexpr int kKcidbMinor = 3;

/// Options of a KCIDB document.
struct KcidbOptions {
  /// The CI system's name: every object's `origin` and the prefix of every id
  /// ("origin:..."). KCIDB allows [a-z0-9_]+.
  std::string origin = "nightjar";
};

/// Checks a KCIDB origin name; throws UsageError naming `flag` and the rule
/// (lower-case letters, digits and '_' only, not empty).
void require_kcidb_origin(const std::string& flag, const std::string& origin);

/// The sides of `export --format kcidb` without selectors: one per distinct
/// (build label, kernel release) among the runs an export with no selector
/// writes (select_export_runs with `job` and `workload`), in that order:
/// `build=LABEL,kernel=RELEASE`, or `kernel=RELEASE` for runs without a
/// label. Throws UsageError as select_export_runs (an empty database).
std::vector<Selector> kcidb_default_sides(const ResultsStore& store, const std::string& job,
                                          const std::string& workload);

/// The KCIDB document of `sides`: `version` {major 5, minor 3}; one checkout
/// per distinct build label (the kernel release when a side has no label)
/// and one build per (label, kernel release); one test per side × cell ×
/// metric whose `number` is the metric's summary mean (Hmean/Amean/Gmean as
/// the metric declares, by stats::summarize) with its unit, and whose `misc`
/// holds the samples (ascending), n, the mean's name, CoeffVar (percent),
/// the runs, variant, job, workload, cell and direction.
/// `comparison`: the comparison of the same sides (sides[0] = BASE) or
/// nullptr. With it, each NEW side's test carries the verdict against the
/// base in `misc` and the status FAIL (regression), PASS (improvement or
/// unchanged) or DONE (inconclusive or undefined: a measurement that decided
/// nothing); the base side's tests, and every test without a comparison, are
/// DONE. Throws UsageError when a side's runs have more than one kernel
/// release or build label (a KCIDB test belongs to one build: narrow the
/// selector with build= or kernel=).
nlohmann::ordered_json kcidb_document(const std::vector<LoadedSide>& sides,
                                      const MetricCatalog& catalog, const Comparison* comparison,
                                      const KcidbOptions& options);

}  // namespace nightjar
