// The session records room of `nightjar bisect`: see harness/bisect/session.h.
#include "harness/bisect/session.h"

#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "harness/bisect/measure.h"

namespace nightjar {

namespace fs = std::filesystem;

Session::Session(ResultsStore& st, std::ostream& o, BisectJobOptions j, Prepared p)
    : store(st), out(o), job(std::move(j)), prep(std::move(p)) {
  measurer = make_measurer(store, job, prep);
}

bool paired_with_good(const Session& s) {
  return s.job.kernel.enabled && s.job.kernel.pair_good;
}

ResultsStore open_db(const std::string& path) {
  std::cerr << "nightjar: database " << path << "\n";
  return ResultsStore(path);
}

ResultsStore open_sessions(const std::string& db, const char* command) {
  const std::string path = db_path(db);
  if (!fs::exists(path))
    throw UsageError(fmt::format("bisect {}: no database at {}; pass --db PATH", command, path));
  return open_db(path);
}

BisectSession find_session(const ResultsStore& store, std::optional<std::int64_t> session,
                           const char* command, const char* which,
                           std::vector<BisectStatus> statuses) {
  BisectSessionFilter filter;
  filter.kind = "run";
  filter.statuses = std::move(statuses);
  std::optional<BisectSession> row =
      session ? store.bisect_session(*session) : store.newest_bisect_session(filter);
  if (!row)
    throw UsageError(
        session ? fmt::format("bisect {}: no session {} in {}", command, *session, store.path())
                : fmt::format("bisect {}: no {} `bisect run` session in {} "
                              "(`nightjar bisect log` lists sessions)",
                              command, which, store.path()));
  return *row;
}

ExitCode stop(Session& s, BisectStatus status, const std::string& why, ExitCode code) {
  if (status != BisectStatus::failed) {
    s.store.finish_bisect_session(s.id, status, why, "");
    s.out << "bisect " << to_string(status) << ": " << why << "\n";
    return code;
  }
  s.store.finish_bisect_session(s.id, status, why + "; " + resume_hint(s.id), "");
  s.out << "bisect failed: " << why << "\n"
        << "once it is fixed, resume with: nightjar bisect resume --session " << s.id << "\n";
  return code;
}

std::string resume_hint(std::int64_t session) {
  return "once fixed, `nightjar bisect resume --session " + std::to_string(session) + "` goes on";
}

}  // namespace nightjar
