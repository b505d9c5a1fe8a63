// A run's fingerprint and the kernel configs stored once per hash:
// results/store/run_store.h run_fingerprint and kernel_config.
#include "results/store/detail.h"
#include "results/store/store.h"

namespace nightjar {

std::map<std::string, std::string> ResultsStore::run_fingerprint(std::int64_t run_id) const {
  std::map<std::string, std::string> out = run_context(run_id);
  auto [kernel, testbox] = run_machine(run_id);
  if (kernel) {
    out["kernel.release"] = kernel->release;
    out["kernel.version"] = kernel->version;
    out["kernel.cmdline"] = kernel->cmdline;
    out["kernel.config_hash"] = kernel->config_hash;
  }
  if (testbox) {
    out["testbox.hostname"] = testbox->hostname;
    out["testbox.cpu_model"] = testbox->cpu_model;
    out["testbox.cpus"] = std::to_string(testbox->cpus);
  }
  return out;
}

std::optional<std::string> ResultsStore::kernel_config(const std::string& hash) const {
  // A read-only database of schema version 7 or older has no such table.
  if (!database().tableExists("kernel_config")) return std::nullopt;
  SQLite::Statement q(database(), "SELECT text FROM kernel_config WHERE hash=?");
  q.bind(1, hash);
  if (!q.executeStep()) return std::nullopt;
  return q.getColumn(0).getString();
}

}  // namespace nightjar
