// The guest's "run" line: export (guest side) and import (host side). See
// harness/vm/guest_record.h and docs/qemu.md.
#include "harness/vm/guest_record.h"

#include <iostream>
#include <optional>

#include <fmt/format.h>

namespace nightjar {

using json = nlohmann::json;

namespace {

// A folded stack as an error message shows it: quoted, cut after 60 bytes.
std::string quoted_stack(const std::string& stack) {
  constexpr std::size_t kMax = 60;
  return stack.size() <= kMax ? json(stack).dump(-1, ' ', false, json::error_handler_t::replace)
                              : json(stack.substr(0, kMax) + "...")
                                    .dump(-1, ' ', false, json::error_handler_t::replace);
}

// The JSON text of `v` for an error message, cut after 40 bytes.
std::string shown(const json& v) {
  std::string text = v.dump(-1, ' ', false, json::error_handler_t::replace);
  return text.size() <= 40 ? text : text.substr(0, 40) + "...";
}

std::uint64_t unsigned_field(const json& v, const std::string& field, std::uint64_t min) {
  if (!v.is_number_integer() || (!v.is_number_unsigned() && v.get<std::int64_t>() < 0) ||
      v.get<std::uint64_t>() < min)
    throw GuestRecordError(
        fmt::format("{}: expected an integer >= {}, got {}", field, min, shown(v)));
  return v.get<std::uint64_t>();
}

}  // namespace

json profile_to_json(const IterationProfile& profile) {
  json stacks = json::object();
  for (const auto& [stack, n] : profile.stacks) stacks[stack] = n;
  return json{{"event", profile.event},
              {"frequency_hz", profile.frequency_hz},
              {"lost", profile.lost},
              {"stacks", stacks}};
}

IterationProfile profile_from_json(const json& j) {
  if (!j.is_object()) throw GuestRecordError("profile: expected an object, got " + shown(j));
  IterationProfile p;
  const auto event = j.find("event");
  if (event == j.end() || !event->is_string() || event->get<std::string>().empty())
    throw GuestRecordError("profile.event: expected the sampled event's name, got " +
                           (event == j.end() ? std::string("nothing") : shown(*event)));
  p.event = event->get<std::string>();
  if (const auto f = j.find("frequency_hz"); f != j.end()) {
    if (!f->is_number() || f->get<double>() < 0)
      throw GuestRecordError("profile.frequency_hz: expected a number >= 0, got " + shown(*f));
    p.frequency_hz = f->get<double>();
  }
  if (const auto lost = j.find("lost"); lost != j.end())
    p.lost = unsigned_field(*lost, "profile.lost", 0);
  const auto stacks = j.find("stacks");
  if (stacks == j.end() || !stacks->is_object())
    throw GuestRecordError("profile.stacks: expected an object of folded stacks and counts, got " +
                           (stacks == j.end() ? std::string("nothing") : shown(*stacks)));
  for (const auto& [stack, n] : stacks->items()) {
    if (stack.empty()) throw GuestRecordError("profile.stacks: an empty folded stack");
    p.stacks[stack] = unsigned_field(n, "profile.stacks[" + quoted_stack(stack) + "]", 1);
  }
  return p;
}

json export_guest_run(const ResultsStore& store, std::int64_t id, std::size_t job_index) {
  const std::optional<RunRecord> run = store.run_record(id);
  if (!run) return {};
  json r;
  r["t"] = "run";
  r["job_index"] = job_index;
  r["job"] = run->job;
  r["job_path"] = run->job_path;
  r["workload"] = run->workload;
  r["cell_id"] = run->cell;
  r["variant"] = run->variant;
  r["build"] = run->build;
  r["status"] = to_string(run->status);
  r["reason"] = run->reason;
  r["iterations"] = run->iterations;
  r["warmup"] = run->warmup;
  json params = json::object();
  for (const auto& [name, value] : run->params)
    params[name] = {{"text", value.text}, {"number", value.number}};
  r["params"] = params;
  json context = json::object();
  for (const auto& [k, v] : run->context) context[k] = v;
  r["context"] = context;
  r["warnings"] = run->warnings;
  std::map<int, IterationProfile> profiles;
  for (auto& p : store.iteration_profiles({id})) profiles[p.iteration] = std::move(p.profile);
  json its = json::array();
  for (const auto& i : run->iteration_data) {
    json it = {{"i", i.row.iteration},   {"status", to_string(i.row.status)},
               {"reason", i.row.reason}, {"duration", i.row.duration_sec},
               {"metrics", i.metrics},   {"invalid", i.invalid},
               {"monitors", i.monitors}, {"flags", i.flags}};
    if (auto p = profiles.find(i.row.iteration); p != profiles.end())
      it["profile"] = profile_to_json(p->second);
    its.push_back(std::move(it));
  }
  r["iterations_data"] = its;
  return r;
}

RunStatus import_guest_run(const json& r, const KernelIdentity& kernel, const Testbox& testbox,
                           const std::vector<std::string>& host_job_paths,
                           const std::map<std::string, std::string>& extra_context,
                           const std::vector<std::string>& extra_warnings, ResultsStore& store,
                           std::int64_t& id) {
  NewRun run;
  run.job = r.at("job").get<std::string>();
  std::size_t index = r.value("job_index", 0);
  run.job_path = index < host_job_paths.size() ? host_job_paths[index] : r.value("job_path", "");
  run.cell.workload = r.at("workload").get<std::string>();
  for (const auto& [name, v] : r.at("params").items())
    run.cell.params[name] = ParamValue{v.at("text").get<std::string>(), v.value("number", 0.0)};
  run.variant = r.at("variant").get<std::string>();
  run.build = r.value("build", "");
  run.iterations = r.value("iterations", 0);
  run.warmup = r.value("warmup", 0);
  run.kernel = kernel;
  run.testbox = testbox;
  const json context = r.value("context", json::object());
  for (const auto& [k, v] : context.items()) run.context[k] = v.get<std::string>();
  for (const auto& [k, v] : extra_context) run.context[k] = v;
  const std::optional<RunStatus> status = parse_run_status(r.at("status").get<std::string>());
  const std::string reason = r.value("reason", "");
  if (status == RunStatus::skipped) {
    id = store.record_skipped(run, reason);
    return RunStatus::skipped;
  }
  id = store.begin_run(run);
  for (const auto& w : extra_warnings) store.add_warning(id, w);
  const json warnings = r.value("warnings", json::array());
  for (const auto& w : warnings) store.add_warning(id, w.get<std::string>());
  const json iterations = r.value("iterations_data", json::array());
  for (const auto& it : iterations) {
    IterationResult result;
    const int i = it.at("i").get<int>();
    const std::optional<IterationStatus> it_status =
        parse_iteration_status(it.value("status", "ok"));
    if (it_status == IterationStatus::failed) result.failure = it.value("reason", "failed");
    if (it_status == IterationStatus::invalid) result.invalid = it.value("reason", "invalid");
    const json metrics = it.value("metrics", json::object());
    for (const auto& [k, v] : metrics.items()) result.metrics[k] = v.get<double>();
    // The guest's runner marked them already (impossible_value()).
    const json invalid = it.value("invalid", json::object());
    for (const auto& [k, v] : invalid.items()) result.invalid_metrics[k] = v.get<std::string>();
    const json flags = it.value("flags", json::array());
    for (const auto& f : flags) result.flags.push_back(f.get<std::string>());
    std::map<std::string, double> monitors;
    const json mons = it.value("monitors", json::object());
    for (const auto& [k, v] : mons.items()) monitors[k] = v.get<double>();
    // Older guests send no profile: the iteration is stored without one.
    std::optional<IterationProfile> profile;
    if (const auto p = it.find("profile"); p != it.end()) {
      try {
        profile = profile_from_json(*p);
      } catch (const GuestRecordError& e) {
        const std::string w = fmt::format(
            "iteration {}: the guest's profile record is corrupt ({}); stored without its profile",
            i, e.what());
        std::cerr << fmt::format("nightjar: error: run {} [{}] {} from the guest: {}\n", run.job,
                                 run.variant, r.value("cell_id", ""), w);
        store.add_warning(id, w);
      }
    }
    store.add_iteration(id, i, result, monitors, it.value("duration", 0.0),
                        profile ? &*profile : nullptr);
  }
  // A run the guest left running (it stopped inside it), or a status this
  // binary does not know, is stored failed.
  const RunStatus s =
      status == RunStatus::complete || status == RunStatus::aborted ? *status : RunStatus::failed;
  store.finish_run(id, s, reason);
  return s;
}

}  // namespace nightjar
