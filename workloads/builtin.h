// Factories of the built-in workloads. Each workload file defines one; the
// registry (registry.cpp) lists them.
#pragma once

#include <memory>

#include "workloads/workload.h"

namespace nightjar {

/// `fake`: scripted, seeded samples, no system access (for tests of compare,
/// check, bisect and reports). See workloads/fake.cpp.
std::unique_ptr<Workload> make_fake_workload();
/// `null`: measures the harness's own overhead between iterations.
std::unique_ptr<Workload> make_null_workload();
/// `skeleton`: the commented example of the contract; not registered.
std::unique_ptr<Workload> make_skeleton_workload();

}  // namespace nightjar
