// How long one iteration of a job's cells takes, as the workload declares
// it: the one estimator behind `nightjar run`'s matrix plan (docs/jobs.md
// "Large matrices") and the test timeout of `nightjar lava jobs`
// (harness/lava/jobs.cpp). A workload's iteration lasts as long as its
// duration parameters say (fake's `sleep`, tcp_sendfile's `duration`); a
// parameter named `timeout` is a limit, not a length, and does not count.
#pragma once

#include <string>
#include <vector>

#include "harness/job/job.h"
#include "results/model/params.h"
#include "workloads/workload.h"

namespace nightjar {

/// True when parameter `d` sets the length of an iteration: a duration
/// parameter other than `timeout`.
bool sets_iteration_time(const ParamDescriptor& d);

/// Seconds per iteration that a workload's parameters declare, and which
/// parameters said so.
struct DeclaredIterationTime {
  double seconds = 0;               ///< 0 when no parameter declares a length
  std::vector<std::string> params;  ///< the parameters counted, in declared order
};

/// Over the matrix `m` planned for `workload`: for every parameter that
/// sets_iteration_time() and is an axis of `m` with a positive sum, the
/// mean of its values (seconds), summed. The mean over the matrix's cells of
/// the cell estimate below.
DeclaredIterationTime declared_iteration_time(const Workload& workload, const Matrix& m);

/// For one cell of `workload`: the sum of its values of the parameters that
/// sets_iteration_time() (seconds; 0 when it has none).
DeclaredIterationTime declared_iteration_time(const Workload& workload, const Cell& cell);

}  // namespace nightjar
