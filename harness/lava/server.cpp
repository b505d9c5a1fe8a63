// A LAVA server's REST API: see harness/lava/server.h.
#include "harness/lava/server.h"

#include <fmt/format.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "harness/lava/collect.h"
#include "harness/lava/http.h"
#include "harness/lava/log.h"
#include "harness/vm/initramfs.h"
#include "results/io/input_file.h"
#include "results/model/exit_codes.h"
#include "results/model/text.h"
#include "workloads/sys/process.h"
#include "workloads/sys/signals.h"

namespace nightjar {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

std::vector<std::string> auth(const LavaServer& s) {
  std::vector<std::string> h = {"Accept: application/json"};
  if (!s.token.empty()) h.push_back("Authorization: Token " + s.token);
  return h;
}

// What the server said: its JSON "message" or "detail", else the body's start.
std::string server_says(const HttpResponse& r) {
  const json j = json::parse(r.body, nullptr, false);
  if (j.is_object()) {
    for (const char* key : {"message", "detail", "definition"})
      if (j.contains(key)) return j[key].is_string() ? j[key].get<std::string>() : j[key].dump();
    return j.dump();
  }
  return output_tail(r.body, 3, 300);
}

std::string field(const json& j, const char* key) {
  if (!j.contains(key) || j[key].is_null()) return "";
  return j[key].is_string() ? j[key].get<std::string>() : j[key].dump();
}

}  // namespace

LavaServer lava_server(const std::string& url_flag, const std::string& token_file) {
  LavaServer s;
  std::string url = url_flag;
  if (url.rfind("http://", 0) != 0 && url.rfind("https://", 0) != 0)
    throw UsageError(
        fmt::format("--server {}: not an http:// or https:// URL; give the LAVA "
                    "server's address, e.g. --server https://lava.example.org",
                    echo_input(url_flag)));
  // lavacli's identities name .../RPC2; the REST API lives beside it.
  for (const char* tail : {"/RPC2", "/RPC2/", "/api/v0.2", "/api/v0.2/"})
    if (url.size() > std::strlen(tail) &&
        url.compare(url.size() - std::strlen(tail), std::string::npos, tail) == 0)
      url.resize(url.size() - std::strlen(tail));
  while (!url.empty() && url.back() == '/') url.pop_back();
  s.url = url;
  if (token_file.empty()) return s;
  static constexpr InputKind kToken{
      .noun = "token file",
      .expect =
          "write the API token (from `lava-server manage tokens add --user USER` or the "
          "web UI's API > Tokens) into a file of its own",
      .max_bytes = 4096,
      .cap = "4 KiB",
      .too_large_fix = "a token file holds the token on its first line, nothing else",
  };
  const std::string text = InputFile(token_file, kToken).read_all();
  s.token = std::string(trim(text.substr(0, text.find('\n'))));
  if (s.token.empty())
    throw UsageError(
        fmt::format("--token-file {}: the file is empty; write the API token on its "
                    "first line",
                    token_file));
  return s;
}

std::string lava_job_url(const LavaServer& s, const std::string& id) {
  return s.url + "/scheduler/job/" + id;
}

std::string lava_submit(const LavaServer& s, const std::string& definition) {
  HttpRequest req;
  req.method = "POST";
  req.url = s.url + "/api/v0.2/jobs/";
  req.headers = auth(s);
  req.headers.push_back("Content-Type: application/json");
  req.body = json({{"definition", definition}}).dump();
  const HttpResponse r = http_request(req);
  const json j = json::parse(r.body, nullptr, false);
  if (r.status / 100 != 2 || !j.is_object() || !j.contains("job_ids") || !j["job_ids"].is_array() ||
      j["job_ids"].empty())
    throw EnvironmentError(
        fmt::format("{} refused the job (HTTP {}): {}", req.url, r.status, server_says(r)));
  const json& id = j["job_ids"][0];
  return id.is_string() ? id.get<std::string>() : id.dump();
}

LavaServerJob lava_job(const LavaServer& s, const std::string& id) {
  HttpRequest req;
  req.url = s.url + "/api/v0.2/jobs/" + id + "/";
  req.headers = auth(s);
  const HttpResponse r = http_request(req);
  const json j = json::parse(r.body, nullptr, false);
  if (r.status != 200 || !j.is_object())
    throw EnvironmentError(fmt::format("{}: HTTP {}: {}", req.url, r.status, server_says(r)));
  LavaServerJob job;
  job.id = id;
  job.state = field(j, "state");
  job.health = field(j, "health");
  job.device = field(j, "actual_device");
  job.failure_comment = field(j, "failure_comment");
  return job;
}

