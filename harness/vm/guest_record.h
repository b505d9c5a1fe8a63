// The "run" line of the guest's JSON-lines protocol (docs/qemu.md, step 4):
// one finished run of `nightjar guest-run` as the guest sends it home and as
// the host imports it (harness/vm/qemu.h). Split from qemu.cpp so that both
// ends of the record are one file and testable without a guest.
//
// A run line holds the run (job, cell, variant, status, context, warnings)
// and `iterations_data`, one object per stored iteration: i, status, reason,
// duration, metrics, invalid, monitors, flags and, when the perf-profile
// monitor sampled it, `profile`:
//
//   {"event": "cpu-clock", "frequency_hz": 499, "lost": 0,
//    "stacks": {"main;...;clear_page_erms": 12, ...}}
//
// the folded stacks with their sample counts (results/model/profile.h). A
// line without `profile` (a guest binary older than schema 9's profiles, or
// a run without the monitor) imports as before: iterations without profiles.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "results/model/profile.h"
#include "results/store/store.h"
#include "workloads/sys/probe.h"

namespace nightjar {

/// A field of a guest's record that is not what the protocol says. what()
/// names the field ("profile.stacks[\"main;f\"]: ...").
class GuestRecordError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The `profile` object of one iteration (guest side).
nlohmann::json profile_to_json(const IterationProfile& profile);

/// Inverse of profile_to_json (host side). Throws GuestRecordError naming the
/// field when `j` is not an object, `event` is not a non-empty string,
/// `frequency_hz` not a number >= 0, `lost` not an integer >= 0, or `stacks`
/// not an object of non-empty folded stacks with integer counts >= 1.
IterationProfile profile_from_json(const nlohmann::json& j);

/// Run `id` of `store` as the guest's "run" line (t = "run"), with the
/// profiles of its iterations; empty when the run does not exist.
nlohmann::json export_guest_run(const ResultsStore& store, std::int64_t id, std::size_t job_index);

/// Stores one "run" line of a guest into `store` (host side) under the
/// guest's `kernel` and `testbox`, with `extra_context` facts and
/// `extra_warnings` added; `id` is the new run's id. An iteration whose
/// profile is corrupt is stored without it, with a run warning and an error
/// on stderr naming the field. Throws nlohmann::json::exception when the run
/// itself is malformed (a missing job, params or status). Returns the
/// run's status as stored.
RunStatus import_guest_run(const nlohmann::json& r, const KernelIdentity& kernel,
                           const Testbox& testbox, const std::vector<std::string>& host_job_paths,
                           const std::map<std::string, std::string>& extra_context,
                           const std::vector<std::string>& extra_warnings, ResultsStore& store,
                           std::int64_t& id);

}  // namespace nightjar
