// Unit under test: the differential flame graph (docs/compare.md "The flame
// graph") end to end, on a database whose runs carry perf-profile stacks
// (tests/profile_fixture.h): `compare --why --flamegraph FILE.html` writes
// the standalone page (legend naming the sides, sample counts, the merged
// stacks with their deltas, the vendored scripts inline), `publish` writes
// flame/ID.html linked from the comparison page, and the flag's usage
// errors (without --why, without profiles) exit 2 and write nothing.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "profile_fixture.h"
#include "test_support.h"

using namespace nightjar::test;

namespace {

namespace fs = std::filesystem;

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// The JSON node of frame `name` in `html`: its "delta" member.
double delta_of(const std::string& html, const std::string& name) {
  std::smatch m;
  const std::regex re("\\{\"name\":\"" + name +
                      "\",\"value\":[0-9]+,\"other\":[0-9]+,\"delta\":(-?[0-9.e+-]+)");
  if (!std::regex_search(html, m, re)) {
    ADD_FAILURE() << "no frame " << name;
    return 0;
  }
  return std::stod(m[1].str());
}

TEST(FlameCli, CompareWritesTheDifferentialPage) {
  TempDir dir;
  const std::string db = profile_fixture_db(dir);
  const std::string page = dir.path() + "/flame.html";
  auto r = run_nightjar({"compare", "a", "b", "--db", db, "--why", "--flamegraph", page});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("wrote the differential flame graph to " + page), std::string::npos)
      << r.err;
  // The why block itself is printed as without the flag.
  EXPECT_NE(r.out.find("what else changed"), std::string::npos) << r.out;
  const std::string html = slurp(page);
  EXPECT_NE(html.find("red: more in NEW (b)"), std::string::npos);
  EXPECT_NE(html.find("blue: fewer than BASE (a)"), std::string::npos);
  EXPECT_NE(html.find("<title>Differential flame graph: a vs b</title>"), std::string::npos);
  // Both sides sampled 5 iterations of 110 samples plus the iteration's noise.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(html, m,
                                std::regex("<span class=\"base-samples\">([0-9]+)</span> samples "
                                           "in 5 iteration\\(s\\) \\(cpu-clock\\)")))
      << html.substr(html.size() - 3000);
  const int base = std::stoi(m[1].str());
  EXPECT_GE(base, 550);
  EXPECT_LE(base, 565);
  EXPECT_NE(html.find("<span class=\"new-samples\">" + m[1].str() + "</span>"), std::string::npos);
  // Equal totals: the delta is NEW − BASE per path; h +250, g −250, n +50.
  EXPECT_NEAR(delta_of(html, "h"), 250, 1e-9);
  EXPECT_NEAR(delta_of(html, "g"), -250, 1e-9);
  EXPECT_NEAR(delta_of(html, "n"), 50, 1e-9);
  EXPECT_NEAR(delta_of(html, "main"), 0, 1e-9);
  // Two graphs, NEW's stacks then BASE's: k (no NEW samples) only in
  // BASE's, n (no BASE samples) only in NEW's, h in both.
  const auto k = html.find("{\"name\":\"k\""), n = html.find("{\"name\":\"n\"");
  const auto second = html.find("id=\"flame-data-0b\"");
  ASSERT_NE(second, std::string::npos);
  EXPECT_GT(k, second);
  EXPECT_EQ(html.find("{\"name\":\"k\"", k + 1), std::string::npos);
  EXPECT_LT(n, second);
  EXPECT_EQ(html.find("{\"name\":\"n\"", n + 1), std::string::npos);
  EXPECT_GT(html.find("{\"name\":\"h\"", second), second);
  // The vendored scripts are inline: the page needs no network.
  EXPECT_NE(html.find("d3-flame-graph"), std::string::npos);
  EXPECT_EQ(html.find("<script src"), std::string::npos);
  EXPECT_EQ(html.find("http://cdn"), std::string::npos);
}

