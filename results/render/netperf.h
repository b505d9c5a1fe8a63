// netperf-compatible output (`nightjar run --format netperf`): for every
// iteration and client, the block one `netperf -t TCP_SENDFILE` (or
// TCP_STREAM) instance prints, byte for byte as netperf prints it
// (docs/workloads.md), so that parsers of netperf output
// (LKP's) read nightjar's. Which runs have blocks, and what is in them, the
// run's workload says (its declaration's netperf hook,
// results/model/netperf.h); the reader of results/compare/run_records.h
// asks it. A renderer: it prints records and measures nothing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "results/compare/run_records.h"
#include "results/model/netperf.h"
#include "results/store/store.h"  // the store render_netperf(store, ...) reads

namespace nightjar {

/// The text of one block. Header lines keep netperf's trailing blanks; the
/// result line is printf "%6d %6d %6d    %-6.2f   %7.2f   " followed by '\n'.
std::string render_netperf_block(const NetperfBlock& block);

/// The blocks of `runs`, in order. The ids of runs without blocks (their
/// workload has no netperf output, or they have no iterations) are appended
/// to `not_rendered` when given.
std::string render_netperf(const std::vector<NetperfRun>& runs,
                           std::vector<std::int64_t>* not_rendered = nullptr);

/// The reader and the renderer together: render_netperf(netperf_runs(store,
/// run_ids, WorkloadCatalog::linked()), not_rendered), the blocks of the
/// runs of every workload linked into this program that has netperf output.
std::string render_netperf(const RunReader& store, const std::vector<std::int64_t>& run_ids,
                           std::vector<std::int64_t>* not_rendered = nullptr);

}  // namespace nightjar
