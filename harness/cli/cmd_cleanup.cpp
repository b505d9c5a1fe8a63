// `nightjar cleanup`: undoes what ended nightjar processes left behind
// (workloads/sys/sweep.h), and the leftovers section of `nightjar env`.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "harness/cli/commands.h"
#include "results/model/exit_codes.h"
#include "workloads/sys/sweep.h"

namespace nightjar {
namespace {

struct CleanupArgs {
  bool list = false;
};

std::string owner_text(const OwnerSweep& o) {
  return fmt::format("nightjar pid {} ({})", o.owner.pid, o.command);
}

ExitCode cmd_cleanup(const CleanupArgs& a) {
  SweepOptions options;
  options.list_only = a.list;
  const SweepReport report = sweep_journals(options);
  std::cout << "journal: " << report.dir << "\n";
  std::size_t ended = 0, live = 0;
  for (const auto& o : report.owners) {
    if (!o.ended) {
      ++live;
      continue;
    }
    ++ended;
    std::cout << owner_text(o) << " ended; what it left:\n";
    for (const auto& t : o.undone) std::cout << "  removed: " << t << "\n";
    for (const auto& t : o.declined) std::cout << "  left alone: " << t << "\n";
    for (const auto& t : o.left) std::cout << "  could not undo: " << t << "\n";
    for (const auto& t : o.open) std::cout << "  recorded: " << t << "\n";
  }
  for (const auto& e : report.errors) std::cout << "error: " << e << "\n";
  std::cout << fmt::format(
      "{} {} object(s) of {} ended nightjar process(es){}; {} object(s) of {} running nightjar "
      "process(es) left alone\n",
      a.list ? "recorded:" : "removed", a.list ? report.leftover_count() : report.undone_count(),
      ended,
      a.list ? " (remove them with `nightjar cleanup`)"
             : fmt::format(", {} could not be undone", report.leftover_count()),
      report.live_count(), live);
  if (!a.list && (report.leftover_count() > 0 || !report.errors.empty()))
    return ExitCode::environment;
  return ExitCode::ok;
}

}  // namespace

void print_leftovers(std::ostream& out) {
  SweepOptions options;
  options.list_only = true;
  const SweepReport report = sweep_journals(options);
  const std::size_t n = report.leftover_count();
  out << "leftovers:" << (n == 0 ? " none" : "") << " (journal " << report.dir << ")\n";
  for (const auto& o : report.owners) {
    if (!o.ended) continue;
    for (const auto& t : o.open) out << "  - " << t << ", left by " << owner_text(o) << "\n";
  }
  if (n > 0) out << "  remove them with `nightjar cleanup` (as root)\n";
  for (const auto& o : report.owners)
    if (!o.ended)
      out << fmt::format("  in use by running {}: {} object(s)\n", owner_text(o), o.open.size());
  for (const auto& e : report.errors) out << "  - cannot read " << e << "\n";
}

Subcommand add_cleanup_command(CLI::App& app) {
  auto a = std::make_shared<CleanupArgs>();
  Subcommand s;
  CLI::App* cmd = app.add_subcommand(
      "cleanup",
      "Undo what killed nightjar processes left behind (processes, cgroups, swap, zram, tmpfs "
      "mounts, knobs), as their journals record it; never touches a running nightjar's objects "
      "(docs/cleanup.md)");
  cmd->add_flag("--list", a->list, "only list what the journals record; change nothing");
  cmd->footer(
      "Journals: $NIGHTJAR_JOURNAL_DIR, else /run/nightjar. Exit 0 when nothing is left, 4 when "
      "an object could not be undone.");
  s.cmd = cmd;
  s.run = [a] { return cmd_cleanup(*a); };
  return s;
}

}  // namespace nightjar
