// The kernel and testbox a stored run refers to: results/store/store.h
// run_machine (`nightjar bundle` states them in its post body).
#include "results/store/detail.h"
#include "results/store/store.h"

namespace nightjar {

std::pair<std::optional<KernelIdentity>, std::optional<Testbox>> ResultsStore::run_machine(
    std::int64_t run_id) const {
  SQLite::Statement q(database(),
                      "SELECT k.id, k.release, k.version, k.cmdline, k.config_hash, t.id, "
                      "t.hostname, t.cpu_model, t.cpus, t.memory_bytes FROM run r LEFT JOIN "
                      "kernel k ON k.id=r.kernel_id LEFT JOIN testbox t ON t.id=r.testbox_id "
                      "WHERE r.id=?");
  q.bind(1, run_id);
  std::pair<std::optional<KernelIdentity>, std::optional<Testbox>> out;
  if (!q.executeStep()) return out;
  if (!q.getColumn(0).isNull())
    out.first = KernelIdentity{q.getColumn(1).getString(), q.getColumn(2).getString(),
                               q.getColumn(3).getString(), q.getColumn(4).getString(), "", ""};
  if (!q.getColumn(5).isNull())
    out.second = Testbox{q.getColumn(6).getString(), q.getColumn(7).getString(),
                         static_cast<unsigned>(q.getColumn(8).getInt64()),
                         static_cast<std::uint64_t>(q.getColumn(9).getInt64())};
  return out;
}

}  // namespace nightjar