TEST(FlameCli, PublishWritesAFlamePageLinkedFromTheComparison) {
  TempDir dir;
  const std::string db = profile_fixture_db(dir);
  const std::string site = dir.path() + "/site";
  auto r = run_nightjar({"publish", "--db", db, "-o", site, "--compare", "a b"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The job's latest comparison (build=v1 vs build=v2) and --compare's (a vs b).
  std::string flame, html;
  int flames = 0;
  for (const auto& e : fs::directory_iterator(site + "/flame")) {
    ++flames;
    const std::string text = slurp(e.path().string());
    if (text.find("red: more in NEW (b)") == std::string::npos) continue;
    flame = e.path().filename().string();
    html = text;
  }
  EXPECT_EQ(flames, 2);
  ASSERT_FALSE(flame.empty());
  EXPECT_NE(html.find("blue: fewer than BASE (a)"), std::string::npos);
  EXPECT_NE(html.find("href=\"../compare/" + flame + "\""), std::string::npos);
  const std::string cmp = slurp(site + "/compare/" + flame);
  EXPECT_NE(cmp.find("<a href=\"../flame/" + flame + "\">differential flame graph</a>"),
            std::string::npos)
      << cmp;
}

TEST(FlameCli, FlamegraphNeedsWhyAndProfiles) {
  TempDir dir;
  const std::string db = profile_fixture_db(dir);
  const std::string page = dir.path() + "/flame.html";
  auto r = run_nightjar({"compare", "a", "b", "--db", db, "--flamegraph", page});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--flamegraph " + page + ": draws the profile delta of --why; add --why"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(page));
  // Without profiles: the same runs with their stacks deleted.
  {
    SQLite::Database d(db, SQLite::OPEN_READWRITE);
    d.exec("DELETE FROM profile_sample");
    d.exec("DELETE FROM profile");
  }
  r = run_nightjar({"compare", "a", "b", "--db", db, "--why", "--flamegraph", page});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no cell has perf-profile samples on both sides"), std::string::npos)
      << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_FALSE(fs::exists(page));
}

}  // namespace

namespace {

// The child of `node` named `name`, or null.
const nlohmann::json* child_named(const nlohmann::json& node, const std::string& name) {
  for (const auto& c : node["children"])
    if (c["name"] == name) return &c;
  return nullptr;
}

TEST(FlameCli, JsonCarriesTheMergedTreeOfEveryProfiledCell) {
  TempDir dir;
  const std::string db = profile_fixture_db(dir);
  auto r = run_nightjar({"compare", "a", "b", "--db", db, "--why", "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& profile = j["why"][0]["profiles"][0];
  EXPECT_DOUBLE_EQ(profile["flame_scale"].get<double>(),
                   profile["new_samples"].get<double>() / profile["base_samples"].get<double>());
  const auto& root = profile["flame"];
  EXPECT_EQ(root["name"], "all");
  EXPECT_EQ(root["base"], profile["base_samples"]);
  EXPECT_EQ(root["new"], profile["new_samples"]);
  // main;f;h: 5 iterations of 20+i%2 in a and of 70+i%2 in b (250 more);
  // main;k 10 per iteration only in a, main;n only in b.
  const auto* main = child_named(root, "main");
  ASSERT_NE(main, nullptr) << root.dump();
  const auto* f = child_named(*main, "f");
  ASSERT_NE(f, nullptr);
  const auto* h = child_named(*f, "h");
  ASSERT_NE(h, nullptr);
  EXPECT_EQ((*h)["base"].get<int>() + 250, (*h)["new"].get<int>());
  EXPECT_GT((*h)["delta"].get<double>(), 0);
  const auto* k = child_named(*main, "k");
  ASSERT_NE(k, nullptr);
  EXPECT_EQ((*k)["new"], 0);
  EXPECT_EQ((*k)["base"], 50);
  const auto* n = child_named(*main, "n");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ((*n)["base"], 0);
  EXPECT_EQ((*n)["new"], 50);
}

TEST(FlameCli, ReportWhyPrintsTheMovedSymbolsInEveryFormat) {
  TempDir dir;
  const std::string db = profile_fixture_db(dir);
  auto r = run_nightjar({"report", "a", "b", "--db", db, "--why"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("What else changed, b vs a:"), std::string::npos) << r.out;
  const std::size_t profile = r.out.find("Profile of ");
  ASSERT_NE(profile, std::string::npos) << r.out;
  // h rose from about 18% to about 64% of the samples, g fell: both listed.
  EXPECT_NE(r.out.find("\n  h ", profile), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\n  g ", profile), std::string::npos) << r.out;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);)
    EXPECT_LE(line.size(), 72u) << "wider than a changelog: " << line;
  auto md = run_nightjar({"report", "a", "b", "--db", db, "--why", "--format", "markdown"});
  ASSERT_EQ(md.exit_code, 0) << md.err;
  EXPECT_NE(md.out.find("#### Profile: b vs a"), std::string::npos) << md.out;
  EXPECT_NE(md.out.find("| `h` | self |"), std::string::npos) << md.out;
  // Without --why, no block.
  auto plain = run_nightjar({"report", "a", "b", "--db", db});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(plain.out.find("What else changed"), std::string::npos) << plain.out;
}

}  // namespace
