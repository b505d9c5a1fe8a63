// Shared import checks: see results/io/import_checks.h.
#include "results/io/import_checks.h"

#include <fmt/format.h>

#include <utility>

#include "results/model/exit_codes.h"

namespace nightjar {

MetricDescriptor imported_metric(std::string name, std::string unit, Direction direction) {
  MetricDescriptor d;
  d.name = std::move(name);
  d.unit = std::move(unit);
  d.direction = direction;
  d.mean = direction == Direction::higher_is_better ? MeanKind::harmonic : MeanKind::arithmetic;
  return d;
}

std::optional<std::int64_t> stored_import(const ResultsStore& store, const std::string& identity,
                                          const std::string& digest, const std::string& source,
                                          const std::string& what, std::string_view flags) {
  auto before = store.imported_as(identity);
  if (!before) return std::nullopt;
  if (before->digest == digest) return before->run_id;
  const auto labels = store.run_labels(before->run_id);
  throw UsageError(fmt::format(
      "{}: {} was imported before as run {} of {} (job {}, variant {}{}) with other labels or "
      "options; importing it again would count one measurement twice. Nothing imported: import "
      "it into another database (--db), or with the same {} as before",
      source, what, before->run_id, store.path(), labels ? labels->job : "?",
      labels ? labels->variant : "?",
      labels && !labels->build.empty() ? ", build " + labels->build : "", flags));
}

void refuse_other_descriptors(const ResultsStore& store, const std::string& workload,
                              const std::vector<MetricDescriptor>& metrics,
                              const std::string& source, std::string_view origin) {
  for (const auto& d : metrics) {
    auto stored = store.stored_metric(workload, d.name);
    if (stored && (stored->unit != d.unit || stored->direction != d.direction))
      throw UsageError(fmt::format(
          "{}: metric {} is already recorded for workload {} in {} as '{}' ({} is better) but "
          "{} gives '{}' ({} is better); import into another database (--db); nothing "
          "imported",
          source, d.name, workload, store.path(), stored->unit, to_string(stored->direction),
          origin, d.unit, to_string(d.direction)));
  }
}

}  // namespace nightjar