std::string lava_job_log(const LavaServer& s, const std::string& id) {
  HttpRequest req;
  req.url = s.url + "/api/v0.2/jobs/" + id + "/logs/";
  req.headers = auth(s);
  req.headers[0] = "Accept: */*";  // the server answers application/yaml; asking for it is a 406
  const HttpResponse r = http_request(req);
  if (r.status == 404) return "";
  if (r.status != 200)
    throw EnvironmentError(fmt::format("{}: HTTP {}: {}", req.url, r.status, server_says(r)));
  return r.body;
}

void submit_lava_jobs(LavaJobStore& store, const LavaServer& server, const std::string& dir,
                      std::ostream& out) {
  const LavaManifest m = read_lava_manifest(dir);
  for (const auto& e : m.jobs) {
    const std::string path = (fs::path(m.dir) / e.file).string();
    const std::string definition = read_whole_file(path);
    if (definition.empty())
      throw UsageError(path + ": missing or empty; write the jobs again with `nightjar lava jobs`");
    const std::string id = lava_submit(server, definition);
    LavaSubmission sub;
    sub.server = server.url;
    sub.lava_id = id;
    sub.url = lava_job_url(server, id);
    sub.dir = m.dir;
    sub.file = e.file;
    store.add_lava_submission(sub);
    out << id << "  " << sub.url << "  " << e.file << "\n";
  }
}

LavaCollectSummary collect_lava_jobs(ResultsStore& store, const LavaServer& server, double wait_sec,
                                     double poll_sec, bool again) {
  LavaCollectSummary summary;
  const auto t0 = std::chrono::steady_clock::now();
  std::map<std::string, LavaManifest> manifests;  // dir -> manifest
  for (;;) {
    summary.pending = 0;
    for (const LavaSubmission& sub : store.lava_submissions(/*uncollected_only=*/!again)) {
      if (!server.url.empty() && sub.server != server.url) continue;
      if (interrupted()) {
        summary.interrupted = true;
        return summary;
      }
      const LavaServer here{sub.server, server.token};
      const LavaServerJob job = lava_job(here, sub.lava_id);
      if (job.state != "Finished") {
        ++summary.pending;
        continue;
      }
      if (!manifests.count(sub.dir)) manifests.emplace(sub.dir, read_lava_manifest(sub.dir));
      const LavaManifest& m = manifests.at(sub.dir);
      const LavaJobEntry* entry = nullptr;
      for (const auto& e : m.jobs)
        if (e.file == sub.file) entry = &e;
      if (!entry)
        throw UsageError(
            fmt::format("{}/{}: job {} ({}) is not in it any more; collect it from "
                        "the directory it was submitted from",
                        sub.dir, kLavaManifest, sub.lava_id, sub.file));
      const LavaLog log = parse_lava_log(lava_job_log(here, sub.lava_id));
      LavaJobRef ref;
      ref.key = sub.url;
      ref.job_id = sub.lava_id;
      ref.url = sub.url;
      ref.device = job.device;
      ref.passed = job.health == "Complete" && lava_job_passed(log);
      ref.error = lava_job_error(log);
      if (job.health != "Complete") {
        const std::string comment(trim(job.failure_comment));
        if (!log.job || log.job->result == "pass")
          ref.error = job.health + (comment.empty() ? "" : ": " + comment);
        else if (!comment.empty() && ref.error.find(comment) == std::string::npos)
          ref.error += " (" + comment + ")";
      }
      const LavaCollected c = collect_lava_job(store, *entry, ref, log);
      for (const auto& note : c.notes) std::cerr << "nightjar: " << note << "\n";
      const std::string outcome =
          job.health == "Complete" ? "Complete" : job.health + ": " + ref.error;
      if (sub.collected_at.empty()) store.mark_lava_collected(sub.id, outcome);
      std::cerr << fmt::format(
          "nightjar: lava: job {} ({}, {}): {}; {} complete, {} failed, {} skipped{}\n",
          sub.lava_id, sub.file, job.device.empty() ? "no device" : job.device, outcome, c.complete,
          c.failed, c.skipped,
          c.already_stored ? fmt::format(" ({} already stored)", c.already_stored) : "");
      ++summary.finished;
      if (ref.passed) ++summary.passed;
      add_collected(summary.totals, c);
    }
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    again = false;  // a second round asks only for what was still running
    if (summary.pending == 0 || waited >= wait_sec) break;
    std::cerr << fmt::format("nightjar: lava: {} job(s) not finished; asking again in {:.0f} s\n",
                             summary.pending, poll_sec);
    for (double slept = 0; slept < poll_sec && !interrupted(); slept += 0.2)
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    if (interrupted()) {
      summary.interrupted = true;
      break;
    }
  }
  return summary;
}

}  // namespace nightjar
