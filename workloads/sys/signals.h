// SIGINT/SIGTERM handling. The handler only sets a flag (async-signal-safe);
// the runner and long workload loops poll interrupted() and unwind by
// throwing Interrupted, so that every destructor (cgroups, mounts, child
// processes) runs and the run is stored as aborted with its samples.
#pragma once

namespace nightjar {

/// Installs handlers for SIGINT and SIGTERM without SA_RESTART, so blocking
/// system calls return EINTR and loops can notice. Idempotent.
void install_interrupt_handlers();
/// True once SIGINT or SIGTERM arrived.
bool interrupted();
/// The signal that interrupted (SIGINT or SIGTERM), 0 if none.
int interrupt_signal();
/// Throws Interrupted when interrupted() is true.
void throw_if_interrupted();

}  // namespace nightjar
