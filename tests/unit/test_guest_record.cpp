// The guest's "run" line (harness/vm/guest_record.h): iterations with their
// perf-profile stacks written by the guest and stored again by the host.
#include "harness/vm/guest_record.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "test_support.h"

namespace nightjar {
namespace {

using json = nlohmann::json;
using test::TempDir;

NewRun guest_run() {
  NewRun run;
  run.job = "pft-thp-profile";
  run.job_path = "/jobs/pft-thp-profile.yaml";
  run.cell.workload = "pft";
  run.cell.params["threads"] = {"1", 1};
  run.variant = "thp-always";
  run.iterations = 2;
  run.kernel.release = "6.1.0-guest";
  run.testbox = {"nightjar-vm", "QEMU TCG CPU", 2, 1 << 30};
  return run;
}

IterationProfile profile_of(std::map<std::string, std::uint64_t> stacks, std::uint64_t lost = 0) {
  IterationProfile p;
  p.event = "cpu-clock";
  p.frequency_hz = 499;
  p.lost = lost;
  p.stacks = std::move(stacks);
  return p;
}

// The guest's database: one complete run, two profiled iterations.
std::int64_t guest_store_run(ResultsStore& store) {
  const std::int64_t id = store.begin_run(guest_run());
  IterationResult it;
  it.metrics["faults_per_sec"] = 1000;
  const IterationProfile p1 = profile_of(
      {{"[unknown];asm_exc_page_fault;exc_page_fault;do_huge_pmd_anonymous_page;clear_page_erms",
        40},
       {"[unknown];asm_exc_page_fault;handle_mm_fault", 3}},
      2);
  const IterationProfile p2 = profile_of({{"[unknown];clear_huge_page;clear_page_erms", 35}});
  store.add_iteration(id, 1, it, {{"perf.page-faults", 12}}, 0.5, &p1);
  store.add_iteration(id, 2, it, {{"perf.page-faults", 13}}, 0.5, &p2);
  store.finish_run(id, RunStatus::complete);
  return id;
}

// The line as it crosses the results port: text, parsed again on the host.
json over_the_port(const json& line) {
  return json::parse(line.dump() + "\n");
}

std::int64_t import_into(ResultsStore& host, const json& line) {
  std::int64_t id = 0;
  import_guest_run(line, KernelIdentity{}, Testbox{"nightjar-vm", "QEMU", 2, 1 << 30}, {}, {}, {},
                   host, id);
  return id;
}

TEST(GuestRecord, ProfilesComeHomeWithTheirIterations) {
  TempDir dir;
  ResultsStore guest(dir.path() + "/guest.db");
  const std::int64_t gid = guest_store_run(guest);
  const json line = over_the_port(export_guest_run(guest, gid, 0));
  ASSERT_TRUE(line["iterations_data"][0].contains("profile"));
  EXPECT_EQ(line["iterations_data"][0]["profile"]["event"], "cpu-clock");

  ResultsStore host(dir.path() + "/host.db");
  const std::int64_t hid = import_into(host, line);
  const auto sent = guest.iteration_profiles({gid});
  const auto got = host.iteration_profiles({hid});
  ASSERT_EQ(got.size(), 2u);
  ASSERT_EQ(sent.size(), 2u);
  for (std::size_t k = 0; k < got.size(); ++k) {
    EXPECT_EQ(got[k].iteration, sent[k].iteration);
    EXPECT_EQ(got[k].profile.event, "cpu-clock");
    EXPECT_EQ(got[k].profile.frequency_hz, 499);
    EXPECT_EQ(got[k].profile.lost, sent[k].profile.lost);
    EXPECT_EQ(got[k].profile.stacks, sent[k].profile.stacks);
  }
  EXPECT_EQ(got[0].profile.lost, 2u);
  EXPECT_EQ(got[0].profile.samples(), 43u);
  EXPECT_TRUE(host.run_record(hid)->warnings.empty());
}

TEST(GuestRecord, AnOlderGuestsLineWithoutProfilesStillImports) {
  TempDir dir;
  ResultsStore guest(dir.path() + "/guest.db");
  json line = export_guest_run(guest, guest_store_run(guest), 0);
  for (auto& it : line["iterations_data"]) it.erase("profile");  // as guests before schema 9 sent
  ResultsStore host(dir.path() + "/host.db");
  const std::int64_t hid = import_into(host, over_the_port(line));
  const std::optional<RunRecord> r = host.run_record(hid);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, RunStatus::complete);
  ASSERT_EQ(r->iteration_data.size(), 2u);
  EXPECT_EQ(r->iteration_data[1].metrics.at("faults_per_sec"), 1000);
  EXPECT_EQ(r->iteration_data[1].monitors.at("perf.page-faults"), 13);
  EXPECT_TRUE(host.iteration_profiles({hid}).empty());
}

TEST(GuestRecord, ACorruptProfileIsAnErrorNamingTheField) {
  const json good = profile_to_json(profile_of({{"main;f", 3}}));
  EXPECT_EQ(profile_from_json(good).stacks, (std::map<std::string, std::uint64_t>{{"main;f", 3}}));
  const auto error_of = [](const json& j) -> std::string {
    try {
      profile_from_json(j);
    } catch (const GuestRecordError& e) {
      return e.what();
    }
    return "(no error)";
  };
  json bad = good;
  bad["stacks"]["main;f"] = "three";
  EXPECT_EQ(error_of(bad), "profile.stacks[\"main;f\"]: expected an integer >= 1, got \"three\"");
  bad = good;
  bad["stacks"]["main;f"] = -4;
  EXPECT_EQ(error_of(bad), "profile.stacks[\"main;f\"]: expected an integer >= 1, got -4");
  bad = good;
  bad["stacks"]["main;f"] = 0;
  EXPECT_EQ(error_of(bad), "profile.stacks[\"main;f\"]: expected an integer >= 1, got 0");
  bad = good;
  bad["stacks"] = json::array({"main;f", 3});
  EXPECT_EQ(error_of(bad).rfind("profile.stacks: expected an object", 0), 0u) << error_of(bad);
  bad = good;
  bad.erase("event");
  EXPECT_EQ(error_of(bad), "profile.event: expected the sampled event's name, got nothing");
  bad = good;
  bad["lost"] = 1.5;
  EXPECT_EQ(error_of(bad), "profile.lost: expected an integer >= 0, got 1.5");
  bad = good;
  bad["frequency_hz"] = "fast";
  EXPECT_EQ(error_of(bad), "profile.frequency_hz: expected a number >= 0, got \"fast\"");
  EXPECT_EQ(error_of(json("x")), "profile: expected an object, got \"x\"");
}

TEST(GuestRecord, ACorruptProfileInALineKeepsTheRunAndSaysWhichField) {
  TempDir dir;
  ResultsStore guest(dir.path() + "/guest.db");
  json line = export_guest_run(guest, guest_store_run(guest), 0);
  line["iterations_data"][1]["profile"]["stacks"]["[unknown];clear_huge_page;clear_page_erms"] =
      "x";
  ResultsStore host(dir.path() + "/host.db");
  testing::internal::CaptureStderr();
  const std::int64_t hid = import_into(host, over_the_port(line));
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("nightjar: error: run pft-thp-profile [thp-always]"), std::string::npos)
      << err;
  EXPECT_NE(err.find("iteration 2: the guest's profile record is corrupt (profile.stacks["),
            std::string::npos)
      << err;
  const std::optional<RunRecord> r = host.run_record(hid);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, RunStatus::complete);
  ASSERT_EQ(r->iteration_data.size(), 2u);
  ASSERT_EQ(r->warnings.size(), 1u);
  EXPECT_NE(r->warnings[0].find("expected an integer >= 1, got \"x\"); stored without its profile"),
            std::string::npos)
      << r->warnings[0];
  const auto got = host.iteration_profiles({hid});
  ASSERT_EQ(got.size(), 1u);  // iteration 1's profile kept
  EXPECT_EQ(got[0].iteration, 1);
}

}  // namespace
}  // namespace nightjar
