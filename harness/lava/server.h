// A LAVA server's REST API (lava-server 2023.01, /api/v0.2/; docs/lava.md
// "With a server"), for `nightjar lava submit` and `nightjar lava collect`:
//
//   POST /api/v0.2/jobs/              {"definition": YAML} -> {"job_ids": [N]}
//   GET  /api/v0.2/jobs/N/            state, health, actual_device, failure_comment
//   GET  /api/v0.2/jobs/N/logs/       the job log: YAML records (harness/lava/log.h)
//
// with the header "Authorization: Token TOKEN" (a token of `lava-server
// manage tokens add`, or the web UI's API tokens). REST rather than
// XML-RPC: JSON in and out (nlohmann-json, already a dependency; no XML
// parser), and the same endpoints lavacli and the web UI use.
#pragma once

#include <string>

#include <iosfwd>

#include "harness/lava/collect.h"
#include "harness/lava/jobs.h"
#include "results/store/store.h"

namespace nightjar {

/// A server and the token to use with it.
struct LavaServer {
  std::string url;    ///< base URL without the trailing '/': "http://127.0.0.1:8000"
  std::string token;  ///< the API token
};

/// The server of --server URL and --token-file F. Throws UsageError for a URL
/// that is not http(s):// (a trailing /RPC2 or /api/... is taken off), and
/// for a token file that cannot be read or is empty (naming it and saying
/// where tokens come from).
LavaServer lava_server(const std::string& url, const std::string& token_file);

/// A job as the server describes it.
struct LavaServerJob {
  std::string id;
  std::string state;            ///< Submitted, Scheduling, Scheduled, Running, Canceling, Finished
  std::string health;           ///< Unknown, Complete, Incomplete, Canceled
  std::string device;           ///< actual_device ("" before it is scheduled)
  std::string failure_comment;  ///< LAVA's comment on an incomplete job
};

/// Submits a job definition; returns its job id. Throws EnvironmentError
/// with the server's message when it refuses (HTTP 4xx: a bad token, an
/// unknown device type, a definition its schema refuses) or fails.
std::string lava_submit(const LavaServer& server, const std::string& definition);

/// The job's state (GET /api/v0.2/jobs/ID/). Throws EnvironmentError when
/// the server does not answer or has no such job.
LavaServerJob lava_job(const LavaServer& server, const std::string& id);

/// The job's log (GET /api/v0.2/jobs/ID/logs/); "" when it has none yet.
std::string lava_job_log(const LavaServer& server, const std::string& id);

/// The job's page: SERVER/scheduler/job/ID.
std::string lava_job_url(const LavaServer& server, const std::string& id);

/// `nightjar lava submit DIR`: submits every definition of DIR's manifest
/// and records each job id in `store` (table lava_job); prints one line per
/// job (id, URL, definition) on `out`. Throws as lava_submit; the jobs
/// submitted before a failure stay recorded.
void submit_lava_jobs(LavaJobStore& store, const LavaServer& server, const std::string& dir,
                      std::ostream& out);

/// What `nightjar lava collect` did.
struct LavaCollectSummary {
  int finished = 0, pending = 0;
  int passed = 0;  ///< finished jobs LAVA marks Complete
  LavaCollected totals;
  bool interrupted = false;
};

/// `nightjar lava collect [--wait]`: for every recorded, uncollected job of
/// `server` (every server when `server.url` is ""; the token is the same),
/// fetches its state; a finished job's log is brought home
/// (harness/lava/collect.h) with its URL, device and LAVA's error, and the
/// job is marked collected. `wait_sec` > 0: polls every `poll_sec` until
/// every job finished or that many seconds passed (then the rest stay
/// pending). `again` (--all): the jobs collected before are fetched and
/// brought home once more, which adds nothing (every run is stored under an
/// import identity). Prints a line per job on stderr.
LavaCollectSummary collect_lava_jobs(ResultsStore& store, const LavaServer& server, double wait_sec,
                                     double poll_sec = 10, bool again = false);

}  // namespace nightjar
